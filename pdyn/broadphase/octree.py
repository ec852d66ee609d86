"""Octree broad phase with stored adjacency and a dynamic (split/collapse) update.

[Koch2020] Sec. 2.4 and 3.1: the root cube covers the residents; a leaf splits into eight
octants when an insertion would put more than ``max_ids`` particles into it, down to a depth
limit; each particle sits in the one leaf holding its centre; every leaf keeps the list of
leaves whose (closed) boxes touch it, updated on every split (Koch's "stored adjacency", the
fast variant, Sec. 3.1.1). Leaves are never smaller than the largest diameter (the depth limit
is ``min(max_depth, what the largest diameter allows)``), so overlapping particles are in the
same or in adjacent leaves. Candidate pairs: all pairs within a leaf plus all pairs between a
leaf and each adjacent leaf with a higher index (the tie-break that reports each pair once;
Koch instead reports both orders and keeps ``id < id2``, Sec. 3.1.2).

Beyond Koch: the dynamic tree of [WindolphUschakov2023] Sec. 4. A subtree whose particle
count falls to ``max_ids`` or less collapses into one leaf, and ``update="incremental"`` (the
default) only moves the particles whose centre left their leaf (up to the lowest ancestor
containing the new position, then down), instead of clearing and reinserting everything every
step (Koch, Sec. 3.1.3; ``update="rebuild"`` does that, with a fresh root cube each time, where
Koch keeps the old nodes and only empties the leaves). Every particle is stored
in exactly one leaf, so subtree counts are exact (no double counting of particles on cell
borders, the bug of their Sec. 5); with split-at-``max_ids + 1`` and collapse-at-``max_ids``
the tree is always the same one a fresh build would give for the same root. A particle whose
update takes it out of the root cube, or a radius beyond what the leaf size allows, triggers a
rebuild with a new root (never a lost particle or a missed pair).

Layout: flat arrays that ``@njit`` kernels mutate. One int64 row per node (parent, first of
eight contiguous children, depth, integer corner on the finest grid, subtree count, item block,
adjacency block); leaf items (int64 handles) and adjacency lists (int32 pairs of neighbour and
twin position) live in two pooled arenas of power-of-two blocks with free lists. Each particle
remembers its leaf and slot (O(1) swap-remove); each adjacency entry remembers the position of
its twin in the other leaf's list (O(1) unlink, where Koch scans the neighbour's list).
Insert is O(depth), remove O(1) plus O(depth) count maintenance (depth <= ``max_depth``).

Choose it for very inhomogeneous scenes: a few dense clusters in a large, mostly empty domain
(Koch Table 3: 4.7x faster than linked cells there). On homogeneous scenes it is slower than
``linked_cells`` (Koch Table 1: ~4x), and like every single-level structure it degrades when
radii span a wide range (the leaf size follows the largest diameter); use ``hash_grid`` then.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .._jit import JIT
from ..cell_index import clamped_cell
from ..zorder import BITS, morton3
from ._arena import (TOP, UNIT, alloc, bump, free, grown, has_block, has_room, new_state,
                     reset, run_resumable, size_class)
from ._kernels import PAIR_DTYPE, bounding_box, max_radius, run_pair_kernel, safe_cell_size
from .base import BroadPhase, BroadPhaseError
from .params import UPDATE, Param

# ------------------------------------------------------------------ node table columns
PARENT, CHILD, DEPTH, CX, CY, CZ, COUNT, IBEG, ICAP, ILEN, ABEG, ACAP, ALEN, MARK = range(14)
NF = 14

# ------------------------------------------------------------------ meta slots (int64 array)
M_STAMP = 0  # marker stamp for collapse
M_D = 1  # depth of the finest grid (= the effective depth limit)
M_MAXIDS = 2
M_MINBLOCK = 3  # item block size of a fresh leaf (power of two > max_ids)
M_SPLITS = 4
M_COLLAPSES = 5
M_MOVES = 6
M_RESUME = 7  # anchor node of a particle detached by an interrupted _move_many
META = 8

#: The kernels' state: three arenas ([Koch2020] Sec. 3.1: node table, leaf item lists,
#: adjacency lists) with their states, the meta slots above, and per handle (leaf, slot).
#: ``node`` rows are allocated in blocks of eight (class 3; the root is one row at the bottom),
#: a freed block is linked through its first row's PARENT column; ``adj`` rows are (neighbour
#: leaf, position of the twin entry in the neighbour's list), int32.
Tree = namedtuple("Tree", "node node_st items items_st adj adj_st meta hinfo")

#: fraction of the residents' extent added on every side of the root cube (incremental updates
#: then rarely need a new root)
ROOT_SLACK = 1.0 / 16.0
#: hard upper bound for ``max_depth`` (integer keys are int64; doubles have 52 mantissa bits)
DEPTH_LIMIT = 48


# ================================================================== leaf item and adjacency lists
# (the innermost helpers take the arrays they touch, not the Tree: passing the record down to
# them, called dozens of times per split, doubled the cost of a split, measured)
@njit(**JIT)
def _item_push(node, items, items_st, hinfo, minblock, leaf, h):
    """Append ``h`` to ``leaf``'s item list (moved to a block twice the size when full)."""
    n = node[leaf, ILEN]
    cap = node[leaf, ICAP]
    if n == cap:
        newcap = max(minblock, 2 * cap)
        s = alloc(items, items_st, size_class(items_st, newcap))
        b = node[leaf, IBEG]
        for k in range(n):
            items[s + k] = items[b + k]
        _free_block(items, items_st, b, cap)
        node[leaf, IBEG] = s
        node[leaf, ICAP] = newcap
    items[node[leaf, IBEG] + n] = h
    hinfo[h, 0] = leaf
    hinfo[h, 1] = n
    node[leaf, ILEN] = n + 1


