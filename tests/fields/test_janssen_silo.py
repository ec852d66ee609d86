"""A silo's wall pressure follows Janssen's saturating profile (issue 47's validation): the
quick silo of ``benchmarks/stress_validation.py`` (300 spheres in a column 5 d wide, its
side walls sliding up so that their friction is mobilised; about 20 000 steps)."""

import pytest

from ..conftest import benchmark_script

MU = 0.5


@pytest.fixture(scope="module")
def silo():
    program = benchmark_script("stress_validation")
    size = program.QUICK
    return program.silo(MU, size["silo_spheres"], size["silo_width"], size["silo_window"],
                        settle_seconds=size["silo_settle"])


@pytest.mark.slow  # a whole validation run (about 20 000 steps)
def test_silo_wall_pressure_follows_janssen(silo):
    """The side walls' pressure saturates with depth as Janssen's σ_h = p_∞ (1 − e^(−d/λ)):
    the fit's rms misfit within 15 % of p_∞ (the column is 5 d wide: its bands carry the
    noise of a few dozen contacts), the deepest band at least 3/4 of p_∞; the bulk's vertical
    stress from the fields saturates with the same length λ (within 25 %) and the floor
    carries less than half the weight; the wall friction the fit implies and the one the maps
    measure within Coulomb's μ; K reported."""
    s, f = silo, silo["fields"]
    print(f"K = {s['K']:.3f}, λ = {s['lambda'] / s['width']:.3f} widths, "
          f"rms {s['fit_rms']:.3f}; fields: λ = {f['lambda'] / s['width']:.3f} widths, "
          f"rms {f['fit_rms']:.3f}, K bulk {f['K_bulk']:.3f}, "
          f"floor/weight {f['load_over_weight']:.3f}; μ_w {s['mu_wall']:.3f} (fit), "
          f"{s['mu_wall_measured']:.3f} (maps)")
    assert s["fit_rms"] < 0.15
    deepest = s["pressure"][s["depth"].index(max(s["depth"]))]
    assert deepest > 0.75 * s["p_inf"]
    assert f["lambda"] == pytest.approx(s["lambda"], rel=0.25)
    assert f["load_over_weight"] < 0.5 and f["fit_rms"] < 0.15
    assert 0 < s["mu_wall"] <= MU and 0 < s["mu_wall_measured"] <= MU
    assert 0.2 < s["K"] < 2.0
