"""Triangle-mesh walls: welded triangles with their adjacency, the sphere–triangle contact with
face / edge / vertex features, and a uniform grid over the triangles for the neighbour lists.

A mesh is one wall of the store (kind ``MESH`` in the wall table, ``pdyn.walls``): its point
is the mesh's point translated, p + v t (from the step count, as every wall's), its triangles
are held here in the mesh's own frame. All meshes of a run are packed into one *bundle* (a
tuple of arrays, :func:`pack`) with global triangle numbers f (the meshes in wall order, each
in its file's order): a neighbour-list entry of a mesh is one triangle f.

**Turning.** A mesh may turn at Ω about a unit axis a through its point p: a corner X is at
p + v t + R(Ω t)(X − p) (R: Rodrigues' rotation, :func:`rotation`). Its geometry stays in its
frame; a centre x is taken there, X = p + R(−Ω t)(x − p − v t) (:func:`to_body`, from the
bundle's *frames*, :func:`frames`, computed from t alone at each step), the contact found
there and its normal turned back (:func:`to_world`); ``pdyn.walls.entry_contact`` adds the
surface velocity Ω a × (c − p − v t).

**Closest feature.** For a centre x (in the mesh's frame), triangle f gives the closest point
c of the triangle and its feature: the *face* when x projects inside it (every in-plane edge
test m_k·(x − a_k) < −ε L_k, m_k the outward in-plane normal of edge k, L_k its length), else
the closest point of its three edges, each measured along the edge's canonical direction (lower
welded vertex first, so every triangle sharing the edge computes the same bits): an *edge*
when its parameter lies in (ε, 1 − ε), else the *vertex* (c is then the vertex itself).
ε = :data:`EPS` (1e-12): points that close to a feature's border take the border's feature.

**One contact per touching feature** (the rule of [KremmerFavier2001] and [Su2011]: a contact
belongs to the surface feature nearest to the sphere, and an edge or vertex shared by several
triangles is counted once): a face contact is always kept; an edge contact only when x lies
outside (or on the border of) every triangle adjacent to the edge across that edge (otherwise
that triangle's face, or a neighbouring edge, is the nearer feature), a vertex contact only
when no adjacent triangle has x over its face and x is behind the vertex along every edge out
of it (parameter ≤ ε); an edge or vertex contact is evaluated by its lowest-numbered adjacent
triangle only. A sphere crossing a seam of coplanar triangles thus has one contact all the way
(face, then the shared edge's, then the next face), whose gap is the plane's to rounding; in
a V of two faces it has two face contacts; on a convex ridge, one edge contact.

**Contact.** Normal (sphere → mesh) n = (c − x)/|c − x| (a face: ∓ the face normal, toward
the face from the side x is on), overlap δ = r − |c − x|. Meshes are two-sided (no inside).

**Grid.** Each mesh's triangles are binned once, in its own frame, into a uniform grid over
their bounding boxes (cell size about the median triangle's largest bounding-box side, at most
``4 T`` cells); a query (centre, reach) visits the cells its box overlaps and tests each
triangle met once by its exact distance.

Units: m (after the ``scale`` applied by the caller).
"""

from __future__ import annotations

import copy
import math

import numpy as np
from numba import njit

from ._jit import JIT

#: relative width of the border of a feature (module docstring)
EPS = 1e-12
FACE, EDGE, VERTEX, NONE = 0, 1, 2, -1
#: the bundle's packed triangle records (:func:`records`), after its sixteen arrays; then the
#: meshes' wall-table rows, then their frames (:func:`frames`; None when every mesh's frame is
#: the world's, less its translation: the kernels then compile no frame code)
RECORDS, ROWS, FRAME = 16, 17, 18


class MeshError(ValueError):
    """Bad mesh geometry; ``str()`` is one line."""


