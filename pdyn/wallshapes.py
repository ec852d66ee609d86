"""Wall surfaces in numpy, for checks and pictures: distances of centres from a surface of
revolution, and the triangles that draw a plane cut by the box or a surface of revolution.

A cylinder and a cone are both surfaces of revolution about an axis (point p, unit â): the
revolution of a *generating segment* in the meridian half-plane (axial position s = d·â,
distance from the axis ρ = |d − s â|, d = x − p) from (s₀, ρ₀) to (s₁, ρ₁). A centre's
distance from the surface is its distance in that half-plane from the segment's closest
point (the closest-point rule, as for a triangle mesh's edges, [Ericson2004] 5.1.2); the
segment may run on without end on either side (parameter bounds ±inf). ``pdyn.walls`` holds
the same rule for the contact pass (numba); this module is its numpy twin for the
initial-state checks (``pdyn.checks``) and the snapshots' wall triangles
(``pdyn.io.wallmesh``). Units: m, rad.
"""

from __future__ import annotations

import math

import numpy as np

#: strips around a surface of revolution when drawn
SEGMENTS = 64
_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float)
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8)
          if np.abs(_CORNERS[a] - _CORNERS[b]).sum() == 1]


def meridian(pos, point, axis) -> tuple[np.ndarray, np.ndarray]:
    """Axial position s and distance from the axis ρ (m) of each centre ``pos`` (N, 3) about
    the axis through ``point`` along unit ``axis``."""
    d = np.asarray(pos, float) - np.asarray(point, float)
    a = np.asarray(axis, float)
    s = d @ a
    return s, np.linalg.norm(d - np.outer(s, a), axis=1)


def segment_distance(s, rho, start, end, bounds=(0.0, 1.0)) -> np.ndarray:
    """Distance (m) in the meridian half-plane of points (``s``, ``rho``) from the segment
    ``start`` (s₀, ρ₀) → ``end`` (s₁, ρ₁), its parameter clamped to ``bounds`` (0, 1: the
    segment; beyond: the line runs on)."""
    es, er = end[0] - start[0], end[1] - start[1]
    t = ((s - start[0]) * es + (rho - start[1]) * er) / (es * es + er * er)
    t = np.clip(t, bounds[0], bounds[1])
    return np.hypot(start[0] + t * es - s, start[1] + t * er - rho)


def corners(lo, hi) -> np.ndarray:
    """The box [lo, hi]'s eight corners (8, 3)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return lo + _CORNERS * (hi - lo)


def basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    box = corners(lo, hi)
    d = (box - np.asarray(point, float)) @ n
    tol = 1e-12 * float(np.linalg.norm(hi - lo))
    d[np.abs(d) <= tol] = 0.0
    pts = [box[k] for k in range(8) if d[k] == 0.0]
    for a, b in _EDGES:
        if d[a] * d[b] < 0.0:
            pts.append(box[a] + d[a] / (d[a] - d[b]) * (box[b] - box[a]))
    if len(pts) < 3:
        return np.zeros((0, 3))
    pts = np.array(pts)
    centre = pts.mean(axis=0)
    u, v = basis(n)
    order = np.argsort(np.arctan2((pts - centre) @ v, (pts - centre) @ u), kind="stable")
    pts = pts[order]
    keep = np.ones(len(pts), bool)  # a corner on the plane is found once
    keep[1:] = np.linalg.norm(np.diff(pts, axis=0), axis=1) > tol
    pts = pts[keep]
    if len(pts) > 3 and np.linalg.norm(pts[-1] - pts[0]) <= tol:
        pts = pts[:-1]
    return pts if len(pts) >= 3 else np.zeros((0, 3))


def plane_fan(point, normal, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """The plane's polygon in the box (:func:`plane_polygon`) as a fan of triangles facing
    its normal: (P, 3) vertices, (P − 2, 3) triangles."""
    verts = plane_polygon(point, normal, lo, hi)
    k = np.arange(1, len(verts) - 1)
    return verts, np.column_stack((np.zeros_like(k), k, k + 1)).astype(np.int64)


def revolved(point, axis, s0: float, r0: float, s1: float, r1: float, turn: float = 0.0,
             segments: int = SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """The surface of revolution of the segment (s₀, r₀) → (s₁, r₁) about the axis
    (``point``, unit ``axis``), its tessellation turned by ``turn`` rad: (2 · segments, 3)
    vertices, (2 · segments, 3) triangles facing away from the axis (for s₀ < s₁)."""
    a = np.asarray(axis, float)
    u, v = basis(a)
    th = turn + 2.0 * math.pi * np.arange(segments) / segments
    ring = np.outer(np.cos(th), u) + np.outer(np.sin(th), v)
    p = np.asarray(point, float)
    verts = np.concatenate((p + s0 * a + r0 * ring, p + s1 * a + r1 * ring))
    k = np.arange(segments)
    k1 = (k + 1) % segments
    tris = np.concatenate((np.column_stack((k, k1, segments + k)),
                           np.column_stack((k1, segments + k1, segments + k))))
    return verts, tris.astype(np.int64)


def tube(point, axis, radius: float, s0: float, s1: float, turn: float = 0.0,
         segments: int = SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """A tube of ``radius`` about the axis from s0 to s1 along it (:func:`revolved`)."""
    return revolved(point, axis, s0, radius, s1, radius, turn, segments)


def axial_extent(point, axis, lo, hi) -> tuple[float, float]:
    """The box [lo, hi]'s extent along the axis (``point``, unit ``axis``): the smallest and
    largest axial position of its corners (m)."""
    s = (corners(lo, hi) - np.asarray(point, float)) @ np.asarray(axis, float)
    return float(s.min()), float(s.max())


__all__ = ["SEGMENTS", "meridian", "segment_distance", "corners", "basis", "plane_polygon",
           "plane_fan", "revolved", "tube", "axial_extent"]
