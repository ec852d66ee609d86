"""Pouring: spheres created during the run in a region at a rate, and removed through an outlet.

Every ``every`` steps an *insertion step* tops the count up to ``floor(rate · t)`` (at most
``total``): candidates — radius uniform in [``radius_min``, ``radius_max``] (the size
distribution), centre uniform in the region shrunk by that radius — are drawn from the
inserter's own random stream (numpy's PCG64 seeded with ``seed``), ``TRIES`` per sphere still
owed (for at most as many spheres as the region can hold: ``capacity``). A candidate is taken
if it overlaps no sphere present and no candidate taken before it, until the quota is met;
the rest are dropped (the quota carries over). Spheres get the next
global ids in candidate order, ``velocity`` and mass ``density · 4/3 π r³``.

Independent of the rank count by construction: every rank draws the same candidates; each
tests them against the spheres it owns (each sphere is owned once), one elementwise maximum
over the ranks gives every rank the same verdict, and the rank owning the block of a taken
centre adds it to its store (O(1), ``ParticleStore.add``; the driver hands the handles to the
broad phase's O(1) insert). The driver makes insertion steps rebuild steps, so new spheres
enter the neighbour lists and the ghost plan at once. The state — spheres inserted, next
global id, the random stream's state — is plain data for checkpoints: a restart continues the
same stream bit for bit.

The overlap test sees centres as they are, not their periodic images: along a periodic axis
keep the region a largest diameter away from the faces.

An outlet (``outlet_lo``..``outlet_hi``) removes the owned spheres whose centre is inside it at
rebuild steps (the same steps on every rank count) from time ``outlet_start`` on (before it the
outlet is closed: a hopper fills, then opens). ``rate`` 0 pours nothing: the outlet alone.

This is the "insertion region" of DEM codes (LIGGGHTS' ``fix insert/rate/region``, LAMMPS'
``fix pour``, [Thompson2022]) reduced to a box region and a uniform size distribution.
Units: m, s, kg/m³, m/s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ..particles import StoreChanges
from .neighbours import integrated

#: candidates drawn per sphere still owed at an insertion step
TRIES = 4
#: the densest packing of equal spheres (Kepler's, π/√18): no box holds more spheres of radius
#: r than this fraction of its volume over one sphere's (:func:`most_spheres`)
PACKING = math.pi / math.sqrt(18.0)


def most_spheres(lo, hi, radius: float) -> int:
    """An upper bound of the spheres of ``radius`` (m) that fit in the box ``lo``..``hi``
    (m): ``PACKING`` of its volume over one sphere's (at least 1)."""
    volume = float(np.prod(np.asarray(hi, float) - np.asarray(lo, float)))
    return max(int(PACKING * volume / (4.0 / 3.0 * math.pi * radius**3)), 1)


@njit(**JIT)
def _blocked(pos, rad, handles, cand, cand_r, out):
    """``out[c] = 1`` where candidate c (centre ``cand[c]``, radius ``cand_r[c]``) overlaps or
    touches one of the spheres ``handles``; candidates sit in one small region, so spheres
    outside its bounding box (grown by the largest radii) are skipped with six comparisons."""
    lo = np.empty(3)
    hi = np.empty(3)
    r_cand = cand_r.max()
    r_own = 0.0
    for t in range(handles.shape[0]):
        r_own = max(r_own, rad[handles[t]])
    for a in range(3):
        lo[a] = cand[:, a].min() - r_cand - r_own
        hi[a] = cand[:, a].max() + r_cand + r_own
    for t in range(handles.shape[0]):
        h = handles[t]
        x, y, z = pos[h, 0], pos[h, 1], pos[h, 2]
        if x < lo[0] or x > hi[0] or y < lo[1] or y > hi[1] or z < lo[2] or z > hi[2]:
            continue
        for c in range(cand.shape[0]):
            dx = cand[c, 0] - x
            dy = cand[c, 1] - y
            dz = cand[c, 2] - z
            s = cand_r[c] + rad[h]
            if dx * dx + dy * dy + dz * dz <= s * s:
                out[c] = 1.0


@njit(**JIT)
def _take(cand, cand_r, blocked, quota):
    """Indices of the candidates taken, in order: not ``blocked``, not touching one taken
    before, at most ``quota``."""
    taken = np.empty(min(quota, cand.shape[0]), np.int64)
    k = 0
    for c in range(cand.shape[0]):
        if k == quota:
            break
        if blocked[c] > 0.0:
            continue
        free = True
        for q in range(k):
            d = taken[q]
            dx = cand[c, 0] - cand[d, 0]
            dy = cand[c, 1] - cand[d, 1]
            dz = cand[c, 2] - cand[d, 2]
            s = cand_r[c] + cand_r[d]
            if dx * dx + dy * dy + dz * dz <= s * s:
                free = False
                break
        if free:
            taken[k] = c
            k += 1
    return taken[:k]


