"""Sphere–sphere geometry shared by contact detection and the contact forces: the exact overlap
predicate and a touching pair's normal and overlap.

One predicate, |x_j − x_i|² ≤ (r_i + r_j)² in squares (no square root), decides both whether
a broad phase reports a pair (``pdyn.broadphase``) and whether the contact loop evaluates it
(``pdyn.dynamics.contact``), so every structure yields ``brute``'s pairs bit for bit and the
forces see exactly the pairs the lists hold. The helpers take scalars where they run inside a
pair loop: the same helper taking arrays and two handles made the contact kernel several times
slower. Units: m.
"""

from __future__ import annotations

import math

from numba import njit

from ._jit import JIT


@njit(inline="always", **JIT)
def within(dx, dy, dz, s):
    """The squared distance d² = dx² + dy² + dz² (m²) of a separation (dx, dy, dz) and whether
    it is at most ``s`` (the sum of radii, m): the one overlap predicate, d² ≤ s²."""
    d2 = dx * dx + dy * dy + dz * dz
    return d2, d2 <= s * s


@njit(**JIT)
def overlaps(pos, rad, i, j):
    """Whether spheres ``i`` and ``j`` (rows of ``pos`` (N, 3) and ``rad`` (N,)) overlap or touch:
    :func:`within` of their separation and radii (infinite radii overlap everything)."""
    return within(pos[i, 0] - pos[j, 0], pos[i, 1] - pos[j, 1], pos[i, 2] - pos[j, 2],
                  rad[i] + rad[j])[1]


@njit(inline="always", **JIT)
def sphere_contact(dx, dy, dz, d2, s, gi, gj):
    """A touching sphere pair seen from i, given x_j − x_i = (dx, dy, dz), its square d2, the
    sum of radii s (m) and the ids gi, gj: the unit normal from i to j and the overlap δ.
    Coincident centres get a fixed axis, antisymmetric in the pair (+x for the lower id). One
    division, then products with its reciprocal (antisymmetric still: (−dx)/d = −(dx/d))."""
    dist = math.sqrt(d2)
    if dist > 0.0:
        inv = 1.0 / dist
        nx, ny, nz = dx * inv, dy * inv, dz * inv
    else:
        nx, ny, nz = (1.0 if gi < gj else -1.0), 0.0, 0.0
    return nx, ny, nz, max(s - dist, 0.0)
