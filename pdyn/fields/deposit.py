"""Deposit values carried by points onto a :class:`~pdyn.fields.grid.Grid` with a kernel, in
exact integer sums ([Goldhirsch2010] coarse graining; [Lucy1977] for the Lucy kernel).

Kernels over the resolved axes (an averaged axis spreads a point evenly over the region):
``gaussian`` exp(−r²/2w²) cut at 3w; ``lucy`` (1 + 3r/c)(1 − r/c)³ for r < c (c = the width);
``bins`` the cell holding the point. Each point's weights over the cells are normalized to
one (so every point's value is counted exactly once in the region and the density integrates
to the mass; a kernel wider than the region gives the region's mean; a point whose kernel
reaches no cell centre goes to its own cell). A point outside the region adds nothing.
Segments (a contact's branch) are deposited as their line integral: for bins the pieces
between cell faces, each a point with its length's share; for a smooth kernel Gauss–Legendre
points, whose shares of each cell's weight are added per segment before the one rounding
of the (segment, cell) term.

**Order-independent sums**: each weighted value is rounded to an integer multiple of 2⁻ᵏ
(``scale`` per component, ``pdyn.fields.exact.fixed_scale`` of a bound on the sum of the
magnitudes) and the cells sum int64s — associative and exact —, so any split of the points
(or segments) over ranks, in any order, gives the same integers, and an integer allreduce the same grid on
every rank. The fixed point loses the bits below bound · 2⁻⁶² of each term (about 10⁻¹⁸ of the
largest cell for a million terms)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT, JIT_IEEE

KERNELS = ("gaussian", "lucy", "bins")
GAUSSIAN, LUCY, BINS = range(3)  # their indices in KERNELS
#: the Gaussian's cut-off in standard deviations
CUTOFF = 3.0
#: the Gaussian's factors along an axis by recurrence, started afresh every RESTART cells
RESTART = 8


@njit(**JIT_IEEE)
def _deposit(ends, segments, values, lo, h, cells, wraps, kind, width, scale, nodes, weights,
             grid):
    """Add round(value · weight · scale) of every item to ``grid`` (cells flat, C) int64, once
    per (item, cell): an item is the point ``ends[k]`` (``segments`` False) or the segment
    ``ends[2k]`` → ``ends[2k + 1]`` spread along it — with bins its pieces between cell faces
    (:func:`_pieces`, each its length's share of its cell: exact), with a smooth kernel its
    Gauss–Legendre points (:func:`_nodes`). Per point (at the offset u from the region's
    low face, :func:`_offset`) the cells within the cut along each axis — bins or an
    averaged axis: its own; :func:`_every_cell`, :func:`_near_cells` —, combined
    (:func:`_weights`) and normalized; an item's cells gather its points' shares
    (:func:`_gather`) and are rounded once per component (:func:`_flush`). The inlined
    helpers use every array they take on every path and raise nothing to a variable power
    (``x ** n``, a call): numba then drops the reference counts of their arrays (else an
    atomic pair per array and call: 3-12x the time of the whole deposit)."""
    span = _spans(h, kind, width)
    cut2 = _reach(kind, width) ** 2
    m = max(2 * span.max() + 1, cells.max())
    table = _squares(h, kind, width, m)
    most = m ** 3 if m ** 3 <= cells.prod() else cells.prod()
    cell, d2, fac = np.empty((3, m), np.int64), np.empty((3, m)), np.empty((3, m))
    ns, own = np.empty(3, np.int64), np.empty(3, np.int64)
    at, wts = np.empty(most, np.int64), np.empty(most)  # a point's cells and weights
    acc = np.zeros(grid.shape[0])  # an item's weight of each cell (0: not reached)
    touched = np.empty(grid.shape[0], np.int64)
    items = ends.shape[0] // 2 if segments else ends.shape[0]
    longest = _longest(ends, items, h, cells) if kind == BINS and segments else MAX_NODES
    t, share = np.empty(longest), np.empty(longest)
    for s in range(items):
        if not segments:
            t[0], share[0], points = 0.0, 1.0, 1
        elif kind == BINS:
            points = _pieces(ends, s, lo, h, cells, t, share)
        else:
            points = _nodes(ends, s, cells, width, nodes, weights, t, share)
        nt = 0
        for r in range(points):
            inside = True
            for a in range(3):
                u = 0.0  # an axis averaged over the whole periodic box: its one cell
                if cells[a] > 1 or not wraps[a]:
                    u = _offset(_point(ends, segments, s, t[r], a), lo[a], h[a] * cells[a],
                                wraps[a])
                inside = inside and u >= 0.0
                own[a] = min(int(u / h[a]), cells[a] - 1) if cells[a] > 1 else 0
                if kind == BINS or cells[a] == 1:  # bins, an averaged axis: the own cell
                    cell[a, 0], d2[a, 0], fac[a, 0], ns[a] = own[a], 0.0, 1.0, 1
                elif wraps[a] and 2 * span[a] + 1 >= cells[a]:
                    ns[a] = _every_cell(u, a, h[a], cells[a], cut2, kind, width, cell, d2, fac)
                else:
                    ns[a] = _near_cells(u, a, h[a], cells[a], wraps[a], own[a], span[a],
                                        table, cut2, kind, width, cell, d2, fac)
            if kind == BINS:
                at[0], wts[0] = (own[0] * cells[1] + own[1]) * cells[2] + own[2], 1.0
                q, total = 1, 1.0
            else:
                q, total = _weights(ns, own, cell, d2, fac, cells, cut2, kind, width, at, wts)
            q = q if inside else 0
            nt = _gather(at, wts, q, share[r], total, acc, touched, nt)
        _flush(grid, values, s, scale, acc, touched, nt)


@njit(**JIT_IEEE)
def _profile(ends, segments, values, lo, h, cells, wraps, kind, width, scale, nodes, weights,
             grid):
    """:func:`_deposit` of a smooth kernel on a grid of one resolved axis ``p`` (the others
    averaged: a profile): a point's cells along p within the cut are all its cells, their
    flat indices the cells' along p (no product over axes, no cut in 3D), its weights the
    axis' factors (Lucy's of |d|) — the same weights and sums in the same order. A cut that
    spans a wrapping p: :func:`_deposit`."""
    p = np.argmax(cells)
    span = _spans(h, kind, width)
    if wraps[p] and 2 * span[p] + 1 >= cells[p]:
        _deposit(ends, segments, values, lo, h, cells, wraps, kind, width, scale, nodes,
                 weights, grid)
        return
    cut2 = _reach(kind, width) ** 2
    m = 2 * span[p] + 1
    table = _squares(h, kind, width, m)
    cell, d2, fac = np.empty((3, m), np.int64), np.empty((3, m)), np.empty((3, m))
    acc = np.zeros(grid.shape[0])  # an item's weight of each cell (0: not reached)
    touched = np.empty(grid.shape[0], np.int64)
    t, share = np.zeros(MAX_NODES), np.ones(MAX_NODES)  # a point: t 0, share 1
    for s in range(ends.shape[0] // 2 if segments else ends.shape[0]):
        points = _nodes(ends, s, cells, width, nodes, weights, t, share) if segments else 1
        nt = 0
        for r in range(points):
            inside = True
            for a in range(3):
                if a != p and not wraps[a]:
                    inside = inside and _offset(_point(ends, segments, s, t[r], a), lo[a],
                                                h[a] * cells[a], wraps[a]) >= 0.0
            u = _offset(_point(ends, segments, s, t[r], p), lo[p], h[p] * cells[p], wraps[p])
            if not inside or u < 0.0:
                continue
            own = min(int(u / h[p]), cells[p] - 1)
            k = _near_cells(u, p, h[p], cells[p], wraps[p], own, span[p], table, cut2, kind,
                            width, cell, d2, fac)
            total = 0.0
            for e in range(k):
                fac[p, e] = fac[p, e] if kind == GAUSSIAN else _lucy(d2[p, e], width)
                total += fac[p, e]
            if total == 0.0:  # no cell centre within the cut: the own cell
                cell[p, 0], fac[p, 0], total, k = own, 1.0, 1.0, 1
            for e in range(k):
                f = cell[p, e]
                if acc[f] == 0.0 and fac[p, e] != 0.0:  # first reached (Lucy: 0 at the cut)
                    touched[nt] = f
                    nt += 1
                acc[f] += share[r] * (fac[p, e] / total)
        _flush(grid, values, s, scale, acc, touched, nt)


@njit(inline="always", **JIT_IEEE)
def _lucy(r2, width):
    """Lucy's (1 + 3v)(1 − v)³ of v = r/c at the squared distance ``r2`` (m²; c = ``width``,
    m)."""
    v = np.sqrt(r2) / width
    return (1.0 + 3.0 * v) * (1.0 - v) ** 3


@njit(inline="always", **JIT_IEEE)
def _reach(kind, width):
    """The kernel's cut-off (m) for its ``width`` (m): 3 w for the Gaussian, Lucy's width."""
    return CUTOFF * width if kind == GAUSSIAN else width


@njit(inline="always", **JIT_IEEE)
def _spans(h, kind, width):
    """Per axis the cells to look at either side of a point's own (bins: none; ``h`` the
    cell edges, m; the kernel's ``width``, m): (3,)."""
    span = np.zeros(3, np.int64)
    for a in range(3):
        span[a] = int(np.ceil(_reach(kind, width) / h[a])) + 1 if kind != BINS else 0
    return span


