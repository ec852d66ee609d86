"""Verlet neighbour lists with a skin: who may touch whom until the next rebuild.

At a rebuild the configured broad-phase structure, bound to radii enlarged by half the skin
(``r + skin/2``), yields the pairs that pass the shared exact predicate
(``pdyn.geometry.overlaps``) on those radii (``BroadPhase.contacts``: structures
that test while they emit never hold the candidate list): exactly the pairs with
|x_i − x_j| ≤ r_i + r_j + skin (with skin 0 the lists cut the candidates themselves). Every
*row* (an owned, integrated particle) lists its partners in ascending global id, then the
walls (infinite particles) whose plane is within r_i + skin, in wall order: the order in
which the contact kernel (``pdyn.dynamics.contact``) sums forces. Rows, not pairs, are the
unit: a row is where per-contact state keyed by the partner's global id can live, carried
across steps and rebuilds.

The lists stay valid while no particle has moved more than skin/2 since they were built (two
particles then approach by at most one skin). The driver measures each particle's displacement
since the build (``ParticleStore.build_pos``, in the integration kernel), takes the global
maximum with one reduction and asks :meth:`NeighbourList.due`; the same answer on every rank
count, so rebuild steps (and with them periodic wrapping, migration and the ghost plan, which
share this schedule) do not depend on the decomposition. This is the check of LAMMPS'
``neigh_modify check yes`` ([Thompson2022]) and HOOMD-blue's ``NeighborList`` buffer
([Anderson2020]); Verlet's original list ([Verlet1967]) rebuilt on a fixed interval.

What refers to one build of the lists — the contact history, the pass's links and scratch,
the rows that spun, the glued spheres' handles — *hangs* on the lists (:class:`Hanger`, as
LAMMPS' ``fix neigh/history`` hangs on its neighbour list, [Thompson2022]): the lists call it
before a rebuild (save what must outlive the build into the store), after a build and when
the store must hold the whole state (output, the end of a run). :meth:`NeighbourList.rebuild`
runs the whole rebuild: the broad phase brought up to date with the store's changes, its
pairs, the lists, the build positions.

A skin of 0 turns the lists into the contacts of the current step: the broad phase runs every
step and the lists hold the touching pairs only (the setting the structure comparisons of
``pdyn bench`` use); rebuilds of the ghost plan then follow the exchange's own skin.

Units: m.
"""

from __future__ import annotations

import functools
from contextlib import nullcontext

import numpy as np
from numba import njit

from .._jit import JIT
from ..geometry import overlaps
from ..mesh import MeshBundle, candidates, entry_homes
from ..particles import FIXED, INFINITE, OWNED
from ..walls import REACH, WallSet, wall_contact

NO_ENTRIES = np.zeros(0, np.int64)
NO_PARTNERS = np.zeros(0, np.int32)
NO_ROWS = np.zeros(0, np.int32)
NO_HOMES = np.zeros((0, 4))

#: the most entries a rank's lists hold: ``start``, ``split`` and ``partner`` are int32
#: (4 bytes an entry and a row, not 8)
MAX_ENTRIES = 2**31 - 1

#: default skin of the neighbour lists, in mean particle diameters (the fastest of 0.1-0.4 on
#: the drop and gas scenes)
SKIN_DIAMETERS = 0.3


@njit(**JIT)
def _wall_within(pos, rad, gid, normal, table, i, w, half):
    """Is the centre of i within ``rad[i] + half`` (plus the wall's own reach, a translating
    wall's motion until the next rebuild) of wall w's surface?"""
    g = -1 - gid[w]
    delta = wall_contact(pos[i, 0], pos[i, 1], pos[i, 2], rad[i], pos, normal, table, w, g)[3]
    return -delta <= half + table[g, REACH]