@njit(**JIT)
def _free_block(data, state, s, cap):
    """Return a list's block of ``cap`` entries (none if 0) to its arena."""
    if cap > 0:
        free(data, state, s, size_class(state, cap))


@njit(**JIT)
def _item_del(node, items, hinfo, leaf, k):
    """Swap-remove slot ``k`` of ``leaf`` (O(1); the moved particle's slot is updated)."""
    b = node[leaf, IBEG]
    n = node[leaf, ILEN] - 1
    if k != n:
        g = items[b + n]
        items[b + k] = g
        hinfo[g, 1] = k
    node[leaf, ILEN] = n


@njit(**JIT)
def _adj_push(node, adj, adj_st, a, b, twin):
    n = node[a, ALEN]
    cap = node[a, ACAP]
    if n == cap:
        newcap = max(8, 2 * cap)
        s = alloc(adj, adj_st, size_class(adj_st, newcap))
        old = node[a, ABEG]
        for k in range(n):
            adj[s + k, 0] = adj[old + k, 0]
            adj[s + k, 1] = adj[old + k, 1]
        _free_block(adj, adj_st, old, cap)
        node[a, ABEG] = s
        node[a, ACAP] = newcap
    p = node[a, ABEG] + n
    adj[p, 0] = b
    adj[p, 1] = twin
    node[a, ALEN] = n + 1


@njit(**JIT)
def _connect(node, adj, adj_st, a, b):
    """Make leaves ``a`` and ``b`` adjacent; each entry stores its twin's position."""
    pa = node[a, ALEN]
    pb = node[b, ALEN]
    _adj_push(node, adj, adj_st, a, b, pb)
    _adj_push(node, adj, adj_st, b, a, pa)


@njit(**JIT)
def _adj_del(node, adj, a, k):
    """Swap-remove entry ``k`` of leaf ``a``'s list; fix the twin of the moved entry (O(1))."""
    base = node[a, ABEG]
    n = node[a, ALEN] - 1
    if k != n:
        y = adj[base + n, 0]
        w = adj[base + n, 1]
        adj[base + k, 0] = y
        adj[base + k, 1] = w
        adj[node[y, ABEG] + w, 1] = k
    node[a, ALEN] = n


# ================================================================== geometry on the finest grid
@njit(**JIT)
def _side(node, D, a):
    return np.int64(1) << (D - node[a, DEPTH])


@njit(**JIT)
def _touch(node, D, a, b):
    """Closed boxes of nodes ``a`` and ``b`` touch or overlap (exact, integer)."""
    sa = _side(node, D, a)
    sb = _side(node, D, b)
    for ax in range(3):
        ca = node[a, CX + ax]
        cb = node[b, CX + ax]
        if ca > cb + sb or cb > ca + sa:
            return False
    return True


