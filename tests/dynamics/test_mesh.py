"""Triangle-mesh walls (issue 33, ``pdyn.mesh``, ``pdyn.stl``): the STL readers, face / edge /
vertex contacts against their closed forms and against the equivalent planes (a floor of
triangles = a plane to rounding, over seams and 6-triangle vertices; sliding across seams
with one contact and no force jump; rolling down a 30° mesh incline at 5/7 g sin θ; resting in
a V of two mesh faces; one edge contact on a convex ridge), the grid broad phase against a
brute-force loop, and the config's refusals."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, config_from_dict, load_config
from pdyn.mesh import (EDGE, FACE, NONE, VERTEX, Mesh, MeshError, candidates, contact_geometry,
                       entry_homes, grid_surface, pack, record_feature)
from pdyn.stl import StlError, read_stl, write_stl

from .mesh_oracle import arrays, closest_feature, mesh_contact
from .test_walls import G, K, MASS, R, one_sphere, state


def contacts_of(mesh, p, r):
    """The kept contacts (triangle, normal, overlap) of a sphere against every triangle (the
    oracle's)."""
    out = []
    for f in range(len(mesh)):
        nx, ny, nz, delta = mesh_contact(p[0], p[1], p[2], r, 0.0, 0.0, 0.0, f, *arrays(mesh))
        if delta >= 0.0:
            out.append((f, np.array([nx, ny, nz]), delta))
    return out


def mesh_wall(v, t, **kw):
    return {"type": "mesh", "vertices": np.asarray(v).tolist(),
            "triangles": np.asarray(t).tolist(), **kw}


# ------------------------------------------------------------------ STL
@pytest.mark.parametrize("binary", [True, False])
def test_stl_round_trip(tmp_path, binary):
    v, t = grid_surface(3, 1.5, lift=lambda x, y: 0.25 * x - 0.5 * y)
    corners = v[t].astype(np.float32).astype(float)  # binary STL holds float32
    write_stl(tmp_path / "m.stl", corners, binary=binary)
    got = read_stl(tmp_path / "m.stl")
    assert got.shape == (len(t), 3, 3) and np.array_equal(got, corners)
    mesh = Mesh(got)
    assert len(mesh.verts) == len(v) and len(mesh) == len(t)  # welded back


def test_stl_binary_whose_header_starts_with_solid_is_binary(tmp_path):
    corners = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], float)
    write_stl(tmp_path / "m.stl", corners, name="solid trap")
    assert np.array_equal(read_stl(tmp_path / "m.stl"), corners)


@pytest.mark.parametrize("content,why", [
    (b"", "not an STL file"),
    (b"hello world", "not an STL file"),
    (b"solid x\nendsolid x\n", "no triangles"),
    (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\n",
     "line 6: expected 'vertex x y z'"),
    (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 zero 0\n",
     "line 5: a vertex coordinate is not a number"),
    (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n", "ends inside a facet"),
    (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
     b"endloop\nendfacet\n", "without 'endsolid'"),
    (b"solid x\nbanana\n", "line 2: expected 'facet' or 'endsolid'"),
])
def test_stl_broken_files_are_refused(tmp_path, content, why):
    (tmp_path / "m.stl").write_bytes(content)
    with pytest.raises(StlError, match=why):
        read_stl(tmp_path / "m.stl")


def test_stl_truncated_binary_is_refused(tmp_path):
    write_stl(tmp_path / "m.stl", np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]] * 3, float))
    raw = (tmp_path / "m.stl").read_bytes()
    (tmp_path / "m.stl").write_bytes(raw[:-7])
    with pytest.raises(StlError, match="header counts 3 triangles.*truncated"):
        read_stl(tmp_path / "m.stl")
    (tmp_path / "m.stl").write_bytes(raw[:84])
    with pytest.raises(StlError, match="header counts 3"):
        read_stl(tmp_path / "m.stl")
    with pytest.raises(StlError, match="cannot read"):
        read_stl(tmp_path / "none.stl")


def test_bad_geometry_is_refused():
    good = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], float)
    with pytest.raises(MeshError, match="triangle 1 has a NaN"):
        Mesh(np.concatenate((good, [[[0, 0, 0], [1, math.nan, 0], [0, 1, 0]]])))
    with pytest.raises(MeshError, match="triangle 0 has zero area"):
        Mesh([[[0, 0, 0], [1, 1, 1], [2, 2, 2]]])
    with pytest.raises(MeshError, match="T > 0"):
        Mesh(np.zeros((0, 3, 3)))
    with pytest.raises(MeshError, match="vertex index 3 outside"):
        Mesh.from_arrays([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 3]])


