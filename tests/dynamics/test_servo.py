"""Servo walls (issue 48, ``pdyn.dynamics.wallmotion.Servo``): a piston — a plane or a closed
box mesh — on a bed holds its target force at steady state, and the floor carries that force
plus the bed's weight; a cylinder whose radius a servo drives holds a ring of spheres at the
closed form's radius and load; its surface velocity, reach and fast-wall refusal; the
servos' refusals and a stage's new targets (a cylinder's and a mesh's). N ranks and restarts: the ``servo-*`` rows of
tests/mpi/test_same_bits.py."""

import math

import numpy as np
import pytest

from pdyn.checks import FastWallError
from pdyn.config import ConfigError, SimulationConfig, WallConfig
from pdyn.simulation import Simulation
from pdyn.walls import CYLINDER_INSIDE, RATE, VX, WallSet, wall_contact
from pdyn.wallkinds import KINDS, REACH

from ..mpi.scenes import (RING_FORCE, SERVO_FORCE, ring_radius, servo_bed, servo_ring)


def floor_load(sim) -> float:
    """The force (N) the spheres press on the floor (the box face z = lo, wall id −1)."""
    got = sim.wall_contacts()
    return float(got["force"][got["id"][:, 1] == -1].sum())


def mesh_load(sim, servo, friction=True) -> float:
    """A mesh servo's load from this step's contacts, as its definition says: the exact sum
    of (F_n + F_t)·d̂ over its contacts, F on the sphere (the recorded friction included,
    unless not ``friction``)."""
    c = sim.contact
    got = c.contact_list(sim.store, sim.neighbours, sim.dt, spheres=False,
                         tangential=c.recorded_tangential(sim.neighbours, spheres=False))
    on = got["id"][:, 1] == servo.gid
    f = np.concatenate((got["normal_force"][on], got["tangential_force"][on] * friction))
    return math.fsum((f * servo.direction).ravel().tolist())


@pytest.mark.parametrize("mesh", [False, True], ids=["plane", "mesh"])
def test_servo_piston_holds_its_target_force_on_a_bed(mesh):
    """The bed settles for 0.1 s under the piston (a plane, or a closed box of 12 triangles
    driven along −z) held at no load (it stays in place), then the target ramps up to 10 N;
    from 0.25 s on the piston's load stays within 1 % of it at every step (1000 steps), its
    mean within 0.1 %; the floor carries the target plus the bed's weight (its mean, to
    1 %); the piston has moved down onto the bed. A mesh's load is the exact sum of its
    contacts' force along its direction, friction included."""
    sim = Simulation(servo_bed(mesh=mesh))
    (servo,) = sim.wall_motion.servos
    start = sim.store.pos[sim.walls[servo.row], 2]
    sim.run(int(0.1 / sim.dt))
    assert servo.load == 0.0 and sim.store.pos[sim.walls[servo.row], 2] == start
    sim.run(int(0.15 / sim.dt))
    loads, floor = [], []
    for _ in range(1000):
        sim.step()
        loads.append(servo.load)
        floor.append(floor_load(sim))
    loads = np.array(loads)
    assert np.abs(loads / SERVO_FORCE - 1.0).max() < 0.01
    assert loads.mean() == pytest.approx(SERVO_FORCE, rel=1e-3)
    owned = sim.store.owned
    weight = float((sim.store.mass[owned] * 9.81).sum())
    assert np.mean(floor) == pytest.approx(SERVO_FORCE + weight, rel=0.01)
    assert sim.store.pos[sim.walls[servo.row], 2] < start
    if mesh:  # (a step left open: the velocities its force pass saw)
        assert servo.mesh and np.array_equal(servo.direction, [0.0, 0.0, -1.0])
        sim.step(close=False)
        assert servo.load == mesh_load(sim, servo)
        w = sim.walls[servo.row]  # drawn where it is: its bottom face at the bed's top
        piston = sim.wallset.mesh_of[servo.row]
        verts, _ = KINDS["mesh"].draw(sim.store.pos[w], None, None, None, None, sim.time,
                                      piston)
        assert verts[:, 2].min() == pytest.approx(piston.verts[:, 2].min()
                                                  + sim.store.pos[w, 2], abs=1e-15)


