"""Spatial hashing ([Teschner2003] as used by [Ihmsen2011] Sec. 4.4).

The unbounded grid of spatial cells (edge ``d`` ≥ largest diameter, integer coordinates
``(k, l, m) = floor(x / d)`` computed in int64) is mapped into a table of ``m ≈ 2 N`` buckets by
Teschner's prime XOR hash ``(k·p₁ xor l·p₂ xor m·p₃) mod m`` with p₁, p₂, p₃ = 73856093,
19349663, 83492791 (wrap-around 64-bit multiplication). Different spatial cells may collide into
one bucket; every bucket entry keeps its own spatial cell, and a lookup only takes the entries
whose cell is the one asked for, so colliding cells never produce candidates and every pair of
neighbouring spatial cells is visited exactly once (13-cell half stencil, hashed per particle).

The table is rebuilt (counting sort by bucket, O(N + m)) on the first query after any
build/insert/remove/update, and the query traverses the whole table, as in Ihmsen's
baseline. Memory is O(N + m), independent of the domain size.

Choose it for unbounded or very sparse domains where a dense grid would waste memory, radii
are roughly uniform and many particles change cell between queries (it simply rebuilds); it is
the leanest hash here (~64 B per particle). ``compact_hash`` (Ihmsen Sec. 4.5) updates only
the particles that changed cell; Ihmsen Table 2 finds it faster, on our sparse reference scene
(about one particle per occupied cell) the two query equally fast. For a dense box
``linked_cells`` is faster still; with radii spanning more than a factor of ~4 use
``hash_grid``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..cell_index import teschner_hash
from ._kernels import HALF_STENCIL, run_pair_kernel, safe_cell_size
from .base import BroadPhase, BroadPhaseError
from .params import CELL_SIZE, TABLE_SIZE

#: largest |cell coordinate| allowed, far from int64 overflow even after ±1 stencil offsets
COORD_LIMIT = 2.0 ** 60
#: smallest hash table
MIN_TABLE = 17


# ------------------------------------------------------- shared helpers (also compact_hash)
@njit(**JIT)
def _hash(kx, ky, kz, m):
    """Teschner's hash of int64 cell coordinates into [0, m) ([Ihmsen2011] Eq. 3)."""
    return np.int64(teschner_hash(kx, ky, kz) % np.uint64(m))


@njit(**JIT)
def cell_of(pos, h, inv):
    """Integer spatial cell of particle ``h`` (caller guarantees |x|·inv < COORD_LIMIT)."""
    return (
        np.int64(np.floor(pos[h, 0] * inv)),
        np.int64(np.floor(pos[h, 1] * inv)),
        np.int64(np.floor(pos[h, 2] * inv)),
    )


@njit(**JIT)
def _extent_kernel(pos, rad, members):
    """(largest diameter, largest |coordinate|, first handle with a non-finite coordinate
    or -1) over ``members``."""
    d = 0.0
    s = 0.0
    bad = -1
    for t in range(members.shape[0]):
        h = members[t]
        if 2.0 * rad[h] > d:
            d = 2.0 * rad[h]
        for a in range(3):
            v = abs(pos[h, a])
            if v > s:
                s = v
            elif not (v <= s) and bad < 0:  # NaN
                bad = h
    return d, s, bad


def extent(pos, rad, members) -> tuple[float, float]:
    """(largest diameter, largest |coordinate|) over ``members``; rejects NaN/inf positions
    (``update`` receives arrays the base class has not validated)."""
    d, s, bad = _extent_kernel(pos, rad, members)
    if bad < 0 and not np.isfinite(s):
        bad = int(members[np.flatnonzero(~np.isfinite(pos[members]).all(axis=1))[0]])
    if bad >= 0:
        raise BroadPhaseError(f"positions[{bad}] = {pos[bad].tolist()}: must be finite")
    return d, s


def _safe(size: float, scale: float) -> float:
    """``safe_cell_size`` for positions up to ``scale`` in magnitude."""
    return safe_cell_size(size, np.full((1, 3), scale), np.zeros(1, np.int64))


def next_prime(n: int) -> int:
    """Smallest prime ≥ n (table sizes; a prime modulus spreads the XOR hash well)."""
    n = max(int(n), 2)
    while True:
        if n % 2 or n == 2:
            f = 3
            while f * f <= n and n % f:
                f += 2
            if f * f > n:
                return n
        n += 1


class CellSizing:
    """Chooses the cell edge and remembers for which particles it stays exact.

    The cell is ``safe_cell_size(max(largest diameter, user cell_size), 2·max|x|)``; it stays
    exact while the largest diameter ≤ ``dlim`` and every |coordinate| ≤ ``slim`` (headroom of 2
    on coordinates so drifting particles do not force a rebuild each step). Cell coordinates are
    int64; where ``max|x| / cell`` would exceed ``COORD_LIMIT`` the automatic cell is enlarged
    (still exact, more candidates) and a user ``cell_size`` is rejected.
    """

    def __init__(self, name: str, cell_size: float | None):
        """``cell_size``: the structure's parameter, checked (``params.CELL_SIZE``)."""
        self.name = name
        self.user = None if cell_size is None else float(cell_size)
        self.cell = 1.0
        self.dlim = 0.0
        self.slim = 0.0

    def propose(self, dmax: float, scale: float) -> tuple[float, float, float]:
        if self.user is not None and self.user < dmax:
            raise BroadPhaseError(
                f"{self.name}: cell_size = {self.user!r}: smaller than the largest diameter "
                f"{dmax!r}"
            )
        base = self.user if self.user is not None else (dmax if dmax > 0 else 1.0)
        slim = 2.0 * max(scale, 1.0)
        if slim / base > COORD_LIMIT:
            if self.user is not None:
                raise BroadPhaseError(
                    f"{self.name}: cell_size = {self.user!r}: positions up to {scale:g} give "
                    f"cell coordinates beyond the int64 range; choose cell_size >= "
                    f"{slim / COORD_LIMIT:g}"
                )
            base = slim / COORD_LIMIT
        return _safe(base, slim), base, slim

    def choose(self, dmax: float, scale: float) -> float:
        self.cell, self.dlim, self.slim = self.propose(dmax, scale)
        return self.cell

    def valid(self, dmax: float, scale: float) -> bool:
        """Current cell still exact for these particles (and not wastefully large)?"""
        if dmax > self.dlim or scale > self.slim:
            return False
        if self.user is None:  # e.g. the one huge particle left: shrink the cells again
            cell, _, _ = self.propose(dmax, scale)
            return cell > 0.5 * self.cell
        return True