@njit(inline="always", **JIT_IEEE)
def _squares(h, kind, width, m):
    """Per axis the Gaussian's e^(−(i h)²/2w²) of i = 0 … ``m`` − 1 cells (``h`` the cell
    edges, m; the kernel's ``width``, m; other kernels: zeros): (3, m)."""
    table = np.zeros((3, m))
    for a in range(3):
        for i in range(m if kind == GAUSSIAN else 0):
            table[a, i] = np.exp(-0.5 * (i * h[a]) * (i * h[a]) / (width * width))
    return table


@njit(inline="always", **JIT_IEEE)
def _longest(ends, items, h, cells):
    """The most pieces between cell faces (:func:`_pieces`) a segment of ``ends`` may have."""
    longest = MAX_NODES
    for s in range(items):
        c = 2
        for a in range(3):
            if cells[a] > 1:
                c += int(abs(ends[2 * s + 1, a] - ends[2 * s, a]) / h[a]) + 2
        longest = max(longest, c)
    return longest


@njit(inline="always", **JIT_IEEE)
def _nodes(ends, s, cells, width, nodes, weights, t, share):
    """The segment ``ends[2s]`` → ``ends[2s + 1]``'s Gauss–Legendre rule of
    :func:`_node_count` points (its length over the resolved axes against the ``width``, m):
    their parameters into ``t`` and weights (summing to one) into ``share``; returns how
    many."""
    l2 = 0.0  # the length squared over the resolved axes (m²)
    for a in range(3):
        l2 += (ends[2 * s + 1, a] - ends[2 * s, a]) ** 2 if cells[a] > 1 else 0.0
    points = _node_count(l2, width)
    for r in range(points):
        t[r] = nodes[points, r]
        share[r] = weights[points, r]
    return points


