"""Hierarchical hash grid (HHG): a hierarchy of hashed uniform grids, one per size class, with
O(1) insert/remove and an incremental update ([Schornbaum2009]; [mesapd-HashGrids]).

What it does. Every finite particle lives in exactly one cell of exactly one grid: the grid
whose cell edge ``c_k = c_0 f^k`` satisfies ``c_{k-1} <= size < c_k`` (size = AABB edge =
diameter; [Schornbaum2009] Sec. 3.3, Eq. 3.3.1-3.3.3). ``c_0`` = first object's size * sqrt(f)
(Eq. 3.3.2); grids are created only when an object needs them and kept sorted by cell size (Alg.
3). Each grid has ``n^3`` cells, ``n`` a power of two, and maps the infinite lattice onto them
with geometric modulo hashing: multiplication by the inverse cell size, a bit mask, and
Schornbaum's mirror rule for negative coordinates (Sec. 3.2, Code Snippet 11). Each occupied
cell owns a container (initial capacity 16, doubling; mesa_pd ``cellVectorSize``) whose items
are a block of a pooled arena; every object remembers (grid, container, slot), so removal is an
O(1) swap-remove (Sec. 3.1, Code Snippets 4-5); an emptied cell is reset and its container
returns to its arena keeping its item block (as a cleared vector keeps its capacity), and each
grid keeps a list of its occupied cells, also with O(1) swap-removal (Sec. 3.4-3.5). A grid
doubles its cells per axis when cells/objects would drop below ``minimal_grid_density`` (Sec.
3.4, mesa_pd ``minimalGridDensity``) and never shrinks (Sec. 3.5). The default is 5, not
mesa_pd's 8: every step reads the cell table at the occupied cells' neighbours, so once the
table outgrows the cache a doubling costs more than the hash collisions it saves (on Koch's
sparse static box the step times of the two table sizes cross at about 5 cells per object). Below
``activation_threshold`` (32) residents plain all-pairs is used; once exceeded the grids are
built and stay (Sec. 3.7). Update (Sec. 2.6, Alg. 2): ``update="incremental"`` re-hashes every
object and moves it only if its cell (or size class) changed; ``update="rebuild"`` clears all
cells and reinserts everything (the comparison of Sec. 4.3). Detection (Alg. 4) is in
``_hash_grid_pairs``; it applies the exact sphere test itself, so ``candidate_pairs()`` returns
the overlapping pairs and ``stats()["candidates"]`` counts the pairs it tested.

Layout (``_hashed_grids.Hierarchy``): numpy arrays mutated by njit kernels. A mutating kernel
stops before touching anything when an arena needs room or a grid must be created or doubled;
the class services that rare event (amortised O(1)) and resumes the kernel where it stopped
(the grow-and-resume protocol of ``_arena``).

Exactness with round-off: an object's size used for the grid choice is enlarged by a relative
2^-30 plus 2^-40 * max|coordinate| so that two overlapping objects always hash to the same or
adjacent lattice cells even at 1e9 coordinates, and so that ``|x| / c < 2^47`` (no int64
overflow in the hash). Walls (infinite radius) are kept by the base class.

When to choose it: use ``hash_grid`` when the largest radius is more than ~3 times the cubic
mean radius (``auto.SPREAD_MAX``: a single-level grid then tests ~spread³ times the candidates;
[Koch2020] Sec. 4.1.7-4.1.8, Tables 6-7), or the scene is sparse or clustered and stepped many
times; for monodisperse, homogeneous scenes ``index_sort`` is faster (``docs/report``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ._arena import (HEAD, UNIT, aligned, alloc, free, grown, has_block, has_room, new_state,
                     reset, run_resumable)
from ._hash_grid_pairs import hhg_pairs, snapshot
from ._hashed_grids import (C_CAP, C_CELL, C_CLS, C_COUNT, C_GRID, C_OCC, C_START, CT_COLS,
                            G_BASE, G_CELL, G_COUNT, G_INV, G_LEVEL, G_LOW, G_M, G_NOCC,
                            G_OCCBASE, G_OCCCAP, G_RMAX, O_CELL, O_CONT, O_GRID, O_SLOT, P_C0,
                            P_DENSITY, P_F, P_LOGF, S_MAX_M, S_MOVED, Hierarchy, cell_hash,
                            cell_of_level, eff_size, level, offset_table)
from ._kernels import brute_pairs, run_pair_kernel
from ..values import BadValue
from .base import BroadPhase, BroadPhaseError
from .params import UPDATE, Param

# events returned by the mutating kernels: done; an arena needs room; a grid must double, a new
# grid must be created, the hierarchy needs its first cell size (arg: grid, level, -)
EV_OK, EV_ROOM, EV_GROW_GRID, EV_NEW_GRID, EV_FIRST = range(5)


# ------------------------------------------------------------------ storing objects
# The kernels take the ``Hierarchy`` record and unpack it once; the per-object helpers take the
# arrays they touch (passing the record to them, i.e. taking the arrays out of it in every call,
# cost up to 30 % on the update path, measured).
@njit(**JIT)
def _place(gi, cells, occ, ct, ct_st, items, items_st, ob, h, g, cell):
    """Store handle h in cell ``cell`` of grid g: O(1) amortised. Returns False, with nothing
    modified, when an arena needs room first."""
    idx = gi[g, G_BASE] + cell
    cont = np.int64(cells[idx])
    if cont < 0:
        if ct_st[HEAD] >= 0:  # a pooled container, with the item block it kept
            cont = alloc(ct, ct_st, 0)
        else:  # a new container with a block of the initial capacity
            ct_ok = has_room(ct, ct_st, 1)
            if not (has_block(items, items_st, 0) and ct_ok):
                return False
            cont = alloc(ct, ct_st, 0)
            ct[cont, C_START] = alloc(items, items_st, 0)
            ct[cont, C_CAP] = items_st[UNIT]  # the initial capacity
            ct[cont, C_CLS] = 0
        nocc = gi[g, G_NOCC]
        ct[cont, C_COUNT] = 0
        ct[cont, C_CELL] = cell
        ct[cont, C_GRID] = g
        ct[cont, C_OCC] = nocc
        occ[gi[g, G_OCCBASE] + nocc] = cont
        gi[g, G_NOCC] = nocc + 1
        cells[idx] = cont
    else:
        cnt = ct[cont, C_COUNT]
        if cnt == ct[cont, C_CAP]:  # container full: move to a block twice the size
            cls = ct[cont, C_CLS]
            if not has_block(items, items_st, cls + 1):
                return False
            new = alloc(items, items_st, cls + 1)
            old = ct[cont, C_START]
            for a in range(cnt):
                items[new + a] = items[old + a]
            free(items, items_st, old, cls)
            ct[cont, C_START] = new
            ct[cont, C_CAP] = 2 * cnt
            ct[cont, C_CLS] = cls + 1
    slot = ct[cont, C_COUNT]
    items[ct[cont, C_START] + slot] = h
    ct[cont, C_COUNT] = slot + 1
    ob[h, O_GRID] = g
    ob[h, O_CONT] = cont
    ob[h, O_SLOT] = slot
    ob[h, O_CELL] = cell
    gi[g, G_COUNT] += 1
    return True


@njit(**JIT)
def _unplace(ob, h):
    ob[h, O_GRID] = -1
    ob[h, O_CONT] = -1
    ob[h, O_SLOT] = -1
    ob[h, O_CELL] = -1


@njit(**JIT)
def _release(gi, cells, ct, ct_st, g, cont):
    """Reset the (emptied) cell of container ``cont`` of grid g and return the container to
    its arena, keeping its item block (as a cleared vector keeps its capacity): the block is
    not touched, and the next new cell reuses both."""
    cells[gi[g, G_BASE] + ct[cont, C_CELL]] = -1
    free(ct, ct_st, cont, 0)


@njit(**JIT)
def _take(gi, cells, occ, ct, ct_st, items, items_st, ob, h):
    """Swap-remove handle h from its cell; when the cell empties, swap-remove it from its
    grid's occupied list and release it. O(1); the items are not touched when h is its
    container's last object."""
    g = ob[h, O_GRID]
    cont = ob[h, O_CONT]
    slot = ob[h, O_SLOT]
    cnt = ct[cont, C_COUNT] - 1
    if slot != cnt:
        start = ct[cont, C_START]
        last = items[start + cnt]
        items[start + slot] = last
        ob[last, O_SLOT] = slot
    ct[cont, C_COUNT] = cnt
    if cnt == 0:
        p = ct[cont, C_OCC]
        base = gi[g, G_OCCBASE]
        n = gi[g, G_NOCC] - 1
        moved = occ[base + n]
        occ[base + p] = moved
        ct[moved, C_OCC] = p
        gi[g, G_NOCC] = n
        _release(gi, cells, ct, ct_st, g, cont)
    gi[g, G_COUNT] -= 1
    _unplace(ob, h)


