"""Triangulated test surfaces: a height field over a square (:func:`grid_surface`), the side
of a cylinder of flat faces (:func:`tube_surface`) and a closed box (:func:`box_surface`),
as (vertices, triangles) arrays that ``pdyn.mesh.Mesh.from_arrays`` takes; for tests,
benchmarks and scenes.

Units: m.
"""

from __future__ import annotations

import numpy as np


def grid_surface(n: int, size: float, lift=None, jitter: float = 0.0,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of a height field over [−size, size]² (m): n × n
    squares, each cut along the same diagonal (an interior vertex is shared by 6 triangles),
    z = ``lift(x, y)`` (default 0); ``jitter`` moves interior vertices in-plane by up to that
    fraction of a square (an irregular triangulation). For tests, benchmarks and scenes."""
    s = np.linspace(-size, size, n + 1)
    x, y = np.meshgrid(s, s, indexing="xy")
    if jitter:
        rng = np.random.default_rng(seed)
        inner = np.zeros_like(x, bool)
        inner[1:-1, 1:-1] = True
        step = 2.0 * size / n
        x = x + inner * rng.uniform(-jitter, jitter, x.shape) * step
        y = y + inner * rng.uniform(-jitter, jitter, y.shape) * step
    z = np.zeros_like(x) if lift is None else np.broadcast_to(lift(x, y), x.shape)
    v = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    a = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    b, c, d = a + 1, a + n + 1, a + n + 2
    tri = np.stack((np.column_stack((a, b, d)), np.column_stack((a, d, c))), axis=1)
    return v, tri.reshape(-1, 3).astype(np.int64)


def tube_surface(n: int, radius: float, length: float,
                 along: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of the side of a cylinder about the y axis through
    the origin (m): ``n`` flat faces around (a face centred at the bottom, −z, its corners at
    angles (k + ½) 2π/n from −z), ``along`` rings of them over y ∈ [−length/2, length/2], each
    face two triangles. A drum of triangles, for tests, benchmarks and scenes."""
    phi = (np.arange(n) + 0.5) * 2.0 * np.pi / n
    y = np.linspace(-0.5 * length, 0.5 * length, along + 1)
    ring = np.column_stack((radius * np.sin(phi), -radius * np.cos(phi)))
    v = np.column_stack((np.tile(ring[:, 0], along + 1), np.repeat(y, n),
                         np.tile(ring[:, 1], along + 1)))
    k = np.arange(n)
    a = (np.arange(along)[:, None] * n + k[None, :]).ravel()
    b = (np.arange(along)[:, None] * n + ((k + 1) % n)[None, :]).ravel()
    tri = np.stack((np.column_stack((a, b, b + n)), np.column_stack((a, b + n, a + n))), axis=1)
    return v, tri.reshape(-1, 3).astype(np.int64)


def box_surface(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (8, 3), triangles (12, 3)) of the closed box [lo, hi] (m): each face two
    triangles wound counter-clockwise seen from outside (a piston's plate, a block)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    corner = np.array([[(k >> a) & 1 for a in range(3)] for k in range(8)])  # bit a: axis a
    v = np.where(corner == 1, hi, lo)
    quads = ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2),
             (1, 3, 7, 5))  # −z, +z, −y, +y, −x, +x, each counter-clockwise from outside
    tri = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return v, np.array(tri, np.int64)
