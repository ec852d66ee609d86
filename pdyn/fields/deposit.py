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


@njit(inline="always", **JIT_IEEE)
def _axis_cells(x, lo, h, n, wraps, reach, out_cell, out_dist):
    """The cells of one axis within ``reach`` of ``x`` (its own cell alone when ``reach`` < 0;
    every cell of an averaged axis, n = 1) and their centres' distances; returns how many
    (0: outside the region)."""
    length = h * n
    u = x - lo
    if wraps:
        u -= np.floor(u / length) * length
    elif u < 0.0 or u > length:
        return 0
    own = min(int(u / h), n - 1)
    if n == 1:
        out_cell[0] = 0
        out_dist[0] = 0.0
        return 1
    if reach < 0.0:
        out_cell[0] = own
        out_dist[0] = 0.0
        return 1
    k = 0
    span = int(np.ceil(reach / h)) + 1
    if wraps and 2 * span + 1 >= n:  # every cell once, at its nearest image
        for c in range(n):
            d = (c + 0.5) * h - u
            d -= np.rint(d / length) * length
            out_cell[k] = c
            out_dist[k] = d
            k += 1
        return k
    for c in range(own - span, own + span + 1):
        if wraps:
            out_cell[k] = c % n
        elif c < 0 or c >= n:
            continue
        else:
            out_cell[k] = c
        out_dist[k] = (c + 0.5) * h - u
        k += 1
    return k


@njit(inline="always", **JIT_IEEE)
def _axis_factors(kind, width, dist, n, out):
    """Per axis the kernel's factor at each cell distance ``dist[:n]``: the Gaussian's
    exp(−d²/2w²) (its weight is their product), the squared distance for Lucy."""
    for i in range(n):
        d = dist[i]
        if kind == GAUSSIAN:
            out[i] = np.exp(-0.5 * d * d / (width * width))
        else:
            out[i] = d * d


@njit(inline="always", **JIT_IEEE)
def _weights(kind, width, dist, fac, n, cell, cells, out_f, out_w):
    """The point's nonzero weights over the cells (i, j, k) of its ``n`` per axis: flat cell
    indices into ``out_f`` and weights into ``out_w`` in (i, j, k) order (k fastest), rows and
    columns beyond the kernel's reach skipped; returns (how many, their sum)."""
    cut2 = (CUTOFF * width) ** 2 if kind == GAUSSIAN else width * width
    total = 0.0
    q = 0
    for i in range(n[0]):
        a2 = dist[0, i] ** 2
        if a2 > cut2:
            continue
        for j in range(n[1]):
            b2 = a2 + dist[1, j] ** 2
            if b2 > cut2:
                continue
            for k in range(n[2]):
                r2 = b2 + dist[2, k] ** 2
                if kind == GAUSSIAN:
                    w = fac[0, i] * fac[1, j] * fac[2, k] if r2 <= cut2 else 0.0
                else:
                    u = np.sqrt(r2) / width
                    w = (1.0 + 3.0 * u) * (1.0 - u) ** 3 if u < 1.0 else 0.0
                if w != 0.0:
                    out_f[q] = (cell[0, i] * cells[1] + cell[1, j]) * cells[2] + cell[2, k]
                    out_w[q] = w
                    total += w
                    q += 1
    return q, total


@njit(**JIT_IEEE)
def _scratch(kind, width, h, cells):
    """The reach (m) of a smooth kernel and the per-point scratch of :func:`_point_weights`:
    (reach, cell (3, m), dist (3, m), fac (3, m), n (3,), cells reached, their weights)."""
    reach = CUTOFF * width if kind == GAUSSIAN else width
    m = 2 * (int(np.ceil(reach / h.min())) + 1) + 1 if reach > 0 else 1
    m = max(m, cells.max())
    most = m ** 3 if m ** 3 <= cells.prod() else cells.prod()
    return (reach, np.empty((3, m), np.int64), np.empty((3, m)), np.empty((3, m)),
            np.empty(3, np.int64), np.empty(most, np.int64), np.empty(most))


@njit(inline="always", **JIT_IEEE)
def _point_weights(x, lo, h, cells, wraps, kind, width, reach, cell, dist, fac, n, at, wts):
    """The cells (flat indices ``at``) and weights (``wts``) of a smooth kernel at the point
    ``x`` (3,): returns (how many, their sum); −1 cells: the point is outside the region. A
    point whose kernel reaches no cell centre has its own cell, weight 1."""
    for a in range(3):
        n[a] = _axis_cells(x[a], lo[a], h[a], cells[a], wraps[a],
                           reach if cells[a] > 1 else -1.0, cell[a], dist[a])
        if n[a] == 0:
            return -1, 0.0
    for a in range(3):
        _axis_factors(kind, width, dist[a], n[a], fac[a])
    count, total = _weights(kind, width, dist, fac, n, cell, cells, at, wts)
    if count == 0:  # no cell centre within the kernel: the point's own cell
        for a in range(3):
            _axis_cells(x[a], lo[a], h[a], cells[a], wraps[a], -1.0, cell[a], dist[a])
        at[0] = (cell[0, 0] * cells[1] + cell[1, 0]) * cells[2] + cell[2, 0]
        wts[0] = 1.0
        return 1, 1.0
    return count, total


