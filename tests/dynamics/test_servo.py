"""Servo walls (issue 48, ``pdyn.dynamics.wallmotion.Servo``): a piston on a bed holds its
target force at steady state, and the floor carries that force plus the bed's weight; the
servo's refusals."""

import numpy as np
import pytest

from pdyn.config import ConfigError, WallConfig
from pdyn.simulation import Simulation

from ..mpi.scenes import SERVO_FORCE, servo_bed


def floor_load(sim) -> float:
    """The force (N) the spheres press on the floor (the box face z = lo, wall id −1)."""
    got = sim.wall_contacts()
    return float(got["force"][got["id"][:, 1] == -1].sum())


def test_servo_piston_holds_its_target_force_on_a_bed():
    """The bed settles for 0.1 s under the piston held at no load (it stays in place), then
    the target ramps up to 10 N; from 0.25 s on the piston's load stays within 1 % of it at
    every step (1000 steps), its mean within 0.1 %; the floor carries the target plus the
    bed's weight (its mean, to 1 %); the piston has moved down onto the bed."""
    sim = Simulation(servo_bed())
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


@pytest.mark.parametrize("wall, message", [
    ({"type": "cylinder", "point": [0, 0, 0], "axis": [0, 0, 1], "radius": 1.0,
      "servo": {"force": 1.0, "gain": 1.0, "max_speed": 1.0}},
     "walls.servo = {'force': 1.0, 'gain': 1.0, 'max_speed': 1.0}: only a plane"),
    ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "velocity": [0, 0, 1],
      "servo": {"force": 1.0, "gain": 1.0, "max_speed": 1.0}}, "walls.servo = "),
    ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
      "servo": {"force": 1.0, "gain": 0.0, "max_speed": 1.0}},
     "walls.servo.gain = 0.0: must be > 0"),
    ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
      "servo": {"pressure": 1.0, "gain": 1.0, "max_speed": 1.0}},
     "walls.servo.area = None: required with pressure"),
    ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
      "servo": {"force": [[0.0, 1.0], [0.0, 2.0]], "gain": 1.0, "max_speed": 1.0}},
     "walls.servo.force = [[0.0, 1.0], [0.0, 2.0]]: its times must increase"),
    ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
      "servo": {"force": 1.0, "gain": 1.0, "speed": 1.0}},
     "walls.servo.speed = 1.0: unknown key"),
])
def test_bad_servos_are_one_line_naming_the_field(wall, message):
    with pytest.raises(ConfigError) as err:
        WallConfig(**wall)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


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
