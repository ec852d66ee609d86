"""Compact hashing ([Ihmsen2011] Sec. 4.5): handle table + compact list of used cells.

Spatial cells (edge ≥ largest diameter, int64 coordinates) are hashed with Teschner's prime XOR
hash ([Teschner2003]) into a table of ``m ≈ table_factor · N`` (default 4 N) *handles*; a
handle is the index of a *used cell* in a compact list, or −1. A used cell exists only while it
holds particles; it owns a segment of a handle pool (an arena block, moved to a block twice the
size when full) and a hash-collision flag, set when its particles come from more than one
spatial cell. Each table entry also carries a 32-bit tag of its used cell's spatial cell (or
"collided"), so a neighbour lookup that lands on another cell's bucket is rejected without
touching the used cell. Insert and remove are O(1) amortised (swap-remove inside the segment;
an emptied used cell returns its segment to the pool and is swap-removed from the compact list,
its table handle redirected). ``update`` recomputes every particle's spatial cell and moves
only the particles whose cell changed (Ihmsen: ~2 % per step); the cell size is only re-chosen
(full rebuild) when radii or coordinates leave the range it is exact for. At each (re)build the
compact list is ordered row-major by cell for locality (Ihmsen reorders along a Z-curve every
100 steps).

The query walks the compact list only (not the table). A used cell without collision flag
holds one spatial cell, whose 13 forward neighbour cells are hashed once. A flagged used cell
is first sorted by spatial cell (insertion sort, cheap on the mostly sorted segments of the
previous step) and each run of one spatial cell is treated the same way; lookups take only the
run of the spatial cell asked for, so colliding cells never produce candidates and every pair
of neighbouring spatial cells is visited exactly once.

Choose it for large or unbounded domains and for simulations with temporal coherence (few
particles change cell per step, with residents inserted/removed one by one): memory scales with
N, not with the domain (~180 B per particle at the default table), and an update costs one
pass plus the moved particles. Ihmsen Table 2 finds it faster than plain spatial hashing; the
gain grows with the number of particles per occupied cell (neighbour cells are hashed once per
cell, not per particle) — on a sparse scene with about one particle per cell the two query
equally fast. For dense boxes ``linked_cells`` has less overhead; with radii spanning more
than a factor of ~4 prefer ``hash_grid``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .._jit import JIT
from ..cell_index import teschner_hash
from ._arena import (TOP, UNIT, aligned, alloc, bump, free, grown, has_block, has_room,
                     new_state, run_resumable, size_class)
from ._kernels import HALF_STENCIL, run_pair_kernel
from .base import BroadPhase
from .params import CELL_SIZE, TABLE_SIZE, Param
from .spatial_hash import MIN_TABLE, CellSizing, cell_of, extent, next_prime

#: pool segment of a newly used cell (Ihmsen's k), the class-0 block of the pool arena
K0 = 2
#: default handle-table size / N (Ihmsen: the handle table is cheap, make it large enough
#: for few collisions)
TABLE_FACTOR = 4.0
# used-cell record columns (one int64 row of 8 = one cache line per used cell)
START, CAP, COUNT, BUCKET, FLAG, CX, CY, CZ = range(8)
#: table entries: -1 (empty) or ``used index << 32 | tag``; the tag is a 32-bit fingerprint of
#: the used cell's spatial cell, or ANY when the collision flag is set. A lookup whose tag
#: differs skips the used cell without touching it (most lookups of an empty neighbour cell
#: that collides with an occupied one).
ANY = np.int64(0xFFFFFFFF)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_LOW = np.int64(0xFFFFFFFF)


# ---------------------------------------------------------------- table entries
@njit(**JIT)
def _bucket_tag(kx, ky, kz, m):
    """(bucket, tag) of a spatial cell for a table of size ``m``."""
    h = teschner_hash(kx, ky, kz)
    tag = np.int64((h * _GOLD) >> np.uint64(32))
    if tag == ANY:
        tag = ANY - 1
    return np.int64(h % np.uint64(m)), tag


@njit(**JIT)
def _entry(used, u, m):
    """Table entry for used cell ``u`` (from its record: flag, cell)."""
    if used[u, FLAG] != 0:
        return (u << 32) | ANY
    _, tag = _bucket_tag(used[u, CX], used[u, CY], used[u, CZ], m)
    return (u << 32) | tag


# ---------------------------------------------------------------- kernels
# State (``Cells``): ``used`` is the compact list of used cells (a dense arena: its TOP is the
# number of used cells); ``pool`` is an arena of handle segments, one block per used cell (class
# c holds K0 << c handles); ``slot[h]`` is h's place in the pool and ``hcell[h]`` its spatial
# cell (what ``update`` compares against). The kernels take the record and unpack it once; the
# per-particle helpers take the arrays themselves (passing the record to them, i.e. taking the
# arrays out of it in every call, made an update ~1.7x slower, measured).
Cells = namedtuple("Cells", "table used used_st pool pool_st slot hcell")


@njit(**JIT)
def _build_kernel(c, pos, members, inv):
    """Fill an empty structure from ``members`` in one pass (counting per bucket); used cells
    are created in the order of ``members`` and their segments laid out one after the other
    (the arrays were sized for it: segments need at most 4 N entries)."""
    table, used, used_st, pool, pool_st, slot, hcell = c
    n = members.shape[0]
    ucell = np.empty(n, np.int64)
    m = table.shape[0]
    for t in range(n):
        h = members[t]
        kx, ky, kz = cell_of(pos, h, inv)
        hcell[h, 0], hcell[h, 1], hcell[h, 2] = kx, ky, kz
        b, _ = _bucket_tag(kx, ky, kz, m)
        u = table[b]
        if u < 0:
            u = bump(used_st, 1)
            table[b] = u
            used[u, COUNT] = 0
            used[u, BUCKET] = b
            used[u, FLAG] = 0
            used[u, CX], used[u, CY], used[u, CZ] = kx, ky, kz
        elif used[u, CX] != kx or used[u, CY] != ky or used[u, CZ] != kz:
            used[u, FLAG] = 1
        used[u, COUNT] += 1
        ucell[t] = u
    for u in range(used_st[TOP]):
        cap = pool_st[UNIT] << size_class(pool_st, used[u, COUNT] + 1)
        used[u, START] = bump(pool_st, cap)
        used[u, CAP] = cap
        used[u, COUNT] = 0
        table[used[u, BUCKET]] = _entry(used, u, m)
    for t in range(n):
        u = ucell[t]
        e = used[u, START] + used[u, COUNT]
        used[u, COUNT] += 1
        h = members[t]
        pool[e] = h
        slot[h] = e


@njit(**JIT)
def _has_room_for(table, used, used_st, pool, pool_st, kx, ky, kz):
    """Can a particle join the used cell of (kx, ky, kz) without growing an arena? If not, the
    arenas ask for the room."""
    b, _ = _bucket_tag(kx, ky, kz, table.shape[0])
    if table[b] < 0:
        list_ok = has_room(used, used_st, 1)
        return has_block(pool, pool_st, 0) and list_ok
    u = table[b] >> 32
    if used[u, COUNT] < used[u, CAP]:
        return True
    return has_block(pool, pool_st, size_class(pool_st, 2 * used[u, CAP]))


@njit(**JIT)
def _add(table, used, used_st, pool, pool_st, slot, hcell, h, kx, ky, kz):
    """Put ``h`` into the used cell of (kx, ky, kz); caller made sure of ``_has_room_for``."""
    b, tag = _bucket_tag(kx, ky, kz, table.shape[0])
    if table[b] < 0:  # first particle of this bucket: a new used cell
        u = bump(used_st, 1)
        table[b] = (u << 32) | tag
        used[u, START] = alloc(pool, pool_st, 0)
        used[u, CAP] = pool_st[UNIT]
        used[u, COUNT] = 0
        used[u, BUCKET] = b
        used[u, FLAG] = 0
        used[u, CX], used[u, CY], used[u, CZ] = kx, ky, kz
    else:
        u = table[b] >> 32
        if used[u, FLAG] == 0 and not (
            used[u, CX] == kx and used[u, CY] == ky and used[u, CZ] == kz
        ):
            used[u, FLAG] = 1  # a second spatial cell in this bucket
            table[b] = (u << 32) | ANY
        if used[u, COUNT] == used[u, CAP]:  # move the segment to a block twice the size
            s, cap = used[u, START], used[u, CAP]
            cls = size_class(pool_st, cap)
            new = alloc(pool, pool_st, cls + 1)
            for e in range(cap):
                pool[new + e] = pool[s + e]
                slot[pool[new + e]] = new + e
            free(pool, pool_st, s, cls)
            used[u, START] = new
            used[u, CAP] = 2 * cap
    e = used[u, START] + used[u, COUNT]
    used[u, COUNT] += 1
    pool[e] = h
    slot[h] = e
    hcell[h, 0], hcell[h, 1], hcell[h, 2] = kx, ky, kz


@njit(**JIT)
def _take(table, used, used_st, pool, pool_st, slot, hcell, h):
    """Remove ``h`` from its used cell (swap-remove); drop the used cell if emptied (its
    segment back to the pool, the last used cell into its place in the compact list)."""
    m = table.shape[0]
    b, _ = _bucket_tag(hcell[h, 0], hcell[h, 1], hcell[h, 2], m)
    u = table[b] >> 32
    e = slot[h]
    last = used[u, START] + used[u, COUNT] - 1
    if e != last:
        pool[e] = pool[last]
        slot[pool[e]] = e
    used[u, COUNT] -= 1
    slot[h] = -1
    if used[u, COUNT] == 0:
        free(pool, pool_st, used[u, START], size_class(pool_st, used[u, CAP]))
        table[b] = -1
        used_st[TOP] -= 1
        nused = used_st[TOP]
        if u != nused:
            used[u, :] = used[nused, :]
            table[used[u, BUCKET]] = _entry(used, u, m)


@njit(**JIT)
def _insert_kernel(c, pos, handles, first, inv):
    """Insert ``handles[first:]``; returns how far it got (early: an arena needs room)."""
    table, used, used_st, pool, pool_st, slot, hcell = c
    for t in range(first, handles.shape[0]):
        h = handles[t]
        kx, ky, kz = cell_of(pos, h, inv)
        if not _has_room_for(table, used, used_st, pool, pool_st, kx, ky, kz):
            return t
        _add(table, used, used_st, pool, pool_st, slot, hcell, h, kx, ky, kz)
    return handles.shape[0]


@njit(**JIT)
def _remove_kernel(c, handles):
    table, used, used_st, pool, pool_st, slot, hcell = c
    for t in range(handles.shape[0]):
        _take(table, used, used_st, pool, pool_st, slot, hcell, handles[t])


@njit(**JIT)
def _update_kernel(c, pos, members, first, inv):
    """Move the particles whose spatial cell changed (from ``members[first:]``). Returns (how
    far it got (early: an arena needs room), particles moved)."""
    table, used, used_st, pool, pool_st, slot, hcell = c
    moved = 0
    for t in range(first, members.shape[0]):
        h = members[t]
        kx, ky, kz = cell_of(pos, h, inv)
        if hcell[h, 0] != kx or hcell[h, 1] != ky or hcell[h, 2] != kz:
            if not _relabel(table, used, hcell, h, kx, ky, kz):
                if not _has_room_for(table, used, used_st, pool, pool_st, kx, ky, kz):
                    return t, moved
                _take(table, used, used_st, pool, pool_st, slot, hcell, h)
                _add(table, used, used_st, pool, pool_st, slot, hcell, h, kx, ky, kz)
            moved += 1
    return members.shape[0], moved


@njit(**JIT)
def _relabel(table, used, hcell, h, kx, ky, kz):
    """If ``h`` is alone in its used cell and the bucket of (kx, ky, kz) is empty, move the
    whole used cell there (the common move in a sparse scene: no pool access, the compact list
    unchanged) and return True; else change nothing and return False."""
    m = table.shape[0]
    b, _ = _bucket_tag(hcell[h, 0], hcell[h, 1], hcell[h, 2], m)
    u = table[b] >> 32
    b2, tag2 = _bucket_tag(kx, ky, kz, m)
    if used[u, COUNT] != 1 or table[b2] >= 0:
        return False
    table[b] = -1
    table[b2] = (u << 32) | tag2
    used[u, BUCKET] = b2
    used[u, FLAG] = 0
    used[u, CX], used[u, CY], used[u, CZ] = kx, ky, kz
    hcell[h, 0], hcell[h, 1], hcell[h, 2] = kx, ky, kz
    return True


@njit(**JIT)
def _cell_less(hcell, h, g):
    """Lexicographic order of the spatial cells of handles ``h`` and ``g``."""
    for c in range(3):
        if hcell[h, c] != hcell[g, c]:
            return hcell[h, c] < hcell[g, c]
    return False


@njit(**JIT)
def _sort_collided(table, used, nused, pool, slot, hcell):
    """For used cells with the collision flag: sort the segment by spatial cell (insertion
    sort; segments are short and mostly sorted from the last query) so that each spatial cell
    is a contiguous run, and clear the flag where only one spatial cell is left."""
    for u in range(nused):
        if used[u, FLAG] == 0:
            continue
        s, n = used[u, START], used[u, COUNT]
        for e in range(s + 1, s + n):
            h = pool[e]
            f = e
            while f > s and _cell_less(hcell, h, pool[f - 1]):
                pool[f] = pool[f - 1]
                slot[pool[f]] = f
                f -= 1
            if f != e:
                pool[f] = h
                slot[h] = f
        a, z = pool[s], pool[s + n - 1]
        if not (_cell_less(hcell, a, z) or _cell_less(hcell, z, a)):
            # sorted: first == last means a single spatial cell
            used[u, FLAG] = 0
            used[u, CX], used[u, CY], used[u, CZ] = hcell[a, 0], hcell[a, 1], hcell[a, 2]
            table[used[u, BUCKET]] = _entry(used, u, table.shape[0])


@njit(**JIT)
def _compact_pairs(out, table, used, nused, pool, hcell, stencil, counters):
    """Walk the compact list; each run of one spatial cell (the whole segment unless the
    collision flag is set) pairs within itself and with its 13 forward neighbour cells, whose
    hashes are computed once per run; a lookup takes only the run of the cell asked for.
    ``counters`` ← [entries skipped as hash collisions (after a tag match), flagged used
    cells, lookups rejected by the table tag alone]. (One flat loop: a helper call or an
    array counter in the inner loop costs ~2x here.)"""
    m = table.shape[0]
    k = 0
    skipped = 0
    tag_skips = 0
    flagged_cells = 0
    for u in range(nused):
        s = used[u, START]
        e = s + used[u, COUNT]
        flagged = used[u, FLAG] != 0
        r0 = s
        r1 = e
        kx, ky, kz = used[u, CX], used[u, CY], used[u, CZ]
        if flagged:
            flagged_cells += 1
        while r0 < e:
            if flagged:  # segment sorted by cell: [r0, r1) is one spatial cell
                h = pool[r0]
                kx, ky, kz = hcell[h, 0], hcell[h, 1], hcell[h, 2]
                r1 = r0 + 1
                while r1 < e:
                    g = pool[r1]
                    if hcell[g, 0] != kx or hcell[g, 1] != ky or hcell[g, 2] != kz:
                        break
                    r1 += 1
            for a in range(r0, r1):
                for b in range(a + 1, r1):
                    if k < out.shape[0]:
                        out[k, 0] = pool[a]
                        out[k, 1] = pool[b]
                    k += 1
            for o in range(stencil.shape[0]):
                x2 = kx + stencil[o, 0]
                y2 = ky + stencil[o, 1]
                z2 = kz + stencil[o, 2]
                b2, tag2 = _bucket_tag(x2, y2, z2, m)
                t2 = table[b2]
                if t2 < 0:
                    continue
                tg = t2 & _LOW
                if tg != ANY and tg != tag2:
                    tag_skips += 1  # another (single) spatial cell: not even looked at
                    continue
                u2 = t2 >> 32
                s2 = used[u2, START]
                e2 = s2 + used[u2, COUNT]
                if tg != ANY:
                    if used[u2, CX] != x2 or used[u2, CY] != y2 or used[u2, CZ] != z2:
                        skipped += e2 - s2
                        continue
                else:  # find the run of (x2, y2, z2) in the sorted segment
                    b = s2
                    while b < e2:
                        g = pool[b]
                        if hcell[g, 0] == x2 and hcell[g, 1] == y2 and hcell[g, 2] == z2:
                            break
                        b += 1
                    skipped += b - s2
                    s2 = b
                    while b < e2:
                        g = pool[b]
                        if hcell[g, 0] != x2 or hcell[g, 1] != y2 or hcell[g, 2] != z2:
                            break
                        b += 1
                    skipped += e2 - b
                    e2 = b
                for a in range(r0, r1):
                    i = pool[a]
                    for b in range(s2, e2):
                        if k < out.shape[0]:
                            out[k, 0] = i
                            out[k, 1] = pool[b]
                        k += 1
            r0 = r1
    counters[0] = skipped
    counters[1] = flagged_cells
    counters[2] = tag_skips
    return k


@njit(**JIT)
def _row_major_keys(pos, members, inv):
    """Row-major (z, y, x) cell index of each member relative to the members' lowest cell,
    for ordering the compact list spatially at (re)build (Ihmsen orders it along a Z-curve);
    all zeros if the cell range does not fit in int64 (then no ordering)."""
    n = members.shape[0]
    cells = np.empty((n, 3), np.int64)
    lo = np.full(3, np.iinfo(np.int64).max)
    hi = np.full(3, np.iinfo(np.int64).min)
    for t in range(n):
        kx, ky, kz = cell_of(pos, members[t], inv)
        cells[t, 0], cells[t, 1], cells[t, 2] = kx, ky, kz
        for a in range(3):
            if cells[t, a] < lo[a]:
                lo[a] = cells[t, a]
            if cells[t, a] > hi[a]:
                hi[a] = cells[t, a]
    key = np.zeros(n, np.int64)
    if n == 0:
        return key
    span = 1.0
    for a in range(3):
        span *= float(hi[a] - lo[a] + 1)
    if span > 4.0e18:
        return key
    nx = hi[0] - lo[0] + 1
    ny = hi[1] - lo[1] + 1
    for t in range(n):
        key[t] = ((cells[t, 2] - lo[2]) * ny + (cells[t, 1] - lo[1])) * nx + (cells[t, 0] - lo[0])
    return key


# ---------------------------------------------------------------- class
class CompactHash(BroadPhase):
    """Ihmsen's compact hashing ([Ihmsen2011] Sec. 4.5): handle table → compact list of used
    cells.

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``).

    Choose it for large/unbounded domains and coherent motion (update moves only particles that
    changed cell); memory O(N + table). Prefer ``linked_cells`` for small dense boxes and
    ``hash_grid`` when radii span more than a factor of ~4.
    """

    name = "compact_hash"

    params = {"cell_size": CELL_SIZE, "table_size": TABLE_SIZE,
              "table_factor": Param("number", TABLE_FACTOR, "table entries per particle when "
                                    "table_size is not given", lo=0.25, hi=64.0)}

    def __init__(self, **given):
        super().__init__(**given)
        self.table_factor = self.settings["table_factor"]
        self._sizing = CellSizing(self.name, self.settings["cell_size"])
        self.table_size = self.settings["table_size"]
        self._c = self._new_cells(MIN_TABLE, 0, 0, np.zeros(0, np.int64),
                                  np.zeros((0, 3), np.int64))
        self._counters = np.zeros(3, np.int64)
        self._last_moved = 0
        self.counters = {"rebuilds": 0, "moved": 0, "inserted": 0, "removed": 0}

    # ------------------------------------------------------------ storage management
    @staticmethod
    def _new_cells(table: int, used: int, pool: int, slot, hcell) -> Cells:
        return Cells(table=np.full(table, -1, np.int64), used=aligned((used, 8), 0, np.int64),
                     used_st=new_state(), pool=np.empty(pool, np.int64),
                     pool_st=new_state(K0), slot=slot, hcell=hcell)

    def _ensure_slots(self):
        cap = self._pos.shape[0]
        c = self._c
        if c.slot.shape[0] < cap:
            slot = np.full(cap, -1, np.int64)
            slot[: c.slot.shape[0]] = c.slot
            hcell = np.zeros((cap, 3), np.int64)
            hcell[: c.hcell.shape[0]] = c.hcell
            self._c = c._replace(slot=slot, hcell=hcell)

    def _grow(self):
        """The arenas a stopped kernel asked room in (grow-and-resume, ``_arena``)."""
        c = self._c
        self._c = c._replace(used=grown(c.used, c.used_st), pool=grown(c.pool, c.pool_st))

    def _inv(self) -> float:
        return 1.0 / self._sizing.cell

    # ------------------------------------------------------------ protocol
    def _build(self, handles):
        members = self.members
        self._ensure_slots()
        self._c.slot[:] = -1
        dmax, scale = extent(self._pos, self._rad, members)
        self._sizing.choose(dmax, scale)
        n = members.shape[0]
        m = self.table_size or next_prime(max(MIN_TABLE, int(self.table_factor * n)))
        # segments need at most 4 n entries (capacity < 2 (count + 1) each)
        c = self._new_cells(m, n, max(4 * n, 64), self._c.slot, self._c.hcell)
        key = _row_major_keys(self._pos, members, self._inv())
        order = members[np.argsort(key)] if key.size else members
        _build_kernel(c, self._pos, order, self._inv())
        # the compact list holds the occupied cells only, pool and list with 25 % room to grow
        nused, top = int(c.used_st[TOP]), int(c.pool_st[TOP])
        used = aligned((nused + nused // 4 + 16, 8), 0, np.int64)
        used[:nused] = c.used[:nused]
        self._c = c._replace(used=used, pool=c.pool[: top + top // 4 + 64].copy())
        self.counters["rebuilds"] += 1

    def _needs_rebuild(self, handles) -> bool:
        dmax, scale = extent(self._pos, self._rad, handles)
        if dmax > self._sizing.dlim or scale > self._sizing.slim:
            return True
        # the table was sized table_factor·N: re-size once N has doubled (amortised O(1))
        return (self.table_size is None
                and self._n > 2.0 * self._c.table.shape[0] / self.table_factor)

    def _insert(self, handles):
        self._ensure_slots()
        if self._needs_rebuild(handles):
            self._build(None)
            return
        inv = self._inv()
        run_resumable(lambda t: _insert_kernel(self._c, self._pos, handles, t, inv),
                      handles.shape[0], self._grow)
        self.counters["inserted"] += int(handles.shape[0])

    def _remove(self, handles):
        _remove_kernel(self._c, handles)
        self.counters["removed"] += int(handles.shape[0])

    def _update(self):
        self._ensure_slots()
        members = self.members
        dmax, scale = extent(self._pos, self._rad, members)
        if not self._sizing.valid(dmax, scale):
            self._build(None)
            return
        inv = self._inv()
        moved = 0

        def step(t):
            nonlocal moved
            t, mv = _update_kernel(self._c, self._pos, members, t, inv)
            moved += mv
            return t

        run_resumable(step, members.shape[0], self._grow)
        self._last_moved = moved
        self.counters["moved"] += moved

    def _pairs(self):
        c = self._c
        nused = int(c.used_st[TOP])
        _sort_collided(c.table, c.used, nused, c.pool, c.slot, c.hcell)
        return run_pair_kernel(
            _compact_pairs, c.table, c.used, nused, c.pool, c.hcell, HALF_STENCIL,
            self._counters, guess=8 * self._n + 16,
        )

    def _memory_bytes(self):
        return int(sum(a.nbytes for a in self._c))

    def _stats(self):
        c = self._c
        return {
            "cell_size": self._sizing.cell,
            "table_size": int(c.table.shape[0]),
            "used_cells": int(c.used_st[TOP]),
            "used_capacity": int(c.used.shape[0]),
            "pool_entries": int(c.pool.shape[0]),
            "pool_top": int(c.pool_st[TOP]),
            "collision_skips": int(self._counters[0]),
            "collided_cells": int(self._counters[1]),
            "tag_skips": int(self._counters[2]),
            "last_moved": self._last_moved,
            **self.counters,
        }
