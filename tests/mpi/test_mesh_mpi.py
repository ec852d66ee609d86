"""Mesh walls under real mpiexec (2 and 4 ranks; also runs on 1): frictional spheres poured
into a V-shaped mesh trough (an STL file) while a mesh piston (vertex arrays) slides in, and
frictional spheres tumbling in a turning drum of triangles, give the 1-rank trajectory bit for
bit, and a restart continues them bit for bit (issue 33)."""

import math

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.mesh import grid_surface, tube_surface
from pdyn.parallel import SerialComm
from pdyn.scenarios import place_spheres
from pdyn.simulation import Simulation
from pdyn.stl import write_stl

from .scenes import assert_same_state, run_then_restart

pytestmark = pytest.mark.mpi

SLOPE = math.tan(math.radians(30.0))


def trough(folder, comm, **cfg):
    """250 spheres (r 4-6 mm) over a V trough of 200 triangles (faces at 30°, an STL file
    in mm), thrown down at 1 m/s, a vertical mesh plate moving in along y at 0.3 m/s;
    friction 0.5, rolling friction 0.02, walled sides."""
    if comm.rank == 0:
        v, t = grid_surface(10, 100.0, lift=lambda x, y: SLOPE * np.abs(x))
        write_stl(folder / "trough.stl", v[t].astype(np.float32))
    comm.barrier()
    rng = np.random.default_rng(9)
    radii = rng.uniform(0.004, 0.006, 250)
    pos = place_spheres(radii, np.array([-0.03, -0.09, 0.025]), np.array([0.03, 0.09, 0.14]),
                        9)  # above the trough (0.017 m high at |x| = 0.03 m)
    vel = rng.normal(0.0, 0.2, pos.shape) + [0.0, 0.0, -1.0]
    plate = {"type": "mesh", "vertices": [[-0.1, -0.092, 0.0], [0.1, -0.092, 0.0],
                                          [0.1, -0.092, 0.2], [-0.1, -0.092, 0.2]],
             "triangles": [[0, 1, 2], [0, 2, 3]], "velocity": [0.0, 0.3, 0.0]}
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=radii, density=2500.0),
        box=BoxConfig(lo=(-0.1, -0.12, -0.01), hi=(0.1, 0.1, 0.25),
                      boundary=("wall", "wall", "open")),
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.5, friction=0.5,
                              rolling_friction=0.02),
        walls=[{"type": "mesh", "file": str(folder / "trough.stl"), "scale": 0.001}, plate],
        gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


def test_mesh_walls_bit_identical_to_one_rank(comm, shared_dir):
    cfg = trough(shared_dir, comm, reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(600)
    assert sim.rebuilds >= 4
    walls = sim.wall_contacts()["id"][:, 1]
    seen = set(sum(sim.comm.allgather(np.unique(walls).tolist()), []))
    assert {-5, -6} <= seen  # the trough and the plate both touched
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(600)
    assert_same_state(sim, ref, "from the 1-rank run")


def test_restart_with_mesh_walls_is_bit_identical(comm, shared_dir):
    out = shared_dir / "mesh"
    ref, cont = run_then_restart(lambda o: trough(shared_dir, comm, output=o), out, comm, 600,
                                 300, wall_forces=True)
    cont.run(300)
    assert_same_state(ref, cont, "after the restart")
    if comm.rank == 0:
        head = (out / "a" / "wall_forces.csv").read_text().splitlines()[0].split(",")
        assert head[-12:] == [f"wall{k}_{c}{a}" for c in "ft" for k in (5, 6) for a in "xyz"]


def drum(comm, **cfg):
    """100 spheres (r 3-4 mm) thrown down at 0.5 m/s in a drum of 192 triangles (radius 5 cm, axis y through
    (0, 0, 0.01), walled ends) turning at 4 rad/s, friction 0.5, rolling friction 0.02."""
    rng = np.random.default_rng(4)
    radii = rng.uniform(0.003, 0.004, 100)
    pos = place_spheres(radii, np.array([-0.025, -0.02, -0.028]),
                        np.array([0.025, 0.02, 0.015]), 4)
    vel = rng.normal(0.0, 0.1, pos.shape) + [0.0, 0.0, -0.5]
    v, t = tube_surface(48, 0.05, 0.04, along=2)
    wall = {"type": "mesh", "vertices": v + [0.0, 0.0, 0.01], "triangles": t,
            "angular_velocity": 4.0, "axis": [0.0, 1.0, 0.0], "point": [0.0, 0.0, 0.01]}
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=radii, density=2500.0),
        box=BoxConfig(lo=(-0.06, -0.02, -0.05), hi=(0.06, 0.02, 0.07),
                      boundary=("open", "wall", "open")),
        contact=ContactConfig(youngs_modulus=2e5, restitution=0.5, friction=0.5,
                              rolling_friction=0.02),
        walls=[wall], gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


def test_turning_mesh_drum_bit_identical_to_one_rank(comm):
    cfg = drum(comm, reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(1000)
    assert sim.rebuilds >= 4
    vel = sim.store.vel[sim.store.owned]
    drift = comm.allreduce_sum(float(np.sum(vel[:, 0])))
    assert drift < 0.0  # the drum drags the bed along its bottom's motion, Ω ŷ × (−ẑ) = −x̂
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(1000)
    assert_same_state(sim, ref, "from the 1-rank run")


def test_restart_with_a_turning_mesh_drum_is_bit_identical(comm, shared_dir):
    out = shared_dir / "drum"
    ref, cont = run_then_restart(lambda o: drum(comm, output=o), out, comm, 1000, 400,
                                 wall_forces=True)
    cont.run(600)
    assert_same_state(ref, cont, "after the restart")
