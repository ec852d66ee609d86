"""The broad-phase protocol every structure implements, and ``brute``, the O(N²) oracle.

Protocol: ``build(positions, radii, handles=None)``, ``insert(handles)``, ``remove(handles)``,
``update(positions, radii=None)``, ``candidate_pairs(include_infinite=True)`` → int32 (M, 2)
with every candidate pair once, ``contacts(include_infinite=True)`` → the candidates that pass
the exact test, ``stats()`` → dict with at least ``candidates`` and ``memory_bytes``.

``stats()["candidates"]`` means the same for every structure: the number of finite pairs the
last ``candidate_pairs`` (or ``contacts``) call handed to the exact sphere test
(``pdyn.geometry.overlaps``). Most structures hand their candidates to the caller, who applies the
test (the contact kernel), so it is ``len(candidate_pairs(include_infinite=False))``;
``brute`` and ``hash_grid`` (``filters = True``) apply the test themselves and return only
overlapping pairs, and the index sorts and linked cells do so in ``contacts``
(``find_contacts``), so it is the number of pairs they tested. Either way it is at least the
number of contacts, and it is the figure comparable across structures (Koch's "candidate pairs",
[Koch2020] Sec. 4.1).

A *handle* is a row of the ``positions``/``radii`` arrays the structure is bound to (the particle
store's slot). Rows not inserted are ignored, so the structure can be bound to the store's
capacity-sized arrays. Particles with infinite radius (walls, "infinite particles" of mesa_pd;
[Koch2020] Sec. 3.1.1) are kept in a separate list by this base class and paired with every
finite resident, never with each other. Subclasses implement ``_build``, ``_insert``,
``_remove``, ``_update`` and ``_pairs`` over finite residents only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import (MAX_ROWS, BroadPhaseError, brute_pairs, filter_overlapping,
                       run_pair_kernel, set_add, set_remove)
from .params import settings


def _as_positions(positions) -> np.ndarray:
    pos = np.ascontiguousarray(positions, dtype=np.float64)
    if pos.ndim == 1 and pos.size == 0:
        pos = pos.reshape(0, 3)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise BroadPhaseError(f"positions: expected shape (N, 3), got {pos.shape}")
    if pos.shape[0] > MAX_ROWS:
        raise BroadPhaseError(f"positions: {pos.shape[0]} rows, more than {MAX_ROWS} (pairs "
                              "are int32)")
    return pos


def _as_radii(radii, n: int) -> np.ndarray:
    rad = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
    if rad.shape[0] != n:
        raise BroadPhaseError(f"radii: expected {n} values, got {rad.shape[0]}")
    return rad


# what _scan_handles checks
RANGE, COUNT_INFINITE, VALUES = 0, 1, 2


@njit(**JIT)
def _scan_handles(handles, pos, rad, mode):
    """One pass over a batch of handles (cheap for a single handle, unlike a chain of numpy
    calls). Checks the range; with ``mode`` >= COUNT_INFINITE counts infinite radii; with
    VALUES also rejects radii that are not > 0 (NaN included) and non-finite centres of
    finite particles. Returns (0, -1, n_infinite), or (code, t, 0) for the first bad
    ``handles[t]``: 1 out of range, 2 bad radius, 3 bad centre."""
    cap = pos.shape[0]
    for t in range(handles.shape[0]):
        if handles[t] < 0 or handles[t] >= cap:
            return 1, t, 0
    ninf = 0
    if mode == RANGE:
        return 0, -1, 0
    for t in range(handles.shape[0]):
        h = handles[t]
        r = rad[h]
        if mode == VALUES and not r > 0.0:
            return 2, t, 0
        if np.isinf(r):
            ninf += 1
        elif mode == VALUES:
            for a in range(3):
                if not np.isfinite(pos[h, a]):
                    return 3, t, 0
    return 0, -1, ninf


@njit(**JIT)
def _infinite_pairs(out, finite, infinite):
    k = 0
    for a in range(infinite.shape[0]):
        for b in range(finite.shape[0]):
            if k < out.shape[0]:
                out[k, 0] = finite[b]
                out[k, 1] = infinite[a]
            k += 1
    return k


class BroadPhase:
    """Base class: argument checking, infinite-particle list, resident set, stats plumbing."""

    name = "base"
    #: True where ``_pairs`` applies the exact test itself, returns only overlapping pairs and
    #: sets ``_candidates`` to the number of pairs it tested (see the module docstring)
    filters = False

    #: the parameters it takes, name -> ``params.Param`` (``pdyn.broadphase.params``)
    params: dict = {}

    def __init__(self, **given):
        #: the parameters, checked against ``params``, defaults filled in
        self.settings = settings(type(self), given)
        self._pos = np.zeros((0, 3))
        self._rad = np.zeros(0)
        self._resident = np.zeros(0, np.uint8)
        self._members: np.ndarray | None = np.zeros(0, np.int64)  # None: derive again
        self._n = 0
        self._infinite: list[int] = []
        self._candidates = 0
        self._found = 0  # the pairs the last ``_touching`` query found
        self.calls = {"build": 0, "insert": 0, "remove": 0, "update": 0}

    # -------------------------------------------------------------- binding and residents
    def bind(self, positions, radii) -> None:
        """Point the structure at (possibly reallocated) arrays without moving anything."""
        pos = _as_positions(positions)
        rad = _as_radii(radii, pos.shape[0])
        cap = pos.shape[0]
        if cap > self._resident.shape[0]:
            r = np.zeros(cap, np.uint8)
            r[: self._resident.shape[0]] = self._resident
            self._resident = r
        self._pos, self._rad = pos, rad

    @property
    def members(self) -> np.ndarray:
        """Finite resident handles, ascending (store order, so reads through them are
        sequential). Derived from the resident flags in one O(capacity) pass after the set
        changed, then cached; callers must not modify it."""
        if self._members is None:
            self._members = np.flatnonzero(self._resident).astype(np.int64, copy=False)
        return self._members

    @property
    def infinite(self) -> np.ndarray:
        return np.asarray(self._infinite, np.int64)

    def _split(self, handles, mode: int) -> tuple[np.ndarray, np.ndarray]:
        """Checked handles as int64, split into (finite, infinite); ``mode`` as in
        :func:`_scan_handles` (RANGE: no radius is read and every handle counts as finite)."""
        h = np.ascontiguousarray(np.atleast_1d(handles), dtype=np.int64)
        code, t, ninf = _scan_handles(h, self._pos, self._rad, mode)
        if code:
            x = int(h[t])
            if code == 1:
                raise BroadPhaseError(f"handle {x} out of range [0, {self._pos.shape[0]})")
            if code == 2:
                raise BroadPhaseError(f"radii[{x}] = {float(self._rad[x])!r}: must be > 0")
            raise BroadPhaseError(f"positions[{x}] = {self._pos[x].tolist()}: must be finite")
        if ninf == 0:
            return h, h[:0]
        inf = np.isinf(self._rad[h])
        return h[~inf], h[inf]

    # -------------------------------------------------------------- protocol
    def build(self, positions, radii, handles=None) -> "BroadPhase":
        """(Re)build from scratch over ``handles`` (default: every row)."""
        self._resident = np.zeros(0, np.uint8)
        self._members = np.zeros(0, np.int64)
        self._n = 0
        self._infinite = []
        self.bind(positions, radii)
        if handles is None:
            handles = np.arange(self._pos.shape[0], dtype=np.int64)
        finite, inf = self._split(handles, VALUES)
        self._check_infinite(inf, resident=False)
        self._set_add(finite)
        self._infinite = [int(x) for x in inf]
        self.calls["build"] += 1
        self._build(finite)
        return self

    def insert(self, handles) -> None:
        """Add residents (rows of the bound arrays); O(1) amortised each where supported.
        All or nothing: a handle already resident (or repeated) raises and changes nothing."""
        finite, inf = self._split(handles, VALUES)
        self._check_infinite(inf, resident=False)
        self._set_add(finite)
        self._infinite.extend(int(x) for x in inf)
        self.calls["insert"] += 1
        if finite.size:
            self._insert(finite)

    def remove(self, handles) -> None:
        """Remove residents; O(1) each where supported. All or nothing: a handle that is not
        resident (or repeated) raises and changes nothing."""
        # without infinite residents no radius is read (one cache miss per handle saved)
        finite, inf = self._split(handles, COUNT_INFINITE if self._infinite else RANGE)
        self._check_infinite(inf, resident=True)
        self._set_remove(finite)
        for x in inf:
            self._infinite.remove(int(x))
        self.calls["remove"] += 1
        if finite.size:
            self._remove(finite)

    def update(self, positions, radii=None) -> None:
        """Residents have moved: re-bind the arrays and bring the structure up to date."""
        if radii is None:
            radii = self._rad
        self.bind(positions, radii)
        self.calls["update"] += 1
        self._update()

    def candidate_pairs(self, include_infinite: bool = True) -> np.ndarray:
        """Every candidate pair once, int32 (M, 2); finite × infinite pairs appended if asked."""
        pairs = self._pairs()
        if not self.filters:
            self._candidates = int(pairs.shape[0])
        return self._with_infinite(pairs) if include_infinite else pairs

    def contacts(self, include_infinite: bool = True) -> np.ndarray:
        """The candidate pairs that pass the exact test (``pdyn.geometry.overlaps``), each once, int32
        (K, 2): what ``find_contacts`` sorts. Structures that can test while they emit
        (``_touching``) never materialise the candidate list."""
        pairs = self._touching()
        if pairs is None:
            return filter_overlapping(self.candidate_pairs(include_infinite), self._pos,
                                      self._rad)
        self._found = int(pairs.shape[0])
        if include_infinite:
            return filter_overlapping(self._with_infinite(pairs), self._pos, self._rad)
        return pairs

    def release(self) -> None:
        """The caller holds the pairs it needs until the residents change: drop what is kept
        only to answer another query without a change (the finite residents' list, derived
        again when asked; a structure rebuilt from scratch at its next query, ``_release``,
        its arrays too). Results do not change; a query without a change after it costs a
        rebuild. The driver calls it after each rebuild's query: the memory of the lists'
        build and of the steps up to the next rebuild."""
        self._members = None
        self._release()

    def _release(self) -> None:
        pass

    def _with_infinite(self, pairs: np.ndarray) -> np.ndarray:
        """``pairs`` with every finite resident × infinite resident pair appended."""
        if not (self._infinite and self._n):
            return pairs
        extra = run_pair_kernel(_infinite_pairs, self.members.copy(), self.infinite,
                                guess=self._n * len(self._infinite))
        return np.concatenate((pairs, extra))

    def stats(self) -> dict:
        """At least ``candidates`` (finite pairs handed to the exact test by the last query,
        see the module docstring) and ``memory_bytes`` (every array the structure holds)."""
        return {
            "name": self.name,
            "residents": self._n,
            "infinite": len(self._infinite),
            "candidates": self._candidates,
            "memory_bytes": int(self._resident.nbytes + self.members.nbytes)
            + self._memory_bytes(),
            **self._stats(),
        }

    # -------------------------------------------------------------- resident-set helpers
    def _check_infinite(self, inf: np.ndarray, resident: bool) -> None:
        """Raise unless every infinite handle in ``inf`` is (``resident``) or is not resident,
        each once."""
        if inf.size == 0:
            return
        have = set(self._infinite)
        seen: set[int] = set()
        for x in (int(v) for v in inf):
            if (x in have) != resident or x in seen:
                state = "not resident" if resident else "already resident"
                raise BroadPhaseError(f"handle {x} is {state} (or repeated)")
            seen.add(x)

    def _set_add(self, h: np.ndarray) -> None:
        if h.size == 0:
            return
        k = set_add(h, self._resident)
        if k < 0:
            raise BroadPhaseError(f"handle {int(h[-1 - k])} is already resident (or repeated)")
        self._n += k
        self._members = None

    def _set_remove(self, h: np.ndarray) -> None:
        if h.size == 0:
            return
        k = set_remove(h, self._resident)
        if k < 0:
            raise BroadPhaseError(f"handle {int(h[-1 - k])} is not resident (or repeated)")
        self._n -= k
        self._members = None

    # -------------------------------------------------------------- to implement
    def _build(self, handles: np.ndarray) -> None:
        raise NotImplementedError

    def _insert(self, handles: np.ndarray) -> None:
        raise NotImplementedError

    def _remove(self, handles: np.ndarray) -> None:
        raise NotImplementedError

    def _update(self) -> None:
        raise NotImplementedError

    def _pairs(self) -> np.ndarray:
        raise NotImplementedError

    def _touching(self) -> np.ndarray | None:
        """The finite pairs passing the exact test, tested while emitted (``_candidates`` set
        to the pairs tested); None where the structure cannot (then ``contacts`` filters
        ``candidate_pairs``)."""
        return None

    @property
    def found(self) -> int:
        """The pairs the last ``contacts`` query found (0: none yet)."""
        return self._found

    def expect(self, pairs: int) -> None:
        """Room for at least ``pairs`` pairs at the next ``contacts`` query: a structure that
        replaces one which found as many (``pdyn.broadphase.auto`` deciding again at a build)
        runs its query kernel once rather than once more with the exact size."""
        self._found = max(self._found, int(pairs))

    def _touching_guess(self) -> int:
        """Room for the pairs of a ``_touching`` query: the last one's and an eighth more (a
        rebuild finds about as many as the one before; more is one retry), four per resident
        at the first."""
        return self._found + self._found // 8 + 16 if self._found else 4 * self._n + 16

    def _memory_bytes(self) -> int:
        return 0

    def _stats(self) -> dict:
        return {}


class BruteForce(BroadPhase):
    """All pairs, O(N²): the oracle every other structure is tested against.

    Its bounding-volume test *is* the exact sphere test, so its candidates are exactly the
    overlapping pairs. Choose it only for N below a few thousand.
    """

    name = "brute"
    filters = True

    def _build(self, handles):
        pass

    def _insert(self, handles):
        pass

    def _remove(self, handles):
        pass

    def _update(self):
        pass

    def _pairs(self):
        self._candidates = self._n * (self._n - 1) // 2
        return run_pair_kernel(brute_pairs, self._pos, self._rad, self.members, guess=4 * self._n)