# ------------------------------------------------------------------ contacts (geometry)
@pytest.mark.parametrize("jitter", [0.0, 0.3])
def test_floor_of_triangles_gives_one_contact_equal_to_the_plane(jitter):
    """Random centres over a floor (regular, and jittered: irregular fans), also exactly over
    vertices (6 triangles) and edge midpoints: exactly one kept contact, its overlap the
    plane's and its normal −z to rounding."""
    v, t = grid_surface(6, 1.0, jitter=jitter, seed=3)
    mesh = Mesh.from_arrays(v, t)
    rng = np.random.default_rng(7)
    r = 0.3
    pts = np.column_stack((rng.uniform(-0.9, 0.9, (300, 2)), rng.uniform(0.05, 0.29, 300)))
    inner = v[(np.abs(v[:, 0]) < 0.99) & (np.abs(v[:, 1]) < 0.99)]
    on_v = np.column_stack((inner[:, :2], np.full(len(inner), 0.2)))
    mids = 0.5 * (v[t[:, 0]] + v[t[:, 1]])
    on_e = np.column_stack((mids[:, :2], np.full(len(mids), 0.25)))
    for p in np.concatenate((pts, on_v, on_e)):
        got = contacts_of(mesh, p, r)
        assert len(got) == 1, (p, got)
        f, n, delta = got[0]
        assert delta == pytest.approx(r - p[2], abs=1e-15)
        assert np.abs(n - [0.0, 0.0, -1.0]).max() < 1e-12


def test_v_gives_two_face_contacts_and_a_ridge_one_edge_contact():
    """Two faces meeting along the y axis: as a V (concave) a sphere inside gets one face
    contact per face; as a ridge (convex) a sphere above gets one edge contact, normal from
    its centre to the ridge; beside the ridge, the face alone."""
    a = math.radians(30.0)
    for sign in (1.0, -1.0):  # V, ridge
        v, t = grid_surface(4, 1.0, lift=lambda x, y: sign * np.abs(x) * math.tan(a))
        mesh = Mesh.from_arrays(v, t)
        if sign > 0:
            got = contacts_of(mesh, [0.0, 0.1, 0.25], 0.3)
            assert sorted(int(np.sign(mesh.normal[f, 0])) for f, _, _ in got) == [-1, 1]
            assert all(delta == pytest.approx(0.3 - 0.25 * math.cos(a)) for _, _, delta in got)
        else:
            p = np.array([0.05, 0.1, 0.2])
            got = contacts_of(mesh, p, 0.3)
            assert len(got) == 1
            f, n, delta = got[0]
            kind, ident = closest_feature(*p, f, *arrays(mesh)[:7], np.inf)[:2]
            assert kind == EDGE
            assert np.allclose(n, -p * [1, 0, 1] / np.hypot(p[0], p[2]), atol=1e-12)
            assert delta == pytest.approx(0.3 - np.hypot(p[0], p[2]))
            q = np.array([0.3, 0.1, 0.0])
            got = contacts_of(mesh, q, 0.3)
            assert len(got) == 1
            assert closest_feature(*q, got[0][0], *arrays(mesh)[:7], np.inf)[0] == FACE


def test_convex_corner_gives_one_vertex_contact():
    """The apex of a pyramid of four faces: a sphere right above it touches the vertex once."""
    v = np.array([[0, 0, 1], [1, 1, 0], [-1, 1, 0], [-1, -1, 0], [1, -1, 0]], float)
    t = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1]])
    mesh = Mesh.from_arrays(v, t)
    got = contacts_of(mesh, [0.0, 0.0, 1.2], 0.3)
    assert len(got) == 1
    assert closest_feature(0.0, 0.0, 1.2, got[0][0], *arrays(mesh)[:7], np.inf)[0] == VERTEX
    assert np.allclose(got[0][1], [0, 0, -1]) and got[0][2] == pytest.approx(0.1)


