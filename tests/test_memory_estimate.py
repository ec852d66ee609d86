"""The memory estimate counts the meshes every rank holds and the wall-force series' buffers
(``pdyn.checks.check_memory``), each named when it dominates."""

import numpy as np
import pytest

from pdyn.checks import MemoryEstimateError, array_bytes, check_memory
from pdyn.config import OutputConfig, SimulationConfig
from pdyn.domain import Box
from pdyn.io.wallforces import buffer_bytes


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