@njit(**JIT)
def _build_rows(pairs, pos, rad, gid, normal, table, rows, row_of, walls, half, exact, kept,
                mstart, mfacet, fhandle):
    """The lists of ``rows`` from ``pairs`` (M, 2) on enlarged radii ``rad``: candidates, cut
    here by the exact predicate, or (``exact``) pairs that already passed it.

    Returns ``(start, split, partner, facet)``, int32 (``start`` empty, nothing built, when
    the lists would hold more than ``MAX_ENTRIES``): row t's sphere partners are
    ``partner[start[t]:split[t]]`` in ascending global id, its walls
    ``partner[split[t]:start[t + 1]]`` in the order of ``walls`` (surface within
    ``rad[i] + half``, more for a translating wall;
    ``table``: the wall table, ``pdyn.walls``). ``row_of[h]`` is the row of handle h or −1.
    ``kept`` (≥ M; unused with ``exact``) is scratch the caller keeps between builds.
    Mesh triangles (``pdyn.mesh.candidates``: row t's are ``mfacet[mstart[t]:mstart[t +
    1]]``, ascending) follow the other walls, each entry the mesh's handle
    (``fhandle[f]``, one per triangle of the meshes); the fourth and fifth results give each
    entry's triangle and its place q in ``mfacet`` (−1 otherwise), empty without meshes.
    One pass over the pairs keeps those within reach (with ``exact``: all that touch a row);
    the rows are filled from those and each (short) row is insertion-sorted by partner gid,
    its keys gathered into a buffer of the longest row's length."""
    n = rows.shape[0]
    m = pairs.shape[0]
    count = np.zeros(n + 1, np.int32)
    k = 0
    for q in range(m):
        i = pairs[q, 0]
        j = pairs[q, 1]
        ti = row_of[i]
        tj = row_of[j]
        if (ti >= 0 or tj >= 0) and (exact or overlaps(pos, rad, i, j)):
            if not exact:
                kept[k] = q
            k += 1
            if ti >= 0:
                count[ti + 1] += 1
            if tj >= 0:
                count[tj + 1] += 1
    start = np.empty(n + 1, np.int32)
    split = np.empty(n, np.int32)
    start[0] = 0
    longest = 0
    total = 0  # int64: checked against MAX_ENTRIES before it is stored
    for t in range(n):
        n_walls = 0
        for w in range(walls.shape[0]):
            if _wall_within(pos, rad, gid, normal, table, rows[t], walls[w], half):
                n_walls += 1
        total += count[t + 1] + n_walls + mstart[t + 1] - mstart[t]
        if total > MAX_ENTRIES:
            none = np.empty(0, np.int32)
            return start[:0], split, none, none, none
        split[t] = start[t] + count[t + 1]
        start[t + 1] = total
        longest = max(longest, count[t + 1])
    partner = np.empty(start[n], np.int32)  # handles: 4 bytes an entry
    # every entry's triangle and slot whenever there are meshes (read for each wall entry)
    facet = np.full(start[n] if fhandle.shape[0] > 0 else 0, -1, np.int32)
    slot = np.full(facet.shape[0], -1, np.int32)
    fill = count  # no longer needed: where each row's next partner goes
    for t in range(n):
        fill[t] = start[t]
    for r in range(k if not exact else m):
        q = r if exact else kept[r]
        if exact and row_of[pairs[q, 0]] < 0 and row_of[pairs[q, 1]] < 0:
            continue
        for a in range(2):
            t = row_of[pairs[q, a]]
            if t >= 0:
                partner[fill[t]] = pairs[q, 1 - a]
                fill[t] += 1
    key = np.empty(longest, np.int64)
    for t in range(n):
        s = start[t]
        for u in range(s, split[t]):
            key[u - s] = gid[partner[u]]
        for u in range(s + 1, split[t]):
            p = partner[u]
            g = key[u - s]
            v = u - 1
            while v >= s and key[v - s] > g:
                partner[v + 1] = partner[v]
                key[v + 1 - s] = key[v - s]
                v -= 1
            partner[v + 1] = p
            key[v + 1 - s] = g
        u = split[t]
        for w in range(walls.shape[0]):
            if _wall_within(pos, rad, gid, normal, table, rows[t], walls[w], half):
                partner[u] = walls[w]
                u += 1
        for q in range(mstart[t], mstart[t + 1]):
            facet[u] = mfacet[q]
            slot[u] = q
            partner[u] = fhandle[mfacet[q]]
            u += 1
    return start, split, partner, facet, slot