@njit(inline="always", **JIT_IEEE)
def _spread(x, share, lo, h, cells, wraps, kind, width, reach, cell, dist, fac, n, at, wts,
            acc, touched, nt):
    """Add ``share`` times the point ``x``'s normalized kernel weight of each cell to ``acc``
    (cells flat; ``touched[:nt]`` the cells reached so far, extended); returns the new
    ``nt``."""
    count, total = _point_weights(x, lo, h, cells, wraps, kind, width, reach, cell, dist, fac,
                                  n, at, wts)
    for q in range(count):
        f = at[q]
        if acc[f] == 0.0:
            touched[nt] = f
            nt += 1
        acc[f] += share * (wts[q] / total)
    return nt


@njit(inline="always", **JIT_IEEE)
def _add_terms(values, s, scale, acc, touched, nt, grid):
    """Add round(value · weight · scale) of item ``s`` to each cell it reached (``acc``,
    ``touched[:nt]``) of ``grid`` (C, cells flat) int64, and clear ``acc``."""
    for t in range(nt):
        f = touched[t]
        w = acc[f]
        acc[f] = 0.0
        for c in range(values.shape[1]):
            grid[c, f] += np.int64(np.rint(values[s, c] * w * scale[c]))


@njit(**JIT_IEEE)
def _deposit(points, values, lo, h, cells, wraps, kind, width, scale, grid):
    """Add round(value · weight · scale) of every point to ``grid`` (C, cells flat) int64
    (a smooth kernel; bins: :func:`_deposit_bins`)."""
    reach, cell, dist, fac, n, at, wts = _scratch(kind, width, h, cells)
    acc = np.zeros(grid.shape[1])  # the point's weight of each cell (0: not reached)
    touched = np.empty(grid.shape[1], np.int64)
    for p in range(points.shape[0]):
        nt = _spread(points[p], 1.0, lo, h, cells, wraps, kind, width, reach, cell, dist, fac,
                     n, at, wts, acc, touched, 0)
        _add_terms(values, p, scale, acc, touched, nt, grid)


@njit(**JIT_IEEE)
def _deposit_segments(ends, values, lo, h, cells, wraps, kind, width, scale, nodes, weights,
                      grid):
    """Add each segment's ``values`` (K, C), spread along it (ends[2k] → ends[2k + 1]), to
    ``grid`` (C, cells flat) int64: with bins its pieces between cell faces (:func:`_pieces`,
    each its length's share of its cell: exact), with a smooth kernel the Gauss–Legendre rule
    of :func:`_node_count` points (a cell's weight the sum over the points of their share times
    the point's normalized weight of that cell); each (segment, cell) adds round(value ·
    weight · scale) once."""
    reach, cell, dist, fac, n, at, wts = _scratch(kind, width, h, cells)
    acc = np.zeros(grid.shape[1])  # the segment's weight of each cell (0: not reached)
    touched = np.empty(grid.shape[1], np.int64)
    x = np.empty(3)
    most = MAX_NODES  # the points of a segment: its pieces between cell faces (bins)
    for s in range(values.shape[0]):
        c = 2
        for ax in range(3):
            if cells[ax] > 1:
                c += int(abs(ends[2 * s + 1, ax] - ends[2 * s, ax]) / h[ax]) + 2
        most = max(most, c)
    t = np.empty(most)
    w = np.empty(most)
    for s in range(values.shape[0]):
        a, b = ends[2 * s], ends[2 * s + 1]
        if kind == BINS:
            m = _pieces(a, b, lo, h, cells, t, w)
        else:
            m = _node_count(a, b, cells, width)
            t[:m] = nodes[m, :m]
            w[:m] = weights[m, :m]
        nt = 0
        for r in range(m):
            for ax in range(3):
                x[ax] = a[ax] + t[r] * (b[ax] - a[ax])
            if kind != BINS:
                nt = _spread(x, w[r], lo, h, cells, wraps, kind, width, reach, cell, dist,
                             fac, n, at, wts, acc, touched, nt)
                continue
            f = _bin_of(x, lo, h, cells, wraps)
            if f >= 0:
                if acc[f] == 0.0:
                    touched[nt] = f
                    nt += 1
                acc[f] += w[r]
        _add_terms(values, s, scale, acc, touched, nt, grid)


@njit(inline="always", **JIT_IEEE)
def _bin_of(x, lo, h, cells, wraps):
    """The flat index of the cell holding the point ``x`` (3,), −1 outside the region."""
    f = 0
    for a in range(3):
        length = h[a] * cells[a]
        u = x[a] - lo[a]
        if wraps[a]:
            u -= np.floor(u / length) * length
        elif u < 0.0 or u > length:
            return -1
        f = f * cells[a] + (min(int(u / h[a]), cells[a] - 1) if cells[a] > 1 else 0)
    return f


