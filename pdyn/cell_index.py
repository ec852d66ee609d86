"""Positions to integer cells: the clamped cell of a coordinate in a bounded row of cells, and
Teschner's prime XOR hash of a cell of the unbounded lattice ([Teschner2003]).

Every grid in pdyn (linked cells, index sorts, the octree's finest grid, the Z-curve reorder,
the block decomposition) finds a particle's cell with :func:`clamped_cell`; spatial and compact
hashing and the scene generator's placement grid hash cells with :func:`teschner_hash`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._jit import JIT

#: Teschner's primes p1, p2, p3 ([Teschner2003]; [Ihmsen2011] Eq. 3)
P1, P2, P3 = np.uint64(73856093), np.uint64(19349663), np.uint64(83492791)


@njit(**JIT)
def clamped_cell(x, lo, inv, n):
    """Index of the cell holding coordinate ``x`` in a row of ``n`` cells of edge ``1 / inv``
    starting at ``lo``, clamped to [0, n - 1] (NaN goes to 0).

    The clamp happens in floating point, before the conversion to an integer, so coordinates far
    outside the row cannot overflow. Clamping is monotone and never puts two adjacent cells more
    than one apart, so a grid searched with a ±1 stencil stays exact (only more candidates)."""
    v = (x - lo) * inv
    if not v >= 0.0:
        return 0
    if v >= n:
        return n - 1
    k = int(v)
    return k if k < n else n - 1


@njit(**JIT)
def teschner_hash(kx, ky, kz):
    """``kx·p1 xor ky·p2 xor kz·p3`` of int64 cell coordinates, as uint64 with 64-bit
    wrap-around ([Teschner2003]); callers reduce it modulo their table size or mask it."""
    return ((np.uint64(np.int64(kx)) * P1) ^ (np.uint64(np.int64(ky)) * P2)
            ^ (np.uint64(np.int64(kz)) * P3))
