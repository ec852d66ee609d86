"""The state of the hierarchical hash grid and the geometry of its modulo-hashed grids
([Schornbaum2009]; [mesapd-HashGrids]): size classes (levels), the modulo hash with
Schornbaum's mirror rule for negative coordinates, the wrap-around neighbour offset tables.

``hash_grid`` stores objects in this state; ``_hash_grid_pairs`` detects pairs in it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import FULL_STENCIL, HALF_STENCIL

#: The kernels' state, one record of arrays:
#: ``par`` float parameters (P_*), ``sc`` int scalars (S_*);
#: per grid (rows; grids ordered by cell size in ``order``): ``gf`` floats (G_CELL ...), ``gi``
#: ints (G_M ...), ``offs`` (27 wrap-around patterns x 27 neighbours) offset tables;
#: ``cells`` (int32: container of each cell or -1) and ``occ`` (each grid's occupied list of
#: containers), one region per grid; ``ct`` container records (C_*, one 64-byte cache line each)
#: and ``items`` (item blocks, ``unit`` = initial container capacity), two arenas with their
#: states; ``ob`` per handle (grid, container, slot, cell) or -1.
Hierarchy = namedtuple(
    "Hierarchy", "par sc gf gi order offs cells occ ct ct_st items items_st ob")

# par (float parameters)
P_C0, P_F, P_LOGF, P_DENSITY = range(4)
# sc (int scalars)
S_MAX_M, S_MOVED = range(2)
# gf columns (float per grid)
G_CELL, G_INV, G_LOW, G_RMAX = range(4)
# gi columns (int per grid)
G_M, G_BASE, G_OCCBASE, G_NOCC, G_COUNT, G_LEVEL, G_OCCCAP = range(7)
# container record columns (8 int64: one cache line; column 0 links a freed record)
C_OCC, C_START, C_COUNT, C_CAP, C_CELL, C_GRID, C_CLS = range(7)
CT_COLS = 8
# per-handle record columns
O_GRID, O_CONT, O_SLOT, O_CELL = range(4)

# round-off guards for the size class (see ``hash_grid``)
REL_MARGIN = 2.0**-30
ABS_MARGIN = 2.0**-40

# FULL_STENCIL is ordered (dz, dy, dx) lexicographically: index 13 is the cell itself and the
# entries after it are exactly HALF_STENCIL (the forward half).
HALF_FIRST = 14
assert np.array_equal(FULL_STENCIL[HALF_FIRST:], HALF_STENCIL)


@njit(**JIT)
def eff_size(pos, rad, h):
    """Size that chooses the grid of object ``h``: its diameter, enlarged by a relative 2^-30
    and 2^-40 max|x| against round-off."""
    m = abs(pos[h, 0])
    if abs(pos[h, 1]) > m:
        m = abs(pos[h, 1])
    if abs(pos[h, 2]) > m:
        m = abs(pos[h, 2])
    return 2.0 * rad[h] * (1.0 + REL_MARGIN) + ABS_MARGIN * m


@njit(**JIT)
def cell_of_level(c0, f, k):
    """Cell edge of hierarchy level ``k``: c0 * f**k ([Schornbaum2009] Eq. 3.3.1); the one
    place it is computed, so grid choice and grid cell sizes agree bit for bit."""
    return c0 * f ** float(k)


@njit(**JIT)
def level(s, c0, f, logf):
    """The level k with c_{k-1} <= s < c_k ([Schornbaum2009] Eq. 3.3.3)."""
    k = int(np.floor(np.log(s / c0) / logf)) + 1
    while cell_of_level(c0, f, k) <= s:
        k += 1
    while cell_of_level(c0, f, k - 1) > s:
        k -= 1
    return k


@njit(**JIT)
def axis_hash(x, inv, mask):
    """Modulo hash of one coordinate, correct for negative values ([Schornbaum2009] Code
    Snippet 11)."""
    if x < 0.0:
        return mask - (np.int64(-x * inv) & mask)
    return np.int64(x * inv) & mask


@njit(**JIT)
def cell_hash(pos, h, inv, m):
    """Cell of object ``h`` in a grid of 2^m cells per axis and inverse cell edge ``inv``."""
    mask = (np.int64(1) << m) - 1
    hx = axis_hash(pos[h, 0], inv, mask)
    hy = axis_hash(pos[h, 1], inv, mask)
    hz = axis_hash(pos[h, 2], inv, mask)
    return hx | (hy << m) | (hz << (2 * m))


@njit(**JIT)
def pattern(cell, m):
    """Which of the 27 offset patterns (inner / face / edge / corner) a cell uses."""
    mask = (np.int64(1) << m) - 1
    p = 0
    w = 1
    for a in range(3):
        x = (cell >> (a * m)) & mask
        if x == 0:
            s = 0
        elif x == mask:
            s = 2
        else:
            s = 1
        p += s * w
        w *= 3
    return p


def offset_table(n: int) -> np.ndarray:
    """(27 patterns, 27 neighbours) linear-index offsets of a hash grid with n cells per axis,
    including the wrap-around of outer cells ([Schornbaum2009] Sec. 3.1, Figs. 11-12)."""
    tab = np.empty((27, 27), np.int64)
    strides = (1, n, n * n)
    for p in range(27):
        state = (p % 3, (p // 3) % 3, p // 9)
        for j in range(27):
            off = 0
            for a in range(3):
                d = int(FULL_STENCIL[j, a])
                if state[a] == 0 and d == -1:
                    d = n - 1
                elif state[a] == 2 and d == 1:
                    d = -(n - 1)
                off += d * strides[a]
            tab[p, j] = off
    return tab
