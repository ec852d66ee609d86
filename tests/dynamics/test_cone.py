"""Cone walls (``type = "cone"``, ``pdyn.walls``, ``pdyn.wallkinds``) against closed forms: the
geometry against a brute-force closest point on a fine triangulation, a sphere at rest (on a
45° cone's inside against a plane, on an upward cone's apex) carrying its weight to
rounding, a sphere sliding (frictionless, a = g cos 45°) and rolling (a = 5/7 g cos 45°) down
a 45° cone's inside, the initial-state check, the drawing, glued spheres, and the config's
refusals."""

import math

import numpy as np
import pytest

from pdyn.checks import InitialStateError
from pdyn.config import ConfigError, config_from_dict
from pdyn.dynamics.glued import glued_walls
from pdyn.io.wallmesh import wall_surfaces
from pdyn.wallkinds import CONE, KINDS, kind_of
from pdyn.walls import WallSet, wall_contact

from .test_walls import G, K, MASS, R, one_sphere, state

#: a frustum about a tilted axis: radius 0.03 m at lo = −0.04, 0.08 m at hi = 0.05
TILTED = {"type": "cone", "point": [0.01, -0.02, 0.03], "axis": [0.3, -0.2, 0.9],
          "radius_lo": 0.03, "radius_hi": 0.08, "lo": -0.04, "hi": 0.05}
#: a 45° hopper cone, apex down at the origin: radius z between z = 0.02 and 0.2
HOPPER = {"type": "cone", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
          "radius_lo": 0.02, "radius_hi": 0.2, "lo": 0.02, "hi": 0.2}


def wallset(wall):
    """The wall set of one configured wall (no box faces)."""
    spec = config_from_dict({"walls": [wall]}).walls[0].spec()
    return WallSet(np.zeros((0, 3)), np.zeros((0, 3)), [spec])


def contacts(ws, xs, r=R):
    """(normals (N, 3), overlaps (N,), surface velocities (N, 3)) of spheres at ``xs``."""
    pos = ws.points(0.0)
    out = [wall_contact(*x, r, pos, ws.normals, ws.table, 0, 0) for x in np.asarray(xs, float)]
    out = np.array(out)
    return out[:, :3], out[:, 3], out[:, 4:]