@njit(**JIT)
def mark_built(pos, build_pos, handles):
    """Remember the positions of ``handles`` as those of the last build."""
    for t in range(handles.shape[0]):
        h = handles[t]
        build_pos[h, 0] = pos[h, 0]
        build_pos[h, 1] = pos[h, 1]
        build_pos[h, 2] = pos[h, 2]


def integrated(flags: np.ndarray) -> np.ndarray:
    """Handles of the owned, finite, not fixed particles (the lists' rows), ascending."""
    return np.flatnonzero(((flags & OWNED) != 0) & ((flags & (INFINITE | FIXED)) == 0))


def _untimed(phase: str):
    return nullcontext()


class Hanger:
    """State that hangs on one build of the neighbour lists (it refers to their entries or
    rows). Register it with :meth:`NeighbourList.hang`; the lists call their hangers in
    registration order, each hook with the store and the lists:

    * ``before_rebuild(store, lists)``: the lists are about to be rebuilt and particles to
      move in memory (migration, reordering, the outlet): put what must outlive the build
      into the store, let go of what refers to the old entries;
    * ``after_build(store, lists)``: new lists (``lists.relisted``: their rows were listed
      afresh, the store may have changed);
    * ``save(store, lists)``: put the state into the store now (before output, at the end of
      a run); the lists stay, and the next pass may take it back.

    Each hook does nothing unless overridden."""

    def before_rebuild(self, store, lists) -> None:
        pass

    def after_build(self, store, lists) -> None:
        pass

    def save(self, store, lists) -> None:
        pass


