"""Shared njit kernels of the broad phases: the exact filter, resident-set bookkeeping with O(1)
insert/remove, pair buffers and the canonical (i < j, sorted) pair order.

Every structure uses the one overlap predicate (``pdyn.geometry.overlaps``) so that all of them
agree bit for bit with ``brute``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..geometry import overlaps, within

# 13 of the 26 neighbour offsets: the "forward" half, so each pair of cells is visited once
# ([Schornbaum2009] Sec. 3.6; [Koch2020] Sec. 2.2).
HALF_STENCIL = np.array(
    [
        (dx, dy, dz)
        for dz in (-1, 0, 1)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if (dz > 0) or (dz == 0 and dy > 0) or (dz == 0 and dy == 0 and dx > 0)
    ],
    dtype=np.int64,
)
FULL_STENCIL = np.array(
    [(dx, dy, dz) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)], dtype=np.int64
)

#: pairs are rows of int32 (8 bytes a pair, not 16: the pairs are most of a rebuild's
#: temporaries), so a structure is bound to at most ``MAX_ROWS`` rows
PAIR_DTYPE = np.int32
MAX_ROWS = 2**31 - 1


@njit(**JIT)
def _filter_overlapping(pairs, pos, rad):
    keep = np.empty(pairs.shape[0], np.bool_)
    for k in range(pairs.shape[0]):
        keep[k] = overlaps(pos, rad, pairs[k, 0], pairs[k, 1])
    return keep


def filter_overlapping(pairs: np.ndarray, pos: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """Keep the candidate pairs that really overlap (infinite radii overlap everything)."""
    if pairs.shape[0] == 0:
        return pairs
    return pairs[_filter_overlapping(pairs, pos, rad)]


def canonical_pairs(pairs: np.ndarray) -> np.ndarray:
    """Return pairs as int32 (K, 2) with i < j in each row, rows sorted lexicographically."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    if pairs.shape[0] == 0:
        return np.zeros((0, 2), PAIR_DTYPE)
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    if int(hi.max()) > MAX_ROWS or int(lo.min()) < 0:
        raise BroadPhaseError(f"pairs: rows from {int(lo.min())} to {int(hi.max())}, outside "
                              f"[0, {MAX_ROWS}] (pairs are int32)")
    n = int(hi.max()) + 1  # n*n < 2^62: one integer sort
    key = np.sort(lo * n + hi)
    return np.stack((key // n, key % n), axis=1).astype(PAIR_DTYPE)


class BroadPhaseError(ValueError):
    """Invalid input or parameter for a broad-phase structure (message names the field)."""


#: default ceiling on materialised candidate pairs (16 bytes each: 1 GiB)
MAX_CANDIDATES = 1 << 26


def run_pair_kernel(kernel, *args, guess: int = 1024, limit: int | None = None,
                    name: str = "structure") -> np.ndarray:
    """Call ``kernel(out, *args) -> count`` with a growing int32 (M, 2) buffer until it fits.

    Pair kernels count every pair but only write while ``count < len(out)``; one retry with the
    exact size is enough. With ``limit``, more candidates than that is a ``BroadPhaseError``
    (raised before allocating the buffer) rather than an out-of-memory crash.
    """
    out = np.empty((max(int(guess), 16), 2), PAIR_DTYPE)
    count = kernel(out, *args)
    if count > out.shape[0]:
        if limit is not None and count > limit:
            raise BroadPhaseError(
                f"max_candidates = {limit}: {name} would yield {count} candidate pairs; raise "
                "max_candidates, or use a structure for inhomogeneous or polydisperse scenes "
                "(hash_grid, zindex_sort, octree)"
            )
        out = np.empty((count, 2), PAIR_DTYPE)
        count = kernel(out, *args)
    return out[:count]


# ---------------------------------------------------------------- pair emission
@njit(**JIT)
def gather(pos, rad, items):
    """Centres and radii of ``items`` in that order (numpy's fancy indexing of rows is ~5x
    slower at 10⁶ random rows)."""
    n = items.shape[0]
    spos = np.empty((n, 3))
    srad = np.empty(n)
    for t in range(n):
        h = items[t]
        spos[t, 0] = pos[h, 0]
        spos[t, 1] = pos[h, 1]
        spos[t, 2] = pos[h, 2]
        srad[t] = rad[h]
    return spos, srad


# With ``spos``/``srad`` (the centres and radii in ``items`` order, ``spos[t]`` = ``pos[items[t]]``)
# only the pairs passing the exact test are kept: the test reads neighbouring memory and no
# candidate list is materialised (``find_contacts``). Without them (None: numba compiles the
# test away) every pair is kept. Inlined into the pair kernels (``inline="always"``): as calls,
# one per cell pair, index_sort's exact query on the 97 336-sphere gas took 1.3x as long.
@njit(inline="always", **JIT)
def emit_within(out, k, items, s, e, spos=None, srad=None):
    """Write the pairs among ``items[s:e]`` at ``out[k:]`` (counting past the end)."""
    return emit_between(out, k, items, s, e, s, e, spos, srad)


@njit(inline="always", **JIT)
def emit_between(out, k, items, s, e, s2, e2, spos=None, srad=None):
    """Write the pairs of ``items[s:e]`` × ``items[s2:e2]`` (ranges apart) at ``out[k:]``
    (counting past the end); with ``s2 = s`` the pairs among ``items[s:e]`` and with
    ``items[e:e2]`` instead (``e2 >= e``).

    No branch on the exact test: each candidate is written at ``out[k]`` and ``k`` advances only
    if it passes (on a gas about 1 in 7 candidates does, at random, so a branch is often
    mispredicted): 0.79x the time of index_sort's exact query with the branch (97 336-sphere
    gas, same positions, alternating calls)."""
    cap = out.shape[0]
    for a in range(s, e):
        ha = items[a]
        if spos is not None:
            xa, ya, za, ra = spos[a, 0], spos[a, 1], spos[a, 2], srad[a]
        for b in range(a + 1 if s2 == s else s2, e2):
            keep = True
            if spos is not None:  # overlaps(spos, srad, a, b), a's row read once
                keep = within(xa - spos[b, 0], ya - spos[b, 1], za - spos[b, 2],
                              ra + srad[b])[1]
            if k < cap:
                out[k, 0] = ha
                out[k, 1] = items[b]
            k += keep
    return k


# ---------------------------------------------------------------- resident set (O(1) add/remove)
# ``resident[h]`` is 1 for a resident handle, 0 otherwise (2 marks a handle while a batch is
# checked). One byte per handle: 1 MB at 10^6 handles stays in cache, so adding or removing a
# random handle costs no memory round trip; the dense list of residents is derived from it
# only when a query needs it (BroadPhase.members).
@njit(**JIT)
def set_add(handles, resident):
    """Mark ``handles`` resident, all or none: returns ``-1 - t`` (nothing changed) if
    ``handles[t]`` is already resident or repeated in the batch, else the number added."""
    for t in range(handles.shape[0]):
        h = handles[t]
        if resident[h] != 0:
            for u in range(t):
                resident[handles[u]] = 0
            return -1 - t
        resident[h] = 2
    for t in range(handles.shape[0]):
        resident[handles[t]] = 1
    return handles.shape[0]


@njit(**JIT)
def set_remove(handles, resident):
    """Unmark ``handles``, all or none: returns ``-1 - t`` (nothing changed) if ``handles[t]``
    is not resident or repeated in the batch, else the number removed."""
    for t in range(handles.shape[0]):
        h = handles[t]
        if resident[h] != 1:
            for u in range(t):
                resident[handles[u]] = 1
            return -1 - t
        resident[h] = 2
    for t in range(handles.shape[0]):
        resident[handles[t]] = 0
    return handles.shape[0]


# ---------------------------------------------------------------- grid helpers
def safe_cell_size(min_size: float, pos: np.ndarray, handles: np.ndarray) -> float:
    """Enlarge ``min_size`` by a few ulps so that round-off in ``(x - lo) / cell`` can never put
    two touching particles two cells apart (exactness on faces and at 1e9 coordinates)."""
    scale = float(np.abs(pos[handles]).max()) if handles.size else 0.0
    return float(min_size) * (1.0 + 1e-8) + 16.0 * float(np.spacing(max(scale, 1.0)))


@njit(**JIT)
def bounding_box(pos, handles):
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for t in range(handles.shape[0]):
        h = handles[t]
        for a in range(3):
            v = pos[h, a]
            if v < lo[a]:
                lo[a] = v
            if v > hi[a]:
                hi[a] = v
    return lo, hi


@njit(**JIT)
def max_radius(rad, handles):
    m = 0.0
    for t in range(handles.shape[0]):
        r = rad[handles[t]]
        if r > m:
            m = r
    return m


@njit(**JIT)
def brute_pairs(out, pos, rad, members):
    """Every overlapping pair of ``members``, all pairs tested (``BruteForce``; ``hash_grid``
    below its activation threshold)."""
    k = 0
    n = members.shape[0]
    for a in range(n):
        i = members[a]
        for b in range(a + 1, n):
            j = members[b]
            if overlaps(pos, rad, i, j):
                if k < out.shape[0]:
                    out[k, 0] = i
                    out[k, 1] = j
                k += 1
    return k