@njit(**JIT)
def _grid_for(par, sc, gf, gi, order, pos, rad, h):
    """[Schornbaum2009] Alg. 3 + Sec. 3.4 for one object: (EV_OK, its grid g), or the event
    that must be serviced first (EV_FIRST; EV_NEW_GRID, level; EV_GROW_GRID, grid)."""
    if par[P_C0] <= 0.0:
        return EV_FIRST, 0
    s = eff_size(pos, rad, h)
    for q in range(order.shape[0]):
        g = order[q]
        if gf[g, G_LOW] <= s and s < gf[g, G_CELL]:
            m = gi[g, G_M]
            if m < sc[S_MAX_M] and float(gi[g, G_COUNT] + 1) * par[P_DENSITY] > float(
                    np.int64(1) << (3 * m)):
                return EV_GROW_GRID, g
            return EV_OK, g
    return EV_NEW_GRID, level(s, par[P_C0], par[P_F], par[P_LOGF])


@njit(**JIT)
def _insert_kernel(hg, pos, rad, handles, t0):
    """Insert ``handles[t0:]``; returns (how far it got, event, arg)."""
    par, sc, gf, gi, order, _, cells, occ, ct, ct_st, items, items_st, ob = hg
    for t in range(t0, handles.shape[0]):
        h = handles[t]
        ev, g = _grid_for(par, sc, gf, gi, order, pos, rad, h)
        if ev != EV_OK:
            return t, ev, g
        cell = cell_hash(pos, h, gf[g, G_INV], gi[g, G_M])
        if not _place(gi, cells, occ, ct, ct_st, items, items_st, ob, h, g, cell):
            return t, EV_ROOM, 0
        if rad[h] > gf[g, G_RMAX]:
            gf[g, G_RMAX] = rad[h]  # upper bound of the grid's radii (reset when it is cleared)
    return handles.shape[0], EV_OK, 0


