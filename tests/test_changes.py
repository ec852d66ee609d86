"""Changes of a run after its start (issue 48): a stage's time step (``[[stages]] dt``, the
time piecewise, ``pdyn.clock``) and the changes made from Python between runs
(``Simulation.change`` and its setters, ``pdyn.stages.Changes``): closed forms across a
switch, stage ends in the changed time, each change from the next step on and the same bits
as the stage that makes it (the box's control too: ``Simulation.set_box``), one-line
refusals, restarts bit for bit. N ranks: the
``staged-dt``, ``changed-drum`` and ``triaxial-set-box`` rows of
tests/mpi/test_same_bits.py."""

import math

import numpy as np
import pytest

from pdyn.clock import Clock
from pdyn.config import (BoxConfig, ConfigError, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.restart import from_checkpoint
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

from .mpi.scenes import (FRICTIONAL_STATE, TRIAXIAL_RATE, TRIAXIAL_SHEAR_BOX, drum_with_piston,
                         gather_fields, pressed_triaxial, quick_triaxial)

G = -9.81


def falling(dt=5e-4, **cfg):
    """One sphere (r 0.1 m, 1 kg/m³ … of mass m) falling from rest at z = 5 m in a box 10 m
    high under gravity: nothing touches it for 0.9 s."""
    return SimulationConfig(
        particles=ParticlesConfig(positions=[[1.0, 1.0, 5.0]], radii=[0.1], density=1000.0,
                                  velocities=[[0.0, 0.0, 0.0]]),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(2.0, 2.0, 10.0)),
        contact=ContactConfig(stiffness=1e5, restitution=0.5, friction=0.2), gravity=(0.0, 0.0, G), dt=dt,
        progress=False, **cfg)


def piecewise(steps, starts, dts):
    """t(n) of the steps ``steps`` with time step ``dts[k]`` after step ``starts[k]``
    (the closed form the clock owns, computed here from scratch)."""
    out = []
    for n in steps:
        t, k = 0.0, 0
        while k + 1 < len(starts) and starts[k + 1] <= n:
            t += (starts[k + 1] - starts[k]) * dts[k]
            k += 1
        out.append(t + (n - starts[k]) * dts[k])
    return np.array(out)


def test_the_clock_is_step_times_dt_until_a_switch_then_piecewise_and_continuous():
    c = Clock(1e-3)
    assert [c.time(n) for n in (0, 7, 123)] == [0.0, 7 * 1e-3, 123 * 1e-3]
    c.switch(100, 4e-4)
    assert c.time(100) == 100 * 1e-3 and c.time(130) == 100 * 1e-3 + 30 * 4e-4
    assert c.time(99) == 99 * 1e-3 and c.dt == 4e-4 and c.largest == 1e-3
    assert c.since(110, 130) == 20 * 4e-4 and c.since(90, 130) == c.time(130) - c.time(90)
    c.switch(100, 4e-4)  # the same step, the same dt: nothing
    assert c.starts == [0, 100]


def test_free_fall_is_exact_across_a_dt_switch():
    """Velocity Verlet integrates a constant force exactly: across the switch (the closing
    half-kick of the last coarse step with the coarse dt, the next step's opening one with the
    fine dt) z and v follow z₀ + g t²/2 and g t of the piecewise time to rounding — a half-kick
    of the wrong dt would be off by g (dt₁ − dt₂)/2 ≈ 1.5e-3 m/s."""
    sim = Simulation(falling(stages=[{"duration": 0.05}, {"dt": 2e-4}]))
    h = sim.store.owned[0]
    z, v = [], []
    for _ in range(400):
        sim.step()
        z.append(sim.store.pos[h, 2])
        v.append(sim.store.vel[h, 2])
    assert sim.stages.starts == [0, 100] and sim.dt == 2e-4
    t = piecewise(range(1, 401), [0, 100], [5e-4, 2e-4])
    assert sim.time == t[-1] == 100 * 5e-4 + 300 * 2e-4
    assert np.abs(np.array(z) - (5.0 + 0.5 * G * t ** 2)).max() < 1e-12
    assert np.abs(np.array(v) - G * t).max() < 1e-12


