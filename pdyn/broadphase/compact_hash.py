"""Compact hashing (Ihmsen et al. 2011, Sec. 4.5): handle table + compact list of used cells.

Spatial cells (edge ≥ largest diameter, int64 coordinates) are hashed with Teschner's prime XOR
hash (see ``spatial_hash``) into a table of ``m ≈ 2 N`` *handles*; a handle is the index of a
*used cell* in a compact list, or −1. A used cell exists only while it holds particles; it owns
a contiguous segment of an entry pool (handle + spatial cell per entry, capacity doubled when
full) and a hash-collision flag, set when its particles come from more than one spatial cell.
Insert and remove are O(1) amortised (swap-remove inside the segment; an emptied used cell is
swap-removed from the compact list and its table handle redirected); the pool is compacted
when it runs out of space. ``update`` recomputes every particle's spatial cell and moves only
the particles whose cell changed (Ihmsen: ~2 % per step).

The query walks the compact list only (not the table). A used cell without collision flag
holds one spatial cell, whose 13 forward neighbour cells are hashed once. A flagged used cell
is first sorted by spatial cell (insertion sort, cheap on the mostly sorted segments of the
previous step) and each run of one spatial cell is treated the same way; lookups take only the
run of the spatial cell asked for, so colliding cells never produce candidates and every pair
of neighbouring spatial cells is visited exactly once.

Choose it for large or unbounded domains and for simulations with temporal coherence (few
particles change cell per step): memory scales with N, not with the domain (Ihmsen Table 2:
faster than plain spatial hashing, on par with Z-index sort). For dense boxes ``linked_cells``
has less overhead; with radii spanning more than a factor of ~4 prefer ``hash_grid``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import HALF_STENCIL, run_pair_kernel
from .base import BroadPhase, BroadPhaseError
from .spatial_hash import MIN_TABLE, CellSizing, _cell_of, _extent, _hash, next_prime

#: pool capacity reserved for a newly used cell (Ihmsen's k); doubled when full
K0 = 2
# used-cell record columns (one int64 row of 8 = one cache line per used cell)
START, CAP, COUNT, BUCKET, FLAG, CX, CY, CZ = range(8)


# ---------------------------------------------------------------- kernels
@njit(**JIT)
def _build_kernel(pos, members, inv, table, used, pool, slot):
    """Fill an empty structure from ``members`` in one pass (counting per bucket)."""
    n = members.shape[0]
    cells = np.empty((n, 3), np.int64)
    ucell = np.empty(n, np.int64)
    m = table.shape[0]
    nused = 0
    for t in range(n):
        kx, ky, kz = _cell_of(pos, members[t], inv)
        cells[t, 0], cells[t, 1], cells[t, 2] = kx, ky, kz
        b = _hash(kx, ky, kz, m)
        u = table[b]
        if u < 0:
            u = nused
            nused += 1
            table[b] = u
            used[u, COUNT] = 0
            used[u, BUCKET] = b
            used[u, FLAG] = 0
            used[u, CX], used[u, CY], used[u, CZ] = kx, ky, kz
        elif used[u, CX] != kx or used[u, CY] != ky or used[u, CZ] != kz:
            used[u, FLAG] = 1
        used[u, COUNT] += 1
        ucell[t] = u
    top = 0
    for u in range(nused):
        c = used[u, COUNT]
        cap = K0
        while cap < c + 1:
            cap *= 2
        used[u, START] = top
        used[u, CAP] = cap
        used[u, COUNT] = 0
        top += cap
    for t in range(n):
        u = ucell[t]
        e = used[u, START] + used[u, COUNT]
        used[u, COUNT] += 1
        h = members[t]
        pool[e, 0] = h
        pool[e, 1], pool[e, 2], pool[e, 3] = cells[t, 0], cells[t, 1], cells[t, 2]
        slot[h] = e
    return nused, top


@njit(**JIT)
def _pool_need(table, used, nused, kx, ky, kz):
    """Pool entries a new particle in cell (kx, ky, kz) may need (0 if its segment has room)."""
    u = table[_hash(kx, ky, kz, table.shape[0])]
    if u < 0:
        return K0
    if used[u, COUNT] < used[u, CAP]:
        return 0
    return 2 * used[u, CAP]


@njit(**JIT)
def _add(h, kx, ky, kz, table, used, nused, pool, top, slot):
    """Put ``h`` into the used cell of (kx, ky, kz); caller checked ``_pool_need`` fits.
    Returns (nused, top, garbage added)."""
    b = _hash(kx, ky, kz, table.shape[0])
    u = table[b]
    garbage = 0
    if u < 0:
        u = nused
        nused += 1
        table[b] = u
        used[u, START] = top
        used[u, CAP] = K0
        used[u, COUNT] = 0
        used[u, BUCKET] = b
        used[u, FLAG] = 0
        used[u, CX], used[u, CY], used[u, CZ] = kx, ky, kz
        top += K0
    else:
        if used[u, COUNT] == 0 or (
            used[u, CX] == kx and used[u, CY] == ky and used[u, CZ] == kz
        ):
            pass
        else:
            used[u, FLAG] = 1
        if used[u, COUNT] == used[u, CAP]:  # relocate the segment with doubled capacity
            s, c = used[u, START], used[u, CAP]
            for e in range(c):
                pool[top + e, :] = pool[s + e, :]
                slot[pool[top + e, 0]] = top + e
            used[u, START] = top
            used[u, CAP] = 2 * c
            top += 2 * c
            garbage = c
    e = used[u, START] + used[u, COUNT]
    used[u, COUNT] += 1
    pool[e, 0] = h
    pool[e, 1], pool[e, 2], pool[e, 3] = kx, ky, kz
    slot[h] = e
    return nused, top, garbage


@njit(**JIT)
def _take(h, table, used, nused, pool, slot):
    """Remove ``h`` from its used cell (swap-remove); drop the used cell if emptied.
    Returns (nused, garbage added)."""
    e = slot[h]
    kx, ky, kz = pool[e, 1], pool[e, 2], pool[e, 3]
    b = _hash(kx, ky, kz, table.shape[0])
    u = table[b]
    last = used[u, START] + used[u, COUNT] - 1
    if e != last:
        pool[e, :] = pool[last, :]
        slot[pool[e, 0]] = e
    used[u, COUNT] -= 1
    slot[h] = -1
    garbage = 0
    if used[u, COUNT] == 0:
        garbage = used[u, CAP]
        table[b] = -1
        nused -= 1
        if u != nused:
            used[u, :] = used[nused, :]
            table[used[u, BUCKET]] = u
    return nused, garbage


@njit(**JIT)
def _insert_kernel(pos, handles, first, inv, table, used, nused, pool, top, slot):
    """Insert ``handles[first:]``; stops early (returns the index reached) when the pool or
    the used-cell list is full. Returns (index reached, nused, top, garbage added)."""
    garbage = 0
    t = first
    while t < handles.shape[0]:
        h = handles[t]
        kx, ky, kz = _cell_of(pos, h, inv)
        if top + _pool_need(table, used, nused, kx, ky, kz) > pool.shape[0]:
            break
        if nused == used.shape[0]:
            break
        nused, top, g = _add(h, kx, ky, kz, table, used, nused, pool, top, slot)
        garbage += g
        t += 1
    return t, nused, top, garbage


@njit(**JIT)
def _remove_kernel(handles, table, used, nused, pool, slot):
    garbage = 0
    for t in range(handles.shape[0]):
        nused, g = _take(handles[t], table, used, nused, pool, slot)
        garbage += g
    return nused, garbage


@njit(**JIT)
def _update_kernel(pos, members, first, inv, table, used, nused, pool, top, slot):
    """Move the particles whose spatial cell changed (from ``members[first:]``); stops early
    when the pool or the used-cell list is full. Returns (index reached, moved, nused, top, garbage added)."""
    moved = 0
    garbage = 0
    t = first
    while t < members.shape[0]:
        h = members[t]
        kx, ky, kz = _cell_of(pos, h, inv)
        e = slot[h]
        if pool[e, 1] != kx or pool[e, 2] != ky or pool[e, 3] != kz:
            if top + _pool_need(table, used, nused, kx, ky, kz) > pool.shape[0]:
                break
            if nused == used.shape[0]:
                break
            nused, g = _take(h, table, used, nused, pool, slot)
            garbage += g
            nused, top, g = _add(h, kx, ky, kz, table, used, nused, pool, top, slot)
            garbage += g
            moved += 1
        t += 1
    return t, moved, nused, top, garbage


@njit(**JIT)
def _compact_kernel(used, nused, pool, new_pool, slot):
    """Copy the live segments into ``new_pool`` in compact-list order. Returns the new top."""
    top = 0
    for u in range(nused):
        s, c, n = used[u, START], used[u, CAP], used[u, COUNT]
        for e in range(n):
            new_pool[top + e, :] = pool[s + e, :]
            slot[pool[s + e, 0]] = top + e
        used[u, START] = top
        top += c
    return top


@njit(**JIT)
def _cell_less(pool, a, b):
    for c in (1, 2, 3):
        if pool[a, c] != pool[b, c]:
            return pool[a, c] < pool[b, c]
    return False


@njit(**JIT)
def _sort_collided(used, nused, pool, slot):
    """For used cells with the collision flag: sort the segment by spatial cell (insertion
    sort; segments are short and mostly sorted from the last query) so that each spatial cell
    is a contiguous run, and clear the flag where only one spatial cell is left."""
    tmp = np.empty(4, np.int64)
    for u in range(nused):
        if used[u, FLAG] == 0:
            continue
        s, n = used[u, START], used[u, COUNT]
        for e in range(s + 1, s + n):
            if not _cell_less(pool, e, e - 1):
                continue
            tmp[:] = pool[e, :]
            f = e
            while f > s:
                less = False
                for c in (1, 2, 3):
                    if tmp[c] != pool[f - 1, c]:
                        less = tmp[c] < pool[f - 1, c]
                        break
                if not less:
                    break
                pool[f, :] = pool[f - 1, :]
                slot[pool[f, 0]] = f
                f -= 1
            pool[f, :] = tmp
            slot[tmp[0]] = f
        last = s + n - 1
        if pool[s, 1] == pool[last, 1] and pool[s, 2] == pool[last, 2] and pool[s, 3] == pool[last, 3]:
            used[u, FLAG] = 0  # sorted: first == last means a single spatial cell
            used[u, CX], used[u, CY], used[u, CZ] = pool[s, 1], pool[s, 2], pool[s, 3]


@njit(**JIT)
def _compact_pairs(out, table, used, nused, pool, stencil, counters):
    """Walk the compact list; each run of one spatial cell (the whole segment unless the
    collision flag is set) pairs within itself and with its 13 forward neighbour cells, whose
    hashes are computed once per run; a lookup takes only the run of the cell asked for.
    ``counters`` ← [entries skipped as hash collisions, flagged used cells]. (One flat loop:
    a helper call or an array counter in the inner loop costs ~2x here.)"""
    m = table.shape[0]
    k = 0
    skipped = 0
    flagged_cells = 0
    for u in range(nused):
        s = used[u, START]
        e = s + used[u, COUNT]
        flagged = used[u, FLAG] != 0
        if flagged:
            flagged_cells += 1
        r0 = s
        while r0 < e:
            kx, ky, kz = pool[r0, 1], pool[r0, 2], pool[r0, 3]
            r1 = e
            if flagged:  # segment sorted by cell: [r0, r1) is one spatial cell
                r1 = r0 + 1
                while r1 < e and pool[r1, 1] == kx and pool[r1, 2] == ky and pool[r1, 3] == kz:
                    r1 += 1
            for a in range(r0, r1):
                for b in range(a + 1, r1):
                    if k < out.shape[0]:
                        out[k, 0] = pool[a, 0]
                        out[k, 1] = pool[b, 0]
                    k += 1
            for o in range(stencil.shape[0]):
                x2 = kx + stencil[o, 0]
                y2 = ky + stencil[o, 1]
                z2 = kz + stencil[o, 2]
                u2 = table[_hash(x2, y2, z2, m)]
                if u2 < 0:
                    continue
                s2 = used[u2, START]
                e2 = s2 + used[u2, COUNT]
                if used[u2, FLAG] == 0:
                    if used[u2, CX] != x2 or used[u2, CY] != y2 or used[u2, CZ] != z2:
                        skipped += e2 - s2
                        continue
                else:  # find the run of (x2, y2, z2) in the sorted segment
                    b = s2
                    while b < e2 and not (
                        pool[b, 1] == x2 and pool[b, 2] == y2 and pool[b, 3] == z2
                    ):
                        b += 1
                    skipped += b - s2
                    s2 = b
                    while b < e2 and pool[b, 1] == x2 and pool[b, 2] == y2 and pool[b, 3] == z2:
                        b += 1
                    skipped += e2 - b
                    e2 = b
                for a in range(r0, r1):
                    i = pool[a, 0]
                    for b in range(s2, e2):
                        if k < out.shape[0]:
                            out[k, 0] = i
                            out[k, 1] = pool[b, 0]
                        k += 1
            r0 = r1
    counters[0] = skipped
    counters[1] = flagged_cells
    return k


# ---------------------------------------------------------------- class
class CompactHash(BroadPhase):
    """Ihmsen's compact hashing (Sec. 4.5): handle table → compact list of used cells.

    Parameters: ``cell_size`` (default: largest diameter; rejected if smaller),
    ``table_size`` (handles; default: the prime ≥ 2 N, grown with N; a fixed value is kept,
    however small — collisions cost time, never exactness).

    Choose it for large/unbounded domains and coherent motion (update moves only particles that
    changed cell); memory O(N + table). Prefer ``linked_cells`` for small dense boxes and
    ``hash_grid`` when radii span more than a factor of ~4.
    """

    name = "compact_hash"
    incremental = True

    def __init__(self, cell_size: float | None = None, table_size: int | None = None, **params):
        super().__init__(**params)
        if table_size is not None and not (
            float(table_size) == int(table_size) and int(table_size) >= 1
        ):
            raise BroadPhaseError(
                f"{self.name}: table_size = {table_size!r}: must be an integer >= 1"
            )
        self._sizing = CellSizing(self.name, cell_size)
        self.table_size = None if table_size is None else int(table_size)
        self._table = np.full(MIN_TABLE, -1, np.int64)
        self._used = np.zeros((0, 8), np.int64)
        self._nused = 0
        self._pool = np.zeros((0, 4), np.int64)
        self._top = 0
        self._garbage = 0
        self._slot = np.zeros(0, np.int64)
        self._counters = np.zeros(2, np.int64)
        self.counters = {"rebuilds": 0, "moved": 0, "compactions": 0, "inserted": 0,
                         "removed": 0}

    # ------------------------------------------------------------ storage management
    def _ensure_slots(self):
        cap = self._pos.shape[0]
        if self._slot.shape[0] < cap:
            s = np.full(cap, -1, np.int64)
            s[: self._slot.shape[0]] = self._slot
            self._slot = s

    def _make_room(self):
        """After a kernel stopped for lack of space: grow the used-cell list (doubling) and/or
        compact the pool so that at least one more particle fits."""
        if self._nused == self._used.shape[0]:
            u = np.zeros((max(2 * self._used.shape[0], 16), 8), np.int64)
            u[: self._nused] = self._used[: self._nused]
            self._used = u
        need = 2 * int(self._used[: self._nused, CAP].max(initial=K0)) + K0
        if self._top + need > self._pool.shape[0]:
            self._compact(need)

    def _compact(self, need: int):
        """Make room for ``need`` more pool entries: compact live segments, grow if needed."""
        live = int(self._used[: self._nused, CAP].sum())
        size = max(2 * (live + need), 64)
        if size < self._pool.shape[0] and self._pool.shape[0] <= 4 * (live + need):
            size = self._pool.shape[0]
        new = np.empty((size, 4), np.int64)
        self._top = _compact_kernel(self._used, self._nused, self._pool, new, self._slot)
        self._pool = new
        self._garbage = 0
        self.counters["compactions"] += 1

    def _inv(self) -> float:
        return 1.0 / self._sizing.cell

    # ------------------------------------------------------------ protocol
    def _build(self, handles):
        members = self.members
        self._ensure_slots()
        self._slot[:] = -1
        dmax, scale = _extent(self._pos, self._rad, members)
        self._sizing.choose(dmax, scale)
        n = members.shape[0]
        m = self.table_size or next_prime(max(MIN_TABLE, 2 * n))
        self._table = np.full(m, -1, np.int64)
        used = np.zeros((n, 8), np.int64)
        self._pool = np.empty((max(4 * n, 64), 4), np.int64)  # caps ≤ 2·count+… ≤ 4 n
        self._nused, self._top = _build_kernel(
            self._pos, members, self._inv(), self._table, used, self._pool, self._slot
        )
        # the compact list holds the occupied cells only (plus 25 % room to grow)
        self._used = np.zeros((self._nused + self._nused // 4 + 16, 8), np.int64)
        self._used[: self._nused] = used[: self._nused]
        self._pool = self._pool[: self._top + self._top // 4 + 64].copy()
        self._garbage = 0
        self.counters["rebuilds"] += 1

    def _needs_rebuild(self, handles) -> bool:
        dmax, scale = _extent(self._pos, self._rad, handles)
        if dmax > self._sizing.dlim or scale > self._sizing.slim:
            return True
        return self.table_size is None and self._n > self._table.shape[0]

    def _insert(self, handles):
        self._ensure_slots()
        if self._needs_rebuild(handles):
            self._build(None)
            return
        inv = self._inv()
        t = 0
        while True:
            t, self._nused, self._top, g = _insert_kernel(
                self._pos, handles, t, inv, self._table, self._used, self._nused,
                self._pool, self._top, self._slot,
            )
            self._garbage += g
            if t == handles.shape[0]:
                break
            self._make_room()
        self.counters["inserted"] += int(handles.shape[0])

    def _remove(self, handles):
        self._nused, g = _remove_kernel(
            handles, self._table, self._used, self._nused, self._pool, self._slot
        )
        self._garbage += g
        self.counters["removed"] += int(handles.shape[0])

    def _update(self):
        self._ensure_slots()
        members = self.members
        dmax, scale = _extent(self._pos, self._rad, members)
        if not self._sizing.valid(dmax, scale):
            self._build(None)
            return
        inv = self._inv()
        t = 0
        moved = 0
        while True:
            t, mv, self._nused, self._top, g = _update_kernel(
                self._pos, members, t, inv, self._table, self._used, self._nused,
                self._pool, self._top, self._slot,
            )
            moved += mv
            self._garbage += g
            if t == members.shape[0]:
                break
            self._make_room()
        self._last_moved = moved
        self.counters["moved"] += moved

    def _pairs(self):
        _sort_collided(self._used, self._nused, self._pool, self._slot)
        return run_pair_kernel(
            _compact_pairs, self._table, self._used, self._nused, self._pool, HALF_STENCIL,
            self._counters, guess=8 * self._n + 16,
        )

    def _memory_bytes(self):
        return int(self._table.nbytes + self._used.nbytes + self._pool.nbytes + self._slot.nbytes)

    def _stats(self):
        return {
            "cell_size": self._sizing.cell,
            "table_size": int(self._table.shape[0]),
            "used_cells": int(self._nused),
            "used_capacity": int(self._used.shape[0]),
            "pool_entries": int(self._pool.shape[0]),
            "pool_top": int(self._top),
            "garbage": int(self._garbage),
            "collision_skips": int(self._counters[0]),
            "collided_cells": int(self._counters[1]),
            "last_moved": int(getattr(self, "_last_moved", 0)),
            **self.counters,
        }
