"""The uniform grid over a mesh's triangles, for the neighbour lists: each mesh's triangles are
binned once, in its own frame, into a uniform grid over their bounding boxes (cell size about
the median triangle's largest bounding-box side, at most ``4 T + 64`` cells); a query (centre,
reach) visits the cells its box overlaps and tests each triangle met once by its exact
distance (``pdyn.mesh.geometry.record_feature``, a lower bound above the reach rejecting most
without the border's search). A point's distance from the mesh (for the start-up checks)
visits blocks of cells, then cells, nearest first, and stops at the first farther than the
nearest triangle found (:func:`distances`).

Units: m.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._jit import JIT
from .frame import in_frame
from .geometry import record_feature


class TriangleGrid(NamedTuple):
    """One mesh's grid (:func:`bin_triangles`): corner ``lo`` (3,) and cell size ``h`` (m),
    cells per axis ``dims`` (3,), and each cell's triangles, ascending (CSR ``start``,
    ``tri``)."""

    lo: np.ndarray
    h: float
    dims: np.ndarray
    start: np.ndarray
    tri: np.ndarray


def bin_triangles(corners: np.ndarray) -> TriangleGrid:
    """The grid (module docstring) over triangles with corners ``corners`` (T, 3, 3; m)."""
    bmin, bmax = corners.min(axis=1), corners.max(axis=1)
    lo, hi = bmin.min(axis=0), bmax.max(axis=0)
    extent = np.maximum(hi - lo, 0.0)
    h = float(np.median(np.max(bmax - bmin, axis=1)))
    h = max(h, float(extent.max()) * 1e-6, 1e-300)
    cap = 4 * corners.shape[0] + 64
    while True:
        dims = np.maximum(np.ceil(extent / h), 1).astype(np.int64)
        if int(np.prod(dims)) <= cap:
            break
        h *= 1.25
    return TriangleGrid(lo, h, dims, *_bin(lo, h, dims, bmin, bmax))


@njit(inline="always", **JIT)
def _cells(f, lo, h, dims, bmin, bmax):
    """Cell ranges (i0, i1, j0, j1, k0, k1) that triangle f's box overlaps."""
    i0 = min(max(int((bmin[f, 0] - lo[0]) / h), 0), dims[0] - 1)
    i1 = min(max(int((bmax[f, 0] - lo[0]) / h), 0), dims[0] - 1)
    j0 = min(max(int((bmin[f, 1] - lo[1]) / h), 0), dims[1] - 1)
    j1 = min(max(int((bmax[f, 1] - lo[1]) / h), 0), dims[1] - 1)
    k0 = min(max(int((bmin[f, 2] - lo[2]) / h), 0), dims[2] - 1)
    k1 = min(max(int((bmax[f, 2] - lo[2]) / h), 0), dims[2] - 1)
    return i0, i1, j0, j1, k0, k1


