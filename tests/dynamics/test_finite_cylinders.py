"""Finite cylinders (issue 33, ``pdyn.walls``): an open tube of ``length`` centred on its
point — on its lateral surface the infinite cylinder's contact, beyond its ends none but the
rims', an edge contact with the closest point of the rim circle — against closed forms, and
the config's refusals of a bad ``length``."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, config_from_dict
from pdyn.walls import CYLINDER_INSIDE, WallSet, gaps, wall_contact

from .test_walls import MASS, G, R, one_sphere, state

BIG, LENGTH = 0.1, 0.2  # tube radius and length (m), axis y through the origin
TUBE = {"type": "cylinder", "point": [0, 0, 0], "axis": [0, 1, 0], "radius": BIG,
        "length": LENGTH}


def contact(x, length=LENGTH, r=R):
    """(normal (3,), overlap) of a sphere at ``x`` against the tube (infinite: length inf)."""
    ws = WallSet(np.zeros((0, 3)), np.zeros((0, 3)),
                 [{"kind": CYLINDER_INSIDE, "point": (0, 0, 0), "normal": (0, 1, 0),
                   "radius": BIG, "length": length}])
    pos = np.zeros((1, 3))
    nx, ny, nz, delta, *_ = wall_contact(*np.asarray(x, float), r, pos, ws.normals, ws.table,
                                         0, 0)
    return np.array([nx, ny, nz]), delta


@pytest.mark.parametrize("x", [[0.0, 0.05, -0.095], [0.03, -0.099, 0.0], [0.0, 0.0, -0.0975]])
def test_lateral_surface_is_the_infinite_cylinders(x):
    """Within |d·â| <= L/2 (and inside the tube) a finite tube's normal and overlap are the
    infinite cylinder's, bit for bit."""
    n, d = contact(x)
    n_inf, d_inf = contact(x, math.inf)
    assert np.array_equal(n, n_inf) and d == d_inf
    assert d == pytest.approx(R - (BIG - math.hypot(x[0], x[2])), abs=1e-15)


def test_outer_face_acts_too():
    """An open tube is a thin shell: a sphere outside it, 2 mm from its surface, is pushed
    outward (the normal points to the axis) with δ = r − 2 mm."""
    n, d = contact([0.0, 0.0, -(BIG + 0.002)])
    assert n.tolist() == pytest.approx([0, 0, 1], abs=1e-15)
    assert d == pytest.approx(R - 0.002, abs=1e-15)


def test_beyond_the_end_no_lateral_contact():
    """Beyond an end by more than r from the rim there is no contact, though the infinite
    cylinder would touch."""
    x = [0.0, LENGTH / 2 + 1.2 * R, -(BIG - 0.5 * R)]
    assert contact(x, math.inf)[1] > 0.0
    assert contact(x)[1] < 0.0
    assert contact([0.0, LENGTH / 2 + 0.5 * R, 0.0])[1] < 0.0  # on the axis, past the end


@pytest.mark.parametrize("end", [1, -1])
def test_rim_contact_points_from_the_closest_point_of_the_circle(end):
    """Beyond an end, a sphere touches the rim: the closest point of the circle of radius R
    at d·â = ±L/2 is c = (L/2) â ± R q̂; the normal (sphere → wall) is (c − x)/|c − x| and
    δ = r − |c − x|."""
    x = np.array([0.004, end * (LENGTH / 2 + 0.3 * R), -0.101])
    q = np.array([x[0], 0.0, x[2]]) / math.hypot(x[0], x[2])
    c = np.array([0.0, end * LENGTH / 2, 0.0]) + BIG * q
    n, d = contact(x)
    assert n == pytest.approx((c - x) / np.linalg.norm(c - x), abs=1e-14)
    assert d == pytest.approx(R - np.linalg.norm(c - x), abs=1e-15)
    assert d > 0.0


