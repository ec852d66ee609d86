"""Every wall as triangles at a moment, for pictures (snapshots, ``pdyn render``).

:func:`wall_surfaces` returns one triangle surface for all walls — vertices (V, 3) m,
triangles (T, 3) rows of the vertices, the wall id of each triangle (T,) — from the wall
table (``pdyn.walls``), each wall's point at that moment (a translating wall's p₀ + v t) and
the box:

each wall drawn by its kind's spec (``pdyn.wallkinds.WallKind.draw``, on
``pdyn.wallshapes``):

* a plane: the polygon where it cuts the box (its crossings with the box's twelve edges,
  ordered by angle about their centroid), a fan of triangles; none when it misses the box;
* a cylinder: a tube of :data:`SEGMENTS` strips around the axis over its ``length``, or, when
  infinite, over the box's extent along the axis (the projections of the box's corners: the
  box exactly for an axis along x, y or z); a turning cylinder's tessellation is turned by
  Ω t, so the drawn surface turns with it;
* a cone: the same strips between its lo and hi (infinite: from its apex, clipped to the
  box's extent along the axis), turned by Ω t;
* a mesh: its own triangles turned by Ω t about its axis and translated by v t
  (``Mesh.surface``).

Each triangle faces the spheres' side (its corners counter-clockwise seen from there): a
plane's toward its normal, an inside cylinder's (an open tube's, a cone's) toward the axis,
an outside one's away from it. A mesh is two-sided (``pdyn.mesh``: spheres may touch either
side): its triangles keep the winding of its file or arrays. A kind of wall added later draws
itself through its spec; this module does not change. Numpy; a handful of walls, not a
particle loop.
"""

from __future__ import annotations

import numpy as np

from ..wallkinds import KIND, kind_of
from ..wallshapes import SEGMENTS, plane_polygon, tube


def wall_surfaces(table: np.ndarray, points: np.ndarray, normals: np.ndarray, lo, hi,
                  time: float, meshes=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All walls as one triangle surface at ``time`` (s): (vertices (V, 3), triangles (T, 3)
    int64 rows of vertices, wall id (T,) int64: −1 − the row of the wall). ``table`` the wall
    table, ``points`` (W, 3) each wall's point at ``time``, ``normals`` (W, 3) its normal or
    axis, ``lo``, ``hi`` the box, ``meshes`` the mesh of each mesh wall's row
    (``pdyn.walls.WallSet.mesh_of``; needed when the table has meshes)."""
    meshes = meshes or {}
    verts, tris, ids = [np.zeros((0, 3))], [np.zeros((0, 3), np.int64)], [np.zeros(0, np.int64)]
    n_verts = 0
    for w in range(len(points)):
        vw, tw = kind_of(table[w, KIND]).draw(points[w], normals[w], table[w], lo, hi, time,
                                              meshes.get(w))
        verts.append(vw)
        tris.append(tw.astype(np.int64) + n_verts)
        ids.append(np.full(len(tw), -1 - w, np.int64))
        n_verts += len(vw)
    return np.concatenate(verts), np.concatenate(tris), np.concatenate(ids)


__all__ = ["SEGMENTS", "plane_polygon", "tube", "wall_surfaces"]