# ------------------------------------------------------------------ geometry (kernels)
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
    largest in-plane distance outside an edge, squared). The arrays are the bundle's first
    seven (:func:`pack`), passed one by one and taken from the bundle once per kernel: a
    tuple of arrays costs a reference count each time one is taken from it, and a call with
    arrays its arguments (measured: each ten times this test's cost); the border's search,
    rarely needed, is a call."""
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
    this triangle's feature is not the contact to keep, negative when apart). The arrays are
    the bundle's first eleven (:func:`pack`, ``*bundle[:11]``)."""
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


@njit(inline="always", **JIT)
def _distance(px, py, pz, f, verts, tri, tnorm, tedge, tm, elen, ev, cut):
    """Distance (m) of p from triangle f (its closest feature's point), or a lower bound of it
    above ``cut``."""
    return math.sqrt(closest_feature(px, py, pz, f, verts, tri, tnorm, tedge, tm, elen, ev,
                                     cut)[5])


# ------------------------------------------------------------------ packed records (kernels)
# The kernels above take the bundle's arrays; each inlined call that also calls out of line
# (the border's search, the kept tests) makes numba count references to every array it takes,
# at each call: measured (the 100 352-triangle floor, one process) 130 ns for
# :func:`closest_feature` over a face and 400 ns for :func:`mesh_contact`, against 13 ns for
# the same face test with no call out. The step's kernels therefore read one row of the
# packed records (:data:`REC`) per triangle and call helpers that take scalars only; the
# same operations in the same order as :func:`closest_feature`, so the same bits.

#: columns of a packed triangle record (:func:`records`): the unit normal, each corner k
#: with the outward normal m_k of edge k (corner k to k + 1), the border tolerances −ε L_k,
#: and 1.0 where edge k's canonical direction starts at corner k (0.0: at corner k + 1)
N0, A0, M0, A1, M1, A2, M2, TOL, CANON = 0, 3, 6, 9, 12, 15, 18, 21, 24
REC = 27


@njit(inline="always", **JIT)
def _segment(px, py, pz, ax, ay, az, bx, by, bz):
    """Closest point of the segment a → b to p and its squared distance: (d², cx, cy, cz,
    end: 0 inside the segment, 1 the point a, 2 the point b); the operations of
    :func:`_edge_point`."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    u = ((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / (dx * dx + dy * dy + dz * dz)
    if u <= EPS:
        cx, cy, cz, end = ax, ay, az, 1
    elif u >= 1.0 - EPS:
        cx, cy, cz, end = bx, by, bz, 2
    else:
        cx, cy, cz, end = ax + u * dx, ay + u * dy, az + u * dz, 0
    return (px - cx) ** 2 + (py - cy) ** 2 + (pz - cz) ** 2, cx, cy, cz, end


@njit(inline="always", **JIT)
def _edge_of(px, py, pz, canon, ax, ay, az, bx, by, bz):
    """:func:`_segment` along the edge from corner a to corner b in its canonical direction
    (``canon`` 1.0: a first)."""
    if canon == 1.0:
        return _segment(px, py, pz, ax, ay, az, bx, by, bz)
    return _segment(px, py, pz, bx, by, bz, ax, ay, az)


@njit(inline="always", **JIT)
def record_feature(px, py, pz, rec, f, cut):
    """:func:`closest_feature` of triangle f from its packed record ``rec[f]``: (feature, cx,
    cy, cz, d², k, end) — ``FACE``, ``EDGE``, ``VERTEX``, or ``NONE`` (d² a lower bound above
    ``cut``²) — bit for bit the same numbers; for an edge or a vertex, instead of its id, the
    triangle's edge k it lies on and which point of that edge (``end``: 1 its canonical
    start, 2 its end; 0 neither)."""
    h = ((px - rec[f, A0]) * rec[f, N0] + (py - rec[f, A0 + 1]) * rec[f, N0 + 1]
         + (pz - rec[f, A0 + 2]) * rec[f, N0 + 2])
    s0 = (rec[f, M0] * (px - rec[f, A0]) + rec[f, M0 + 1] * (py - rec[f, A0 + 1])
          + rec[f, M0 + 2] * (pz - rec[f, A0 + 2]))
    s1 = (rec[f, M1] * (px - rec[f, A1]) + rec[f, M1 + 1] * (py - rec[f, A1 + 1])
          + rec[f, M1 + 2] * (pz - rec[f, A1 + 2]))
    s2 = (rec[f, M2] * (px - rec[f, A2]) + rec[f, M2 + 1] * (py - rec[f, A2 + 1])
          + rec[f, M2 + 2] * (pz - rec[f, A2 + 2]))
    in0 = s0 < rec[f, TOL]
    in1 = s1 < rec[f, TOL + 1]
    in2 = s2 < rec[f, TOL + 2]
    if in0 and in1 and in2:  # over the face
        return (FACE, px - h * rec[f, N0], py - h * rec[f, N0 + 1], pz - h * rec[f, N0 + 2],
                h * h, 0, 0)
    out = max(s0, s1, s2, 0.0)
    bound = h * h + out * out
    if bound > cut * cut:
        return NONE, 0.0, 0.0, 0.0, bound, 0, 0
    # the border (:func:`_boundary_feature`): the nearest point of the edges p is outside of
    best = np.inf
    kind, cx, cy, cz, k, at = VERTEX, 0.0, 0.0, 0.0, 0, 0
    a0x, a0y, a0z = rec[f, A0], rec[f, A0 + 1], rec[f, A0 + 2]
    a1x, a1y, a1z = rec[f, A1], rec[f, A1 + 1], rec[f, A1 + 2]
    a2x, a2y, a2z = rec[f, A2], rec[f, A2 + 1], rec[f, A2 + 2]
    if not in0:
        d2, qx, qy, qz, end = _edge_of(px, py, pz, rec[f, CANON], a0x, a0y, a0z, a1x, a1y, a1z)
        if d2 < best:
            best, kind, cx, cy, cz, k, at = d2, VERTEX if end else EDGE, qx, qy, qz, 0, end
    if not in1:
        d2, qx, qy, qz, end = _edge_of(px, py, pz, rec[f, CANON + 1], a1x, a1y, a1z, a2x, a2y,
                                       a2z)
        if d2 < best:
            best, kind, cx, cy, cz, k, at = d2, VERTEX if end else EDGE, qx, qy, qz, 1, end
    if not in2:
        d2, qx, qy, qz, end = _edge_of(px, py, pz, rec[f, CANON + 2], a2x, a2y, a2z, a0x, a0y,
                                       a0z)
        if d2 < best:
            best, kind, cx, cy, cz, k, at = d2, VERTEX if end else EDGE, qx, qy, qz, 2, end
    return kind, cx, cy, cz, best, k, at


@njit(inline="always", **JIT)
def _touching(px, py, pz, cx, cy, cz, dist, r, nx, ny, nz):
    """:func:`mesh_contact`'s normal and overlap of a kept contact: closest point c at ``dist``
    from p, the triangle's normal n (the centre on the surface: −n)."""
    if dist > 0.0:
        return (cx - px) / dist, (cy - py) / dist, (cz - pz) / dist, r - dist
    return -nx, -ny, -nz, r


