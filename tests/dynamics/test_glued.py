"""Glued spheres (``pdyn.dynamics.glued``): the closed form of their motion against an
independent rotation, their velocity against the motion's derivative, the periodic image
they take, a sphere carried by a turning glued layer, a restart on one rank, and bad input
refused in one line."""

from dataclasses import replace

import h5py
import numpy as np
import pytest

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.dynamics.glued import place_glued
from pdyn.io.hdf5 import OutputFileError
from pdyn.placement import SceneError
from pdyn.restart import from_checkpoint
from pdyn.scenarios import Scene, drum, make_scene
from pdyn.simulation import Simulation
from pdyn.walls import CYLINDER_INSIDE, PLANE, WallSet

AXIS = np.array([1.0, 2.0, 2.0]) / 3.0
POINT = np.array([0.1, -0.2, 0.3])
OMEGA, V = 2.5, np.array([0.3, 0.0, -0.1])


def walls(kind=CYLINDER_INSIDE, omega=OMEGA):
    """A wall table of one moving wall (a turning, translating cylinder or plane)."""
    return WallSet(np.zeros((0, 3)), np.zeros((0, 3)), [
        {"kind": kind, "point": POINT, "normal": AXIS, "radius": 1.0,
         "angular_velocity": omega, "velocity": V}])


def placed(ws, anchor, time, period=(0.0, 0.0, 0.0), pos=None):
    """(pos, vel, omega, moves) of spheres glued to wall −1 at ``anchor`` at ``time``."""
    n = len(anchor)
    pos = anchor.copy() if pos is None else pos.copy()
    vel, omega = np.zeros((n, 3)), np.zeros((n, 3))
    moves = place_glued(pos, vel, omega, anchor, np.full(n, -1, np.int64),
                        np.arange(n, dtype=np.int64), ws.table, ws.normals, time,
                        np.asarray(period, float), anchor.copy())
    return pos, vel, omega, moves