@njit(**JIT)
def _inside_box(node, D, a, p):
    """Box of node ``a`` lies inside box of node ``p`` (``a`` is ``p`` or a descendant)."""
    sa = _side(node, D, a)
    sp = _side(node, D, p)
    for ax in range(3):
        ca = node[a, CX + ax]
        cp = node[p, CX + ax]
        if ca < cp or ca + sa > cp + sp:
            return False
    return True


@njit(**JIT)
def _contains(node, D, a, kx, ky, kz):
    s = _side(node, D, a)
    return (
        node[a, CX] <= kx < node[a, CX] + s
        and node[a, CY] <= ky < node[a, CY] + s
        and node[a, CZ] <= kz < node[a, CZ] + s
    )


@njit(**JIT)
def _key(pos, h, geo):
    """Finest-grid cell of particle ``h`` (clamped); the one place positions become keys."""
    n = np.int64(geo[5])
    return (clamped_cell(pos[h, 0], geo[0], geo[3], n), clamped_cell(pos[h, 1], geo[1], geo[3], n),
            clamped_cell(pos[h, 2], geo[2], geo[3], n))


@njit(**JIT)
def _fits(pos, rad, handles, geo):
    """(all centres inside the root cube, largest radius) over ``handles``."""
    ok = True
    rmax = 0.0
    n = geo[5]
    for t in range(handles.shape[0]):
        h = handles[t]
        if rad[h] > rmax:
            rmax = rad[h]
        for ax in range(3):
            f = (pos[h, ax] - geo[ax]) * geo[3]
            if not (f >= 0.0 and f < n):
                ok = False
    return ok, rmax


@njit(**JIT)
def _find_leaf(node, D, a, kx, ky, kz):
    while node[a, CHILD] >= 0:
        sh = D - node[a, DEPTH] - 1
        ci = ((kx >> sh) & 1) | (((ky >> sh) & 1) << 1) | (((kz >> sh) & 1) << 2)
        a = node[a, CHILD] + ci
    return a


@njit(**JIT)
def _morton_codes(pos, handles, geo, D):
    """Z-order code of each handle's finest cell (its top 21 bits per axis): inserting in this
    order keeps consecutive insertions in the same part of the tree (cache locality)."""
    drop = max(D - BITS, 0)
    out = np.empty(handles.shape[0], np.int64)
    for t in range(handles.shape[0]):
        kx, ky, kz = _key(pos, handles[t], geo)
        out[t] = morton3(kx >> drop, ky >> drop, kz >> drop)
    return out


# ================================================================== split, place, collapse
@njit(**JIT)
def _room_split(t, leaf):
    """Room for one ``_split(leaf)``? (Nothing is modified; if not, the arenas say what to
    add.) Children lists grow from 8 to at most 7 + len(adj(leaf)) entries; each neighbour gains
    at most 3 entries net, so it reallocates at most once (to twice its capacity)."""
    node = t.node
    base = node[leaf, ALEN]
    ab = node[leaf, ABEG]
    sx = 0
    for e in range(base):
        sx += node[t.adj[ab + e, 0], ACAP]
    nodes_ok = has_block(node, t.node_st, 3)
    items_ok = has_room(t.items, t.items_st, 8 * t.meta[M_MINBLOCK])
    adj_ok = has_room(t.adj, t.adj_st, 8 * (16 + 4 * (7 + base)) + 2 * sx + 64)
    return nodes_ok and items_ok and adj_ok


