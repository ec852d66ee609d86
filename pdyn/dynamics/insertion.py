"""Pouring: spheres created during the run in a region at a rate, or filling a region to a
solid fraction at once, and removed through an outlet; several such *feeds* (``[[insertion]]``).

Every ``every`` steps an *insertion step* tops a feed's count up to ``floor(rate · t)`` (at
most ``total``). Candidates are drawn from the feed's own random stream (numpy's PCG64 seeded
with ``seed``) for at most as many spheres as the region can hold (``capacity``): a radius
from the size distribution (``pdyn.sizes``) and a centre uniform where the sphere lies inside
the region (``pdyn.regions``). A candidate is taken if it overlaps no sphere present and no
candidate taken before it, until the quota is met; spheres get the next global ids in
candidate order, the feed's ``velocity`` and mass ``density · 4/3 π r³``.

- Without a ``sizes`` table (radii uniform in [``radius_min``, ``radius_max``]) each of
  ``TRIES`` candidates per sphere owed has its own radius and the rest are dropped (the quota
  carries over): what pdyn always did, the same bits. A crowded region then takes small
  candidates more often than large ones.
- With a ``sizes`` table, or a fill, each sphere owed has one radius and ``TRIES``
  (a fill: ``FILL_TRIES``) candidate centres, the step's spheres largest first (the pending
  ones among them); each takes its first free centre, and a sphere that finds none keeps its
  radius, *pending*, for the next insertion step — so the poured sample is the drawn one less
  the spheres still pending. While the region takes the rate (its spheres leave it between
  insertion steps) few are pending; a region that cannot take it holds ever more pending
  spheres, mostly large ones, and the sample poured so far lacks them.
- A fill (``fill`` = φ, as LIGGGHTS' ``fix insert/pack`` with ``volumefraction_region``;
  random sequential addition saturates near φ = 0.38 for equal spheres, [Torquato2006]) draws
  radii, in order, until their volume reaches φ times the region's at its first insertion step
  (the run's first step) and places them at once; what does not fit stays pending and is
  tried again every ``every`` steps.

Independent of the rank count by construction: every rank draws the same candidates; each
tests them against the spheres it owns (each sphere is owned once), one elementwise maximum
over the ranks gives every rank the same verdict, and the rank owning the block of a taken
centre adds it to its store (O(1), ``ParticleStore.add``; the driver hands the handles to the
broad phase's O(1) insert). Feeds pour one after the other in their order, each seeing the
spheres of those before. The driver makes insertion steps rebuild steps, so new spheres enter
the neighbour lists and the ghost plan at once. The state — spheres inserted, next global id,
each feed's random stream and pending radii — is plain data for checkpoints: a restart
continues the same streams bit for bit.

The overlap test sees centres as they are, not their periodic images: along a periodic axis
keep the region a largest diameter away from the faces.

An outlet (``outlet_lo``..``outlet_hi``) removes the owned spheres whose centre is inside it at
rebuild steps (the same steps on every rank count) from time ``outlet_start`` on (before it the
outlet is closed: a hopper fills, then opens). ``rate`` 0 pours nothing: the outlet alone.

This is the "insertion region" of DEM codes (LIGGGHTS' ``fix insert/rate/region`` and
``fix insert/pack``, [LIGGGHTSinsert]; LAMMPS' ``fix pour``, [Thompson2022]).
Units: m, s, kg/m³, m/s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ..fields.exact import limbs_of, limbs_rounded
from ..particles import StoreChanges
from ..placement import FILL_TRIES, fill_radii, first_free
from ..regions import region_of
from ..sizes import size_distribution
from .neighbours import integrated

#: candidates drawn per sphere still owed at an insertion step
TRIES = 4
#: the densest packing of equal spheres (Kepler's, π/√18): no box holds more spheres of radius
#: r than this fraction of its volume over one sphere's (:func:`most_spheres`)
PACKING = math.pi / math.sqrt(18.0)


def most_spheres(volume: float, radius: float) -> int:
    """An upper bound of the spheres of ``radius`` (m) that fit in a region of ``volume``
    (m³): ``PACKING`` of it over one sphere's (at least 1)."""
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


