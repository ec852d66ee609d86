"""Hierarchical hash grid (HHG): a hierarchy of hashed uniform grids, one per size class, with
O(1) insert/remove and an incremental update (Schornbaum 2009; waLBerla mesa_pd ``HashGrids``).

What it does. Every finite particle lives in exactly one cell of exactly one grid: the grid
whose cell edge ``c_k = c_0 f^k`` satisfies ``c_{k-1} <= size < c_k`` (size = AABB edge =
diameter; Schornbaum 2009, Sec. 3.3, Eq. 3.3.1-3.3.3). ``c_0`` = first object's size * sqrt(f)
(Eq. 3.3.2); grids are created only when an object needs them and kept sorted by cell size
(Alg. 3). Each grid has ``n^3`` cells, ``n`` a power of two, and maps the infinite lattice onto
them with geometric modulo hashing: multiplication by the inverse cell size, a bit mask, and
Schornbaum's mirror rule for negative coordinates (Sec. 3.2, Code Snippet 11). Each occupied
cell owns a container (initial capacity 16, doubling; mesa_pd ``cellVectorSize``) from a pooled
item buffer; every object remembers (grid, container, slot), so removal is an O(1) swap-remove
(Sec. 3.1, Code Snippets 4-5); an emptied cell is reset and its container returned to a pool
(keeping its item block, as a cleared vector keeps its capacity), and each grid keeps a list
of its occupied cells, also with O(1) swap-removal (Sec. 3.4-3.5). A grid doubles its cells
per axis when cells/objects would drop below ``minimal_grid_density`` (8; Sec. 3.4, mesa_pd
``minimalGridDensity``) and never shrinks (Sec. 3.5).

Detection (Alg. 4, Sec. 3.6): within each occupied cell all pairs, against 13 of the 26
neighbour cells (half stencil, precomputed offset tables for the 27 inner/face/edge/corner
wrap-around patterns, Sec. 3.1, Figs. 11-12; Koch 2020, Sec. 2.6), and each object against the
27-cell neighbourhood of its cell in every grid with larger cells. Every candidate is passed
through the exact sphere test (:func:`overlaps`), which also discards hash collisions, so
``candidate_pairs()`` returns every overlapping pair exactly once; ``stats()["tests"]`` counts
the pair tests performed (the "candidates" a structure without the filter would report).
Two implementation choices beyond the sources, neither changing the result: (1) detection
first copies the residents' centres and radii cell by cell, each grid's occupied cells
radix-sorted by cell index, into contiguous arrays (one O(N) pass; the tests and stencil
look-ups then walk memory nearly sequentially: ~2x faster on Koch's more_polydisperse scene and
on Schornbaum's scene at 10^5 objects);
(2) in the larger grids, neighbour layers farther than the object's radius plus the largest
radius ever stored in that grid (a per-grid bound reset when the grid is cleared) are skipped,
and a grid with fewer occupied cells than cells to visit is scanned directly (Koch's very
polydisperse scene: one huge sphere in its own grid); (3) insert and remove process a batch
in groups of 64 handles whose cache lines are fetched ahead of use (group and
software-pipelined prefetching, Chen et al. 2004), and container records are one 64-byte
cache line, so that a random-handle operation among 10^6 residents costs ~1.6x one among
10^3 (all in cache), not 5x (``benchmarks/hash_grid_ops.py``).
Below ``activation_threshold`` (32) residents plain all-pairs is used; once exceeded the grids
are built and stay (Sec. 3.7). Update (Sec. 2.6, Alg. 2): ``update="incremental"`` re-hashes
every object and moves it only if its cell (or size class) changed; ``update="rebuild"``
clears all cells and reinserts everything (the comparison of Sec. 4.3).

Layout: everything lives in numpy arrays mutated by njit kernels: per-grid parameter rows,
one pooled cell array (int32 container id or -1) and occupied-list array with a region per
grid, container records, a pooled item buffer with per-capacity free lists, and per-handle
(grid, container, slot, cell) records. A mutating kernel stops before touching anything when a
pool is full or a grid must be created or doubled; the class services that rare event
(amortised O(1)) and resumes the kernel where it stopped.

Exactness with round-off: an object's size used for the grid choice is enlarged by a relative
2^-30 plus 2^-40 * max|coordinate| so that two overlapping objects always hash to the same or
adjacent lattice cells even at 1e9 coordinates, and so that ``|x| / c < 2^47`` (no int64
overflow in the hash). Walls (infinite radius) are kept by the base class.

When to choose it: use ``hash_grid`` when radii span more than a factor of ~4 or the scene is
clustered/inhomogeneous (Koch 2020, Sec. 4.1.7-4.1.8, Tables 6-7); for monodisperse,
homogeneous scenes ``linked_cells`` is usually faster (Koch Table 1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import (FULL_STENCIL, HALF_STENCIL, aligned_full, overlaps, prefetch,
                       run_pair_kernel)
from .base import BroadPhase, BroadPhaseError, _brute_pairs

# round-off guards for the size class (see module docstring)
REL_MARGIN = 2.0**-30
ABS_MARGIN = 2.0**-40

# g_f columns (float per grid)
G_CELL, G_INV, G_LOW, G_RMAX = 0, 1, 2, 3
# g_i columns (int per grid)
G_M, G_BASE, G_OCCBASE, G_NOCC, G_COUNT, G_LEVEL, G_OCCCAP = 0, 1, 2, 3, 4, 5, 6
# container record columns (8 int64: one 64-byte cache line per record; column 7 unused)
C_START, C_COUNT, C_CAP, C_CELL, C_GRID, C_OCC, C_CLS = 0, 1, 2, 3, 4, 5, 6
CT_COLS = 8
# per-handle record columns
O_GRID, O_CONT, O_SLOT, O_CELL = 0, 1, 2, 3
# scalar slots (S_TOUCH: prefetch checksum, a sink that keeps the prefetching loads)
S_FREE_TOP, S_HWM, S_ITEMS_TOP, S_MOVED, S_TOUCH = 0, 1, 2, 3, 4
# event codes returned by the mutating kernels
EV_OK, EV_CONTAINERS, EV_ITEMS, EV_GROW_GRID, EV_NEW_GRID, EV_FIRST = 0, 1, 2, 3, 4, 5

# FULL_STENCIL is ordered (dz, dy, dx) lexicographically: index 13 is the cell itself and the
# entries after it are exactly HALF_STENCIL (the forward half).
HALF_FIRST = 14
assert np.array_equal(FULL_STENCIL[HALF_FIRST:], HALF_STENCIL)
N_CLASSES = 48


# ------------------------------------------------------------------ small helpers
@njit(**JIT)
def _eff_size(pos, rad, h):
    m = abs(pos[h, 0])
    if abs(pos[h, 1]) > m:
        m = abs(pos[h, 1])
    if abs(pos[h, 2]) > m:
        m = abs(pos[h, 2])
    return 2.0 * rad[h] * (1.0 + REL_MARGIN) + ABS_MARGIN * m


@njit(**JIT)
def _cell_of_level(c0, f, k):
    """Cell edge of hierarchy level ``k``: c0 * f**k (Schornbaum Eq. 3.3.1); the one place it
    is computed, so grid choice and grid cell sizes agree bit for bit."""
    return c0 * f ** float(k)


@njit(**JIT)
def _level(s, c0, f, logf):
    """The level k with c_{k-1} <= s < c_k (Eq. 3.3.3)."""
    k = int(np.floor(np.log(s / c0) / logf)) + 1
    while _cell_of_level(c0, f, k) <= s:
        k += 1
    while _cell_of_level(c0, f, k - 1) > s:
        k -= 1
    return k


@njit(**JIT)
def _axis_hash(x, inv, mask):
    """Modulo hash of one coordinate, correct for negative values (Schornbaum Code Snippet 11)."""
    if x < 0.0:
        return mask - (np.int64(-x * inv) & mask)
    return np.int64(x * inv) & mask


@njit(**JIT)
def _hash(pos, h, inv, m):
    mask = (np.int64(1) << m) - 1
    hx = _axis_hash(pos[h, 0], inv, mask)
    hy = _axis_hash(pos[h, 1], inv, mask)
    hz = _axis_hash(pos[h, 2], inv, mask)
    return hx | (hy << m) | (hz << (2 * m))


@njit(**JIT)
def _pattern(cell, m):
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
    including the wrap-around of outer cells (Schornbaum 2009, Sec. 3.1, Figs. 11-12)."""
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


