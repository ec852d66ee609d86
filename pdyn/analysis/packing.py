"""Packing fraction and coordination of sphere packings: the exact volume of spheres inside
a slab (spherical segments), touching partners and rattler removal, as in the bulk
comparisons of [Silbert2010] and [AgnolinRoux2007]. Lengths in any one unit; the contact
search needs scipy."""

from __future__ import annotations

import math

import numpy as np


def slab_volume(zc, r, lo, hi):
    """Volume of each sphere (centre heights ``zc``, radius ``r``) between the planes
    z = ``lo`` and z = ``hi``: the spherical segment π (r² (b − a) − (b³ − a³)/3) with
    a, b the planes' heights over the centre clipped to ±r. Arrays broadcast (e.g. spheres ×
    slabs)."""
    a = np.clip(lo - zc, -r, r)
    b = np.clip(hi - zc, -r, r)
    return np.pi * (r * r * (b - a) - (b**3 - a**3) / 3.0)


def volume_between(z, r: float, z1: float, z2: float) -> float:
    """Total volume of spheres of radius ``r`` centred at heights ``z`` inside z1 ≤ z ≤ z2."""
    return float(np.sum(slab_volume(z, r, z1, z2)))


def contacts(pos: np.ndarray, r: float, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Touching partners per sphere (equal radii ``r``, centre distance ≤ 2r; periodic in x
    and y over ``width``; the floor at z = 0 counts as one) and the touching pairs."""
    from scipy.spatial import cKDTree

    x = pos.copy()
    x[:, :2] %= width
    tree = cKDTree(x, boxsize=[width, width, 4 * (x[:, 2].max() + 2 * r)])
    pairs = tree.query_pairs(2 * r, output_type="ndarray")
    count = np.bincount(pairs.ravel(), minlength=len(x))
    return count + (x[:, 2] <= r), pairs


def most_contacts(pos: np.ndarray, r: float) -> int:
    """The most sphere partners of any sphere (equal radii ``r``, no periodic axes)."""
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos).query_pairs(2 * r, output_type="ndarray")
    return int(np.bincount(pairs.ravel(), minlength=len(pos)).max()) if len(pairs) else 0


def without_rattlers(count: np.ndarray, pairs: np.ndarray, least: int = 4) -> np.ndarray:
    """Mask of the spheres left after removing, repeatedly, those with fewer than ``least``
    contacts (each removal takes a contact from its partners); ``least`` = 4 is the
    frictionless stability count d + 1 [AgnolinRoux2007]."""
    keep = np.ones(len(count), bool)
    c = count.copy()
    while True:
        drop = keep & (c < least)
        if not drop.any():
            return keep
        keep &= ~drop
        for a, b in ((0, 1), (1, 0)):
            hit = drop[pairs[:, a]] & keep[pairs[:, b]]
            np.subtract.at(c, pairs[hit, b], 1)


def bulk_measures(pos: np.ndarray, r: float, width: float, margin_d: float, mu: float) -> dict:
    """The bulk of a poured bed of spheres of radius ``r`` in a periodic square ``width``
    wide with a floor at z = 0: centres more than ``margin_d`` diameters above the floor and
    below the free surface (the 99th percentile of centre heights). φ is the volume of the
    spheres inside that slab over its volume; Z the mean touching partners (floor included)
    of the spheres centred in it; Z* the same on the backbone left by
    :func:`without_rattlers` (for μ = 0 only, NaN otherwise: frictional spheres are stable
    with fewer contacts); x4 the fraction with fewer than 4 contacts."""
    d = 2 * r
    z = pos[:, 2]
    z1, z2 = margin_d * d, float(np.percentile(z, 99)) - margin_d * d
    count, pairs = contacts(pos, r, width)
    keep = without_rattlers(count, pairs)
    inside = (z >= z1) & (z <= z2)
    backbone = np.bincount(pairs[keep[pairs[:, 0]] & keep[pairs[:, 1]]].ravel(),
                           minlength=len(z)) + (z <= r)
    return {"phi": volume_between(z, r, z1, z2) / (width * width * (z2 - z1)),
            "z": float(count[inside].mean()),
            "z_star": float(backbone[inside & keep].mean()) if mu == 0 else math.nan,
            "x4": float((count[inside] < 4).mean()), "bulk_spheres": int(inside.sum()),
            "slab_d": [z1 / d, z2 / d], "max_contacts": int(count.max())}