@njit(inline="always", **JIT_IEEE)
def _point(ends, segments, s, tr, a):
    """Coordinate ``a`` (m) of item ``s``'s point at parameter ``tr`` (a point: itself)."""
    i = 2 * s if segments else s
    return ends[i, a] + tr * (ends[i + 1, a] - ends[i, a]) if segments else ends[i, a]


@njit(inline="always", **JIT_IEEE)
def _offset(x, lo, length, wraps):
    """The coordinate ``x`` (m) from the region's low face ``lo`` (m): wrapped into
    [0, ``length``) on a wrapping axis, −1 outside [0, length] on another."""
    u = x - lo
    if wraps:
        u -= np.floor(u / length) * length
    elif u < 0.0 or u > length:
        u = -1.0
    return u


@njit(inline="always", **JIT_IEEE)
def _every_cell(u, a, h, n, cut2, kind, width, cell, d2, fac):
    """Along a wrapping axis ``a`` that the cut spans (``n`` cells of edge ``h`` m) the cells
    whose centres' nearest images lie within the cut (``cut2`` m²) of the offset ``u`` (m),
    each once: indices into ``cell[a]``, squared distances (m²) into ``d2[a]``, the
    Gaussian's factors exp(−d²/2w²) into ``fac[a]``; returns how many."""
    k = 0
    for c in range(n):
        d = (c + 0.5) * h - u
        d -= np.rint(d / (h * n)) * (h * n)
        if d * d <= cut2:
            cell[a, k], d2[a, k] = c, d * d
            fac[a, k] = np.exp(-0.5 * d * d / (width * width)) if kind == GAUSSIAN else 0.0
            k += 1
    return k


