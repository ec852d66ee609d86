"""Insertion on several ranks: the same spheres, with the same global ids, are poured in on 2
and 4 ranks (each by the rank owning its place) as on 1, and the whole trajectory — outlet
included — is the 1-rank one bit for bit."""

import numpy as np
import pytest

from pdyn.config import ContactConfig, InsertionConfig, OutputConfig, SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from .scenes import gather_fields, gather_state

#: the state compared by id: positions, velocities (and with friction spins)
STATE = ("pos", "vel")

pytestmark = pytest.mark.mpi


def _heap():
    ins = InsertionConfig(region_lo=(0.3, 0.3, 1.0), region_hi=(2.5, 2.5, 2.6), rate=600.0,
                          radius_min=0.08, radius_max=0.12, velocity=(0.0, 0.0, -3.0),
                          total=250, every=25, seed=7, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(0.6, 2.8, 0.4))
    return SimulationConfig(scene="heap", scale=0.05, insertion=ins, progress=False)


@pytest.mark.slow  # 1200 steps on N ranks and on one
def test_poured_spheres_do_not_depend_on_ranks(comm):
    sim = Simulation(_heap(), comm=comm)
    sim.run(1200)
    got = gather_state(sim)
    owners = comm.allgather(len(sim.store.owned))
    if comm.rank == 0:
        ref = Simulation(_heap(), comm=SerialComm())
        ref.run(1200)
        want = gather_state(ref)
        assert len(want[0]) > 150 and ref.inserter.removed > 0
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
        assert sim.inserter.state() == ref.inserter.state()
        if comm.size > 1:
            assert sum(n > 0 for n in owners) > 1  # spheres went to several ranks
    comm.barrier()


def _outlet_pour(folder=None, friction=0.5, broadphase="auto", seed=2):
    """Spheres poured onto an outlet strip along the whole floor (0 < y < 1 m), blocks
    rebalanced every 10 steps: spheres migrate or move with their block at the very rebuild
    steps at which the outlet drains them."""
    ins = InsertionConfig(region_lo=(0.3, 0.3, 0.45), region_hi=(3.4, 1.6, 1.0), rate=2000.0,
                          radius_min=0.08, radius_max=0.12, velocity=(2.0, 0.5, -3.0),
                          total=300, every=10, seed=seed, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(3.7, 1.0, 0.35))
    out = OutputConfig(folder=str(folder), checkpoint_every=300) if folder else OutputConfig()
    return SimulationConfig(scene="heap", scale=0.1, insertion=ins, progress=False,
                            balance_every=10, balance_threshold=1.0, output=out,
                            broadphase=broadphase,
                            contact=ContactConfig(youngs_modulus=1e7, restitution=0.3,
                                                  friction=friction,
                                                  rolling_friction=0.2 * friction))


@pytest.mark.parametrize("kind", [{}, {"friction": 0.0, "broadphase": "linked_cells",
                                            "seed": 4}],
                         ids=["frictional", "frictionless-linked-cells"])
@pytest.mark.slow  # 600 steps on N ranks and on one, 300 more after a restart
def test_outlet_pour_with_balancing_equals_one_rank_and_restarts(comm, shared_dir, kind):
    """Pouring onto an outlet with blocks rebalanced every 10 steps: spheres drained right
    after migrating or moving with their block (the broad phase never held them) used to
    stop 2 and 4 ranks with "handle … is not resident". The N-rank run equals the 1-rank run
    bit for bit (positions, velocities, spins by id; the insertion state), and so does its
    continuation from the mid-pour checkpoint."""
    sim = Simulation(_outlet_pour(shared_dir / "a", **kind), comm=comm)
    sim.run(600)
    state = STATE + ("omega",) * ("omega" in sim.store.fields)
    got = gather_fields(sim, state)
    cont = from_checkpoint(shared_dir / "a" / "checkpoints" / "ckpt_00000300.h5", comm=comm,
                           output=OutputConfig(folder=str(shared_dir / "b")))
    assert 0 < cont.inserter.state()["inserted"] < 300  # mid-pour
    cont.run(300)
    again = gather_fields(cont, state)
    if comm.rank == 0:
        ref = Simulation(_outlet_pour(**kind), comm=SerialComm())
        ref.run(600)
        want = gather_fields(ref, state)
        assert ref.inserter.removed > 20 and len(want[0]) > 100
        for a, b, c, name in zip(got, again, want, ("gid",) + state):
            assert np.array_equal(a, c), name
            assert np.array_equal(b, c), f"{name} after restart"
        assert sim.inserter.state() == ref.inserter.state() == cont.inserter.state()
        if comm.size > 1:
            assert sim.balancer.rebalances > 1 and sim.exchange.n_migrated > 0
    comm.barrier()


def test_time_averaged_imbalance_follows_the_poured_count(comm):
    """A pour into blocks stacked along z (the spheres land in the bottom rank's): the
    time-averaged owned imbalance is the mean over the steps of max/mean of the owned counts
    of that step, the mean from the count present (it was taken from the initial count, 0,
    and read 1.00)."""
    cfg = _heap().with_(blocks=(1, 1, 4), balance_every=0)
    sim = Simulation(cfg, comm=comm)
    ratios = []
    for _ in range(400):
        owned = comm.allgather(int(sim.store.owned.size))
        mean = sum(owned) / comm.size
        ratios.append(max(owned) / mean if mean > 0 else 1.0)
        sim.step()
    if comm.size > 1:
        assert sim.balancer.mean_imbalance == pytest.approx(np.mean(ratios), rel=1e-12)
        assert sim.balancer.mean_imbalance > 1.2