@njit(inline="always", **JIT)
def in_frame(x, y, z, ox, oy, oz, frame, m):
    """A point (x, y, z) in the frame of mesh m, whose wall point is (ox, oy, oz):
    X = p + A (x − o) with A (row-major) and p ``frame[m]`` (:func:`frames`), or x − o
    without frames (``frame`` None: pruned at compile time)."""
    if frame is None:
        return x - ox, y - oy, z - oz
    dx, dy, dz = x - ox, y - oy, z - oz
    return (frame[m, 9] + (frame[m, 0] * dx + frame[m, 1] * dy + frame[m, 2] * dz),
            frame[m, 10] + (frame[m, 3] * dx + frame[m, 4] * dy + frame[m, 5] * dz),
            frame[m, 11] + (frame[m, 6] * dx + frame[m, 7] * dy + frame[m, 8] * dz))


@njit(inline="always", **JIT)
def to_body(x, y, z, ox, oy, oz, frame, tmesh, f):
    """:func:`in_frame` for the mesh of triangle f (``tmesh[f]``, read only with frames)."""
    if frame is None:
        return x - ox, y - oy, z - oz
    return in_frame(x, y, z, ox, oy, oz, frame, tmesh[f])


@njit(inline="always", **JIT)
def to_world(nx, ny, nz, frame, tmesh, f):
    """A direction in the frame of the mesh of triangle f back in the world: Aᵀ n (n itself
    without frames)."""
    if frame is None:
        return nx, ny, nz
    m = tmesh[f]
    return (frame[m, 0] * nx + frame[m, 3] * ny + frame[m, 6] * nz,
            frame[m, 1] * nx + frame[m, 4] * ny + frame[m, 7] * nz,
            frame[m, 2] * nx + frame[m, 5] * ny + frame[m, 8] * nz)


#: relative margin of the test "still apart since the build" (:func:`_geometry_first`), of
#: the coordinates' and distance's magnitude: far above the rounding of the computed distances
MARGIN = 1e-9


@njit(**JIT)
def entry_homes(sphere, facet, wall, pos, rec, frame, tmesh, home):
    """At a build of the lists: each mesh entry's centre in its mesh's frame and its distance
    from the triangle (m) into ``home`` (M, 4) (entries as :func:`contact_geometry`'s;
    ``frame``, ``tmesh``: the bundle's, :func:`to_body`)."""
    for q in range(sphere.shape[0]):
        i = sphere[q]
        f = facet[q]
        w = wall[f]
        px, py, pz = to_body(pos[i, 0], pos[i, 1], pos[i, 2], pos[w, 0], pos[w, 1], pos[w, 2],
                             frame, tmesh, f)
        home[q, 0], home[q, 1], home[q, 2] = px, py, pz
        home[q, 3] = math.sqrt(record_feature(px, py, pz, rec, f, np.inf)[4])


