"""Block decomposition under real mpiexec (2 and 4 ranks): no particle lost or
duplicated, O(1) migration through the broad phase, ghost updates made once per plan,
collective configuration errors. (N-rank trajectories bit-identical to the 1-rank run:
``test_same_bits.py``.)

Run: ``mpiexec -n 4 python -m mpi4py -m pytest --with-mpi tests/mpi``.
"""

import numpy as np
import pytest

from pdyn.checks import InitialStateError, RunawayError
from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import DecompositionError
from pdyn.parallel import BlockExchange, ExchangeError, get_comm
from pdyn.simulation import Simulation

from .scenes import BOUNDARIES, dense_polydisperse, gather_state, large_particle, owned_state

pytestmark = pytest.mark.mpi

@pytest.fixture(scope="module")
def comm():
    return get_comm()


@pytest.mark.slow  # 500 steps each (the fast lane compares the ids with 1 rank at the end)
@pytest.mark.parametrize("kind", ["periodic", "walled", "mixed"])
def test_ids_conserved_every_step(comm, kind):
    """500 steps of a dense, fast scene: the global id set never changes, no id twice, and
    particles cross rank boundaries (migrate) and periodic faces in both directions."""
    cfg = dense_polydisperse(BOUNDARIES[kind], n=300, speed=3.0, dt=2e-3)
    sim = Simulation(cfg, comm=comm)
    gids0, pos_prev, _ = gather_state(sim)
    n = len(gids0)
    L = np.asarray(cfg.box.hi) - np.asarray(cfg.box.lo)
    wraps = np.zeros((3, 2), np.int64)
    for _ in range(500):
        sim.step()
        g, p, _ = gather_state(sim)
        assert len(g) == n, f"step {sim.step_index}: {len(g)} particles, expected {n}"
        assert np.array_equal(g, gids0), f"step {sim.step_index}: id set changed or duplicated"
        jump = p - pos_prev
        wraps[:, 0] += (jump < -0.5 * L).sum(axis=0)
        wraps[:, 1] += (jump > 0.5 * L).sum(axis=0)
        pos_prev = p
    migrated = comm.allreduce_sum(sim.exchange.stats()["migrated"])
    if comm.size > 1:
        assert migrated > 10
    for a, b in enumerate(BOUNDARIES[kind]):
        if b == "periodic":
            assert wraps[a, 0] > 0 and wraps[a, 1] > 0, f"no wrap both ways along {'xyz'[a]}"


def test_migration_uses_broadphase_insert_remove(comm):
    """Particles migrate (and ghosts come and go) through O(1) insert/remove in the broad
    phase: it is built once and never rebuilt."""
    # memory reordering rebuilds the broad phase by design: off here to isolate migration
    cfg = dense_polydisperse(BOUNDARIES["periodic"], n=300, speed=3.0, dt=2e-3,
                             reorder_every=0)
    sim = Simulation(cfg, comm=comm)
    assert isinstance(sim.exchange, BlockExchange)
    sim.run(150)
    calls = sim.broadphase.calls
    st = sim.exchange.stats()
    assert calls["build"] == 1
    assert st["rebuilds"] > 1
    assert calls["insert"] >= st["rebuilds"] - 1 and calls["remove"] >= st["rebuilds"] - 1
    if comm.size > 1:
        assert comm.allreduce_sum(st["migrated"]) > 0
    assert len(sim.broadphase.members) == len(sim.store.owned) + len(sim.store.ghosts)


def test_stats_and_load_summary(comm):
    cfg = dense_polydisperse(BOUNDARIES["walled"], n=200)
    sim = Simulation(cfg, comm=comm)
    sim.run(5)
    st = sim.exchange.stats()
    for key in ("owned", "ghosts", "migrated", "rebuilds", "neighbours"):
        assert key in st
    assert {"migrate", "ghosts", "contacts", "broadphase", "integrate"} <= set(sim.timers)
    assert comm.allreduce_sum(st["owned"]) == 200
    line = sim.load
    if comm.rank == 0 and comm.size > 1:
        assert line.startswith("pdyn: load") and "owned max/mean" in line
    else:
        assert line is None


def test_fewer_blocks_than_ranks_is_an_error_everywhere(comm):
    if comm.size == 1:
        pytest.skip("needs more than one rank")
    cfg = dense_polydisperse(BOUNDARIES["walled"], n=100, blocks=(1, 1, 1))
    with pytest.raises(DecompositionError, match=rf"blocks = \[1, 1, 1\]: 1 blocks for "
                       rf"{comm.size} ranks; every rank needs at least one block"):
        Simulation(cfg, comm=comm)  # refused before any block array (pdyn.checks)


def test_short_periodic_axis_is_an_error_everywhere(comm):
    cfg = large_particle(boundary=("periodic", "wall", "wall"))
    with pytest.raises(ExchangeError, match="shorter than two interaction ranges"):
        Simulation(cfg, comm=comm)


def test_particle_outside_box_is_an_error_everywhere(comm):
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=[[0.5, 0.5, 0.5], [1.5, 0.5, 0.5]],
                                  radii=[0.1, 0.1]),
        box=BoxConfig(boundary=("periodic",) * 3), progress=False, dt=1e-3)
    with pytest.raises(InitialStateError, match="outside the box"):
        Simulation(cfg, comm=comm)


def test_particle_moving_too_far_is_an_error_everywhere(comm):
    """A particle that jumps past its neighbours' reach in one step is the same error on every
    rank and every rank count (pdyn.checks stops it before the exchange sees it)."""
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=[[1.0, 0.5, 0.5], [15.0, 0.5, 0.5]],
                                  velocities=[[12000.0, 0, 0], [0, 0, 0]], radii=[0.1, 0.1]),
        box=BoxConfig(lo=(0, 0, 0), hi=(16, 1, 1), boundary=("wall",) * 3),
        blocks=(8, 1, 1), gravity=(0.0, 0.0, 0.0), dt=1e-3, progress=False)
    sim = Simulation(cfg, comm=comm)
    with pytest.raises(RunawayError, match="step 1: particle 0 moved 12 m in one step"):
        sim.step()


def test_one_rank_state_is_a_subset(comm):
    """Each rank owns a disjoint part; ghosts never duplicate an owned id on the same rank
    without a periodic shift."""
    cfg = dense_polydisperse(BOUNDARIES["walled"], n=200)
    sim = Simulation(cfg, comm=comm)
    sim.run(20)
    g, _, _ = owned_state(sim)
    ghosts = sim.store.gid[sim.store.ghosts]
    assert not np.intersect1d(g, ghosts).size


def test_ghost_update_is_made_once_per_plan_and_freed_with_it(comm):
    """Between rebuilds every step starts the same ghost update (persistent requests, one
    receive and one send per neighbour rank, over buffers made once); a rebuild drops it with
    its plan and frees its requests, and the next plan makes its own (here at the rebuild
    step's end: a closed step refreshes the ghosts' velocities)."""
    cfg = dense_polydisperse(BOUNDARIES["periodic"], n=300, speed=3.0, dt=2e-3)
    sim = Simulation(cfg, comm=comm)
    updates = []
    for _ in range(80):
        rebuilds = sim.rebuilds
        sim.step()
        u = sim.exchange._update
        assert len(u.requests) == 2 * len(sim.exchange.peers)
        new = not updates or updates[-1] is not u
        assert new == (sim.rebuilds > rebuilds or not updates)  # one per plan
        if new:
            updates.append(u)
    assert len(updates) > 2
    assert not any(u.free.alive for u in updates[:-1]) and updates[-1].free.alive
