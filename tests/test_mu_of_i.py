"""The μ(I) benchmark's fast version (``benchmarks/mu_of_i.py``): the shear cell at constant
pressure at two inertial numbers — μ = −σ_xz/σ_zz rises with I and the solid fraction falls,
as in every published μ(I), φ(I) of frictional spheres ([GDRMiDi2004], [Jop2006])."""

import pytest

from .conftest import benchmark_script


@pytest.mark.slow  # two validation runs of five strain units each
def test_mu_rises_and_phi_falls_with_inertial_number():
    """250 spheres at P* = 200 Pa, I = 0.05 and 0.3, 2 strain units to settle and 3
    averaged: μ(0.3) − μ(0.05) above 3 standard errors and 0.05, φ(0.3) below φ(0.05) by
    more than 0.01, and the z stress near its target: within 20 % (a 250-sphere cell's
    pressure swings around its target over a few strain units; the benchmark's 500 spheres
    over 4 hold it within 2 %); the mean stress's principal values those of a simple shear."""
    program = benchmark_script("mu_of_i")
    slow, fast = (program.run_point(i, scale=0.5, settle=2.0, average=3.0) for i in (0.05, 0.3))
    for r in (slow, fast):
        assert abs(r["pzz"] / r["pressure"] - 1.0) < 0.2, r
        # simple shear: the intermediate principal stress between the others (a triaxial
        # compression's b is 0), the major axis near 45° from the flow
        assert 0.1 < r["b"] < 0.7 and 35.0 < r["major_angle"] < 55.0, r
    err = (slow["mu_err"] ** 2 + fast["mu_err"] ** 2) ** 0.5
    assert fast["mu"] - slow["mu"] > max(3.0 * err, 0.05), (slow, fast)
    assert slow["phi"] - fast["phi"] > 0.01, (slow, fast)
    assert "| 0.3 |" in program.table([slow, fast], "cmd", "today")
