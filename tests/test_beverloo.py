"""``pdyn.analysis.beverloo`` on synthetic data: the Beverloo fit recovers C and k, and the
constant-rate window and line fit see a constant and a falling rate; and the program
``benchmarks/beverloo.py`` on top: its table, its refusal of a bad height, its wall time of
merged runs."""

import math

import numpy as np
import pytest

from pdyn.analysis import beverloo as bv

from .conftest import benchmark_script


def test_beverloo_fit_recovers_c_and_k():
    d, rho = 0.01, 1500.0
    D = np.array([4.0, 5.0, 6.0, 7.0, 8.0]) * d
    for c, k in ((0.58, 1.5), (0.64, 2.8), (0.45, 0.9)):
        w = c * rho * math.sqrt(9.81) * (D - k * d) ** 2.5
        f = bv.beverloo_fit(D, w, rho, d)
        assert f["C"] == pytest.approx(c, rel=1e-9) and f["k"] == pytest.approx(k, rel=1e-9)
        assert f["rms_misfit"] < 1e-12
        noisy = w * (1.0 + 0.01 * np.array([1, -1, 1, -1, 1]))  # ±1 % noise
        g = bv.beverloo_fit(D, noisy, rho, d)
        assert abs(g["C"] - c) < 0.05 * c and abs(g["k"] - k) < 0.3
        assert 0.005 < g["rms_misfit"] < 0.02


def test_area_equivalent_diameter():
    s = 0.06
    assert math.pi * bv.area_diameter(s) ** 2 / 4 == pytest.approx(s * s, rel=1e-14)


def test_window_ends_when_a_third_is_left_and_the_line_fits_a_constant_rate():
    t = np.arange(0.0, 3.0, 0.01)
    m0, opens, w = 10.0, 0.3, 4.0
    out = np.where(t < opens, 0.0, 0.3 + w * (t - opens))  # a plug of 0.3 kg at the opening
    out = np.minimum(out, m0)
    i0, i1 = bv.rate_window(t, out, m0, opens, skip=0.1)
    assert t[i0] == pytest.approx(0.4) and out[i1 - 1] < 2 / 3 * m0 <= out[i1]
    f = bv.line_fit(t[i0:i1], out[i0:i1])
    assert f["rate"] == pytest.approx(w, rel=1e-9) and f["rms_over_range"] < 1e-12
    assert abs(f["drift"]) < 1e-9
    i0, i1 = bv.rate_window(t, out * 0.1, m0, opens, skip=0.1)  # never a third left
    assert i1 == len(t)


def test_a_falling_rate_shows_as_drift_and_curvature():
    t = np.linspace(0.0, 1.0, 101)
    m = 2.0 * t - 0.5 * t**2  # the rate falls from 2 to 1 kg/s
    f = bv.line_fit(t, m)
    assert f["drift"] < -0.3 and f["rms_over_range"] > 1e-3
    with pytest.raises(ValueError, match="5 samples"):
        bv.line_fit(t[:5], m[:5])


def test_analyse_fits_the_runs_rates_and_needs_two_sizes():
    d, rho, c, k = 0.01, 1500.0, 0.6, 1.5
    t = np.arange(0.0, 2.0, 0.01)
    runs = []
    for s in (4.0, 6.0, 8.0):
        da = bv.area_diameter(s * d)
        w = c * rho * math.sqrt(9.81) * (da - k * d) ** 2.5
        runs.append({"orifice_d": s, "side": s * d, "D_area": da, "m0": 20.0, "opens": 0.3,
                     "rho_b": rho, "spheres": 100, "max_overlap_over_radius": 0.01,
                     "times": t.tolist(),
                     "mass_out": np.clip(w * (t - 0.3), 0.0, 20.0).tolist()})
    fits = bv.analyse(runs, skip=0.1, d=d)
    assert fits["area"]["C"] == pytest.approx(c, rel=1e-6)
    assert fits["area"]["k"] == pytest.approx(k, rel=1e-6)
    assert "| 0.600 | 1.50 | 0.0% |" in benchmark_script("beverloo").table(runs, fits)
    assert "area" not in bv.analyse(runs[:1], skip=0.1, d=d)


def test_a_bad_height_is_one_line_before_any_run(capsys):
    program = benchmark_script("beverloo")
    for bad in ("0", "-2", "nan"):
        with pytest.raises(SystemExit) as stop:
            program.main(["--height", bad, "--orifices", "5"])
        assert str(stop.value).startswith("beverloo.py: --height = ")
        assert "\n" not in str(stop.value)


def test_merged_runs_count_the_wall_time_while_any_ran():
    import datetime

    busy_seconds = benchmark_script("beverloo").busy_seconds
    t = datetime.datetime(2026, 1, 1)
    m = datetime.timedelta(minutes=1)
    side_by_side = [(t, t + 10 * m), (t + 2 * m, t + 12 * m)]
    assert busy_seconds(side_by_side) == 12 * 60
    apart = [(t + 100 * m, t + 105 * m), (t, t + 10 * m)]
    assert busy_seconds(apart) == 15 * 60
    assert busy_seconds([(t, t + 10 * m), (t + m, t + 2 * m)]) == 10 * 60
