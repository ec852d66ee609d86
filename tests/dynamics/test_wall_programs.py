"""Walls that follow a program of time (issue 48, ``pdyn.programs``): a sphere on a plate
vibrated vertically, z = A sin ω t, stays on it while Γ = A ω²/g < 1 and lifts off, for Γ > 1,
at the phase sin ω t = 1/Γ the closed form gives; each term's displacement is the exact
integral of its velocity; the old constant ``velocity`` keeps its bits; bad programs are one
line naming the field."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, SimulationConfig, WallConfig
from pdyn.programs import Program, check_program
from pdyn.simulation import Simulation

from .test_walls import G, MASS, R, one_sphere, state

K = 1e7 * R  # sphere–plate stiffness (linear law, E r): ω_c = √(k/m) = 2.9e3 rad/s
FREQ = 5.0  # Hz: ω/ω_c = 0.011, the contact follows the plate quasi-statically
OMEGA = 2.0 * math.pi * FREQ
DT = 2e-5  # s: a hundred steps a contact period, 1e4 a plate period


def vibrated(gamma: float, **cfg):
    """A sphere resting on a plate at z = 0 that vibrates as A sin ω t, Γ = A ω²/g, moving
    with the plate at t = 0 (velocity A ω, at its equilibrium overlap m g/k)."""
    amp = gamma * G / OMEGA**2
    plate = {"type": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0],
             "translation": [{"type": "sine", "amplitude": [0.0, 0.0, amp],
                              "frequency": FREQ}], **cfg}
    return one_sphere((0.0, 0.0, R - MASS * G / K), [plate], vel=(0.0, 0.0, amp * OMEGA),
                      dt=DT, restitution=0.5), amp


def first_flight(sim, amp, steps):
    """The phase ω t (rad) at the first step the plate no longer pushes the sphere (its
    contact force is 0: the sphere falls freely; the overlap closes a little later, the
    dashpot having held it open), None if it pushes for ``steps`` steps; the plate must be at
    A sin ω t every step."""
    (plate,) = sim.store.walls
    (h,) = sim.store.owned
    for _ in range(steps):
        sim.step()
        z = sim.store.pos[plate, 2]
        assert z == pytest.approx(amp * math.sin(OMEGA * sim.time), abs=1e-15)
        if sim.store.force[h, 2] + MASS * G <= 1e-9 * MASS * G:
            return OMEGA * sim.time
    return None


@pytest.mark.parametrize("gamma", [1.25, 2.0, 4.0])
def test_sphere_lifts_off_a_vibrated_plate_at_the_closed_form_phase(gamma):
    """Liftoff where the plate's downward acceleration A ω² sin ω t reaches g: ω t =
    arcsin(1/Γ), to 0.002 rad (the contact's compliance: ω/ω_c ~ 0.01)."""
    sim, amp = vibrated(gamma)
    phase = first_flight(sim, amp, int(0.5 / FREQ / DT))
    assert phase == pytest.approx(math.asin(1.0 / gamma), abs=0.002)


def test_sphere_stays_on_a_plate_vibrated_below_one_g():
    """Γ = 0.9: the sphere rides the plate a whole period."""
    sim, amp = vibrated(0.9)
    assert first_flight(sim, amp, int(1.0 / FREQ / DT)) is None


def test_each_terms_displacement_is_the_integral_of_its_velocity():
    """Of a sum of every term: x(0) = 0, and x(t₂) − x(t₁) equals the integral of u over
    [t₁, t₂] (Simpson's rule on a fine grid, within its error) between each two of the ramp's
    and the table's kinks, before their first and after their last time (u is smooth between
    them: the rule's error there is below 1e-14)."""
    terms = check_program("p", [
        {"type": "sine", "amplitude": [0.01, 0.0, -0.02], "frequency": 3.0, "phase": 0.4},
        {"type": "ramp", "velocity": [0.5, -0.2, 0.0], "start": 0.1, "end": 0.3},
        {"type": "table", "times": [0.05, 0.2, 0.35], "velocities": [[0.1, 0.0, 0.0],
                                                                     [0.0, 0.3, 0.1],
                                                                     [-0.2, 0.0, 0.2]]}], 3)
    prog = Program((0.1, 0.0, 0.0), terms)
    assert np.array_equal(prog(0.0)[0], np.zeros(3))
    kinks = (0.0, 0.05, 0.1, 0.2, 0.3, 0.35, 0.5)
    for t1, t2 in zip(kinks, kinks[1:]):
        t = np.linspace(t1, t2, 2001)
        u = np.array([prog(x)[1] for x in t])
        h = t[1] - t[0]
        simpson = h / 3 * (u[0] + u[-1] + 4 * u[1:-1:2].sum(axis=0) + 2 * u[2:-1:2].sum(axis=0))
        np.testing.assert_allclose(prog(t2)[0] - prog(t1)[0], simpson, atol=1e-9)
    assert prog.peak() == pytest.approx(0.1 + 6 * math.pi * math.hypot(0.01, 0.02)
                                        + math.hypot(0.5, 0.2) + math.hypot(0.3, 0.1))


def test_a_constant_velocity_keeps_its_bits():
    """A wall with ``velocity`` alone is where it was before programs (p₀ + v t), and the
    same velocity written as a one-point table moves it the same (to rounding)."""
    v = [0.0, 0.0, 0.3]
    plain = {"type": "plane", "point": [0.0, 0.0, -0.01], "normal": [0.0, 0.0, 1.0]}
    a, _ = one_sphere((0.0, 0.0, 0.02), [{**plain, "velocity": v}]), None
    b = one_sphere((0.0, 0.0, 0.02), [{**plain, "translation": [
        {"type": "table", "times": [0.0, 1.0], "velocities": [v, v]}]}])
    a.run(300)
    b.run(300)
    (wa,), (wb,) = a.store.walls, b.store.walls
    assert a.store.pos[wa, 2] == -0.01 + 0.3 * a.time
    assert b.store.pos[wb, 2] == pytest.approx(a.store.pos[wa, 2], abs=1e-15)


@pytest.mark.parametrize("field, value, message", [
    ("translation", [{"type": "wiggle"}], "walls.translation[0].type = 'wiggle': choose from"),
    ("translation", [{"type": "sine", "amplitude": [0, 0, 1], "frequency": 0.0}],
     "walls.translation[0].frequency = 0.0: must be > 0"),
    ("translation", [{"type": "sine", "amplitude": [0, 1], "frequency": 2.0}],
     "walls.translation[0].amplitude = [0, 1]: expected 3 finite numbers"),
    ("translation", [{"type": "ramp", "velocity": [0, 0, 1], "start": 0.2, "end": 0.1}],
     "walls.translation[0].end = 0.1: must be > 0.2"),
    ("translation", [{"type": "table", "times": [0.0, 0.0], "velocities": [[0] * 3] * 2}],
     "walls.translation[0].times = [0.0, 0.0]: must increase"),
    ("translation", [{"type": "table", "times": [0.0, 1.0], "velocities": [[0] * 3]}],
     "walls.translation[0].velocities = [[0, 0, 0]]: expected 2 velocities"),
    ("rotation", [{"type": "sine", "amplitude": 0.1, "frequency": 1.0, "speed": 2}],
     "walls.rotation[0].speed = 2: not a field of a sine term"),
    ("rotation", [{"type": "ramp", "velocity": 1.0, "end": 1.0}],
     "walls.rotation[0].start = None: required in a ramp term"),
])
def test_bad_programs_are_one_line_naming_the_field(field, value, message):
    with pytest.raises(ConfigError) as err:
        WallConfig(type="plane", point=(0, 0, 0), normal=(0, 0, 1), **{field: value})
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_fast_program_is_refused_at_its_peak_speed():
    """The start-up refusal reads the largest speed the program reaches, not its speed at
    t = 0 (a sine's is its largest; a ramp's is 0 at t = 0)."""
    from pdyn.checks import FastWallError
    with pytest.raises(FastWallError, match="walls\\[0\\]"):
        one_sphere((0.0, 0.0, 0.02), [{"type": "plane", "point": [0.0, 0.0, -0.01],
                                       "normal": [0.0, 0.0, 1.0], "translation": [
                                           {"type": "ramp", "velocity": [0.0, 0.0, 50.0],
                                            "start": 1.0, "end": 2.0}]}])
