"""``pdyn.analysis.packing`` on a known crystal, and ``benchmarks/bulk_validation.py --quick``
on a tiny bed and column: the poured frictional bed's bulk packing fraction and coordination
number are those of a random packing, and a frictionless column's floor carries the whole
weight."""

import json
import math

import numpy as np
import pytest

from pdyn.analysis.janssen import janssen_fit
from pdyn.analysis.packing import contacts, volume_between, without_rattlers

from .conftest import benchmark_script


def test_measures_of_a_known_packing():
    r = 1e-3
    d = 2 * r
    # a simple cubic crystal of spheres overlapping by 0.1 % of d, 4 x 4 periodic, 6 layers
    a = 0.999 * d
    g = np.arange(4) * a
    pos = np.array([(x, y, 0.999 * r + z) for x in g for y in g for z in np.arange(6) * a])
    count, pairs = contacts(pos, r, 4 * a)
    mid = (pos[:, 2] > 1.5 * a) & (pos[:, 2] < 5 * a)
    assert count[mid].tolist() == [6] * 16 * 3  # 4 in plane, above, below
    assert count[pos[:, 2] > 5 * a].tolist() == [5] * 16  # the top layer
    assert count[pos[:, 2] < r].tolist() == [6] * 16  # the floor is one
    assert math.isclose(volume_between(pos[:, 2], r, a, 5 * a) / (16 * a * a * 4 * a),
                        math.pi / 6 / 0.999**3, rel_tol=1e-12)
    assert without_rattlers(count, pairs).all()
    assert not without_rattlers(count, pairs, least=7).any()


def test_janssen_fit_recovers_the_saturation_of_its_form():
    """Stages on Janssen's curve F/g = M_∞ (1 − exp(−M/M_∞)): the fit gives M_∞ back and
    with it λ = M_∞/(ρ_b L²) and K = L/(4 μ λ); a column whose floor carries the whole weight
    (or without friction) has no saturation."""
    L, rho_b, mu, m_inf = 0.016, 1500.0, 0.5, 0.004
    mass = np.linspace(0.0005, 0.006, 12)
    run = {"width": L, "bulk_density": rho_b, "friction": mu,
           "stages": [{"mass": m, "apparent_mass": m_inf * (1 - np.exp(-m / m_inf))}
                      for m in mass]}
    fit = janssen_fit(run)
    lam = m_inf / (rho_b * L * L)
    assert fit["m_inf"] == pytest.approx(m_inf, rel=1e-6) and fit["fit_rms"] < 1e-6
    assert fit["lambda_widths"] == pytest.approx(lam / L, rel=1e-6)
    assert fit["K"] == pytest.approx(L / (4 * mu * lam), rel=1e-6)
    assert fit["m_plateau"] < m_inf and 0 < fit["plateau_slope"] < 1
    full = dict(run, stages=[{"mass": m, "apparent_mass": m} for m in mass])
    assert math.isinf(janssen_fit(full)["m_inf"]) and janssen_fit(full)["load_over_weight"] == 1
    assert math.isinf(janssen_fit(dict(run, friction=0.0))["m_inf"])


@pytest.mark.slow  # about 4 s of CPU time, 10-20 s on a loaded machine
def test_quick_bed_and_column_are_sane(tmp_path):
    out = tmp_path / "b.json"
    program = benchmark_script("bulk_validation")
    program.main(["--quick", "--friction", "0.5", "--janssen-friction", "0", "--bed-spheres",
                  "150", "--bed-width", "5", "--no-plots", "--json", str(out)])
    res = json.loads(out.read_text())
    (bed,), (column,) = res["beds"], res["columns"]
    assert 0.5 < bed["phi"] < 0.7 and 3 < bed["z"] < 7
    assert bed["max_contacts"] <= 12
    assert abs(column["load_over_weight"] - 1) < 0.01  # no wall friction: all on the floor
    assert column["stages"][-1]["spheres"] == 80
