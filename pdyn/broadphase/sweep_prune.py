"""Sweep and prune ([Schornbaum2009] Sec. 4.5): the 2N ends of the particles' bounding
intervals along one axis are kept sorted; a sweep over them with an active set yields every
pair whose intervals overlap on that axis, which is kept only if the boxes overlap on the other
two axes too (the AABB test), each pair once.

The order is persistent: ``update`` recomputes the end values and re-sorts by insertion sort,
~O(N) when the spatial distribution hardly changes between steps (temporal coherence); an
insertion sort needing more than ``32 · 2N`` moves is abandoned for a full sort. The
insertion sort, merge and compaction are the shared ones of ``_sort``, given this structure's
order of ends (:func:`_before`). ``insert``
appends the new ends and merges them in (O(N + k log k) per batch instead of the O(N) per object
of the pe implementation, Schornbaum Fig. 27); ``remove`` compacts the list (O(N) per batch).
The sweep axis is the one of largest spread (variance of the centres), chosen on
``build`` and whenever a full re-sort replaces the insertion sort, never on a plain update.

Interval ends are padded outwards by a relative 1e-14 so that round-off in ``x ± r`` can never
drop a pair that the exact sphere test (``overlaps``) accepts (faces, 1e9 coordinates).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import PAIR_DTYPE, run_pair_kernel
from ._sort import compact, insertion_sort, merge_tail
from .base import BroadPhase

#: relative outward padding of every interval end (covers round-off of x ± r)
_PAD = 1e-14


@njit(**JIT)
def _end_value(pos, rad, code, axis):
    """Value of end ``code`` = 2 * handle + is_max along ``axis`` (padded outwards)."""
    h = code >> 1
    x = pos[h, axis]
    r = rad[h]
    e = (abs(x) + r) * _PAD
    if code & 1:
        return x + r + e
    return x - r - e


@njit(**JIT)
def _end_values(pos, rad, codes, vals, start, stop, axis):
    for t in range(start, stop):
        vals[t] = _end_value(pos, rad, codes[t], axis)


@njit(**JIT)
def _before(va, ca, vb, cb):
    """Strict order of ends: by value, and at equal value a min end before a max end (closed
    intervals: touching boxes overlap)."""
    return va < vb or (va == vb and (ca & 1) < (cb & 1))


@njit(**JIT)
def _boxes_overlap(pos, rad, i, j, axis):
    """Padded intervals of i and j overlap on ``axis`` (same padding as the sorted ends)."""
    xi = pos[i, axis]
    xj = pos[j, axis]
    ri = rad[i] + (abs(xi) + rad[i]) * _PAD
    rj = rad[j] + (abs(xj) + rad[j]) * _PAD
    return xi - ri <= xj + rj and xj - rj <= xi + ri


@njit(**JIT)
def _sweep(out, pos, rad, codes, n, axis, where):
    """Sweep the sorted ends; emit (i, j) when j starts while i is active and their boxes
    overlap on the two other axes. ``where`` (capacity-sized scratch) maps handle -> slot."""
    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    active = np.empty(n // 2 + 1, np.int64)
    na = 0
    k = 0
    for t in range(n):
        c = codes[t]
        j = c >> 1
        if c & 1:  # max end: leave the active set (swap-remove)
            p = where[j]
            na -= 1
            last = active[na]
            active[p] = last
            where[last] = p
        else:
            for q in range(na):
                i = active[q]
                if _boxes_overlap(pos, rad, i, j, a1) and _boxes_overlap(pos, rad, i, j, a2):
                    if k < out.shape[0]:
                        out[k, 0] = i
                        out[k, 1] = j
                    k += 1
            active[na] = j
            where[j] = na
            na += 1
    return k


class SweepPrune(BroadPhase):
    """Sweep and prune along the axis of largest spread with a persistent, insertion-sorted end
    list ([Schornbaum2009] Sec. 4.5). Candidates are exactly the AABB-overlapping pairs (~5x
    the true contacts for spheres, several times fewer than any cell grid).

    No parameters. Choose it for scenes with few moving objects and high temporal coherence
    (Schornbaum Fig. 30: 2-3x faster than the hash grid there), for small N, or for elongated
    scenes spread along one axis; avoid it for large 3-D scenes (the active set along one axis
    holds ~N^(2/3) objects: ~0.6-0.7 s per query for Koch's 10^5-sphere reference scene, 60x
    ``index_sort``) and for strongly moving scenes (Schornbaum Figs. 28-29).
    """

    name = "sweep_prune"

    def __init__(self, **params):
        super().__init__(**params)
        self._vals = np.zeros(0)
        self._codes = np.zeros(0, np.int64)
        self._n_ends = 0
        self._n_sorted = 0
        self._axis = 0
        self._full = True
        self._moved = False
        self._swaps = 0
        self._full_sorts = 0
        self._insertion_sorts = 0
        self._where = np.zeros(0, np.int64)

    def _reserve(self, n: int) -> None:
        if self._codes.shape[0] < n:
            cap = max(n, 2 * self._codes.shape[0], 32)
            vals = np.empty(cap)
            codes = np.empty(cap, np.int64)
            vals[: self._n_ends] = self._vals[: self._n_ends]
            codes[: self._n_ends] = self._codes[: self._n_ends]
            self._vals, self._codes = vals, codes

    def _build(self, handles):
        self._n_ends = self._n_sorted = 0
        self._full = True
        self._insert(handles)

    def _insert(self, handles):
        m = handles.size
        self._reserve(self._n_ends + 2 * m)
        ends = np.empty(2 * m, np.int64)
        ends[0::2] = 2 * handles
        ends[1::2] = 2 * handles + 1
        self._codes[self._n_ends: self._n_ends + 2 * m] = ends
        self._n_ends += 2 * m

    def _remove(self, handles):
        self._n_ends, self._n_sorted = compact(
            self._vals, self._codes, self._n_ends, self._n_sorted, self._resident, 1
        )

    def _update(self):
        self._moved = True

    def _choose_axis(self):
        p = self._pos[self.members]
        with np.errstate(all="ignore"):  # 1e308 coordinates: an inf variance is still largest
            self._axis = int(np.nanargmax(p.var(axis=0))) if p.shape[0] > 1 else 0

    def _full_sort(self, stop):
        vals, codes = self._vals[:stop], self._codes[:stop]
        order = np.lexsort((codes & 1, vals))
        vals[:], codes[:] = vals[order], codes[order]
        self._full_sorts += 1

    def _sort(self):
        n = self._n_ends
        vals, codes = self._vals, self._codes
        if self._full:
            self._choose_axis()
            _end_values(self._pos, self._rad, codes, vals, 0, n, self._axis)
            self._full_sort(n)
            self._full = False
        else:
            ns = self._n_sorted
            if self._moved and ns:
                _end_values(self._pos, self._rad, codes, vals, 0, ns, self._axis)
                moves = insertion_sort(vals, codes, ns, 32 * ns + 1024, _before)
                if moves < 0:  # too disordered: a rebuild, so re-choose the axis too
                    self._choose_axis()
                    _end_values(self._pos, self._rad, codes, vals, 0, ns, self._axis)
                    self._full_sort(ns)
                else:
                    self._swaps = moves
                    self._insertion_sorts += 1
            if n > ns:
                _end_values(self._pos, self._rad, codes, vals, ns, n, self._axis)
                tail_v, tail_c = vals[ns:n], codes[ns:n]
                order = np.lexsort((tail_c & 1, tail_v))
                tail_v[:], tail_c[:] = tail_v[order], tail_c[order]
                merge_tail(vals, codes, ns, n, _before)
        self._n_sorted = n
        self._moved = False

    def _pairs(self):
        self._sort()
        if self._n_ends == 0:
            return np.zeros((0, 2), PAIR_DTYPE)
        if self._where.shape[0] < self._pos.shape[0]:  # handle -> active slot (scratch)
            self._where = np.empty(self._pos.shape[0], np.int64)
        return run_pair_kernel(
            _sweep, self._pos, self._rad, self._codes, self._n_ends, self._axis, self._where,
            guess=8 * self._n + 16,
        )

    def _memory_bytes(self):
        return int(self._vals.nbytes + self._codes.nbytes + self._where.nbytes)

    def _stats(self):
        return {"axis": "xyz"[self._axis], "swaps": self._swaps,
                "insertion_sorts": self._insertion_sorts, "full_sorts": self._full_sorts}