def test_a_mesh_servos_load_holds_its_friction_along_its_direction():
    """A plate driven down and sideways (d̂ ∝ (0.6, 0, −0.8)) drags the bed's top through
    friction: its load, the exact sum of its contacts' force along d̂, holds the friction's
    part (it differs from the normal forces' alone)."""
    sim = Simulation(servo_bed(SERVO_FORCE, mesh=True, direction=(0.6, 0.0, -0.8)))
    (servo,) = sim.wall_motion.servos
    sim.run(1999)  # (pressing the bed as it settles)
    sim.step(close=False)
    normal_only = mesh_load(sim, servo, friction=False)
    assert servo.load == mesh_load(sim, servo) and servo.load > 1.0
    assert abs(servo.load - normal_only) > 1e-3 * servo.load


def test_a_wall_force_end_reads_a_mesh_servos_own_load():
    """A stage ending by ``wall_force`` on a mesh servo driven down and sideways reads the
    servo's own load (along its direction, friction included), not the normal forces' sum."""
    sim = Simulation(servo_bed(SERVO_FORCE, mesh=True, direction=(0.6, 0.0, -0.8), stages=[
        {"wall_force": {"wall": 0, "force": 2.0 * SERVO_FORCE}}, {}]))
    (servo,) = sim.wall_motion.servos
    sim.run(2000)
    kind, end = sim.stages.plan[0].end  # (the wall's index counted as the run counts it)
    reached, load = sim.stages._condition(sim, kind, {**end, "force": 1.0})
    assert reached and load == servo.load  # (read before: the normal forces' sum, now)
    assert load != mesh_load(sim, servo, friction=False)


def test_stages_retarget_a_mesh_servo():
    """The mesh piston presses the bed at 10 N; a stage after 0.25 s asks 5 N (its servo
    gives no direction: the mesh keeps its own): 0.1 s later the load is 5 N (1 %) and the
    piston has moved back up."""
    sim = Simulation(servo_bed(SERVO_FORCE, mesh=True, stages=[
        {"duration": 0.25},
        {"walls": [{"wall": 0, "servo": {"force": 5.0, "gain": 0.02, "max_speed": 0.2}}]}]))
    (servo,) = sim.wall_motion.servos
    sim.run(round(0.25 / sim.dt))
    assert servo.load == pytest.approx(SERVO_FORCE, rel=0.01)
    held = servo.offset
    sim.run(round(0.1 / sim.dt))
    assert servo.load == pytest.approx(5.0, rel=0.01) and servo.offset < held
    assert np.array_equal(servo.direction, [0.0, 0.0, -1.0]) and servo.spec["force"] == 5.0


@pytest.mark.parametrize("tube", [False, True], ids=["infinite-force", "tube-pressure"])
def test_radius_servo_holds_a_ring_at_the_closed_form(tube):
    """12 spheres in a ring inside a cylinder, no gravity: the servo shrinks the radius until
    the load (the sum of the normal forces) is 10 N — or, on a tube of length 2 cm, 2000 Pa
    × 2πRL at the radius R of the step —, ramped up in 0.02 s. From step 1500 on the load is
    within 1 % of its target; at step 2000 the radius is the closed form's (each sphere
    pressed by L/n, its neighbours by L/(2n sin(π/n)); ``scenes.ring_radius``) to 10⁻⁴ of the
    ring's compression, and the servo's speed is nearly 0."""
    kw = {"force": None, "pressure": ((0.0, 0.0), (0.02, 2000.0)), "length": 0.02} if tube \
        else {}
    sim = Simulation(servo_ring(**kw))
    (servo,) = sim.wall_motion.servos
    assert servo.radial and servo.sign == -1.0
    sim.run(1500)
    for _ in range(500):
        sim.step()
        target = 2000.0 * 2.0 * math.pi * servo.radius * 0.02 if tube else RING_FORCE
        assert servo.load == pytest.approx(target, rel=0.01)
    want = ring_radius(0.0, 0.02, 2000.0) if tube else ring_radius(RING_FORCE)
    assert servo.radius == sim.wallset.table[servo.row, 1]
    assert abs(servo.radius - want) < 1e-4 * (servo.radius0 - want)
    assert abs(servo.speed) < 1e-4  # m/s


