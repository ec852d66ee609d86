"""The chute scene under real mpiexec (2 and 4 ranks; also runs on 1): spheres thrown onto
the rough base of fixed spheres give the 1-rank trajectory bit for bit, the base stays where
it was on every rank, and a restart continues the run bit for bit (issue 33)."""

import numpy as np
import pytest

from pdyn.config import SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.particles import FIXED
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

from .scenes import assert_same_state, run_then_restart

pytestmark = pytest.mark.mpi


def thrown_chute():
    """The chute at a quarter of its area (544 spheres over 18 fixed ones), every flowing
    sphere thrown down at 2 √(gd) so that the base is hit within the first 100 steps."""
    s = make_scene("chute", scale=0.25)
    s.velocities[~s.fixed] = np.random.default_rng(2).normal(0.0, 0.5, ((~s.fixed).sum(), 3))
    s.velocities[~s.fixed, 2] -= 2.0
    return s


def config(**cfg):
    return SimulationConfig(scene="chute", progress=False, **cfg)


def base_unmoved(sim, scene):
    h = sim.store.owned
    mine = (sim.store.flags[h] & FIXED) != 0
    assert np.array_equal(scene.fixed[sim.store.gid[h]], mine)
    assert np.array_equal(sim.store.pos[h][mine], scene.positions[sim.store.gid[h][mine]])
    assert not sim.store.vel[h][mine].any()


def test_chute_bit_identical_to_one_rank(comm):
    scene = thrown_chute()
    cfg = config(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm, scene=scene)
    sim.run(300)
    base_unmoved(sim, scene)
    ref = Simulation(cfg, comm=SerialComm(), scene=scene)
    ref.run(300)
    assert_same_state(sim, ref, "from the 1-rank run")
    pairs = np.concatenate(sim.comm.allgather(sim.contact_pairs()))
    assert np.isin(pairs, np.flatnonzero(scene.fixed)).any()  # the base was hit


def test_chute_restart_is_bit_identical(comm, shared_dir):
    scene = thrown_chute()
    ref, cont = run_then_restart(lambda o: config(output=o), shared_dir / "chute", comm, 200, 100,
                                 scene=scene)
    cont.run(100)
    base_unmoved(cont, scene)
    assert_same_state(ref, cont, "after the restart")