def bits(*values):
    return np.asarray(values, float).view(np.int64).tolist()


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
def test_packed_records_give_the_closest_feature_and_the_contact_bit_for_bit():
    """Centres near bumpy, jittered and random-soup meshes (over faces, exactly over vertices
    and edge midpoints, beside borders, near and far, the mesh translated): the packed records'
    feature (``record_feature``) is the oracle's (``mesh_oracle.closest_feature``, on the mesh's
    arrays) bit for bit, and ``contact_geometry``
    (its two passes; the lists built with the centres and the mesh elsewhere, so that some
    entries are found still apart since the build and some not; then once more, from where
    the first found entries apart) gives ``mesh_contact``'s normal and overlap bit for bit
    wherever either touches, and apart where it is."""
    rng = np.random.default_rng(5)
    v, t = grid_surface(7, 1.0, jitter=0.3, seed=2,
                        lift=lambda x, y: 0.3 * np.sin(3 * x) * np.cos(2 * y) + 0.2 * np.abs(x))
    soup = rng.uniform(-1.0, 1.0, (40, 3, 3))
    pyramid = np.array([[0, 0, 1], [1, 1, 0], [-1, 1, 0], [-1, -1, 0], [1, -1, 0]], float)
    for mesh in (Mesh.from_arrays(v, t), Mesh(soup),
                 Mesh.from_arrays(pyramid, [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1]])):
        corners = mesh.verts[mesh.tri]
        special = np.concatenate((mesh.verts, 0.5 * (corners[:, 0] + corners[:, 1]),
                                  corners.mean(axis=1)))
        pts = np.concatenate((rng.uniform(-1.2, 1.2, (400, 3)),
                              special + rng.normal(0.0, 0.05, special.shape) * [0, 0, 1],
                              special + rng.normal(0.0, 1e-13, special.shape)))
        origin = np.array([0.25, -0.5, 0.125])
        pts = pts + origin
        b, a = pack([mesh], [0]), arrays(mesh)
        n, n_tri = len(pts), len(mesh)
        sphere = np.repeat(np.arange(n), n_tri)
        facet = np.tile(np.arange(n_tri), n)
        pos = np.concatenate((pts, origin[None]))
        rad = np.concatenate((rng.uniform(0.05, 0.6, n), [np.inf]))
        geo, home = np.empty((n * n_tri, 4)), np.empty((n * n_tri, 4))
        wall = np.full(n_tri, n, np.int32)
        built = pos + rng.normal(0.0, 0.1, pos.shape)  # where the lists were built
        entry_homes(sphere, facet, wall, built, b.records, None, b.tmesh, home)
        want = np.array([mesh_contact(*pos[i], rad[i], *origin, f, *a)
                         for i, f in zip(sphere, facet)])
        skipped = []
        for _ in range(2):  # again: the homes moved to where the first found entries apart
            contact_geometry(sphere, facet, wall, pos, rad, b, home, geo,
                             np.empty(n * n_tri, np.int64))
            touch = (want[:, 3] >= 0.0) | (geo[:, 3] >= 0.0)
            assert bits(*geo[touch].ravel()) == bits(*want[touch].ravel())
            assert (geo[~touch, 3] < 0.0).all()
            skipped.append(int(np.sum((geo[:, 3] == -np.inf) & (want[:, 3] > -np.inf))))
        kinds = set()
        for q in range(n * n_tri):
            i, f = sphere[q], facet[q]
            p = pos[i] - origin
            for cut in (np.inf, rad[i]):
                kind, ident, cx, cy, cz, d2 = closest_feature(*p, f, *a[:7], cut)
                got = record_feature(*p, b.records, f, cut)
                assert got[0] == kind and bits(*got[1:5]) == bits(cx, cy, cz, d2), (i, f, cut)
                e = b.tedge[f, got[5]]  # the edge (and its end) it names: the feature's id
                if kind == EDGE:
                    assert e == ident
                elif kind == VERTEX:
                    assert b.ev[e, got[6] - 1] == ident
                kinds.add(kind)
        assert kinds == {FACE, EDGE, VERTEX, NONE}
        assert 0 < skipped[0] < skipped[1]


# ------------------------------------------------------------------ contacts (dynamics)
@pytest.mark.parametrize("where", ["face", "seam", "vertex"])
def test_sphere_resting_on_a_mesh_floor_is_the_plane_result(where):
    """A sphere dropped onto a floor of triangles — over a face, over a seam, over a vertex of
    6 triangles — follows the plane's trajectory to rounding."""
    v, t = grid_surface(4, 0.5)
    xy = {"face": [0.03, 0.21], "seam": [0.125, 0.125], "vertex": [0.25, 0.0]}[where]
    start = [*xy, 1.2 * R]
    a = one_sphere(start, [mesh_wall(v, t)])
    b = one_sphere(start, [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}])
    for _ in range(10):
        a.run(200)
        b.run(200)
        assert np.allclose(state(a, "pos"), state(b, "pos"), rtol=0, atol=1e-15)
        assert np.allclose(state(a, "force"), state(b, "force"), rtol=1e-12, atol=1e-15)
    assert state(a, "pos")[2] == pytest.approx(R - MASS * G / K, rel=1e-3)  # at rest
    assert len(a.wall_contacts()["force"]) == 1


