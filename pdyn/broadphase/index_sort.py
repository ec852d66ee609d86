"""Index sort and Z-index sort: particles sorted by the key of the grid cell holding their centre
([Ihmsen2011] Sec. 4.2-4.3).

Both share one layout: a handle array ``items`` sorted by cell ``keys``, a compact list of the
used cells (``ukeys``, ``ustart``: run starts in ``items``, found by comparing ``keys[t]`` with
``keys[t-1]`` as in Ihmsen's parallel reduction) and one pair kernel that walks the used cells
with the 13-cell half stencil (cell edge >= largest diameter, so every overlapping pair is in the
same or adjacent cells and each pair of cells is visited once).

* ``index_sort`` (Sec. 4.2): row-major key ``k + l K + m K L`` over the residents' bounding box;
  full LSD radix sort of (key, handle) on every rebuild (Ihmsen's radix sort, [Gre08]); a dense
  table over the whole grid holding for each cell the position of its first particle in the
  sorted array (Fig. 1; an empty cell holds the next cell's), so memory scales with the domain;
  the grid is bounded by ``max_cells`` (default ``max(4096, 8 N)``) and cells are enlarged to
  respect it (still exact, just more candidates). The cells of a stencil row (x - 1, x, x + 1)
  have consecutive keys, so their particles are one range of the sorted array: the pair kernel
  reads 5 ranges per cell instead of 13 cells.
* ``zindex_sort`` (Sec. 4.3): Z-curve (Morton) key, 21 bits per axis interleaved into 63 bits;
  the sorted handles and the grid are kept between steps and re-sorted with insertion sort
  (temporal coherence: few particles change cell per step). The grid (origin, cell) is padded
  by 25 % of the extent and only changes when residents leave the padded box, the largest
  diameter outgrows the cell, or the cell is more than twice as large as needed; then all keys
  change and a full radix sort replaces the insertion sort. An insertion sort that needs more
  than ``32 N`` element moves is abandoned for a full sort (bounded worst case).
  ``resort="merge"`` instead takes out only the handles whose key changed, radix-sorts them and
  merges them back (O(N + k log k) however far a key jumps along the curve).

  Start indices: **no dense table**. A Z-curve table would have to span the power-of-two cube
  around the grid (up to 8x the row-major grid), so the used cells are kept as a compact list in
  Z order (``ukeys``/``ustart``) and a neighbour cell is looked up in an open-addressing hash
  index over that list (slot = low key bits folded with the next ones, load <= 1/4; Z-curve
  neighbours land in nearby slots), rebuilt in O(U) per query. Memory is O(N) whatever the
  domain, so Ihmsen's stated weakness of index sorts ("memory scales with the domain") does not
  apply and no cell enlargement is needed for sparse domains (only the 21-bit limit enlarges
  cells, e.g. at 1e9 coordinates). ``lookup="search"`` uses binary search in ``ukeys`` instead
  (no extra memory; ~2.5x slower queries on the reference scene). Neighbour keys are formed by
  dilated-integer increments on the key itself, without de-interleaving.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..cell_index import clamped_cell
from ..zorder import LEVELS, compact_bits, morton3, spread_bits
from ._kernels import (HALF_STENCIL, PAIR_DTYPE, bounding_box, emit_between, emit_within, gather,
                       max_radius, run_pair_kernel, safe_cell_size)
from ._sort import compact, insertion_sort, key_before, merge_tail, radix_sort
from .base import BroadPhase, BroadPhaseError
from .params import CELL_SIZE, MAX_CANDIDATES_PARAM, MAX_CELLS, Param

#: ceiling on the dense table a user-set ``cell_size`` may produce for ``index_sort``
CELL_LIMIT = 1 << 27


# ------------------------------------------------------------------ keys
@njit(inline="always", **JIT)  # inlined: a call per particle costs ~30 % here
def _cell_key(pos, h, lo, inv, dims, morton):
    """Key of the grid cell holding particle ``h``'s centre (clamped into the grid, which
    stays exact: more candidates only): Z-curve or row-major."""
    kx = clamped_cell(pos[h, 0], lo[0], inv, dims[0])
    ky = clamped_cell(pos[h, 1], lo[1], inv, dims[1])
    kz = clamped_cell(pos[h, 2], lo[2], inv, dims[2])
    if morton:
        return morton3(kx, ky, kz)
    return kx + dims[0] * (ky + dims[1] * kz)


@njit(**JIT)
def _coords_of(key, dims, morton):
    if morton:
        return compact_bits(key), compact_bits(key >> 1), compact_bits(key >> 2)
    kx = key % dims[0]
    r = key // dims[0]
    return kx, r % dims[1], r // dims[1]


@njit(**JIT)
def _compute_keys(pos, items, start, stop, lo, inv, dims, morton, keys):
    """keys[t] = cell key of items[t] for start <= t < stop."""
    for t in range(start, stop):
        keys[t] = _cell_key(pos, items[t], lo, inv, dims, morton)


@njit(**JIT)
def _keys_by_handle(pos, members, lo, inv, dims, morton, hkeys):
    """hkeys[h] = cell key of every resident h, walking the residents in store order: sequential
    reads of ``pos`` (computing keys in Z order instead reads ``pos`` at random, ~3x slower)."""
    for t in range(members.shape[0]):
        h = members[t]
        hkeys[h] = _cell_key(pos, h, lo, inv, dims, morton)


@njit(**JIT)
def _take_keys(items, start, stop, hkeys, keys):
    for t in range(start, stop):
        keys[t] = hkeys[items[t]]


@njit(**JIT)
def _split_changed(items, keys, n, hkeys):
    """Keep the handles whose key did not change in order at the front (still sorted), move the
    others with their new keys ``hkeys[h]`` to the tail. Returns the front length."""
    mk = np.empty(n, np.int64)
    mi = np.empty(n, np.int64)
    w = 0
    m = 0
    for t in range(n):
        h = items[t]
        key = hkeys[h]
        if key == keys[t]:
            keys[w] = key
            items[w] = h
            w += 1
        else:
            mk[m] = key
            mi[m] = h
            m += 1
    keys[w:n] = mk[:m]
    items[w:n] = mi[:m]
    return w


# ------------------------------------------------------------------ cells and pairs
@njit(**JIT)
def _count_cells(keys, n):
    """Number of distinct keys among the sorted ``keys[:n]``."""
    u = 0
    for t in range(n):
        if t == 0 or keys[t] != keys[t - 1]:
            u += 1
    return u


@njit(**JIT)
def _used_cells(keys, n, ukeys, ustart):
    """Compact list of used cells from sorted keys; returns their number U
    (ustart[U] == n)."""
    u = 0
    for t in range(n):
        if t == 0 or keys[t] != keys[t - 1]:
            ukeys[u] = keys[t]
            ustart[u] = t
            u += 1
    ustart[u] = n
    return u


@njit(**JIT)
def _fill_starts(starts, ukeys, ustart, nu):
    """Dense cell -> first sorted position: ``starts[c]`` = position in ``items`` of the first
    particle whose key is >= c (``starts[-1]`` = n), so the particles of the consecutive cells
    c..c' are ``items[starts[c]:starts[c' + 1]]`` (empty cells give empty ranges)."""
    c = 0
    for u in range(nu):
        key = ukeys[u]
        while c <= key:
            starts[c] = ustart[u]
            c += 1
    n = ustart[nu]
    while c < starts.shape[0]:
        starts[c] = n
        c += 1


@njit(**JIT)
def _find_cell(ukeys, nu, key):
    lo = 0
    hi = nu
    while lo < hi:
        mid = (lo + hi) >> 1
        if ukeys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < nu and ukeys[lo] == key:
        return lo
    return -1


@njit(**JIT)
def _slot(key, bits, mask):
    """Low key bits folded with the next ones: Z-curve neighbours land in nearby slots (cache
    friendly), and grids periodic in 2**(bits/3) cells do not all collide."""
    return (key ^ (key >> bits)) & mask


@njit(**JIT)
def _fill_hash(table, ukeys, nu, bits):
    """Open-addressing index key -> used cell (linear probing, load <= 1/4)."""
    mask = table.shape[0] - 1
    table[:] = -1
    for u in range(nu):
        s = _slot(ukeys[u], bits, mask)
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = u


@njit(**JIT)
def _hash_cell(table, ukeys, key, bits):
    mask = table.shape[0] - 1
    s = _slot(key, bits, mask)
    while True:
        u = table[s]
        if u < 0 or ukeys[u] == key:
            return u
        s = (s + 1) & mask


#: neighbour-cell lookup modes of the shared pair kernel
DENSE, SEARCH, HASH = 0, 1, 2


#: bit masks of the x, y, z components of a Z-curve key ("dilated" integers)
_XM = 0x1249249249249249
_YM = _XM << 1
_ZM = _XM << 2


@njit(**JIT)
def _dilated_step(d, m, step, dmax):
    """Component ``d`` (dilated, mask ``m``) moved by ``step`` in {-1, 0, 1}; -1 if it leaves
    [0, dmax]. Dilated increment/decrement need no de-interleaving; dilation keeps order."""
    if step == 0:
        return d
    if step > 0:
        if d >= dmax:
            return -1
        return ((d | ~m) + 1) & m
    if d == 0:
        return -1
    return (d - 1) & m


def _stencil_runs(stencil: np.ndarray) -> np.ndarray:
    """The offsets of ``stencil`` (x fastest) grouped into runs along x: rows (dy, dz, dx_lo,
    dx_hi). With row-major keys the cells of a run are consecutive keys, so their particles are
    one range of the sorted items."""
    runs: list[list[int]] = []
    for dx, dy, dz in stencil.tolist():
        if runs and runs[-1][:2] == [dy, dz] and runs[-1][3] == dx - 1:
            runs[-1][3] = dx
        else:
            runs.append([dy, dz, dx, dx])
    return np.array(runs, np.int64)


#: the half stencil's cells outside the cell's own row: four runs of three cells along x
#: (its last cell, (+1, 0, 0), is read together with the cell itself)
ROW_RUNS = _stencil_runs(HALF_STENCIL[np.any(HALF_STENCIL[:, 1:] != 0, axis=1)])


@njit(**JIT)
def _pairs_row_major(out, ukeys, ustart, nu, items, dims, runs, starts, spos=None, srad=None,
                     tested=None):
    """Pairs within each used cell and with its 13 forward neighbours (index sort), read as
    contiguous ranges of ``items`` from the dense ``starts`` table (``_fill_starts``): the cell
    with the next one along x (pairs among them and with it), then the ``runs`` along x
    (``ROW_RUNS``): 5 ranges per cell instead of 13 cells, empty cells at no cost. With
    ``spos``/``srad`` only the overlapping pairs (``emit_between``), the pairs tested counted
    in ``tested[0]``."""
    nx, ny, nz = dims[0], dims[1], dims[2]
    k = 0
    n_tested = 0
    for u in range(nu):
        s, e = ustart[u], ustart[u + 1]
        cx, cy, cz = _coords_of(ukeys[u], dims, False)
        e1 = starts[ukeys[u] + 2] if cx + 1 < nx else e  # this cell and the next along x
        k = emit_between(out, k, items, s, e, s, e1, spos, srad)
        n_tested += (e - s) * (e - s - 1) // 2 + (e - s) * (e1 - e)
        for o in range(runs.shape[0]):
            y2 = cy + runs[o, 0]
            z2 = cz + runs[o, 1]
            x0 = max(cx + runs[o, 2], 0)
            x1 = min(cx + runs[o, 3], nx - 1)
            if y2 < 0 or z2 < 0 or y2 >= ny or z2 >= nz or x0 > x1:
                continue
            c = x0 + nx * (y2 + ny * z2)
            s2, e2 = starts[c], starts[c + x1 - x0 + 1]
            k = emit_between(out, k, items, s, e, s2, e2, spos, srad)
            n_tested += (e - s) * (e2 - s2)
    if tested is not None:
        tested[0] = n_tested
    return k


@njit(**JIT)
def _pairs_morton(out, ukeys, ustart, nu, items, dims, stencil, table, mode, bits, spos=None,
                  srad=None, tested=None):
    """Same for Z-curve keys: neighbour keys by dilated arithmetic (no de-interleaving), the
    neighbour found by the hash index ``table`` (mode HASH) or binary search (SEARCH)."""
    xlim = spread_bits(dims[0] - 1)
    ylim = spread_bits(dims[1] - 1) << 1
    zlim = spread_bits(dims[2] - 1) << 2
    k = 0
    if tested is not None:
        tested[0] = 0
    for u in range(nu):
        s, e = ustart[u], ustart[u + 1]
        k = emit_within(out, k, items, s, e, spos, srad)
        if tested is not None:
            tested[0] += (e - s) * (e - s - 1) // 2
        key = ukeys[u]
        xd, yd, zd = key & _XM, key & _YM, key & _ZM
        for o in range(stencil.shape[0]):
            nx = _dilated_step(xd, _XM, stencil[o, 0], xlim)
            ny = _dilated_step(yd, _YM, stencil[o, 1], ylim)
            nz = _dilated_step(zd, _ZM, stencil[o, 2], zlim)
            if nx < 0 or ny < 0 or nz < 0:
                continue
            key2 = nx | ny | nz
            if mode == SEARCH:
                u2 = _find_cell(ukeys, nu, key2)
            else:
                u2 = _hash_cell(table, ukeys, key2, bits)
            if u2 >= 0:
                k = emit_between(out, k, items, s, e, ustart[u2], ustart[u2 + 1], spos, srad)
                if tested is not None:
                    tested[0] += (e - s) * (ustart[u2 + 1] - ustart[u2])
    return k


# ------------------------------------------------------------------ classes
def _required_cell(cell_size, dmax: float) -> float:
    if cell_size is not None and cell_size < dmax:
        raise BroadPhaseError(
            f"cell_size = {cell_size!r}: smaller than the largest diameter {dmax!r}"
        )
    return float(cell_size) if cell_size is not None else dmax


def _finite_extent(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        ext = np.maximum(hi - lo, 0.0)
    if not np.all(np.isfinite(ext)):
        raise BroadPhaseError(
            f"positions: extent {ext.tolist()} overflows float64 (coordinates from "
            f"{lo.tolist()} to {hi.tolist()}); keep them within +-1e307"
        )
    return ext


def _safe(cell: float, lo: np.ndarray, hi: np.ndarray) -> float:
    """``safe_cell_size`` with the coordinate scale taken from a bounding box."""
    return safe_cell_size(cell, np.stack((lo, hi)), np.arange(2))


class _SortedCells(BroadPhase):
    """Shared storage of the two index sorts: sorted (keys, items) + compact used-cell list."""

    morton = False

    def __init__(self, **given):
        super().__init__(**given)
        self.cell_size = self.settings["cell_size"]
        self.max_candidates = self.settings["max_candidates"]
        self._keys = np.zeros(0, np.int64)
        self._items = np.zeros(0, np.int64)
        self._ukeys = np.zeros(0, np.int64)
        self._ustart = np.zeros(1, np.int64)
        self._nu = 0
        self._table = np.full(1, -1, np.int32)
        self._lo = np.zeros(3)
        self._dims = np.ones(3, np.int64)
        self._cell = 0.0
        self._mode = DENSE
        self._bits = 0

    def _cells(self, n: int) -> None:
        nu = _count_cells(self._keys, n)  # sized by the used cells, not the particles
        if self._ukeys.shape[0] < nu:
            self._ukeys = self._ustart = None  # the old ones go first
            self._ukeys = np.empty(nu + nu // 8 + 16, np.int64)
            self._ustart = np.empty(nu + nu // 8 + 17, np.int64)
        self._nu = _used_cells(self._keys, n, self._ukeys, self._ustart)
        if self._mode == HASH:
            bits = max(4, int(4 * self._nu - 1).bit_length())  # load factor <= 1/4
            if self._table.shape[0] != 1 << bits:
                self._table = np.empty(1 << bits, np.int32)
            self._bits = bits
            _fill_hash(self._table, self._ukeys, self._nu, bits)

    def _pair_query(self, touching: bool = False) -> np.ndarray:
        """The candidate pairs, or with ``touching`` only those passing the exact test,
        tested while emitted on centres gathered in cell order (``_candidates`` = the pairs
        tested)."""
        if self._n == 0:
            return np.zeros((0, 2), PAIR_DTYPE)
        if self.morton:
            kernel, args = _pairs_morton, (self._ukeys, self._ustart, self._nu, self._items,
                                           self._dims, HALF_STENCIL, self._table, self._mode,
                                           self._bits)
        else:
            kernel, args = _pairs_row_major, (self._ukeys, self._ustart, self._nu, self._items,
                                              self._dims, ROW_RUNS, self._table)
        if not touching:
            return run_pair_kernel(kernel, *args, guess=8 * self._n + 16,
                                   limit=self.max_candidates, name=self.name)
        spos, srad = gather(self._pos, self._rad, self._items[: self._n])
        tested = np.zeros(1, np.int64)
        pairs = run_pair_kernel(kernel, *args, spos, srad, tested, guess=self._touching_guess())
        self._candidates = int(tested[0])
        return pairs

    def _memory_bytes(self):
        return int(self._keys.nbytes + self._items.nbytes + self._ukeys.nbytes
                   + self._ustart.nbytes + self._table.nbytes)


class IndexSort(_SortedCells):
    """Index sort ([Ihmsen2011] Sec. 4.2): handles radix-sorted by row-major cell index over the
    residents' bounding box, one entry per cell in a dense table. Rebuilt from scratch (O(N +
    cells)) on the next query after any change; insert/remove are O(1) bookkeeping.

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``). Choose it for compact, homogeneous, monodisperse scenes where the domain is not much larger
    than the particle cloud; for sparse or inhomogeneous domains use ``zindex_sort`` or
    ``hash_grid``.
    """

    name = "index_sort"

    params = {"cell_size": CELL_SIZE, "max_cells": MAX_CELLS,
              "max_candidates": MAX_CANDIDATES_PARAM}

    def __init__(self, **given):
        super().__init__(**given)
        self.max_cells = self.settings["max_cells"]
        self._dirty = True

    def _build(self, handles):
        self._dirty = True

    def _insert(self, handles):
        self._dirty = True

    def _remove(self, handles):
        self._dirty = True

    def _update(self):
        self._dirty = True

    def _grid(self, members):
        dmax = 2.0 * max_radius(self._rad, members)
        cell = _required_cell(self.cell_size, dmax)
        lo, hi = bounding_box(self._pos, members)
        extent = _finite_extent(lo, hi)

        def count(c):
            return float(np.prod(np.floor(extent / c) + 1.0))

        if self.cell_size is not None and self.max_cells is None:
            budget = CELL_LIMIT
            if count(cell) > budget:
                raise BroadPhaseError(
                    f"cell_size = {self.cell_size!r}: needs more than {CELL_LIMIT} cells for "
                    f"extent {extent.tolist()}; choose a larger cell_size or set max_cells"
                )
        else:
            budget = self.max_cells or max(4096, 8 * members.size)
        while count(cell) > budget:  # bounded memory: enlarge cells, stay exact
            cell = max(cell * 1.25, float(np.max(extent)) / budget ** (1 / 3))
        cell = _safe(cell, lo, hi)
        self._lo, self._cell = lo, cell
        self._dims = (np.floor(extent / cell) + 1).astype(np.int64)

    def _rebuild(self):
        members = self.members
        n = members.size
        if n == 0:
            self._nu = 0
            return
        self._grid(members)
        self._items = members  # sorted in place: the residents' list is derived again if asked
        self._members = None
        self._keys = np.empty(n, np.int64)
        _compute_keys(self._pos, self._items, 0, n, self._lo, 1.0 / self._cell, self._dims,
                      False, self._keys)
        radix_sort(self._keys, self._items, 0, n)
        self._cells(n)
        self._keys = np.zeros(0, np.int64)  # the query reads the used cells, not the keys
        ncells = int(np.prod(self._dims))
        if self._table.shape[0] != ncells + 1:
            self._table = np.empty(ncells + 1, np.int32)
        _fill_starts(self._table, self._ukeys, self._ustart, self._nu)

    def _pairs(self, touching: bool = False):
        if self._dirty:
            self._rebuild()
            self._dirty = False
        return self._pair_query(touching)

    def _release(self):
        """Rebuilt from scratch at the next query anyway: the sorted items, used cells and
        table go (2.7 MiB on the 97 336-sphere dense gas, between two rebuilds)."""
        self._keys = self._items = self._ukeys = np.zeros(0, np.int64)
        self._ustart = np.zeros(1, np.int64)
        self._table = np.full(1, -1, np.int32)
        self._nu = 0
        self._dirty = True

    def _touching(self):
        return self._pairs(touching=True)

    def _stats(self):
        return {"cell_size": self._cell, "cells": int(np.prod(self._dims)),
                "used_cells": self._nu}


class ZIndexSort(_SortedCells):
    """Z-index sort ([Ihmsen2011] Sec. 4.3): handles sorted by Z-curve (Morton) cell key, kept
    between steps and re-sorted by insertion sort; used cells in a compact list with a hash
    index, so memory is O(N) whatever the domain. Insert appends and merges into the order,
    remove compacts it (O(N) per call: batch them); update recomputes keys and insertion-sorts
    (~O(N) when few particles change cell).

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``). Choose it for
    monodisperse scenes in sparse, inhomogeneous or very large domains (no dense grid, cells
    stay small) and when particles move little per step; for compact homogeneous scenes
    ``index_sort`` or ``linked_cells`` are faster (benchmarks/structures.py: ~2x on Koch's
    reference scene); with radii spanning more than a factor of ~4 prefer ``hash_grid``.
    """

    name = "zindex_sort"
    morton = True

    params = {"cell_size": CELL_SIZE, "max_candidates": MAX_CANDIDATES_PARAM,
              "lookup": Param("choice", "hash", "how a used cell is found: hash table or "
                              "binary search", choices=("hash", "search")),
              "resort": Param("choice", "insertion", "how the order is kept after moves",
                              choices=("insertion", "merge"))}

    def __init__(self, **given):
        super().__init__(**given)
        self.resort = self.settings["resort"]
        self.lookup = self.settings["lookup"]
        self._mode = HASH if self.lookup == "hash" else SEARCH
        self._hkeys = np.zeros(0, np.int64)  # key by handle (capacity-sized scratch)
        self._n_items = 0
        self._n_sorted = 0
        self._gridded = False
        self._moved = False
        self._span_hi = np.zeros(3)
        self._swaps = 0
        self._full_sorts = 0
        self._insertion_sorts = 0
        self._regrids = 0

    # ---------------------------------------------------------- storage
    def _reserve(self, n: int) -> None:
        if self._items.shape[0] < n:
            cap = max(n, 2 * self._items.shape[0], 16)
            items = np.empty(cap, np.int64)
            keys = np.empty(cap, np.int64)
            items[: self._n_items] = self._items[: self._n_items]
            keys[: self._n_items] = self._keys[: self._n_items]
            self._items, self._keys = items, keys

    def _build(self, handles):
        self._n_items = self._n_sorted = 0
        self._gridded = False
        self._insert(handles)

    def _insert(self, handles):
        self._reserve(self._n_items + handles.size)
        self._items[self._n_items: self._n_items + handles.size] = handles
        self._n_items += handles.size

    def _remove(self, handles):
        self._n_items, self._n_sorted = compact(
            self._keys, self._items, self._n_items, self._n_sorted, self._resident, 0
        )

    def _update(self):
        self._moved = True

    # ---------------------------------------------------------- grid
    def _needs_regrid(self, need, lo, hi) -> bool:
        if not self._gridded or self._cell < need:
            return True
        if np.any(lo < self._lo) or np.any(hi > self._span_hi):
            return True
        ext = float(np.max(hi - lo))
        best = max(need, 1.5 * ext / (LEVELS - 8))
        return self._cell > 2.0 * best

    def _regrid(self, need, lo, hi):
        extent = _finite_extent(lo, hi)
        cell = max(need, 1.5 * float(np.max(extent)) / (LEVELS - 8))
        while True:
            pad = 0.25 * extent + 2.0 * cell
            dims = np.floor((extent + 2.0 * pad) / cell).astype(np.int64) + 1
            if np.all(dims <= LEVELS):
                break
            cell *= 1.0 + 1e-6
        self._lo = lo - pad
        self._cell = cell
        self._dims = dims
        self._span_hi = self._lo + dims * cell
        self._gridded = True
        self._regrids += 1

    # ---------------------------------------------------------- query
    def _sort(self):
        n = self._n_items
        items, keys = self._items, self._keys
        if n == 0:
            self._nu = 0
            return
        members = self.members  # same set as items[:n], in store order (sequential reads)
        dmax = 2.0 * max_radius(self._rad, members)
        lo, hi = bounding_box(self._pos, members)
        _finite_extent(lo, hi)
        need = _safe(_required_cell(self.cell_size, dmax), lo, hi)
        if self._hkeys.shape[0] < self._pos.shape[0]:
            self._hkeys = np.empty(self._pos.shape[0], np.int64)
        hkeys = self._hkeys
        ns = self._n_sorted
        regrid = self._needs_regrid(need, lo, hi)
        if regrid:
            self._regrid(need, lo, hi)
        if regrid or self._moved or n > ns:
            _keys_by_handle(self._pos, members, self._lo, 1.0 / self._cell, self._dims, True,
                            hkeys)
        if regrid:
            _take_keys(items, 0, n, hkeys, keys)
            radix_sort(keys, items, 0, n)
            self._full_sorts += 1
        else:
            if self._moved and ns and self.resort == "merge":
                front = _split_changed(items, keys, ns, hkeys)
                radix_sort(keys, items, front, ns)
                merge_tail(keys, items, front, ns, key_before)
                self._swaps = ns - front  # handles that changed cell
                self._insertion_sorts += 1
            elif self._moved and ns:
                _take_keys(items, 0, ns, hkeys, keys)
                moves = insertion_sort(keys, items, ns, 32 * ns + 1024, key_before)
                if moves < 0:
                    radix_sort(keys, items, 0, ns)
                    self._full_sorts += 1
                else:
                    self._swaps = moves
                    self._insertion_sorts += 1
            if n > ns:  # newly inserted: key, sort, merge (O(N + k log k))
                _take_keys(items, ns, n, hkeys, keys)
                radix_sort(keys, items, ns, n)
                merge_tail(keys, items, ns, n, key_before)
        self._n_sorted = n
        self._moved = False
        self._cells(n)

    def _pairs(self, touching: bool = False):
        self._sort()
        return self._pair_query(touching)

    def _touching(self):
        return self._pairs(touching=True)

    def _memory_bytes(self):
        return super()._memory_bytes() + int(self._hkeys.nbytes)

    def _stats(self):
        return {"cell_size": self._cell, "used_cells": self._nu, "swaps": self._swaps,
                "insertion_sorts": self._insertion_sorts, "full_sorts": self._full_sorts,
                "regrids": self._regrids}
