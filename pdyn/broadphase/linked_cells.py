"""Linked cells: one dense uniform grid over the residents' bounding box ([Koch2020] Sec. 2.2).

Each particle sits in the one cell holding its centre; the cell edge is at least the largest
diameter ([Schornbaum2009] Sec. 2.1-2.3), so overlapping particles are in the same or adjacent
cells and a 13-cell half stencil visits every pair of cells once. Cells are stored as a
counting-sorted array (cell start offsets + handles), rebuilt lazily on the next query after
insert/remove/update: insert and remove are O(1) (resident-set bookkeeping), the O(N + cells)
rebuild happens once per step. Memory is bounded: the grid covers only the residents'
bounding box and never has more than ``max_cells`` cells (default ``max(4096, 8 N)``); when the
box would need more, cells are enlarged (still exact, just more candidates).

Choose it for homogeneous, monodisperse scenes (Koch Table 1: fastest there). With radii spanning
more than a factor of ~4 or strongly clustered particles, prefer ``hash_grid``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..cell_index import clamped_cell
from ._kernels import (HALF_STENCIL, bounding_box, emit_between, emit_within, gather, max_radius,
                       run_pair_kernel, safe_cell_size)
from .base import BroadPhase, BroadPhaseError
from .params import CELL_SIZE, MAX_CANDIDATES_PARAM, MAX_CELLS

#: hard ceiling on the number of cells a user-set ``cell_size`` may produce (~1 GiB of offsets)
CELL_LIMIT = 1 << 27


@njit(**JIT)
def _cell_index(pos, h, lo, inv, dims):
    """Row-major index of the (clamped) cell holding particle ``h``'s centre."""
    c = 0
    for a in (2, 1, 0):
        c = c * dims[a] + clamped_cell(pos[h, a], lo[a], inv, dims[a])
    return c


@njit(**JIT)
def _counting_sort(pos, members, lo, inv, dims, ncells):
    """Cell start offsets (ncells + 1) and handles ordered by cell."""
    n = members.shape[0]
    cell_of = np.empty(n, np.int64)
    start = np.zeros(ncells + 1, np.int64)
    for t in range(n):
        c = _cell_index(pos, members[t], lo, inv, dims)
        cell_of[t] = c
        start[c + 1] += 1
    for c in range(ncells):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    items = np.empty(n, np.int64)
    for t in range(n):
        c = cell_of[t]
        items[fill[c]] = members[t]
        fill[c] += 1
    return start, items


@njit(**JIT)
def _grid_pairs(out, start, items, dims, stencil, spos=None, srad=None, tested=None):
    """Pairs within each cell and with its 13 forward neighbours; with ``spos``/``srad`` (centres
    and radii in ``items`` order) only those passing the exact test, the pairs tested counted in
    ``tested[0]``."""
    nx, ny, nz = dims[0], dims[1], dims[2]
    k = 0
    if tested is not None:
        tested[0] = 0
    for cz in range(nz):
        for cy in range(ny):
            for cx in range(nx):
                c = (cz * ny + cy) * nx + cx
                s, e = start[c], start[c + 1]
                if s == e:
                    continue
                k = emit_within(out, k, items, s, e, spos, srad)
                if tested is not None:
                    tested[0] += (e - s) * (e - s - 1) // 2
                for o in range(stencil.shape[0]):
                    x2 = cx + stencil[o, 0]
                    y2 = cy + stencil[o, 1]
                    z2 = cz + stencil[o, 2]
                    if x2 < 0 or y2 < 0 or z2 < 0 or x2 >= nx or y2 >= ny or z2 >= nz:
                        continue
                    c2 = (z2 * ny + y2) * nx + x2
                    k = emit_between(out, k, items, s, e, start[c2], start[c2 + 1], spos,
                                     srad)
                    if tested is not None:
                        tested[0] += (e - s) * (start[c2 + 1] - start[c2])
    return k


def _cell_count(extent: np.ndarray, cell: float) -> float:
    return float(np.prod(np.floor(extent / cell) + 1.0))


class LinkedCells(BroadPhase):
    """Dense uniform grid with a half stencil; ``contacts`` tests while it emits and keeps no
    candidates. Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``)."""

    name = "linked_cells"

    params = {"cell_size": CELL_SIZE, "max_cells": MAX_CELLS,
              "max_candidates": MAX_CANDIDATES_PARAM}

    def __init__(self, **given):
        super().__init__(**given)
        self.cell_size = self.settings["cell_size"]
        self.max_cells = self.settings["max_cells"]
        self.max_candidates = self.settings["max_candidates"]
        self._dirty = True
        self._start = np.zeros(1, np.int64)
        self._items = np.zeros(0, np.int64)
        self._dims = np.ones(3, np.int64)
        self._cell = 0.0

    def _build(self, handles):
        self._dirty = True

    _insert = _build

    def _remove(self, handles):
        self._dirty = True

    def _update(self):
        self._dirty = True

    def _grid(self):
        members = self.members
        if members.size == 0:
            self._dims = np.ones(3, np.int64)
            self._start = np.zeros(2, np.int64)
            self._items = np.zeros(0, np.int64)
            return
        dmax = 2.0 * max_radius(self._rad, members)
        if self.cell_size is not None and self.cell_size < dmax:
            raise BroadPhaseError(
                f"cell_size = {self.cell_size!r}: smaller than the largest diameter {dmax!r}"
            )
        lo, hi = bounding_box(self._pos, members)
        extent = np.maximum(hi - lo, 0.0)
        if self.cell_size is not None:
            cell, budget = float(self.cell_size), self.max_cells or CELL_LIMIT
            if self.max_cells is None and _cell_count(extent, cell) > budget:
                raise BroadPhaseError(
                    f"cell_size = {self.cell_size!r}: needs more than {CELL_LIMIT} cells for "
                    f"extent {extent.tolist()}; choose a larger cell_size or set max_cells"
                )
        else:
            cell, budget = dmax, self.max_cells or max(4096, 8 * members.size)
        while _cell_count(extent, cell) > budget:  # bounded memory: enlarge, stay exact
            cell = max(cell * 1.25, float(np.max(extent)) / budget ** (1 / 3))
        cell = safe_cell_size(cell, self._pos, members)
        dims = (np.floor(extent / cell) + 1).astype(np.int64)
        self._cell = cell
        self._dims = dims
        self._start, self._items = _counting_sort(
            self._pos, members, lo, 1.0 / cell, dims, int(np.prod(dims))
        )

    def _pairs(self):
        if self._dirty:
            self._grid()
            self._dirty = False
        return run_pair_kernel(
            _grid_pairs, self._start, self._items, self._dims, HALF_STENCIL,
            guess=8 * self._n + 16, limit=self.max_candidates, name=self.name,
        )

    def _touching(self):
        """The overlapping pairs, tested while emitted on centres gathered in cell order: no
        candidate list, so ``max_candidates`` does not apply (``find_contacts``)."""
        if self._dirty:
            self._grid()
            self._dirty = False
        spos, srad = gather(self._pos, self._rad, self._items)
        tested = np.zeros(1, np.int64)
        pairs = run_pair_kernel(_grid_pairs, self._start, self._items, self._dims, HALF_STENCIL,
                                spos, srad, tested, guess=self._touching_guess())
        self._candidates = int(tested[0])
        return pairs

    def _memory_bytes(self):
        return int(self._start.nbytes + self._items.nbytes)

    def _stats(self):
        return {"cell_size": self._cell, "cells": int(np.prod(self._dims))}
