"""Space-filling-curve codes (Z-curve / Morton, Hilbert) and the Z-curve reordering of particle
memory.

``morton3`` interleaves three 21-bit integers into a 63-bit key ([Morton1966]; [Ihmsen2011] Sec.
4.3); it is the one Morton code of pdyn (index sorts, octree insertion order, block order).
``hilbert3`` is the key along the 3-D Hilbert curve ([Skilling2004]): consecutive keys are
face neighbours, so a run of blocks along it is more compact than a Z-curve run (one of the
two block orders of ``pdyn.domain.BlockGrid.assign``).
``zorder(pos, handles, cell)`` sorts handles along the Z-curve of cells of edge ``cell``, so
particles close in space sit close in memory: the reordering Ihmsen et al. apply every ~100
steps (Sec. 4.5, Table 3) to keep neighbour loops cache-friendly. The simulation applies it
through ``ParticleStore.permute`` every ``reorder_every`` steps; it changes no result (forces
are summed in partner-id order), only memory locality.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._jit import JIT
from .cell_index import clamped_cell

BITS = 21
LEVELS = 1 << BITS


@njit(**JIT)
def spread_bits(v):
    """Move bit k of a 21-bit integer to bit 3k."""
    v &= 0x1FFFFF
    v = (v | (v << 32)) & 0x1F00000000FFFF
    v = (v | (v << 16)) & 0x1F0000FF0000FF
    v = (v | (v << 8)) & 0x100F00F00F00F00F
    v = (v | (v << 4)) & 0x10C30C30C30C30C3
    v = (v | (v << 2)) & 0x1249249249249249
    return v


@njit(**JIT)
def compact_bits(v):
    """Inverse of :func:`spread_bits`: gather every third bit into the low 21 bits."""
    v &= 0x1249249249249249
    v = (v ^ (v >> 2)) & 0x10C30C30C30C30C3
    v = (v ^ (v >> 4)) & 0x100F00F00F00F00F
    v = (v ^ (v >> 8)) & 0x1F0000FF0000FF
    v = (v ^ (v >> 16)) & 0x1F00000000FFFF
    v = (v ^ (v >> 32)) & 0x1FFFFF
    return v


@njit(**JIT)
def morton3(ix, iy, iz):
    """63-bit Z-curve key of the cell (ix, iy, iz), each in [0, 2^21)."""
    return spread_bits(ix) | (spread_bits(iy) << 1) | (spread_bits(iz) << 2)


@njit(**JIT)
def _hilbert_undo(x0, xi, q):
    """One step of Skilling's inverse undo for axis i at bit ``q``: invert the low bits of x0
    if bit q of x_i is set, else exchange the low bits of x0 and x_i."""
    p = q - 1
    if xi & q:
        return x0 ^ p, xi
    t = (x0 ^ xi) & p
    return x0 ^ t, xi ^ t


@njit(**JIT)
def hilbert3(ix, iy, iz, bits):
    """Key of the cell (ix, iy, iz), each in [0, 2^bits), along the 3-D Hilbert curve of
    2^bits cells per axis (bits <= 21): Skilling's axes-to-transpose ([Skilling2004]), then the
    transposed bits read out as one integer."""
    x0, x1, x2 = ix, iy, iz
    q = 1 << (bits - 1) if bits > 0 else 0
    while q > 1:  # inverse undo of the excess work
        x0, _ = _hilbert_undo(x0, x0, q)
        x0, x1 = _hilbert_undo(x0, x1, q)
        x0, x2 = _hilbert_undo(x0, x2, q)
        q >>= 1
    x1 ^= x0  # Gray encode
    x2 ^= x1
    t = 0
    q = 1 << (bits - 1) if bits > 0 else 0
    while q > 1:
        if x2 & q:
            t ^= q - 1
        q >>= 1
    x0 ^= t
    x1 ^= t
    x2 ^= t
    key = 0
    for b in range(bits - 1, -1, -1):
        key = (key << 3) | (((x0 >> b) & 1) << 2) | (((x1 >> b) & 1) << 1) | ((x2 >> b) & 1)
    return key


@njit(**JIT)
def _zkeys(pos, handles, lo, inv):
    keys = np.empty(handles.shape[0], np.int64)
    for t in range(handles.shape[0]):
        h = handles[t]
        keys[t] = morton3(clamped_cell(pos[h, 0], lo[0], inv, LEVELS),
                          clamped_cell(pos[h, 1], lo[1], inv, LEVELS),
                          clamped_cell(pos[h, 2], lo[2], inv, LEVELS))
    return keys


def zorder(pos: np.ndarray, handles: np.ndarray, cell: float) -> np.ndarray:
    """``handles`` sorted along the Z-curve of cells of edge ``cell`` (m) over their bounding
    box (cells are enlarged if the box would need more than 2^21 per axis)."""
    handles = np.ascontiguousarray(handles, np.int64)
    if handles.size < 2:
        return handles.copy()
    p = pos[handles]
    lo = p.min(axis=0)
    extent = float((p.max(axis=0) - lo).max())
    cell = max(float(cell), extent / (LEVELS - 1), np.finfo(float).tiny)
    keys = _zkeys(pos, handles, lo, 1.0 / cell)
    return handles[np.argsort(keys, kind="stable")]
