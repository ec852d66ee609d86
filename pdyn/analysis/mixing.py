"""How mixed the materials are: spheres per sample cell and material, and Lacey's mixing index
([Lacey1954]) from those counts — the thermo columns of a run of several materials
(``pdyn.io.thermo``). The same numbers on any rank count: every rank counts its owned spheres
per (cell, material) in integers, rank 0 adds the counts and computes the index from them.

**Sample cells**: cubes of edge :data:`CELL_DIAMETERS` diameters of the largest sphere
(the largest radius over all ranks, a maximum: exact), on a grid anchored at the box's lower
corner; a cell counts when a sphere's centre lies in it (occupied cells only).

**Index** of the first material (index 0) against all the others, with p its fraction of all
N spheres, x_c its fraction in cell c of n_c spheres, n̄ = N / (occupied cells):

    σ₀² = p (1 − p),   σ_R² = p (1 − p) / n̄,   σ² = Σ_c n_c (x_c − p)² / N,
    M = (σ₀² − σ²) / (σ₀² − σ_R²)

(Lacey's M with the sample variance weighted by each cell's spheres): 0 fully segregated
(every cell of one material: σ² = σ₀²), 1 randomly mixed (σ² = σ_R²). NaN when the index is
undefined (one material present, or every occupied cell holds a single sphere).
"""

from __future__ import annotations

import math

import numpy as np

#: the sample cell's edge, in diameters of the largest sphere
CELL_DIAMETERS = 4.0


def cell_counts(pos: np.ndarray, material: np.ndarray, lo, edge: float) -> dict:
    """Spheres per (cell ix, iy, iz, material) of the centres ``pos`` (m) with their
    ``material`` indices, cells of ``edge`` (m) from the corner ``lo``: a dict of int tuples
    to int counts."""
    if not len(pos):
        return {}
    cells = np.floor((np.asarray(pos) - np.asarray(lo, float)) / edge).astype(np.int64)
    keys = np.column_stack((cells, np.asarray(material, np.int64)))
    found, counts = np.unique(keys, axis=0, return_counts=True)
    return {tuple(int(v) for v in k): int(c) for k, c in zip(found, counts)}


def merged(parts: list[dict]) -> dict:
    """The per-cell counts of all ranks added (integers: any order gives the same)."""
    out: dict = {}
    for part in parts:
        for key, c in part.items():
            out[key] = out.get(key, 0) + c
    return out


def lacey(counts: dict) -> float:
    """Lacey's index of material 0 against the others from per (cell, material) counts
    (module docstring); NaN where undefined."""
    cells: dict = {}
    for (ix, iy, iz, m), c in counts.items():
        first, total = cells.get((ix, iy, iz), (0, 0))
        cells[(ix, iy, iz)] = (first + (c if m == 0 else 0), total + c)
    if not cells:
        return math.nan
    ordered = sorted(cells.items())
    first = np.array([v[0] for _, v in ordered], float)
    total = np.array([v[1] for _, v in ordered], float)
    n = float(total.sum())
    p = float(first.sum()) / n
    s0 = p * (1.0 - p)
    sr = s0 / (n / len(ordered))
    if s0 == 0.0 or s0 == sr:
        return math.nan
    s2 = math.fsum(total * (first / total - p) ** 2) / n
    return (s0 - s2) / (s0 - sr)