# ------------------------------------------------------------------ container pool
@njit(**JIT)
def _free_block(items, free_head, start, cls):
    items[start] = free_head[cls]
    free_head[cls] = start


@njit(**JIT)
def _block_available(items, free_head, sc, cap, cls):
    return free_head[cls] >= 0 or sc[S_ITEMS_TOP] + cap <= items.shape[0]


@njit(**JIT)
def _alloc_block(items, free_head, sc, cap, cls):
    s = free_head[cls]
    if s >= 0:
        free_head[cls] = items[s]
        return s
    s = sc[S_ITEMS_TOP]
    sc[S_ITEMS_TOP] = s + cap
    return s


@njit(**JIT)
def _place(h, g, cell, ob, g_i, cells, occ, ct, ct_free, items, free_head, sc, cap0):
    """Store handle h in cell ``cell`` of grid g: O(1) amortised. Returns (event, arg); on a
    non-zero event nothing was modified."""
    idx = g_i[g, G_BASE] + cell
    cont = np.int64(cells[idx])
    if cont < 0:
        if sc[S_FREE_TOP] > 0:  # a pooled container, with the item block it kept
            sc[S_FREE_TOP] -= 1
            cont = ct_free[sc[S_FREE_TOP]]
        else:  # a new container with a new block of the initial capacity
            if sc[S_HWM] >= ct.shape[0]:
                return EV_CONTAINERS, 0
            if not _block_available(items, free_head, sc, cap0, 0):
                return EV_ITEMS, cap0
            cont = sc[S_HWM]
            sc[S_HWM] += 1
            ct[cont, C_START] = _alloc_block(items, free_head, sc, cap0, 0)
            ct[cont, C_CAP] = cap0
            ct[cont, C_CLS] = 0
        nocc = g_i[g, G_NOCC]
        ct[cont, C_COUNT] = 0
        ct[cont, C_CELL] = cell
        ct[cont, C_GRID] = g
        ct[cont, C_OCC] = nocc
        occ[g_i[g, G_OCCBASE] + nocc] = cont
        g_i[g, G_NOCC] = nocc + 1
        cells[idx] = cont
    else:
        cnt = ct[cont, C_COUNT]
        cap = ct[cont, C_CAP]
        if cnt == cap:  # container full: move to a block twice the size
            cls = ct[cont, C_CLS] + 1
            if not _block_available(items, free_head, sc, 2 * cap, cls):
                return EV_ITEMS, 2 * cap
            new = _alloc_block(items, free_head, sc, 2 * cap, cls)
            old = ct[cont, C_START]
            for a in range(cnt):
                items[new + a] = items[old + a]
            _free_block(items, free_head, old, cls - 1)
            ct[cont, C_START] = new
            ct[cont, C_CAP] = 2 * cap
            ct[cont, C_CLS] = cls
    slot = ct[cont, C_COUNT]
    items[ct[cont, C_START] + slot] = h
    ct[cont, C_COUNT] = slot + 1
    ob[h, O_GRID] = g
    ob[h, O_CONT] = cont
    ob[h, O_SLOT] = slot
    ob[h, O_CELL] = cell
    g_i[g, G_COUNT] += 1
    return EV_OK, 0


@njit(**JIT)
def _take(h, ob, g_i, cells, occ, ct, ct_free, items, sc):
    """Swap-remove handle h from its cell; when the cell empties, reset it and return its
    container, keeping its item block (as a cleared vector keeps its capacity), to the pool.
    O(1); the items are not touched when h is its container's last object."""
    g = ob[h, O_GRID]
    cont = ob[h, O_CONT]
    slot = ob[h, O_SLOT]
    cnt = ct[cont, C_COUNT] - 1
    if slot != cnt:
        start = ct[cont, C_START]
        last = items[start + cnt]
        items[start + slot] = last
        ob[last, O_SLOT] = slot
    ct[cont, C_COUNT] = cnt
    if cnt == 0:
        cells[g_i[g, G_BASE] + ct[cont, C_CELL]] = -1
        p = ct[cont, C_OCC]
        base = g_i[g, G_OCCBASE]
        n = g_i[g, G_NOCC] - 1
        moved = occ[base + n]
        occ[base + p] = moved
        ct[moved, C_OCC] = p
        g_i[g, G_NOCC] = n
        ct_free[sc[S_FREE_TOP]] = cont
        sc[S_FREE_TOP] += 1
    g_i[g, G_COUNT] -= 1
    ob[h, O_GRID] = -1
    ob[h, O_CONT] = -1
    ob[h, O_SLOT] = -1
    ob[h, O_CELL] = -1