def column(dt=5e-4, **cfg):
    """Three spheres (r 0.1 m, 1000 kg/m³) stacked on the floor at the overlaps that carry
    their weight (linear law, k = 1e5 N/m): a bed at rest to rounding."""
    r, k = 0.1, 1e5
    m = 1000.0 * 4.0 / 3.0 * math.pi * r ** 3
    z0 = r - 3 * m * -G / k
    z1 = z0 + 2 * r - 2 * m * -G / k
    z2 = z1 + 2 * r - m * -G / k
    return falling(dt).with_(particles=ParticlesConfig(
        positions=[[1.0, 1.0, z0], [1.0, 1.0, z1], [1.0, 1.0, z2]], radii=[r] * 3,
        density=1000.0), initial_overlap="allow", **cfg)


def test_a_resting_bed_stays_at_rest_across_a_dt_switch():
    sim = Simulation(column(stages=[{"duration": 0.025}, {"dt": 1.25e-4}]))
    start = sim.store.pos[sim.store.owned].copy()
    sim.run(250)
    assert sim.stages.starts == [0, 50]
    assert np.abs(sim.store.vel[sim.store.owned]).max() < 1e-12
    assert np.abs(sim.store.pos[sim.store.owned] - start).max() < 1e-13


def test_a_programmed_wall_follows_its_formula_across_a_dt_switch_and_a_time_end():
    """The piston moves in at 0.5 m/s; stage 1 halves dt and gives it a program (back at
    0.3 m/s plus a sine) from where it is, until t = 0.009 s; stage 2 stops it. Its place is
    the closed form of each stage in the piecewise time to rounding, continuous at the
    switches; stage 1 ends at the first step whose time reaches 0.009 s."""
    probe = Simulation(drum_with_piston())
    dt = probe.dt
    first = 40
    fine = dt / 2
    stages = [{"duration": first * dt},
              {"dt": fine, "time": 0.009, "walls": [{"wall": 1, "velocity": [0.0, -0.3, 0.0],
                                                    "translation": [{
                                                        "type": "sine", "frequency": 40.0,
                                                        "amplitude": [0.0, 0.0005, 0.0]}]}]},
              {"walls": [{"wall": 1, "velocity": [0.0, 0.0, 0.0]}]}]
    sim = Simulation(drum_with_piston(stages=stages))
    piston = sim.walls[-1]
    y = []
    for _ in range(300):
        sim.step()
        y.append(sim.store.pos[piston, 1])
    second = first + next(n for n in range(1, 10 ** 6) if first * dt + n * fine >= 0.009)
    assert sim.stages.starts == [0, first, second]
    steps = np.arange(1, 301)
    t = piecewise(steps, [0, first], [dt, fine])
    t1 = first * dt
    y1 = -0.1 + 0.5 * t1
    tau = t - t1

    def back(tau):
        return y1 - 0.3 * tau + 0.0005 * np.sin(2 * math.pi * 40.0 * tau)

    want = np.where(steps > first, back(tau), -0.1 + 0.5 * t)
    want = np.where(steps > second, back(t[second - 1] - t1), want)
    assert np.abs(np.array(y) - want).max() < 1e-15
    assert abs(back(0.0) - y1) < 1e-17  # continuous at the switch
    steady = Simulation(drum_with_piston(stages=[{"duration": first * dt}, {"dt": fine}]))
    y = []
    for _ in range(100):  # the config's motion goes on across the switch, in the new time
        steady.step()
        y.append(steady.store.pos[steady.walls[-1], 1])
    t = piecewise(steps[:100], [0, first], [dt, fine])
    assert np.abs(np.array(y) - (-0.1 + 0.5 * t)).max() < 1e-15


def changes_of(dt):
    """What the second stage of :func:`two_stages` changes (and ``Simulation.change`` makes)."""
    return {"walls": [{"wall": 1, "velocity": [0.0, -0.3, 0.0]}],
            "gravity": [0.0, 0.0, -4.9], "contact": {"friction": 0.6, "restitution": 0.4},
            "dt": dt / 2}