@njit(inline="always", **JIT_IEEE)
def _near_cells(u, a, h, n, wraps, own, span, table, cut2, kind, width, cell, d2, fac):
    """Along axis ``a`` (``n`` cells of edge ``h`` m) the cells own − span … own + span
    (``own`` the cell of the offset ``u``, m) whose centres lie within the cut (``cut2`` m²),
    ascending: indices (wrapped on a wrapping axis) into ``cell[a]``, squared distances (m²)
    into ``d2[a]`` and the Gaussian's factors into ``fac[a]`` (Lucy: 0). The i-th cell kept
    lies at d₀ + i h of the point (d₀ the first's, m), and exp(−(d₀ + i h)²/2w²) =
    exp(−d₀²/2w²) sⁱ ``table[a, i]`` with s = exp(−h d₀/w²): the first factor, the same
    for all the point's cells, cancels in the normalization, sⁱ by recurrence, started
    afresh every :data:`RESTART` cells — one exponential an axis and point for up to RESTART
    cells (i h ≤ 6w and |d₀| ≤ 3w: nothing under- or overflows; a weight is within 10⁻¹³
    of its exponential). Returns how many."""
    w2 = width * width
    first = power = step = 0.0
    k = 0
    for c in range(own - span if wraps else max(own - span, 0),
                   own + span + 1 if wraps else min(own + span + 1, n)):
        d = (c + 0.5) * h - u
        if d * d <= cut2:
            cell[a, k], d2[a, k] = (c % n) if wraps else c, d * d
            if kind == GAUSSIAN:
                if k == 0:
                    first = d
                    step = np.exp(-h * first / w2)
                    power = 1.0
                elif k % RESTART == 0:
                    power = np.exp(-k * h * first / w2)
                else:
                    power *= step
            fac[a, k] = power * table[a, k]
            k += 1
    return k


@njit(inline="always", **JIT_IEEE)
def _weights(n, own, cell, d2, fac, cells, cut2, kind, width, at, wts):
    """A smooth kernel's weights of a point: its cells (flat, into ``at``) and unnormalized
    weights (``wts``) from its ``n[a]`` cells per axis (:func:`_near_cells`): the cells
    (i, j, k) within the cut (``cut2``, m²), k fastest — the Gaussian the product of the axes'
    factors, Lucy (1 + 3v)(1 − v)³ of v = r/c (c = ``width``, m) —, or its ``own`` cell with
    weight one when no cell centre is within the cut; returns (how many, their sum)."""
    at[0], wts[0] = (own[0] * cells[1] + own[1]) * cells[2] + own[2], 1.0  # none reached
    q, total = 0, 0.0
    for i in range(n[0]):
        for j in range(n[1]):
            b2 = d2[0, i] + d2[1, j]
            for k in range(n[2] if b2 <= cut2 else 0):
                r2 = b2 + d2[2, k]
                if r2 <= cut2:
                    wt = fac[0, i] * fac[1, j] * fac[2, k] if kind == GAUSSIAN else \
                        _lucy(r2, width)
                    if wt != 0.0:
                        at[q] = (cell[0, i] * cells[1] + cell[1, j]) * cells[2] + cell[2, k]
                        wts[q] = wt
                        total += wt
                        q += 1
    return (q, total) if q else (1, 1.0)


@njit(inline="always", **JIT_IEEE)
def _gather(at, wts, q, part, total, acc, touched, nt):
    """Add a point's ``q`` weights ``wts`` of the cells ``at``, normalized by their sum
    ``total`` and times the point's share ``part``, to the item's ``acc``, listing a cell
    first reached in ``touched`` after the ``nt`` there; returns the new count."""
    for e in range(q):
        f = at[e]
        if acc[f] == 0.0:
            touched[nt] = f
            nt += 1
        acc[f] += part * (wts[e] / total)
    return nt


@njit(inline="always", **JIT_IEEE)
def _flush(grid, values, s, scale, acc, touched, nt):
    """Add item ``s``'s gathered weights ``acc`` of its ``nt`` cells ``touched`` to ``grid``
    as round(value · weight · scale) per component, and clear them."""
    for e in range(nt):
        f = touched[e]
        wt = acc[f]
        acc[f] = 0.0
        for c in range(values.shape[1]):
            grid[f, c] += np.int64(np.rint(values[s, c] * wt * scale[c]))


def _grid_args(grid_spec, kind: str, width: float) -> tuple:
    """:func:`_deposit`'s arguments of the grid and kernel."""
    g = grid_spec
    return g.lo, g.spacing, g.cells, g.periodic, KERNELS.index(kind), float(width)


def deposit(grid_spec, kind: str, width: float, points: np.ndarray, values: np.ndarray,
            scale: np.ndarray, out: np.ndarray) -> None:
    """Deposit ``values`` (P, C) at ``points`` (P, 3) onto ``out`` (C, nx, ny, nz) int64 with
    the kernel ``kind`` of ``width`` (m: the Gaussian's standard deviation, Lucy's cut-off),
    each component scaled by ``scale`` (C,) (a power of two:
    :func:`~pdyn.fields.exact.fixed_scale`)."""
    args = (np.ascontiguousarray(points, float), False, np.ascontiguousarray(values, float),
            *_grid_args(grid_spec, kind, width), np.asarray(scale, float), NODES, WEIGHTS)
    _add(out, lambda sums: _kernel(grid_spec, kind)(*args, sums))


