"""The patches of a wall pressure map (``pdyn.fields.wallstress``): each wall cut into patches
at a moment, the patch holding each contact point, each patch's area and its triangles for
pictures. Numpy over a handful of walls; the contacts in arrays.

* a plane: an ``nu`` × ``nv`` grid of rectangles in the plane's coordinates (a, b) = (x·û,
  x·v̂) (û, v̂ the in-plane basis of ``pdyn.wallshapes.basis``; absolute, so a plane sliding in
  itself or moving along its normal keeps its patches) over the bounding rectangle of its
  polygon in the box; a patch's area is that of its rectangle clipped to the polygon (zero
  outside it), and it is drawn as that clipped polygon;
* a cylinder or a cone (a surface of revolution, ``pdyn.wallshapes``): ``nu`` sectors of
  angle θ about the axis (from û of the axis' basis, in the lab: a turning drum's patches stay
  where they are) times ``nv`` bands along the axis over its drawn extent (a finite tube: its
  length; infinite: the box's extent along the axis; a cone: between its lo and hi); area
  Δθ/2 (r_a + r_b) ℓ (ℓ the band's slant length); a contact beyond the ends (a rim) counts
  on the end band;
* a mesh: its triangles (the ones it is drawn with, ``Mesh.surface``), each a patch.

Units: m, m²."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..wallkinds import CONE, CYLINDER_INSIDE, CYLINDER_OUTSIDE, HALF, HI, KIND, LO, MESH, \
    PLANE, RADIUS, RADIUS_HI, T0, T1, kind_of
from ..wallshapes import axial_extent, basis, plane_polygon, revolved


@dataclass(frozen=True)
class WallPatches:
    """One wall's patches: ``kind`` (``plane``, ``revolution``, ``mesh``), ``count``, ``area``
    (count,) m², ``shape`` (nu, nv) of the grid (a mesh: (triangles, 1)) and what locating a
    point needs (``frame``: a plane's (û, v̂, a0, b0, da, db); a surface of revolution's
    (p, â, û, v̂, s_a, s_b, r_a, r_b): its generating segment); a mesh's first triangle in the run's bundle)."""

    kind: str
    count: int
    area: np.ndarray
    shape: tuple
    frame: tuple


def _clip(poly: np.ndarray, a0: float, a1: float, b0: float, b1: float) -> np.ndarray:
    """The convex polygon ``poly`` (P, 2) clipped to the rectangle [a0, a1] × [b0, b1]
    (reentrant clipping, [SutherlandHodgman1974])."""
    for axis, bound, keep_below in ((0, a0, False), (0, a1, True), (1, b0, False),
                                    (1, b1, True)):
        if len(poly) == 0:
            break
        inside = (poly[:, axis] <= bound) if keep_below else (poly[:, axis] >= bound)
        out = []
        for k in range(len(poly)):
            p, q = poly[k], poly[(k + 1) % len(poly)]
            ip, iq = inside[k], inside[(k + 1) % len(poly)]
            if ip:
                out.append(p)
            if ip != iq:
                t = (bound - p[axis]) / (q[axis] - p[axis])
                out.append(p + t * (q - p))
        poly = np.array(out).reshape(-1, 2)
    return poly


def _area(poly: np.ndarray) -> float:
    """The area of a polygon (P, 2) (shoelace)."""
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _plane(point, normal, lo, hi, nu: int, nv: int) -> tuple[WallPatches, list]:
    """A plane's patches and each one's clipped polygon (in (a, b))."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    u, v = basis(n)
    corners = plane_polygon(point, n, lo, hi)
    if len(corners) == 0:
        return WallPatches("plane", 0, np.zeros(0), (nu, nv), (u, v, 0.0, 0.0, 1.0, 1.0)), []
    ab = np.column_stack((corners @ u, corners @ v))
    a0, b0 = ab.min(axis=0)
    da, db = (ab.max(axis=0) - (a0, b0)) / (nu, nv)
    polys = [_clip(ab, a0 + i * da, a0 + (i + 1) * da, b0 + j * db, b0 + (j + 1) * db)
             for j in range(nv) for i in range(nu)]
    area = np.array([_area(p) for p in polys])
    return WallPatches("plane", nu * nv, area, (nu, nv), (u, v, a0, b0, da, db)), polys