def test_a_change_from_python_is_the_stage_that_makes_it_bit_for_bit():
    """The changes of a stage that begins at step 60 (a wall's motion, gravity, friction,
    restitution, the time step), made instead from Python after run(60), act from the next
    step on and give the staged run's bits."""
    dt = Simulation(drum_with_piston()).dt
    staged = Simulation(drum_with_piston(stages=[{"duration": 60 * dt}, changes_of(dt)]))
    staged.run(200)
    sim = Simulation(drum_with_piston())
    sim.run(60)
    before = sim.store.pos[sim.walls[-1]].copy()
    sim.change(**changes_of(dt))
    assert sim.gravity[2] == -4.9 and sim.dt == dt / 2
    assert sim.contact.law.tangential_model.mu == 0.6
    assert np.array_equal(sim.store.pos[sim.walls[-1]], before)  # from the next step
    sim.run(140)
    assert sim.time == staged.time == 60 * dt + 140 * (dt / 2)
    for x, y in zip(gather_fields(staged, FRICTIONAL_STATE), gather_fields(sim, FRICTIONAL_STATE)):
        assert np.array_equal(x, y)


def test_the_setters_change_what_they_name_from_the_next_step():
    sim = Simulation(falling())
    h = sim.store.owned[0]
    sim.run(10)
    v = sim.store.vel[h, 2]
    sim.set_gravity([0.0, 0.0, -1.0])
    sim.run(10)
    # the forces of step 10 (the old gravity) open step 11: velocity Verlet's F(x₁₀)
    assert sim.store.vel[h, 2] == pytest.approx(v + 0.5 * 5e-4 * G - 9.5 * 5e-4, abs=1e-14)
    sim.set_dt(2.5e-4)
    sim.run(10)
    assert sim.time == 20 * 5e-4 + 10 * 2.5e-4
    sim.set_material(friction=0.4, restitution=0.9)
    assert sim.contact.law.tangential_model.mu == 0.4
    assert [(s, c.contact) for s, c in sim.changes.made][-1] == (
        30, {"friction": 0.4, "restitution": 0.9})
    wall = Simulation(drum_with_piston())
    wall.run(20)
    y = wall.store.pos[wall.walls[-1], 1]
    wall.set_wall(1, velocity=[0.0, -0.2, 0.0])
    wall.run(10)
    assert wall.store.pos[wall.walls[-1], 1] == pytest.approx(y - 0.2 * 10 * wall.dt,
                                                              abs=1e-15)


@pytest.mark.parametrize("change, message", [
    ({"dt": -1.0}, "change.dt = -1.0: must be > 0"),
    ({"dt": 1.0}, "change.dt = 1.0: above the time-step limit"),
    ({"speed": 1.0}, "change.speed = 1.0: unknown change (known: gravity, walls"),
    ({"walls": [{"wall": 7, "velocity": [0.0, 1.0, 0.0]}]},
     "change.walls[0].wall = 7: the run has 2 [[walls]]"),
    ({"contact": {"friction": -0.1}}, "change.contact.friction = -0.1: must be >= 0"),
    ({"contact": {"friction": 0.0, "rolling_friction": 0.0}},
     "change.contact: sets friction and rolling friction to 0"),
    ({"outlet": "open"}, "change.outlet: the run has no outlet"),
    ({"gravity": [0.0, 1.0]}, "change.gravity = [0.0, 1.0]"),
])
def test_bad_changes_are_one_line_and_change_nothing(change, message):
    sim = Simulation(drum_with_piston())
    law, gravity = sim.contact.law, sim.gravity.copy()
    with pytest.raises(ConfigError) as err:
        sim.change(**change)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert sim.contact.law is law and np.array_equal(sim.gravity, gravity)
    assert sim.changes.made == [] and sim.dt == sim.changes.dt


def test_a_stage_dt_above_the_limit_or_too_fast_for_a_wall_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"^stages\[1\]\.dt = 1\.0: above the time-step "
                                          "limit") as err:
        Simulation(drum_with_piston(stages=[{"duration": 0.01}, {"dt": 1.0}]))
    assert "\n" not in str(err.value)
    skin = Simulation(drum_with_piston()).neighbours.skin
    fast = skin / 0.5  # the piston (0.5 m/s) would step a whole skin a step
    with pytest.raises(ConfigError, match=rf"^stages\[1\]\.dt = {fast!r}: walls\[1\] "
                                          r"\(plane\): its surface approaches"):
        Simulation(drum_with_piston(stages=[{"duration": 0.01}, {"dt": fast}],
                                    allow_large_dt=True))


