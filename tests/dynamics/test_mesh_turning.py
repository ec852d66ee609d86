"""Turning triangle-mesh walls (issue 33, ``pdyn.mesh`` frames): the contact geometry in the
mesh's frame equals the mesh placed where it is; a sphere set on a turning mesh turntable,
or on a plane turning about its normal, rolls round the axis at 2Ω/7 (the closed form of a
ball on a turntable), the two floors alike; a turning
triangulated drum drags a sphere like the turning cylinder (2V/7); the lists' margin of a
turning paddle (a run with a skin = a run rebuilding every step, bit for bit); pictures; the
config's refusals."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, config_from_dict, load_config
from pdyn.mesh import (Mesh, MeshError, candidates, contact_geometry, entry_homes, frames,
                       grid_surface, pack, rotation, tube_surface)

from .mesh_oracle import arrays, closest_feature, mesh_contact
from .test_mesh import mesh_wall
from .test_walls import G, K, MASS, R, one_sphere, state


def test_turned_mesh_contacts_are_the_mesh_placed_where_it_is():
    """A bumpy mesh turning about a tilted axis through a point while translating, at
    t = 0.9 s: ``contact_geometry`` (in the mesh's frame, normals turned back) gives the
    normal and overlap of the same triangles placed where they are at t (``Mesh.surface``,
    a mesh at rest) to rounding, and the grid's candidates are the triangles within reach of
    those."""
    rng = np.random.default_rng(3)
    v, t = grid_surface(6, 1.0, jitter=0.3, seed=4,
                        lift=lambda x, y: 0.3 * np.sin(3 * x) * np.cos(2 * y))
    moving = Mesh.from_arrays(v, t, velocity=[0.1, -0.2, 0.05], angular_velocity=0.7,
                              axis=[0.3, -0.4, 1.0], point=[0.2, 0.1, -0.3])
    time = 0.9
    placed = Mesh.from_arrays(*moving.surface(time))
    b, ref = pack([moving], [0]), arrays(placed)
    frames([moving], time, b.frames)
    corners = placed.verts[placed.tri]
    pts = np.concatenate((rng.uniform(-1.2, 1.2, (300, 3)) + moving.velocity * time,
                          corners.mean(axis=1) + rng.normal(0.0, 0.05, (len(t), 3))))
    n, n_tri = len(pts), len(moving)
    sphere, facet = np.repeat(np.arange(n), n_tri), np.tile(np.arange(n_tri), n)
    origin = moving.point + moving.velocity * time  # the wall's point p + v t
    pos = np.concatenate((pts, origin[None]))
    rad = np.concatenate((rng.uniform(0.05, 0.4, n), [np.inf]))
    wall = np.full(n_tri, n, np.int32)
    home, geo = np.empty((n * n_tri, 4)), np.empty((n * n_tri, 4))
    entry_homes(sphere, facet, wall, pos, b.records, b.frames, b.tmesh, home)
    contact_geometry(sphere, facet, wall, pos, rad, b, home, geo, np.empty(n * n_tri, np.int64))
    want = np.array([mesh_contact(*pos[i], rad[i], 0.0, 0.0, 0.0, f, *ref)
                     for i, f in zip(sphere, facet)])
    sure = np.abs(want[:, 3]) > 1e-9  # kept or apart beyond rounding
    touch = sure & (want[:, 3] >= 0.0)
    assert touch.sum() > 50
    assert np.array_equal(geo[sure, 3] >= 0.0, want[sure, 3] >= 0.0)
    assert np.abs(geo[touch] - want[touch]).max() < 1e-12
    reach = 0.1
    start, got = candidates(np.arange(n), pos, rad, np.array([reach]), b, origin[None],
                            b.frames)
    for i in range(n):
        d = np.array([math.sqrt(closest_feature(*pos[i], f, *ref[:7], np.inf)[5])
                      for f in range(n_tri)])
        listed = set(got[start[i]:start[i + 1]].tolist())
        assert set(np.flatnonzero(d <= rad[i] + reach - 1e-9)) <= listed
        assert listed <= set(np.flatnonzero(d <= rad[i] + reach + 1e-9))


TURNTABLE_START = np.array([0.1, 0.013, R - MASS * G / K])


def turntable(kind, om):
    """A sphere set at rest on a floor z = 0 turning at ``om`` about the z axis: a mesh of
    triangles, or a plane turning about its normal."""
    if kind == "mesh":
        floor = mesh_wall(*grid_surface(8, 0.5), angular_velocity=om, axis=[0, 0, 1])
    else:
        floor = {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
                 "angular_velocity": om}
    return one_sphere(TURNTABLE_START, [floor], friction=0.5)


@pytest.mark.parametrize("kind", ["mesh", "plane"])
def test_sphere_set_on_a_turntable_circles_the_axis_at_two_sevenths(kind):
    """A sphere set at rest at ρ₀ from the axis of a floor (of triangles, or a plane) turning
    at Ω: it slips for a moment, then rolls, and rolling on a turntable makes v̇ = (2/7) Ω
    ẑ × v (no slip at the contact, whose velocity is Ω ẑ × x) — its centre goes round the
    axis on the circle ρ₀ at 2Ω/7, the speed (2/7) Ω ρ₀. Its normal force is the weight (the
    floor does not tilt)."""
    om = 1.0
    rho0 = math.hypot(*TURNTABLE_START[:2])
    sim = turntable(kind, om)
    for _ in range(3):
        sim.run(int(0.4 / sim.dt))
        p, u = state(sim, "pos"), state(sim, "vel")
        rho = math.hypot(p[0], p[1])
        assert rho / rho0 == pytest.approx(1.0, abs=1e-3)
        assert (p[0] * u[1] - p[1] * u[0]) / rho**2 / (2 * om / 7) == pytest.approx(1.0,
                                                                                  abs=1e-3)
        assert math.hypot(u[0], u[1]) / (2 * om * rho0 / 7) == pytest.approx(1.0, abs=1e-3)
        assert sim.wall_contacts()["force"] / (MASS * G) == pytest.approx([1.0], abs=1e-9)
    assert sim.time * 2 * om / 7 > 0.3  # a good part of the circle
    if kind == "mesh":
        assert sim.rebuilds > 10  # the lists follow the turning floor


def test_turning_plane_and_turning_mesh_floor_give_the_same_path():
    """The plane turning about its normal and the flat mesh turning about the same axis drag
    the sphere alike: the same centre (10⁻⁶ of a radius: the mesh's contact normal is
    computed, the plane's given) and velocity after 0.4 s."""
    a, b = turntable("mesh", 1.0), turntable("plane", 1.0)
    for sim in (a, b):
        sim.run(int(0.4 / sim.dt))
    assert np.abs(state(a, "pos") - state(b, "pos")).max() < 1e-6 * R
    assert np.abs(state(a, "vel") - state(b, "vel")).max() < 1e-8
    assert np.linalg.norm(state(b, "vel")) > 0.01  # it moves


def test_sphere_in_a_turning_mesh_drum_is_dragged_at_two_sevenths():
    """The turning-cylinder test of tests/dynamics/test_walls.py with a drum of 512 triangles
    (radius 1 m, axis y through (0, 0, 1), Ω = −V): the friction on the sphere at rest at the
    bottom points along the surface velocity Ω â × (c − p) = −V ŷ × (−ẑ) = V x̂ (in the
    bottom face, turned by Ω t: 1e-4), and when the slip ends it moves at 2V/7 with
    ω r = 5V/7 (2 %)."""
    V, mu, n = 0.1, 0.3, 256
    v, t = tube_surface(n, 1.0, 0.2)
    floor = 1.0 - math.cos(math.pi / n)  # the bottom face's height
    drum = mesh_wall(v + [0.0, 0.0, 1.0], t, angular_velocity=-V, axis=[0, 1, 0],
                     point=[0, 0, 1.0])
    sim = one_sphere([0.0, 0.0, floor + R - MASS * G / K], [drum], friction=mu,
                     restitution=0.5)
    sim.record_tangential = True
    sim.run(3)
    got = sim.wall_contacts()
    tang = got["tangential_force"][0]
    assert tang[0] > 0.0 and math.hypot(tang[1], tang[2]) < 1e-4 * tang[0]
    t_stick = 2 * V / (7 * mu * G)
    while sim.time < 2.0 * t_stick:
        sim.run(10)
    assert state(sim, "vel")[0] / (2 * V / 7) == pytest.approx(1.0, abs=0.02)
    assert -state(sim, "omega")[1] * R / (5 * V / 7) == pytest.approx(1.0, abs=0.02)
    w = sim.store.walls[0]
    assert sim.store.pos[w].tolist() == [0.0, 0.0, 1.0]  # the wall's point: the axis point


def paddle_run(skin):
    """A blade of triangles from the z axis out to 0.5 m turning at 2 rad/s sweeps a sphere
    resting (no gravity) 0.45 m from the axis a quarter turn ahead, frictionless."""
    from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
    from pdyn.simulation import Simulation

    v = [[0.0, 0.0, -0.1], [0.5, 0.0, -0.1], [0.5, 0.0, 0.1], [0.0, 0.0, 0.1]]
    blade = {"type": "mesh", "vertices": v, "triangles": [[0, 1, 2], [0, 2, 3]],
             "angular_velocity": 2.0, "axis": [0, 0, 1]}
    return Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e7, restitution=0.5),
        box=BoxConfig(lo=(-2, -2, -2), hi=(2, 2, 2), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[0.0, 0.45, 0.0]], radii=[R], density=2800.0),
        walls=[blade], gravity=(0.0, 0.0, 0.0), neighbour_skin=skin, progress=False))


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
def test_turning_paddle_lists_keep_up_and_pictures_turn():
    """The blade's tip moves 1 m/s: with a skin of 2 mm the lists are rebuilt every K steps
    (its speed |Ω| (R_m + r + skin)) and the run is the run rebuilding its lists every step,
    bit for bit; the sphere is struck and leaves faster than the tip moved it. The picture
    (``Mesh.surface``) has the blade turned by Ω t."""
    a, b = paddle_run(0.002), paddle_run(0.0)
    assert a.schedule.wall_every == int(0.001 / ((0.5 + R + 0.002) * 2.0 * a.dt))
    steps = int(1.0 / a.dt)
    for _ in range(10):
        a.run(steps // 10)
        b.run(steps // 10)
        assert state(a, "pos").tolist() == state(b, "pos").tolist()
        assert state(a, "vel").tolist() == state(b, "vel").tolist()
    u = state(a, "vel")
    assert math.hypot(u[0], u[1]) > 0.9  # struck by the tip (0.9 m/s at 0.45 m)
    verts, _ = a.wallset.meshes[0].surface(a.time)
    tip = verts[np.argmax(np.abs(verts[:, 0]) + np.abs(verts[:, 1]))]
    th = 2.0 * a.time
    assert tip[:2] == pytest.approx([0.5 * math.cos(th), 0.5 * math.sin(th)], abs=1e-12)


def test_turning_mesh_config_and_its_refusals(tmp_path):
    """TOML keys ``angular_velocity``, ``axis``, ``point`` of a mesh; one-line refusals naming
    ``walls[k].<field>``; the library's ``Mesh`` refuses a zero axis and NaN."""
    v, t = grid_surface(2, 0.5)
    from pdyn.stl import write_stl

    write_stl(tmp_path / "floor.stl", v[t])
    (tmp_path / "run.toml").write_text(
        'scene = "drop"\n[[walls]]\ntype = "mesh"\nfile = "floor.stl"\n'
        'angular_velocity = 0.5\naxis = [0.0, 0.0, 2.0]\npoint = [0.1, 0.0, 0.0]\n')
    mesh = load_config(tmp_path / "run.toml").walls[0].spec()["mesh"]
    assert (mesh.angular_velocity, mesh.axis.tolist(), mesh.point.tolist()) == (
        0.5, [0.0, 0.0, 1.0], [0.1, 0.0, 0.0])
    good = {"type": "mesh", "file": str(tmp_path / "floor.stl")}
    bad = [({**good, "angular_velocity": 1.0}, "walls[0].axis: required for a turning mesh"),
           ({**good, "angular_velocity": 1.0, "axis": [0, 0, 0]},
            "walls[0].axis = [0.0, 0.0, 0.0]: must not be zero"),
           ({**good, "axis": [0, math.nan, 1]}, "walls[0].axis = [0, nan, 1]: must be finite"),
           ({**good, "angular_velocity": math.inf, "axis": [0, 0, 1]},
            "walls[0].angular_velocity = inf: must be finite"),
           ({**good, "point": [0, 0]}, "walls[0].point = [0, 0]: expected 3 numbers"),
           ({**good, "radius": 1.0}, "walls[0].radius = 1.0: not a field of a mesh")]
    for spec, head in bad:
        with pytest.raises(ConfigError) as err:
            config_from_dict({"walls": [spec]})
        msg = str(err.value)
        assert msg.startswith(head) and "\n" not in msg, msg
    for kw, why in (({"axis": [0, 0, 0]}, "axis .*must not be zero"),
                    ({"angular_velocity": math.nan}, "angular_velocity nan: must be finite"),
                    ({"point": [0, math.inf, 0]}, "point .*must be finite")):
        with pytest.raises(MeshError, match=why):
            Mesh.from_arrays(v, t, **kw)
    assert np.allclose(rotation([0, 0, 1], 0.5) @ [1, 0, 0], [math.cos(0.5), math.sin(0.5), 0])