@njit(**JIT)
def _geometry_first(sphere, facet, wall, pos, rad, rec, frame, tmesh, home, geo, border):
    """First pass of :func:`contact_geometry`: each entry q (sphere handle ``sphere[q]``,
    triangle ``facet[q]`` of the mesh whose handle is ``wall[facet[q]]``) over a face or
    apart gets its row of ``geo``; the others (an edge or vertex within reach) go to
    ``border``, whose count it returns. An entry whose centre has moved (in the mesh's frame)
    less than its distance at its home (``home``: its centre and distance, or a lower bound of
    it, at the build, :func:`entry_homes`, or when last found apart here, which moves it
    there) exceeded the radius, less a margin (:data:`MARGIN`), is apart (the distance is
    1-Lipschitz in the centre) and gets −inf without the triangle's record being read. The
    geometry is done in the mesh's frame (:func:`to_body`), the normal turned back
    (:func:`to_world`)."""
    nb = 0
    for q in range(sphere.shape[0]):
        i = sphere[q]
        f = facet[q]
        w = wall[f]
        px, py, pz = to_body(pos[i, 0], pos[i, 1], pos[i, 2], pos[w, 0], pos[w, 1], pos[w, 2],
                             frame, tmesh, f)
        r = rad[i]
        hx, hy, hz, far = home[q, 0], home[q, 1], home[q, 2], home[q, 3]
        gap = far - r - MARGIN * (abs(hx) + abs(hy) + abs(hz) + far)
        if gap > 0.0 and (px - hx) ** 2 + (py - hy) ** 2 + (pz - hz) ** 2 < gap * gap:
            geo[q, 0], geo[q, 1], geo[q, 2], geo[q, 3] = 0.0, 0.0, 1.0, -np.inf
            continue
        kind, cx, cy, cz, d2 = record_feature(px, py, pz, rec, f, r)[:5]
        dist = math.sqrt(d2)
        if kind == NONE or dist > r:
            geo[q, 0], geo[q, 1], geo[q, 2], geo[q, 3] = 0.0, 0.0, 1.0, r - dist
            # from here on: ``dist`` is the distance or (NONE) a lower bound of it
            home[q, 0], home[q, 1], home[q, 2], home[q, 3] = px, py, pz, dist
        elif kind != FACE:
            border[nb] = q
            nb += 1
        else:
            nx, ny, nz, delta = _touching(px, py, pz, cx, cy, cz, dist, r, rec[f, N0],
                                          rec[f, N0 + 1], rec[f, N0 + 2])
            geo[q, 0], geo[q, 1], geo[q, 2] = to_world(nx, ny, nz, frame, tmesh, f)
            geo[q, 3] = delta
    return nb


@njit(inline="always", **JIT)
def _rec_side(px, py, pz, rec, g, k):
    """:func:`_side` from the records: m_k · (p − a_k) of triangle g."""
    a = A0 + 6 * k
    m = M0 + 6 * k
    return (rec[g, m] * (px - rec[g, a]) + rec[g, m + 1] * (py - rec[g, a + 1])
            + rec[g, m + 2] * (pz - rec[g, a + 2]))