def rotation(axis, angle):
    """The rotation matrix exp(angle K) (K the cross-product matrix of ``axis``) by its
    power series: independent of the kernel's Rodrigues formula."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                  [-axis[1], axis[0], 0.0]]) * angle
    out, term = np.eye(3), np.eye(3)
    for n in range(1, 40):
        term = term @ k / n
        out = out + term
    return out


def test_closed_form_position_velocity_spin():
    """x(t) = p₀ + v t + R(Ω t)(x₀ − p₀); v = v + Ω â × (x − p(t)), the derivative of x(t)
    (central differences); ω = Ω â. A plane turning about its normal carries them alike."""
    ws = walls()
    anchor = np.random.default_rng(1).uniform(-1.0, 1.0, (7, 3))
    t = 0.83
    pos, vel, omega, moves = placed(ws, anchor, t)
    want = POINT + V * t + (anchor - POINT) @ rotation(AXIS, OMEGA * t).T
    np.testing.assert_allclose(pos, want, rtol=0, atol=1e-14)
    h = 1e-6
    ahead, behind = placed(ws, anchor, t + h)[0], placed(ws, anchor, t - h)[0]
    np.testing.assert_allclose(vel, (ahead - behind) / (2 * h), rtol=0, atol=1e-8)
    np.testing.assert_allclose(vel, V + np.cross(OMEGA * AXIS, pos - POINT - V * t),
                               rtol=0, atol=1e-14)
    assert np.array_equal(omega, np.tile(OMEGA * ws.normals[0], (7, 1)))  # â normalised
    moved = ((pos - anchor) ** 2).sum(axis=1).max()
    assert moves[0] == moves[1] == pytest.approx(moved, rel=1e-12)
    # a plane turns about its normal through its point: the same motion
    p2, v2, o2, _ = placed(walls(PLANE), anchor, t)
    assert np.array_equal(p2, pos) and np.array_equal(v2, vel) and np.array_equal(o2, omega)


def test_periodic_image_nearest_to_the_last_centre():
    """Along a periodic axis the centre is the image nearest to its previous one: it moves
    continuously across the face, and after the exchange wraps it, on from the wrapped one."""
    ws = walls(PLANE, omega=0.0)  # moves at 0.3 m/s along x
    anchor = np.array([[0.95, 0.0, 0.0]])
    period = (1.0, 0.0, 0.0)
    pos = placed(ws, anchor, 0.5, period)[0]
    assert pos[0, 0] == pytest.approx(1.1)  # past the face, not wrapped
    wrapped = pos - [1.0, 0.0, 0.0]  # the exchange's wrap at a rebuild
    pos = placed(ws, anchor, 0.6, period, wrapped)[0]
    assert pos[0, 0] == pytest.approx(0.13)
    assert placed(ws, anchor, 0.6, period, wrapped)[3][0] == pytest.approx(0.03**2 + 0.01**2)


def one_sphere_in_drum(rough: bool) -> Scene:
    """The drum's wall (rough: with its glued layer) turning at Fr = 0.01 and one sphere
    resting at its bottom, on the layer (or on the smooth wall)."""
    s = drum(scale=1 / 3, froude=0.01, rough=rough)
    glued = np.flatnonzero(s.glued >= 0) if rough else np.zeros(0, int)
    keep = np.concatenate((glued, [0]))
    pos = s.positions[keep].copy()
    lowest = (0.1 - 2 * 0.004) if rough else 0.1  # the layer's inner surface, the wall
    pos[-1] = [0.0132, 0.0, -(lowest - 0.0042)]  # in the layer's hollows or on the wall
    return replace(s, positions=pos, velocities=np.zeros_like(pos), radii=s.radii[keep],
                   glued=None if s.glued is None else s.glued[keep])


def turn_rate(sim) -> float:
    """The free sphere's angular velocity about the drum's axis over Ω."""
    h = sim._integrated()
    (y, z), (vy, vz) = sim.store.pos[h][0, 1:], sim.store.vel[h][0, 1:]
    return (y * vz - z * vy) / (y * y + z * z) / np.sqrt(0.01 * 9.81 / 0.1)


def test_turning_glued_layer_carries_a_sphere():
    """A sphere dropped onto the glued layer of the turning drum settles in it within 0.14 s
    and then goes round with it (its turn rate about the axis Ω within 1 % at 0.16 s, 9° of
    the drum's turn); on the smooth wall it rolls, its centre swinging up and back at about
    a third of Ω at most (below half of Ω)."""
    cfg = SimulationConfig(scene="drum", progress=False)
    rough = Simulation(cfg, scene=one_sphere_in_drum(True))
    rough.run(12000)
    assert turn_rate(rough) == pytest.approx(1.0, abs=0.01)
    smooth = Simulation(cfg, scene=one_sphere_in_drum(False))
    smooth.run(12000)
    assert abs(turn_rate(smooth)) < 0.5


def test_restart_with_glued_spheres_is_bit_identical(tmp_path):
    """On one rank: the rough drum run 60 steps equals 30, a checkpoint, and 30 more."""
    s = drum(scale=1 / 3, froude=25.0, rough=True)
    s = replace(s, velocities=np.where((s.glued < 0)[:, None], 0.5, 0.0))

    def cfg(folder, every=0):
        return SimulationConfig(scene="drum", progress=False, output=OutputConfig(
            folder=str(folder), checkpoint_every=every, overwrite=True))

    ref = Simulation(cfg(tmp_path / "a", 30), scene=s)
    ref.run(60)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000030.h5",
                           output=cfg(tmp_path / "b").output)
    assert "glued" in cont.store.fields
    cont.run(30)
    by_gid = [x.store.owned[np.argsort(x.store.gid[x.store.owned])] for x in (ref, cont)]
    for k in ("gid", "pos", "vel", "omega", "anchor", "glued", "history_count",
              "history_spring"):
        assert np.array_equal(ref.store.values(k, by_gid[0]), cont.store.values(k, by_gid[1])), k


@pytest.mark.parametrize("glued,why", [
    (np.zeros(3, int), "glued = .*: expected 891 integers, one per sphere"),
    ("walls", "glued = walls: expected 891 integers"),
    (np.full(891, 1), r"glued\[0\] = 1: not one of the scene's 1 walls \(0 to 0\)"),
    (np.full(891, -2), r"glued\[0\] = -2: not one of the scene's 1 walls"),
])
def test_bad_glued_refused(glued, why):
    s = replace(drum(scale=1 / 3, rough=True), glued=glued)
    with pytest.raises(SceneError, match=why) as err:
        Simulation(SimulationConfig(scene="drum", progress=False), scene=s)
    assert "\n" not in str(err.value)


def test_glued_to_a_mesh_or_in_a_cells_scene_refused():
    mesh = {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
            "triangles": [[0, 1, 2]]}
    s = drum(scale=1 / 3, rough=True)
    s = replace(s, walls=s.walls + (mesh,), glued=np.where(s.glued >= 0, 1, -1))
    with pytest.raises(SceneError, match=r"^glued: spheres glued to walls\[1\], a mesh: spheres "
                       "move with a plane, a cylinder or a cone only$"):
        Simulation(SimulationConfig(scene="drum", progress=False), scene=s)
    cells = make_scene("drop", scale=0.05, materialise=False)
    cells = replace(cells, glued=np.zeros(len(cells), int))
    with pytest.raises(Exception, match="glued: only a scene of arrays glues spheres"):
        Simulation(SimulationConfig(scene="drop", progress=False), scene=cells)


def test_damaged_glued_dataset_refused(tmp_path):
    """A checkpoint whose glued sphere names no wall (or a sphere that is not fixed) is
    refused by the reader in one line."""
    s = drum(scale=1 / 3, froude=1.0, rough=True)
    sim = Simulation(SimulationConfig(scene="drum", progress=False, output=OutputConfig(
        folder=str(tmp_path / "a"), checkpoint_every=2, overwrite=True)), scene=s)
    sim.run(2)
    path = tmp_path / "a" / "checkpoints" / "ckpt_00000002.h5"
    with h5py.File(path, "r+") as f:
        g = f["particles/glued"][()]
        k = int(np.flatnonzero(g)[0])
        g[k] = -9
        del f["particles/glued"]
        f.create_dataset("particles/glued", data=g, fletcher32=True)
    with pytest.raises(OutputFileError, match=rf"particles/glued\[{k}\] = -9: not 0 or the id "
                       "of one of the 1 walls"):
        from_checkpoint(path)


def test_rough_drum_from_a_config():
    """``[scene_options]`` makes the drum rough (and sets its Froude number) from a config,
    and the checkpoint's stored config keeps it; bad options are refused in one line."""
    from pdyn.config import ConfigError, config_from_dict

    cfg = config_from_dict({"scene": "drum", "scale": 1 / 3, "progress": False,
                            "scene_options": {"froude": 0.1, "rough": True}})
    sim = Simulation(cfg)
    assert sim.glued.handles.size == 225 and "Froude 0.1" in sim.scene.description
    for options, why in (
            ({"rough": 1}, "scene_options.rough = 1: expected true or false"),
            ({"rugged": True}, "scene_options.rugged = True: not an option of the 'drum' "
                               "scene (its options: froude, rough)"),
            ("x", "scene_options = 'x': expected a table [scene_options]")):
        with pytest.raises(ConfigError) as err:
            config_from_dict({"scene": "drum", "scene_options": options})
        assert str(err.value) == why
    bad = config_from_dict({"scene": "drum", "scene_options": {"froude": -1.0}})
    with pytest.raises(SceneError, match=r"^scene_options.froude = -1.0: must be >= 0$"):
        Simulation(bad)
