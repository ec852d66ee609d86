"""Seeded random and adversarial scenes for the broad-phase contract tests."""

from __future__ import annotations

import numpy as np

FAMILIES = (
    "uniform", "polydisperse_1e3", "polydisperse_1e5", "huge_among_small", "negative_offset",
    "coords_1e6", "coords_1e9", "on_faces", "coincident", "clustered", "tiny_n", "dense",
)


def random_scene(seed: int, family: str | None = None):
    """Return (family, positions (N, 3), radii (N,)) for ``seed``; family chosen by seed."""
    rng = np.random.default_rng(seed)
    family = family or FAMILIES[seed % len(FAMILIES)]
    n = int(rng.integers(2, 300))
    if family == "uniform":
        pos = rng.uniform(0, 10, (n, 3))
        rad = rng.uniform(0.1, 0.6, n)
    elif family == "polydisperse_1e3":
        pos = rng.uniform(-20, 20, (n, 3))
        rad = 10 ** rng.uniform(-3, 0, n) * 3.0
    elif family == "polydisperse_1e5":
        pos = rng.uniform(-50, 50, (n, 3))
        rad = 10 ** rng.uniform(-5, 0, n) * 20.0
    elif family == "huge_among_small":
        pos = rng.uniform(0, 40, (n, 3))
        rad = np.full(n, 0.5)
        rad[rng.integers(n)] = 15.0
    elif family == "negative_offset":
        pos = rng.uniform(-1e3 - 10, -1e3, (n, 3))
        rad = rng.uniform(0.2, 1.0, n)
    elif family == "coords_1e6":
        pos = rng.uniform(-1e6, 1e6, (n, 3))
        pos[: n // 2] = rng.uniform(5e5, 5e5 + 10, (n // 2, 3))
        rad = rng.uniform(0.5, 2.0, n)
    elif family == "coords_1e9":
        pos = rng.uniform(-1e9, 1e9, (n, 3))
        pos[: n // 2] = -7e8 + rng.uniform(0, 30, (n // 2, 3))
        rad = rng.uniform(1.0, 5.0, n)
    elif family == "on_faces":
        # centres on an integer lattice, touching exactly (distance == r_i + r_j)
        k = int(round(n ** (1 / 3))) + 1
        g = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3)
        pos = g[:n].astype(float) * 1.0 - 3.0
        rad = np.full(pos.shape[0], 0.5)
        rad[::3] = 0.25
        rad[1::3] = 0.75
    elif family == "coincident":
        base = rng.uniform(0, 5, (max(n // 4, 1), 3))
        pos = base[rng.integers(0, base.shape[0], n)]
        rad = rng.uniform(0.05, 0.5, n)
    elif family == "clustered":
        centres = rng.uniform(-100, 100, (3, 3))
        pos = centres[rng.integers(0, 3, n)] + rng.normal(0, 1.0, (n, 3))
        rad = rng.uniform(0.1, 0.5, n)
    elif family == "tiny_n":
        n = int(rng.integers(0, 3))
        pos = rng.uniform(0, 1, (n, 3))
        rad = rng.uniform(0.1, 1.0, n)
    elif family == "dense":
        pos = rng.uniform(0, 3, (n, 3))
        rad = rng.uniform(0.3, 0.5, n)
    else:
        raise ValueError(family)
    return family, np.ascontiguousarray(pos, float), np.ascontiguousarray(rad, float)
