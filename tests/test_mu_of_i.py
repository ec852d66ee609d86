"""The μ(I) benchmark's fast version (``benchmarks/mu_of_i.py``): the shear cell at constant
pressure at two inertial numbers — μ = −σ_xz/σ_zz rises with I and the solid fraction falls,
as in every published μ(I), φ(I) of frictional spheres ([GDRMiDi2004], [Jop2006])."""

from .conftest import benchmark_script


def test_mu_rises_and_phi_falls_with_inertial_number():
    """250 spheres at P* = 200 Pa, I = 0.03 and 0.3, 1.5 strain units to settle and 2.5
    averaged: μ(0.3) − μ(0.03) above 3 standard errors and 0.05, φ(0.3) below φ(0.03) by
    more than 0.01, and the z stress held at its target within 10 %."""
    program = benchmark_script("mu_of_i")
    slow, fast = (program.run_point(i, scale=0.5, settle=1.5, average=2.5) for i in (0.03, 0.3))
    for r in (slow, fast):
        assert abs(r["pzz"] / r["pressure"] - 1.0) < 0.1, r
    err = (slow["mu_err"] ** 2 + fast["mu_err"] ** 2) ** 0.5
    assert fast["mu"] - slow["mu"] > max(3.0 * err, 0.05), (slow, fast)
    assert slow["phi"] - fast["phi"] > 0.01, (slow, fast)
    assert "| 0.3 |" in program.table([slow, fast], "cmd", "today")