@pytest.mark.parametrize("friction", [0.0, 0.3])
def test_sliding_across_seams_one_contact_no_force_jump(friction):
    """A sphere pushed across a floor of 128 triangles crosses seams, vertices and diagonals:
    at every step one contact whose normal force is the plane's (to rounding)."""
    v, t = grid_surface(8, 0.5)
    start = [-0.2, -0.13, R - MASS * G / K]
    vel = (1.0, 0.7, 0.0)
    a = one_sphere(start, [mesh_wall(v, t)], vel=vel, friction=friction)
    b = one_sphere(start, [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}],
                   vel=vel, friction=friction)
    worst, seen = 0.0, set()
    for _ in range(int(0.3 / a.dt) // 10):
        a.run(10)
        b.run(10)
        ca, cb = a.wall_contacts(), b.wall_contacts()
        assert len(ca["force"]) == 1 == len(cb["force"])
        worst = max(worst, abs(ca["force"][0] - cb["force"][0]) / (MASS * G))
        p = state(a, "pos")
        seen.add((int(np.floor(p[0] / 0.125)), int(np.floor(p[1] / 0.125))))
    assert len(seen) >= 4  # crossed cells (and their seams)
    assert worst < 1e-9


def test_sphere_rolls_down_a_30_degree_mesh_incline():
    """The plane test of tests/dynamics/test_walls.py on an incline of 800 triangles (rolling
    8 cm across their seams, 2.5 cm apart): a = 5/7 g sin θ to 0.5 %."""
    th = math.radians(30.0)
    n = np.array([math.sin(th), 0.0, math.cos(th)])
    down = np.array([math.cos(th), 0.0, -math.sin(th)])
    v, t = grid_surface(40, 0.5)
    rot = np.array([[math.cos(th), 0.0, math.sin(th)], [0.0, 1.0, 0.0],
                    [-math.sin(th), 0.0, math.cos(th)]])  # z → n
    v = v @ rot.T
    start = (R - MASS * G * math.cos(th) / K) * n + 0.013 * np.array([0, 1, 0]) - 0.3 * down
    sim = one_sphere(start, [mesh_wall(v, t)], friction=0.5)
    sim.run(4000)
    tt = sim.time
    vel = state(sim, "vel") @ down
    s = (state(sim, "pos") - start) @ down
    a = 5.0 / 7.0 * G * math.sin(th)
    assert s > 0.08  # several seams crossed
    assert vel / (a * tt) == pytest.approx(1.0, abs=5e-3)
    assert s / (0.5 * a * tt * tt) == pytest.approx(1.0, abs=5e-3)


def test_sphere_resting_in_a_mesh_v_carries_its_weight_like_two_planes():
    """Faces at α = 30° and β = 45° (each of several triangles): N₁ = m g sin β / sin(α + β),
    N₂ = m g sin α / sin(α + β), to 1e-9, as the two-plane V of tests/dynamics/test_walls."""
    a, b = math.radians(30.0), math.radians(45.0)
    v, t = grid_surface(4, 0.2, lift=lambda x, y: np.where(x < 0, -x * math.tan(a),
                                                           x * math.tan(b)))
    n1 = np.array([math.sin(a), 0.0, math.cos(a)])
    n2 = np.array([-math.sin(b), 0.0, math.cos(b)])
    c = np.linalg.solve(np.array([[n1[0], n1[2]], [n2[0], n2[2]]]), [R, R])
    sim = one_sphere([c[0], 0.013, c[1]], [mesh_wall(v, t)], restitution=0.3)
    for _ in range(40):
        sim.run(1000)
        if np.abs(state(sim, "vel")).max() < 1e-13:
            break
    got = sim.wall_contacts()
    assert len(got["force"]) == 2
    order = np.argsort(got["normal_force"][:, 0])  # the left face pushes +x
    weight = MASS * G
    assert got["force"][order[::-1]] / weight == pytest.approx(
        [math.sin(b) / math.sin(a + b), math.sin(a) / math.sin(a + b)], abs=1e-9)


def test_translating_mesh_piston_pushes_a_sphere():
    """A floor of triangles rising at 0.1 m/s carries a sphere resting on it (the mesh's
    point is v t from the step count; the lists are rebuilt as it moves)."""
    v, t = grid_surface(2, 0.5)
    sim = one_sphere([0.1, 0.1, R - MASS * G / K], [mesh_wall(v, t, velocity=[0, 0, 0.1])])
    sim.run(int(0.2 / sim.dt))
    assert state(sim, "pos")[2] - 0.1 * sim.time == pytest.approx(R - MASS * G / K, abs=2e-4)
    verts, tris = sim.wallset.meshes[0].surface(sim.time)
    assert np.allclose(verts[:, 2], 0.1 * sim.time) and tris.shape == (8, 3)
    assert sim.rebuilds > 2


def test_mesh_out_of_reach_at_a_build_beside_another_wall():
    """A sphere falling onto a mesh floor from beyond the lists' reach, beside a wall plane
    within it: the lists give every entry its triangle (−1 for the plane) even when no
    triangle is listed (the kernels read it for each wall entry), and the sphere lands as on
    a plane floor."""
    v, t = grid_surface(4, 0.5)
    side = {"type": "plane", "point": [-R - 1e-4, 0, 0], "normal": [1, 0, 0]}
    start = [0.0, 0.21, 0.03]
    a = one_sphere(start, [side, mesh_wall(v, t)], friction=0.3)
    b = one_sphere(start, [side, {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}],
                   friction=0.3)
    a.run(1)
    b.run(1)
    assert a.neighbours.entries() == 1 == len(a.neighbours.facet) and a.neighbours.facet[0] == -1
    for _ in range(20):
        a.run(500)
        b.run(500)
        assert len(a.neighbours.facet) == a.neighbours.entries()
        assert np.allclose(state(a, "pos"), state(b, "pos"), rtol=0, atol=1e-15)
    assert state(a, "pos")[2] == pytest.approx(R - MASS * G / K, rel=1e-3)  # at rest


# ------------------------------------------------------------------ broad phase
def test_grid_candidates_are_exactly_the_triangles_within_reach():
    """Random meshes (tiny and huge triangles, negative coordinates) and spheres of radii
    1:100: the grid's candidates equal a brute-force loop's triangles within reach."""
    rng = np.random.default_rng(11)
    for trial in range(4):
        n = 300
        size = np.exp(rng.uniform(np.log(1e-3), np.log(3.0), n))[:, None, None]
        centre = rng.uniform(-5.0, 2.0, (n, 1, 3))
        corners = centre + size * rng.normal(size=(n, 3, 3))
        mesh = Mesh(corners)
        b = pack([mesh], [0])
        m = 400
        pos = rng.uniform(-6.0, 3.0, (m, 3))
        rad = np.exp(rng.uniform(np.log(0.01), np.log(1.0), m))
        extra = np.array([rng.uniform(0.0, 0.2)])
        origin = np.array([[0.3, -0.2, 0.1]]) * trial
        start, got = candidates(np.arange(m), pos, rad, extra, b, origin, None)
        for i in range(m):
            p = pos[i] - origin[0]
            want = [f for f in range(n)
                    if math.sqrt(closest_feature(*p, f, *arrays(mesh)[:7], np.inf)[5])
                    <= rad[i] + extra[0]]
            assert got[start[i]:start[i + 1]].tolist() == want


# ------------------------------------------------------------------ config
def test_mesh_from_toml_with_a_relative_stl_and_its_refusals(tmp_path):
    v, t = grid_surface(2, 500.0)  # mm
    (tmp_path / "geo").mkdir()
    write_stl(tmp_path / "geo" / "floor.stl", v[t], binary=False)
    (tmp_path / "run.toml").write_text(
        'scene = "drop"\n[[walls]]\ntype = "mesh"\nfile = "geo/floor.stl"\nscale = 0.001\n'
        'velocity = [0.0, 0.0, 0.5]\n')
    cfg = load_config(tmp_path / "run.toml")
    spec = cfg.walls[0].spec()
    assert spec["mesh"].verts[:, 0].max() == pytest.approx(0.5)
    assert tuple(spec["mesh"].velocity) == (0.0, 0.0, 0.5)
    (tmp_path / "bad.stl").write_bytes(b"solid x\nfacet\nvertex 0 0 0\n")
    (tmp_path / "flat.stl").write_text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n"
                                       "vertex 1 0 0\nvertex 2 0 0\nendloop\nendfacet\n"
                                       "endsolid x\n")
    good = {"type": "mesh", "file": str(tmp_path / "geo" / "floor.stl")}
    bad = [({**good, "file": str(tmp_path / "none.stl")}, "walls[0].file = ", "cannot read"),
           ({**good, "file": str(tmp_path / "bad.stl")}, "walls[0].file = ", "line 3"),
           ({**good, "file": str(tmp_path / "flat.stl")}, "walls[0].file = ", "zero area"),
           ({**good, "scale": 0.0}, "walls[0].scale = 0.0: must be > 0", ""),
           ({**good, "scale": -1}, "walls[0].scale = -1: must be > 0", ""),
           ({**good, "colour": 1}, "walls[0].colour = 1: unknown key", ""),
           ({**good, "normal": [0, 0, 1]}, "walls[0].normal = [0, 0, 1]: not a field of a "
                                           "mesh", ""),
           ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "file": "x.stl"},
            "walls[0].file = 'x.stl': not a field of a plane", ""),
           ({"type": "mesh"}, "walls[0].file: a mesh needs a file", ""),
           ({**good, "vertices": [[0, 0, 0]]}, "walls[0].file: a mesh needs a file", ""),
           ({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, math.nan, 0]],
             "triangles": [[0, 1, 2]]}, "walls[0].vertices[2] = nan: must be finite", ""),
           ({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
             "triangles": [[0, 1, 1]]}, "walls[0].triangles = ", "zero area"),
           ({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
             "triangles": [[0, 1, 2.5]]}, "walls[0].triangles = ", "integers"),
           ({"type": "mesh", "vertices": [[0, 0, 0]]}, "walls[0].triangles: required", "")]
    for spec, head, why in bad:
        with pytest.raises(ConfigError) as err:
            config_from_dict({"walls": [spec]})
        msg = str(err.value)
        assert msg.startswith(head) and why in msg and "\n" not in msg, msg


