"""Discharge of a silo against Beverloo's law [Beverloo1961]

    W = C ρ_b √g (D − k d)^{5/2}

(W the mass rate, kg/s; ρ_b the bulk density, kg/m³; D the orifice diameter and d the sphere
diameter, m): the window of constant rate in a sampled discharge M_out(t), the straight line
fitted over it, the bulk density of a settled fill, and C and k from rates at several
orifices. Published ranges for circular orifices in flat-bottomed silos: C ≈ 0.55–0.65,
k ≈ 1.3–2.9 [Beverloo1961; Mankoc2007]. SI units."""

from __future__ import annotations

import math

import numpy as np

G = 9.81  # m/s²
#: the published ranges of C and k [Beverloo1961; Mankoc2007]
PUBLISHED = {"C": (0.55, 0.65), "k": (1.3, 2.9)}


def area_diameter(side: float) -> float:
    """Diameter of the circle of a square's area, 2 s/√π (side and result in the same
    unit): the orifice diameter of a square orifice in the fit (the free-fall-arch picture's
    rate, W ∝ area × √(g D), is set by the area first)."""
    return 2.0 * side / math.sqrt(math.pi)


def rate_window(t: np.ndarray, m_out: np.ndarray, m0: float, opens: float,
                skip: float) -> tuple[int, int]:
    """Indices [i0, i1) of the samples of the constant-rate window: from ``skip`` s after
    ``opens`` (the plug resting across the orifice drops out at once) until the hopper is a
    third full (``m_out`` ≥ 2/3 ``m0``; that sample excluded) or the last sample."""
    t, m_out = np.asarray(t, float), np.asarray(m_out, float)
    i0 = int(np.searchsorted(t, opens + skip, side="left"))
    full = np.flatnonzero(m_out >= 2.0 / 3.0 * m0)
    i1 = int(full[0]) if full.size else len(t)
    return i0, max(i1, i0)


def line_fit(t: np.ndarray, m: np.ndarray) -> dict:
    """Straight line m = W t + b through the samples (at least 6): the rate W, the rms
    residual over the range of m, and the rates of the first and last thirds with their
    relative difference (the drift; a rate falling as the hopper empties shows as a negative
    drift)."""
    t, m = np.asarray(t, float), np.asarray(m, float)
    if len(t) < 6:
        raise ValueError(f"{len(t)} samples in the window: at least 6 are needed")
    w, b = np.polyfit(t, m, 1)
    rms = float(np.sqrt(np.mean((m - (w * t + b)) ** 2)))
    third = len(t) // 3
    w1 = float(np.polyfit(t[:third], m[:third], 1)[0])
    w3 = float(np.polyfit(t[-third:], m[-third:], 1)[0])
    return {"rate": float(w), "rms_over_range": rms / float(np.ptp(m)), "rate_first": w1,
            "rate_last": w3, "drift": (w3 - w1) / float(w)}


def predicted(D: float, d: float, rho_b: float, c: float, k: float) -> float:
    """Beverloo's mass rate W = C ρ_b √g (D − k d)^{5/2} (kg/s) at orifice diameter ``D`` and
    sphere diameter ``d`` (m), bulk density ``rho_b`` (kg/m³), constants ``c``, ``k``."""
    return c * rho_b * math.sqrt(G) * max(D - k * d, 0.0) ** 2.5


def beverloo_fit(diameters, rates, rho_b: float, d: float) -> dict:
    """C and k of W = C ρ_b √g (D − k d)^{5/2} from rates W (kg/s) at orifice diameters D
    (m; at least 2), bulk density ``rho_b`` (kg/m³), sphere diameter ``d`` (m): a straight
    line through (D, (W/(ρ_b √g))^{2/5}) has slope C^{2/5} and intercept −C^{2/5} k d (least
    squares on the linearised form, each rate weighted alike). Also the rms relative misfit
    of W."""
    D = np.asarray(diameters, float)
    y = (np.asarray(rates, float) / (rho_b * math.sqrt(G))) ** 0.4
    slope, icpt = np.polyfit(D, y, 1)
    c, k = slope ** 2.5, -icpt / (slope * d)
    model = c * rho_b * math.sqrt(G) * np.clip(D - k * d, 0.0, None) ** 2.5
    misfit = float(np.sqrt(np.mean((model / np.asarray(rates, float) - 1.0) ** 2)))
    return {"C": float(c), "k": float(k), "rms_misfit": misfit}


def bulk_density(pos: np.ndarray, mass: np.ndarray, width: float, apex: float, d: float,
                 slope: float) -> float:
    """kg/m³ of the sphere centres (``pos``, m; ``mass``, kg) in the bulk of a settled fill
    of a square silo ``width`` wide whose pyramidal bottom rises at ``slope`` degrees from
    its apex at height ``apex``: 2 ``d`` from the side walls, 2 d above the bottom's highest
    point inside that, 2 d below the 99th percentile of the centres' heights; the mass of
    the centres in that region over its volume."""
    lo_xy, hi_xy = 2.0 * d, width - 2.0 * d
    bottom = apex + (0.5 * width - 2.0 * d) * math.tan(math.radians(slope))
    z0, z1 = bottom + 2.0 * d, float(np.percentile(pos[:, 2], 99)) - 2.0 * d
    inside = ((pos[:, 0] > lo_xy) & (pos[:, 0] < hi_xy) & (pos[:, 1] > lo_xy)
              & (pos[:, 1] < hi_xy) & (pos[:, 2] > z0) & (pos[:, 2] < z1))
    return float(mass[inside].sum() / ((hi_xy - lo_xy) ** 2 * (z1 - z0)))


def analyse(runs: list[dict], skip: float, d: float) -> dict:
    """Each run's window (:func:`rate_window`) and rate (:func:`line_fit`), written into the
    run (``times``, ``mass_out``, ``m0``, ``opens`` read; ``window``,
    ``window_fraction_out`` and the line's fields added), and the Beverloo fits over the
    runs with the area-equivalent diameter ``D_area`` and with the square's ``side`` (m),
    at the runs' mean ``rho_b`` and sphere diameter ``d`` (m). One orifice size: no fit."""
    for r in runs:
        i0, i1 = rate_window(r["times"], r["mass_out"], r["m0"], r["opens"], skip)
        r["window"] = [r["times"][i0], r["times"][i1 - 1]]
        r["window_fraction_out"] = r["mass_out"][i1 - 1] / r["m0"]
        r.update(line_fit(r["times"][i0:i1], r["mass_out"][i0:i1]))
    rho_b = float(np.mean([r["rho_b"] for r in runs]))
    if len({r["orifice_d"] for r in runs}) < 2:
        return {"rho_b": rho_b}
    w = [r["rate"] for r in runs]
    return {"rho_b": rho_b,
            "area": beverloo_fit([r["D_area"] for r in runs], w, rho_b, d),
            "side": beverloo_fit([r["side"] for r in runs], w, rho_b, d)}
