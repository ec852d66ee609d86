"""``benchmarks/bulk_validation.py --quick`` on a tiny bed and column: the poured frictional
bed's bulk packing fraction and coordination number are those of a random packing, and a
frictionless column's floor carries the whole weight."""

import json
import math

import numpy as np
import pytest

from .conftest import benchmark_script


def _module():
    return benchmark_script("bulk_validation")


def test_measures_of_a_known_packing():
    bv = _module()
    r = bv.MATERIAL["radius"]
    d = 2 * r
    # a simple cubic crystal of spheres overlapping by 0.1 % of d, 4 x 4 periodic, 6 layers
    a = 0.999 * d
    g = np.arange(4) * a
    pos = np.array([(x, y, 0.999 * r + z) for x in g for y in g for z in np.arange(6) * a])
    count, pairs = bv.contacts(pos, r, 4 * a)
    mid = (pos[:, 2] > 1.5 * a) & (pos[:, 2] < 5 * a)
    assert count[mid].tolist() == [6] * 16 * 3  # 4 in plane, above, below
    assert count[pos[:, 2] > 5 * a].tolist() == [5] * 16  # the top layer
    assert count[pos[:, 2] < r].tolist() == [6] * 16  # the floor is one
    assert math.isclose(bv.slab_volume(pos[:, 2], r, a, 5 * a) / (16 * a * a * 4 * a),
                        math.pi / 6 / 0.999**3, rel_tol=1e-12)
    assert bv.without_rattlers(count, pairs).all()
    assert not bv.without_rattlers(count, pairs, least=7).any()


@pytest.mark.slow  # about 4 s of CPU time, 10-20 s on a loaded machine
def test_quick_bed_and_column_are_sane(tmp_path):
    bv = _module()
    out = tmp_path / "b.json"
    bv.main(["--quick", "--friction", "0.5", "--janssen-friction", "0", "--bed-spheres", "150",
             "--bed-width", "5", "--no-plots", "--json", str(out)])
    res = json.loads(out.read_text())
    (bed,), (column,) = res["beds"], res["columns"]
    assert 0.5 < bed["phi"] < 0.7 and 3 < bed["z"] < 7
    assert bed["max_contacts"] <= 12
    assert abs(column["load_over_weight"] - 1) < 0.01  # no wall friction: all on the floor
    assert column["stages"][-1]["spheres"] == 80