# ---------------------------------------------------------------- spatial_hash kernels
@njit(**JIT)
def _hash_sort(pos, members, inv, m):
    """Bucket start offsets (m + 1) and entries (handle, kx, ky, kz) ordered by bucket."""
    n = members.shape[0]
    bucket = np.empty(n, np.int64)
    cells = np.empty((n, 3), np.int64)
    start = np.zeros(m + 1, np.int64)
    for t in range(n):
        kx, ky, kz = cell_of(pos, members[t], inv)
        cells[t, 0], cells[t, 1], cells[t, 2] = kx, ky, kz
        b = _hash(kx, ky, kz, m)
        bucket[t] = b
        start[b + 1] += 1
    for b in range(m):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    entries = np.empty((n, 4), np.int64)
    for t in range(n):
        b = bucket[t]
        e = fill[b]
        entries[e, 0] = members[t]
        entries[e, 1] = cells[t, 0]
        entries[e, 2] = cells[t, 1]
        entries[e, 3] = cells[t, 2]
        fill[b] += 1
    return start, entries


@njit(**JIT)
def _hash_pairs(out, start, entries, stencil, counters):
    """Traverse the whole table; per particle, same-cell partners later in its bucket and the
    13 forward neighbour cells looked up by hash, keeping only entries of the right cell.
    ``counters[0]`` counts bucket entries skipped because they belong to a colliding cell."""
    m = start.shape[0] - 1
    k = 0
    skipped = 0
    for b in range(m):
        e_end = start[b + 1]
        for a in range(start[b], e_end):
            i = entries[a, 0]
            kx, ky, kz = entries[a, 1], entries[a, 2], entries[a, 3]
            for a2 in range(a + 1, e_end):
                if entries[a2, 1] == kx and entries[a2, 2] == ky and entries[a2, 3] == kz:
                    if k < out.shape[0]:
                        out[k, 0] = i
                        out[k, 1] = entries[a2, 0]
                    k += 1
                else:
                    skipped += 1
            for o in range(stencil.shape[0]):
                x2 = kx + stencil[o, 0]
                y2 = ky + stencil[o, 1]
                z2 = kz + stencil[o, 2]
                b2 = _hash(x2, y2, z2, m)
                for a2 in range(start[b2], start[b2 + 1]):
                    if entries[a2, 1] == x2 and entries[a2, 2] == y2 and entries[a2, 3] == z2:
                        if k < out.shape[0]:
                            out[k, 0] = i
                            out[k, 1] = entries[a2, 0]
                        k += 1
                    else:
                        skipped += 1
    counters[0] = skipped
    return k


class SpatialHash(BroadPhase):
    """Teschner/Ihmsen spatial hashing (Sec. 4.4): unbounded grid hashed into ~2N buckets.

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``).

    Choose it for unbounded/sparse domains with near-uniform radii and much motion between
    queries; ``compact_hash`` when few particles change cell per step, ``linked_cells`` for
    dense boxes, ``hash_grid`` when radii span more than a factor of ~4.
    """

    name = "spatial_hash"

    params = {"cell_size": CELL_SIZE, "table_size": TABLE_SIZE}

    def __init__(self, **given):
        super().__init__(**given)
        self._sizing = CellSizing(self.name, self.settings["cell_size"])
        self.table_size = self.settings["table_size"]
        self._dirty = True
        self._start = np.zeros(MIN_TABLE + 1, np.int64)
        self._entries = np.zeros((0, 4), np.int64)
        self._counters = np.zeros(1, np.int64)
        self._rebuilds = 0

    def _build(self, handles):
        self._dirty = True
        if self._sizing.user is not None:  # reject a too small cell_size at once
            self._sizing.propose(*extent(self._pos, self._rad, handles))

    def _insert(self, handles):
        self._build(handles)

    def _remove(self, handles):
        self._dirty = True

    def _update(self):
        self._dirty = True

    def _table(self):
        members = self.members
        dmax, scale = extent(self._pos, self._rad, members)
        cell = self._sizing.choose(dmax, scale)
        m = self.table_size or next_prime(max(MIN_TABLE, 2 * members.size))
        self._start, self._entries = _hash_sort(self._pos, members, 1.0 / cell, m)
        self._rebuilds += 1

    def _pairs(self):
        if self._dirty:
            self._table()
            self._dirty = False
        return run_pair_kernel(
            _hash_pairs, self._start, self._entries, HALF_STENCIL, self._counters,
            guess=8 * self._n + 16,
        )

    def _memory_bytes(self):
        return int(self._start.nbytes + self._entries.nbytes)

    def _stats(self):
        return {
            "cell_size": self._sizing.cell,
            "table_size": int(self._start.shape[0] - 1),
            "collision_skips": int(self._counters[0]),
            "rebuilds": self._rebuilds,
        }