@njit(**JIT_IEEE)
def _deposit_bins(points, values, lo, h, cells, wraps, scale, grid):
    """:func:`_deposit` for ``bins``: round(value · scale) of every point to its own cell
    (``grid`` (C, cells flat))."""
    for p in range(points.shape[0]):
        f = _bin_of(points[p], lo, h, cells, wraps)
        if f >= 0:
            for c in range(values.shape[1]):
                grid[c, f] += np.int64(np.rint(values[p, c] * scale[c]))


def deposit(grid_spec, kind: str, width: float, points: np.ndarray, values: np.ndarray,
            scale: np.ndarray, out: np.ndarray) -> None:
    """Deposit ``values`` (P, C) at ``points`` (P, 3) onto ``out`` (C, nx, ny, nz) int64 with
    the kernel ``kind`` of ``width`` (m: the Gaussian's standard deviation, Lucy's cut-off),
    each component scaled by ``scale`` (C,) (a power of two:
    :func:`~pdyn.fields.exact.fixed_scale`)."""
    g = grid_spec
    points = np.ascontiguousarray(points, float)
    values = np.ascontiguousarray(values, float)
    scale = np.asarray(scale, float)
    if kind == "bins":
        _deposit_bins(points, values, g.lo, g.spacing, g.cells, g.periodic, scale, _flat(out))
    else:
        _deposit(points, values, g.lo, g.spacing, g.cells, g.periodic, KERNELS.index(kind),
                 float(width), scale, _flat(out))


def _flat(out: np.ndarray) -> np.ndarray:
    """``out`` (C, nx, ny, nz) as (C, cells) — a view: the kernels add into it."""
    flat = out.reshape(out.shape[0], -1)
    if not np.shares_memory(flat, out):
        raise ValueError("the grid of sums must be contiguous")
    return flat


def deposit_segments(grid_spec, kind: str, width: float, ends: np.ndarray,
                     values: np.ndarray, scale: np.ndarray, out: np.ndarray) -> None:
    """Deposit ``values`` (K, C) spread along the segments ``ends[2k]`` → ``ends[2k + 1]``
    (2K, 3) onto ``out`` (C, nx, ny, nz) int64 with the kernel ``kind`` of ``width`` (m):
    the line integral ∫₀¹ φ(r − a − s (b − a)) ds, exact for bins (the pieces between cell
    faces), by Gauss–Legendre for a smooth kernel (:func:`_node_count` points); one rounded
    term per segment and cell; ``scale`` as for :func:`deposit`."""
    g = grid_spec
    _deposit_segments(np.ascontiguousarray(ends, float), np.ascontiguousarray(values, float),
                      g.lo, g.spacing, g.cells, g.periodic, KERNELS.index(kind), float(width),
                      np.asarray(scale, float), NODES, WEIGHTS, _flat(out))


#: Gauss–Legendre rules on [0, 1] for the line integrals: row n holds the n-point rule's nodes
#: and weights (summing to one), n = 1 … MAX_NODES
MAX_NODES, MIN_NODES = 8, 3
NODES, WEIGHTS = np.zeros((MAX_NODES + 1, MAX_NODES)), np.zeros((MAX_NODES + 1, MAX_NODES))
for _n in range(1, MAX_NODES + 1):
    _x, _w = np.polynomial.legendre.leggauss(_n)
    NODES[_n, :_n], WEIGHTS[_n, :_n] = 0.5 * (_x + 1.0), 0.5 * _w


@njit(**JIT_IEEE)
def _pieces(a, b, lo, h, cells, out_t, out_w):
    """The pieces of the segment a → b between the cell faces of the resolved axes: their
    midpoints' parameters ``out_t`` and lengths ``out_w`` (fractions of the segment);
    returns how many."""
    n = 0
    out_t[n] = 0.0
    n += 1
    for ax in range(3):
        if cells[ax] == 1 or a[ax] == b[ax]:
            continue
        lo_f, hi_f = min(a[ax], b[ax]), max(a[ax], b[ax])
        first = int(np.floor((lo_f - lo[ax]) / h[ax])) + 1
        last = int(np.ceil((hi_f - lo[ax]) / h[ax])) - 1
        for f in range(first, last + 1):
            out_t[n] = (lo[ax] + f * h[ax] - a[ax]) / (b[ax] - a[ax])
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
def _node_count(a, b, cells, width):
    """Gauss–Legendre points for a segment a → b under a smooth kernel of ``width``: 3 per
    width of its length ℓ over the resolved axes, at least MIN_NODES (ℓ ≤ w: the rule's
    error is of order (ℓ/w)⁶ 10⁻⁵ of the kernel), at most MAX_NODES."""
    l2 = 0.0
    for ax in range(3):
        if cells[ax] > 1:
            l2 += (b[ax] - a[ax]) ** 2
    m = int(np.ceil(3.0 * np.sqrt(l2) / width))
    return min(MAX_NODES, max(MIN_NODES, m))
