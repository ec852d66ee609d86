"""The test oracle of the sphere–triangle geometry (``pdyn.mesh.geometry``): the closest feature
and the kept contact written directly on one mesh's arrays (welded vertices, triangles, normals,
edges, edge normals and lengths, adjacency: :func:`arrays`), as ``docs/walls.md`` defines them,
with no packed records; the tests hold the package's kernels to these numbers bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pdyn._jit import JIT
from pdyn.mesh import EDGE, EPS, FACE, NONE, VERTEX


def arrays(mesh) -> tuple:
    """A ``pdyn.mesh.Mesh``'s arrays in the order the oracle takes them (:func:`mesh_contact`
    all eleven, :func:`closest_feature` the first seven): vertices, triangles, normals,
    triangle edges, edge normals, edge lengths, edge vertices, then the edges' and the
    vertices' triangles (CSR)."""
    return (mesh.verts, mesh.tri, mesh.normal, mesh.tedge, mesh.tm, mesh.elen, mesh.edge_v,
            mesh.estart, mesh.etri, mesh.vstart, mesh.vtri)


@njit(inline="always", **JIT)
def _edge_point(px, py, pz, verts, ev, e):
    """Closest point of edge ``e`` (canonical direction) to p: (u, cx, cy, cz, feature,
    id): the edge with its id, or a vertex (c exactly the vertex) when u is within ε of an
    end."""
    a = ev[e, 0]
    b = ev[e, 1]
    ax, ay, az = verts[a, 0], verts[a, 1], verts[a, 2]
    dx, dy, dz = verts[b, 0] - ax, verts[b, 1] - ay, verts[b, 2] - az
    u = ((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / (dx * dx + dy * dy + dz * dz)
    if u <= EPS:
        return u, ax, ay, az, VERTEX, a
    if u >= 1.0 - EPS:
        return u, verts[b, 0], verts[b, 1], verts[b, 2], VERTEX, b
    return u, ax + u * dx, ay + u * dy, az + u * dz, EDGE, e


@njit(inline="always", **JIT)
def _side(px, py, pz, f, k, verts, tri, tm):
    """m_k · (p − a_k): the in-plane distance of p outside edge k of triangle f (< 0 inside)."""
    a = tri[f, k]
    return (tm[f, k, 0] * (px - verts[a, 0]) + tm[f, k, 1] * (py - verts[a, 1])
            + tm[f, k, 2] * (pz - verts[a, 2]))


@njit(inline="always", **JIT)
def _over_face(px, py, pz, f, verts, tri, tedge, tm, elen):
    """Does p project inside triangle f (every edge test below −ε L)?"""
    for k in range(3):
        if _side(px, py, pz, f, k, verts, tri, tm) >= -EPS * elen[tedge[f, k]]:
            return False
    return True


@njit(**JIT)
def _boundary_feature(px, py, pz, f, verts, tedge, ev, s0, s1, s2, t0, t1, t2):
    """The nearest point of triangle f's border to p (p not over its face; ``s``/``t`` its
    edge tests and their tolerances): (feature, id, cx, cy, cz, d²). It lies on an edge p is
    outside of (or near)."""
    best = np.inf
    kind, ident, cx, cy, cz = VERTEX, -1, 0.0, 0.0, 0.0
    for k in range(3):
        if (s0 < t0) if k == 0 else ((s1 < t1) if k == 1 else (s2 < t2)):
            continue
        u, qx, qy, qz, fk, ik = _edge_point(px, py, pz, verts, ev, tedge[f, k])
        d2 = (px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2
        if d2 < best:
            best, kind, ident, cx, cy, cz = d2, fk, ik, qx, qy, qz
    return kind, ident, cx, cy, cz, best


@njit(inline="always", **JIT)
def closest_feature(px, py, pz, f, verts, tri, tnorm, tedge, tm, elen, ev, cut):
    """Closest point c of triangle f to p and its feature: (feature, id, cx, cy, cz, d²)
    with feature ``FACE`` (id f), ``EDGE`` (edge id) or ``VERTEX`` (welded vertex id); or,
    when p is surely farther than ``cut`` (m), ``NONE`` with d² a lower bound (h² plus the
    largest in-plane distance outside an edge, squared). The arrays: :func:`arrays`' first
    seven."""
    a = tri[f, 0]
    h = ((px - verts[a, 0]) * tnorm[f, 0] + (py - verts[a, 1]) * tnorm[f, 1]
         + (pz - verts[a, 2]) * tnorm[f, 2])
    s0 = _side(px, py, pz, f, 0, verts, tri, tm)
    s1 = _side(px, py, pz, f, 1, verts, tri, tm)
    s2 = _side(px, py, pz, f, 2, verts, tri, tm)
    t0 = -EPS * elen[tedge[f, 0]]
    t1 = -EPS * elen[tedge[f, 1]]
    t2 = -EPS * elen[tedge[f, 2]]
    if s0 < t0 and s1 < t1 and s2 < t2:  # over the face
        return FACE, f, px - h * tnorm[f, 0], py - h * tnorm[f, 1], pz - h * tnorm[f, 2], h * h
    out = max(s0, s1, s2, 0.0)
    bound = h * h + out * out
    if bound > cut * cut:
        return NONE, -1, 0.0, 0.0, 0.0, bound
    return _boundary_feature(px, py, pz, f, verts, tedge, ev, s0, s1, s2, t0, t1, t2)


@njit(**JIT)
def _edge_kept(px, py, pz, f, e, verts, tri, tedge, tm, elen, estart, etri):
    """Is the edge contact of edge e seen from triangle f the one to keep: x outside every
    adjacent triangle across e, and f the lowest-numbered of them?"""
    if etri[estart[e]] != f:
        return False
    tol = -EPS * elen[e]
    for q in range(estart[e], estart[e + 1]):
        g = etri[q]
        for k in range(3):
            if tedge[g, k] == e and _side(px, py, pz, g, k, verts, tri, tm) < tol:
                return False
    return True


@njit(**JIT)
def _vertex_kept(px, py, pz, f, v, verts, tri, tedge, tm, elen, ev, vstart, vtri):
    """Is the vertex contact of vertex v seen from triangle f the one to keep: no adjacent
    triangle with x over its face, x behind v along every edge out of v, f the
    lowest-numbered adjacent triangle?"""
    if vtri[vstart[v]] != f:
        return False
    for q in range(vstart[v], vstart[v + 1]):
        g = vtri[q]
        if _over_face(px, py, pz, g, verts, tri, tedge, tm, elen):
            return False
        for k in range(3):
            e = tedge[g, k]
            if ev[e, 0] == v or ev[e, 1] == v:
                u = _edge_point(px, py, pz, verts, ev, e)[0]
                if (u > EPS) if ev[e, 0] == v else (u < 1.0 - EPS):
                    return False
    return True


@njit(inline="always", **JIT)
def mesh_contact(x, y, z, r, ox, oy, oz, f, verts, tri, tnorm, tedge, tm, elen, ev, estart,
                 etri, vstart, vtri):
    """Sphere (centre (x, y, z), radius r) against triangle f of a mesh translated by
    (ox, oy, oz): the unit normal from the sphere to the mesh and the overlap δ (m; −inf when
    this triangle's feature is not the contact to keep, negative when apart). The arrays:
    :func:`arrays`."""
    px, py, pz = x - ox, y - oy, z - oz
    kind, ident, cx, cy, cz, d2 = closest_feature(px, py, pz, f, verts, tri, tnorm, tedge, tm,
                                                  elen, ev, r)
    dist = math.sqrt(d2)
    if kind == NONE or dist > r:
        return 0.0, 0.0, 1.0, r - dist
    if kind == EDGE:
        if not _edge_kept(px, py, pz, f, ident, verts, tri, tedge, tm, elen, estart, etri):
            return 0.0, 0.0, 1.0, -np.inf
    elif kind == VERTEX:
        if not _vertex_kept(px, py, pz, f, ident, verts, tri, tedge, tm, elen, ev, vstart,
                            vtri):
            return 0.0, 0.0, 1.0, -np.inf
    if dist > 0.0:
        return (cx - px) / dist, (cy - py) / dist, (cz - pz) / dist, r - dist
    return -tnorm[f, 0], -tnorm[f, 1], -tnorm[f, 2], r  # centre on the surface