class Inserter:
    """Insertion (and outlet) of one run, the same object on every rank.

    ``params``: ``region_lo``, ``region_hi`` (m), ``rate`` (spheres/s), ``radius_min``,
    ``radius_max`` (m), ``density`` (kg/m³), ``velocity`` (m/s), ``total`` (0: no limit),
    ``every`` (steps), ``seed``, ``outlet_lo``/``outlet_hi`` (m, or None), ``outlet_start``
    (s). ``next_gid``: the
    first global id to give; ``state``: a checkpoint's :meth:`state` to continue from.
    """

    def __init__(self, params: dict, next_gid: int, state: dict | None = None):
        self.p = dict(params)
        self.lo = np.array(self.p["region_lo"], float)
        self.hi = np.array(self.p["region_hi"], float)
        self.rng = np.random.Generator(np.random.PCG64(int(self.p["seed"])))
        self.inserted = 0
        self.removed = 0
        self.next_gid = int(next_gid)
        if state is not None:
            self.inserted = int(state["inserted"])
            self.removed = int(state["removed"])
            self.next_gid = int(state["next_gid"])
            self.rng.bit_generator.state = state["rng"]
        outlet = self.p.get("outlet_lo")
        self.outlet = None if outlet is None else (np.array(outlet, float),
                                                   np.array(self.p["outlet_hi"], float))

    def state(self) -> dict:
        """Plain data (JSON) a checkpoint keeps: counts, next id, the random stream."""
        return {"inserted": self.inserted, "removed": self.removed,
                "next_gid": self.next_gid, "rng": self.rng.bit_generator.state}

    @property
    def present(self) -> int:
        """Spheres present in the run now (global): every id given less those removed."""
        return self.next_gid - self.removed

    def mass(self, radius):
        """kg of spheres of ``radius`` (m)."""
        return self.p["density"] * 4.0 / 3.0 * math.pi * np.asarray(radius, float) ** 3

    @property
    def radii(self) -> np.ndarray:
        """The smallest and largest radius inserted (m)."""
        return np.array([self.p["radius_min"], self.p["radius_max"]], float)

    def owed(self, time: float) -> int:
        """Spheres still owed at ``time`` (s)."""
        want = math.floor(self.p["rate"] * time + 1e-9)
        if self.p["total"]:
            want = min(want, int(self.p["total"]))
        return max(want - self.inserted, 0)

    def due(self, step: int, time: float) -> bool:
        """Is ``step`` (ending at ``time``) an insertion step?"""
        return step % int(self.p["every"]) == 0 and self.owed(time) > 0

    @property
    def capacity(self) -> int:
        """The most spheres the region can hold (:func:`most_spheres` of ``radius_min``): an
        insertion step never draws candidates for more, however many are owed (a rate the
        region cannot take carries over without growing the draw)."""
        return most_spheres(self.lo, self.hi, self.p["radius_min"])

    def most(self, box_lo, box_hi) -> tuple[int, int]:
        """For the run's memory estimate: (the most spheres it may still add — ``total``, and
        never more than fit in the box ``box_lo``..``box_hi`` —, the most candidates an
        insertion step draws)."""
        if self.p["rate"] == 0.0:  # the outlet alone
            return 0, 0
        poured = most_spheres(box_lo, box_hi, self.p["radius_min"])
        if self.p["total"]:
            poured = min(poured, max(int(self.p["total"]) - self.inserted, 0))
        return poured, TRIES * self.capacity

    def candidates(self, time: float) -> tuple[np.ndarray, np.ndarray, int]:
        """(centres, radii, quota): ``TRIES`` candidates per sphere owed at ``time`` (for at
        most :attr:`capacity` spheres), drawn from the stream (the same on every rank)."""
        quota = self.owed(time)
        m = TRIES * min(quota, self.capacity)
        r0, r1 = self.p["radius_min"], self.p["radius_max"]
        r = r0 + (r1 - r0) * self.rng.random(m)
        u = self.rng.random((m, 3))
        lo = self.lo + r[:, None]
        pos = lo + (self.hi - r[:, None] - lo) * u
        return pos, r, quota

    def insert(self, store, owned: np.ndarray, time: float, comm, owner_of) -> np.ndarray:
        """Insertion step: draw, test against the ``owned`` spheres of every rank (collective:
        one elementwise maximum), add the taken spheres this rank owns (``owner_of(centres)``
        → rank per centre) to ``store``; returns their handles."""
        pos, r, quota = self.candidates(time)
        blocked = np.zeros(len(r))
        if len(owned) and len(r):
            _blocked(store.pos, store.radius, owned, pos, r, blocked)
        blocked = comm.allreduce_max(blocked)
        taken = _take(pos, r, blocked, quota)
        gids = self.next_gid + np.arange(len(taken), dtype=np.int64)
        self.next_gid += len(taken)
        self.inserted += len(taken)
        mine = owner_of(pos[taken]) == comm.rank
        pos = pos[taken][mine]
        return store.add(gid=gids[mine], pos=pos, build_pos=pos,
                         vel=np.array(self.p["velocity"], float), radius=r[taken][mine],
                         mass=self.mass(r[taken][mine]))

    def drain(self, store, owned: np.ndarray, comm, time: float) -> np.ndarray:
        """Remove the ``owned`` spheres whose centre is inside the outlet if it is open at
        ``time`` (s: from ``outlet_start`` on); returns their handles (collective: the count
        is summed)."""
        if self.outlet is None or time < self.p.get("outlet_start", 0.0):
            return np.zeros(0, np.int64)
        lo, hi = self.outlet
        p = store.pos[owned]
        out = owned[((p >= lo) & (p <= hi)).all(axis=1)]
        store.remove(out)
        self.removed += comm.allreduce_sum(int(out.size))
        return out

    def pour(self, store, comm, time: float, owner_of, insert: bool) -> StoreChanges:
        """The inserter's part of a rebuild step ending at ``time`` (s; owned spheres in their
        blocks, no ghosts): remove the owned spheres in the outlet (:meth:`drain`), then, at
        an insertion step (``insert``), add the new ones this rank owns (:meth:`insert`;
        ``owner_of``: the rank of each centre). Returns the store's changes (the drained as
        emigrated, the new as immigrated), for the broad phase. Collective."""
        owned = integrated(store.flags)
        gone = self.drain(store, owned, comm, time)
        if gone.size:
            owned = integrated(store.flags)
        new = np.zeros(0, np.int64)
        if insert:
            new = self.insert(store, owned, time, comm, owner_of)
        return StoreChanges(emigrated=gone, immigrated=new)
