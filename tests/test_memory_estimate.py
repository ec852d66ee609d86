"""The memory estimate counts the meshes (every rank's, or once per node when its ranks share
them) and the wall-force series' buffers (``pdyn.checks.check_memory``), each named when it
dominates."""

import numpy as np
import pytest

from pdyn.checks import MemoryEstimateError, array_bytes, check_memory, mesh_bytes
from pdyn.config import OutputConfig, SimulationConfig
from pdyn.domain import Box
from pdyn.io.wallforces import buffer_bytes
from pdyn.mesh import Mesh, grid_surface, pack


def test_meshes_and_wall_force_buffers_are_in_the_estimate():
    box = Box(np.zeros(3), np.full(3, 10.0), ("wall",) * 3)
    cfg = SimulationConfig(output=OutputConfig(wall_forces=True))
    mesh = (np.zeros((10**6, 3)), np.zeros((10**6, 3), np.int32), "not an array")
    assert array_bytes(mesh) == 24 * 10**6 + 12 * 10**6 and array_bytes(None) == 0
    check_memory((1, 1.1 * array_bytes(mesh)), 1, box, cfg, particles=0, rotating=False,
                 meshes=array_bytes(mesh))
    with pytest.raises(MemoryEstimateError, match=r"^walls \(meshes\): the run would need "
                       r"about 0.0335 GiB on a node \(meshes 0.0335 GiB"):
        check_memory((1, 0.9 * array_bytes(mesh)), 1, box, cfg, particles=0, rotating=False,
                     meshes=array_bytes(mesh))
    series = buffer_bytes(4)
    assert series > buffer_bytes(2) > 0
    with pytest.raises(MemoryEstimateError, match=r"^output.wall_forces = true: .*wall-force "
                       r"buffers"):
        check_memory((1, 0.5 * series), 4, box, cfg, particles=0, rotating=False,
                     series=series)


def test_shared_meshes_are_counted_once_per_node():
    v, t = grid_surface(30, 1.0)
    mesh = Mesh(v[t])
    bundle = pack([mesh, mesh.moved((0.0, 0.0, 1.0))], [6, 7])
    whole = sum(a.nbytes for a in mesh.arrays().values())
    own = sum(a.nbytes for a in bundle if isinstance(a, np.ndarray))  # two meshes: copies
    assert mesh_bytes([mesh, mesh], bundle, shared=True) == (whole, own)
    assert mesh_bytes([mesh, mesh], bundle, shared=False) == (0, whole + own)
    alone = pack([mesh], [6])  # one mesh: the bundle views its arrays
    assert mesh_bytes([mesh], alone, shared=True)[1] < 0.2 * whole
    box = Box(np.zeros(3), np.full(3, 10.0), ("wall",) * 3)
    cfg = SimulationConfig()
    have = 2 * whole  # 4 ranks on the node: one shared copy fits, four do not
    check_memory((4, have), 4, box, cfg, particles=0, rotating=False, node_meshes=whole)
    with pytest.raises(MemoryEstimateError, match=r"^walls \(meshes\)"):
        check_memory((4, have), 4, box, cfg, particles=0, rotating=False, meshes=whole)