def _band(point, axis, row, lo, hi):
    """A cylinder's or cone's drawn generating segment (s_a, r_a, s_b, r_b) (as its
    ``WallKind.draw``), None when it misses the box."""
    if row[KIND] != CONE:
        half = row[HALF]
        sa, sb = (-half, half) if half < math.inf else axial_extent(point, axis, lo, hi)
        return sa, row[RADIUS], sb, row[RADIUS]
    s0, s1, r0, dr = row[LO], row[HI], row[RADIUS], row[RADIUS_HI] - row[RADIUS]
    a, b = row[T0], row[T1]
    if not (a == 0.0 and b == 1.0):
        e0, e1 = axial_extent(point, axis, lo, hi)
        a, b = max(a, (e0 - s0) / (s1 - s0)), min(b, (e1 - s0) / (s1 - s0))
        if not a < b:
            return None
    return s0 + a * (s1 - s0), r0 + a * dr, s0 + b * (s1 - s0), r0 + b * dr


def _revolution(point, axis, row, lo, hi, nu: int, nv: int) -> WallPatches:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    u, v = basis(a)
    band = _band(point, a, row, lo, hi)
    if band is None:
        return WallPatches("revolution", 0, np.zeros(0), (nu, nv),
                           (np.asarray(point, float), a, u, v, 0.0, 1.0, 0.0, 0.0))
    sa, ra, sb, rb = band
    s = sa + (sb - sa) * np.arange(nv + 1) / nv
    r = ra + (rb - ra) * np.arange(nv + 1) / nv
    slant = np.hypot(np.diff(s), np.diff(r))
    area = np.repeat(math.pi * (r[:-1] + r[1:]) * slant / nu, nu)  # band j, sector i: j nu + i
    return WallPatches("revolution", nu * nv, area, (nu, nv),
                       (np.asarray(point, float), a, u, v, sa, sb, ra, rb))


def _mesh(mesh, first: int) -> WallPatches:
    verts, tris = mesh.surface(0.0)
    e1, e2 = verts[tris[:, 1]] - verts[tris[:, 0]], verts[tris[:, 2]] - verts[tris[:, 0]]
    area = 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)
    return WallPatches("mesh", len(tris), area, (len(tris), 1), (int(first),))


def wall_patches(table, points, normals, lo, hi, meshes, patches) -> list[WallPatches]:
    """Every wall's patches at the moment its ``points`` (W, 3) hold (``table`` the wall table
    rows in id order, ``normals`` each plane's normal or axis, ``lo``, ``hi`` the box,
    ``meshes`` the mesh of each mesh wall's row, ``patches`` (nu, nv) per analytic wall)."""
    meshes = meshes or {}
    nu, nv = (int(k) for k in patches)
    first = np.cumsum([0] + [len(meshes[k]) for k in sorted(meshes)])
    offset = dict(zip(sorted(meshes), first[:-1].tolist()))  # rows in bundle order
    out = []
    for w in range(len(points)):
        code = int(table[w, KIND])
        if code == PLANE:
            out.append(_plane(points[w], normals[w], lo, hi, nu, nv)[0])
        elif code in (CYLINDER_INSIDE, CYLINDER_OUTSIDE, CONE):
            out.append(_revolution(points[w], normals[w], table[w], lo, hi, nu, nv))
        elif code == MESH:
            out.append(_mesh(meshes[w], offset[w]))
        else:  # pragma: no cover - a kind added later says how it is cut here
            raise ValueError(f"wall kind {kind_of(code).name}: no patches")
    return out


