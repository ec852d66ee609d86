"""Deposit values carried by points onto a :class:`~pdyn.fields.grid.Grid` with a kernel, in
exact integer sums ([Goldhirsch2010] coarse graining; [Lucy1977] for the Lucy kernel).

Kernels over the resolved axes (an averaged axis spreads a point evenly over the region):
``gaussian`` exp(−r²/2w²) cut at 3w; ``lucy`` (1 + 3r/c)(1 − r/c)³ for r < c (c = the width);
``bins`` the cell holding the point. Each point's weights over the cells are normalized to
one (so every point's value is counted exactly once in the region and the density integrates
to the mass; a kernel wider than the region gives the region's mean; a point whose kernel
reaches no cell centre goes to its own cell). A point outside the region adds nothing.

**Order-independent sums**: each weighted value is rounded to an integer multiple of 2⁻ᵏ
(``scale`` per component, ``pdyn.fields.exact.fixed_scale`` of a bound on the sum of the
magnitudes) and the cells sum int64s — associative and exact —, so any split of the points
over ranks, in any order, gives the same integers, and an integer allreduce the same grid on
every rank. The fixed point loses the bits below bound · 2⁻⁶² of each term (about 10⁻¹⁸ of the
largest cell for a million terms)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT, JIT_IEEE

KERNELS = ("gaussian", "lucy", "bins")
GAUSSIAN, LUCY, BINS = range(3)
#: the Gaussian's cut-off in standard deviations
CUTOFF = 3.0


@njit(**JIT_IEEE)
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


@njit(**JIT_IEEE)
def _axis_factors(kind, width, dist, n, out):
    """Per axis the kernel's factor at each cell distance ``dist[:n]``: the Gaussian's
    exp(−d²/2w²) (its weight is their product), the squared distance for Lucy, 1 for bins."""
    for i in range(n):
        d = dist[i]
        if kind == GAUSSIAN:
            out[i] = np.exp(-0.5 * d * d / (width * width))
        elif kind == LUCY:
            out[i] = d * d
        else:
            out[i] = 1.0


@njit(**JIT_IEEE)
def _weights(kind, width, dist, fac, n, out):
    """The point's weight of every cell (i, j, k) of its ``n`` per axis into ``out`` (flat,
    k fastest); returns their sum."""
    cut2 = (CUTOFF * width) ** 2
    total = 0.0
    q = 0
    for i in range(n[0]):
        for j in range(n[1]):
            for k in range(n[2]):
                if kind == BINS:
                    w = 1.0
                else:
                    r2 = dist[0, i] ** 2 + dist[1, j] ** 2 + dist[2, k] ** 2
                    if kind == GAUSSIAN:
                        w = fac[0, i] * fac[1, j] * fac[2, k] if r2 <= cut2 else 0.0
                    else:
                        u = np.sqrt(r2) / width
                        w = (1.0 + 3.0 * u) * (1.0 - u) ** 3 if u < 1.0 else 0.0
                out[q] = w
                total += w
                q += 1
    return total


@njit(**JIT_IEEE)
def _deposit(points, values, lo, h, cells, wraps, kind, width, scale, grid):
    """Add round(value · weight · scale) of every point to ``grid`` (C, nx, ny, nz) int64."""
    reach = -1.0 if kind == BINS else (CUTOFF * width if kind == GAUSSIAN else width)
    m = 2 * (int(np.ceil(reach / h.min())) + 1) + 1 if reach > 0 else 1
    m = max(m, cells.max())
    cell = np.empty((3, m), np.int64)
    dist = np.empty((3, m))
    fac = np.empty((3, m))
    resolved = cells > 1
    n = np.empty(3, np.int64)
    wts = np.empty(m ** 3 if m ** 3 <= cells.prod() else cells.prod())
    nc = values.shape[1]
    for p in range(points.shape[0]):
        for a in range(3):
            n[a] = _axis_cells(points[p, a], lo[a], h[a], cells[a], wraps[a],
                               reach if resolved[a] else -1.0, cell[a], dist[a])
        if n[0] == 0 or n[1] == 0 or n[2] == 0:
            continue
        for a in range(3):
            _axis_factors(kind, width, dist[a], n[a], fac[a])
        total = _weights(kind, width, dist, fac, n, wts)
        if total == 0.0:  # no cell centre within the kernel: the point's own cell
            for a in range(3):
                _axis_cells(points[p, a], lo[a], h[a], cells[a], wraps[a], -1.0, cell[a],
                            dist[a])
                n[a] = 1
            wts[0] = 1.0
            total = 1.0
        q = 0
        for i in range(n[0]):
            for j in range(n[1]):
                for k in range(n[2]):
                    w = wts[q]
                    q += 1
                    if w == 0.0:
                        continue
                    w /= total
                    ci, cj, ck = cell[0, i], cell[1, j], cell[2, k]
                    for c in range(nc):
                        grid[c, ci, cj, ck] += np.int64(np.rint(values[p, c] * w * scale[c]))


def deposit(grid_spec, kind: str, width: float, points: np.ndarray, values: np.ndarray,
            scale: np.ndarray, out: np.ndarray) -> None:
    """Deposit ``values`` (P, C) at ``points`` (P, 3) onto ``out`` (C, nx, ny, nz) int64 with
    the kernel ``kind`` of ``width`` (m: the Gaussian's standard deviation, Lucy's cut-off),
    each component scaled by ``scale`` (C,) (a power of two:
    :func:`~pdyn.fields.exact.fixed_scale`)."""
    g = grid_spec
    _deposit(np.ascontiguousarray(points, float), np.ascontiguousarray(values, float),
             g.lo, g.spacing, g.cells, g.periodic, KERNELS.index(kind), float(width),
             np.asarray(scale, float), out)


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


@njit(**JIT_IEEE)
def _segment_points(ends, lo, h, cells, bins, width, nodes, weights):
    """Points along each segment (ends[2k] → ends[2k + 1]) and their shares (summing to one
    per segment): with ``bins`` the pieces between cell faces (exact), else the Gauss–Legendre
    rule (``nodes``, ``weights`` by point count) of :func:`_node_count` points; returns
    (points (Q, 3), segment of each (Q,), share (Q,))."""
    k = ends.shape[0] // 2
    cap = 0
    for s in range(k):
        if bins:
            c = 2
            for ax in range(3):
                if cells[ax] > 1:
                    c += int(abs(ends[2 * s + 1, ax] - ends[2 * s, ax]) / h[ax]) + 2
            cap += c
        else:
            cap += MAX_NODES
    pts = np.empty((cap, 3))
    seg = np.empty(cap, np.int64)
    share = np.empty(cap)
    t = np.empty(64 + int(cap))
    w = np.empty(64 + int(cap))
    q = 0
    for s in range(k):
        a, b = ends[2 * s], ends[2 * s + 1]
        if bins:
            m = _pieces(a, b, lo, h, cells, t, w)
        else:
            m = _node_count(a, b, cells, width)
            t[:m] = nodes[m, :m]
            w[:m] = weights[m, :m]
        for r in range(m):
            for ax in range(3):
                pts[q, ax] = a[ax] + t[r] * (b[ax] - a[ax])
            seg[q] = s
            share[q] = w[r]
            q += 1
    return pts[:q], seg[:q], share[:q]


def segment_points(grid_spec, kind: str, ends: np.ndarray, width: float) -> tuple:
    """Points standing for the segments ``ends[2k]`` → ``ends[2k + 1]`` in a line integral
    of the kernel ∫₀¹ φ(r − a − s (b − a)) ds: (points, segment index, share). ``bins``: the
    pieces between cell faces, exactly; smooth kernels of ``width`` (m): Gauss–Legendre of
    :func:`_node_count` points."""
    g = grid_spec
    return _segment_points(np.ascontiguousarray(ends, float), g.lo, g.spacing, g.cells,
                           kind == "bins", float(width), NODES, WEIGHTS)
