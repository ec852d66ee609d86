"""All meshes of a run packed for the kernels: a :class:`MeshBundle` (a ``NamedTuple`` of
arrays, which numba takes as a tuple and reads by field name) with global triangle numbers f
— the meshes in wall order, each in its file's order: a neighbour-list entry of a mesh is one
triangle f — and global edge, vertex and grid-cell numbers.

Units: m.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .frame import frames
from .geometry import REC


class MeshBundle(NamedTuple):
    """The packed meshes (:func:`pack`). Per triangle f: ``tedge`` (T, 3) its edges (edge k
    from corner k to k + 1), ``tmesh`` (T,) its mesh, ``records`` (T, REC) its packed record
    (``pdyn.mesh.geometry``). Per edge e: ``ev`` (E, 2) its welded vertices, lower first (its
    canonical direction); its triangles ``etri[estart[e]:estart[e + 1]]``, ascending; per
    vertex v likewise ``vtri[vstart[v]:vstart[v + 1]]``. Per mesh m: its grid (``gf`` (M, 4):
    corner and cell size, m; ``gi`` (M, 4): cells per axis and its first cell; each cell c's
    triangles ``ctri[cstart[c]:cstart[c + 1]]``), ``rows`` (M,) its wall-table row, and
    ``frames`` (M, 12) its frame at the step's time (``pdyn.mesh.frame``; None when every
    mesh's frame is the world's less its translation: the kernels then compile no frame
    code)."""

    tedge: np.ndarray
    ev: np.ndarray
    estart: np.ndarray
    etri: np.ndarray
    vstart: np.ndarray
    vtri: np.ndarray
    tmesh: np.ndarray
    gf: np.ndarray
    gi: np.ndarray
    cstart: np.ndarray
    ctri: np.ndarray
    records: np.ndarray
    rows: np.ndarray
    frames: np.ndarray | None


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """``a + k``; ``a`` itself when k = 0 (the first mesh's numbers: no copy)."""
    return a + k if k else a


def pack(meshes, rows=()) -> MeshBundle:
    """The bundle of ``meshes`` (``pdyn.mesh.Mesh``), their triangles numbered in order, with
    ``rows`` their wall-table rows and their frames at t = 0 (None when no mesh turns or has
    a point: ``Mesh.framed``); no meshes: empty arrays of the same types."""
    f8, i8 = np.float64, np.int64
    v_off = t_off = e_off = c_off = n_ctri = 0
    parts: dict[str, list] = {k: [] for k in MeshBundle._fields[:12]}
    for m, mesh in enumerate(meshes):
        grid = mesh.grid
        parts["tedge"].append(_shift(mesh.tedge, e_off))
        parts["ev"].append(_shift(mesh.edge_v, v_off))
        parts["estart"].append(_shift(mesh.estart[:-1], 3 * t_off))
        parts["etri"].append(_shift(mesh.etri, t_off))
        parts["vstart"].append(_shift(mesh.vstart[:-1], 3 * t_off))
        parts["vtri"].append(_shift(mesh.vtri, t_off))
        parts["tmesh"].append(np.full(len(mesh), m, i8))
        parts["gf"].append(np.append(grid.lo, grid.h)[None])
        parts["gi"].append(np.append(grid.dims, c_off)[None])
        parts["cstart"].append(_shift(grid.start[:-1], n_ctri))
        parts["ctri"].append(_shift(grid.tri, t_off))
        parts["records"].append(mesh.records)
        v_off += len(mesh.verts)
        t_off += len(mesh)
        e_off += len(mesh.edge_v)
        c_off += len(grid.start) - 1
        n_ctri += len(grid.tri)
    empty = {"tedge": ((0, 3), i8), "ev": ((0, 2), i8), "estart": ((0,), i8),
             "etri": ((0,), i8), "vstart": ((0,), i8), "vtri": ((0,), i8),
             "tmesh": ((0,), i8), "gf": ((0, 4), f8), "gi": ((0, 4), i8),
             "cstart": ((0,), i8), "ctri": ((0,), i8), "records": ((0, REC), f8)}
    ends = {"estart": 3 * t_off, "vstart": 3 * t_off, "cstart": n_ctri}
    # one mesh: its arrays, no copy (its CSR starts end where the bundle's do)
    out = ({"estart": meshes[0].estart, "vstart": meshes[0].vstart,
            "cstart": meshes[0].grid.start} if len(meshes) == 1 else {})
    for key, (shape, dtype) in empty.items():
        if key in out:
            continue
        a = parts[key] or [np.zeros(shape, dtype)]
        a = np.ascontiguousarray((a[0] if len(a) == 1 else np.concatenate(a))
                                 .astype(dtype, copy=False))
        out[key] = np.append(a, ends[key]) if key in ends else a
    return MeshBundle(**out, rows=np.asarray(rows, i8).reshape(-1),
                      frames=frames(meshes, 0.0) if any(m.framed for m in meshes) else None)