@njit(**JIT)
def _bin(lo, h, dims, bmin, bmax):
    """CSR (start, triangles) of the grid cells (corner lo, cell size h, dims) over the
    triangles' boxes, each cell's triangles ascending."""
    n_cells = dims[0] * dims[1] * dims[2]
    start = np.zeros(n_cells + 1, np.int64)
    for f in range(bmin.shape[0]):
        i0, i1, j0, j1, k0, k1 = _cells(f, lo, h, dims, bmin, bmax)
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    start[(i * dims[1] + j) * dims[2] + k + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    out = np.empty(start[n_cells], np.int64)
    for f in range(bmin.shape[0]):
        i0, i1, j0, j1, k0, k1 = _cells(f, lo, h, dims, bmin, bmax)
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    out[fill[c]] = f
                    fill[c] += 1
    return start, out


@njit(inline="always", **JIT)
def _axis_range(p, reach, lo, h, n):
    """Cells [a, b] along one axis that a box p ± reach overlaps (b < a: none)."""
    a = math.floor((p - reach - lo) / h)
    b = math.floor((p + reach - lo) / h)
    return int(max(a, 0.0)), int(min(b, n - 1.0))


@njit(**JIT)
def query(px, py, pz, reach, m, mesh, mark, stamp, out, n_out):
    """Append to ``out`` (from ``n_out``) the triangles of mesh m (of the bundle ``mesh``)
    within ``reach`` of p (in its frame; the distance from the packed records), each once
    (``mark[f] == stamp`` once taken); returns the new count (out must hold every triangle of
    the mesh)."""
    gf, gi, cstart, ctri, rec = mesh.gf, mesh.gi, mesh.cstart, mesh.ctri, mesh.records
    h = gf[m, 3]
    i0, i1 = _axis_range(px, reach, gf[m, 0], h, gi[m, 0])
    j0, j1 = _axis_range(py, reach, gf[m, 1], h, gi[m, 1])
    k0, k1 = _axis_range(pz, reach, gf[m, 2], h, gi[m, 2])
    base = gi[m, 3]
    for i in range(i0, i1 + 1):
        for j in range(j0, j1 + 1):
            for k in range(k0, k1 + 1):
                c = base + (i * gi[m, 1] + j) * gi[m, 2] + k
                for q in range(cstart[c], cstart[c + 1]):
                    f = ctri[q]
                    if mark[f] == stamp:
                        continue
                    mark[f] = stamp
                    if math.sqrt(record_feature(px, py, pz, rec, f, reach)[4]) <= reach:
                        out[n_out] = f
                        n_out += 1
    return n_out


@njit(**JIT)
def _sort(a, lo, hi):
    """Insertion sort of a[lo:hi] (short runs)."""
    for u in range(lo + 1, hi):
        v = a[u]
        w = u - 1
        while w >= lo and a[w] > v:
            a[w + 1] = a[w]
            w -= 1
        a[w + 1] = v


@njit(**JIT)
def candidates(rows, pos, rad, extra, mesh, origin, frame):
    """Per row (handles ``rows``): the mesh triangles within ``rad[i] + extra[m]`` of its
    centre (mesh m's wall point at ``origin[m]``; its centre taken into the mesh's frame by
    ``frame``, the bundle's, :func:`in_frame`), ascending. Returns CSR (start, facets)."""
    n = rows.shape[0]
    n_tri = mesh.records.shape[0]
    start = np.zeros(n + 1, np.int64)
    mark = np.full(n_tri, -1, np.int64)
    buf = np.empty(n_tri, np.int64)
    out = np.empty(max(16, 4 * n), np.int64)
    k = 0
    for t in range(n):
        i = rows[t]
        got = 0
        for m in range(origin.shape[0]):
            px, py, pz = in_frame(pos[i, 0], pos[i, 1], pos[i, 2], origin[m, 0], origin[m, 1],
                                  origin[m, 2], frame, m)
            got = query(px, py, pz, rad[i] + extra[m], m, mesh, mark, t, buf, got)
        _sort(buf, 0, got)
        if k + got > out.shape[0]:
            grown = np.empty(2 * (k + got), np.int64)
            grown[:k] = out[:k]
            out = grown
        out[k:k + got] = buf[:got]
        k += got
        start[t + 1] = k
    return start, out[:k]


#: about how many blocks of cells :func:`distances` orders by their distance from a point
BLOCKS = 1024


@njit(inline="always", **JIT)
def _cells_gap2(px, py, pz, x0, y0, z0, h, i0, j0, k0, i1, j1, k1):
    """Squared distance of p from the box of the cells [i0, i1) × [j0, j1) × [k0, k1) of a
    grid with corner (x0, y0, z0) and cell size h, widened by 10⁻⁶ h against rounding (0
    inside)."""
    pad = 1e-6 * h
    dx = max(x0 + i0 * h - pad - px, 0.0, px - x0 - i1 * h - pad)
    dy = max(y0 + j0 * h - pad - py, 0.0, py - y0 - j1 * h - pad)
    dz = max(z0 + k0 * h - pad - pz, 0.0, pz - z0 - k1 * h - pad)
    return dx * dx + dy * dy + dz * dz


@njit(**JIT)
def _nearest(px, py, pz, m, mesh, mark, stamp, best):
    """The smaller of ``best`` and the distance (m) of p (in its frame) from mesh m of the
    bundle ``mesh``: the grid's cells in blocks of about (cells / :data:`BLOCKS`)^(1/3) per
    axis, visited in ascending distance of their boxes from p; a block or cell farther than
    the best distance found so far is skipped, the rest's triangles are measured each once
    (``mark[f] == stamp`` once done). The nearest point of a triangle lies in a cell the
    triangle is binned in, so no skipped cell holds a nearer triangle."""
    gf, gi, cstart, ctri, rec = mesh.gf, mesh.gi, mesh.cstart, mesh.ctri, mesh.records
    x0, y0, z0, h = gf[m, 0], gf[m, 1], gf[m, 2], gf[m, 3]
    nx, ny, nz, base = gi[m, 0], gi[m, 1], gi[m, 2], gi[m, 3]
    s = max(1, int(math.ceil((nx * ny * nz / BLOCKS) ** (1.0 / 3.0))))
    by, bz = (ny + s - 1) // s, (nz + s - 1) // s
    gap2 = np.empty((nx + s - 1) // s * by * bz)
    for b in range(gap2.shape[0]):
        i, j, k = b // (by * bz) * s, b // bz % by * s, b % bz * s
        gap2[b] = _cells_gap2(px, py, pz, x0, y0, z0, h, i, j, k, min(i + s, nx),
                              min(j + s, ny), min(k + s, nz))
    best2 = np.inf  # this mesh's nearest so far, squared
    for b in np.argsort(gap2):
        if gap2[b] > min(best2, best * best):
            break
        i0, j0, k0 = b // (by * bz) * s, b // bz % by * s, b % bz * s
        for i in range(i0, min(i0 + s, nx)):
            for j in range(j0, min(j0 + s, ny)):
                for k in range(k0, min(k0 + s, nz)):
                    if _cells_gap2(px, py, pz, x0, y0, z0, h, i, j, k, i + 1, j + 1,
                                   k + 1) > min(best2, best * best):
                        continue
                    c = base + (i * ny + j) * nz + k
                    for q in range(cstart[c], cstart[c + 1]):
                        f = ctri[q]
                        if mark[f] == stamp:
                            continue
                        mark[f] = stamp
                        best2 = min(best2, record_feature(px, py, pz, rec, f, np.inf)[4])
    return min(best, math.sqrt(best2))


@njit(**JIT)
def distances(pos, mesh):
    """Distance (m) of each point ``pos`` (N, 3; in the meshes' frames) from the surfaces of
    the bundle ``mesh`` (``pdyn.mesh.bundle``): the nearest triangle's (:func:`_nearest`, a
    search in the grid's cells by their distance)."""
    mark = np.full(mesh.records.shape[0], -1, np.int64)
    out = np.empty(pos.shape[0])
    for i in range(pos.shape[0]):
        best = np.inf
        for m in range(mesh.gf.shape[0]):
            best = _nearest(pos[i, 0], pos[i, 1], pos[i, 2], m, mesh, mark,
                            i * mesh.gf.shape[0] + m, best)
        out[i] = best
    return out