@njit(**JIT)
def _find_grid(s, order, ngrids, g_f):
    for q in range(ngrids):
        g = order[q]
        if g_f[g, G_LOW] <= s and s < g_f[g, G_CELL]:
            return g
    return -1


@njit(**JIT)
def _insert_one(h, pos, rad, ob, g_f, g_i, order, ngrids, cells, occ, ct, ct_free, items,
                free_head, sc, c0, f, logf, density, max_m, cap0):
    """Schornbaum Alg. 3 + Sec. 3.4 for one handle. Returns (event, arg)."""
    if c0 <= 0.0:
        return EV_FIRST, 0
    s = _eff_size(pos, rad, h)
    g = _find_grid(s, order, ngrids, g_f)
    if g < 0:
        return EV_NEW_GRID, _level(s, c0, f, logf)
    m = g_i[g, G_M]
    if m < max_m and float(g_i[g, G_COUNT] + 1) * density > float(np.int64(1) << (3 * m)):
        return EV_GROW_GRID, g
    cell = _hash(pos, h, g_f[g, G_INV], m)
    ev, arg = _place(h, g, cell, ob, g_i, cells, occ, ct, ct_free, items, free_head, sc, cap0)
    if ev == EV_OK and rad[h] > g_f[g, G_RMAX]:
        g_f[g, G_RMAX] = rad[h]  # upper bound of the grid's radii (reset when it is cleared)
    return ev, arg


# Prefetching (Chen, Ailamaki, Gibbons & Mowry 2004, "Improving hash join performance through
# prefetching"): a batch is processed in groups of PREFETCH_GROUP handles. Insert uses group
# prefetching: before a group is modified, read-only passes load every cache line its
# operations will touch, one level of indirection per pass, so that within a pass the cache
# misses overlap instead of forming a dependent chain per handle (the passes return a checksum
# so that the loads are kept). Remove uses software-pipelined prefetching: while group k is
# removed, non-blocking prefetches fetch the lines of groups k+1..k+3, one level of
# indirection per group of distance, so that the misses also overlap with the removal work;
# the fourth level (the record of the object moved into a vacated slot) is fetched for group k
# just before it is removed. Every line a remove touches is thus prefetched; without that
# fourth level (needed by 14 % of the removes in benchmarks/hash_grid_ops.py) a remove among
# 10^6 residents took ~20 ns longer (A/B in one run, 2026-11-21).
PREFETCH_GROUP = 64


@njit(**JIT)
def _touch_place(handles, s, e, pos, rad, ob, g_f, g_i, order, ngrids, cells, ct, items):
    """Prefetch, for ``handles[s:e]``, the lines ``_place`` reads and writes: the handle's
    record, its target cell, the cell's container record and the item slot it fills."""
    acc = 0
    idx = np.empty(e - s, np.int64)
    for t in range(s, e):
        h = handles[t]
        acc += ob[h, O_GRID]
        idx[t - s] = -1
        g = _find_grid(_eff_size(pos, rad, h), order, ngrids, g_f)
        if g >= 0:
            idx[t - s] = g_i[g, G_BASE] + _hash(pos, h, g_f[g, G_INV], g_i[g, G_M])
            acc += cells[idx[t - s]]
    for t in range(s, e):
        if idx[t - s] >= 0 and cells[idx[t - s]] >= 0:
            acc += ct[cells[idx[t - s]], C_START]
    for t in range(s, e):
        if idx[t - s] >= 0 and cells[idx[t - s]] >= 0:
            c = cells[idx[t - s]]
            acc += items[min(ct[c, C_START] + ct[c, C_COUNT], items.shape[0] - 1)]
    return acc


@njit(**JIT)
def _insert_kernel(handles, t0, pos, rad, ob, g_f, g_i, order, ngrids, cells, occ, ct, ct_free,
                   items, free_head, sc, c0, f, logf, density, max_m, cap0):
    n = handles.shape[0]
    t = t0
    while t < n:
        e = min(t + PREFETCH_GROUP, n)
        if ngrids > 0:
            sc[S_TOUCH] += _touch_place(handles, t, e, pos, rad, ob, g_f, g_i, order, ngrids,
                                        cells, ct, items)
        for u in range(t, e):
            ev, arg = _insert_one(handles[u], pos, rad, ob, g_f, g_i, order, ngrids, cells, occ,
                                  ct, ct_free, items, free_head, sc, c0, f, logf, density, max_m,
                                  cap0)
            if ev != EV_OK:
                return u, ev, arg
        t = e
    return n, EV_OK, 0


@njit(**JIT)
def _prefetch_take_ob(handles, s, e, ob):
    """Remove pipeline, stage 1 (three groups ahead): the handles' records."""
    for t in range(s, e):
        prefetch(ob, handles[t] * 4)


@njit(**JIT)
def _prefetch_take_ct(handles, s, e, ob, g_i, cells, ct):
    """Stage 2 (two groups ahead; records arrived): container records and cells."""
    for t in range(s, e):
        h = handles[t]
        c = ob[h, O_CONT]
        if c >= 0:
            prefetch(ct, c * CT_COLS)
            prefetch(cells, g_i[ob[h, O_GRID], G_BASE] + ob[h, O_CELL])


