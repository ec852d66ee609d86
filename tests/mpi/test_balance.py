"""Dynamic load balancing under real mpiexec (2 and 4 ranks): blocks forced to
move every few steps lose and duplicate no particle, go through the broad phase's O(1)
insert/remove, change no bit of the trajectory, and a rank may own no particle at all.

Run: ``mpiexec -n 4 python -m mpi4py -m pytest --with-mpi tests/mpi``.
"""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import CURVES
from pdyn.simulation import Simulation

from .scenes import dense_polydisperse, gather_state, serial_state

pytestmark = pytest.mark.mpi

#: check at every rebuild step and move blocks whenever the work is not exactly even
FORCED = dict(balance_every=1, balance_threshold=1.0)


@pytest.mark.slow  # 150 steps, each gathering the state
@pytest.mark.parametrize("boundary", [("wall",) * 3, ("periodic", "wall", "periodic")])
def test_forced_rebalancing_every_few_steps(comm, boundary):
    """A fast dense scene, rebalanced at every rebuild (~every 5 steps) along the Hilbert and
    the Morton curve in turn (so that many blocks change owner each time): after every step
    the global id set is the initial one with no id twice, the broad phase holds exactly the
    owned particles and ghosts (built once: block moves are O(1) removes and inserts), and
    the end state equals the 1-rank run bit for bit."""
    cfg = dense_polydisperse(boundary, n=300, speed=3.0, dt=2e-3, reorder_every=0, **FORCED)
    sim = Simulation(cfg, comm=comm)
    gids0 = gather_state(sim)[0]
    for _ in range(150):
        sim.balancer.curve = CURVES[sim.balancer.checks % 2]
        sim.step()
        assert np.array_equal(gather_state(sim)[0], gids0), f"step {sim.step_index}: ids"
        assert len(sim.broadphase.members) == len(sim.store.owned) + len(sim.store.ghosts)
    assert sim.broadphase.calls["build"] == 1
    assert sim.rebuilds > 20
    if comm.size > 1:
        assert sim.balancer.rebalances > 10
        assert comm.allreduce_sum(sim.balancer.moved) > 100  # particles moved with blocks
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg, 150)
    assert np.array_equal(g, g1)
    assert np.array_equal(p, p1) and np.array_equal(v, v1)


@pytest.mark.slow  # 400 steps; the fast lane has test_startup's ranks without particles
def test_a_rank_with_no_particles(comm):
    """Fewer spheres than ranks (a pair colliding and one more), rebalanced at every rebuild:
    some rank owns nothing for the whole run, the run goes on and matches 1 rank."""
    pos = [[1.0, 2.0, 2.0], [2.2, 2.0, 2.0], [5.0, 5.0, 5.0]][:max(comm.size - 1, 1)]
    vel = [[2.0, 0.3, 0.0], [-2.0, 0.0, 0.1], [0.5, -0.5, 0.5]][:len(pos)]
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=[0.5] * len(pos),
                                  density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(6.0, 6.0, 6.0), boundary=("periodic",) * 3),
        gravity=(0.0, 0.0, 0.0), dt=1e-3, neighbour_skin=0.05, progress=False, **FORCED)
    sim = Simulation(cfg, comm=comm)
    empty_steps = 0
    for _ in range(400):
        sim.step()
        empty_steps += comm.allreduce_sum(int(sim.store.owned.size == 0))
    if comm.size > 1:
        assert empty_steps >= 400  # some rank was empty at every step
        assert sim.balancer.checks > 5
    g, p, v = gather_state(sim)
    g1, p1, v1 = serial_state(cfg, 400)
    assert np.array_equal(g, g1) and np.array_equal(p, p1) and np.array_equal(v, v1)
    if len(pos) > 1:
        assert np.abs(v1 - np.asarray(vel)).max() > 1.0  # the pair did collide


def test_load_line_and_balance_phase(comm):
    """The end-of-run line keeps the final owned max/mean and adds the time-averaged
    imbalance and the number of rebalances; the phase timers have a ``balance`` row."""
    sim = Simulation(dense_polydisperse(("wall",) * 3, n=200, **FORCED), comm=comm)
    sim.run(60)
    if comm.size == 1:
        assert sim.load is None and sim.balancer.checks == 0
        return
    assert "balance" in sim.timers
    assert sim.balancer.mean_imbalance >= 1.0
    if comm.rank == 0:
        assert "owned max/mean = " in sim.load and "(imbalance " in sim.load
        assert f"time-averaged {sim.balancer.mean_imbalance:.2f}" in sim.load
        assert f"rebalances {sim.balancer.rebalances}" in sim.load
