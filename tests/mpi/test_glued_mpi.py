"""Glued spheres under real mpiexec (2 and 4 ranks; also runs on 1): the rough drum — a layer
of spheres glued to the turning wall, moving across the ranks' blocks — with spheres thrown
at it gives the 1-rank trajectory bit for bit, and a restart continues it bit for bit
(issue 33)."""

from dataclasses import replace

import numpy as np
import pytest

from pdyn.config import SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.scenarios import drum
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
    before = set(sim.store.gid[sim._glued].tolist())
    sim.run(200)
    assert sim.rebuilds >= 4 and layer_hit(sim, scene)
    came = len(set(sim.store.gid[sim._glued].tolist()) - before)  # glued spheres migrated
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