@njit(**JIT)
def _prefetch_take_rest(handles, s, e, ob, g_i, occ, ct, items, pending, empties):
    """Stage 3 (one group ahead; container records arrived): the last item if h is not its
    container's last object; if h empties its cell, its occupied-list entry and the
    container that will move into it: the one at the list's tail when h's turn comes, i.e.
    below the ``pending[g]`` cells of grid g that the handles before it will empty
    (``empties[t]`` = the grid whose list handle t shortens, or -1)."""
    for t in range(s, e):
        h = handles[t]
        c = ob[h, O_CONT]
        empties[t] = -1
        if c < 0:
            continue
        if ob[h, O_SLOT] != ct[c, C_COUNT] - 1:
            prefetch(items, ct[c, C_START] + ct[c, C_COUNT] - 1)
        elif ct[c, C_COUNT] == 1:
            g = ob[h, O_GRID]
            base = g_i[g, G_OCCBASE]
            prefetch(occ, base + ct[c, C_OCC])
            tail = g_i[g, G_NOCC] - 1 - pending[g]
            if tail >= 0:
                prefetch(ct, occ[base + tail] * CT_COLS)
            pending[g] += 1
            empties[t] = g


@njit(**JIT)
def _prefetch_take_last(handles, s, e, ob, ct, items):
    """Stage 4 (the group about to be removed; last items arrived): the record of the
    object that fills h's slot, when h is not its container's last object."""
    for t in range(s, e):
        h = handles[t]
        c = ob[h, O_CONT]
        if c >= 0 and ob[h, O_SLOT] != ct[c, C_COUNT] - 1:
            prefetch(ob, items[ct[c, C_START] + ct[c, C_COUNT] - 1] * 4)


@njit(**JIT)
def _remove_kernel(handles, ob, g_i, cells, occ, ct, ct_free, items, sc):
    """Remove a batch, software-pipelined: while group k is removed, the cache lines of
    groups k+1..k+3 are being fetched, one level of indirection per group of distance, and
    those of group k's last level just before."""
    n = handles.shape[0]
    G = PREFETCH_GROUP
    pending = np.zeros(g_i.shape[0], np.int64)
    empties = np.empty(n, np.int64)
    _prefetch_take_ob(handles, 0, min(3 * G, n), ob)
    _prefetch_take_ct(handles, 0, min(2 * G, n), ob, g_i, cells, ct)
    _prefetch_take_rest(handles, 0, min(G, n), ob, g_i, occ, ct, items, pending, empties)
    for s in range(0, n, G):
        e = min(s + G, n)
        _prefetch_take_ob(handles, min(s + 3 * G, n), min(s + 4 * G, n), ob)
        _prefetch_take_ct(handles, min(s + 2 * G, n), min(s + 3 * G, n), ob, g_i, cells, ct)
        _prefetch_take_rest(handles, min(s + G, n), min(s + 2 * G, n), ob, g_i, occ, ct, items,
                            pending, empties)
        _prefetch_take_last(handles, s, e, ob, ct, items)
        for t in range(s, e):
            h = handles[t]
            if ob[h, O_GRID] >= 0:
                _take(h, ob, g_i, cells, occ, ct, ct_free, items, sc)
            if empties[t] >= 0:
                pending[empties[t]] -= 1


@njit(**JIT)
def _update_kernel(handles, t0, pos, rad, ob, g_f, g_i, order, ngrids, cells, occ, ct, ct_free,
                   items, free_head, sc, c0, f, logf, density, max_m, cap0):
    """Schornbaum Alg. 2: re-hash each object, move it only if its cell or grid changed."""
    for t in range(t0, handles.shape[0]):
        h = handles[t]
        g = ob[h, O_GRID]
        if g >= 0:
            s = _eff_size(pos, rad, h)
            if g_f[g, G_LOW] <= s and s < g_f[g, G_CELL]:  # grid still suitably sized
                if rad[h] > g_f[g, G_RMAX]:
                    g_f[g, G_RMAX] = rad[h]
                cell = _hash(pos, h, g_f[g, G_INV], g_i[g, G_M])
                if cell == ob[h, O_CELL]:  # per-handle copy: no random access here
                    continue
                _take(h, ob, g_i, cells, occ, ct, ct_free, items, sc)
                sc[S_MOVED] += 1
                ev, arg = _place(h, g, cell, ob, g_i, cells, occ, ct, ct_free, items,
                                 free_head, sc, cap0)
                if ev != EV_OK:
                    return t, ev, arg
                continue
            _take(h, ob, g_i, cells, occ, ct, ct_free, items, sc)
            sc[S_MOVED] += 1
        # not placed (new grid, or resumed after an event): full insertion
        ev, arg = _insert_one(h, pos, rad, ob, g_f, g_i, order, ngrids, cells, occ, ct, ct_free,
                              items, free_head, sc, c0, f, logf, density, max_m, cap0)
        if ev != EV_OK:
            return t, ev, arg
    return handles.shape[0], EV_OK, 0


@njit(**JIT)
def _grid_handles(g, g_i, occ, ct, items):
    out = np.empty(g_i[g, G_COUNT], np.int64)
    k = 0
    base = g_i[g, G_OCCBASE]
    for p in range(g_i[g, G_NOCC]):
        cont = occ[base + p]
        s = ct[cont, C_START]
        for a in range(s, s + ct[cont, C_COUNT]):
            out[k] = items[a]
            k += 1
    return out


@njit(**JIT)
def _clear_grids(which, ob, g_i, cells, occ, ct, ct_free, items, sc):
    """Empty every grid in ``which`` (containers pooled, cells reset, objects unplaced)."""
    for w in range(which.shape[0]):
        g = which[w]
        base = g_i[g, G_OCCBASE]
        for p in range(g_i[g, G_NOCC]):
            cont = occ[base + p]
            s = ct[cont, C_START]
            for a in range(s, s + ct[cont, C_COUNT]):
                h = items[a]
                ob[h, O_GRID] = -1
                ob[h, O_CONT] = -1
                ob[h, O_SLOT] = -1
                ob[h, O_CELL] = -1
            cells[g_i[g, G_BASE] + ct[cont, C_CELL]] = -1
            ct[cont, C_COUNT] = 0
            ct_free[sc[S_FREE_TOP]] = cont
            sc[S_FREE_TOP] += 1
        g_i[g, G_NOCC] = 0
        g_i[g, G_COUNT] = 0