@njit(**JIT)
def _split(t, pos, geo, leaf):
    """[Koch2020] Sec. 3.1.1 ``split``: eight children, items handed down, adjacency of the
    children (siblings + the touching neighbours of ``leaf``) and of the neighbours updated."""
    node, items, items_st, adj, adj_st, hinfo = (t.node, t.items, t.items_st, t.adj, t.adj_st,
                                                 t.hinfo)
    minblock = t.meta[M_MINBLOCK]
    D = t.meta[M_D]
    d = node[leaf, DEPTH]
    half = np.int64(1) << (D - d - 1)
    c0 = alloc(node, t.node_st, 3)  # eight contiguous rows
    for i in range(8):
        c = c0 + i
        node[c, PARENT] = leaf
        node[c, CHILD] = -1
        node[c, DEPTH] = d + 1
        node[c, CX] = node[leaf, CX] + (i & 1) * half
        node[c, CY] = node[leaf, CY] + ((i >> 1) & 1) * half
        node[c, CZ] = node[leaf, CZ] + ((i >> 2) & 1) * half
        node[c, COUNT] = 0
        node[c, IBEG] = -1
        node[c, ICAP] = 0
        node[c, ILEN] = 0
        node[c, ABEG] = -1
        node[c, ACAP] = 0
        node[c, ALEN] = 0
        node[c, MARK] = 0
    node[leaf, CHILD] = c0
    # adjacency: all octants of one cube touch each other at its centre
    for i in range(8):
        for j in range(i + 1, 8):
            _connect(node, adj, adj_st, c0 + i, c0 + j)
    ab = node[leaf, ABEG]
    for e in range(node[leaf, ALEN]):
        x = adj[ab + e, 0]
        _adj_del(node, adj, x, adj[ab + e, 1])
        for i in range(8):
            if _touch(node, D, c0 + i, x):
                _connect(node, adj, adj_st, c0 + i, x)
    _free_block(adj, adj_st, ab, node[leaf, ACAP])
    node[leaf, ABEG] = -1
    node[leaf, ACAP] = 0
    node[leaf, ALEN] = 0
    # items
    ib = node[leaf, IBEG]
    sh = D - d - 1
    for k in range(node[leaf, ILEN]):
        h = items[ib + k]
        kx, ky, kz = _key(pos, h, geo)
        ci = ((kx >> sh) & 1) | (((ky >> sh) & 1) << 1) | (((kz >> sh) & 1) << 2)
        _item_push(node, items, items_st, hinfo, minblock, c0 + ci, h)
        node[c0 + ci, COUNT] += 1
    _free_block(items, items_st, ib, node[leaf, ICAP])
    node[leaf, IBEG] = -1
    node[leaf, ICAP] = 0
    node[leaf, ILEN] = 0
    t.meta[M_SPLITS] += 1


@njit(**JIT)
def _place(t, pos, geo, h, kx, ky, kz, a, stop):
    """Insert ``h`` below node ``a`` (splitting full leaves above the depth limit) and add one
    to the counts from its leaf up to, not including, ``stop``. Returns False, with ``h`` not
    placed and the tree valid, when the arenas need room first (splits done so far are kept:
    the retry descends through them)."""
    node = t.node
    D = t.meta[M_D]
    maxids = t.meta[M_MAXIDS]
    leaf = _find_leaf(node, D, a, kx, ky, kz)
    while node[leaf, DEPTH] < D and node[leaf, ILEN] >= maxids:
        if not _room_split(t, leaf):
            return False
        _split(t, pos, geo, leaf)
        leaf = _find_leaf(node, D, leaf, kx, ky, kz)
    if node[leaf, ILEN] == node[leaf, ICAP]:
        if not has_room(t.items, t.items_st, max(2 * node[leaf, ICAP], t.meta[M_MINBLOCK])):
            return False
    _item_push(node, t.items, t.items_st, t.hinfo, t.meta[M_MINBLOCK], leaf, h)
    x = leaf
    while x != stop:
        node[x, COUNT] += 1
        x = node[x, PARENT]
    return True


@njit(**JIT)
def _insert_many(t, pos, geo, handles, start):
    """Insert ``handles[start:]`` from the root; returns how far it got (early: needs room)."""
    for i in range(start, handles.shape[0]):
        h = handles[i]
        kx, ky, kz = _key(pos, h, geo)
        if not _place(t, pos, geo, h, kx, ky, kz, 0, -1):
            return i
    return handles.shape[0]


@njit(**JIT)
def _remove_many(t, handles, pend):
    """Swap-remove each handle from its leaf, counts down to the root; parents that fell to
    ``max_ids`` or less are queued in ``pend`` for collapse. Returns the queue length."""
    node, hinfo = t.node, t.hinfo
    maxids = t.meta[M_MAXIDS]
    npend = 0
    for i in range(handles.shape[0]):
        h = handles[i]
        leaf = hinfo[h, 0]
        _item_del(node, t.items, hinfo, leaf, hinfo[h, 1])
        hinfo[h, 0] = -1
        hinfo[h, 1] = -1
        x = leaf
        while x >= 0:
            node[x, COUNT] -= 1
            x = node[x, PARENT]
        p = node[leaf, PARENT]
        if p >= 0 and node[p, COUNT] <= maxids:
            pend[npend] = p
            npend += 1
    return npend


