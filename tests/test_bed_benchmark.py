"""``benchmarks/bed.py``, the settled bed of ``vs_lammps.py --scene bed``: its lattice start has
no overlaps, and the damping ratio it gives LAMMPS is pdyn's for the same restitution."""

import math

import numpy as np
import pytest

from pdyn.dynamics.laws import damping_ratio

from .conftest import benchmark_script


@pytest.fixture(scope="module")
def bed():
    return benchmark_script("bed")


def test_poured_bed_is_free_of_overlaps_and_inside(bed):
    from scipy.spatial import cKDTree

    p = bed.parameters(scale=0.01)
    centres, radii, top = bed.poured(p)
    assert len(radii) == 800 and radii.min() >= 1e-3 and radii.max() <= 2e-3
    w = p["width"]
    assert (centres[:, :2] - radii[:, None] >= 0).all()
    assert (centres[:, :2] + radii[:, None] <= w).all()
    assert (centres[:, 2] - radii > 0).all() and (centres[:, 2] + radii < top).all()
    pairs = cKDTree(centres, boxsize=[w, w, 2 * top]).query_pairs(4e-3, output_type="ndarray")
    d = centres[pairs[:, 1]] - centres[pairs[:, 0]]
    d[:, :2] -= w * np.round(d[:, :2] / w)
    assert (np.linalg.norm(d, axis=1) > radii[pairs[:, 0]] + radii[pairs[:, 1]]).all()


def test_lammps_damping_is_pdyns(bed):
    e = 0.5  # the bed's
    zeta = bed.hertz_damping_ratio(e)
    assert math.isclose(zeta, damping_ratio(e, "hertz"), rel_tol=1e-6)
    p = dict(bed.parameters(), restitution=e)
    e_lmp = float(bed.lammps_model(p, 0.5).split()[2])
    x = -math.log(e_lmp)  # LAMMPS' coeff_restitution prefactor, then pdyn's ζ
    assert math.isclose(math.sqrt(5) * x / math.sqrt(math.pi**2 + x * x), math.sqrt(6) * zeta,
                        rel_tol=1e-12)


def test_damping_beyond_lammps_is_refused(bed):
    with pytest.raises(ValueError, match="e ≥ 0.136"):
        bed.lammps_model(dict(bed.parameters(), restitution=0.1), 0.0)