@njit(**JIT)
def _reset_pool(free_head, sc):
    """After clearing every grid: forget all blocks and container ids (clear-and-reinsert)."""
    for c in range(free_head.shape[0]):
        free_head[c] = -1
    sc[S_ITEMS_TOP] = 0
    sc[S_FREE_TOP] = 0
    sc[S_HWM] = 0


# ------------------------------------------------------------------ detection (Alg. 4)
@njit(**JIT)
def _radix_sort(vals, keys, nbits):
    """Sort ``vals`` by non-negative int ``keys`` (< 2**nbits) in place: LSD radix, 11 bits
    per pass, O(n) per pass."""
    n = vals.shape[0]
    rb = 11
    nb = 1 << rb
    cnt = np.empty(nb + 1, np.int64)
    tv = np.empty(n, np.int64)
    tk = np.empty(n, np.int64)
    shift = 0
    while shift < nbits:
        cnt[:] = 0
        for t in range(n):
            cnt[((keys[t] >> shift) & (nb - 1)) + 1] += 1
        for r in range(nb):
            cnt[r + 1] += cnt[r]
        for t in range(n):
            b = (keys[t] >> shift) & (nb - 1)
            tv[cnt[b]] = vals[t]
            tk[cnt[b]] = keys[t]
            cnt[b] += 1
        vals[:] = tv
        keys[:] = tk
        shift += rb


@njit(**JIT)
def _snapshot(order, ngrids, g_i, occ, ct, members, ob, pos, rad, meta, gsnap, socc, spos, srad,
              shnd):
    """Copy every resident's (handle, centre, radius) into contiguous arrays, grid by grid,
    each grid's occupied cells in cell-index order (``socc``, radix-sorted) and each cell's
    objects together; meta[container] = (offset, count), gsnap[q] = first offset of the q-th
    grid. One O(N) pass that makes the detection's memory accesses nearly sequential; the
    copied values are bit-identical to the particle arrays."""
    o = 0
    po = 0
    for q in range(ngrids):
        G = order[q]
        gsnap[q] = o
        obase = g_i[G, G_OCCBASE]
        nocc = g_i[G, G_NOCC]
        conts = occ[obase: obase + nocc].copy()
        keys = np.empty(nocc, np.int64)
        for p in range(nocc):
            keys[p] = ct[conts[p], C_CELL]
        _radix_sort(conts, keys, 3 * g_i[G, G_M])
        for p in range(nocc):
            cont = conts[p]
            socc[po] = cont
            po += 1
            c = ct[cont, C_COUNT]
            meta[cont, 0] = o
            meta[cont, 1] = c
            o += c
    gsnap[ngrids] = o
    for t in range(members.shape[0]):  # sequential reads of the particle arrays
        h = members[t]
        d = meta[ob[h, O_CONT], 0] + ob[h, O_SLOT]
        shnd[d] = h
        spos[d, 0] = pos[h, 0]
        spos[d, 1] = pos[h, 1]
        spos[d, 2] = pos[h, 2]
        srad[d] = rad[h]


@njit(**JIT)
def _hhg_pairs(out, tests, spos, srad, shnd, gsnap, order, ngrids, g_f, g_i, g_offs, cells,
               socc, ct, meta):
    """Schornbaum Alg. 4 over the snapshot: per occupied cell all pairs inside and against the
    13-cell half stencil; then every object against each larger grid (see _query_grid)."""
    k = 0
    nt = 0
    gocc = 0
    for qi in range(ngrids):
        G = order[qi]
        if g_i[G, G_COUNT] == 0:
            continue
        m = g_i[G, G_M]
        base = g_i[G, G_BASE]
        for p in range(gocc, gocc + g_i[G, G_NOCC]):
            cont = socc[p]
            s = meta[cont, 0]
            e = s + meta[cont, 1]
            cell = ct[cont, C_CELL]
            # all pairs within the cell
            for a in range(s, e):
                for b in range(a + 1, e):
                    nt += 1
                    if overlaps(spos, srad, a, b):
                        if k < out.shape[0]:
                            out[k, 0] = shnd[a]
                            out[k, 1] = shnd[b]
                        k += 1
            # 13 of 26 neighbours (half stencil with wrap-around offsets)
            pat = _pattern(cell, m)
            for jj in range(HALF_FIRST, 27):
                cont2 = cells[base + cell + g_offs[G, pat, jj]]
                if cont2 < 0:
                    continue
                s2 = meta[cont2, 0]
                e2 = s2 + meta[cont2, 1]
                for a in range(s, e):
                    for b in range(s2, e2):
                        nt += 1
                        if overlaps(spos, srad, a, b):
                            if k < out.shape[0]:
                                out[k, 0] = shnd[a]
                                out[k, 1] = shnd[b]
                            k += 1
        # each object of G against its neighbourhood in every grid with larger cells
        # (grid by grid, so that one larger grid's cells stay in cache)
        for qj in range(qi + 1, ngrids):
            H = order[qj]
            if g_i[H, G_COUNT] == 0:
                continue
            for a in range(gsnap[qi], gsnap[qi + 1]):
                k, nt = _query_grid(out, k, nt, spos, srad, shnd, gsnap[qj], gsnap[qj + 1], a,
                                    H, g_f, g_i, g_offs, cells, meta)
        gocc += g_i[G, G_NOCC]
    tests[0] = nt
    return k


@njit(**JIT)
def _axis_range(x, inv, reach):
    """Which neighbour layers (-1 / +1) along one axis can hold a partner of an object at
    ``x`` reaching ``reach`` cell widths: (lo, hi) in {-1, 0} x {0, 1}, conservative."""
    a = x * inv
    if x < 0.0:
        idx = -np.floor(-a) - 1.0  # the cell Schornbaum's negative hashing assigns
    else:
        idx = np.floor(a)
    lo = -1 if a - idx < reach else 0
    hi = 1 if idx + 1.0 - a < reach else 0
    return lo, hi