@njit(**JIT)
def _move_many(t, pos, geo, members, start, pend, npend):
    """Incremental update ([WindolphUschakov2023] Sec. 4.2, without their double count):
    a particle whose centre left its leaf is taken out, counts go down to the lowest ancestor
    ``a`` containing its new centre, and it is placed again below ``a``. Returns (how far it
    got, queue length); parents that fell to ``max_ids`` or less are queued for collapse.
    A particle taken out but not yet placed when the arenas ran out of room is marked by
    ``hinfo[h, 0] == -1``; the next call resumes it from ``meta[M_RESUME]``."""
    node, hinfo, meta = t.node, t.hinfo, t.meta
    D = meta[M_D]
    maxids = meta[M_MAXIDS]
    for i in range(start, members.shape[0]):
        h = members[i]
        kx, ky, kz = _key(pos, h, geo)
        leaf = hinfo[h, 0]
        if leaf < 0:
            a = meta[M_RESUME]
        else:
            if _contains(node, D, leaf, kx, ky, kz):
                continue
            a = node[leaf, PARENT]
            while not _contains(node, D, a, kx, ky, kz):
                a = node[a, PARENT]
            _item_del(node, t.items, hinfo, leaf, hinfo[h, 1])
            hinfo[h, 0] = -1
            hinfo[h, 1] = -1
            x = leaf
            while x != a:
                node[x, COUNT] -= 1
                x = node[x, PARENT]
            p = node[leaf, PARENT]
            if p != a and node[p, COUNT] <= maxids:
                pend[npend] = p
                npend += 1
        if not _place(t, pos, geo, h, kx, ky, kz, a, a):
            meta[M_RESUME] = a
            return i, npend
        meta[M_MOVES] += 1
    return members.shape[0], npend


@njit(**JIT)
def _subtree_leaves(node, p, stack, out):
    """Leaves below internal node ``p`` into ``out``; returns their number."""
    ns = 0
    nl = 0
    stack[ns] = p
    ns += 1
    while ns > 0:
        ns -= 1
        x = stack[ns]
        c0 = node[x, CHILD]
        for i in range(8):
            c = c0 + i
            if node[c, CHILD] >= 0:
                stack[ns] = c
                ns += 1
            else:
                out[nl] = c
                nl += 1
    return nl


@njit(**JIT)
def _collapse(t, p, leaves, nl, outside):
    """Move the items of the subtree below ``p`` (count <= max_ids) into ``p``; every outside
    leaf adjacent to some leaf of the subtree becomes adjacent to ``p`` once. The caller then
    frees the subtree's nodes and makes ``p`` a leaf."""
    node, items, items_st, adj, adj_st, hinfo, meta = t.node, t.items, t.items_st, t.adj, \
        t.adj_st, t.hinfo, t.meta
    D = meta[M_D]
    meta[M_STAMP] += 1
    stamp = meta[M_STAMP]
    # p (internal) has no item block and no adjacency list
    node[p, IBEG] = alloc(items, t.items_st, size_class(t.items_st, meta[M_MINBLOCK]))
    node[p, ICAP] = meta[M_MINBLOCK]
    node[p, ILEN] = 0
    if outside > 0:
        c = size_class(t.adj_st, max(outside, 8))
        node[p, ABEG] = alloc(adj, t.adj_st, c)
        node[p, ACAP] = t.adj_st[UNIT] << c
    node[p, ALEN] = 0
    for q in range(nl):
        lf = leaves[q]
        ib = node[lf, IBEG]
        for k in range(node[lf, ILEN]):
            _item_push(node, items, items_st, hinfo, meta[M_MINBLOCK], p, items[ib + k])
        _free_block(items, items_st, ib, node[lf, ICAP])
        ab = node[lf, ABEG]
        for e in range(node[lf, ALEN]):
            x = adj[ab + e, 0]
            if _inside_box(node, D, x, p):
                continue  # inside the subtree: disappears with it
            _adj_del(node, adj, x, adj[ab + e, 1])
            if node[x, MARK] != stamp:
                node[x, MARK] = stamp
                _connect(node, adj, adj_st, p, x)
        _free_block(adj, adj_st, ab, node[lf, ACAP])