@njit(**JIT)
def _remove_kernel(hg, handles):
    _, _, _, gi, _, _, cells, occ, ct, ct_st, items, items_st, ob = hg
    for t in range(handles.shape[0]):
        h = handles[t]
        if ob[h, O_GRID] >= 0:
            _take(gi, cells, occ, ct, ct_st, items, items_st, ob, h)


@njit(**JIT)
def _update_kernel(hg, pos, rad, handles, t0):
    """[Schornbaum2009] Alg. 2: re-hash each object, move it only if its cell or grid
    changed. Returns (how far it got, event, arg); ``sc[S_MOVED]`` counts the moves."""
    par, sc, gf, gi, order, _, cells, occ, ct, ct_st, items, items_st, ob = hg
    moved = 0
    for t in range(t0, handles.shape[0]):
        h = handles[t]
        g = ob[h, O_GRID]
        if g >= 0:
            s = eff_size(pos, rad, h)
            if gf[g, G_LOW] <= s and s < gf[g, G_CELL]:  # grid still suitably sized
                if rad[h] > gf[g, G_RMAX]:
                    gf[g, G_RMAX] = rad[h]
                cell = cell_hash(pos, h, gf[g, G_INV], gi[g, G_M])
                if cell == ob[h, O_CELL]:  # per-handle copy: no random access here
                    continue
                _take(gi, cells, occ, ct, ct_st, items, items_st, ob, h)
                moved += 1
                if not _place(gi, cells, occ, ct, ct_st, items, items_st, ob, h, g, cell):
                    sc[S_MOVED] += moved
                    return t, EV_ROOM, 0
                continue
            _take(gi, cells, occ, ct, ct_st, items, items_st, ob, h)
            moved += 1
        # not placed (new grid, or resumed after an event): full insertion
        ev, g = _grid_for(par, sc, gf, gi, order, pos, rad, h)
        if ev == EV_OK:
            cell = cell_hash(pos, h, gf[g, G_INV], gi[g, G_M])
            if _place(gi, cells, occ, ct, ct_st, items, items_st, ob, h, g, cell):
                if rad[h] > gf[g, G_RMAX]:
                    gf[g, G_RMAX] = rad[h]
                continue
            ev, g = EV_ROOM, 0
        sc[S_MOVED] += moved
        return t, ev, g
    sc[S_MOVED] += moved
    return handles.shape[0], EV_OK, 0


