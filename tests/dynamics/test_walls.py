"""Walls beyond the box (issue 33, ``pdyn.walls``): planes at any angle and cylinders, fixed,
translating or turning, against closed forms — rolling down a 30° plane (a = 5/7 g sin θ),
resting in a V of two planes (the weight split by the geometry), rolling inside a cylinder
(the pendulum period 2π √(7(R − r)/(5g))), dragged by a turning cylinder and by a moving
plane (the bowling-ball result v = 2V/7) — and the config's refusals."""

import math

import numpy as np
import pytest

from pdyn.checks import InitialStateError
from pdyn.config import (BoxConfig, ConfigError, ContactConfig, ParticlesConfig,
                         SimulationConfig, config_from_dict)
from pdyn.simulation import Simulation

R, E, RHO, G = 0.01, 1e7, 2800.0, 9.81  # sphere radius (m), linear k = E r, density, gravity
MASS = RHO * 4.0 / 3.0 * np.pi * R**3
K = E * R  # sphere–wall stiffness (R_eff = r)
OPEN = BoxConfig(lo=(-2.0, -2.0, -2.0), hi=(2.0, 2.0, 2.0), boundary=("open",) * 3)


def one_sphere(pos, walls, *, friction=0.0, restitution=0.5, vel=(0.0, 0.0, 0.0), **cfg):
    """One glass-like sphere in an open box with ``walls``, gravity −z."""
    return Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=E, restitution=restitution, friction=friction),
        box=OPEN, particles=ParticlesConfig(positions=[pos], velocities=[vel], radii=[R],
                                            density=RHO),
        walls=walls, gravity=(0.0, 0.0, -G), progress=False, **cfg))


def state(sim, name):
    (h,) = sim.store.owned
    return getattr(sim.store, name)[h].copy()


def test_sphere_rolls_down_a_30_degree_plane():
    """With friction μ = 0.5 > 2/7 tan θ the sphere rolls without slipping: its speed along
    the slope grows at a = 5/7 g sin θ (to 0.5 %: the tangential spring's compliance)."""
    th = math.radians(30.0)
    n = np.array([math.sin(th), 0.0, math.cos(th)])  # plane through the origin
    down = np.array([math.cos(th), 0.0, -math.sin(th)])
    start = (R - MASS * G * math.cos(th) / K) * n
    sim = one_sphere(start, [{"type": "plane", "point": [0, 0, 0], "normal": n.tolist()}],
                     friction=0.5)
    sim.run(4000)
    t = sim.time
    v = state(sim, "vel") @ down
    s = (state(sim, "pos") - start) @ down
    a = 5.0 / 7.0 * G * math.sin(th)
    assert v / (a * t) == pytest.approx(1.0, abs=5e-3)
    assert s / (0.5 * a * t * t) == pytest.approx(1.0, abs=5e-3)
    w = state(sim, "omega")[1]  # rolling: ω r = v
    assert w * R / v == pytest.approx(1.0, abs=5e-3)
    assert abs(state(sim, "pos") @ n - R) < 1e-3 * R  # on the plane


def test_sphere_resting_in_a_v_carries_its_weight_split_by_the_geometry():
    """Frictionless planes inclined at α = 30° and β = 45° (their line along y): at rest the
    normal forces are N₁ = m g sin β / sin(α + β) and N₂ = m g sin α / sin(α + β), to 1e-9."""
    a, b = math.radians(30.0), math.radians(45.0)
    n1 = np.array([math.sin(a), 0.0, math.cos(a)])
    n2 = np.array([-math.sin(b), 0.0, math.cos(b)])
    c = np.linalg.solve(np.array([[n1[0], n1[2]], [n2[0], n2[2]]]), [R, R])
    sim = one_sphere([c[0], 0.0, c[1]],
                     [{"type": "plane", "point": [0, 0, 0], "normal": n1.tolist()},
                      {"type": "plane", "point": [0, 0, 0], "normal": n2.tolist()}],
                     restitution=0.3)
    for _ in range(40):
        sim.run(1000)
        if np.abs(state(sim, "vel")).max() < 1e-13:
            break
    got = sim.wall_contacts()
    order = np.argsort(-got["id"][:, 1])  # wall −1, then −2
    weight = MASS * G
    assert got["id"][order, 1].tolist() == [-1, -2]
    assert got["force"][order] / weight == pytest.approx(
        [math.sin(b) / math.sin(a + b), math.sin(a) / math.sin(a + b)], abs=1e-9)


