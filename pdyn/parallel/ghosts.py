"""Ghost plan, built at each Verlet-skin rebuild: which owned particle goes to which rank with
which periodic shift.

Plan (Cabana's ``Halo``, [Slattery2022]): an owned particle ``i`` is sent
to rank ``r`` with periodic shift ``s`` when the sphere of radius ``R_i = r_i + r_max + skin``
around ``x_i + s`` touches a block of ``r`` (``r_max`` the largest radius in the scene). Each
(rank, shift) pair is sent once per particle; the pair (own rank, zero shift) never. A large
particle's sphere may span many blocks, so its ghosts reach beyond the next neighbour, and the
periodic images a rank needs of its own particles are ghosts sent to itself (a local copy; this
is also how periodic boundaries work on one rank).

Why it is enough: at plan time every owned centre lies in its owner's blocks, and until the
next plan every particle moves at most ``skin / 2``. Two spheres that touch before then were at
most ``r_i + r_j + skin`` apart at plan time, so each is within ``R`` of the other's owner.

Execution (``pdyn.parallel.exchange``): ghosts are created with the fields whose schema says
``create`` or ``always`` (``pdyn.particles.GHOST_CREATE``); between rebuilds only the ``always``
fields (``GHOST_UPDATE``) travel, in plan order, into the same ghost handles. Ghost positions are
``x + s`` evaluated by the same kernel (``pdyn.particles.Packing``) on every decomposition, so a
ghost holds exactly the bits the 1-rank run uses for that image.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT


@njit(**JIT)
def _box_dist2(y, lo, hi):
    """Squared distance (m²) from the point ``y`` to the box ``lo``..``hi`` (0 inside)."""
    d2 = 0.0
    for a in range(3):
        if y[a] < lo[a]:
            d = lo[a] - y[a]
            d2 += d * d
        elif y[a] > hi[a]:
            d = y[a] - hi[a]
            d2 += d * d
    return d2


@njit(**JIT)
def _ghost_targets(pos, rad, handles, me, extra, glo, ghi, inv_edge, dims, periodic, shifts,
                   shift_index, sheared, owner, blo, bhi, nranks, out_h, out_r, out_s):
    """All (handle, rank, shift) triples to send; returns their number (fills up to capacity).

    Per axis only the images that can be within reach are visited: shift −L when the sphere
    of reach crosses the hi face, +L when it crosses the lo face (``shift_index[i, j, k]``
    names the row of ``shifts`` for per-axis choices 0 = none, 1 = −L, 2 = +L). ``sheared``
    (Lees–Edwards): an image across the z faces is also offset along x (by at most L_x / 2,
    ``Box.shear_offset``), so a sphere near a z face tries every x choice; the distance to
    each block decides."""
    n_shift = shifts.shape[0]
    stamp = np.full(nranks * n_shift, -1, np.int64)
    cap = out_h.shape[0]
    k = 0
    y = np.empty(3)
    k0 = np.empty(3, np.int64)
    k1 = np.empty(3, np.int64)
    n_opt = np.empty(3, np.int64)
    opt = np.zeros((3, 3), np.int64)
    for t in range(handles.shape[0]):
        h = handles[t]
        R = rad[h] + extra
        R2 = R * R
        for a in range(3):
            n_opt[a] = 1
            if periodic[a]:
                slack = 1e-9 * (ghi[a] - glo[a])
                if pos[h, a] + R >= ghi[a] - slack:
                    opt[a, n_opt[a]] = 1
                    n_opt[a] += 1
                if pos[h, a] - R <= glo[a] + slack:
                    opt[a, n_opt[a]] = 2
                    n_opt[a] += 1
        if sheared and n_opt[2] > 1:
            n_opt[0] = 3
            opt[0, 1] = 1
            opt[0, 2] = 2
        for i0 in range(n_opt[0]):
            for i1 in range(n_opt[1]):
                for i2 in range(n_opt[2]):
                    s = shift_index[opt[0, i0], opt[1, i1], opt[2, i2]]
                    for a in range(3):
                        y[a] = pos[h, a] + shifts[s, a]
                        lo_k = int(math.floor((y[a] - R - glo[a]) * inv_edge[a]))
                        hi_k = int(math.floor((y[a] + R - glo[a]) * inv_edge[a]))
                        k0[a] = min(max(lo_k, 0), dims[a] - 1)
                        k1[a] = min(max(hi_k, 0), dims[a] - 1)
                    for iz in range(k0[2], k1[2] + 1):
                        for iy in range(k0[1], k1[1] + 1):
                            for ix in range(k0[0], k1[0] + 1):
                                b = (iz * dims[1] + iy) * dims[0] + ix
                                r = owner[b]
                                if s == 0 and r == me:
                                    continue
                                key = r * n_shift + s
                                if stamp[key] == t:
                                    continue
                                if _box_dist2(y, blo[b], bhi[b]) <= R2:
                                    stamp[key] = t
                                    if k < cap:
                                        out_h[k] = h
                                        out_r[k] = r
                                        out_s[k] = s
                                    k += 1
    return k


class GhostPlan:
    """Which owned handles go to which rank with which periodic shift, grouped by rank.

    ``handles``, ``shift`` (index into ``shifts``) and ``rank`` are sorted by rank (stable, so
    within a rank in plan order); ``slices[r]`` is the run for rank ``r``.
    """

    def __init__(self, handles, ranks, shift, shifts):
        order = np.argsort(ranks, kind="stable")
        self.handles = np.ascontiguousarray(handles[order])
        self.rank = np.ascontiguousarray(ranks[order])
        self.shift = np.ascontiguousarray(shift[order])
        self.shifts = shifts
        self.slices: dict[int, slice] = {}
        if len(order):
            uniq, start = np.unique(self.rank, return_index=True)
            stop = np.append(start[1:], len(order))
            self.slices = {int(r): slice(int(a), int(b)) for r, a, b in zip(uniq, start, stop)}

    def part(self, rank: int):
        sl = self.slices.get(rank, slice(0, 0))
        return self.handles[sl], self.shift[sl]

    def __len__(self) -> int:
        return len(self.handles)


def plan_ghosts(store, owned, grid, me, extra, nranks, guess: int = 0,
                shifts=None) -> GhostPlan:
    """Build the :class:`GhostPlan` of ``owned`` handles for the block map in ``grid``.
    ``guess``: the targets the last plan had (its scratch then holds those and an eighth more,
    not twice the owned handles; more is one more pass). ``shifts``: the image shifts
    (default ``grid.shifts()``; a sheared box's of this step, which the plan keeps: the
    exchange updates them in place every step)."""
    blo, bhi = grid.bounds()
    if shifts is None:
        shifts = grid.shifts()
    # row of ``shifts`` for per-axis choices (0 = none, 1 = -L, 2 = +L); -1 = not periodic
    shift_index = np.full((3, 3, 3), -1, np.int64)
    length = grid.box.length
    for s, row in enumerate(grid.box.shifts()[:, :3]):
        c = [0 if row[a] == 0 else (1 if row[a] < 0 else 2) for a in range(3)]
        assert all(row[a] in (0.0, -length[a], length[a]) for a in range(3))
        shift_index[c[0], c[1], c[2]] = s
    args = (store.pos, store.radius, np.ascontiguousarray(owned, np.int64), int(me),
            float(extra), grid.lo, grid.hi, grid.inv_edge, grid.dims, grid.periodic, shifts,
            shift_index, bool(grid.box.shear_rate), grid.owner, blo, bhi, int(nranks))
    cap = max(64, guess + guess // 8 if guess else 2 * len(owned))
    while True:
        oh = np.empty(cap, np.int64)
        orank = np.empty(cap, np.int64)
        osh = np.empty(cap, np.int64)
        k = _ghost_targets(*args, oh, orank, osh)
        if k <= cap:
            return GhostPlan(oh[:k], orank[:k], osh[:k], shifts)
        cap = k