def triangulation(wall, t0, t1, n=4000):
    """Corners (T, 3, 3) of the cone's surface for its generating segment's parameter t0 … t1
    (0 at lo, 1 at hi): two rings of ``n`` points (its generatrix is straight, so the strips
    are exact along it; the chord error is R (π/n)²/2)."""
    a = np.asarray(wall["axis"], float)
    a /= np.linalg.norm(a)
    u = np.cross(a, [1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(a, u)
    th = 2.0 * np.pi * np.arange(n) / n
    ring = np.outer(np.cos(th), u) + np.outer(np.sin(th), v)
    ends = []
    for t in (t0, t1):
        s = wall["lo"] + t * (wall["hi"] - wall["lo"])
        rad = wall["radius_lo"] + t * (wall["radius_hi"] - wall["radius_lo"])
        ends.append(np.asarray(wall["point"], float) + s * a + rad * ring)
    k1 = np.roll(np.arange(n), -1)
    lo, hi = ends
    tri = np.concatenate((np.stack((lo, lo[k1], hi), axis=1),
                          np.stack((lo[k1], hi[k1], hi), axis=1)))
    area = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    return tri[area > 0.0]  # (the ring at an apex is a point)


def _segment_points(p, a, b):
    """Closest points of the segments a → b (T, 3) to the point p."""
    d = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.einsum("ij,ij->i", d, d), 0.0, 1.0)
    return a + t[:, None] * d


def closest_on_triangles(p, tri):
    """The closest point to ``p`` of the triangles ``tri`` (T, 3, 3), by brute force: over
    each triangle's face (the projection when it falls inside) and its three edges."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    proj = p - np.einsum("ij,ij->i", p - a, n)[:, None] * n
    inside = np.ones(len(tri), bool)
    for x, y in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(y - x, proj - x), n) >= 0.0
    cands = [np.where(inside[:, None], proj, np.inf)] + [
        _segment_points(p, x, y) for x, y in ((a, b), (b, c), (c, a))]
    pts = np.concatenate(cands)
    return pts[np.argmin(np.linalg.norm(pts - p, axis=1))]


@pytest.mark.parametrize("wall,t0,t1", [(TILTED, 0.0, 1.0),
                                        ({**TILTED, "infinite": True}, -0.6, 3.0)])
def test_geometry_is_the_closest_point_of_a_fine_triangulation(wall, t0, t1):
    """Centres all around the cone (inside, outside, beyond its rims; for the infinite cone
    near its apex at t = −0.6 and beyond lo and hi): the overlap is r − the distance to the
    brute-force closest point of a triangulation (to its chord error), the normal points to
    that point, the contact point lies on the triangulation."""
    ws = wallset(wall)
    rng = np.random.default_rng(7)
    a = np.asarray(wall["axis"], float) / np.linalg.norm(wall["axis"])
    centre = np.asarray(wall["point"], float) + 0.005 * a
    xs = centre + rng.uniform(-0.1, 0.1, (60, 3))
    normals, overlaps, _ = contacts(ws, xs)
    tri = triangulation(wall, t0, t1)
    for x, n, delta in zip(xs, normals, overlaps):
        c = closest_on_triangles(x, tri)
        dist = np.linalg.norm(c - x)
        assert R - delta == pytest.approx(dist, abs=2e-6)
        if dist > 1e-3:
            assert np.linalg.norm(n - (c - x) / dist) < 2e-3
    assert (overlaps < R).all() and (overlaps > R - 0.2).all()
    gaps = kind_of(CONE).gaps(xs, ws.points(0.0)[0], ws.normals[0], ws.table[0], None)
    np.testing.assert_allclose(gaps, R - overlaps, rtol=0, atol=1e-12)


def test_on_the_axis_and_on_the_shell():
    """A centre on the axis gets a radial direction (the tube's choice); a centre on the
    shell an overlap of r and the face's normal away from the axis."""
    ws = wallset(HOPPER)
    (n,), (delta,), _ = contacts(ws, [[0.0, 0.0, 0.1]])
    assert delta == pytest.approx(R - 0.1 / math.sqrt(2.0), abs=1e-15)
    assert n[2] == pytest.approx(-1.0 / math.sqrt(2.0)) and np.hypot(n[0], n[1]) > 0.7
    unit = {**HOPPER, "radius_lo": 0.0, "radius_hi": 1.0, "lo": 0.0, "hi": 1.0}
    (n,), (delta,), _ = contacts(wallset(unit), [[0.5, 0.0, 0.5]])  # exactly on it
    assert delta == R
    np.testing.assert_allclose(n, [1.0 / math.sqrt(2.0), 0.0, -1.0 / math.sqrt(2.0)],
                               atol=1e-15)


def test_a_turning_cone_drags_its_surface():
    """Turning at Ω about its axis: the surface velocity at the contact is Ω c_ρ along â × q̂,
    c_ρ the contact point's distance from the axis; plus the wall's velocity."""
    ws = wallset({**HOPPER, "angular_velocity": 3.0, "velocity": [0.0, 0.0, 0.1]})
    (n,), (delta,), (u,) = contacts(ws, [[0.09, 0.0, 0.11]])  # closest point (0.1, 0, 0.1)
    c_rho = 0.1
    np.testing.assert_allclose(u, [0.0, 3.0 * c_rho, 0.1], atol=1e-12)


def test_a_sphere_inside_a_45_degree_cone_against_a_plane_carries_its_weight():
    """Frictionless, at rest on the 45° cone's inside, pushed toward the axis by the cone and
    held by a plane x = const facing away from it: the cone's force is √2 m g along its
    normal (its vertical part m g), the plane's m g, to rounding. (A lone sphere on a 45°
    slope rolls: it cannot rest without rolling resistance, and the constant rolling torque
    chatters at rest.)"""
    weight = MASS * G
    # the centre at R − δ from the cone's surface (the line ρ = z; δ = √2 m g / k its
    # overlap), at R − m g / k from the plane
    x = 0.08
    c = np.array([x, 0.0, x + math.sqrt(2.0) * (R - math.sqrt(2.0) * weight / K)])
    plane = {"type": "plane", "point": [c[0] - R + weight / K, 0.0, 0.0],
             "normal": [1.0, 0.0, 0.0]}
    sim = one_sphere(c.tolist(), [HOPPER, plane], restitution=0.3)
    for _ in range(40):
        sim.run(1000)
        if np.abs(state(sim, "vel")).max() < 1e-13:
            break
    got = sim.wall_contacts()
    order = np.argsort(-got["id"][:, 1])  # the cone (wall −1), then the plane (−2)
    assert got["id"][order, 1].tolist() == [-1, -2]
    assert got["force"][order] / weight == pytest.approx([math.sqrt(2.0), 1.0], abs=1e-9)


def test_a_sphere_on_an_upward_cones_apex_carries_its_weight():
    """A sphere centred over the apex of an upward cone (radius 0 at hi) touches its apex, a
    vertex: the normal is vertical and at rest the force is m g to rounding."""
    apex = {"type": "cone", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
            "radius_lo": 0.05, "radius_hi": 0.0, "lo": -0.05, "hi": 0.0}
    sim = one_sphere([0.0, 0.0, R - MASS * G / K], [apex], restitution=0.3)
    for _ in range(40):
        sim.run(1000)
        if np.abs(state(sim, "vel")).max() < 1e-13:
            break
    got = sim.wall_contacts()
    assert got["force"] / (MASS * G) == pytest.approx([1.0], abs=1e-9)
    assert abs(state(sim, "pos")[0]) == 0.0 and abs(state(sim, "pos")[1]) == 0.0


@pytest.mark.parametrize("friction,fraction", [(0.0, 1.0), (0.5, 5.0 / 7.0)])
def test_a_sphere_slides_or_rolls_down_a_45_degree_cones_inside(friction, fraction):
    """Started at rest on the inside of the 45° hopper cone: frictionless it slides down the
    generatrix at a = g cos 45°, with μ = 0.5 > 2/7 tan 45° it rolls at 5/7 of that (to
    0.5 %: the contact's compliance), over 0.1 s, staying on the cone."""
    gen = np.array([-1.0, 0.0, -1.0]) / math.sqrt(2.0)  # down the generatrix
    n_in = np.array([-1.0, 0.0, 1.0]) / math.sqrt(2.0)  # the inside face's normal
    surface = np.array([0.15, 0.0, 0.15])
    start = surface + (R - MASS * G * math.cos(math.pi / 4) / K) * n_in
    sim = one_sphere(start.tolist(), [HOPPER], friction=friction)
    sim.run(int(0.1 / sim.dt))
    t = sim.time
    a = fraction * G * math.cos(math.pi / 4)
    assert (state(sim, "vel") @ gen) / (a * t) == pytest.approx(1.0, abs=5e-3)
    assert ((state(sim, "pos") - start) @ gen) / (0.5 * a * t * t) == pytest.approx(1.0,
                                                                                    abs=5e-3)
    assert abs(state(sim, "pos")[1]) < 1e-12  # in its meridian plane
    assert abs((state(sim, "pos") - surface) @ n_in - R) < 1e-3 * R  # on the cone


def test_a_sphere_through_the_cone_is_refused_at_the_start():
    with pytest.raises(InitialStateError, match=r"walls\[0\] \(cone\)"):
        one_sphere([0.1, 0.0, 0.1], [HOPPER])


def test_the_cone_is_drawn_on_its_surface_facing_the_axis():
    """Its triangles' corners lie on it; each faces the axis; an infinite one is drawn from its
    apex to the box's end, a finite one between lo and hi."""
    for wall, s_range in ((HOPPER, (0.02, 0.2)), ({**HOPPER, "infinite": True}, (0.0, 0.5))):
        ws = wallset(wall)
        v, t, ids = wall_surfaces(ws.table, ws.points(0.0), ws.normals, (-0.5,) * 3,
                                  (0.5,) * 3, 0.0)
        assert (ids == -1).all() and len(t) > 0
        g = kind_of(CONE).gaps(v, ws.points(0.0)[0], ws.normals[0], ws.table[0], None)
        assert np.abs(g).max() < 1e-12
        assert v[:, 2].min() == pytest.approx(s_range[0], abs=1e-12)
        assert v[:, 2].max() == pytest.approx(s_range[1], abs=1e-12)
        corners = v[t]
        n = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        centre = corners.mean(axis=1)
        assert (np.einsum("ij,ij->i", n[:, :2], -centre[:, :2]) > 0.0).all()


def test_spheres_may_be_glued_to_a_cone():
    assert KINDS["cone"].glued and not KINDS["mesh"].glued
    ids = glued_walls(np.array([0, -1, 0]), 3, (HOPPER,), 6)
    assert ids.tolist() == [-7, 0, -7]


@pytest.mark.parametrize("change,head", [
    ({"radius_lo": None}, "walls[0].radius_lo: required for a cone"),
    ({"lo": None}, "walls[0].lo: required for a cone"),
    ({"axis": None}, "walls[0].axis: required for a cone"),
    ({"radius_hi": -0.1}, "walls[0].radius_hi = -0.1: must be >= 0"),
    ({"radius_lo": 0.0, "radius_hi": 0.0}, "walls[0].radius_hi = 0.0: radius_lo and "
                                           "radius_hi must not both be 0"),
    ({"hi": 0.02}, "walls[0].hi = 0.02: must be > lo = 0.02"),
    ({"hi": math.inf}, "walls[0].hi = inf: must be finite"),
    ({"axis": [0, 0, 0]}, "walls[0].axis = [0.0, 0.0, 0.0]: must not be zero"),
    ({"infinite": 1}, "walls[0].infinite = 1: expected true or false"),
    ({"radius": 0.1}, "walls[0].radius = 0.1: not a field of a cone (only of a cylinder)"),
    ({"normal": [0, 0, 1]}, "walls[0].normal = [0, 0, 1]: not a field of a cone (only of a "
                            "plane)"),
    ({"angular_velocity": math.nan}, "walls[0].angular_velocity = nan: must be finite"),
])
def test_bad_cone_configs_are_refused_with_one_line_naming_the_field(change, head):
    wall = {k: v for k, v in {**HOPPER, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as err:
        config_from_dict({"walls": [wall]})
    assert str(err.value).startswith(head), str(err.value)
    assert "\n" not in str(err.value)
