"""The tangential contact history: one spring per touching contact, of any number per sphere.

Two homes, as LAMMPS' ``fix neigh/history`` keeps them ([Thompson2022]): during the steps
between two rebuilds of the neighbour lists the history lives beside the lists, and at a
rebuild it is handed over to the new lists by partner id.

* **Beside the lists** (:class:`ContactHistory`): the contact loop
  (``pdyn.dynamics.contact``) evaluates each sphere pair once, at one *site*: the entry of the
  pair in the row of its lower-id sphere (or, where that sphere is a ghost here, the entry in
  the row of the higher-id sphere, evaluated from the ghost's side; a wall contact at the
  sphere's wall entry). A step reads last step's touching sites (ascending entry, with their
  springs) and writes this step's, two buffers in turn, while the pass streams through the
  lists in the same order: it touches only the contacts' springs, contiguously. ``slot``
  (per entry) names this step's site of each touching entry the pass evaluated (written only
  there: it counts where the site it names is that entry, :func:`site_of`).
* **With the particles** (the ragged fields ``history_count`` / ``history_key`` /
  ``history_spring`` of ``pdyn.particles.FIELDS``): before the lists are rebuilt or particles
  move (migration, rebalancing, reordering, the outlet), :meth:`ContactHistory.save` writes
  for every row's sphere one record per touching contact — the partner's key
  (:func:`partner_key`, ascending) and the contact's spring — into the store, where
  reordering, migration and checkpoints carry it like any field. Both spheres of a pair keep
  the record, so whichever rank evaluates the pair after the rebuild finds it. The first pass
  over new lists loads the sites from the records (:meth:`ContactHistory.prepare`).

Memory follows the contacts: 32 bytes a touching contact per buffer beside the lists, 32
bytes a record per sphere of a contact with the particles.

Units: m (springs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..particles import partner_key

#: the store's count field of the history records (``pdyn.particles.FIELDS``)
COUNT = "history_count"


@njit(inline="always", **JIT)
def site_of(u, slot, sites, n_sites):
    """This step's site of entry ``u`` evaluated at it, or −1 where it does not touch: ``slot``
    is written only for touching entries, so it names a site of this step (of the ``n_sites``
    listed in ``sites``) only where that site is this entry."""
    k = np.int64(slot[u])
    if k >= 0 and k < n_sites and sites[k] == np.int64(u):
        return k
    return -1


@njit(**JIT)
def _entry_site(u, mid_t, mirror, slot, sites, n_sites):
    """This step's site (or −1) of entry ``u`` of a row whose higher-id partners start at
    ``mid_t``: a lower-id partner that is a row has its site at its mirror entry."""
    if u < mid_t and mirror[u] >= 0:
        return site_of(mirror[u], slot, sites, n_sites)
    return site_of(u, slot, sites, n_sites)


@njit(**JIT)
def _count_records(ts, start, mid, partner, mirror, slot, sites, n_sites, counts):
    """Records of each row ``ts[r]`` (its touching contacts, from the last pass's sites) into
    ``counts[r]``; the total."""
    total = 0
    for r in range(ts.shape[0]):
        t = ts[r]
        c = 0
        for u in range(start[t], start[t + 1]):
            if _entry_site(u, mid[t], mirror, slot, sites, n_sites) >= 0:
                c += 1
        counts[r] = c
        total += c
    return total


@njit(**JIT)
def _fill_records(ts, start, mid, partner, mirror, slot, sites, n_sites, gid, spring, keys,
                  springs):
    """The records of the rows ``ts``, each in list order (ascending key): partner key and
    the site's spring."""
    q = 0
    for r in range(ts.shape[0]):
        t = ts[r]
        for u in range(start[t], start[t + 1]):
            k = _entry_site(u, mid[t], mirror, slot, sites, n_sites)
            if k >= 0:
                keys[q] = partner_key(gid[partner[u]])
                springs[q, 0] = spring[k, 0]
                springs[q, 1] = spring[k, 1]
                springs[q, 2] = spring[k, 2]
                q += 1


@njit(**JIT)
def _load_sites(rows, start, mid, partner, mirror, gid, count, first, keys, springs,
                site, spring):
    """The sites of the lists whose contact has a record with the row's sphere (keys ascend in
    list order: one merge per row), with those springs, into ``site`` / ``spring``
    (ascending); returns how many. A lower-id partner that is a row is skipped: the pair's
    site is in that row, loaded from its sphere's own record."""
    k = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        n = count[i]
        a = first[i]
        q = 0
        for u in range(start[t], start[t + 1]):
            if q >= n:
                break
            key = partner_key(gid[partner[u]])
            while q < n and keys[a + q] < key:
                q += 1
            if q < n and keys[a + q] == key:
                if not (u < mid[t] and mirror[u] >= 0):
                    site[k] = u
                    spring[k, 0] = springs[a + q, 0]
                    spring[k, 1] = springs[a + q, 1]
                    spring[k, 2] = springs[a + q, 2]
                    k += 1
                q += 1
    return k


def _buffers(n: int) -> tuple:
    """One buffer of sites: ``n`` list entries (int64) and springs (m, (n, 3))."""
    return np.zeros(n, np.int64), np.zeros((n, 3))


class ContactHistory:
    """The contact history between rebuilds (module docstring): last step's touching sites
    (``site``, ascending entries of the lists it follows) with their ``spring`` s, the buffers
    the next pass writes, and the per-entry ``slot`` of the last pass. :meth:`save` writes it
    into the particles' records, :meth:`prepare` loads it from them for lists it does not
    follow yet."""

    def __init__(self):
        self._buffers = [_buffers(0), _buffers(0)]
        self.count = 0
        self.slot = np.zeros(0, np.int32)  # per entry: this step's site (where touching)
        self._follows = None  # (the lists, their build number) the sites refer to
        self._passed = None  # the same for the lists the last pass wrote ``slot`` for
        self.saved = True  # the particles' records hold what the sites hold

    @property
    def site(self) -> np.ndarray:
        return self._buffers[0][0][:self.count]

    @property
    def spring(self) -> np.ndarray:
        return self._buffers[0][1][:self.count]

    def reserve(self, n: int) -> None:
        """The buffer the next pass writes holds at least ``n`` sites (a quarter more, so
        growth is rare; the sites beside the lists follow the contacts, not the list
        entries)."""
        if self._buffers[1][0].shape[0] < n:
            self._buffers[1] = _buffers(max(64, n + n // 4))

    def next_buffer(self) -> tuple:
        """The buffer the next pass writes (sites, springs)."""
        return self._buffers[1]

    def reset(self) -> None:
        """Forget the sites: the next pass loads them from the particles' records (a restart,
        which puts the checkpoint's records back after its first pass)."""
        self.count, self._follows, self._passed, self.saved = 0, None, None, True

    def save(self, store, lists, touched) -> None:
        """Write the history into the records of the rows' spheres of ``lists`` (before the
        lists are rebuilt or particles move in memory; idempotent); ``touched``: the rows (by
        index) that touched something in the last pass — every other row has none."""
        if self.saved:
            return
        if self._passed != (lists, lists.builds):
            raise RuntimeError("contact history: save asked for lists no pass has evaluated")
        counts = np.empty(touched.size, np.int64)
        total = _count_records(touched, lists.start, lists.mid, lists.partner, lists.mirror,
                               self.slot, self.site, self.count, counts)
        keys, springs = np.empty(total, np.int64), np.empty((total, 3))
        _fill_records(touched, lists.start, lists.mid, lists.partner, lists.mirror,
                      self.slot, self.site, self.count, store.gid, self.spring, keys, springs)
        store.set_records(COUNT, lists.rows[touched], counts,
                          {"history_key": keys, "history_spring": springs}, replace=True)
        self.saved = True

    def prepare(self, store, lists) -> tuple:
        """Last step's sites (entries, springs, count) for a pass over ``lists``, loaded from
        the records when the lists are new, and ``slot`` sized to the lists; the buffer the
        pass writes (:meth:`next_buffer`) then holds a quarter more sites than last step's."""
        if self._follows != (lists, lists.builds):
            if not self.saved:
                raise RuntimeError("contact history: the neighbour lists were rebuilt before "
                                   "the history was saved into the particles (save first)")
            count, first, pools = store.ragged(COUNT)
            n = int(count[lists.rows].sum())  # at most this many sites have a record
            if self._buffers[0][0].shape[0] < n:
                self._buffers[0] = _buffers(n + n // 4)
            site, spring = self._buffers[0]
            self.count = _load_sites(lists.rows, lists.start, lists.mid, lists.partner,
                                     lists.mirror, store.gid, count, first,
                                     pools["history_key"], pools["history_spring"], site,
                                     spring)
            self._follows = (lists, lists.builds)
        self.reserve(self.count + self.count // 4)
        if self.slot.shape[0] < lists.partner.shape[0]:
            n = lists.partner.shape[0]
            self.slot = np.empty(n + n // 4, np.int32)
        site, spring = self._buffers[0]
        return (site, spring, self.count), self.slot

    def advanced(self, count: int, lists) -> None:
        """The pass over ``lists`` wrote ``count`` sites into the second buffer (it becomes the
        history) and ``slot``."""
        self._buffers.reverse()
        self.count = count
        self.saved = False
        self._passed = (lists, lists.builds)