def test_a_radius_servo_moves_the_surface_in_contacts_reach_and_checks():
    """The cylinder's surface velocity at a contact is Ṙ q̂ (the table's ``RATE``; on top of
    its translation); the lists reach half the skin farther for it, rebuild before it moves
    that far at its speed limit, and the fast-wall refusal reads that limit."""
    ws = WallSet(np.zeros((0, 3)), np.zeros((0, 3)), [
        {"kind": CYLINDER_INSIDE, "point": (0.0, 0.0, 0.0), "normal": (0.0, 0.0, 1.0),
         "radius": 1.0}])
    ws.table[0, RATE] = -0.25
    ws.table[0, VX] = 0.5
    x, y = 0.6, 0.8  # q̂ = (0.6, 0.8, 0)
    got = wall_contact.py_func(x * 0.95, y * 0.95, 0.3, 0.1, np.zeros((1, 3)),
                               ws.normals, ws.table, 0, 0)
    assert got[:3] == pytest.approx((x, y, 0.0))
    assert got[3] == pytest.approx(0.1 - 0.05)
    assert got[4:] == pytest.approx((0.5 - 0.25 * x, -0.25 * y, 0.0))
    sim = Simulation(servo_ring())
    (servo,) = sim.wall_motion.servos
    skin = sim.neighbours.skin
    assert sim.wallset.table[servo.row, REACH] == 0.5 * skin
    limit = servo.spec["max_speed"]
    assert sim.schedule.wall_every == math.floor(0.5 * skin / (limit * sim.dt))
    assert sim.wallset.approach()[servo.row] == limit
    with pytest.raises(FastWallError, match=r"walls\[0\] \(cylinder\)"):
        Simulation(servo_ring().with_(walls=[{**servo_ring().walls[0].__dict__,
                                              "servo": {"force": 1.0, "gain": 1e-3,
                                                        "max_speed": 30.0}}]))


def test_stages_retarget_a_radius_servo():
    """A stage after 0.1 s halves the ring's force: the radius grows back and the load is 5 N
    (1 %) 0.15 s later."""
    cfg = servo_ring(stages=[{"duration": 0.1},
                             {"walls": [{"wall": 0, "servo": {"force": 5.0, "gain": 0.002,
                                                              "max_speed": 0.5}}]}])
    sim = Simulation(cfg)
    (servo,) = sim.wall_motion.servos
    sim.run(round(0.1 / sim.dt))
    held = servo.radius
    sim.run(round(0.15 / sim.dt))
    assert servo.load == pytest.approx(5.0, rel=0.01) and servo.radius > held


@pytest.mark.slow
def test_servo_follows_a_target_table():
    """A pressure (over the box's area, 0.0025 m²) ramped to 1600 Pa (4 N) by 0.12 s, then
    ramped to 3200 Pa (8 N) from 0.45 s to 0.47 s and held: the load is 4 N before the second
    ramp and 8 N after it (1 %)."""
    sim = Simulation(servo_bed(force=None, pressure={
        "pressure": [[0.1, 0.0], [0.12, 1600.0], [0.45, 1600.0], [0.47, 3200.0]],
        "area": 0.0025}))
    (servo,) = sim.wall_motion.servos
    sim.run(int(0.45 / sim.dt))
    assert servo.load == pytest.approx(4.0, rel=0.01)
    sim.run(int(0.15 / sim.dt))
    assert servo.load == pytest.approx(8.0, rel=0.01)


PLANE = {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}
CYLINDER = {"type": "cylinder", "point": [0, 0, 0], "axis": [0, 0, 1], "radius": 1.0}
MESH = {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "triangles": [[0, 1, 2]]}
SERVO = {"force": 1.0, "gain": 1.0, "max_speed": 1.0}


@pytest.mark.parametrize("wall, message", [
    ({"type": "cone", "point": [0, 0, 0], "axis": [0, 0, 1], "lo": 0.0, "hi": 1.0,
      "radius_lo": 1.0, "radius_hi": 0.5, "servo": SERVO},
     "walls.servo = {'force': 1.0, 'gain': 1.0, 'max_speed': 1.0}: a servo drives a plane, a "
     "mesh or a cylinder's radius, not a cone"),
    ({**PLANE, "velocity": [0, 0, 1], "servo": SERVO}, "walls.servo = "),
    ({**CYLINDER, "velocity": [0, 0, 1], "servo": SERVO}, "walls.servo = "),
    ({**PLANE, "servo": {**SERVO, "gain": 0.0}}, "walls.servo.gain = 0.0: must be > 0"),
    ({**PLANE, "servo": {"pressure": 1.0, "gain": 1.0, "max_speed": 1.0}},
     "walls.servo.area = None: required with pressure"),
    ({**PLANE, "servo": {"force": [[0.0, 1.0], [0.0, 2.0]], "gain": 1.0, "max_speed": 1.0}},
     "walls.servo.force = [[0.0, 1.0], [0.0, 2.0]]: its times must increase"),
    ({**PLANE, "servo": {"force": 1.0, "gain": 1.0, "speed": 1.0}},
     "walls.servo.speed = 1.0: unknown key"),
    ({**PLANE, "servo": {**SERVO, "direction": [0, 0, 1]}},
     "walls.servo.direction = [0.0, 0.0, 1.0]: only for a mesh (a plane's servo moves it "
     "along its normal)"),
    ({**CYLINDER, "servo": {**SERVO, "direction": [0, 0, 1]}},
     "walls.servo.direction = [0.0, 0.0, 1.0]: only for a mesh (a cylinder's servo changes"),
    ({**CYLINDER, "servo": {"pressure": 100.0, "gain": 1.0, "max_speed": 1.0}},
     "walls.servo.pressure = 100.0: an infinite cylinder has no area: give force"),
    ({**CYLINDER, "length": 1.0, "servo": {"pressure": 100.0, "area": 2.0, "gain": 1.0,
                                            "max_speed": 1.0}},
     "walls.servo.area = 2.0: a cylinder's area is its own, 2πRL"),
    ({**MESH, "servo": SERVO},
     "walls.servo.direction = None: required for a mesh's servo"),
    ({**MESH, "servo": {**SERVO, "direction": [0, 0, 0]}},
     "walls.servo.direction = [0.0, 0.0, 0.0]: must not be zero"),
    ({**MESH, "servo": {**SERVO, "direction": [0, "down", 0]}},
     "walls.servo.direction = [0, 'down', 0]: expected 3 numbers"),
])
def test_bad_servos_are_one_line_naming_the_field(wall, message):
    with pytest.raises(ConfigError) as err:
        WallConfig(**wall)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