class Feed:
    """One ``[insertion]`` table (:class:`Inserter` docstring): ``params`` the checked
    ``InsertionConfig`` fields (region fields as ``pdyn.regions``, ``sizes`` as
    ``pdyn.sizes``, ``rate`` (s⁻¹) or ``fill``, ``density``, ``velocity``, ``total``,
    ``every``, ``seed``, outlet); ``state`` a checkpoint's :meth:`state` to continue from."""

    def __init__(self, params: dict, state: dict | None = None):
        self.p = p = dict(params)
        self.region = region_of(p)
        self.sizes = size_distribution("insertion", p.get("sizes"), p.get("radius_min"),
                                       p.get("radius_max"))
        self.fill = p.get("fill")
        # the first form (module docstring): a radius per candidate, the same bits as always
        self.legacy = p.get("sizes") is None and self.fill is None
        self.group = 1 if self.legacy else FILL_TRIES if self.fill else TRIES
        self.rng = np.random.Generator(np.random.PCG64(int(p["seed"])))
        self.inserted = 0
        self.pending = np.zeros(0)  # radii drawn, not yet placed (m)
        self.drawn = False  # a fill has drawn its radii
        if state is not None:
            self.inserted = int(state["inserted"])
            self.rng.bit_generator.state = state["rng"]
            self.pending = np.array(state.get("pending", ()), float)
            self.drawn = bool(state.get("drawn", False))
        outlet = p.get("outlet_lo")
        self.outlet = None if outlet is None else (np.array(outlet, float),
                                                   np.array(p["outlet_hi"], float))

    def state(self) -> dict:
        """Plain data (JSON): count, random stream, pending radii, whether a fill drew."""
        return {"inserted": self.inserted, "rng": self.rng.bit_generator.state,
                "pending": self.pending.tolist(), "drawn": self.drawn}

    def mass(self, radius):
        """kg of spheres of ``radius`` (m)."""
        return self.p["density"] * 4.0 / 3.0 * math.pi * np.asarray(radius, float) ** 3

    def owed(self, time: float) -> int:
        """Spheres still owed at ``time`` (s); a fill owes its pending ones once drawn."""
        if self.fill:
            return self.pending.size if self.drawn else 1
        want = math.floor(self.p["rate"] * time + 1e-9)
        if self.p["total"]:
            want = min(want, int(self.p["total"]))
        return max(want - self.inserted, 0)

    def due(self, step: int, time: float) -> bool:
        """Is ``step`` (ending at ``time``) an insertion step? A fill's first is the run's
        first step."""
        if self.fill and not self.drawn:
            return True
        return step % int(self.p["every"]) == 0 and self.owed(time) > 0

    @property
    def capacity(self) -> int:
        """The most spheres the region can hold (:func:`most_spheres` of ``radius_min``): an
        insertion step never draws candidates for more, however many are owed (a rate the
        region cannot take carries over without growing the draw)."""
        return most_spheres(self.region.volume, self.sizes.lo)

    def most(self, box_lo, box_hi) -> tuple[int, int]:
        """(the most spheres it may still add, the most candidates an insertion step draws):
        :meth:`Inserter.most`."""
        if self.fill:
            n = int(self.fill * self.region.volume / (4.0 / 3.0 * math.pi * self.sizes.lo**3))
            return n + 1, self.group * min(n + 1, self.capacity)
        if self.p["rate"] == 0.0:  # the outlet alone
            return 0, 0
        volume = float(np.prod(np.asarray(box_hi, float) - np.asarray(box_lo, float)))
        poured = most_spheres(volume, self.sizes.lo)
        if self.p["total"]:
            poured = min(poured, max(int(self.p["total"]) - self.inserted, 0))
        return poured, TRIES * self.capacity

    def _radii(self, time: float) -> np.ndarray:
        """The radii of the spheres this insertion step tries (one each: the pending ones, then
        new ones, for at most :attr:`capacity` spheres), largest first; a fill's first step
        draws them all."""
        if self.fill and not self.drawn:
            self.pending = fill_radii(self.sizes, self.rng, self.fill * self.region.volume)
            self.drawn = True
        k = min(self.owed(time), self.capacity)
        fresh = self.sizes.draw(self.rng, max(k - self.pending.size, 0))
        radii = np.concatenate((self.pending, fresh))
        self._rest = radii[k:]  # pending beyond this step's room
        return -np.sort(-radii[:k])

    def candidates(self, time: float) -> tuple[np.ndarray, np.ndarray, int]:
        """(centres, radii, quota): candidates for the spheres owed at ``time`` (for at most
        :attr:`capacity` spheres), drawn from the stream (the same on every rank); runs of
        :attr:`group` candidates are one sphere's tries."""
        if self.legacy:
            quota = self.owed(time)
            r = self.sizes.draw(self.rng, TRIES * min(quota, self.capacity))
        else:
            self._trying = self._radii(time)
            quota = self._trying.size
            r = np.repeat(self._trying, self.group)
        return self.region.sample(self.rng, r), r, quota

    def take(self, store, owned: np.ndarray, time: float, comm) -> tuple:
        """Draw, test against the ``owned`` spheres of every rank (collective: one elementwise
        maximum); (centres, radii) of the spheres taken, in order."""
        pos, r, quota = self.candidates(time)
        blocked = (~self.region.inside(pos, r)).astype(float)
        if len(owned) and len(r):
            _blocked(store.pos, store.radius, owned, pos, r, blocked)
        blocked = comm.allreduce_max(blocked)
        taken = first_free(pos, r, blocked, quota, self.group)
        if not self.legacy:
            left = np.ones(quota, bool)
            left[taken // self.group] = False
            self.pending = np.concatenate((self._trying[left], self._rest))
        self.inserted += len(taken)
        return pos[taken], r[taken]

    def drains(self, pos: np.ndarray, time: float, is_open: bool | None = None) -> np.ndarray:
        """Which centres ``pos`` are in the outlet, if it is open at ``time`` (s: from
        ``outlet_start`` on, unless ``is_open`` says otherwise)."""
        if is_open is None:
            is_open = time >= self.p.get("outlet_start", 0.0)
        if self.outlet is None or not is_open:
            return np.zeros(len(pos), bool)
        lo, hi = self.outlet
        return ((pos >= lo) & (pos <= hi)).all(axis=1)


class Inserter:
    """Insertion (and outlets) of one run, the same object on every rank: its :class:`Feed`
    per ``[insertion]`` table.

    ``params``: one table's checked fields (``InsertionConfig``: ``region_lo``, ``region_hi``
    (m), ``rate`` (spheres/s), ``radius_min``, ``radius_max`` (m), ``density`` (kg/m³),
    ``velocity`` (m/s), ``total`` (0: no limit), ``every`` (steps), ``seed``,
    ``outlet_lo``/``outlet_hi`` (m, or None), ``outlet_start`` (s), and the region, ``sizes``
    and ``fill`` fields), or a list of them. ``next_gid``: the first global id to give;
    ``state``: a checkpoint's :meth:`state` to continue from; ``materials``: each table's
    material index (its spheres', ``pdyn.dynamics.materials``; None: 0). ``removed_mass``
    (kg): what has left through the outlets (each drain's mass rounded once over the ranks:
    the same on any rank count); ``outlets_open``: True or False overrides every outlet's
    ``outlet_start`` (a stage's ``outlet``), None keeps it.
    """

    def __init__(self, params, next_gid: int, state: dict | None = None, materials=None):
        tables = [params] if isinstance(params, dict) else list(params)
        # as the config gave them, one table as itself (checkpoints keep it)
        self.params = tables[0] if len(tables) == 1 else tables
        states = [None] * len(tables)
        self.removed, self.removed_mass, self.outlets_open = 0, 0.0, None
        self.next_gid = int(next_gid)
        if state is not None:
            self.removed = int(state["removed"])
            self.removed_mass = float(state.get("removed_mass", 0.0))
            self.next_gid = int(state["next_gid"])
            states = state.get("feeds") or [{"inserted": state["inserted"], "rng": state["rng"]}]
        self.feeds = [Feed(p, s) for p, s in zip(tables, states)]
        self.materials = list(materials or [0] * len(tables))
        self.p = self.feeds[0].p  # the first table's fields (notes and estimates name them)
        self._due = self.feeds

    def state(self) -> dict:
        """Plain data (JSON) a checkpoint keeps: counts, next id, the random streams (and
        each feed's state when there are several, or pending radii)."""
        first = self.feeds[0]
        out = {"inserted": self.inserted, "removed": self.removed,
               "removed_mass": self.removed_mass, "next_gid": self.next_gid,
               "rng": first.rng.bit_generator.state}
        if len(self.feeds) > 1 or not first.legacy:
            out["feeds"] = [f.state() for f in self.feeds]
        return out

    @property
    def inserted(self) -> int:
        """Spheres inserted by every feed (global)."""
        return sum(f.inserted for f in self.feeds)

    @property
    def present(self) -> int:
        """Spheres present in the run now (global): every id given less those removed."""
        return self.next_gid - self.removed

    def mass(self, radius):
        """kg of the lightest spheres of ``radius`` (m) a feed pours (the smallest density:
        what bounds the time step)."""
        return min(self.feeds, key=lambda f: f.p["density"]).mass(radius)

    @property
    def radii(self) -> np.ndarray:
        """The smallest and largest radius inserted (m)."""
        return np.array([min(f.sizes.lo for f in self.feeds),
                         max(f.sizes.hi for f in self.feeds)], float)

    def due(self, step: int, time: float) -> bool:
        """Is ``step`` (ending at ``time``) an insertion step of some feed? (The feeds due
        pour at this step's :meth:`pour`.)"""
        self._due = [f for f in self.feeds if f.due(step, time)]
        return bool(self._due)

    @property
    def capacity(self) -> int:
        """The first feed's :attr:`Feed.capacity`."""
        return self.feeds[0].capacity

    def most(self, box_lo, box_hi) -> tuple[int, int]:
        """For the run's memory estimate: (the most spheres it may still add — each feed's
        ``total``, and never more than fit in the box ``box_lo``..``box_hi`` —, the most
        candidates an insertion step draws)."""
        most = [f.most(box_lo, box_hi) for f in self.feeds]
        return sum(m[0] for m in most), sum(m[1] for m in most)

    def candidates(self, time: float) -> tuple[np.ndarray, np.ndarray, int]:
        """The first feed's :meth:`Feed.candidates`."""
        return self.feeds[0].candidates(time)

    def insert(self, store, owned: np.ndarray, time: float, comm, owner_of,
               feeds=None) -> np.ndarray:
        """Insertion step of ``feeds`` (default all), one after the other: draw, test against
        the ``owned`` spheres of every rank (collective), add the taken spheres this rank owns
        (``owner_of(centres)`` → rank per centre) to ``store``; returns their handles."""
        new = []
        for k, feed in enumerate(self.feeds if feeds is None else feeds):
            material = self.materials[self.feeds.index(feed)]
            if k:
                owned = integrated(store.flags)
            pos, r = feed.take(store, owned, time, comm)
            gids = self.next_gid + np.arange(len(r), dtype=np.int64)
            self.next_gid += len(r)
            mine = owner_of(pos) == comm.rank
            pos, r = pos[mine], r[mine]
            new.append(store.add(gid=gids[mine], pos=pos, build_pos=pos,
                                 vel=np.array(feed.p["velocity"], float), radius=r,
                                 mass=feed.mass(r),
                                 material=material))
        if len(new) == 1:
            return new[0]
        return np.concatenate(new) if new else np.zeros(0, np.int64)

    def drain(self, store, owned: np.ndarray, comm, time: float) -> np.ndarray:
        """Remove the ``owned`` spheres whose centre is inside an outlet open at ``time``
        (s: from its ``outlet_start`` on, or as :attr:`outlets_open` says); returns their
        handles (collective: the count and the mass are summed)."""
        if all(f.outlet is None for f in self.feeds):
            return np.zeros(0, np.int64)
        p = store.pos[owned]
        inside = np.zeros(len(owned), bool)
        for f in self.feeds:
            inside |= f.drains(p, time, self.outlets_open)
        out = owned[inside]
        limbs = np.sum(comm.allgather(limbs_of(store.mass[out])), axis=0)
        store.remove(out)
        self.removed += comm.allreduce_sum(int(out.size))
        self.removed_mass += limbs_rounded(limbs)
        return out

    def pour(self, store, comm, time: float, owner_of, insert: bool) -> StoreChanges:
        """The inserter's part of a rebuild step ending at ``time`` (s; owned spheres in their
        blocks, no ghosts): remove the owned spheres in the outlets (:meth:`drain`), then, at
        an insertion step (``insert``), add the new ones this rank owns from the feeds due
        (:meth:`insert`; ``owner_of``: the rank of each centre). Returns the store's changes
        (the drained as emigrated, the new as immigrated), for the broad phase. Collective."""
        owned = integrated(store.flags)
        gone = self.drain(store, owned, comm, time)
        if gone.size:
            owned = integrated(store.flags)
        new = np.zeros(0, np.int64)
        if insert:
            new = self.insert(store, owned, time, comm, owner_of, self._due)
        return StoreChanges(emigrated=gone, immigrated=new)