def checkpointed(tmp_path, cfg, steps, changes=None):
    """Run ``cfg`` for ``steps`` steps (``changes``: (step, dict) made from Python after that
    step), a checkpoint every 50; the run and its continuation from step 100."""
    out = OutputConfig(folder=str(tmp_path / "a"), checkpoint_every=50, overwrite=True)
    sim = Simulation(cfg.with_(output=out))
    if changes:
        sim.run(changes[0])
        sim.change(**changes[1])
    sim.run(steps - sim.step_index)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000100.h5",
                           output=OutputConfig(folder=str(tmp_path / "b"), overwrite=True))
    cont.run(steps - 100)
    return sim, cont


@pytest.mark.parametrize("how", ["stage", "python"])
def test_a_restart_after_a_dt_switch_or_a_change_continues_bit_for_bit(tmp_path, how):
    """A stage switches dt (and the rest of :func:`changes_of`) at step 100, the checkpoint's
    own step (written after the switch), or Python makes the changes after step 70: the run
    continued from the checkpoint of step 100 has the same bits, the same clock and law."""
    dt = Simulation(drum_with_piston()).dt
    if how == "stage":
        sim, cont = checkpointed(tmp_path, drum_with_piston(
            stages=[{"duration": 100 * dt}, changes_of(dt)]), 200)
    else:
        sim, cont = checkpointed(tmp_path, drum_with_piston(), 200, (70, changes_of(dt)))
        assert [s for s, _ in cont.changes.made] == [70]
    assert cont.dt == sim.dt == dt / 2 and cont.time == sim.time
    assert cont.clock.starts == sim.clock.starts and cont.changes.dt == dt
    assert cont.contact.law.tangential_model.mu == 0.6
    for x, y in zip(gather_fields(sim, FRICTIONAL_STATE), gather_fields(cont, FRICTIONAL_STATE)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("held", [
    {"dt": 0.0, "made": []}, {"dt": 1e-4}, {"dt": 1e-4, "made": [[300, {"gravity": [0, 0, 1]}]]},
    {"dt": 1e-4, "made": [[5, {"gravity": [0, 0, 1]}], [3, {"gravity": [0, 0, 1]}]]},
    {"dt": 1e-4, "made": [[5, {"walls": [{"wall": 9, "velocity": [0, 0, 1]}]}]]},
    {"dt": 1e-4, "made": [[5, {"speed": 1}]]}, [1e-4],
])
def test_a_damaged_changes_state_is_refused(held):
    from pdyn.io.hdf5 import OutputFileError
    from pdyn.restart import check_changes

    cfg = drum_with_piston()
    with pytest.raises(OutputFileError, match="attribute changes"):
        check_changes("ckpt.h5", {"step": 20, "changes": held}, cfg)
    check_changes("ckpt.h5", {"step": 20, "changes": {
        "dt": 1e-4, "made": [[5, {"gravity": [0, 0, 1]}], [5, {"dt": 1e-5}]]}}, cfg)


def test_a_dt_stage_in_a_sheared_box_is_refused():
    """A Lees–Edwards box counts its image offset in steps of one dt: a stage's dt there is
    refused in one line."""
    with pytest.raises(ConfigError, match=r"^stages\[1\]\.dt = 1e-05: the box is sheared"):
        Simulation(SimulationConfig(scene="shear_cell", scene_options={"rate": 8.0},
                                    progress=False, stages=[{"duration": 0.01}, {"dt": 1e-5}]))


def test_set_box_is_the_stage_that_sets_the_control_bit_for_bit():
    """The quick triaxial test's shear stage (x and y at p*, z strained at a fixed rate),
    its control of the box set instead from Python at the compression's end
    (``Simulation.set_box``): the same box, rates and spheres' bits to the stage's strain end;
    the control's gain and largest rate those in force."""
    staged = Simulation(quick_triaxial(compress=0.05))
    staged.run()
    sim = Simulation(pressed_triaxial(compress=0.05))
    n0 = staged.stages.starts[1]
    sim.run(n0)
    rate = sim.exchange.rate.copy()
    sim.set_box(**TRIAXIAL_SHEAR_BOX)
    assert sim.exchange.rate.tolist() == [rate[0], rate[1], -TRIAXIAL_RATE]
    assert (sim.cell.gain, sim.cell.max_rate) == (20.0, 5.0)
    sim.run(staged.step_index - n0)
    assert np.array_equal(sim.box.hi, staged.box.hi)
    assert np.array_equal(sim.exchange.rate, staged.exchange.rate)
    for x, y in zip(gather_fields(staged, FRICTIONAL_STATE), gather_fields(sim, FRICTIONAL_STATE)):
        assert np.array_equal(x, y)


def test_a_restart_after_set_box_continues_bit_for_bit(tmp_path):
    """The box's control set from Python after step 60 (checkpoints every 50): the run
    continued from the checkpoint of step 100 replays it and has the same bits."""
    sim, cont = checkpointed(tmp_path, pressed_triaxial(), 200,
                             (60, {"box": TRIAXIAL_SHEAR_BOX}))
    assert [s for s, _ in cont.changes.made] == [60] and np.isnan(cont.cell.targets[2])
    assert np.array_equal(cont.box.hi, sim.box.hi)
    assert np.array_equal(cont.exchange.rate, sim.exchange.rate)
    for x, y in zip(gather_fields(sim, FRICTIONAL_STATE), gather_fields(cont, FRICTIONAL_STATE)):
        assert np.array_equal(x, y)


def _fixed_rate_cell():
    """The shear cell's spheres at rest in a box strained along z at a fixed rate alone."""
    scene = make_scene("shear_cell", scale=0.5, options={"rate": 0.0})
    box = BoxConfig(lo=tuple(scene.box_lo), hi=tuple(scene.box_hi), boundary=("periodic",) * 3,
                    strain_rate={"z": -0.1})
    return Simulation(SimulationConfig(scene="shear_cell", scale=0.5, box=box,
                                       progress=False), scene=scene)


@pytest.mark.parametrize("make, box, message", [
    (drum_with_piston, {"strain_rate": {"z": -0.1}},
     "change.box: the run's box keeps its size"),
    (pressed_triaxial, {"target_pressure": {"z": 100.0}, "strain_rate": {"z": -0.1}},
     "change.box.strain_rate.z = -0.1: the axis follows change.box.target_pressure.z = 100.0"),
    (pressed_triaxial, {"target_pressure": {"z": -5.0}},
     "change.box.target_pressure.z = -5.0: must be > 0"),
    (pressed_triaxial, {"shear_rate": 1.0}, "change.box.shear_rate = 1.0: unknown key"),
    (pressed_triaxial, {"strain_rate": {"w": 1.0}}, "change.box.strain_rate.w = 1.0: unknown"),
    (pressed_triaxial, {"pressure_gain": 0.0}, "change.box.pressure_gain = 0.0: must be > 0"),
    (lambda: SimulationConfig(scene="shear_cell", scale=0.5, progress=False,
                              scene_options={"rate": 1.0, "pressure": 200.0}),
     {"target_pressure": {"x": 200.0}},
     "change.box.target_pressure.x = 200.0: a sheared box keeps its length along x"),
    (lambda: SimulationConfig(scene="shear_cell", scale=0.5, progress=False,
                              scene_options={"rate": 1.0, "pressure": 200.0}),
     {"strain_rate": {"y": -0.1}},
     "change.box.strain_rate.y = -0.1: the run's box keeps its length along y"),
    (None, {"target_pressure": {"z": 100.0}},
     "change.box.max_strain_rate = None: needed with target_pressure"),
])
def test_bad_box_controls_are_one_line_and_change_nothing(make, box, message):
    sim = _fixed_rate_cell() if make is None else Simulation(make())
    control = None if sim.cell is None else sim.cell.control
    rate = sim.exchange.rate.copy() if hasattr(sim.exchange, "rate") else None
    with pytest.raises(ConfigError) as err:
        sim.set_box(**box)
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)
    assert sim.changes.made == [] and (sim.cell is None or sim.cell.control is control)
    assert rate is None or np.array_equal(sim.exchange.rate, rate)
