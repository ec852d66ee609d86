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
    """The bulk's vertical stress from the fields saturates with depth as Janssen's
    σ_v = ρ_b g λ (1 − e^(−d/λ)) (rms misfit within 15 %) and the floor carries less than
    half the weight; the side walls' pressure follows σ_h = p_∞ (1 − e^(−d/λ)) with that λ:
    the one-parameter fit's rms misfit within 25 % of p_∞ (the column is 5 d wide: its bands
    carry the noise of a few dozen contacts), the deeper half of the bands at least 3/4 of
    p_∞, K = p_∞/(ρ_b g λ) between 0.5 and 1.5, and the wall friction it implies and the one
    the maps measure within Coulomb's μ. Over seeds 0–7 and a build whose forces differ in
    the last bits (12 columns) these read: rms 0.01–0.09 (fields), floor 0.33–0.37 of the
    weight; walls rms 0.05–0.18, deeper half 0.81–0.92 p_∞, K 0.73–0.90. The walls' own
    two-parameter λ, reported, scattered from 0.41 to 1.24 widths (the fields': 0.80–0.95)."""
    s, f, w = silo, silo["fields"], silo["walls_bulk_lambda"]
    print(f"fields: λ = {f['lambda'] / s['width']:.3f} widths, rms {f['fit_rms']:.3f}, "
          f"K bulk {f['K_bulk']:.3f}, floor/weight {f['load_over_weight']:.3f}; walls with it: "
          f"K = {w['K']:.3f}, rms {w['fit_rms']:.3f}, deeper half {w['deep_over_p_inf']:.3f}, "
          f"μ_w {w['mu_wall']:.3f} (fit), {s['mu_wall_measured']:.3f} (maps); the walls' own "
          f"fit: λ = {s['lambda'] / s['width']:.3f} widths, K = {s['K']:.3f}")
    assert f["fit_rms"] < 0.15 and f["load_over_weight"] < 0.5
    assert w["fit_rms"] < 0.25
    assert w["deep_over_p_inf"] > 0.75
    assert 0.5 < w["K"] < 1.5
    assert 0 < w["mu_wall"] <= MU and 0 < s["mu_wall_measured"] <= MU