@njit(inline="always", **JIT)  # inlined: saves the call and array refcounting per query
def _query_grid(out, k, nt, spos, srad, shnd, h_lo, h_hi, a, H, g_f, g_i, g_offs, cells, meta):
    """Snapshot object a against grid H (larger cells): the cells of its 27-neighbourhood that
    can hold an overlapping partner (layers beyond reach r_a + max radius of H are skipped:
    same pairs, fewer lookups), or all of H's objects [h_lo, h_hi) when there are fewer
    occupied cells than cells to visit. Every object of H is tested at most once."""
    mH = g_i[H, G_M]
    invH = g_f[H, G_INV]
    # reach in cell widths, enlarged for round-off in x * inv at |x| up to 2^47 cells
    big = max(abs(spos[a, 0]), abs(spos[a, 1]), abs(spos[a, 2])) * invH + 4.0
    reach = (srad[a] + g_f[H, G_RMAX]) * invH * (1.0 + 2.0**-30) + big * 2.0**-45
    lx, hx = _axis_range(spos[a, 0], invH, reach)
    ly, hy = _axis_range(spos[a, 1], invH, reach)
    lz, hz = _axis_range(spos[a, 2], invH, reach)
    ncell = (hx - lx + 1) * (hy - ly + 1) * (hz - lz + 1)
    if g_i[H, G_NOCC] <= ncell:  # sparse grid: every object of H once
        for b in range(h_lo, h_hi):
            nt += 1
            if overlaps(spos, srad, a, b):
                if k < out.shape[0]:
                    out[k, 0] = shnd[a]
                    out[k, 1] = shnd[b]
                k += 1
        return k, nt
    baseH = g_i[H, G_BASE]
    cH = _hash(spos, a, invH, mH)
    patH = _pattern(cH, mH)
    for dz in range(lz, hz + 1):
        for dy in range(ly, hy + 1):
            for dx in range(lx, hx + 1):
                cont2 = cells[baseH + cH + g_offs[H, patH, 13 + dx + 3 * dy + 9 * dz]]
                if cont2 < 0:
                    continue
                s2 = meta[cont2, 0]
                for b in range(s2, s2 + meta[cont2, 1]):
                    nt += 1
                    if overlaps(spos, srad, a, b):
                        if k < out.shape[0]:
                            out[k, 0] = shnd[a]
                            out[k, 1] = shnd[b]
                        k += 1
    return k, nt


# ------------------------------------------------------------------ the structure
def _power_of_two(v) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        return False
    return v > 0 and (v & (v - 1)) == 0