def locate(walls: list[WallPatches], wall_row: np.ndarray, point: np.ndarray,
           facet: np.ndarray) -> np.ndarray:
    """The patch (numbered over all walls in order, −1: none) of each contact: its wall's row
    ``wall_row`` (K,), its contact point ``point`` (K, 3) on the wall, ``facet`` (K,) its
    triangle in the run's mesh bundle (mesh walls; −1 otherwise)."""
    out = np.full(len(wall_row), -1, np.int64)
    start = 0
    for w, p in enumerate(walls):
        at = np.flatnonzero(wall_row == w)
        if p.count and len(at):
            c = point[at]
            nu, nv = p.shape
            if p.kind == "plane":
                u, v, a0, b0, da, db = p.frame
                i = np.clip(np.floor((c @ u - a0) / da), 0, nu - 1).astype(np.int64)
                j = np.clip(np.floor((c @ v - b0) / db), 0, nv - 1).astype(np.int64)
                local = j * nu + i
            elif p.kind == "revolution":
                origin, a, u, v, sa, sb = p.frame[:6]
                d = c - origin
                theta = np.mod(np.arctan2(d @ v, d @ u), 2.0 * math.pi)
                i = np.minimum((theta * (nu / (2.0 * math.pi))).astype(np.int64), nu - 1)
                j = np.clip(np.floor((d @ a - sa) / (sb - sa) * nv), 0, nv - 1).astype(np.int64)
                local = j * nu + i
            else:
                local = facet[at] - p.frame[0]
            out[at] = start + local
        start += p.count
    return out


def patch_surface(walls: list[WallPatches], table, points, normals, lo, hi, time: float,
                  meshes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every patch as triangles at ``time`` for pictures: (vertices (V, 3), triangles (T, 3)
    rows of them, patch of each triangle (T,), numbered as :func:`locate`). A plane's patch
    is its clipped polygon (a fan; none where it is empty), a surface of revolution's the two
    triangles of its quadrilateral, a mesh's its triangle (turned as drawn at ``time``)."""
    meshes = meshes or {}
    verts, tris, owner = [np.zeros((0, 3))], [np.zeros((0, 3), np.int64)], [np.zeros(0, np.int64)]
    n, start = 0, 0
    for w, p in enumerate(walls):
        if p.kind == "plane" and p.count:
            nrm = np.asarray(normals[w], float) / np.linalg.norm(normals[w])
            offset = float(np.asarray(points[w], float) @ nrm)
            polys = _plane(points[w], normals[w], lo, hi, *p.shape)[1]
            u, v = p.frame[0], p.frame[1]
            for k, poly in enumerate(polys):
                if len(poly) < 3:
                    continue
                verts.append(np.outer(poly[:, 0], u) + np.outer(poly[:, 1], v) + offset * nrm)
                f = np.arange(1, len(poly) - 1)
                tris.append(n + np.column_stack((np.zeros_like(f), f, f + 1)))
                owner.append(np.full(len(f), start + k, np.int64))
                n += len(poly)
        elif p.kind == "revolution" and p.count:
            origin, a, u, v, sa, sb, ra, rb = p.frame
            nu, nv = p.shape
            for j in range(nv):
                s0, s1 = sa + (sb - sa) * j / nv, sa + (sb - sa) * (j + 1) / nv
                r0, r1 = ra + (rb - ra) * j / nv, ra + (rb - ra) * (j + 1) / nv
                vj, tj = revolved(origin, a, s0, r0, s1, r1, 0.0, nu)
                verts.append(vj)
                tris.append(tj + n)
                owner.append(start + j * nu + np.r_[np.arange(nu), np.arange(nu)])
                n += len(vj)
        elif p.kind == "mesh":
            vm, tm = kind_of(MESH).draw(points[w], normals[w], table[w], lo, hi, time,
                                        meshes[w])
            verts.append(vm)
            tris.append(tm.astype(np.int64) + n)
            owner.append(start + np.arange(len(tm), dtype=np.int64))
            n += len(vm)
        start += p.count
    return np.concatenate(verts), np.concatenate(tris), np.concatenate(owner)


__all__ = ["WallPatches", "locate", "patch_surface", "wall_patches"]
