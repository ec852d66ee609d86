"""The sphere–triangle geometry of mesh walls, written once: a triangle's packed record, the
closest feature of a triangle to a sphere centre, which contact of a touching feature is kept,
and the pass that gives every list entry its normal and overlap at each step.

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

**Packed records.** Each inlined call that also calls out of line makes numba count
references to every array it takes, at each call (a tuple of arrays: each time one is taken
from it). The kernels therefore read one row of the packed records (:data:`REC` numbers per
triangle, :func:`triangle_records`) and call helpers that take scalars only; the edges' and
vertices' adjacency (for the kept tests) comes from the bundle (``pdyn.mesh.bundle``).
``tests/dynamics/mesh_oracle.py`` computes the same features from the mesh's arrays, the
definition above written directly; the tests hold both to the same bits.

Units: m (after the ``scale`` applied by the caller).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT, JIT_INLINE
from .frame import to_body, to_world

#: relative width of the border of a feature (module docstring)
EPS = 1e-12
FACE, EDGE, VERTEX, NONE = 0, 1, 2, -1

#: columns of a packed triangle record (:func:`triangle_records`): the unit normal, each
#: corner k with the outward normal m_k of edge k (corner k to k + 1), the border tolerances
#: −ε L_k, and 1.0 where edge k's canonical direction starts at corner k (0.0: at k + 1)
N0, A0, M0, A1, M1, A2, M2, TOL, CANON = 0, 3, 6, 9, 12, 15, 18, 21, 24
REC = 27


def triangle_records(mesh) -> np.ndarray:
    """The packed records (T, :data:`REC`; columns :data:`N0` … :data:`CANON`) of the
    triangles of ``mesh`` (a ``pdyn.mesh.Mesh``): copies of its numbers, the tolerances
    −ε L_k and the canonical directions of its edges (lower welded vertex first)."""
    verts, tri, tedge, ev = mesh.verts, mesh.tri, mesh.tedge, mesh.edge_v
    rec = np.empty((tri.shape[0], REC))
    rec[:, N0:N0 + 3] = mesh.normal
    for k, (a, m) in enumerate(((A0, M0), (A1, M1), (A2, M2))):
        rec[:, a:a + 3] = verts[tri[:, k]]
        rec[:, m:m + 3] = mesh.tm[:, k]
        rec[:, TOL + k] = -EPS * mesh.elen[tedge[:, k]]
        rec[:, CANON + k] = ev[tedge[:, k], 0] == tri[:, k]
    return rec


@njit(inline="always", **JIT)
def _segment(px, py, pz, ax, ay, az, bx, by, bz):
    """Closest point of the segment a → b to p and its squared distance: (d², cx, cy, cz,
    end: 0 inside the segment, 1 the point a, 2 the point b): the parameter u along a → b,
    the point a when u ≤ ε, b when u ≥ 1 − ε (c exactly that corner)."""
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


@njit(**JIT_INLINE)
def record_feature(px, py, pz, rec, f, cut):
    """The closest point c of triangle f to p (module docstring) from its packed record
    ``rec[f]``: (feature, cx, cy, cz, d², k, end) — ``FACE``, ``EDGE``, ``VERTEX``, or, when p
    is surely farther than ``cut`` (m), ``NONE`` with d² a lower bound (h² plus the largest
    in-plane distance outside an edge, squared); for an edge or a vertex the triangle's edge
    k it lies on and which point of that edge (``end``: 1 its canonical start, 2 its end; 0
    neither)."""
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
    # the border: the nearest point of the edges p is outside of (or near)
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
    """The normal and overlap of a kept contact (module docstring): closest point c at
    ``dist`` from p, the triangle's normal n (the centre on the surface: −n)."""
    if dist > 0.0:
        return (cx - px) / dist, (cy - py) / dist, (cz - pz) / dist, r - dist
    return -nx, -ny, -nz, r



#: relative margin of the test "still apart since the build" (:func:`_geometry_first`), of
#: the coordinates' and distance's magnitude: far above the rounding of the computed distances
MARGIN = 1e-9


@njit(inline="always", **JIT)
def _entry_centre(q, sphere, facet, wall, pos, frame, tmesh):
    """Of mesh entry q (as :func:`contact_geometry` takes them): its sphere i, its triangle f
    and the centre of i in the frame of f's mesh, whose point is ``pos[wall[f]]``
    (:func:`to_body`): (i, f, px, py, pz)."""
    i = sphere[q]
    f = facet[q]
    w = wall[f]
    px, py, pz = to_body(pos[i, 0], pos[i, 1], pos[i, 2], pos[w, 0], pos[w, 1], pos[w, 2],
                         frame, tmesh, f)
    return i, f, px, py, pz


@njit(**JIT)
def entry_homes(sphere, facet, wall, pos, rec, frame, tmesh, home):
    """At a build of the lists: each mesh entry's centre in its mesh's frame and its distance
    from the triangle (m) into ``home`` (M, 4) (entries as :func:`contact_geometry`'s;
    ``frame``, ``tmesh``: the bundle's, :func:`to_body`)."""
    for q in range(sphere.shape[0]):
        _, f, px, py, pz = _entry_centre(q, sphere, facet, wall, pos, frame, tmesh)
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
        i, f, px, py, pz = _entry_centre(q, sphere, facet, wall, pos, frame, tmesh)
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
    """m_k · (p − a_k): the in-plane distance of p outside edge k of triangle g (< 0
    inside)."""
    a = A0 + 6 * k
    m = M0 + 6 * k
    return (rec[g, m] * (px - rec[g, a]) + rec[g, m + 1] * (py - rec[g, a + 1])
            + rec[g, m + 2] * (pz - rec[g, a + 2]))


@njit(inline="always", **JIT)
def _rec_edge_u(px, py, pz, rec, g, k):
    """The parameter u of p along edge k of triangle g in its canonical direction (as
    :func:`_segment` computes it)."""
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
    vertex within reach): the kept tests of the module docstring on the records, then the
    normal and overlap of a kept contact."""
    for b in range(nb):
        q = border[b]
        i, f, px, py, pz = _entry_centre(q, sphere, facet, wall, pos, frame, tmesh)
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
    """The contact (module docstring) of every (sphere, triangle) entry q — sphere handle
    ``sphere[q]``, triangle ``facet[q]`` of the mesh whose wall handle is ``wall[facet[q]]``
    (its point at ``pos[wall[f]]``) — into ``geo[q]`` (normal, overlap), bit for bit where
    they touch (an entry apart: a negative overlap, −inf or minus a lower bound of the gap):
    a first pass
    settles the entries still apart since the build (``home``, :func:`entry_homes`), the faces
    and the entries apart from the packed records, a second the edges and vertices within
    reach (``border``: scratch of one int per entry). ``mesh``: the bundle; a turning mesh's
    entries are computed in its frame, their normals turned back (:func:`to_body`)."""
    nb = _geometry_first(sphere, facet, wall, pos, rad, mesh.records, mesh.frames, mesh.tmesh,
                         home, geo, border)
    if nb:
        _geometry_border(border, nb, sphere, facet, wall, pos, rad, mesh.tedge, mesh.ev,
                         mesh.estart, mesh.etri, mesh.vstart, mesh.vtri, mesh.records,
                         mesh.frames, mesh.tmesh, geo)