@pytest.mark.parametrize("rho", [BIG - 0.6 * R, BIG + 0.6 * R])
def test_sliding_over_the_rim_the_force_is_continuous(rho):
    """Along a path across the end of the tube (inside and outside its shell), δ and the
    normal change by at most O(step) between neighbouring points (no jump at d·â = L/2)."""
    h = 1e-6
    ys = LENGTH / 2 + np.arange(-2000, 12000) * h
    got = [contact([0.0, y, -rho]) for y in ys]
    deltas = np.array([d for _, d in got])
    normals = np.array([n for n, _ in got])
    assert np.abs(np.diff(deltas)).max() < 2 * h
    assert np.linalg.norm(np.diff(normals, axis=0), axis=1).max() < 2 * h / (0.4 * R)
    assert deltas[0] == pytest.approx(0.4 * R, abs=1e-12) and deltas[-1] < 0.0


def test_gaps_of_a_tube():
    """The numpy gap of the checks: the distance from the shell or the rims."""
    pos = np.array([[0.0, 0.0, -0.09], [0.0, 0.0, -0.11], [0.0, 0.13, -0.1], [0.0, 0.13, 0.0]])
    g = gaps(pos, (0, 0, 0), (0, 1, 0), CYLINDER_INSIDE, BIG, LENGTH)
    assert g == pytest.approx([0.01, 0.01, 0.03, math.hypot(0.03, 0.1)], abs=1e-15)


def test_sphere_resting_in_a_finite_tube_is_the_infinite_result():
    """A sphere at rest at the bottom of a tube of length 0.2 m (axis y, R = 0.1 m), away
    from its ends: the same trajectory, bit for bit, as in an infinite cylinder, and at rest
    the wall carries its weight m g (1e-9)."""
    start = [0.0, 0.03, -(BIG - R)]
    sims = [one_sphere(start, [dict(TUBE)] if finite else
                       [{k: v for k, v in TUBE.items() if k != "length"}], restitution=0.3)
            for finite in (True, False)]
    for sim in sims:
        sim.run(3000)
    assert np.array_equal(state(sims[0], "pos"), state(sims[1], "pos"))
    got = sims[0].wall_contacts()
    assert got["force"][0] / (MASS * G) == pytest.approx(1.0, abs=1e-9)


def test_sphere_rolls_off_an_open_tube():
    """A sphere set moving along the axis inside a level open tube leaves it over the rim
    and falls; it never stops on the rim nor jumps (its speed along the axis stays near its
    start, frictionless)."""
    sim = one_sphere([0.0, LENGTH / 2 - 0.02, -(BIG - R) - MASS * G / (1e7 * R)], [dict(TUBE)],
                     vel=(0.0, 0.2, 0.0), restitution=0.3)
    sim.run(int(0.5 / sim.dt))
    x, v = state(sim, "pos"), state(sim, "vel")
    assert x[1] > LENGTH / 2 + R and x[2] < -BIG - R  # beyond the end, below the tube
    assert 0.19 < v[1] < 0.3


def test_length_refusals():
    good = dict(TUBE)
    assert config_from_dict({"walls": [good]}).walls[0].length == LENGTH
    bad = [({**good, "length": 0.0}, "walls[0].length = 0.0: must be > 0"),
           ({**good, "length": -1}, "walls[0].length = -1: must be > 0"),
           ({**good, "length": math.inf}, "walls[0].length = inf: must be finite"),
           ({**good, "length": "1"}, "walls[0].length = '1': expected a number"),
           ({**good, "inside": False}, "walls[0].inside = False: a finite cylinder is an "
                                       "open tube"),
           ({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "length": 1.0},
            "walls[0].length = 1.0: only for cylinders")]
    for spec, head in bad:
        with pytest.raises(ConfigError) as err:
            config_from_dict({"walls": [spec]})
        assert str(err.value).startswith(head), str(err.value)
        assert "\n" not in str(err.value)