@njit(inline="always", **JIT)
def _rec_edge_u(px, py, pz, rec, g, k):
    """The parameter u of :func:`_edge_point` along edge k of triangle g (canonical
    direction), from the records."""
    a = A0 + 3 * 2 * k
    b = A0 + 3 * 2 * ((k + 1) % 3)
    if rec[g, CANON + k] != 1.0:
        a, b = b, a
    ax, ay, az = rec[g, a], rec[g, a + 1], rec[g, a + 2]
    dx, dy, dz = rec[g, b] - ax, rec[g, b + 1] - ay, rec[g, b + 2] - az
    return ((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / (dx * dx + dy * dy + dz * dz)


@njit(**JIT)
def _geometry_border(border, nb, sphere, facet, wall, pos, rad, tedge, ev, estart, etri,
                     vstart, vtri, rec, frame, tmesh, geo):
    """Second pass of :func:`contact_geometry`: the entries ``border[:nb]`` (an edge or a
    vertex within reach) as :func:`mesh_contact` gives them — its kept tests
    (:func:`_edge_kept`, :func:`_vertex_kept`) written here on the records, the same
    operations."""
    for b in range(nb):
        q = border[b]
        i = sphere[q]
        f = facet[q]
        w = wall[f]
        px, py, pz = to_body(pos[i, 0], pos[i, 1], pos[i, 2], pos[w, 0], pos[w, 1], pos[w, 2],
                             frame, tmesh, f)
        r = rad[i]
        kind, cx, cy, cz, d2, k, at = record_feature(px, py, pz, rec, f, r)
        dist = math.sqrt(d2)
        e = tedge[f, k]
        keep = True
        if kind == EDGE:  # x outside every triangle across e, f the lowest of them
            keep = etri[estart[e]] == f
            for c in range(estart[e], estart[e + 1]):
                g = etri[c]
                for j in range(3):
                    if keep and tedge[g, j] == e and _rec_side(px, py, pz, rec, g, j) < \
                            rec[g, TOL + j]:
                        keep = False
        else:  # a vertex: over no adjacent face, behind it along every edge out of it
            v = ev[e, 0] if at == 1 else ev[e, 1]
            keep = vtri[vstart[v]] == f
            for c in range(vstart[v], vstart[v + 1]):
                g = vtri[c]
                if not keep:
                    break
                if (_rec_side(px, py, pz, rec, g, 0) < rec[g, TOL]
                        and _rec_side(px, py, pz, rec, g, 1) < rec[g, TOL + 1]
                        and _rec_side(px, py, pz, rec, g, 2) < rec[g, TOL + 2]):
                    keep = False
                for j in range(3):
                    ej = tedge[g, j]
                    if keep and (ev[ej, 0] == v or ev[ej, 1] == v):
                        u = _rec_edge_u(px, py, pz, rec, g, j)
                        if (u > EPS) if ev[ej, 0] == v else (u < 1.0 - EPS):
                            keep = False
        if not keep:
            geo[q, 0], geo[q, 1], geo[q, 2], geo[q, 3] = 0.0, 0.0, 1.0, -np.inf
        else:
            nx, ny, nz, delta = _touching(px, py, pz, cx, cy, cz, dist, r, rec[f, N0],
                                          rec[f, N0 + 1], rec[f, N0 + 2])
            geo[q, 0], geo[q, 1], geo[q, 2] = to_world(nx, ny, nz, frame, tmesh, f)
            geo[q, 3] = delta


def contact_geometry(sphere, facet, wall, pos, rad, mesh, home, geo, border) -> None:
    """:func:`mesh_contact` of every (sphere, triangle) entry q — sphere handle ``sphere[q]``,
    triangle ``facet[q]`` of the mesh whose wall handle is ``wall[facet[q]]`` (its point at
    ``pos[wall[f]]``) — into ``geo[q]`` (normal, overlap), bit for bit where they touch (an
    entry apart: a negative overlap, −inf or minus a lower bound of the gap): a first pass
    settles the entries still apart since the build (``home``, :func:`entry_homes`), the faces
    and the entries apart from the packed records, a second the edges and vertices within
    reach (``border``: scratch of one int per entry). ``mesh``: the bundle; a turning mesh's
    entries are computed in its frame, their normals turned back (:func:`to_body`)."""
    nb = _geometry_first(sphere, facet, wall, pos, rad, mesh[RECORDS], mesh[FRAME], mesh[11],
                         home, geo, border)
    if nb:
        _geometry_border(border, nb, sphere, facet, wall, pos, rad, mesh[3], mesh[6], mesh[7],
                         mesh[8], mesh[9], mesh[10], mesh[RECORDS], mesh[FRAME], mesh[11], geo)


# ------------------------------------------------------------------ grid (kernels)
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
    """Append to ``out`` (from ``n_out``) the triangles of mesh m within ``reach`` of p (its
    frame; the distance of :func:`_distance`, from the packed records), each once
    (``mark[f] == stamp`` once taken); returns the new count (out must hold every triangle of
    the mesh)."""
    gf, gi, cstart, ctri, rec = mesh[12], mesh[13], mesh[14], mesh[15], mesh[RECORDS]
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
    n_tri = mesh[1].shape[0]
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


# ------------------------------------------------------------------ building (numpy)
def _csr(keys: np.ndarray, n: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (start, values sorted by key then value) of ``values`` grouped by ``keys`` < n."""
    order = np.lexsort((values, keys))
    start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=start[1:])
    return start, values[order].astype(np.int64)


def rotation(axis, angle: float) -> np.ndarray:
    """The matrix (3, 3) of a turn by ``angle`` (rad, right-handed) about the unit ``axis``
    (Rodrigues: R = cos θ I + sin θ [a]× + (1 − cos θ) a aᵀ)."""
    a = np.asarray(axis, float)
    c, s = math.cos(angle), math.sin(angle)
    cross = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return c * np.eye(3) + s * cross + (1.0 - c) * np.outer(a, a)


def _motion(velocity, angular_velocity, axis, point) -> tuple:
    """A mesh's motion checked: (velocity, Ω, unit axis, point) as floats; MeshError names
    the bad one."""
    v = np.asarray(velocity, float).reshape(3)
    p = np.asarray(point, float).reshape(3)
    a = np.asarray(axis, float).reshape(3)
    om = float(angular_velocity)
    for name, x in (("velocity", v), ("angular_velocity", om), ("axis", a), ("point", p)):
        if not np.isfinite(x).all():
            raise MeshError(f"{name} {np.asarray(x).tolist()}: must be finite")
    norm = float(np.linalg.norm(a))
    if not norm > 0.0:
        raise MeshError(f"axis {a.tolist()}: must not be zero")
    return v, om, a / norm, p


class Mesh:
    """One triangle mesh in its own frame: corners (T, 3, 3), m, welded by exact coordinates.
    Its motion: ``velocity`` (m/s) and a turn at ``angular_velocity`` Ω (rad/s, right-handed)
    about ``axis`` through ``point`` (m, in its frame): a corner X is at p + v t + R(Ω t)
    (X − p) at time t (:meth:`surface`). Refuses (:class:`MeshError`) an empty mesh, NaN or
    inf coordinates, zero-area triangles, a zero axis."""

    def __init__(self, corners, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0,
                 axis=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0)):
        corners = np.asarray(corners, float)
        if corners.ndim != 3 or corners.shape[1:] != (3, 3) or corners.shape[0] == 0:
            raise MeshError(f"expected triangles (T, 3, 3) with T > 0, got shape "
                            f"{list(corners.shape)}")
        if not np.isfinite(corners).all():
            f = int(np.flatnonzero(~np.isfinite(corners).all(axis=(1, 2)))[0])
            raise MeshError(f"triangle {f} has a NaN or infinite coordinate "
                            f"({corners[f].tolist()})")
        cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        area2 = np.linalg.norm(cross, axis=1)
        side = np.max(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2), axis=1)
        bad = ~(area2 > 1e-12 * side * side)
        if bad.any():
            f = int(np.flatnonzero(bad)[0])
            raise MeshError(f"triangle {f} has zero area (corners {corners[f].tolist()}); "
                            f"{int(bad.sum())} such triangle(s)")
        self.velocity, self.angular_velocity, self.axis, self.point = _motion(
            velocity, angular_velocity, axis, point)
        self.verts, inverse = np.unique(corners.reshape(-1, 3), axis=0, return_inverse=True)
        self.tri = inverse.reshape(-1, 3).astype(np.int64)
        self.normal = cross / area2[:, None]
        t = self.tri.shape[0]
        a, b = self.tri, np.roll(self.tri, -1, axis=1)  # edge k: corner k to corner k + 1
        pairs = np.stack((np.minimum(a, b), np.maximum(a, b)), axis=2).reshape(-1, 2)
        self.edge_v, eid = np.unique(pairs, axis=0, return_inverse=True)
        self.tedge = eid.reshape(t, 3).astype(np.int64)
        d = self.verts[b] - self.verts[a]
        self.elen = np.linalg.norm(self.verts[self.edge_v[:, 1]] - self.verts[self.edge_v[:, 0]],
                                   axis=1)
        m = np.cross(d, self.normal[:, None, :])  # outward in-plane edge normals
        # (the corners are right-handed about the normal: d × n points out of the triangle)
        self.tm = m / np.linalg.norm(m, axis=2, keepdims=True)
        self.estart, self.etri = _csr(self.tedge.ravel(), len(self.edge_v),
                                      np.repeat(np.arange(t), 3))
        self.vstart, self.vtri = _csr(self.tri.ravel(), len(self.verts),
                                      np.repeat(np.arange(t), 3))
        self._grid()

    @classmethod
    def from_arrays(cls, vertices, triangles, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0,
                    axis=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0)) -> "Mesh":
        """A mesh from vertices (V, 3) and triangles (T, 3) of vertex indices; its motion as
        :class:`Mesh` takes it."""
        v = np.asarray(vertices, float)
        t = np.asarray(triangles)
        if v.ndim != 2 or v.shape[1] != 3:
            raise MeshError(f"vertices: expected shape (V, 3), got {list(v.shape)}")
        if t.ndim != 2 or t.shape[1] != 3 or not np.issubdtype(t.dtype, np.integer):
            raise MeshError(f"triangles: expected integers of shape (T, 3), got "
                            f"{list(t.shape)} {t.dtype}")
        outside = (t < 0) | (t >= v.shape[0])
        if outside.any():
            raise MeshError(f"triangles: vertex index {int(t[outside][0])} outside 0 … "
                            f"{v.shape[0] - 1}")
        return cls(v[t], velocity, angular_velocity, axis, point)

    def __len__(self) -> int:
        return self.tri.shape[0]

    def _grid(self) -> None:
        """The uniform grid over the triangles' boxes (module docstring)."""
        corners = self.verts[self.tri]
        self.bmin, self.bmax = corners.min(axis=1), corners.max(axis=1)
        lo, hi = self.bmin.min(axis=0), self.bmax.max(axis=0)
        extent = np.maximum(hi - lo, 0.0)
        h = float(np.median(np.max(self.bmax - self.bmin, axis=1)))
        h = max(h, float(extent.max()) * 1e-6, 1e-300)
        cap = 4 * len(self) + 64
        while True:
            dims = np.maximum(np.ceil(extent / h), 1).astype(np.int64)
            if int(np.prod(dims)) <= cap:
                break
            h *= 1.25
        self.grid_lo, self.grid_h, self.grid_dims = lo, h, dims
        self.cell_start, self.cell_tri = _bin(lo, h, dims, self.bmin, self.bmax)

    def moved(self, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0, axis=(0.0, 0.0, 1.0),
              point=(0.0, 0.0, 0.0)) -> "Mesh":
        """The same triangles with this motion (a shallow copy: the geometry is shared)."""
        out = copy.copy(self)
        out.velocity, out.angular_velocity, out.axis, out.point = _motion(
            velocity, angular_velocity, axis, point)
        return out

    @property
    def turning(self) -> bool:
        return self.angular_velocity != 0.0

    @property
    def framed(self) -> bool:
        """Does its frame differ from the world's by more than its translation (it turns, or
        its point is not its frame's origin)?"""
        return self.turning or bool(np.any(self.point != 0.0))

    def frame(self, time: float) -> np.ndarray:
        """The 12 numbers of its frame at ``time`` (s) that the kernels take
        (``pdyn.mesh.in_frame``): A = R(−Ω t) row-major, then p; a point x of the world is
        X = p + A (x − (p + v t)) in the mesh's frame."""
        return np.concatenate((rotation(self.axis, -self.angular_velocity * float(time))
                               .ravel(), self.point))

    def radius(self) -> float:
        """The largest distance (m) of a corner from its axis (through its point)."""
        d = self.verts - self.point
        return float(np.max(np.linalg.norm(d - np.outer(d @ self.axis, self.axis), axis=1)))

    def surface(self, time: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Vertices (V, 3) at ``time`` (s: turned by Ω t about its axis through its point,
        translated by velocity · time) and triangles (T, 3) of vertex indices — what a
        picture of the mesh draws."""
        shift = self.velocity * float(time)
        if not self.turning:
            return self.verts + shift, self.tri.copy()
        turn = rotation(self.axis, self.angular_velocity * float(time))
        return self.point + shift + (self.verts - self.point) @ turn.T, self.tri.copy()

    def gaps(self, pos: np.ndarray, time: float = 0.0) -> np.ndarray:
        """Distance (m) of each centre ``pos`` (N, 3) from the surface at ``time`` (numpy
        entry; for checks)."""
        bundle = pack([self.moved()])
        pos = np.asarray(pos, float) - self.velocity * float(time)
        if self.turning:
            pos = self.point + (pos - self.point) @ rotation(
                self.axis, -self.angular_velocity * float(time)).T
        return _gaps(np.ascontiguousarray(pos), bundle)


@njit(**JIT)
def _gaps(pos, mesh):
    """Distance of each point from the packed meshes' surfaces (grid queries growing their
    reach until a triangle is found)."""
    n_tri = mesh[1].shape[0]
    mark = np.full(n_tri, -1, np.int64)
    buf = np.empty(n_tri, np.int64)
    gf = mesh[12]
    verts, tri, tnorm, tedge, tm, elen, ev = mesh[0], mesh[1], mesh[2], mesh[3], mesh[4], \
        mesh[5], mesh[6]
    out = np.empty(pos.shape[0])
    stamp = 0
    for i in range(pos.shape[0]):
        best = np.inf
        for m in range(gf.shape[0]):
            reach = gf[m, 3]
            while True:
                got = query(pos[i, 0], pos[i, 1], pos[i, 2], reach, m, mesh, mark, stamp, buf,
                            0)
                stamp += 1
                if got > 0:
                    for q in range(got):
                        best = min(best, _distance(pos[i, 0], pos[i, 1], pos[i, 2], buf[q],
                                                   verts, tri, tnorm, tedge, tm, elen, ev,
                                                   np.inf))
                    break
                reach *= 2.0
                if reach > 1e300:
                    break
        out[i] = best
    return out


def pack(meshes, rows=()) -> tuple:
    """The bundle of ``meshes`` (module docstring), their triangles numbered in order, and
    ``rows`` their wall-table rows, then their frames at t = 0 (None when no mesh turns or
    has a point: :attr:`Mesh.framed`); no meshes: empty arrays of the same types."""
    f8, i8 = np.float64, np.int64
    v_off = t_off = e_off = c_off = 0
    parts: dict[str, list] = {k: [] for k in ("verts", "tri", "tnorm", "tedge", "tm", "elen",
                                                "ev", "estart", "etri", "vstart", "vtri",
                                                "tmesh", "gf", "gi", "cstart", "ctri")}
    for m, mesh in enumerate(meshes):
        parts["verts"].append(mesh.verts)
        parts["tri"].append(mesh.tri + v_off)
        parts["tnorm"].append(mesh.normal)
        parts["tedge"].append(mesh.tedge + e_off)
        parts["tm"].append(mesh.tm)
        parts["elen"].append(mesh.elen)
        parts["ev"].append(mesh.edge_v + v_off)
        parts["estart"].append(mesh.estart[:-1] + 3 * t_off)
        parts["etri"].append(mesh.etri + t_off)
        parts["vstart"].append(mesh.vstart[:-1] + 3 * t_off)
        parts["vtri"].append(mesh.vtri + t_off)
        parts["tmesh"].append(np.full(len(mesh), m, i8))
        parts["gf"].append(np.append(mesh.grid_lo, mesh.grid_h)[None])
        parts["gi"].append(np.append(mesh.grid_dims, c_off)[None])
        parts["cstart"].append(mesh.cell_start[:-1] + sum(len(c) for c in parts["ctri"]))
        parts["ctri"].append(mesh.cell_tri + t_off)
        v_off += len(mesh.verts)
        t_off += len(mesh)
        e_off += len(mesh.edge_v)
        c_off += len(mesh.cell_start) - 1
    n_ctri = sum(len(c) for c in parts["ctri"])
    shapes = {"verts": ((0, 3), f8), "tri": ((0, 3), i8), "tnorm": ((0, 3), f8),
              "tedge": ((0, 3), i8), "tm": ((0, 3, 3), f8), "elen": ((0,), f8),
              "ev": ((0, 2), i8), "estart": ((0,), i8), "etri": ((0,), i8),
              "vstart": ((0,), i8), "vtri": ((0,), i8), "tmesh": ((0,), i8),
              "gf": ((0, 4), f8), "gi": ((0, 4), i8), "cstart": ((0,), i8), "ctri": ((0,), i8)}
    out = []
    for key, (shape, dtype) in shapes.items():
        arrays = parts[key] or [np.zeros(shape, dtype)]
        a = np.ascontiguousarray(np.concatenate(arrays).astype(dtype))
        if key in ("estart", "vstart"):
            a = np.append(a, 3 * t_off)
        elif key == "cstart":
            a = np.append(a, n_ctri)
        out.append(a)
    out.append(records(*out[:7]))
    out.append(np.asarray(rows, i8).reshape(-1))
    out.append(frames(meshes, 0.0) if any(m.framed for m in meshes) else None)
    return tuple(out)


def frames(meshes, time: float, out: np.ndarray | None = None) -> np.ndarray:
    """Each mesh's frame at ``time`` (s) (M, 12; :meth:`Mesh.frame`), into ``out`` when given
    (the bundle's, updated in place at each step): computed from the time alone, so every
    rank and a restart get the same bits."""
    out = np.empty((len(meshes), 12)) if out is None else out
    for m, mesh in enumerate(meshes):
        out[m] = mesh.frame(time)
    return out


def records(verts, tri, tnorm, tedge, tm, elen, ev) -> np.ndarray:
    """The packed triangle records (T, :data:`REC`) of a bundle's first seven arrays
    (:data:`N0` … :data:`CANON`): copies of their numbers, the tolerances −ε L_k computed as
    :func:`closest_feature` computes them."""
    rec = np.empty((tri.shape[0], REC))
    rec[:, N0:N0 + 3] = tnorm
    for k, (a, m) in enumerate(((A0, M0), (A1, M1), (A2, M2))):
        rec[:, a:a + 3] = verts[tri[:, k]]
        rec[:, m:m + 3] = tm[:, k]
        rec[:, TOL + k] = -EPS * elen[tedge[:, k]]
        rec[:, CANON + k] = ev[tedge[:, k], 0] == tri[:, k]
    return rec


def grid_surface(n: int, size: float, lift=None, jitter: float = 0.0,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of a height field over [−size, size]² (m): n × n
    squares, each cut along the same diagonal (an interior vertex is shared by 6 triangles),
    z = ``lift(x, y)`` (default 0); ``jitter`` moves interior vertices in-plane by up to that
    fraction of a square (an irregular triangulation). For tests, benchmarks and scenes."""
    s = np.linspace(-size, size, n + 1)
    x, y = np.meshgrid(s, s, indexing="xy")
    if jitter:
        rng = np.random.default_rng(seed)
        inner = np.zeros_like(x, bool)
        inner[1:-1, 1:-1] = True
        step = 2.0 * size / n
        x = x + inner * rng.uniform(-jitter, jitter, x.shape) * step
        y = y + inner * rng.uniform(-jitter, jitter, y.shape) * step
    z = np.zeros_like(x) if lift is None else np.broadcast_to(lift(x, y), x.shape)
    v = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    a = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    b, c, d = a + 1, a + n + 1, a + n + 2
    tri = np.stack((np.column_stack((a, b, d)), np.column_stack((a, d, c))), axis=1)
    return v, tri.reshape(-1, 3).astype(np.int64)


def tube_surface(n: int, radius: float, length: float,
                 along: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of the side of a cylinder about the y axis through
    the origin (m): ``n`` flat faces around (a face centred at the bottom, −z, its corners at
    angles (k + ½) 2π/n from −z), ``along`` rings of them over y ∈ [−length/2, length/2], each
    face two triangles. A drum of triangles, for tests, benchmarks and scenes."""
    phi = (np.arange(n) + 0.5) * 2.0 * np.pi / n
    y = np.linspace(-0.5 * length, 0.5 * length, along + 1)
    ring = np.column_stack((radius * np.sin(phi), -radius * np.cos(phi)))
    v = np.column_stack((np.tile(ring[:, 0], along + 1), np.repeat(y, n),
                         np.tile(ring[:, 1], along + 1)))
    k = np.arange(n)
    a = (np.arange(along)[:, None] * n + k[None, :]).ravel()
    b = (np.arange(along)[:, None] * n + ((k + 1) % n)[None, :]).ravel()
    tri = np.stack((np.column_stack((a, b, b + n)), np.column_stack((a, b + n, a + n))), axis=1)
    return v, tri.reshape(-1, 3).astype(np.int64)


__all__ = ["Mesh", "MeshError", "frames", "tube_surface", "rotation", "in_frame", "to_body",
           "to_world", "FACE", "EDGE", "VERTEX", "NONE", "grid_surface", "mesh_contact",
           "closest_feature", "candidates", "pack", "EPS", "contact_geometry", "entry_homes",
           "record_feature"]