class NeighbourList:
    """Per-row partner lists (handles), valid until a particle has moved more than half the
    ``skin`` (m) since the build. ``skin = 0``: the touching pairs of the current positions,
    rebuilt every step, while the schedule of rebuilds (ghost plan, migration, memory order)
    follows ``rebuild_skin`` (the exchange's skin; default ``skin``).

    ``rows`` (handles, the integrated owned particles), ``start``, ``split`` and ``partner``
    (see :func:`_build_rows`) are read by the contact kernel.
    """

    def __init__(self, skin: float = 0.0, rebuild_skin: float | None = None):
        self.skin = float(skin)
        self.rebuild_skin = self.skin if rebuild_skin is None else float(rebuild_skin)
        self.reach = 0.5 * self.skin  # half the list skin of the last build (m)
        self.rows = np.zeros(0, np.int64)
        self.start = np.zeros(1, np.int32)
        self.split = NO_ROWS
        self.partner = NO_PARTNERS
        self.facet = NO_PARTNERS  # each entry's mesh triangle (−1: none); empty: no mesh entry
        # the mesh entries q, in list order: each entry's q (−1: none; ``slot``), and of each q
        # the row's sphere (``mesh_sphere``) and triangle (``mesh_facet``); the mesh handle of
        # each triangle (``mesh_wall``). ``pdyn.mesh.contact_geometry`` reads them.
        self.slot = NO_PARTNERS
        self.mesh_sphere = self.mesh_facet = self.mesh_wall = NO_PARTNERS
        # of each q its centre in the mesh's frame and its distance at the build (M, 4; m)
        self.mesh_home = NO_HOMES
        self.builds = 0  # lists built so far
        self.relisted = False  # the last build listed its rows afresh
        self._hangers = []  # what hangs on a build (:class:`Hanger`), in registration order
        self._retired = True  # the hangers were told of the coming rebuild
        self._radius = np.zeros(0)
        # the build's scratch (candidates only), kept between rebuilds: on the 97k gas, fresh
        # pages (a page fault each) were ~40 % of the build
        self._kept = np.zeros(0, np.int32)

    @property
    def every_step(self) -> bool:
        """True when the lists hold only current contacts and are rebuilt every step."""
        return self.skin == 0.0

    def due(self, drift2: float) -> bool:
        """Is this a rebuild step, given the largest squared displacement (m², over all
        ranks) of any particle since the last rebuild? (Lists with a skin are rebuilt then;
        with ``skin = 0`` they are rebuilt every step anyway.)"""
        half = 0.5 * self.rebuild_skin
        return drift2 > half * half

    def radii(self, radius: np.ndarray, drift: float = 0.0) -> np.ndarray:
        """The radii to bind the broad phase to for the next build: ``radius + skin/2 +
        drift`` (a capacity-sized array kept here; ``radius`` itself for ``skin = 0``).
        ``drift`` (m) widens the reach when particles already moved since the last rebuild
        (a restart): each may still move skin/2 + drift from where it is now."""
        self.reach = 0.5 * self.skin + float(drift) if self.skin > 0.0 else 0.0
        if self.reach == 0.0:
            return radius
        if self._radius.shape != radius.shape:
            self._radius = np.empty_like(radius)
        np.add(radius, self.reach, out=self._radius)
        return self._radius

    def build(self, pairs: np.ndarray, store, radius: np.ndarray, rows: np.ndarray,
              walls: np.ndarray, exact: bool = False, table: np.ndarray | None = None,
              mesh: MeshBundle | None = None) -> None:
        """Lists of ``rows`` from the broad phase's finite ``pairs`` on the radii :meth:`radii`
        returned (passed as ``radius``) — candidates, or with ``exact`` pairs that passed the
        exact test on those radii (``BroadPhase.contacts``) — and the wall handles ``walls``
        (summed in the order given; ``table``: the wall table, default planes at rest), then
        the triangles of the meshes (``mesh``: the bundle, ``pdyn.mesh.pack``, or None; their walls'
        handles are ``walls[row]``) within the same reach, found on their grids. The hangers
        are told after the build (``after_build``)."""
        rows = np.ascontiguousarray(rows, np.int64)
        pairs = np.ascontiguousarray(pairs, np.int32)
        self.release()
        walls = np.ascontiguousarray(walls, np.int64)
        table = WallSet(np.zeros((len(walls), 3)), np.zeros((len(walls), 3))).table \
            if table is None else table
        mstart, mfacet, fhandle = self._mesh_candidates(store, radius, rows, walls, table, mesh)
        row_of = np.full(store.capacity, -1, np.int32)
        row_of[rows] = np.arange(rows.size, dtype=np.int32)
        m = pairs.shape[0]
        if not exact and self._kept.shape[0] < m:  # scratch grows with headroom, never shrinks
            self._kept = np.empty(m + m // 4, np.int32)
        start, split, partner, facet, slot = _build_rows(
            pairs, store.pos, radius, store.gid, store.normal, table, rows, row_of, walls,
            self.reach, exact, self._kept, mstart, mfacet, fhandle)
        if start.shape[0] == 0:
            raise ValueError(f"neighbour lists: more than {MAX_ENTRIES} entries on this rank "
                             "(give it more ranks)")
        self.start, self.split, self.partner, self.facet, self.slot = start, split, partner, \
            facet, slot
        self.mesh_sphere = np.repeat(rows.astype(np.int32), np.diff(mstart))
        self.mesh_facet, self.mesh_wall = mfacet.astype(np.int32), fhandle
        if mesh is not None:
            self.mesh_home = np.empty((mfacet.shape[0], 4))
            entry_homes(self.mesh_sphere, self.mesh_facet, fhandle, store.pos, mesh.records,
                        mesh.frames, mesh.tmesh, self.mesh_home)
        self.rows = rows
        self.builds += 1
        self._retired = False
        for h in self._hangers:
            h.after_build(store, self)

    def hang(self, *hangers: Hanger) -> None:
        """Register ``hangers`` (:class:`Hanger`): called, in the order registered, before
        each rebuild, after each build and at each :meth:`save`."""
        self._hangers.extend(hangers)

    def before_rebuild(self, store) -> None:
        """The lists will be rebuilt and particles may move in memory: each hanger saves
        what must outlive the build into ``store`` and lets go of the old entries (once per
        rebuild; :meth:`rebuild` calls it if the driver did not)."""
        if not self._retired:
            for h in self._hangers:
                h.before_rebuild(store, self)
            self._retired = True

    def save(self, store) -> None:
        """Each hanger puts its state into ``store`` (output, the end of a run): the store
        then holds the whole state. It changes no result."""
        for h in self._hangers:
            h.save(store, self)

    def rebuild(self, broadphase, store, changes: list | None, *, relist: bool, walls,
                table=None, mesh=None, drift: float = 0.0, timers=_untimed) -> None:
        """The whole rebuild: the hangers told (:meth:`before_rebuild`), the old entries
        released, the ``broadphase`` brought up to date with the store's ``changes``
        (``StoreChanges`` one after the other, applied as their net change,
        ``StoreChanges.then``; None: built afresh, e.g. after reordering) and its pairs within
        reach found (timed as ``broadphase``), the lists built (:meth:`build`, timed as
        ``neighbours``; ``walls`` the wall handles in sum order, ``table`` and ``mesh`` the
        wall table and the meshes' bundle), then the hangers told again. ``relist`` (a
        schedule rebuild): the integrated particles are listed afresh and every owned
        particle's build position reset. ``drift`` (m): how far particles may have moved
        since the last build (a restart). ``timers``: ``timers(phase)`` a context manager
        (``pdyn.timers.PhaseTimers``)."""
        self.before_rebuild(store)
        self.release()  # memory: the old entries are not held through the query
        bp = broadphase
        with timers("broadphase"):
            reach = self.reach
            if changes is not None:  # removed handles first (their slots may be reused)
                changes = functools.reduce(lambda a, b: a.then(b), changes)
                if changes.removed.size:
                    bp.remove(changes.removed)
            radius = self.radii(store.radius, drift)
            if changes is None or self.reach != reach:
                bp.build(store.pos, radius, store.live)
            else:
                added = changes.added
                if added.size:
                    bp.bind(store.pos, radius)  # the store may have grown
                    bp.insert(added)
                bp.update(store.pos, radius)
            # lists with a skin take the pairs within reach (structures that test while they
            # emit never hold the candidates); skin 0 keeps the candidate query pdyn bench times
            exact = not self.every_step
            if exact:  # nothing the structure keeps is read before the next rebuild
                pairs = bp.contacts(include_infinite=False)
                bp.release()
            else:
                pairs = bp.candidate_pairs(include_infinite=False)
        with timers("neighbours"):
            self.relisted = relist or changes is None
            rows = integrated(store.flags) if self.relisted else self.rows
            if relist:  # every owned sphere (a fixed one at rest keeps zero drift)
                mark_built(store.pos, store.build_pos, store.owned)
            self.build(pairs, store, radius, rows, walls, exact, table, mesh)

    def release(self) -> None:
        """The lists are about to be rebuilt: their entries go first (the history was saved
        from them), before the broad phase's query and the new lists are made; ``rows`` stay.
        """
        self.start, self.split, self.partner = np.zeros(1, np.int32), NO_ROWS, NO_PARTNERS
        self.facet = self.slot = NO_PARTNERS
        self.mesh_sphere = self.mesh_facet = self.mesh_wall = NO_PARTNERS
        self.mesh_home = NO_HOMES

    def _mesh_candidates(self, store, radius, rows, walls, table, mesh) -> tuple:
        """The rows' mesh triangles within reach (CSR start, triangles) and each triangle's
        mesh handle; empty without meshes."""
        if mesh is None or rows.shape[0] == 0:
            return np.zeros(rows.shape[0] + 1, np.int64), NO_ENTRIES, NO_PARTNERS
        mesh_rows = mesh.rows
        handles = walls[mesh_rows]
        extra = np.ascontiguousarray(table[mesh_rows, REACH])  # (``radius`` holds the skin/2)
        origin = np.ascontiguousarray(store.pos[handles])
        mstart, mfacet = candidates(rows, store.pos, radius, extra, mesh, origin, mesh.frames)
        return mstart, mfacet, handles[mesh.tmesh].astype(np.int32)

    def entries(self) -> int:
        """Partner entries over all rows (list memory: 4 bytes each)."""
        return int(self.start[-1])
