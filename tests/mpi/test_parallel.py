"""Block decomposition under real mpiexec (2 and 4 ranks): no particle lost or
duplicated, N-rank trajectories bit-identical to the 1-rank run, large particles, O(1)
migration through the broad phase, collective configuration errors.

Run: ``mpiexec -n 4 python -m mpi4py -m pytest --with-mpi tests/mpi``.
"""

import numpy as np
import pytest

from pdyn.broadphase import REGISTRY
from pdyn.checks import InitialStateError, RunawayError
from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import DecompositionError
from pdyn.parallel import BlockExchange, ExchangeError, SerialComm, get_comm
from pdyn.simulation import Simulation

from .scenes import (FRICTIONAL_STATE, assert_same_state, dense_polydisperse, gather_fields,
                     gather_state, owned_state, serial_state)

pytestmark = pytest.mark.mpi

BOUNDARIES = {
    "periodic": ("periodic", "periodic", "periodic"),
    "walled": ("wall", "wall", "wall"),
    "mixed": ("periodic", "wall", "periodic"),
}


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


@pytest.mark.parametrize("skin", [None, pytest.param(0.0, marks=pytest.mark.slow)],
                         ids=["lists", "every_step"])
@pytest.mark.parametrize("bp", [b if b == "linked_cells" else
                                pytest.param(b, marks=pytest.mark.slow)
                                for b in ("linked_cells", "hash_grid") if b in REGISTRY])
@pytest.mark.parametrize("kind", ["periodic", pytest.param("walled", marks=pytest.mark.slow)])
def test_trajectory_bit_identical_to_one_rank(comm, bp, kind, skin):
    """200 steps of a dense polydisperse scene, rebalanced every 20 steps: positions and
    velocities on N ranks equal the 1-rank run bit for bit, with neighbour lists (default skin)
    and without (broad phase every step)."""
    cfg = dense_polydisperse(BOUNDARIES[kind], broadphase=bp, neighbour_skin=skin,
                             balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(200)
    assert sim.comm.allreduce_sum(int(sim.n_contacts)) > 50  # dense: many contacts
    assert sim.rebuilds > 5
    if comm.size > 1:
        assert sim.balancer.rebalances >= 5  # blocks moved during the run
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg, 200)
    assert np.array_equal(g, g1)
    dp = float(np.abs(p - p1).max())
    dv = float(np.abs(v - v1).max())
    assert np.array_equal(p, p1) and np.array_equal(v, v1), f"max |dx| {dp:g}, |dv| {dv:g}"


@pytest.mark.parametrize("law", ["linear", pytest.param("hertz", marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", [pytest.param("periodic", marks=pytest.mark.slow), "walled"])
def test_frictional_trajectory_bit_identical_to_one_rank(comm, kind, law):
    """With friction and rolling resistance: positions, velocities, spins, torques and the
    contact history on N ranks equal the 1-rank run bit for bit after 200 steps (history
    crossing rebuilds, reorderings, migration, rebalancing and ghosts)."""
    cfg = dense_polydisperse(BOUNDARIES[kind], law=law, friction=0.5, reorder_every=20,
                             balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(200)
    assert sim.rebuilds > 5
    state = gather_fields(sim, FRICTIONAL_STATE)
    assert (state[5] != 0).sum() > 50 and np.abs(state[3]).max() > 0.1  # history, spin
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(200)
    assert_same_state(state, ref, "from the 1-rank run")


def test_auto_switching_per_rank_keeps_the_one_rank_trajectory(comm):
    """The periodic gas without neighbour lists moves ~0.15 % of a diameter per step, so
    ``auto`` switches to ``hash_grid`` at its first update where a rank's residents are dense
    enough (rule 2: at most 2 dense-grid cells per sphere; each rank decides from its own
    residents, ghosts included, so with thin blocks some ranks keep ``index_sort``): positions
    and velocities equal the 1-rank ``index_sort`` run bit for bit, with one structure or a mix
    of both across the ranks."""
    cfg = SimulationConfig(scene="gas", scale=0.1, progress=False, neighbour_skin=0.0,
                           reorder_every=10)
    sim = Simulation(cfg.with_(broadphase="auto"), comm=comm)
    sim.run(30)
    switched = comm.allreduce_sum(int(sim.broadphase.switches > 0))
    assert switched >= 1 and (comm.size > 1 or sim.broadphase.chosen == "hash_grid")
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg.with_(broadphase="index_sort"), 30)
    assert np.array_equal(g, g1) and np.array_equal(p, p1) and np.array_equal(v, v1)


def _large_particle_config(boundary=("wall",) * 3):
    # 8 blocks of edge 2 along x; the big sphere (r 4.2 > 2 blocks) sits in block 2 and touches
    # small spheres whose centres are in blocks 0 and 4, two blocks away on either side (they
    # start in contact: initial overlaps allowed)
    pos = [[5.0, 4.5, 4.5], [9.45, 4.5, 4.5], [0.55, 4.5, 4.5], [13.0, 4.5, 4.5]]
    vel = [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=[4.2, 0.3, 0.3, 0.3],
                                  density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(16.0, 9.0, 9.0), boundary=boundary),
        blocks=(8, 1, 1), gravity=(0.0, 0.0, 0.0), dt=1e-3, progress=False,
        initial_overlap="allow")


def test_large_particle_collides_two_blocks_away(comm):
    cfg = _large_particle_config()
    sim = Simulation(cfg, comm=comm)
    pairs = comm.allgather(sim.contact_pairs())
    found = {tuple(map(int, p)) for part in pairs for p in part}
    assert (0, 1) in found and (0, 2) in found, found
    if comm.size > 1:
        owner_big = comm.allreduce_sum(int(0 in sim.store.gid[sim.store.owned]) * comm.rank)
        owner_small = comm.allreduce_sum(int(1 in sim.store.gid[sim.store.owned]) * comm.rank)
        assert owner_big != owner_small  # the contact crosses ranks
    sim.run(300)
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg, 300)
    assert v[1, 0] > 0 and v[2, 0] < 0  # both small spheres bounced off the big one
    assert np.array_equal(p, p1) and np.array_equal(v, v1)


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
    cfg = _large_particle_config(boundary=("periodic", "wall", "wall"))
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
    its plan and frees its requests, and the next plan makes its own."""
    cfg = dense_polydisperse(BOUNDARIES["periodic"], n=300, speed=3.0, dt=2e-3)
    sim = Simulation(cfg, comm=comm)
    updates = []
    for _ in range(80):
        rebuilds = sim.rebuilds
        sim.step()
        u = sim.exchange._update
        if sim.rebuilds > rebuilds:
            assert u is None  # dropped with its plan; made at the plan's first step
            continue
        assert len(u.requests) == 2 * len(sim.exchange.peers)
        if not updates or updates[-1] is not u:
            updates.append(u)
    assert len(updates) > 2
    assert not any(u.free.alive for u in updates[:-1]) and updates[-1].free.alive


def test_reordering_keeps_ghost_plan_valid(comm):
    """``Simulation._reorder`` permutes the store between migrate and ghosts; the exchange
    remaps the handles it keeps, so frequent reordering changes no bit of the result."""
    cfg = dense_polydisperse(BOUNDARIES["periodic"], n=300, speed=3.0, dt=2e-3,
                             reorder_every=7)
    sim = Simulation(cfg, comm=comm)
    sim.run(120)
    assert sim.broadphase.calls["build"] > 2  # it did reorder
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg.with_(reorder_every=0), 120)
    assert np.array_equal(g, g1)
    assert np.array_equal(p, p1) and np.array_equal(v, v1)
