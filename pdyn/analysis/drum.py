"""A rotating drum's free surface and flow regime, for the ``drum`` scene (radius 0.1 m, axis
x, turning at Ω about +x; SI units): the surface profile of a cross-section, the dynamic
angle of repose θ (a line over the middle 60 % of the chord), the surface's shape (flat when
rolling, S-shaped when cascading), the fractions of spheres in flight and moving with the
drum, and the regime these read as, beside the Froude ranges Fr = Ω² R / g of
[Mellmann2001]'s classification."""

from __future__ import annotations

import math

import numpy as np

DRUM_RADIUS, BIN = 0.1, 0.008  # the drum scene's radius, the profile's bin width (m)


def bin_centres() -> np.ndarray:
    """y (m) of the centres of the profile's bins of width ``BIN`` across the drum."""
    edges = np.arange(-DRUM_RADIUS, DRUM_RADIUS + 1e-9, BIN)
    return 0.5 * (edges[:-1] + edges[1:])


def surface_profile(pos: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """The top of the bed (z + r of the highest sphere, m) per ``BIN`` of y over the drum's
    width; NaN where a bin holds fewer than 3 spheres."""
    edges = np.arange(-DRUM_RADIUS, DRUM_RADIUS + 1e-9, BIN)
    k = np.digitize(pos[:, 1], edges) - 1
    top = np.full(len(edges) - 1, np.nan)
    for b in range(len(top)):  # 25 bins
        m = k == b
        if m.sum() >= 3:
            top[b] = (pos[m, 2] + radius[m]).max()
    return top


def _middle(y: np.ndarray, part: float) -> np.ndarray:
    """Mask of the middle ``part`` of the span of ``y``."""
    w = y.max() - y.min()
    return (y >= y.min() + 0.5 * (1 - part) * w) & (y <= y.max() - 0.5 * (1 - part) * w)


def angle(top: np.ndarray) -> float:
    """θ (degrees): a line fitted to the middle 60 % of the profile's chord."""
    y, ok = bin_centres(), np.isfinite(top)
    keep = _middle(y[ok], 0.6)
    return float(np.degrees(np.arctan(abs(np.polyfit(y[ok][keep], top[ok][keep], 1)[0]))))


def shape(top: np.ndarray, d: float) -> dict:
    """The mean profile's shape: the local slope angle (degrees) of a cubic fitted over the
    middle 80 % of the chord at its upper end, its middle and its lower end; S = upper −
    lower (an S-shaped surface is steeper at its top than at its foot; a flat one has S ≈ 0);
    and the RMS deviation from a straight line there (in diameters ``d``)."""
    y, ok = bin_centres(), np.isfinite(top)
    keep = _middle(y[ok], 0.8)
    yy, zz = y[ok][keep], top[ok][keep]
    cubic = np.polynomial.Polynomial.fit(yy, zz, 3)
    at = np.array([yy.min(), 0.5 * (yy.min() + yy.max()), yy.max()])
    local = np.degrees(np.arctan(np.abs(cubic.deriv()(at))))
    if cubic(at[0]) > cubic(at[2]):  # the upper end first
        local = local[::-1]
    lower, middle, upper = (float(a) for a in local)
    line = np.polyfit(yy, zz, 1)
    rms = float(np.sqrt(np.mean((zz - np.polyval(line, yy)) ** 2)) / d)
    return {"upper_deg": upper, "middle_deg": middle, "lower_deg": lower,
            "s_deg": upper - lower, "rms_d": rms}


def flight_and_rotation(pos: np.ndarray, vel: np.ndarray, radius: np.ndarray, length: float,
                        omega: float, bed=None) -> tuple[float, float, float]:
    """Three regime markers of one sample: the fraction of spheres in flight (no other sphere
    — a glued one included — and not the drum within d/2 of its surface: periodic over
    ``length`` along x), the fraction moving with the drum (velocity within 0.1 Ω R of the
    rigid rotation's Ω × r; the drum turns about +x at ``omega`` rad/s), and the median over
    the spheres of their angular velocity about the axis over Ω (1 when the bed below the
    flowing layer turns with the drum; less when it slips on the drum's smooth wall).
    ``bed``: the spheres counted (a mask; None: all; the others are the rough drum's glued
    layer)."""
    bed = np.ones(len(pos), bool) if bed is None else np.asarray(bed)
    x = pos[:, 0]
    dx = x[:, None] - x[None, :]
    dx -= length * np.round(dx / length)
    gap = np.sqrt(dx**2 + (pos[:, None, 1] - pos[None, :, 1]) ** 2
                  + (pos[:, None, 2] - pos[None, :, 2]) ** 2) - (radius[:, None] + radius[None, :])
    np.fill_diagonal(gap, np.inf)
    gap, pos, vel, radius = gap[bed], pos[bed], vel[bed], radius[bed]
    wall = DRUM_RADIUS - np.hypot(pos[:, 1], pos[:, 2]) - radius
    d = 2.0 * float(np.mean(radius))
    flying = (gap.min(axis=1) > 0.5 * d) & (wall > 0.5 * d)
    rigid = omega * np.column_stack((-pos[:, 2], pos[:, 1]))  # Ω x̂ × (y, z)
    moving = np.hypot(*(vel[:, 1:] - rigid).T) < 0.1 * omega * DRUM_RADIUS
    rho2 = np.maximum(pos[:, 1] ** 2 + pos[:, 2] ** 2, 1e-12)
    turn = (pos[:, 1] * vel[:, 2] - pos[:, 2] * vel[:, 1]) / rho2 / omega
    return float(flying.mean()), float(moving.mean()), float(np.median(turn))


#: the reading of the regime from the measured markers (in this order): centrifuging when at
#: least 90 % of the spheres move with the drum; cataracting when at least 1 % are in flight;
#: cascading when the mean surface departs from a straight line by 0.25 d (RMS) or more, or
#: bends into an S, its upper end 10° or more steeper than its foot (S ≥ 10°: a surface
#: flatter at its top, where it meets a rough wall, is not the cascading S); else rolling
#: (a flat surface)
REGIME_LIMITS = {"with_drum": 0.9, "flying": 0.01, "rms_d": 0.25, "s_deg": 10.0}


def profile_shape(r: dict) -> dict:
    """:func:`shape` of a run's stored mean profile (``profile_top_m``, None for no value;
    ``d_m``)."""
    top = np.array([np.nan if v is None else v for v in r["profile_top_m"]])
    return shape(top, r["d_m"])


def regime(r: dict) -> str:
    """The regime a run's markers (``with_drum``, ``flying`` and its stored mean profile)
    read as (:data:`REGIME_LIMITS`)."""
    sh = profile_shape(r)
    if r["with_drum"] >= REGIME_LIMITS["with_drum"]:
        return "centrifuging"
    if r["flying"] >= REGIME_LIMITS["flying"]:
        return "cataracting"
    if sh["rms_d"] >= REGIME_LIMITS["rms_d"] or sh["s_deg"] >= REGIME_LIMITS["s_deg"]:
        return "cascading"
    return "rolling"


#: the Froude numbers of each regime by [Mellmann2001]'s classification (the ranges overlap:
#: fill, friction and D/d move the boundaries)
MELLMANN = (("slumping", 1e-5, 1e-3), ("rolling", 1e-4, 1e-2), ("cascading", 1e-3, 1e-1),
            ("cataracting", 0.1, 1.0), ("centrifuging", 1.0, math.inf))


def expected(froude: float) -> str:
    """The regimes [Mellmann2001]'s ranges allow at ``froude``."""
    return " or ".join(name for name, lo, hi in MELLMANN if lo <= froude <= hi) or "-"
