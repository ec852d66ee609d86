"""A settled bed shared by the tests of this folder (settling it takes about a minute)."""

import pytest

from ..dynamics.test_statics import R, close_packed, scene, settle


@pytest.fixture(scope="package")
def bed():
    """144 frictionless spheres in 4 close-packed layers on a floor at z = 0, periodic
    sides, damped to rest (every speed below 1e-8 m/s)."""
    pos, (lx, ly) = close_packed(6, 6, 4, seed=3)
    sim = scene("linear", 0.1, pos, [R] * len(pos), lo=(0.0, 0.0, 0.0), hi=(lx, ly, 1.0))
    settle(sim, 1e-8, 40_000)
    return sim
