"""The integrator's kicks ([Verlet1967]): a step's closing half-kick left to the next step's
kick–drift gives the same bits as two walks, and a run leaves no half-kick behind."""

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.config import ContactConfig
from pdyn.dynamics.integrate import kick, kick_drift


def _state(seed=0, n=50):
    rng = np.random.default_rng(seed)
    pos, vel, force = (rng.normal(size=(n, 3)) for _ in range(3))
    omega, torque = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    mass, radius = rng.uniform(0.1, 3.0, n), rng.uniform(0.01, 1.0, n)
    return pos, vel, force, mass, pos + rng.normal(scale=1e-3, size=(n, 3)), omega, torque, radius


@pytest.mark.parametrize("rotating", [False, True])
def test_two_kicks_in_one_walk_are_two_walks(rotating):
    """kick then kick_drift against kick_drift(kicks=2), velocities, spins and positions."""
    a = _state()
    b = tuple(x.copy() for x in a)
    rows = np.array([0, 3, 4, 7, 20, 49], np.int64)
    spinning = np.array([3, 20, 49], np.int64)
    half, dt = 1.3e-4, 2.6e-4

    def spin(s):
        return (s[5], s[6], s[7], spinning) if rotating else (None, None, s[7], spinning)

    pos, vel, force, mass, build, *_ = a
    kick(vel, force, mass, rows, half, *spin(a))
    moved_a, moved_b = np.zeros(2), np.zeros(2)
    kick_drift(pos, vel, force, mass, build, rows, half, dt, *spin(a), 1, moved_a)
    pos, vel, force, mass, build, *_ = b
    kick_drift(pos, vel, force, mass, build, rows, half, dt, *spin(b), 2, moved_b)
    assert moved_a[0] > 0 and moved_a[1] > 0  # the largest move and drift written
    for x, y in zip(a + (moved_a,), b + (moved_b,)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[1], _state()[1])  # something moved


def _final(sim):
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    return s.pos[h].copy(), s.vel[h].copy(), s.omega[h].copy()


def test_a_run_leaves_no_half_kick_and_changes_no_bit():
    """run() leaves each step's closing half-kick to the next step: after it the velocities
    are those of steps closed one by one, bit for bit (a frictional gas: spins too)."""
    cfg = SimulationConfig(scene="gas", scale=0.05, steps=60, progress=False,
                           contact=ContactConfig(stiffness=2000.0, friction=0.5))
    stepped, ran = Simulation(cfg), Simulation(cfg)
    for _ in range(60):
        stepped.step()
    ran.run(25)
    ran.run(35)
    assert not ran._kick_owed
    for x, y in zip(_final(stepped), _final(ran)):
        np.testing.assert_array_equal(x, y)
    assert stepped.n_contacts > 0 and np.any(_final(ran)[2] != 0.0)