def test_sphere_rolling_inside_a_cylinder_has_the_pendulum_period():
    """A sphere released 0.1 rad from the bottom of a cylinder (axis y, radius 0.1 m) rolls
    to and fro with the period 2π √(7(R − r)/(5g)) (to 1 %: finite amplitude, spring)."""
    big = 0.1
    th0 = 0.1
    d = big - R + MASS * G / K
    sim = one_sphere([d * math.sin(th0), 0.0, -d * math.cos(th0)],
                     [{"type": "cylinder", "point": [0, 0, 0], "axis": [0, 1, 0],
                       "radius": big}], friction=0.5, restitution=1.0)
    period = 2 * math.pi * math.sqrt(7 * (big - R) / (5 * G))
    xs, ts = [], []
    while sim.time < 1.6 * period:
        sim.run(20)
        xs.append(state(sim, "pos")[0])
        ts.append(sim.time)
    xs, ts = np.array(xs), np.array(ts)
    up = np.flatnonzero((xs[:-1] < 0) & (xs[1:] >= 0))  # upward zero crossings, interpolated
    cross = ts[up] - xs[up] * (ts[up + 1] - ts[up]) / (xs[up + 1] - xs[up])
    assert len(cross) >= 1
    down = np.flatnonzero((xs[:-1] > 0) & (xs[1:] <= 0))
    first = ts[down[0]] - xs[down[0]] * (ts[down[0] + 1] - ts[down[0]]) / (
        xs[down[0] + 1] - xs[down[0]])
    assert 2 * (cross[0] - first) / period == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("wall", ["cylinder", "plane"])
def test_sphere_dragged_by_a_moving_wall_leaves_at_two_sevenths(wall):
    """A sphere at rest on a surface that moves at V along x (a cylinder of radius 1 m
    turning about y, or a floor translating in its plane) slides, then rolls: when the slip
    ends (t = 2V/(7 μ g)) it moves at 2V/7 with ω r = 5V/7 — the bowling-ball result (to 2 %:
    the cylinder's curvature and the tangential spring)."""
    V, mu = 0.1, 0.3
    z0 = MASS * G / K - R
    if wall == "cylinder":  # surface speed Ω R along â × q̂ = ŷ × (−ẑ) = −x̂ at the bottom
        spec = {"type": "cylinder", "point": [0, 0, 1.0], "axis": [0, 1, 0], "radius": 1.0,
                "angular_velocity": -V}
    else:
        spec = {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
                "velocity": [V, 0.0, 0.0]}
    sim = one_sphere([0.0, 0.0, -z0], [spec], friction=mu, restitution=0.5)
    t_stick = 2 * V / (7 * mu * G)
    while sim.time < 2.0 * t_stick:
        sim.run(10)
    assert state(sim, "vel")[0] / (2 * V / 7) == pytest.approx(1.0, abs=0.02)
    assert -state(sim, "omega")[1] * R / (5 * V / 7) == pytest.approx(1.0, abs=0.02)
    if wall == "plane":  # the plane moved along itself: its point is p₀ + v t
        w = sim.store.walls[0]
        assert sim.store.pos[w, 0] == V * (sim.step_index * sim.dt)


def test_translating_plane_pushes_a_sphere_and_lists_follow():
    """A piston (plane, normal +x) moving at 0.5 m/s reaches a sphere at rest 1 cm ahead,
    without gravity: the lists are rebuilt in time (the sphere never passes through), and the
    sphere ends ahead of the piston, moving at least as fast."""
    sim = Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=E, restitution=0.5), box=OPEN,
        particles=ParticlesConfig(positions=[[R + 0.01, 0, 0]], radii=[R], density=RHO),
        walls=[{"type": "plane", "point": [0, 0, 0], "normal": [1, 0, 0],
                "velocity": [0.5, 0, 0]}], gravity=(0.0, 0.0, 0.0), progress=False))
    sim.run(int(0.06 / sim.dt))
    w = sim.store.walls[0]
    assert state(sim, "pos")[0] - sim.store.pos[w, 0] > 0.9 * R
    assert state(sim, "vel")[0] >= 0.5 - 1e-9
    assert sim.rebuilds > 2


def test_walls_from_toml_and_their_refusals():
    good = {"type": "cylinder", "point": [0, 0, 0], "axis": [1, 0, 0], "radius": 0.5,
            "inside": True, "angular_velocity": 2.0}
    cfg = config_from_dict({"scene": "drop", "walls": [good, {"type": "plane", "point": [0, 0, 0],
                                                               "normal": [0, -0.5, 0.866]}]})
    assert cfg.walls[0].radius == 0.5 and cfg.walls[1].normal == (0.0, -0.5, 0.866)
    bad = [({**good, "colour": 1}, "walls[0].colour = 1: unknown key"),
           ({**good, "axis": [0, 0, 0]}, "walls[0].axis = [0.0, 0.0, 0.0]: must not be zero"),
           ({**good, "radius": 0.0}, "walls[0].radius = 0.0: must be > 0"),
           ({**good, "radius": -1}, "walls[0].radius = -1: must be > 0"),
           ({**good, "angular_velocity": math.nan}, "walls[0].angular_velocity = nan: must be "
                                                    "finite"),
           ({**good, "point": [0, math.inf, 0]}, "walls[0].point = [0, inf, 0]: must be finite"),
           ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 0]},
            "walls[0].normal = [0.0, 0.0, 0.0]: must not be zero"),
           ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "radius": 1.0},
            "walls[0].radius = 1.0: only for cylinders"),
           ({"type": "box", "point": [0, 0, 0]}, "walls[0].type = 'box': choose from"),
           ({"type": "plane", "point": [0, 0, 0]}, "walls[0].normal: required")]
    for spec, head in bad:
        with pytest.raises(ConfigError) as err:
            config_from_dict({"walls": [spec]})
        assert str(err.value).startswith(head), str(err.value)
        assert "\n" not in str(err.value)


