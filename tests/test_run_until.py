"""``Simulation.run(until=..., every=..., callback=...)`` (issue 48): a run stopped at a time or
a condition, with a callback every k steps, is the plain run's trajectory bit for bit."""

import numpy as np
import pytest

from pdyn.simulation import Simulation

from .mpi.scenes import BOUNDARIES, FRICTIONAL_STATE, dense_polydisperse, gather_fields


def run_of():
    return Simulation(dense_polydisperse(BOUNDARIES["walled"], n=120, friction=0.5))


def test_until_a_time_stops_at_the_first_check_past_it_with_the_plain_runs_bits():
    a, b = run_of(), run_of()
    t = 57.5 * a.dt
    seen = []
    a.run(until=t, every=10, callback=lambda sim: seen.append(
        (sim.step_index, sim.store.vel[sim.store.owned].copy())))
    assert a.step_index == 60 and a.steps_run == 60
    assert [s for s, _ in seen] == [10, 20, 30, 40, 50, 60]
    b.run(30)
    assert np.array_equal(seen[2][1], b.store.vel[b.store.owned])  # full-step velocities
    b.run(30)
    for x, y in zip(gather_fields(a, FRICTIONAL_STATE), gather_fields(b, FRICTIONAL_STATE)):
        assert np.array_equal(x, y)


def test_until_a_condition_stops_where_it_first_holds():
    """Stop once the kinetic energy has fallen below 0.9 of its start (the collisions
    dissipate it): at the first check where it has, and not at the one before."""
    sim = run_of()
    start = sim.kinetic_energy()
    energies = []
    sim.run(until=lambda s: s.kinetic_energy() < 0.9 * start, every=5,
            callback=lambda s: energies.append(s.kinetic_energy()))
    assert energies[-1] < 0.9 * start <= energies[-2]
    assert sim.step_index == 5 * len(energies)


def test_every_must_be_positive():
    with pytest.raises(ValueError, match="every=0"):
        run_of().run(10, every=0, callback=print)