@pytest.mark.parametrize("wall, servo, message", [
    (MESH, {**SERVO, "direction": [0, 0, 1]}, "stages[0].walls[0].servo.direction = [0.0, 0.0, "
     "1.0]: a stage's servo keeps the mesh's direction [0.0, 0.0, -1.0] (omit it)"),
    ({**CYLINDER, "servo": SERVO}, {"pressure": 5.0, "gain": 1.0, "max_speed": 1.0},
     "stages[0].walls[0].servo.pressure = 5.0: an infinite cylinder has no area"),
    ({**PLANE, "servo": SERVO}, {**SERVO, "direction": [1, 0, 0]},
     "stages[0].walls[0].servo.direction = [1.0, 0.0, 0.0]: only for a mesh"),
])
def test_a_stages_servo_fits_its_wall(wall, servo, message):
    """A stage's new servo is checked against its wall as the wall's own; a mesh's may omit
    its direction (it keeps the wall's), and a mesh without a servo takes none."""
    if wall is MESH:
        wall = {**MESH, "servo": {**SERVO, "direction": [0, 0, -1]}}
        SimulationConfig(walls=[wall], stages=[{"duration": 1.0}, {"walls": [
            {"wall": 0, "servo": SERVO}]}])  # no direction: the mesh's
    with pytest.raises(ConfigError) as err:
        SimulationConfig(walls=[wall], stages=[{"duration": 1.0, "walls": [
            {"wall": 0, "servo": servo}]}])
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="a mesh's motion is set for the whole run"):
        SimulationConfig(walls=[MESH], stages=[{"duration": 1.0, "walls": [
            {"wall": 0, "velocity": [1, 0, 0]}]}])


@pytest.mark.parametrize("edit, needle", [
    (lambda t: t.clear(), "attribute servos holds walls [], its stored config has servo walls "
                          "['-3']"),
    (lambda t: t.update({"-3": [0.1, "fast"]}), "attribute servos: wall -3: [0.1, 'fast']: "
                                                 "expected [offset, speed]"),
    (lambda t: t.update({"-3": [float("nan"), 0.0]}), "expected [offset, speed], two finite"),
])
def test_a_checkpoints_servo_state_is_checked(tmp_path, edit, needle):
    """A restart refuses, in one line, a checkpoint whose servo state is not its servo
    walls' two finite numbers (a checkpoint without it — from before servos — has none)."""
    import json

    import h5py

    from pdyn.config import OutputConfig
    from pdyn.io.hdf5 import OutputFileError
    from pdyn.restart import from_checkpoint

    sim = Simulation(servo_bed(SERVO_FORCE, output=OutputConfig(
        folder=str(tmp_path), checkpoint_every=20, overwrite=True)))
    sim.run(20)
    path = tmp_path / "checkpoints" / "ckpt_00000020.h5"
    assert json.loads(h5py.File(path, "r").attrs["servos"]) == {"-3": sim.wall_motion.servos[0]
                                                                .state()}
    with h5py.File(path, "r+") as f:
        table = json.loads(f.attrs["servos"])
        edit(table)
        f.attrs["servos"] = json.dumps(table)
    with pytest.raises(OutputFileError) as err:
        from_checkpoint(path)
    assert needle in str(err.value) and "\n" not in str(err.value)