@njit(**JIT)
def _free_subtree(t, p, stack):
    """Return every node block below ``p`` to the arena (called before ``p`` is a leaf)."""
    node = t.node
    ns = 0
    stack[ns] = p
    ns += 1
    while ns > 0:
        ns -= 1
        x = stack[ns]
        c0 = node[x, CHILD]
        for i in range(8):
            if node[c0 + i, CHILD] >= 0:
                stack[ns] = c0 + i
                ns += 1
        for i in range(8):
            node[c0 + i, DEPTH] = -1  # dead (CHILD is still read when the node is popped)
        free(node, t.node_st, c0, 3)


@njit(**JIT)
def _collapse_many(t, pend, npend, start, stack, leaves):
    """Collapse, for each queued node, its highest ancestor with count <= max_ids
    ([WindolphUschakov2023] Sec. 4.1). Returns how far it got (early: needs room)."""
    node, adj = t.node, t.adj
    D = t.meta[M_D]
    maxids = t.meta[M_MAXIDS]
    for i in range(start, npend):
        p = pend[i]
        if node[p, DEPTH] < 0 or node[p, CHILD] < 0 or node[p, COUNT] > maxids:
            continue  # freed by an earlier collapse, already a leaf, or refilled
        while node[p, PARENT] >= 0 and node[node[p, PARENT], COUNT] <= maxids:
            p = node[p, PARENT]
        nl = _subtree_leaves(node, p, stack, leaves)
        outside = 0
        for q in range(nl):
            lf = leaves[q]
            ab = node[lf, ABEG]
            for e in range(node[lf, ALEN]):
                if not _inside_box(node, D, adj[ab + e, 0], p):
                    outside += 1
        items_ok = has_room(t.items, t.items_st, t.meta[M_MINBLOCK])
        adj_ok = has_room(adj, t.adj_st, 2 * max(outside, 8))
        if not (items_ok and adj_ok):
            return i
        _collapse(t, p, leaves, nl, outside)
        _free_subtree(t, p, stack)
        node[p, CHILD] = -1
        t.meta[M_COLLAPSES] += 1
    return npend


# ================================================================== queries
@njit(**JIT)
def _octree_pairs(out, node, items, adj, ntop):
    """Same-leaf pairs plus pairs with each adjacent leaf of higher index (each pair once)."""
    k = 0
    for a in range(ntop):
        if node[a, DEPTH] < 0 or node[a, CHILD] >= 0:
            continue
        na = node[a, ILEN]
        if na == 0:
            continue
        ba = node[a, IBEG]
        for i in range(na):
            for j in range(i + 1, na):
                if k < out.shape[0]:
                    out[k, 0] = items[ba + i]
                    out[k, 1] = items[ba + j]
                k += 1
        ab = node[a, ABEG]
        for e in range(node[a, ALEN]):
            b = adj[ab + e, 0]
            if b < a:
                continue
            nb = node[b, ILEN]
            if nb == 0:
                continue
            bb = node[b, IBEG]
            for i in range(na):
                hi = items[ba + i]
                for j in range(nb):
                    if k < out.shape[0]:
                        out[k, 0] = hi
                        out[k, 1] = items[bb + j]
                    k += 1
    return k


@njit(**JIT)
def _tree_stats(node, ntop):
    """(nodes, leaves, non-empty leaves, deepest leaf depth, adjacency entries)."""
    nodes = 0
    leaves = 0
    full = 0
    depth = 0
    nadj = 0
    for a in range(ntop):
        if node[a, DEPTH] < 0:
            continue
        nodes += 1
        if node[a, CHILD] < 0:
            leaves += 1
            nadj += node[a, ALEN]
            if node[a, ILEN] > 0:
                full += 1
            if node[a, DEPTH] > depth:
                depth = node[a, DEPTH]
    return nodes, leaves, full, depth, nadj


