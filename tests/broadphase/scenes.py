"""The one generator of seeded random and adversarial scenes for every broad-phase test, and the
naive numpy O(N²) overlap test that ``brute`` itself is checked against."""

from __future__ import annotations

import math

import numpy as np

FAMILIES = (
    "uniform", "dense", "polydisperse_1e3", "polydisperse_1e5", "huge_among_small",
    "negative_offset", "coords_1e6", "coords_1e9", "tiny_at_1e9", "on_faces", "cell_faces",
    "coincident", "clustered", "collisions", "many", "tiny_n",
)


def random_scene(seed: int, family: str | None = None):
    """Return (family, positions (N, 3), radii (N,)) for ``seed``; the family is chosen by the
    seed unless given."""
    rng = np.random.default_rng(seed)
    family = family or FAMILIES[seed % len(FAMILIES)]
    n = int(rng.integers(2, 300))
    if family == "uniform":
        pos = rng.uniform(0, 10, (n, 3))
        rad = rng.uniform(0.1, 0.6, n)
    elif family == "dense":
        pos = rng.uniform(0, 3, (n, 3))
        rad = rng.uniform(0.3, 0.5, n)
    elif family == "polydisperse_1e3":
        pos = rng.uniform(-20, 20, (n, 3))
        rad = 10 ** rng.uniform(-3, 0, n) * 3.0
    elif family == "polydisperse_1e5":
        pos = rng.uniform(-50, 50, (n, 3))
        rad = 10 ** rng.uniform(-5, 0, n) * 20.0
        rad[rng.integers(n)] = 20.0  # the full 1:1e5 span
    elif family == "huge_among_small":
        pos = rng.uniform(0, 40, (n, 3))
        rad = np.full(n, 0.5)
        rad[rng.integers(n)] = rng.uniform(10, 30)
    elif family == "negative_offset":
        offset = -10.0 ** rng.integers(3, 5)
        pos = rng.uniform(offset - 15, offset, (n, 3))
        rad = rng.uniform(0.1, 1.5, n)
    elif family == "coords_1e6":
        pos = rng.uniform(-1e6, 1e6, (n, 3))
        pos[: n // 2] = rng.uniform(5e5, 5e5 + 10, (n // 2, 3))
        rad = rng.uniform(0.5, 2.0, n)
    elif family == "coords_1e9":
        pos = rng.uniform(-1e9, 1e9, (n, 3))
        corner = rng.choice([-1.0, 1.0], 3) * 1e9 * rng.uniform(0.5, 1.0)
        pos[: n // 2] = corner + rng.uniform(0, 20, (n // 2, 3))
        rad = rng.uniform(0.5, 4.0, n)
    elif family == "tiny_at_1e9":
        # radii close to the spacing of doubles at 1e9 (1.2e-7): round-off decides overlaps
        corner = rng.choice([-1.0, 1.0], 3) * 1e9
        ulp = float(np.spacing(1e9))
        pos = corner + rng.integers(-6, 6, (n, 3)) * ulp * rng.choice([1, 2, 3])
        rad = rng.choice([0.6, 1.0, 1.5, 2.0, 5.0, 40.0], n) * ulp
    elif family == "on_faces":
        # centres on an integer lattice, neighbours touching exactly (distance == r_i + r_j)
        pos = _lattice(rng, n, 1.0, -3.0)
        rad = np.full(pos.shape[0], 0.5)
        rad[::3] = 0.25
        rad[1::3] = 0.75
    elif family == "cell_faces":
        # centres on the faces of grid cells c = 2 r0 sqrt(2) / 2^k (the hash grid's first
        # cell size for a first particle of radius r0), either sign, neighbours touching
        r0 = float(rng.choice([0.5, 0.3, 1.0]))
        step = 2.0 * r0 * math.sqrt(2.0) * float(rng.choice([0.5, 0.25, 1.0]))
        sign = float(rng.choice([-1.0, 1.0]))
        g = sign * _lattice(rng, n - 1, step, 0.0)
        pos = np.concatenate(([[sign * 1e3, 0, 0]], g))
        rad = np.concatenate(([r0], rng.choice([0.5, 0.25, 0.75], g.shape[0]) * step))
    elif family == "coincident":
        base = rng.uniform(0, 5, (max(n // 6, 1), 3))
        pos = base[rng.integers(0, base.shape[0], n)]
        rad = rng.uniform(0.05, 0.5, n)
    elif family == "clustered":
        centres = rng.uniform(-300, 300, (4, 3))
        pos = centres[rng.integers(0, 4, n)] + rng.normal(0, 1.0, (n, 3))
        rad = rng.uniform(0.05, 0.6, n) * rng.choice([1.0, 10.0], n, p=[0.95, 0.05])
    elif family == "collisions":
        # far-apart copies of one small cluster: the same hashes, no overlaps across copies
        m = max(n // 4, 2)
        local = rng.uniform(0, 3, (m, 3))
        shifts = rng.integers(-5, 5, (4, 3)) * 2.0 ** rng.integers(5, 12)
        pos = np.concatenate([local + s for s in shifts])
        rad = np.tile(rng.uniform(0.2, 0.6, m), 4)
    elif family == "many":
        # enough particles that grids grow and trees split deep
        n = int(rng.integers(600, 1400))
        box = (n / 0.3) ** (1 / 3)
        pos = rng.uniform(-box / 2, box / 2, (n, 3))
        rad = rng.uniform(0.45, 0.55, n)
    elif family == "tiny_n":
        n = int(rng.integers(0, 3))
        pos = rng.uniform(0, 1, (n, 3))
        rad = rng.uniform(0.1, 1.0, n)
    else:
        raise ValueError(family)
    return family, np.ascontiguousarray(pos, float), np.ascontiguousarray(rad, float)


def _lattice(rng, n: int, step: float, origin: float) -> np.ndarray:
    """``n`` distinct points of a cubic lattice of spacing ``step`` (random order)."""
    k = int(round(max(n, 1) ** (1 / 3))) + 1
    g = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3)
    return origin + g[rng.permutation(g.shape[0])[:n]].astype(float) * step


def naive_pairs(pos: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """Every pair i < j with |x_i − x_j|² ≤ (r_i + r_j)², lexicographically sorted: the
    definition, evaluated in numpy with the same floating-point operations as the shared
    predicate (infinite radii overlap every finite particle, never each other)."""
    i, j = np.triu_indices(pos.shape[0], 1)
    d = pos[i] - pos[j]
    s = rad[i] + rad[j]
    with np.errstate(invalid="ignore", over="ignore"):
        hit = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2] <= s * s
    hit &= ~(np.isinf(rad[i]) & np.isinf(rad[j]))
    return np.stack((i[hit], j[hit]), axis=1).astype(np.int64)
