"""Janssen's saturation of the floor load of a column filled in stages [Janssen1895]: a
column of bulk density ρ_b, cross-section A and perimeter P, with wall friction μ_w
mobilised everywhere and a ratio K = σ_h/σ_v of horizontal to vertical stress, carries on
its floor the apparent mass

    F/g = M_∞ (1 − exp(−M/M_∞)),   M_∞ = ρ_b A λ,   λ = A/(P μ_w K)  (= L/(4 μ_w K), square)

for a mass M filled in. Masses in kg, lengths in m; the fit needs scipy."""

from __future__ import annotations

import math

import numpy as np


def janssen_fit(run: dict) -> dict:
    """Janssen's saturation from a column's stages (``run``: ``stages``, a list of ``mass``
    filled in and floor ``apparent_mass``; ``width`` L of the square column; wall
    ``friction`` μ; ``bulk_density`` ρ_b): the plateau (the mean apparent mass of the last
    three stages, and the share of their added weight that still reached the floor), and the
    least-squares fit of F/g = M_∞ (1 − exp(−M/M_∞)) to every stage (with its rms misfit over
    the last mass); for each M_∞, λ = M_∞/(ρ_b A) (m, and in column widths) and
    K = L/(4 μ λ). Also the floor load over the weight at the end and its extremes. Without
    saturation (F/g = M within 2 % at the end, or μ = 0) no M_∞ (infinite, K NaN)."""
    from scipy.optimize import curve_fit

    m = np.array([s["mass"] for s in run["stages"]])
    f = np.array([s["apparent_mass"] for s in run["stages"]])
    end = float(f[-1] / m[-1])
    res = {"load_over_weight": end, "load_over_weight_min": float((f / m).min()),
           "load_over_weight_max": float((f / m).max())}
    none = {"m_inf": math.inf, "lambda": math.inf, "lambda_widths": math.inf, "K": math.nan,
            "m_plateau": math.inf, "plateau_slope": 1.0, "lambda_plateau_widths": math.inf,
            "K_plateau": math.nan, "fit_rms": math.nan}
    if end > 0.98 or run["friction"] == 0:
        return {**res, **none}
    area, L, mu = run["width"] ** 2, run["width"], run["friction"]

    def length(m_inf):
        lam = m_inf / (run["bulk_density"] * area)
        return lam, lam / L, L / (4 * mu * lam)

    (m_inf,), _ = curve_fit(lambda x, a: a * (1 - np.exp(-x / a)), m, f, p0=[f.max()])
    lam, lam_w, k = length(m_inf)
    resid = f - m_inf * (1 - np.exp(-m / m_inf))
    plateau = float(f[-3:].mean())
    _, lam_pw, k_p = length(plateau)
    return {**res, "m_inf": float(m_inf), "lambda": float(lam), "lambda_widths": float(lam_w),
            "K": float(k), "fit_rms": float(np.sqrt(np.mean(resid**2)) / m[-1]),
            "m_plateau": plateau, "plateau_slope": float((f[-1] - f[-3]) / (m[-1] - m[-3])),
            "lambda_plateau_widths": float(lam_pw), "K_plateau": float(k_p)}


def wall_pressure_fit(depth, pressure, bulk_density: float, gravity: float, area: float,
                      perimeter: float, length: float | None = None) -> dict:
    """Janssen's wall pressure [Janssen1895] fitted to a column's profile: ``pressure`` (Pa,
    the walls' normal stress) at ``depth`` (m below the free surface), least squares of

        σ_h(d) = p_∞ (1 − exp(−d/λ)),   p_∞ = K ρ_b g λ = ρ_b g A / (P μ_w),

    so K = p_∞ / (ρ_b g λ) (σ_h/σ_v, no wall friction needed) and μ_w = ρ_b g A / (P p_∞) the
    wall friction the profile mobilises; with ``bulk_density`` ρ_b (kg/m³), ``gravity`` g
    (m/s²), the cross-section ``area`` A (m²) and ``perimeter`` P (m). λ is fitted too, or
    held at ``length`` (m; e.g. the bulk's from :func:`field_stress_profile`), which leaves
    p_∞ alone to fit (linear). Returns p_∞ (Pa), λ (m), K, μ_w, the rms misfit over p_∞ and
    the deeper half's mean pressure over p_∞ (near 1 where the profile saturates); needs
    scipy for a fitted λ."""
    d, p = np.asarray(depth, float), np.asarray(pressure, float)
    if length is None:
        from scipy.optimize import curve_fit

        (p_inf, lam), _ = curve_fit(lambda x, a, b: a * (1 - np.exp(-x / b)), d, p,
                                    p0=[p.max(), max(d.max() / 3, 1e-12)])
    else:
        lam, shape = length, 1 - np.exp(-d / length)
        p_inf = (p * shape).sum() / (shape * shape).sum()
    resid = p - p_inf * (1 - np.exp(-d / lam))
    return {"p_inf": float(p_inf), "lambda": float(lam),
            "K": float(p_inf / (bulk_density * gravity * lam)),
            "mu_wall": float(bulk_density * gravity * area / (perimeter * p_inf)),
            "fit_rms": float(np.sqrt(np.mean(resid ** 2)) / abs(p_inf)),
            "deep_over_p_inf": float(p[d > np.median(d)].mean() / p_inf)}


def field_stress_profile(fields: dict, surface: float, bulk_density: float,
                         gravity: float) -> dict:
    """A column's stresses from a ``[[fields]]`` file resolving z alone
    (``pdyn.io.read_fields``), the free surface at height ``surface`` (m): at each bin
    centre below it the depth, the vertical stress σ_v = −σ_zz and the horizontal one
    σ_h = −(σ_xx + σ_yy)/2 (Pa, the cross-section's means), their ratio K(d) = σ_h/σ_v and
    its mean over the bins from a quarter to three quarters of the depth (``K_bulk``); Janssen's vertical profile
    σ_v = ρ_b g λ (1 − exp(−d/λ)) fitted for λ (m) with its rms misfit over ρ_b g λ, beside
    σ_v over the weight above (ρ_b g d) at the deepest bin."""
    from scipy.optimize import curve_fit

    z = np.asarray(fields["z"], float)
    stress = np.asarray(fields["stress"], float).reshape(len(z), 9)
    depth = surface - z
    use = depth > 0
    d, sv = depth[use], -stress[use, 8]
    sh = -0.5 * (stress[use, 0] + stress[use, 4])
    ratio = sh / np.where(sv > 0, sv, np.nan)
    bulk = (d > 0.25 * d.max()) & (d < 0.75 * d.max())
    w = bulk_density * gravity
    (lam,), _ = curve_fit(lambda x, b: w * b * (1 - np.exp(-x / b)), d, sv,
                          p0=[max(d.max() / 3, 1e-12)])
    resid = sv - w * lam * (1 - np.exp(-d / lam))
    deep = int(np.argmax(d))
    return {"depth": d.tolist(), "sigma_v": sv.tolist(), "sigma_h": sh.tolist(),
            "K": ratio.tolist(), "K_bulk": float(np.nanmean(ratio[bulk])),
            "lambda": float(lam), "fit_rms": float(np.sqrt(np.mean(resid ** 2)) / (w * lam)),
            "load_over_weight": float(sv[deep] / (w * d[deep]))}