def _kernel(grid_spec, kind: str):
    """The compiled deposit for a grid and kernel: :func:`_profile` for a smooth kernel on
    one resolved axis, else :func:`_deposit`."""
    profile = kind != "bins" and np.count_nonzero(np.asarray(grid_spec.cells) > 1) == 1
    return _profile if profile else _deposit


def _add(out: np.ndarray, deposit) -> None:
    """Add to ``out`` (C, nx, ny, nz) int64 what ``deposit(sums)`` adds into sums (cells flat,
    C): a cell's components side by side, so that a term's C integers share cache lines."""
    sums = np.zeros((out[0].size, out.shape[0]), np.int64)
    deposit(sums)
    out += sums.T.reshape(out.shape)


def deposit_segments(grid_spec, kind: str, width: float, ends: np.ndarray,
                     values: np.ndarray, scale: np.ndarray, out: np.ndarray) -> None:
    """Deposit ``values`` (K, C) spread along the segments ``ends[2k]`` → ``ends[2k + 1]``
    (2K, 3) onto ``out`` (C, nx, ny, nz) int64 with the kernel ``kind`` of ``width`` (m):
    the line integral ∫₀¹ φ(r − a − s (b − a)) ds, exact for bins (the pieces between cell
    faces), by Gauss–Legendre for a smooth kernel (:func:`_node_count` points); one rounded
    term per segment and cell; ``scale`` as for :func:`deposit`."""
    args = (np.ascontiguousarray(ends, float), True, np.ascontiguousarray(values, float),
            *_grid_args(grid_spec, kind, width), np.asarray(scale, float), NODES, WEIGHTS)
    _add(out, lambda sums: _kernel(grid_spec, kind)(*args, sums))


#: Gauss–Legendre rules on [0, 1] for the line integrals: row n holds the n-point rule's nodes
#: and weights (summing to one), n = 1 … MAX_NODES
MAX_NODES, MIN_NODES = 8, 3
NODES, WEIGHTS = np.zeros((MAX_NODES + 1, MAX_NODES)), np.zeros((MAX_NODES + 1, MAX_NODES))
for _n in range(1, MAX_NODES + 1):
    _x, _w = np.polynomial.legendre.leggauss(_n)
    NODES[_n, :_n], WEIGHTS[_n, :_n] = 0.5 * (_x + 1.0), 0.5 * _w


@njit(**JIT_IEEE)
def _pieces(ends, s, lo, h, cells, out_t, out_w):
    """The pieces of the segment ``ends[2s]`` → ``ends[2s + 1]`` between the cell faces of the
    resolved axes: their midpoints' parameters ``out_t`` and lengths ``out_w`` (fractions of
    the segment); returns how many."""
    ia, ib = 2 * s, 2 * s + 1
    n = 0
    out_t[n] = 0.0
    n += 1
    for ax in range(3):
        a, b = ends[ia, ax], ends[ib, ax]
        if cells[ax] == 1 or a == b:
            continue
        lo_f, hi_f = min(a, b), max(a, b)
        first = int(np.floor((lo_f - lo[ax]) / h[ax])) + 1
        last = int(np.ceil((hi_f - lo[ax]) / h[ax])) - 1
        for f in range(first, last + 1):
            out_t[n] = (lo[ax] + f * h[ax] - a) / (b - a)
            n += 1
    out_t[n] = 1.0
    n += 1
    for q in range(1, n):  # insertion sort: a handful of face crossings
        t = out_t[q]
        r = q - 1
        while r >= 0 and out_t[r] > t:
            out_t[r + 1] = out_t[r]
            r -= 1
        out_t[r + 1] = t
    k = 0
    for q in range(n - 1):
        if out_t[q + 1] > out_t[q]:
            out_w[k] = out_t[q + 1] - out_t[q]
            out_t[k] = 0.5 * (out_t[q] + out_t[q + 1])
            k += 1
    return k


@njit(inline="always", **JIT_IEEE)
def _node_count(l2, width):
    """Gauss–Legendre points for a segment of length ℓ = √``l2`` over the resolved axes under
    a smooth kernel of ``width``: 3 per width, at least MIN_NODES (ℓ ≤ w: the rule's error is
    of order (ℓ/w)⁶ 10⁻⁵ of the kernel), at most MAX_NODES."""
    m = int(np.ceil(3.0 * np.sqrt(l2) / width))
    return min(MAX_NODES, max(MIN_NODES, m))