@njit(**JIT)
def _grid_handles(hg, g):
    """The objects of grid g."""
    gi, occ, ct, items = hg.gi, hg.occ, hg.ct, hg.items
    out = np.empty(gi[g, G_COUNT], np.int64)
    k = 0
    base = gi[g, G_OCCBASE]
    for p in range(gi[g, G_NOCC]):
        cont = occ[base + p]
        s = ct[cont, C_START]
        for a in range(s, s + ct[cont, C_COUNT]):
            out[k] = items[a]
            k += 1
    return out


@njit(**JIT)
def _clear_grids(hg, which):
    """Empty every grid in ``which`` (cells reset and released, objects unplaced)."""
    _, _, gf, gi, _, _, cells, occ, ct, ct_st, items, items_st, ob = hg
    for w in range(which.shape[0]):
        g = which[w]
        base = gi[g, G_OCCBASE]
        for p in range(gi[g, G_NOCC]):
            cont = occ[base + p]
            s = ct[cont, C_START]
            for a in range(s, s + ct[cont, C_COUNT]):
                _unplace(ob, items[a])
            _release(gi, cells, ct, ct_st, g, cont)
        gi[g, G_NOCC] = 0
        gi[g, G_COUNT] = 0
        gf[g, G_RMAX] = 0.0


