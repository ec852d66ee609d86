"""Meshes once per node (``pdyn.parallel.shared``, the placement ``pdyn run`` builds meshes
in): the ranks of a node view one buffer of each mesh's arrays, the run is bit for bit the
one where every rank builds its own copy, a bad mesh is refused on every rank alike, and the
windows are freed on leaving the block."""

import numpy as np
import pytest

from pdyn.cli import mesh_placement
from pdyn.config import ConfigError, SimulationConfig
from pdyn.simulation import Simulation
from pdyn.stl import write_stl

from .conftest import idle_barrier
from .scenes import trough

STEPS = 40


def state(sim) -> dict:
    """Every owned sphere's position, velocity and spin by id, on every rank."""
    h = sim.store.owned
    parts = sim.comm.allgather({k: getattr(sim.store, k)[h] for k in ("gid", "pos", "vel",
                                                                     "omega")})
    gid = np.concatenate([p["gid"] for p in parts])
    order = np.argsort(gid)
    return {k: np.concatenate([p[k] for p in parts])[order] for k in parts[0]}


def test_one_buffer_per_node_and_the_same_bits(comm, shared_dir):
    if comm.size < 2:
        pytest.skip("needs several ranks")
    cfg = trough(shared_dir, comm)
    own = Simulation(cfg, comm=comm)  # every rank its own copy (no placement given)
    own.run(STEPS)
    with mesh_placement(comm) as placement:
        sim = Simulation(cfg, comm=comm)
        assert placement.node.Get_size() == comm.size  # (one node)
        assert len(placement.windows) == 2  # the trough's STL and the plate
        meshes = sim.wallset.meshes
        assert [len(m) for m in meshes] == [len(m) for m in own.wallset.meshes]
        for mesh, win, other in zip(meshes, placement.windows, own.wallset.meshes):
            buf, _ = win.Shared_query(0)
            base = np.frombuffer(buf, np.uint8)
            lo, hi = base.ctypes.data, base.ctypes.data + base.nbytes
            for name, a in mesh.arrays().items():
                if a.size:
                    assert lo <= a.ctypes.data < hi, f"{name} outside the node's window"
                assert np.array_equal(a, other.arrays()[name]), f"{name} differs"
            # one buffer: what the node's first rank writes, every rank reads
            kept = float(mesh.records[0, 0])
            placement.node.Barrier()
            if placement.node.Get_rank() == 0:
                mesh.records[0, 0] = 12345.0
            placement.node.Barrier()
            assert mesh.records[0, 0] == 12345.0
            placement.node.Barrier()
            if placement.node.Get_rank() == 0:
                mesh.records[0, 0] = kept
            placement.node.Barrier()
        sim.run(STEPS)
        shared = state(sim)
    assert not placement.windows  # freed
    mine = state(own)
    for k in mine:
        assert np.array_equal(mine[k], shared[k]), f"{k} differs"


def test_bad_mesh_refused_on_every_rank(comm, shared_dir):
    if comm.rank == 0:  # a zero-area triangle
        write_stl(shared_dir / "flat.stl", np.array([[[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                                                     [[0, 0, 0], [1, 0, 0], [0, 1, 0]]], float))
    idle_barrier(comm)
    with pytest.raises(ConfigError, match="zero area"):
        with mesh_placement(comm):
            SimulationConfig(scene="drop", scale=0.05, walls=[
                {"type": "mesh", "file": str(shared_dir / "flat.stl")}])