class HashGrid(BroadPhase):
    """Hierarchical hash grid (Schornbaum 2009; mesa_pd ``HashGrids``): use it when radii span
    more than a factor of ~4 or the scene is clustered; O(1) insert/remove, incremental update.

    Parameters: ``hierarchy_factor`` f > 1 (2), ``initial_cells_per_axis`` power of two >= 4
    (16), ``minimal_grid_density`` > 0 cells per object before a grid doubles (8),
    ``update`` "incremental" (Alg. 2) or "rebuild" (clear and reinsert),
    ``activation_threshold`` all-pairs up to this many residents (32), ``cell_capacity`` initial
    container capacity (16), ``max_cells_per_axis`` power of two growth limit (512).
    """

    name = "hash_grid"
    incremental = True

    def __init__(self, hierarchy_factor: float = 2.0, initial_cells_per_axis: int = 16,
                 minimal_grid_density: float = 8.0, update: str = "incremental",
                 activation_threshold: int = 32, cell_capacity: int = 16,
                 max_cells_per_axis: int = 512, **params):
        super().__init__(**params)
        f = hierarchy_factor
        if isinstance(f, bool) or not isinstance(f, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(f) and f > 1):
            raise BroadPhaseError(f"hierarchy_factor = {f!r}: must be a finite number > 1")
        if not (_power_of_two(initial_cells_per_axis) and initial_cells_per_axis >= 4):
            raise BroadPhaseError(
                f"initial_cells_per_axis = {initial_cells_per_axis!r}: must be a power of two >= 4"
            )
        d = minimal_grid_density
        if isinstance(d, bool) or not isinstance(d, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(d) and d > 0):
            raise BroadPhaseError(f"minimal_grid_density = {d!r}: must be a finite number > 0")
        if update not in ("incremental", "rebuild"):
            raise BroadPhaseError(f"update = {update!r}: must be 'incremental' or 'rebuild'")
        if isinstance(activation_threshold, bool) or not isinstance(
                activation_threshold, (int, np.integer)) or activation_threshold < 0:
            raise BroadPhaseError(
                f"activation_threshold = {activation_threshold!r}: must be an integer >= 0"
            )
        if isinstance(cell_capacity, bool) or not isinstance(cell_capacity, (int, np.integer)) \
                or cell_capacity < 1:
            raise BroadPhaseError(f"cell_capacity = {cell_capacity!r}: must be an integer >= 1")
        if not (_power_of_two(max_cells_per_axis) and max_cells_per_axis >= initial_cells_per_axis):
            raise BroadPhaseError(
                f"max_cells_per_axis = {max_cells_per_axis!r}: must be a power of two >= "
                f"initial_cells_per_axis ({initial_cells_per_axis})"
            )
        self.hierarchy_factor = float(f)
        self.initial_cells_per_axis = int(initial_cells_per_axis)
        self.minimal_grid_density = float(d)
        self.update_strategy = update
        self.activation_threshold = int(activation_threshold)
        self.cell_capacity = int(cell_capacity)
        self.max_cells_per_axis = int(max_cells_per_axis)
        self._m0 = self.initial_cells_per_axis.bit_length() - 1
        self._max_m = self.max_cells_per_axis.bit_length() - 1
        self._reset()

    # -------------------------------------------------------------- state
    def _reset(self):
        self._active = False
        self._c0 = 0.0
        self._ngrids = 0
        self._order = np.zeros(0, np.int64)
        self._g_f = np.zeros((4, 4))
        self._g_i = np.zeros((4, 7), np.int64)
        self._g_offs = np.zeros((4, 27, 27), np.int64)
        self._cells = np.zeros(0, np.int32)
        self._occ = np.zeros(0, np.int64)
        self._ct = aligned_full((64, CT_COLS), 0, np.int64)
        self._ct_free = np.zeros(64, np.int64)
        self._items = aligned_full(64 * self.cell_capacity, 0, np.int64)
        self._free_head = np.full(N_CLASSES, -1, np.int64)
        self._sc = np.zeros(5, np.int64)
        self._ob = aligned_full((0, 4), -1, np.int64)
        self._tests = np.zeros(1, np.int64)
        # detection snapshot (sequential copies of the residents, rebuilt per query)
        self._spos = np.zeros((0, 3))
        self._srad = np.zeros(0)
        self._shnd = np.zeros(0, np.int64)
        self._meta = np.zeros((0, 2), np.int64)
        self._last_moved = 0
        self._grow_events = 0

    def _ensure_handles(self):
        cap = self._pos.shape[0]
        if cap > self._ob.shape[0]:
            ob = aligned_full((max(cap, 2 * self._ob.shape[0]), 4), -1, np.int64)
            ob[: self._ob.shape[0]] = self._ob
            self._ob = ob

    def _pool(self):
        return (self._ob, self._g_i, self._cells, self._occ, self._ct, self._ct_free,
                self._items, self._sc)

    def _args(self):
        return (self._pos, self._rad, self._ob, self._g_f, self._g_i, self._order, self._ngrids,
                self._cells, self._occ, self._ct, self._ct_free, self._items, self._free_head,
                self._sc, self._c0, self.hierarchy_factor, math.log(self.hierarchy_factor),
                self.minimal_grid_density, self._max_m, self.cell_capacity)

    # -------------------------------------------------------------- events (rare, O(log N))
    def _run(self, kernel, handles):
        """Call a mutating kernel, servicing its (rare) requests for more space or grids."""
        t = 0
        n = handles.shape[0]
        while t < n:
            t, ev, arg = kernel(handles, t, *self._args())
            if ev == EV_OK:
                break
            self._event(ev, arg, int(handles[t]))

    def _event(self, ev, arg, h):
        if ev == EV_CONTAINERS:
            new = 2 * self._ct.shape[0]
            ct = aligned_full((new, CT_COLS), 0, np.int64)
            ct[: self._ct.shape[0]] = self._ct
            free = np.zeros(new, np.int64)
            free[: self._ct_free.shape[0]] = self._ct_free
            self._ct, self._ct_free = ct, free
        elif ev == EV_ITEMS:
            new = max(2 * self._items.shape[0], int(self._sc[S_ITEMS_TOP]) + int(arg))
            items = aligned_full(new, 0, np.int64)
            items[: self._items.shape[0]] = self._items
            self._items = items
        elif ev == EV_FIRST:
            # Schornbaum Eq. 3.3.2: first grid's cell = first object's size * sqrt(f)
            self._c0 = float(2.0 * self._rad[h] * math.sqrt(self.hierarchy_factor))
            if not (self._c0 > 0 and math.isfinite(self._c0)):
                raise BroadPhaseError(f"radii[{h}] = {self._rad[h]!r}: size not representable")
        elif ev == EV_NEW_GRID:
            if np.any(self._g_i[: self._ngrids, G_LEVEL] == arg):  # only with non-finite sizes
                raise BroadPhaseError(f"radii[{h}] = {self._rad[h]!r}: size not representable")
            self._new_grid(int(arg))
        elif ev == EV_GROW_GRID:
            self._grow_grid(int(arg))
        else:  # pragma: no cover
            raise RuntimeError(f"hash_grid: unknown event {ev}")

    def _occ_cap(self, m):
        n3 = 1 << (3 * m)
        if m >= self._max_m or self.minimal_grid_density < 1:
            return n3
        return min(n3, int(n3 // self.minimal_grid_density) + 1)

    def _repool(self, fresh):
        """Lay out every grid's cell array and occupied list in the pooled arrays; grids in
        ``fresh`` get new empty regions (their objects were removed), the others are copied."""
        ng = self._ngrids
        old_cells, old_occ, gi = self._cells, self._occ, self._g_i
        sizes = [1 << (3 * int(gi[g, G_M])) for g in range(ng)]
        occcaps = [self._occ_cap(int(gi[g, G_M])) for g in range(ng)]
        cells = aligned_full(sum(sizes), -1, np.int32)
        occ = aligned_full(sum(occcaps), 0, np.int64)
        cb = ob = 0
        for g in range(ng):
            if g not in fresh:
                ocb, oob = int(gi[g, G_BASE]), int(gi[g, G_OCCBASE])
                cells[cb: cb + sizes[g]] = old_cells[ocb: ocb + sizes[g]]
                nocc = int(gi[g, G_NOCC])
                occ[ob: ob + nocc] = old_occ[oob: oob + nocc]
            gi[g, G_BASE], gi[g, G_OCCBASE], gi[g, G_OCCCAP] = cb, ob, occcaps[g]
            cb += sizes[g]
            ob += occcaps[g]
        self._cells, self._occ = cells, occ

    def _new_grid(self, level):
        """Create the grid of ``level`` and insert it in cell-size order (Alg. 3)."""
        g = self._ngrids
        if g == self._g_f.shape[0]:
            self._g_f = np.concatenate((self._g_f, np.zeros_like(self._g_f)))
            self._g_i = np.concatenate((self._g_i, np.zeros_like(self._g_i)))
            self._g_offs = np.concatenate((self._g_offs, np.zeros_like(self._g_offs)))
        f = self.hierarchy_factor
        cell = float(_cell_of_level(self._c0, f, level))
        self._g_f[g] = (cell, 1.0 / cell, float(_cell_of_level(self._c0, f, level - 1)), 0.0)
        self._g_i[g] = 0
        self._g_i[g, G_M] = self._m0
        self._g_i[g, G_LEVEL] = level
        self._g_offs[g] = offset_table(1 << self._m0)
        self._ngrids += 1
        self._order = np.argsort(self._g_i[: self._ngrids, G_LEVEL], kind="stable").astype(np.int64)
        self._repool({g})

    def _grow_grid(self, g):
        """Double the cells per axis of grid g and rehash its objects (Sec. 3.4)."""
        hs = _grid_handles(g, self._g_i, self._occ, self._ct, self._items)
        _clear_grids(np.array([g], np.int64), *self._pool())
        self._g_f[g, G_RMAX] = 0.0
        self._g_i[g, G_M] += 1
        self._g_offs[g] = offset_table(1 << int(self._g_i[g, G_M]))
        self._repool({g})
        self._grow_events += 1
        if hs.size:
            self._run(_insert_kernel, hs)

    # -------------------------------------------------------------- protocol
    def _activate(self):
        """Bulk build (Sec. 3.7 switch or ``build``): insert everything, then, for large N,
        clear and reinsert in (grid, cell) order so that container records and item blocks
        are laid out in cell order (memory locality for detection; same structure)."""
        self._active = True
        hs = self.members.copy()
        self._run(_insert_kernel, hs)
        if hs.size >= 4096:
            rank = np.empty(self._ngrids, np.int64)
            rank[self._order] = np.arange(self._ngrids)
            key = (rank[self._ob[hs, O_GRID]] << 40) | self._ob[hs, O_CELL]
            hs = hs[np.argsort(key, kind="stable")]
            _clear_grids(self._order.copy(), *self._pool())
            _reset_pool(self._free_head, self._sc)
            self._run(_insert_kernel, hs)

    def _build(self, handles):
        self._reset()
        self._ensure_handles()
        if self._n > self.activation_threshold:
            self._activate()

    def _insert(self, handles):
        self._ensure_handles()
        if self._active:
            self._run(_insert_kernel, handles)
        elif self._n > self.activation_threshold:  # Sec. 3.7: switch once, irrevocably
            self._activate()

    def _remove(self, handles):
        self._ensure_handles()
        if self._active:
            _remove_kernel(handles, *self._pool())

    def _update(self):
        self._ensure_handles()
        if not self._active or self._n == 0:
            self._last_moved = 0
            return
        if self.update_strategy == "rebuild":
            _clear_grids(self._order.copy(), *self._pool())
            self._g_f[:, G_RMAX] = 0.0
            _reset_pool(self._free_head, self._sc)
            self._run(_insert_kernel, self.members.copy())
            self._last_moved = self._n
        else:
            self._sc[S_MOVED] = 0
            self._run(_update_kernel, self.members.copy())
            self._last_moved = int(self._sc[S_MOVED])

    def _pairs(self):
        guess = max(2 * self._candidates, 4 * self._n) + 16
        if not self._active:
            self._tests[0] = self._n * (self._n - 1) // 2
            return run_pair_kernel(_brute_pairs, self._pos, self._rad, self.members.copy(),
                                   guess=guess)
        n, nct = self._n, self._ct.shape[0]
        if self._spos.shape[0] < n:
            self._spos = np.empty((2 * n, 3))
            self._srad = np.empty(2 * n)
            self._shnd = np.empty(2 * n, np.int64)
        if self._meta.shape[0] < nct:
            self._meta = np.empty((nct, 2), np.int64)
        gsnap = np.empty(self._ngrids + 1, np.int64)
        socc = np.empty(int(self._g_i[: self._ngrids, G_NOCC].sum()), np.int64)
        _snapshot(self._order, self._ngrids, self._g_i, self._occ, self._ct, self.members,
                  self._ob, self._pos, self._rad, self._meta, gsnap, socc, self._spos,
                  self._srad, self._shnd)
        return run_pair_kernel(
            _hhg_pairs, self._tests, self._spos, self._srad, self._shnd, gsnap, self._order,
            self._ngrids, self._g_f, self._g_i, self._g_offs, self._cells, socc, self._ct,
            self._meta, guess=guess,
        )

    # -------------------------------------------------------------- introspection
    def _memory_bytes(self):
        arrs = (self._g_f, self._g_i, self._g_offs, self._cells, self._occ, self._ct,
                self._ct_free, self._items, self._free_head, self._sc, self._ob, self._order,
                self._spos, self._srad, self._shnd, self._meta)
        return int(sum(a.nbytes for a in arrs))

    def _stats(self):
        o = self._order[: self._ngrids]
        gi = self._g_i
        return {
            "active": self._active,
            "update": self.update_strategy,
            "tests": int(self._tests[0]),
            "grids": int(self._ngrids),
            "cell_sizes": [float(self._g_f[g, G_CELL]) for g in o],
            "cells_per_axis": [1 << int(gi[g, G_M]) for g in o],
            "cells_per_grid": [1 << (3 * int(gi[g, G_M])) for g in o],
            "objects_per_grid": [int(gi[g, G_COUNT]) for g in o],
            "occupied_cells": [int(gi[g, G_NOCC]) for g in o],
            "occupied_total": int(sum(int(gi[g, G_NOCC]) for g in o)),
            "moved": self._last_moved,
            "grid_growths": self._grow_events,
        }

    def check_invariants(self) -> None:
        """Slow consistency check of the whole structure (for tests); raises AssertionError."""
        if not self._active:
            return
        members = self.members
        placed = np.flatnonzero(self._ob[:, O_GRID] >= 0)
        assert set(placed.tolist()) == set(members.tolist()), "placed != residents"
        total = 0
        for g in self._order:
            gi = self._g_i[g]
            cell, low = self._g_f[g, G_CELL], self._g_f[g, G_LOW]
            base, obase = int(gi[G_BASE]), int(gi[G_OCCBASE])
            m = int(gi[G_M])
            conts = self._occ[obase: obase + int(gi[G_NOCC])]
            assert int(gi[G_NOCC]) <= int(gi[G_OCCCAP])
            count = 0
            for p, c in enumerate(conts):
                rec = self._ct[c]
                assert rec[C_GRID] == g and rec[C_OCC] == p and rec[C_COUNT] > 0
                assert rec[C_COUNT] <= rec[C_CAP] == self.cell_capacity << int(rec[C_CLS])
                assert self._cells[base + rec[C_CELL]] == c
                for slot in range(int(rec[C_COUNT])):
                    h = int(self._items[rec[C_START] + slot])
                    assert tuple(self._ob[h]) == (g, c, slot, rec[C_CELL])
                    s = float(_eff_size(self._pos, self._rad, h))
                    assert low <= s < cell, "object in a grid of the wrong size"
                    assert _hash(self._pos, h, self._g_f[g, G_INV], m) == rec[C_CELL]
                count += int(rec[C_COUNT])
            assert count == gi[G_COUNT]
            assert int(np.count_nonzero(self._cells[base: base + (1 << 3 * m)] >= 0)) == len(conts)
            if m < self._max_m:
                assert count * self.minimal_grid_density <= (1 << 3 * m)
            total += count
        assert total == self._n