# ------------------------------------------------------------------ the structure
class HashGrid(BroadPhase):
    """Hierarchical hash grid ([Schornbaum2009]; [mesapd-HashGrids]): use it when the largest
    radius is more than ~3 times the cubic mean radius or the scene is sparse or clustered;
    O(1) insert/remove, incremental update.

    Parameters: ``params`` (kinds, ranges, defaults, meanings: ``pdyn run --help``).
    """

    name = "hash_grid"
    filters = True

    params = {
        "hierarchy_factor": Param("number", 2.0, "size ratio f of successive grids", above=1),
        "initial_cells_per_axis": Param("integer", 16, "cells per axis of a new grid", lo=4,
                                        power_of_two=True),
        "minimal_grid_density": Param("number", 5.0, "cells per object before a grid doubles",
                                      above=0),
        "update": UPDATE,
        "activation_threshold": Param("integer", 32, "all pairs up to this many residents",
                                      lo=0),
        "cell_capacity": Param("integer", 16, "initial container capacity", lo=1),
        "max_cells_per_axis": Param("integer", 512, "growth limit of a grid, at least "
                                    "initial_cells_per_axis", lo=4, power_of_two=True),
    }

    @staticmethod
    def check_relations(p: dict) -> None:
        """A grid may not start larger than it may grow."""
        if p["max_cells_per_axis"] < p["initial_cells_per_axis"]:
            raise BadValue("max_cells_per_axis", p["max_cells_per_axis"], "must be >= "
                           f"initial_cells_per_axis ({p['initial_cells_per_axis']})")

    def __init__(self, **given):
        super().__init__(**given)
        p = self.settings
        self.hierarchy_factor = p["hierarchy_factor"]
        self.initial_cells_per_axis = p["initial_cells_per_axis"]
        self.minimal_grid_density = p["minimal_grid_density"]
        self.update_strategy = p["update"]
        self.activation_threshold = p["activation_threshold"]
        self.cell_capacity = p["cell_capacity"]
        self.max_cells_per_axis = p["max_cells_per_axis"]
        self._m0 = self.initial_cells_per_axis.bit_length() - 1
        self._max_m = self.max_cells_per_axis.bit_length() - 1
        self._reset()

    # -------------------------------------------------------------- state
    def _reset(self):
        self._active = False
        f = self.hierarchy_factor
        self._hg = Hierarchy(
            par=np.array([0.0, f, math.log(f), self.minimal_grid_density]),
            sc=np.array([self._max_m, 0], np.int64),
            gf=np.zeros((4, 4)), gi=np.zeros((4, 7), np.int64), order=np.zeros(0, np.int64),
            offs=np.zeros((4, 27, 27), np.int64), cells=np.zeros(0, np.int32),
            occ=np.zeros(0, np.int64),
            ct=aligned((64, CT_COLS), 0, np.int64), ct_st=new_state(),
            items=aligned(64 * self.cell_capacity, 0, np.int64),
            items_st=new_state(self.cell_capacity),
            ob=aligned((0, 4), -1, np.int64),
        )
        self._tests = np.zeros(1, np.int64)
        # detection snapshot (sequential copies of the residents, rebuilt per query)
        self._spos = np.zeros((0, 3))
        self._srad = np.zeros(0)
        self._shnd = np.zeros(0, np.int64)
        self._meta = np.zeros((0, 2), np.int64)
        self._last_moved = 0
        self._grow_events = 0

    def _ensure_handles(self):
        cap = self._pos.shape[0]
        old = self._hg.ob
        if cap > old.shape[0]:
            ob = aligned((max(cap, 2 * old.shape[0]), 4), -1, np.int64)
            ob[: old.shape[0]] = old
            self._hg = self._hg._replace(ob=ob)

    # -------------------------------------------------------------- events (rare, O(log N))
    def _run(self, kernel, handles):
        """Call a mutating kernel from the start of ``handles``, servicing its (rare) events
        and resuming it where it stopped (``_arena.run_resumable``)."""
        stop = [EV_OK, 0, 0]  # event, arg, handle

        def step(t):
            t, stop[0], stop[1] = kernel(self._hg, self._pos, self._rad, handles, t)
            if t < handles.shape[0]:
                stop[2] = int(handles[t])
            return t

        run_resumable(step, handles.shape[0], lambda: self._event(*stop))

    def _event(self, ev, arg, h):
        hg = self._hg
        if ev == EV_ROOM:
            self._hg = hg._replace(ct=grown(hg.ct, hg.ct_st), items=grown(hg.items, hg.items_st))
        elif ev == EV_FIRST:
            # [Schornbaum2009] Eq. 3.3.2: first grid's cell = first object's size * sqrt(f)
            c0 = float(2.0 * self._rad[h] * math.sqrt(self.hierarchy_factor))
            if not (c0 > 0 and math.isfinite(c0)):
                raise BroadPhaseError(f"radii[{h}] = {self._rad[h]!r}: size not representable")
            hg.par[P_C0] = c0
        elif ev == EV_NEW_GRID:
            if np.any(hg.gi[hg.order, G_LEVEL] == arg):  # only with non-finite sizes
                raise BroadPhaseError(f"radii[{h}] = {self._rad[h]!r}: size not representable")
            self._new_grid(int(arg))
        elif ev == EV_GROW_GRID:
            self._grow_grid(int(arg))
        else:  # pragma: no cover
            raise RuntimeError(f"hash_grid: unknown event {ev}")

    def _occ_cap(self, m):
        n3 = 1 << (3 * m)
        if m >= self._max_m or self.minimal_grid_density < 1:
            return n3
        return min(n3, int(n3 // self.minimal_grid_density) + 1)

    def _repool(self, fresh):
        """Lay out every grid's cell array and occupied list in the pooled arrays; grids in
        ``fresh`` get new empty regions (their objects were removed), the others are copied."""
        hg = self._hg
        gi = hg.gi
        ng = hg.order.shape[0]
        sizes = [1 << (3 * int(gi[g, G_M])) for g in range(ng)]
        occcaps = [self._occ_cap(int(gi[g, G_M])) for g in range(ng)]
        cells = aligned(sum(sizes), -1, np.int32)
        occ = aligned(sum(occcaps), 0, np.int64)
        cb = ob = 0
        for g in range(ng):
            if g not in fresh:
                ocb, oob = int(gi[g, G_BASE]), int(gi[g, G_OCCBASE])
                cells[cb: cb + sizes[g]] = hg.cells[ocb: ocb + sizes[g]]
                nocc = int(gi[g, G_NOCC])
                occ[ob: ob + nocc] = hg.occ[oob: oob + nocc]
            gi[g, G_BASE], gi[g, G_OCCBASE], gi[g, G_OCCCAP] = cb, ob, occcaps[g]
            cb += sizes[g]
            ob += occcaps[g]
        self._hg = hg._replace(cells=cells, occ=occ)

    def _new_grid(self, lev):
        """Create the grid of level ``lev`` and insert it in cell-size order (Alg. 3)."""
        hg = self._hg
        g = hg.order.shape[0]
        if g == hg.gf.shape[0]:
            hg = hg._replace(gf=np.concatenate((hg.gf, np.zeros_like(hg.gf))),
                             gi=np.concatenate((hg.gi, np.zeros_like(hg.gi))),
                             offs=np.concatenate((hg.offs, np.zeros_like(hg.offs))))
        c0, f = float(hg.par[P_C0]), self.hierarchy_factor
        cell = float(cell_of_level(c0, f, lev))
        hg.gf[g] = (cell, 1.0 / cell, float(cell_of_level(c0, f, lev - 1)), 0.0)
        hg.gi[g] = 0
        hg.gi[g, G_M] = self._m0
        hg.gi[g, G_LEVEL] = lev
        hg.offs[g] = offset_table(1 << self._m0)
        order = np.argsort(hg.gi[: g + 1, G_LEVEL], kind="stable").astype(np.int64)
        self._hg = hg._replace(order=order)
        self._repool({g})

    def _grow_grid(self, g):
        """Double the cells per axis of grid g and rehash its objects (Sec. 3.4)."""
        hg = self._hg
        hs = _grid_handles(hg, g)
        _clear_grids(hg, np.array([g], np.int64))
        hg.gi[g, G_M] += 1
        hg.offs[g] = offset_table(1 << int(hg.gi[g, G_M]))
        self._repool({g})
        self._grow_events += 1
        if hs.size:
            self._run(_insert_kernel, hs)

    def _clear_all(self):
        """Empty every grid and forget the arenas' blocks (clear-and-reinsert)."""
        _clear_grids(self._hg, self._hg.order)
        reset(self._hg.ct_st)
        reset(self._hg.items_st)

    # -------------------------------------------------------------- protocol
    def _activate(self):
        """Bulk build (Sec. 3.7 switch or ``build``): insert everything, then, for large N,
        clear and reinsert in (grid, cell) order so that container records and item blocks
        are laid out in cell order (memory locality for detection; same structure)."""
        self._active = True
        hs = self.members.copy()
        self._run(_insert_kernel, hs)
        if hs.size >= 4096:
            hg = self._hg
            rank = np.empty(hg.order.shape[0], np.int64)
            rank[hg.order] = np.arange(hg.order.shape[0])
            key = (rank[hg.ob[hs, O_GRID]] << 40) | hg.ob[hs, O_CELL]
            hs = hs[np.argsort(key, kind="stable")]
            self._clear_all()
            self._run(_insert_kernel, hs)

    def _build(self, handles):
        self._reset()
        self._ensure_handles()
        if self._n > self.activation_threshold:
            self._activate()

    def _insert(self, handles):
        self._ensure_handles()
        if self._active:
            self._run(_insert_kernel, handles)
        elif self._n > self.activation_threshold:  # Sec. 3.7: switch once, irrevocably
            self._activate()

    def _remove(self, handles):
        self._ensure_handles()
        if self._active:
            _remove_kernel(self._hg, handles)

    def _update(self):
        self._ensure_handles()
        if not self._active or self._n == 0:
            self._last_moved = 0
            return
        if self.update_strategy == "rebuild":
            self._clear_all()
            self._run(_insert_kernel, self.members.copy())
            self._last_moved = self._n
        else:
            self._hg.sc[S_MOVED] = 0
            self._run(_update_kernel, self.members.copy())
            self._last_moved = int(self._hg.sc[S_MOVED])

    def _pairs(self):
        guess = max(2 * self._candidates, 4 * self._n) + 16
        if not self._active:
            self._candidates = self._n * (self._n - 1) // 2
            return run_pair_kernel(brute_pairs, self._pos, self._rad, self.members.copy(),
                                   guess=guess)
        hg = self._hg
        n, nct = self._n, hg.ct.shape[0]
        if self._spos.shape[0] < n:
            self._spos = np.empty((2 * n, 3))
            self._srad = np.empty(2 * n)
            self._shnd = np.empty(2 * n, np.int64)
        if self._meta.shape[0] < nct:
            self._meta = np.empty((nct, 2), np.int64)
        gsnap = np.empty(hg.order.shape[0] + 1, np.int64)
        socc = np.empty(int(hg.gi[hg.order, G_NOCC].sum()), np.int64)
        snapshot(hg, self.members, self._pos, self._rad, self._meta, gsnap, socc, self._spos,
                 self._srad, self._shnd)
        pairs = run_pair_kernel(hhg_pairs, self._tests, hg, self._spos, self._srad, self._shnd,
                                gsnap, socc, self._meta, guess=guess)
        self._candidates = int(self._tests[0])
        return pairs

    # -------------------------------------------------------------- introspection
    def _memory_bytes(self):
        arrs = (*self._hg, self._spos, self._srad, self._shnd, self._meta)
        return int(sum(a.nbytes for a in arrs))

    def _stats(self):
        hg = self._hg
        o, gi = hg.order, hg.gi
        return {
            "active": self._active,
            "update": self.update_strategy,
            "grids": int(o.shape[0]),
            "cell_sizes": [float(hg.gf[g, G_CELL]) for g in o],
            "cells_per_axis": [1 << int(gi[g, G_M]) for g in o],
            "cells_per_grid": [1 << (3 * int(gi[g, G_M])) for g in o],
            "objects_per_grid": [int(gi[g, G_COUNT]) for g in o],
            "occupied_cells": [int(gi[g, G_NOCC]) for g in o],
            "occupied_total": int(sum(int(gi[g, G_NOCC]) for g in o)),
            "moved": self._last_moved,
            "grid_growths": self._grow_events,
        }

    def check_invariants(self) -> None:
        """Slow consistency check of the whole structure (for tests); raises AssertionError."""
        if not self._active:
            return
        hg = self._hg
        members = self.members
        placed = np.flatnonzero(hg.ob[:, O_GRID] >= 0)
        assert set(placed.tolist()) == set(members.tolist()), "placed != residents"
        total = 0
        for g in hg.order:
            gi = hg.gi[g]
            cell, low = hg.gf[g, G_CELL], hg.gf[g, G_LOW]
            base, obase = int(gi[G_BASE]), int(gi[G_OCCBASE])
            m = int(gi[G_M])
            conts = hg.occ[obase: obase + int(gi[G_NOCC])]
            assert int(gi[G_NOCC]) <= int(gi[G_OCCCAP])
            count = 0
            for p, c in enumerate(conts):
                rec = hg.ct[c]
                assert rec[C_GRID] == g and rec[C_OCC] == p and rec[C_COUNT] > 0
                assert rec[C_COUNT] <= rec[C_CAP] == self.cell_capacity << int(rec[C_CLS])
                assert hg.cells[base + rec[C_CELL]] == c
                for slot in range(int(rec[C_COUNT])):
                    h = int(hg.items[rec[C_START] + slot])
                    assert tuple(hg.ob[h]) == (g, c, slot, rec[C_CELL])
                    s = float(eff_size(self._pos, self._rad, h))
                    assert low <= s < cell, "object in a grid of the wrong size"
                    assert cell_hash(self._pos, h, hg.gf[g, G_INV], m) == rec[C_CELL]
                count += int(rec[C_COUNT])
            assert count == gi[G_COUNT]
            assert int(np.count_nonzero(hg.cells[base: base + (1 << 3 * m)] >= 0)) == len(conts)
            if m < self._max_m:
                assert count * self.minimal_grid_density <= (1 << 3 * m)
            total += count
        assert total == self._n
