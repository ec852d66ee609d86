"""Giants apart: a few spheres far larger than the rest are tested directly against every
resident, the others go into a structure sized by their own largest diameter (``auto`` with
``usage="once"``; thresholds and measurements in ``auto.py``).

A single-level grid sizes its cells by the largest diameter, so one giant makes every cell as
wide as itself ([Koch2020] Sec. 4.1.8); a hierarchy of grids avoids that but costs a grid per
size class ([Schornbaum2009] Sec. 2.3-2.4). With the few giants taken out, the others' grid
fits them, and each giant costs one exact test per resident (O(N) per giant, no structure).

*Giants* (:func:`giant_radius`): the spheres with ``r > K × the cubic mean radius of the
others``, found as the fixed point of ``t = K · cubic_mean(r ≤ t)`` from ``t = ∞`` (each pass
takes the largest ones out, which lowers the mean; it stops when the set no longer grows).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..geometry import overlaps
from ._kernels import filter_overlapping, run_pair_kernel
from .base import BroadPhase


@njit(**JIT)
def _below(rad, handles, t):
    """(count, sum of r³) of the handles with radius <= t, and the count above t."""
    n = 0
    s = 0.0
    above = 0
    for i in range(handles.shape[0]):
        r = rad[handles[i]]
        if r <= t:
            n += 1
            s += r * r * r
        elif r > t:  # NaN is neither (the structure's own check reports it)
            above += 1
    return n, s, above


def giant_radius(rad: np.ndarray, handles: np.ndarray, factor: float, most: int,
                 passes: int = 8) -> tuple[float, int]:
    """(t, count): the spheres among ``handles`` with radius > t are the giants, each larger
    than ``factor`` × the cubic mean radius of the others (the fixed point of the module
    docstring). (inf, 0) if there are none, more than ``most``, or no fixed point within
    ``passes`` O(N) passes (a spread of sizes, not a few giants)."""
    t, count = np.inf, 0
    for _ in range(passes):
        n, s, above = _below(rad, handles, t)
        if above > most or n == 0:
            return np.inf, 0
        if above == count and count:  # the set stopped growing: a fixed point
            return t, count
        count = above
        t_new = factor * (s / n) ** (1.0 / 3.0)
        if not t_new < t:  # nothing above the first threshold
            return np.inf, 0
        t = t_new
    return np.inf, 0


@njit(**JIT)
def _split(rad, members, t):
    """``members`` split by radius into (others <= t, giants > t), each in the given order."""
    others = np.empty(members.shape[0], np.int64)
    giants = np.empty(members.shape[0], np.int64)
    a = 0
    b = 0
    for i in range(members.shape[0]):
        h = members[i]
        if rad[h] > t:
            giants[b] = h
            b += 1
        else:
            others[a] = h
            a += 1
    return others[:a], giants[:b]


@njit(**JIT)
def _giant_pairs(out, pos, rad, giants, others):
    """Every giant against every other resident, and each pair of giants once, written only
    where the exact test passes (counting past the end of ``out``); the others are read once,
    in their order (the store's: sequential)."""
    k = 0
    for o in range(others.shape[0]):
        j = others[o]
        for a in range(giants.shape[0]):
            if overlaps(pos, rad, giants[a], j):
                if k < out.shape[0]:
                    out[k, 0] = giants[a]
                    out[k, 1] = j
                k += 1
    for a in range(giants.shape[0]):
        for b in range(a + 1, giants.shape[0]):
            if overlaps(pos, rad, giants[a], giants[b]):
                if k < out.shape[0]:
                    out[k, 0] = giants[a]
                    out[k, 1] = giants[b]
                k += 1
    return k


class GiantsApart(BroadPhase):
    """The residents with radius > ``threshold`` tested against every resident, the others in
    the ``inner`` structure (a new ``BroadPhase``) built over them alone. Exact for any
    threshold (each pair is in exactly one of the two parts). Built from scratch at the next
    query after any change (made for one build and one query: ``find_contacts``)."""

    name = "giants_apart"
    filters = True

    def __init__(self, threshold: float, inner: BroadPhase, **params):
        super().__init__(**params)
        self.threshold = float(threshold)
        self.inner = inner
        self._giants = np.zeros(0, np.int64)
        self._others = np.zeros(0, np.int64)
        self._dirty = True

    def _changed(self, handles=None):
        """Any change: both parts are rebuilt at the next query."""
        self._dirty = True

    _build = _insert = _remove = _update = _changed

    def _rebuild(self) -> None:
        if self._dirty:
            self._others, self._giants = _split(self._rad, self.members, self.threshold)
            self.inner.build(self._pos, self._rad, self._others)
            self._dirty = False

    def _release(self):
        self.inner.release()

    def _with_giants(self, pairs: np.ndarray) -> np.ndarray:
        """``pairs`` (the others' contacts) with the giants' appended; ``_candidates`` = the
        pairs both parts tested."""
        tested = self.inner.stats()["candidates"]
        g, o = self._giants.shape[0], self._others.shape[0]
        self._candidates = int(tested) + g * o + g * (g - 1) // 2
        if g == 0:
            return pairs
        extra = run_pair_kernel(_giant_pairs, self._pos, self._rad, self._giants, self._others,
                                guess=4 * o + 16)
        return np.concatenate((pairs, extra))

    def _pairs(self):
        self._rebuild()
        cand = self.inner.candidate_pairs(include_infinite=False)
        return self._with_giants(filter_overlapping(cand, self._pos, self._rad))

    def _touching(self):
        self._rebuild()
        return self._with_giants(self.inner.contacts(include_infinite=False))

    def _memory_bytes(self):
        return int(self._giants.nbytes + self._others.nbytes
                   + self.inner.stats()["memory_bytes"])

    def _stats(self):
        return {"giants": int(self._giants.shape[0]), "giant_threshold": self.threshold,
                "inner": self.inner.name}
