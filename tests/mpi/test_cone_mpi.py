"""A cone wall under real mpiexec (2 and 4 ranks; also runs on 1): a small hopper — a cylinder
over a turning 45° cone with an orifice — discharging a few hundred frictional spheres gives
the 1-rank trajectory bit for bit, and a restart continues it bit for bit (issue 43)."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.simulation import Simulation

from .scenes import assert_same_state, run_then_restart

pytestmark = pytest.mark.mpi

R_SILO, R_SPHERE = 0.03, 0.002  # m
#: the hopper: a 45° cone (apex at the origin, radius z) from its orifice at z = 0.008 to
#: z = 0.03, turning slowly, under a cylinder of the cone's top radius up to z = 0.09
WALLS = [{"type": "cylinder", "point": [0.0, 0.0, 0.06], "axis": [0.0, 0.0, 1.0],
          "radius": R_SILO, "length": 0.06},
         {"type": "cone", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0], "radius_lo": 0.008,
          "radius_hi": R_SILO, "lo": 0.008, "hi": 0.03, "angular_velocity": 5.0}]


def hopper(**cfg):
    """Three layers of spheres (a square lattice within the cylinder, 384 of them) above the
    cone, thrown down at 1 m/s (± 0.2 m/s at random): soft (k = 1000 N/m), frictional."""
    g = np.arange(-0.0264, 0.0265, 0.0044)
    x, y, z = np.meshgrid(g, g, [0.033, 0.0375, 0.042], indexing="ij")
    pos = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    pos = pos[np.hypot(pos[:, 0], pos[:, 1]) < R_SILO - 1.25 * R_SPHERE]
    v = np.random.default_rng(3).normal(0.0, 0.2, pos.shape) + [0.0, 0.0, -1.0]
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=v,
                                  radii=np.full(len(pos), R_SPHERE), density=2500.0),
        box=BoxConfig(lo=(-0.04, -0.04, -0.02), hi=(0.04, 0.04, 0.1)),
        contact=ContactConfig(youngs_modulus=5e5, restitution=0.5, friction=0.5),
        walls=WALLS, gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


def test_cone_hopper_bit_identical_to_one_rank(comm):
    cfg = hopper(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(300)
    assert sim.comm.allreduce_sum(int(sim.store.owned.size)) > 300 and sim.rebuilds >= 4
    walls = sim.wall_contacts()["id"][:, 1]
    seen = set(sum(sim.comm.allgather(np.unique(walls).tolist()), []))
    assert -8 in seen  # the cone touched (the cylinder is wall −7)
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(300)
    assert_same_state(sim, ref, "from the 1-rank run")


def test_restart_of_a_cone_hopper_is_bit_identical(comm, shared_dir):
    ref, cont = run_then_restart(lambda o: hopper(output=o), shared_dir / "cone", comm, 300,
                                 150, wall_forces=True)
    cont.run(150)
    assert_same_state(ref, cont, "after the restart")
