"""Every wall as triangles at a moment, for pictures (snapshots, ``pdyn render``).

:func:`wall_surfaces` returns one triangle surface for all walls — vertices (V, 3) m,
triangles (T, 3) rows of the vertices, the wall id of each triangle (T,) — from the wall
table (``pdyn.walls``), each wall's point at that moment (a translating wall's p₀ + v t) and
the box:

* a plane: the polygon where it cuts the box (its crossings with the box's twelve edges,
  ordered by angle about their centroid), a fan of triangles; none when it misses the box;
* a cylinder: a tube of :data:`SEGMENTS` strips around the axis over its ``length``, or, when
  infinite, over the box's extent along the axis (the projections of the box's corners: the
  box exactly for an axis along x, y or z); a turning cylinder's tessellation is turned by
  Ω t, so the drawn surface turns with it;
* a mesh: its own triangles turned by Ω t about its axis and translated by v t
  (``Mesh.surface``).

Each triangle faces the spheres' side (its corners counter-clockwise seen from there): a
plane's toward its normal, an inside cylinder's (and an open tube's) toward the axis, an
outside one's away from it. A mesh is two-sided (``pdyn.mesh``: spheres may touch either
side): its triangles keep the winding of its file or arrays.

A kind of wall added later draws itself by adding a branch to :func:`wall_surfaces`.
Numpy; a handful of walls, not a particle loop.
"""

from __future__ import annotations

import math

import numpy as np

from ..walls import CYLINDER_INSIDE, HALF, KIND, MESH, OMEGA, PLANE, RADIUS

#: strips around a tube
SEGMENTS = 64
_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float)
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8)
          if np.abs(_CORNERS[a] - _CORNERS[b]).sum() == 1]


def _basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors u, v with (u, v, n) right-handed and orthonormal."""
    u = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def plane_polygon(point, normal, lo, hi) -> np.ndarray:
    """The polygon (P, 3) where the plane (``point``, ``normal``) cuts the box [lo, hi], its
    corners in order around it (counter-clockwise seen from the normal's side); (0, 3) when
    the plane misses the box or only touches an edge."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    corners = lo + _CORNERS * (hi - lo)
    d = (corners - np.asarray(point, float)) @ n
    tol = 1e-12 * float(np.linalg.norm(hi - lo))
    d[np.abs(d) <= tol] = 0.0
    pts = [corners[k] for k in range(8) if d[k] == 0.0]
    for a, b in _EDGES:
        if d[a] * d[b] < 0.0:
            pts.append(corners[a] + d[a] / (d[a] - d[b]) * (corners[b] - corners[a]))
    if len(pts) < 3:
        return np.zeros((0, 3))
    pts = np.array(pts)
    centre = pts.mean(axis=0)
    u, v = _basis(n)
    order = np.argsort(np.arctan2((pts - centre) @ v, (pts - centre) @ u), kind="stable")
    pts = pts[order]
    keep = np.ones(len(pts), bool)  # a corner on the plane is found once
    keep[1:] = np.linalg.norm(np.diff(pts, axis=0), axis=1) > tol
    pts = pts[keep]
    if len(pts) > 3 and np.linalg.norm(pts[-1] - pts[0]) <= tol:
        pts = pts[:-1]
    return pts if len(pts) >= 3 else np.zeros((0, 3))


def tube(point, axis, radius: float, s0: float, s1: float, turn: float = 0.0,
         segments: int = SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """A tube of ``radius`` about the axis (``point``, unit ``axis``) from s0 to s1 along it,
    its tessellation turned by ``turn`` rad: (2 · segments, 3) vertices, (2 · segments, 3)
    triangles."""
    a = np.asarray(axis, float)
    u, v = _basis(a)
    th = turn + 2.0 * math.pi * np.arange(segments) / segments
    ring = radius * (np.outer(np.cos(th), u) + np.outer(np.sin(th), v))
    p = np.asarray(point, float)
    verts = np.concatenate((p + s0 * a + ring, p + s1 * a + ring))
    k = np.arange(segments)
    k1 = (k + 1) % segments
    tris = np.concatenate((np.column_stack((k, k1, segments + k)),
                           np.column_stack((k1, segments + k1, segments + k))))
    return verts, tris.astype(np.int64)


def wall_surfaces(table: np.ndarray, points: np.ndarray, normals: np.ndarray, lo, hi,
                  time: float, meshes=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All walls as one triangle surface at ``time`` (s): (vertices (V, 3), triangles (T, 3)
    int64 rows of vertices, wall id (T,) int64: −1 − the row of the wall). ``table`` the wall
    table, ``points`` (W, 3) each wall's point at ``time``, ``normals`` (W, 3) its normal or
    axis, ``lo``, ``hi`` the box, ``meshes`` the mesh of each mesh wall's row
    (``pdyn.walls.WallSet.mesh_of``; needed when the table has meshes)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    corners = lo + _CORNERS * (hi - lo)
    verts, tris, ids = [np.zeros((0, 3))], [np.zeros((0, 3), np.int64)], [np.zeros(0, np.int64)]
    n_verts = 0
    for w in range(len(points)):
        kind = table[w, KIND]
        if kind == PLANE:
            vw = plane_polygon(points[w], normals[w], lo, hi)
            k = np.arange(1, len(vw) - 1)
            tw = np.column_stack((np.zeros_like(k), k, k + 1))
        elif kind == MESH:
            vw, tw = meshes[w].surface(time)
        else:
            a = np.asarray(normals[w], float) / np.linalg.norm(normals[w])
            half = table[w, HALF]
            if half < math.inf:
                s0, s1 = -half, half
            else:
                s = (corners - points[w]) @ a
                s0, s1 = float(s.min()), float(s.max())
            vw, tw = tube(points[w], a, table[w, RADIUS], s0, s1, table[w, OMEGA] * time)
            if kind == CYLINDER_INSIDE:  # facing the spheres, as the planes do
                tw = tw[:, ::-1]
        verts.append(vw)
        tris.append(tw.astype(np.int64) + n_verts)
        ids.append(np.full(len(tw), -1 - w, np.int64))
        n_verts += len(vw)
    return np.concatenate(verts), np.concatenate(tris), np.concatenate(ids)


__all__ = ["SEGMENTS", "plane_polygon", "tube", "wall_surfaces"]
