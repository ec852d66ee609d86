"""The ``hopper`` scene discharging under real mpiexec (2 and 4 ranks; also runs on 1):
spheres leave through the outlet and the run gives the 1-rank trajectory bit for bit, and a
restart continues it bit for bit (issue 33)."""

import numpy as np
import pytest

from pdyn.config import (BoxConfig, ContactConfig, InsertionConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.parallel import SerialComm
from pdyn.scenarios import hopper
from pdyn.simulation import Simulation

from .scenes import assert_same_state, run_then_restart

pytestmark = pytest.mark.mpi


def discharging(**cfg):
    """A tenth of the hopper (500 spheres, orifice 4 d) opened from the start, the spheres
    thrown down at 1 m/s (and ± 0.2 m/s at random), so that the lowest layers leave at once."""
    s = hopper(scale=0.1, orifice=4.0, opens=0.0)
    v = np.random.default_rng(7).normal(0.0, 0.2, s.positions.shape) + [0.0, 0.0, -1.0]
    return SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, velocities=v, radii=s.radii,
                                  density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        contact=ContactConfig(**s.contact), walls=list(s.walls),
        insertion=InsertionConfig(**s.insertion), gravity=tuple(s.gravity), progress=False,
        **cfg)


def same(a, b, what):
    assert_same_state(a, b, what)
    assert a.inserter.state() == b.inserter.state()


def test_discharge_bit_identical_to_one_rank(comm):
    cfg = discharging(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(300)
    assert sim.inserter.removed >= 10 and sim.rebuilds >= 4
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(300)
    same(sim, ref, "from the 1-rank run")


def test_restart_of_a_discharge_is_bit_identical(comm, shared_dir):
    ref, cont = run_then_restart(lambda o: discharging(output=o), shared_dir / "hopper", comm,
                                 400, 200)
    removed = cont.inserter.removed
    cont.run(200)
    assert 0 < removed < cont.inserter.removed
    same(ref, cont, "after the restart")
