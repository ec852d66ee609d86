"""Glued spheres under real mpiexec (2 and 4 ranks; also runs on 1): the rough drum — a layer
of spheres glued to the turning wall, moving across the ranks' blocks — with spheres thrown
at it gives the 1-rank trajectory bit for bit, and a restart continues it bit for bit; a
rough plate sliding along a periodic axis, its glued layer wrapped by the exchange, too
(issue 33)."""

from dataclasses import replace

import numpy as np
import pytest

from pdyn.config import SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.scenarios import Scene, drum
from pdyn.simulation import Simulation

from .scenes import FRICTIONAL_STATE, assert_same_state, gather_fields, run_then_restart

pytestmark = pytest.mark.mpi

STATE = FRICTIONAL_STATE + ("anchor", "glued")


def thrown_rough_drum():
    """The rough drum at a third of its length (666 spheres, 166 glued ones) turning fast
    (Fr = 25: the layer moves 2 cm in 200 steps, across the blocks), contacts soft (k = 1000
    N/m: a step is 84 µs) and the bed thrown at 0.5 m/s, so that it hits the layer within
    the run."""
    s = drum(scale=1 / 3, froude=25.0, rough=True)
    bed = s.glued < 0
    v = np.zeros_like(s.positions)
    v[bed] = np.random.default_rng(4).normal(0.0, 0.5, (bed.sum(), 3))
    return replace(s, velocities=v, contact={**s.contact, "youngs_modulus": 5e5})


def config(**cfg):
    return SimulationConfig(scene="drum", progress=False, **cfg)


def layer_hit(sim, scene):
    """The thrown spheres touched the glued layer (on some rank)."""
    pairs = np.concatenate(sim.comm.allgather(sim.contact_pairs()))
    return np.isin(pairs, np.flatnonzero(scene.glued >= 0)).any()


def test_rough_drum_bit_identical_to_one_rank(comm):
    scene = thrown_rough_drum()
    cfg = config(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm, scene=scene)
    before = set(sim.store.gid[sim.glued.handles].tolist())
    sim.run(200)
    assert sim.rebuilds >= 4 and layer_hit(sim, scene)
    came = len(set(sim.store.gid[sim.glued.handles].tolist()) - before)  # glued spheres migrated
    assert comm.allreduce_sum(came) > 0 or comm.size == 1
    ref = Simulation(cfg, comm=SerialComm(), scene=scene)
    ref.run(200)
    a, b = gather_fields(sim, STATE), gather_fields(ref, STATE)
    assert_same_state(a[:len(FRICTIONAL_STATE) + 1], b[:len(FRICTIONAL_STATE) + 1],
                      "from the 1-rank run")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # the anchors and walls travelled


def test_rough_drum_restart_is_bit_identical(comm, shared_dir):
    scene = thrown_rough_drum()
    ref, cont = run_then_restart(lambda o: config(output=o), shared_dir / "rough", comm, 160,
                                 80, scene=scene)
    cont.run(80)
    a, b = gather_fields(ref, STATE), gather_fields(cont, STATE)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)), "differs after the restart"


def sliding_plate():
    """A rough plate sliding along a periodic axis: a plane at z = 0 moving at 2 m/s along
    x carries a 6 × 6 square layer of glued spheres (d = 1 m, touching) in a box periodic
    over 6 m in x and y; 30 spheres fall onto it under gravity and are dragged along. In 300
    steps of 10 ms the layer goes once round the box in x."""
    g = (np.arange(6) + 0.5)
    x, y = np.meshgrid(g, g, indexing="ij")
    layer = np.column_stack((x.ravel(), y.ravel(), np.full(36, 0.5)))
    k, i = np.divmod(np.arange(30), 6)  # five layers of six, 1.1 m apart, on a diagonal
    above = np.column_stack((g[i] + 0.05 * k, g[::-1][i], 1.8 + 1.1 * k))
    pos = np.concatenate((layer, above))
    return Scene(name="plate", box_lo=np.zeros(3), box_hi=np.array([6.0, 6.0, 10.0]),
                 boundary=("periodic", "periodic", "open"), positions=pos,
                 velocities=np.zeros_like(pos), radii=np.full(len(pos), 0.5), density=1000.0,
                 gravity=np.array([0.0, 0.0, -9.81]), dt=0.01,
                 contact={"stiffness": 1e4, "restitution": 0.5, "friction": 0.5},
                 walls=({"type": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0],
                         "velocity": [2.0, 0.0, 0.0]},),
                 glued=np.where(np.arange(len(pos)) < 36, 0, -1))


def test_sliding_plate_wraps_bit_identical_to_one_rank(comm):
    """The glued layer crosses the periodic face and is wrapped by the exchange; each glued
    centre stays the motion's image (x₀ + v t, whole periods apart), and N ranks give the
    1-rank run bit for bit; the dropped spheres are dragged along x."""
    scene = sliding_plate()
    cfg = config(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm, scene=scene)
    sim.run(300)
    ref = Simulation(cfg, comm=SerialComm(), scene=scene)
    ref.run(300)
    a, b = gather_fields(sim, STATE), gather_fields(ref, STATE)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)), "differs from the 1-rank run"
    gid, pos, vel = a[0], a[1], a[2]
    layer = gid < 36
    shift = pos[layer] - scene.positions[gid[layer]] - [2.0 * sim.time, 0.0, 0.0]
    np.testing.assert_allclose(shift[:, 1:], 0.0, atol=1e-12)
    np.testing.assert_allclose(shift[:, 0] / 6.0, np.round(shift[:, 0] / 6.0), atol=1e-12)
    assert (np.abs(shift[:, 0]) > 1.0).any()  # wrapped at least once
    assert np.all((pos[layer, 0] > -1.0) & (pos[layer, 0] < 7.0))
    assert vel[~layer, 0].mean() > 1.0  # dragged
