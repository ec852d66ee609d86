"""The sorts of the broad phases: an LSD radix sort of (key, item) pairs for full sorts, and an
insertion sort, a merge of a sorted tail and an order-keeping compaction for orders kept
between steps (temporal coherence: few items move per step; [Ihmsen2011] Sec. 4.2-4.3,
[Schornbaum2009] Sec. 4.5).

The order-keeping kernels take the order as a jitted function ``before(key_a, item_a, key_b,
item_b)`` (strict: a goes before b). numba compiles one specialisation per function it is given,
with a direct, inlinable call, not a callback: ``zindex_sort`` and ``sweep_prune`` step as fast
as with their former hand-written copies (``benchmarks/structures.py``, same run).
:func:`key_before` orders by key alone (the index sorts); sweep and prune passes its own tie
rule.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT

RADIX_BITS = 11


@njit(**JIT)
def key_before(ka, ia, kb, ib):
    """Order by key alone (equal keys keep their order: the sorts are stable)."""
    return ka < kb


@njit(**JIT)
def radix_sort(keys, items, start, stop):
    """Stable LSD radix sort of (keys, items)[start:stop] by non-negative int64 key, 11 bits per
    pass, as many passes as the largest key needs: O(n) per pass."""
    n = stop - start
    if n < 2:
        return
    kmax = 0
    for t in range(start, stop):
        if keys[t] > kmax:
            kmax = keys[t]
    nbits = 0
    while (kmax >> nbits) > 0:
        nbits += 1
    radix = 1 << RADIX_BITS
    mask = radix - 1
    sk = keys[start:stop]
    si = items[start:stop]
    dk = np.empty(n, keys.dtype)
    di = np.empty(n, items.dtype)
    count = np.empty(radix + 1, np.int64)
    shift = 0
    swapped = False
    while shift < nbits:
        count[:] = 0
        for t in range(n):
            count[((sk[t] >> shift) & mask) + 1] += 1
        for d in range(radix):
            count[d + 1] += count[d]
        for t in range(n):
            d = (sk[t] >> shift) & mask
            p = count[d]
            dk[p] = sk[t]
            di[p] = si[t]
            count[d] = p + 1
        sk, dk = dk, sk
        si, di = di, si
        swapped = not swapped
        shift += RADIX_BITS
    if swapped:  # the result lives in the scratch buffers: copy it back into place
        for t in range(n):
            keys[start + t] = sk[t]
            items[start + t] = si[t]


@njit(**JIT)
def insertion_sort(keys, items, n, budget, before):
    """Insertion sort of (keys, items)[:n] in the order ``before``; returns the number of
    element moves, or -1 once they exceed ``budget`` (the arrays are then a permutation, to be
    fully sorted)."""
    moves = 0
    for t in range(1, n):
        k = keys[t]
        it = items[t]
        if not before(k, it, keys[t - 1], items[t - 1]):
            continue
        s = t - 1
        while s >= 0 and before(k, it, keys[s], items[s]):
            keys[s + 1] = keys[s]
            items[s + 1] = items[s]
            s -= 1
        keys[s + 1] = k
        items[s + 1] = it
        moves += t - 1 - s
        if moves > budget:
            return -1
    return moves


@njit(**JIT)
def merge_tail(keys, items, n_sorted, n, before):
    """Merge the sorted tail (keys, items)[n_sorted:n] into the sorted prefix [:n_sorted]
    (filling from the back: only the tail is copied)."""
    m = n - n_sorted
    if m == 0 or n_sorted == 0:
        return
    tk = keys[n_sorted:n].copy()
    ti = items[n_sorted:n].copy()
    a = n_sorted - 1
    b = m - 1
    w = n - 1
    while b >= 0:
        if a >= 0 and before(tk[b], ti[b], keys[a], items[a]):
            keys[w] = keys[a]
            items[w] = items[a]
            a -= 1
        else:
            keys[w] = tk[b]
            items[w] = ti[b]
            b -= 1
        w -= 1


@njit(**JIT)
def compact(keys, items, n, n_sorted, resident, shift):
    """Drop the entries whose handle ``items[t] >> shift`` is no longer resident, keeping the
    order; returns (new n, new n_sorted)."""
    w = 0
    ws = 0
    for t in range(n):
        it = items[t]
        if resident[it >> shift]:
            keys[w] = keys[t]
            items[w] = it
            if t < n_sorted:
                ws += 1
            w += 1
    return w, ws