def test_sphere_starting_through_a_mesh_is_refused():
    """A sphere 2 mm below a floor of triangles overlaps it by r − 2 mm (meshes are
    two-sided)."""
    from pdyn.checks import InitialStateError

    v, t = grid_surface(2, 0.5)
    with pytest.raises(InitialStateError, match=r"particle 0 overlaps the wall walls\[0\] "
                                                r"\(mesh\) by 0.008"):
        one_sphere([0.1, 0.1, -0.002], [mesh_wall(v, t)])


@pytest.mark.parametrize("wall,head", [
    ('type = "mesh"\nfile = "none.stl"', "pdyn: error: walls[0].file = "),
    ('type = "mesh"\nfile = "broken.stl"', "pdyn: error: walls[0].file = "),
    ('type = "mesh"\nfile = "floor.stl"\nscale = -2.0', "pdyn: error: walls[0].scale = -2.0"),
    ('type = "mesh"\nfile = "floor.stl"\nnormal = [0.0, 0.0, 1.0]',
     "pdyn: error: walls[0].normal = [0.0, 0.0, 1.0]: not a field of a mesh"),
    ('type = "mesh"\nfile = "floor.stl"\nscale = 0.1',
     "pdyn: error: particle 2 overlaps the wall walls[0] (mesh)")])
def test_cli_refuses_bad_meshes_with_one_line_and_writes_nothing(tmp_path, cli, wall, head):
    """Through ``pdyn run``: one line naming the field (or the overlapping sphere), exit code 2,
    no output folder. The floor (±500 m scaled by 0.1, at z = 3 m) cuts the drop scene's
    spheres."""
    v, t = grid_surface(2, 5000.0, lift=lambda x, y: 30.0 + 0.0 * x)
    write_stl(tmp_path / "floor.stl", v[t])
    (tmp_path / "broken.stl").write_bytes(b"\x00" * 90)
    (tmp_path / "run.toml").write_text(f'scene = "drop"\n[[walls]]\n{wall}\n')
    code, _, err = cli(["run", str(tmp_path / "run.toml"), "--steps", "5", "--no-progress",
                        "--output", str(tmp_path / "out")])
    err = err.strip()
    assert code == 2 and err.startswith(head) and "\n" not in err, err
    assert not (tmp_path / "out").exists()