def test_sphere_starting_inside_a_wall_is_refused():
    """A sphere 2 mm through a plane, or outside a cylinder it should be inside: one line
    naming the sphere and the wall."""
    with pytest.raises(InitialStateError, match=r"particle 0 overlaps the wall walls\[0\] "
                                                r"\(plane\) by 0.012"):
        one_sphere([0, 0, -0.002], [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}])
    with pytest.raises(InitialStateError, match=r"walls\[0\] \(cylinder\)"):
        one_sphere([0, 0, 0.5], [{"type": "cylinder", "point": [0, 0, 0], "axis": [0, 1, 0],
                                  "radius": 0.2}])


@pytest.mark.parametrize("walls,head", [
    ('type = "cylinder"\npoint = [0.0, 0.0, 0.0]\naxis = [1.0, 0.0, 0.0]\nradius = 0.0',
     "pdyn: error: walls[0].radius = 0.0: must be > 0"),
    ('type = "plane"\npoint = [0.0, 0.0, 3.0]\nnormal = [0.0, 0.0, 1.0]',
     "pdyn: error: particle 1 overlaps the wall walls[0] (plane)")])
def test_cli_refuses_bad_walls_with_one_line_and_writes_nothing(tmp_path, cli, walls, head):
    (tmp_path / "run.toml").write_text(f'scene = "drop"\n[[walls]]\n{walls}\n')
    code, _, err = cli(["run", str(tmp_path / "run.toml"), "--steps", "5", "--no-progress",
                        "--output", str(tmp_path / "out")])
    err = err.strip()
    assert code == 2 and err.startswith(head) and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_snapshots_show_moving_walls_where_they_are_and_wall_forces_name_them(tmp_path):
    """A snapshot draws a translating plane at its place of the moment and a cylinder as a
    tube (triangles, ``walls/triangle_wall`` naming each one's wall); ``wall_forces.csv`` names configured walls
    ``wall<k>``, the box faces as before."""
    from pdyn.config import OutputConfig
    from pdyn.io import read_snapshot

    sim = Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=E, restitution=0.5),
        box=BoxConfig(lo=(-0.2, -0.2, -0.2), hi=(0.2, 0.2, 0.2),
                      boundary=("open", "open", "wall")),
        particles=ParticlesConfig(positions=[[0.0, 0.17, 0.12]], radii=[R], density=RHO),
        walls=[{"type": "plane", "point": [0, 0, 0], "normal": [0, 0.6, 0.8],
                "velocity": [0.0, 0.0, 0.1]},
               {"type": "cylinder", "point": [0, 0, 0], "axis": [1, 0, 0], "radius": 0.15,
                "inside": False}],
        gravity=(0.0, 0.0, -G), progress=False,
        output=OutputConfig(folder=str(tmp_path), snapshot_every=10, wall_forces=True)))
    sim.run(10)
    snap = read_snapshot(tmp_path / "snapshots" / "snap_00000010.h5")
    w = snap["walls"]
    assert w["id"].tolist() == [-1, -2, -3, -4]
    assert w["point"][2].tolist() == [0.0, 0.0, 0.1 * (10 * sim.dt)]
    plane = np.unique(w["triangles"][w["triangle_wall"] == -3])
    assert len(plane) >= 3
    assert np.abs((w["vertices"][plane] - w["point"][2]) @ np.array([0, 0.6, 0.8])).max() < 1e-12
    tube = np.unique(w["triangles"][w["triangle_wall"] == -4])
    assert np.hypot(*w["vertices"][tube, 1:].T) == pytest.approx(0.15, abs=1e-15)
    head = (tmp_path / "wall_forces.csv").read_text().splitlines()[0].split(",")
    assert head == ["step", "time"] + [f"{n}_f{a}" for n in ("z_lo", "z_hi", "wall3", "wall4")
                                       for a in "xyz"] + [f"{n}_t{a}" for n in ("wall3", "wall4")
                                                          for a in "xyz"]
