"""The tangential contact history: a spring per touching contact and side, of any number per
sphere.

Each side of a contact has its own spring (its row in the lists); the two are exact negatives,
except for a pair seen through a periodic image, whose shifted positions round differently on
each side. Where ``pdyn.dynamics.contact`` evaluates a pair of two rows once, the first row
alone keeps the spring between rebuilds, and the second's (the negated) is added
(:meth:`ContactHistory.add_negated`) before anything else reads the history. Two homes, as
LAMMPS' ``fix neigh/history`` keeps them ([Thompson2022]): during the steps between two
rebuilds of the neighbour lists the history lives beside the lists, and at a rebuild it is
handed over to the new lists by partner id.

* **Beside the lists** (:class:`ContactHistory`): last step's touching entries (ascending,
  with their springs) and this step's, two buffers in turn; the pass merges them as both
  stream by in list order, so a step reads and writes only the contacts' springs,
  contiguously. The buffers follow the contacts (a pass that finds more than they hold grows
  them and runs again), not the list entries.
* **With the particles** (the ragged fields ``history_count`` / ``history_key`` /
  ``history_spring`` of ``pdyn.particles.FIELDS``): before the lists are rebuilt or particles
  move (migration, rebalancing, reordering, the outlet), :meth:`ContactHistory.save` gives
  every row's sphere one record per touching contact — the partner's key
  (``pdyn.particles.partner_key``, ascending in list order) and its spring — in the store,
  where reordering, migration and checkpoints carry it like any field; the first pass over
  new lists loads its entries from them (one merge per row). The records are in list order,
  as the buffer is: the store takes the buffer's springs as its pool of springs (no copy) and
  only the keys are written.

Memory follows the contacts, and the history lives in one home at a time: 29 bytes a contact
and side (a pair evaluated once: a contact) per buffer beside the lists between rebuilds (the
records released), a key of 8 bytes and the spring of 24 in the last buffer while saved (the
rest of the buffers released).

Units: m (springs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..heap import release_free
from ..particles import entry_key, partner_key  # noqa: F401 (re-exported)
from .neighbours import Hanger

#: the store's count field of the history records (``pdyn.particles.FIELDS``)
COUNT = "history_count"


@njit(**JIT)
def _count_records(start, entry, n):
    """Touching entries (of the ``n`` ascending ``entry``) of each row of lists ``start``."""
    rows = start.shape[0] - 1
    counts = np.zeros(rows, np.int64)
    q = 0
    for t in range(rows):
        while q < n and entry[q] < start[t + 1]:
            counts[t] += 1
            q += 1
    return counts


@njit(**JIT)
def _fill_keys(entry, partner, facet, gid, keys):
    """The records' partner keys (``facet``: the entries' mesh triangles, or empty) of the
    touching ``entry``, in list order."""
    meshes = facet.shape[0] > 0
    for q in range(keys.shape[0]):
        u = entry[q]
        keys[q] = entry_key(gid[partner[u]], facet[u] if meshes else -1)


@njit(**JIT)
def _load_entries(rows, start, partner, facet, gid, count, first, keys, springs, entry,
                  spring):
    """The list entries of the rows whose partner has a record with the row's sphere (keys
    ascend in list order: one merge per row), with those springs, into ``entry`` /
    ``spring``; returns how many."""
    k = 0
    meshes = facet.shape[0] > 0
    for t in range(rows.shape[0]):
        i = rows[t]
        n = count[i]
        a = first[i]
        q = 0
        for u in range(start[t], start[t + 1]):
            if q >= n:
                break
            key = entry_key(gid[partner[u]], facet[u] if meshes else -1)
            while q < n and keys[a + q] < key:
                q += 1
            if q < n and keys[a + q] == key:
                entry[k] = u
                spring[k, 0] = springs[a + q, 0]
                spring[k, 1] = springs[a + q, 1]
                spring[k, 2] = springs[a + q, 2]
                k += 1
                q += 1
    return k


@njit(**JIT)
def _merge_negated(entry, spring, slid, n, at, to, new_entry, new_spring, new_slid):
    """The history's ``n`` ascending ``entry`` and the entries ``to`` (ascending), each with
    the negated spring and the slip flag of place ``at`` of the history, merged into the
    ``new_`` buffers (an entry the history holds keeps its own); returns how many."""
    k = q = m = 0
    while q < n or m < to.shape[0]:
        if m < to.shape[0] and (q >= n or to[m] < entry[q]):
            a = at[m]
            new_entry[k] = to[m]
            new_spring[k, 0], new_spring[k, 1], new_spring[k, 2] = \
                -spring[a, 0], -spring[a, 1], -spring[a, 2]
            new_slid[k] = slid[a]
            m += 1
        else:
            m += m < to.shape[0] and to[m] == entry[q]  # (it holds its own)
            new_entry[k] = entry[q]
            new_spring[k, 0], new_spring[k, 1], new_spring[k, 2] = \
                spring[q, 0], spring[q, 1], spring[q, 2]
            new_slid[k] = slid[q]
            q += 1
        k += 1
    return k


def _buffers(n: int) -> tuple:
    """One buffer: ``n`` list entries (int32: entries index the lists' int32 partners),
    springs (m, (n, 3)) and whether each contact slid (uint8: a hint for the next pass,
    ``pdyn.dynamics.friction.tangential_force``; not saved). Uninitialised: a pass reads only
    the entries written before (so the pages of the headroom stay untouched until used)."""
    return np.empty(n, np.int32), np.empty((n, 3)), np.empty(n, np.uint8)


#: a buffer a pass writes holds last step's contacts and an eighth more (so a pass that finds
#: more than fit, and runs again, is rare); one that does not is replaced by one with a
#: quarter more (so growth is rare)
HEADROOM, GROWTH = 8, 4
#: and room for an entry per this many rows at least: while the first contacts form, the
#: count grows by more than the headroom a step, and each rerun is a whole pass
ROWS_PER_ENTRY = 8

#: the most list entries the int32 entry numbers address
MAX_ENTRIES = 2**31 - 1


class ContactHistory(Hanger):
    """The contact history between rebuilds (module docstring): last step's touching entries
    (``entry``, ascending, of the lists it follows) with their ``spring``, and the buffer the
    next pass writes. It hangs on the lists (``pdyn.dynamics.neighbours.Hanger``): before a
    rebuild and when asked to :meth:`save` it writes itself into the particles' records, and
    the next pass (:meth:`prepare`) loads it from them. The history lives in one home at a
    time: a save releases the buffers, a load the records."""

    def __init__(self):
        self._buffers = [_buffers(0), _buffers(0)]
        self.count = 0
        self.saved = True  # the particles' records hold the history (the buffers none)

    @property
    def entry(self) -> np.ndarray:
        return self._buffers[0][0][:self.count]

    @property
    def spring(self) -> np.ndarray:
        return self._buffers[0][1][:self.count]

    def reserve(self, n: int) -> None:
        """The buffer the next pass writes holds ``n`` contacts and :data:`HEADROOM` more
        (replaced by one of :data:`GROWTH` more if not; the old one is released first)."""
        if self._buffers[1][0].shape[0] < n + n // HEADROOM:
            self._buffers[1] = _buffers(0)
            self._buffers[1] = _buffers(max(64, n + n // GROWTH))
            release_free()  # the old buffer's pages (``pdyn.heap``)

    def add_negated(self, at: np.ndarray, to: np.ndarray) -> None:
        """Give list entries ``to`` (ascending) the negated springs (and the slip flags) of the
        history's entries at places ``at`` — a pair's second side, whose spring its first
        keeps (``pdyn.dynamics.contact``) —, unless one holds its own: merged into the other
        buffer, which becomes the history (no copy beside the two buffers)."""
        self.reserve(self.count + to.shape[0])
        self.count = _merge_negated(*self._buffers[0], self.count, at, to, *self._buffers[1])
        self._buffers.reverse()

    def next_buffer(self) -> tuple:
        """The buffer the next pass writes (entries, springs, slid)."""
        return self._buffers[1]

    def save(self, store, lists) -> None:
        """Write the history into the records of the rows' spheres of ``lists`` (the lists
        the last pass evaluated; idempotent) and release the buffers: the next pass loads it
        from the records."""
        if self.saved:
            return
        self._buffers[1] = _buffers(0)  # the next pass's buffer: nothing to keep
        counts = _count_records(lists.start, self.entry, self.count)  # per row, zeros too
        pools = store.replace_records(COUNT, lists.rows, counts,
                                      given={"history_spring": self.spring})
        _fill_keys(self.entry, lists.partner, lists.facet, store.gid, pools["history_key"])
        self._buffers[0] = _buffers(0)
        self.count = 0
        self.saved = True

    def before_rebuild(self, store, lists) -> None:
        """The lists are rebuilt, particles move: the history goes into the records."""
        self.save(store, lists)

    def prepare(self, store, lists) -> tuple:
        """Last step's entries, springs, slid flags and count for a pass over ``lists``, loaded
        from the records when the history is there (new lists, or a save; the records are
        then released), and whether it was (every row's torque must then be written); the buffer the pass writes
        (:meth:`next_buffer`) then has room for last step's contacts and :data:`HEADROOM` more,
        at least an entry per :data:`ROWS_PER_ENTRY` rows."""
        fresh = self.saved
        if fresh:
            self._load(store, lists)
        self.reserve(max(self.count, lists.rows.shape[0] // ROWS_PER_ENTRY))
        entry, spring, slid = self._buffers[0]
        return entry, spring, slid, self.count, fresh

    def entries(self, store, lists) -> np.ndarray:
        """The touching entries of ``lists`` the last pass wrote (ascending), from the buffer
        or, once saved, from the particles' records (which stay)."""
        if not self.saved:
            return self.entry
        count, first, pools = store.ragged(COUNT)
        n = int(count[lists.rows].sum())
        entry, spring, _ = _buffers(n)
        k = _load_entries(lists.rows, lists.start, lists.partner, lists.facet, store.gid,
                          count, first, pools["history_key"], pools["history_spring"], entry,
                          spring)
        return entry[:k]

    def _load(self, store, lists) -> None:
        """Last step's entries and springs for ``lists`` from the particles' records, which
        are then released (no reference to them outlives this call)."""
        if lists.entries() > MAX_ENTRIES:
            raise ValueError(f"contact history: {lists.entries()} list entries on this "
                             f"rank, more than {MAX_ENTRIES} (give it more ranks)")
        count, first, pools = store.ragged(COUNT)
        n = int(count[lists.rows].sum())  # at most this many entries have a record
        if self._buffers[0][0].shape[0] < n:
            self._buffers[0] = _buffers(0)
            self._buffers[0] = _buffers(n + n // GROWTH)
        entry, spring, slid = self._buffers[0]
        self.count = _load_entries(lists.rows, lists.start, lists.partner, lists.facet,
                                   store.gid, count, first, pools["history_key"],
                                   pools["history_spring"], entry, spring)
        slid[:self.count] = 0  # not kept in the records: a hint only
        store.clear_records(COUNT)
        release_free()  # the records' pages and the rebuild's temporaries (``pdyn.heap``)
        self.saved = False

    def advanced(self, count: int) -> None:
        """The pass wrote ``count`` entries into the second buffer: it becomes the history."""
        self._buffers.reverse()
        self.count = count
        self.saved = False
