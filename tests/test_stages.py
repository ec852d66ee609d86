"""Staged runs (``[[stages]]``, ``pdyn.stages``): each stage ends where its duration, time or
condition says, its changes (gravity, a wall's motion, a servo's target, friction) act from the
step after, a wall continues from where it was, a hopper's outlet opens and closes and its
mass out ends a stage, the run stops with the last stage; bad stage
tables are one line naming the field; a checkpoint's stage state is range-checked. N ranks and
restarts: the ``staged-drum`` row of tests/mpi/test_same_bits.py."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, InsertionConfig, OutputConfig, SimulationConfig
from pdyn.io.hdf5 import OutputFileError
from pdyn.restart import check_stages
from pdyn.simulation import Simulation

from .mpi.scenes import drum_with_piston, servo_bed, staged_drum


def energy_per_sphere(sim) -> float:
    """Mean kinetic energy per sphere, translational and rotational (J)."""
    s, h = sim.store, sim.store.owned
    kin = 0.5 * s.mass[h] * (s.vel[h] ** 2).sum(1)
    rot = 0.2 * s.mass[h] * s.radius[h] ** 2 * (s.omega[h] ** 2).sum(1)
    return float((kin + rot).sum() / h.size)


def test_stages_end_where_asked_and_change_from_their_start(tmp_path):
    """The drum's piston moves in at 0.5 m/s for 0.006 s; the second stage turns it back at
    0.3 m/s plus a sine from where it is, halves gravity and raises μ to 0.6 until the mean
    energy per sphere is below 3.1e-5 J (checked every 5 steps); the third stops it there.
    The piston's place follows the closed form of each stage from its start to rounding;
    the condition held at the check that ended the stage and not at the one before; thermo
    has the stage."""
    out = OutputConfig(folder=str(tmp_path), thermo_every=10, overwrite=True)
    sim = Simulation(staged_drum(output=out))
    dt, piston = sim.dt, sim.walls[-1]
    first = round(0.006 / dt)
    y, energy = [], {}
    for _ in range(300):
        sim.step()
        y.append(sim.store.pos[piston, 1])
        if sim.step_index > first and (sim.step_index - first) % 5 == 0:
            energy[sim.step_index] = energy_per_sphere(sim)
        if sim.step_index == first:
            assert sim.gravity[2] == -4.9 and sim.contact.law.tangential_model.mu == 0.6
    starts = sim.stages.starts
    assert starts[:2] == [0, first] and len(starts) == 3
    second = starts[2]
    assert energy[second] < 3.1e-5 <= energy[second - 5]
    y = np.array(y)
    steps = np.arange(1, 301)
    t1, t2 = first * dt, second * dt
    want = -0.1 + 0.5 * steps * dt
    y1 = -0.1 + 0.5 * t1
    tt = steps * dt - t1
    back = y1 - 0.3 * tt + 0.0005 * np.sin(2 * math.pi * 40.0 * tt)
    want = np.where(steps > first, back, want)
    y2 = y1 - 0.3 * (t2 - t1) + 0.0005 * np.sin(2 * math.pi * 40.0 * (t2 - t1))
    want = np.where(steps > second, y2, want)
    assert np.abs(y - want).max() < 1e-15
    head, *rows = (tmp_path / "thermo.csv").read_text().splitlines()
    assert head.split(",")[-1] == "stage"
    stage = {int(r.split(",")[0]): int(r.split(",")[-1]) for r in rows}
    assert stage[first - first % 10] == 0 and stage[300] == 2


def test_a_servo_stage_presses_and_the_run_ends_with_the_last_stage():
    """A bed settles under a piston at no load until at rest (1e-8 J a sphere, which it does
    not reach within its max_duration of 0.3 s), then a stage asks the servo for 5 N until the
    piston carries 4.95 N, then one halves gravity for 0.02 s; run() with no steps stops where
    the last stage ends."""
    stages = [
        {"name": "settle", "kinetic_energy": 1e-8, "check_every": 100, "max_duration": 0.3},
        {"name": "press", "walls": [{"wall": 0, "servo": {"force": 5.0, "gain": 0.02,
                                                          "max_speed": 0.2}}],
         "wall_force": {"wall": 0, "force": 4.95}, "check_every": 10},
        {"name": "lighter", "gravity": [0.0, 0.0, -4.9], "duration": 0.02},
    ]
    sim = Simulation(servo_bed(force=0.0, layers=2, stages=stages))
    (servo,) = sim.wall_motion.servos
    loads = {}
    sim.run(callback=lambda s: loads.__setitem__(s.step_index, servo.load))
    starts = sim.stages.starts
    assert sim.stages.finished and len(starts) == 3 and starts[1] == round(0.3 / sim.dt)
    assert sim.step_index == starts[2] + round(0.02 / sim.dt)
    assert loads[starts[2]] >= 4.95 > loads[starts[2] - 10]
    assert servo.spec["force"] == 5.0 and servo.since == starts[1]


@pytest.mark.parametrize("stages, message", [
    ([{"duration": 0.1}, {"name": "x", "time": 1.0, "duration": 2.0}],
     "stages[1].time = 1.0: a stage has one end, it gives duration too"),
    ([{"name": "settle"}, {"duration": 1.0}],
     "stages[0] = {'name': 'settle'}: give its end"),
    ([{"duration": 0.0}], "stages[0].duration = 0.0: must be > 0"),
    ([{"kinetic_energy": 1e-6, "check_every": 0}], "stages[0].check_every = 0: must be >= 1"),
    ([{"duration": 1.0, "max_duration": 2.0}],
     "stages[0].max_duration = 2.0: only with a condition"),
    ([{"wall_force": {"wall": 0}}], "stages[0].wall_force = {'wall': 0}: expected {wall = k"),
    ([{"wall_force": {"wall": 5, "force": 1.0}}],
     "stages[0].wall_force.wall = 5: the run has 2 [[walls]]"),
    ([{"duration": 1.0, "walls": [{"wall": 1, "speed": 1.0}]}],
     "stages[0].walls[0].speed = 1.0: unknown key"),
    ([{"duration": 1.0, "walls": [{"wall": 1, "servo": {"force": 1.0, "gain": 1.0,
                                                      "max_speed": 1.0}}]}],
     "stages[0].walls[0].wall = 1: a new servo only for a wall that has one"),
    ([{"duration": 1.0, "walls": [{"wall": 1, "translation": [{"type": "wiggle"}]}]}],
     "stages[0].walls[0].translation[0].type = 'wiggle'"),
    ([{"duration": 1.0, "contact": {"youngs_modulus": 1e7}}],
     "stages[0].contact.youngs_modulus = 10000000.0: a stage changes only friction, "
     "rolling_friction, restitution"),
    ([{"duration": 1.0, "contact": {"restitution": 1.5}}],
     "stages[0].contact.restitution = 1.5: must be in (0, 1]"),
    ([{"duration": 1.0, "materials": [{"name": "glass", "friction": 0.1}]}],
     "stages[0].materials = [{'friction': 0.1, 'name': 'glass'}]: the run has no [[materials]]"),
    ([{"duration": 1.0, "gravity": [0.0, 1.0]}], "stages[0].gravity = [0.0, 1.0]"),
    ({"duration": 1.0}, "stages = {'duration': 1.0}: expected a list of tables [[stages]]"),
    ([{"duration": 1.0, "outlet": "ajar"}],
     "stages[0].outlet = 'ajar': expected \"open\" or \"closed\""),
    ([{"mass_out": -1.0}], "stages[0].mass_out = -1.0: must be > 0"),
])
def test_bad_stages_are_one_line_naming_the_field(stages, message):
    with pytest.raises(ConfigError) as err:
        drum_with_piston(stages=stages)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("stage, field", [({"mass_out": 0.01}, "mass_out"),
                                          ({"duration": 0.01, "outlet": "open"}, "outlet")])
def test_an_outlet_stage_in_a_run_without_an_outlet_is_refused(stage, field):
    with pytest.raises(ConfigError, match=rf"stages\[0\]\.{field}: the run has no outlet"):
        Simulation(drum_with_piston(stages=[stage]))


def test_a_hopper_fills_closed_then_drains_a_mass_and_closes():
    """Spheres pour into a heap over an outlet that stage 0 keeps closed (though its
    ``outlet_start`` is 0); stage 1 opens it until 0.02 kg has left (checked every 10 steps);
    stage 2 closes it again. The mass out is each drain's masses summed with ``math.fsum``,
    added up drain by drain; the stage ended at the check where it reached 0.02 kg and not at
    the one before; nothing leaves while the outlet is closed."""
    stages = [{"name": "fill", "outlet": "closed", "duration": 0.35},
              {"name": "drain", "outlet": "open", "mass_out": 0.02, "check_every": 10},
              {"name": "hold", "outlet": "closed", "duration": 0.05}]
    ins = InsertionConfig(region_lo=(1.0, 1.0, 1.0), region_hi=(2.0, 2.0, 2.6), rate=400.0,
                          radius_min=0.08, radius_max=0.12, velocity=(0.0, 0.0, -3.0),
                          total=120, every=20, seed=4, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(3.0, 3.0, 0.5), outlet_start=0.0)
    sim = Simulation(SimulationConfig(scene="heap", scale=0.05, insertion=ins, progress=False,
                                      stages=stages))
    mass, out, seen = {}, {}, []

    def watch(s):
        h = s.store.owned
        now = dict(zip(s.store.gid[h].tolist(), s.store.mass[h].tolist()))
        gone = [mass[g] for g in mass if g not in now]
        if gone:
            seen.append(math.fsum(gone))
        mass.clear()
        mass.update(now)
        out[s.step_index] = s.inserter.removed_mass

    sim.run(callback=watch)
    starts, dt = sim.stages.starts, sim.dt
    assert sim.stages.finished and starts[1] == round(0.35 / dt)
    assert out[starts[1]] == 0.0 and sim.inserter.removed > 0
    assert out[starts[2]] >= 0.02 > out[starts[2] - 10]
    total = 0.0
    for drained in seen:
        total += drained
    assert sim.inserter.removed_mass == total == out[starts[2]]  # closed again: no more


def test_a_stage_that_would_switch_rotation_is_refused_before_the_first_step():
    """Friction and rolling friction set to 0 in a frictional run would switch the spheres'
    rotation off: refused when the run is built, naming the field."""
    with pytest.raises(ConfigError, match=r"stages\[1\]\.contact: sets friction and rolling "
                                          "friction to 0"):
        Simulation(drum_with_piston(stages=[{"duration": 0.01},
                                            {"contact": {"friction": 0.0,
                                                         "rolling_friction": 0.0}}]))


@pytest.mark.parametrize("held", [
    None, {"starts": [1], "finished": False}, {"starts": [0, 5, 3], "finished": False},
    {"starts": [0, 5, 9, 12, 20], "finished": False}, {"starts": [0, 50], "finished": False},
    {"starts": [0, 5]}, {"starts": [0, 5.0], "finished": False}, [0, 5],
])
def test_a_damaged_stage_state_is_refused(held):
    """The checkpoint's ``stages`` must fit the stored config's three stages and its step 20."""
    cfg = staged_drum()
    with pytest.raises(OutputFileError, match="attribute stages"):
        check_stages("ckpt.h5", {"step": 20, "stages": held}, cfg)
    check_stages("ckpt.h5", {"step": 20, "stages": {"starts": [0, 5, 20], "finished": False}},
                 cfg)