# ================================================================== the structure
class Octree(BroadPhase):
    """Octree with stored adjacency and split/collapse updates ([Koch2020] Sec. 2.4, 3.1;
    [WindolphUschakov2023] Sec. 4).

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``).

    Best for very inhomogeneous scenes (dense clusters in a large empty domain); prefer
    ``linked_cells`` for homogeneous ones and ``hash_grid`` for wide size ranges.
    """

    name = "octree"

    params = {
        "max_ids": Param("integer", 11, "a leaf splits when an insertion would give it more "
                         "items (11: [Koch2020])", lo=1),
        "max_depth": Param("integer", 10, "depth limit, further lowered so that no leaf is "
                           "smaller than the largest diameter (10: [Koch2020] Table 3)", lo=0,
                           hi=DEPTH_LIMIT),
        "update": UPDATE,
    }

    def __init__(self, **given):
        super().__init__(**given)
        self.max_ids = self.settings["max_ids"]
        self.max_depth = self.settings["max_depth"]
        self.update_strategy = self.settings["update"]
        self._minblock = 1 << max(1, math.ceil(math.log2(self.max_ids + 1)))
        self._rebuilds = 0
        self._t = self._new_tree(64, 256, 1024, np.full((0, 2), -1, np.int64))
        self._reset_geometry(np.zeros(3), 1.0, 0, 1.0)
        self._valid = False  # no root chosen yet: the next insert/update builds one

    # -------------------------------------------------------------- storage
    @staticmethod
    def _new_tree(nodes: int, items: int, adj: int, hinfo: np.ndarray) -> Tree:
        return Tree(node=np.zeros((nodes, NF), np.int64), node_st=new_state(),
                    items=np.zeros(items, np.int64), items_st=new_state(),
                    adj=np.zeros((adj, 2), np.int32), adj_st=new_state(),
                    meta=np.zeros(META, np.int64), hinfo=hinfo)

    def _reset_geometry(self, lo, u: float, depth: int, scale: float) -> None:
        """Empty tree: root leaf 0 covering [lo, lo + u * 2**depth)^3, finest cell ``u``."""
        self._geo = np.array([lo[0], lo[1], lo[2], 1.0 / u, u, float(2**depth)])
        self._D = depth
        self._u = u
        self._scale = scale
        t = self._t
        for st in (t.node_st, t.items_st, t.adj_st):
            reset(st)
        m = t.meta
        kept = m[M_SPLITS:M_MOVES + 1].copy()  # cumulative counters survive a new root
        m[:] = 0
        m[M_SPLITS:M_MOVES + 1] = kept
        m[M_D] = depth
        m[M_MAXIDS] = self.max_ids
        m[M_MINBLOCK] = self._minblock
        root = bump(t.node_st, 1)
        t.node[root] = 0
        t.node[root, PARENT] = -1
        t.node[root, CHILD] = -1
        t.node[root, IBEG] = -1
        t.node[root, ABEG] = -1
        self._stack = np.zeros(8 * (depth + 2), np.int64)

    def _ensure_handles(self) -> None:
        cap = self._pos.shape[0]
        old = self._t.hinfo
        if old.shape[0] < cap:
            hinfo = np.full((max(cap, 2 * old.shape[0]), 2), -1, np.int64)
            hinfo[: old.shape[0]] = old
            self._t = self._t._replace(hinfo=hinfo)

    def _grow(self) -> None:
        """The arenas a stopped kernel asked room in (grow-and-resume, ``_arena``)."""
        t = self._t
        self._t = t._replace(node=grown(t.node, t.node_st), items=grown(t.items, t.items_st),
                             adj=grown(t.adj, t.adj_st))

    def _safe(self, rmax: float, scale: float) -> float:
        """Smallest admissible finest cell for largest radius ``rmax`` at coordinates up to
        ``scale`` (ulp margin of ``safe_cell_size``: round-off never skips a cell)."""
        return safe_cell_size(2.0 * rmax, np.array([[scale, 0.0, 0.0]]), np.zeros(1, np.int64))

    # -------------------------------------------------------------- build
    def _rebuild(self) -> None:
        """New root: the residents' bounding cube (plus slack), depth limited so that leaves
        are never smaller than the largest diameter; then insert every resident."""
        members = self.members
        self._ensure_handles()
        self._rebuilds += 1
        n = members.shape[0]
        if n == 0:
            self._reset_geometry(np.zeros(3), 1.0, 0, 1.0)
            self._valid = False
            return
        rmax = max_radius(self._rad, members)
        lo, hi = bounding_box(self._pos, members)
        extent = float(np.max(hi - lo))
        pad = ROOT_SLACK * extent + 2.0 * rmax
        lo = lo - pad
        side = extent + 2.0 * pad
        scale = float(np.max(np.abs(lo))) + side + 4.0 * rmax
        s = self._safe(rmax, scale)
        depth = 0
        if side > s:
            depth = min(self.max_depth, int(math.floor(math.log2(side / s))))
            while depth > 0 and side / 2.0**depth < s:  # log2 round-off
                depth -= 1
        u = max(side / 2.0**depth, s)
        # storage guess: ~N/4 nodes, items with slack, ~30 adjacency entries per leaf
        nodes = max(64, n // 2)
        if nodes >= 2**31 // 64:
            raise BroadPhaseError(f"octree: {n} residents exceed the int32 adjacency arena")
        if self._t.node.shape[0] < nodes or self._t.items.shape[0] < 2 * n:
            self._t = self._new_tree(nodes, 2 * n + 64, 32 * nodes, self._t.hinfo)
        self._reset_geometry(lo, u, depth, scale)
        self._t.hinfo[members] = -1
        self._valid = True
        order = np.argsort(_morton_codes(self._pos, members, self._geo, depth), kind="stable")
        self._run_insert(members[order])

    def _run_insert(self, handles: np.ndarray) -> None:
        run_resumable(lambda i: _insert_many(self._t, self._pos, self._geo, handles, i),
                      handles.shape[0], self._grow)

    def _collapse_pending(self, pend: np.ndarray, npend: int) -> None:
        def step(i):
            leaves = np.empty(self._t.node.shape[0], np.int64)
            return _collapse_many(self._t, pend, npend, i, self._stack, leaves)

        if npend:
            run_resumable(step, npend, self._grow)

    def _fits(self, handles: np.ndarray) -> bool:
        """Do ``handles`` fit the current root (centres inside, diameters <= finest cell)?"""
        if not self._valid:
            return False
        inside, rmax = _fits(self._pos, self._rad, handles, self._geo)
        return bool(inside) and self._safe(rmax, self._scale) <= self._u

    # -------------------------------------------------------------- protocol
    def _build(self, handles):
        self._rebuild()

    def _insert(self, handles):
        self._ensure_handles()
        if not self._fits(handles):
            self._rebuild()  # members already include ``handles``
            return
        self._run_insert(handles)

    def _remove(self, handles):
        self._ensure_handles()
        if not self._valid:
            return
        pend = np.empty(handles.shape[0], np.int64)
        npend = _remove_many(self._t, handles, pend)
        self._collapse_pending(pend, npend)

    def _update(self):
        self._ensure_handles()
        members = self.members
        if self.update_strategy == "rebuild" or not self._valid:
            self._rebuild()
            return
        inside, rmax = _fits(self._pos, self._rad, members, self._geo)
        s = self._safe(rmax, self._scale)
        if not inside or s > self._u:
            self._rebuild()  # a centre left the root cube, or radii grew beyond the leaf size
            return
        if self._D < self.max_depth and self._u >= 4.0 * s:
            self._rebuild()  # largest particle shrank/left: finer leaves are allowed now
            return
        pend = np.empty(members.shape[0], np.int64)
        npend = 0

        def step(i):
            nonlocal npend
            i, npend = _move_many(self._t, self._pos, self._geo, members, i, pend, npend)
            return i

        run_resumable(step, members.shape[0], self._grow)
        self._collapse_pending(pend, npend)

    def _pairs(self):
        if not self._valid or self._n == 0:
            return np.zeros((0, 2), PAIR_DTYPE)
        t = self._t
        return run_pair_kernel(
            _octree_pairs, t.node, t.items, t.adj, int(t.node_st[TOP]),
            guess=max(self._candidates, 8 * self._n) + 16,
        )

    def _memory_bytes(self):
        t = self._t
        return int(sum(a.nbytes for a in t))

    def _stats(self):
        t = self._t
        nodes, leaves, full, depth, nadj = _tree_stats(t.node, int(t.node_st[TOP]))
        return {
            "nodes": int(nodes),
            "leaves": int(leaves),
            "nonempty_leaves": int(full),
            "depth": int(depth),
            "depth_limit": int(self._D),
            "leaf_min_size": float(self._u),
            "adjacency_entries": int(nadj),
            "update": self.update_strategy,
            "rebuilds": self._rebuilds,
            "splits": int(t.meta[M_SPLITS]),
            "collapses": int(t.meta[M_COLLAPSES]),
            "moves": int(t.meta[M_MOVES]),
        }
