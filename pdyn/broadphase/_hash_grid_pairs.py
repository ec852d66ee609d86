"""Pair detection in the hierarchical hash grid ([Schornbaum2009] Alg. 4, Sec. 3.6).

Within each occupied cell all pairs, against 13 of the 26 neighbour cells (half stencil through
the wrap-around offset tables), and each object against the 27-cell neighbourhood of its cell
in every grid with larger cells. Every candidate goes through the exact sphere test
(:func:`overlaps`), which also discards hash collisions, so the result is every overlapping pair
exactly once and the count of pairs tested is the structure's ``candidates``.

Two choices beyond the sources, neither changing the result: (1) detection first copies the
residents' centres and radii cell by cell, each grid's occupied cells radix-sorted by cell
index, into contiguous arrays (one O(N) pass; the tests and stencil look-ups then walk memory
nearly sequentially: ~2x faster on Koch's more_polydisperse scene and on Schornbaum's scene at
10^5 objects); (2) in the larger grids, neighbour layers farther than the object's radius plus
the largest radius ever stored in that grid are skipped, and a grid with fewer occupied cells
than cells to visit is scanned directly (Koch's very polydisperse scene: one huge sphere in its
own grid).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ._hashed_grids import (C_CELL, C_COUNT, G_BASE, G_COUNT, G_INV, G_M, G_NOCC, G_OCCBASE,
                            G_RMAX, HALF_FIRST, O_CONT, O_SLOT, cell_hash, pattern)
from ..geometry import overlaps
from ._sort import radix_sort


@njit(**JIT)
def snapshot(hg, members, pos, rad, meta, gsnap, socc, spos, srad, shnd):
    """Copy every resident's (handle, centre, radius) into contiguous arrays, grid by grid,
    each grid's occupied cells in cell-index order (``socc``, radix-sorted) and each cell's
    objects together; meta[container] = (offset, count), gsnap[q] = first offset of the q-th
    grid. One O(N) pass that makes the detection's memory accesses nearly sequential; the
    copied values are bit-identical to the particle arrays."""
    gi, ct, ob, order, occ = hg.gi, hg.ct, hg.ob, hg.order, hg.occ
    o = 0
    po = 0
    ngrids = order.shape[0]
    for q in range(ngrids):
        G = order[q]
        gsnap[q] = o
        obase = gi[G, G_OCCBASE]
        nocc = gi[G, G_NOCC]
        conts = occ[obase: obase + nocc].copy()
        keys = np.empty(nocc, np.int64)
        for p in range(nocc):
            keys[p] = ct[conts[p], C_CELL]
        radix_sort(keys, conts, np.int64(0), nocc)  # (a literal 0: a kernel of its own)
        for p in range(nocc):
            cont = conts[p]
            socc[po] = cont
            po += 1
            c = ct[cont, C_COUNT]
            meta[cont, 0] = o
            meta[cont, 1] = c
            o += c
    gsnap[ngrids] = o
    for t in range(members.shape[0]):  # sequential reads of the particle arrays
        h = members[t]
        d = meta[ob[h, O_CONT], 0] + ob[h, O_SLOT]
        shnd[d] = h
        spos[d, 0] = pos[h, 0]
        spos[d, 1] = pos[h, 1]
        spos[d, 2] = pos[h, 2]
        srad[d] = rad[h]


@njit(**JIT)
def hhg_pairs(out, tests, hg, spos, srad, shnd, gsnap, socc, meta):
    """[Schornbaum2009] Alg. 4 over the snapshot: per occupied cell all pairs inside and against
    the 13-cell half stencil; then every object against each larger grid (see _query_grid).
    ``tests[0]`` <- the number of pairs put to the exact test."""
    gi, gf, offs, cells, ct, order = hg.gi, hg.gf, hg.offs, hg.cells, hg.ct, hg.order
    k = 0
    nt = 0
    gocc = 0
    ngrids = order.shape[0]
    for qi in range(ngrids):
        G = order[qi]
        if gi[G, G_COUNT] == 0:
            continue
        m = gi[G, G_M]
        base = gi[G, G_BASE]
        for p in range(gocc, gocc + gi[G, G_NOCC]):
            cont = socc[p]
            s = meta[cont, 0]
            e = s + meta[cont, 1]
            cell = ct[cont, C_CELL]
            # all pairs within the cell
            for a in range(s, e):
                for b in range(a + 1, e):
                    nt += 1
                    if overlaps(spos, srad, a, b):
                        if k < out.shape[0]:
                            out[k, 0] = shnd[a]
                            out[k, 1] = shnd[b]
                        k += 1
            # 13 of 26 neighbours (half stencil with wrap-around offsets)
            pat = pattern(cell, m)
            for jj in range(HALF_FIRST, 27):
                cont2 = cells[base + cell + offs[G, pat, jj]]
                if cont2 < 0:
                    continue
                s2 = meta[cont2, 0]
                e2 = s2 + meta[cont2, 1]
                for a in range(s, e):
                    for b in range(s2, e2):
                        nt += 1
                        if overlaps(spos, srad, a, b):
                            if k < out.shape[0]:
                                out[k, 0] = shnd[a]
                                out[k, 1] = shnd[b]
                            k += 1
        # each object of G against its neighbourhood in every grid with larger cells
        # (grid by grid, so that one larger grid's cells stay in cache)
        for qj in range(qi + 1, ngrids):
            H = order[qj]
            if gi[H, G_COUNT] == 0:
                continue
            for a in range(gsnap[qi], gsnap[qi + 1]):
                k, nt = _query_grid(out, k, nt, spos, srad, shnd, gsnap[qj], gsnap[qj + 1], a,
                                    H, gf, gi, offs, cells, meta)
        gocc += gi[G, G_NOCC]
    tests[0] = nt
    return k


@njit(**JIT)
def _axis_range(x, inv, reach):
    """Which neighbour layers (-1 / +1) along one axis can hold a partner of an object at
    ``x`` reaching ``reach`` cell widths: (lo, hi) in {-1, 0} x {0, 1}, conservative."""
    a = x * inv
    if x < 0.0:
        idx = -np.floor(-a) - 1.0  # the cell Schornbaum's negative hashing assigns
    else:
        idx = np.floor(a)
    lo = -1 if a - idx < reach else 0
    hi = 1 if idx + 1.0 - a < reach else 0
    return lo, hi


@njit(inline="always", **JIT)  # inlined: saves the call and array refcounting per query
def _query_grid(out, k, nt, spos, srad, shnd, h_lo, h_hi, a, H, gf, gi, offs, cells, meta):
    """Snapshot object a against grid H (larger cells): the cells of its 27-neighbourhood that
    can hold an overlapping partner (layers beyond reach r_a + max radius of H are skipped:
    same pairs, fewer lookups), or all of H's objects [h_lo, h_hi) when there are fewer
    occupied cells than cells to visit. Every object of H is tested at most once."""
    mH = gi[H, G_M]
    invH = gf[H, G_INV]
    # reach in cell widths, enlarged for round-off in x * inv at |x| up to 2^47 cells
    big = max(abs(spos[a, 0]), abs(spos[a, 1]), abs(spos[a, 2])) * invH + 4.0
    reach = (srad[a] + gf[H, G_RMAX]) * invH * (1.0 + 2.0**-30) + big * 2.0**-45
    lx, hx = _axis_range(spos[a, 0], invH, reach)
    ly, hy = _axis_range(spos[a, 1], invH, reach)
    lz, hz = _axis_range(spos[a, 2], invH, reach)
    ncell = (hx - lx + 1) * (hy - ly + 1) * (hz - lz + 1)
    if gi[H, G_NOCC] <= ncell:  # sparse grid: every object of H once
        for b in range(h_lo, h_hi):
            nt += 1
            if overlaps(spos, srad, a, b):
                if k < out.shape[0]:
                    out[k, 0] = shnd[a]
                    out[k, 1] = shnd[b]
                k += 1
        return k, nt
    baseH = gi[H, G_BASE]
    cH = cell_hash(spos, a, invH, mH)
    patH = pattern(cH, mH)
    for dz in range(lz, hz + 1):
        for dy in range(ly, hy + 1):
            for dx in range(lx, hx + 1):
                cont2 = cells[baseH + cH + offs[H, patH, 13 + dx + 3 * dy + 9 * dz]]
                if cont2 < 0:
                    continue
                s2 = meta[cont2, 0]
                for b in range(s2, s2 + meta[cont2, 1]):
                    nt += 1
                    if overlaps(spos, srad, a, b):
                        if k < out.shape[0]:
                            out[k, 0] = shnd[a]
                            out[k, 1] = shnd[b]
                        k += 1
    return k, nt
