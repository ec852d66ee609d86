"""``pdyn.analysis.drum``'s regime markers on built configurations: spheres in flight,
spheres moving with the drum, the reading of the regime and [Mellmann2001]'s ranges."""

import numpy as np

from pdyn.analysis import drum as da

R, L = 0.004, 0.0264  # sphere radius, periodic length (m)


def test_flight_needs_half_a_diameter_of_gap_to_everything():
    radius = np.full(4, R)
    pos = np.array([[0.002, 0.0, -0.095],  # touches the drum (gap 0.001 < d/2)
                    [0.0255, 0.0, -0.0870],  # across the periodic boundary from the next one
                    [0.0005, 0.0, -0.0785],
                    [0.010, 0.0, 0.0]])  # alone at the axis: in flight
    flying, _, _ = da.flight_and_rotation(pos, np.zeros_like(pos), radius, L, 1.0)
    assert flying == 0.25
    pos[3] = [0.0005, 0.0, -0.0675]  # 3 mm above the third sphere: no longer in flight
    assert da.flight_and_rotation(pos, np.zeros_like(pos), radius, L, 1.0)[0] == 0.0


def test_moving_with_the_drum_is_the_rigid_rotation_about_x():
    pos = np.array([[0.0, 0.05, 0.0], [0.0, 0.0, -0.08], [0.0, 0.0, 0.03]])
    omega = 2.0
    rigid = omega * np.column_stack((np.zeros(3), -pos[:, 2], pos[:, 1]))
    vel = rigid.copy()
    vel[2, 1] += 0.021  # off by more than 0.1 Ω R = 0.02 m/s
    _, moving, turn = da.flight_and_rotation(pos, vel, np.full(3, R), L, omega)
    assert moving == 2 / 3 and turn == 1.0
    _, moving, turn = da.flight_and_rotation(pos, -0.5 * rigid, np.full(3, R), L, omega)
    assert moving == 0.0 and turn == -0.5


def test_the_regime_reading_and_mellmanns_ranges():
    y = np.array(da.bin_centres())
    flat = {"profile_top_m": list(np.where(np.abs(y) < 0.08, 0.5 * y, np.nan)), "d_m": 0.008,
            "flying": 0.0, "with_drum": 0.5}
    flat["profile_top_m"] = [None if np.isnan(v) else float(v) for v in flat["profile_top_m"]]
    assert da.regime(flat) == "rolling"
    bent = dict(flat, profile_top_m=[None if v is None else v + 100.0 * (v / 0.5) ** 3
                                     for v in flat["profile_top_m"]])
    assert da.profile_shape(bent)["rms_d"] > 0.25 and da.regime(bent) == "cascading"
    assert da.regime(dict(flat, flying=0.02)) == "cataracting"
    assert da.regime(dict(flat, flying=0.02, with_drum=0.95)) == "centrifuging"
    assert da.expected(1e-3) == "slumping or rolling or cascading"
    assert da.expected(0.05) == "cascading" and da.expected(0.3) == "cataracting"
    assert da.expected(2.0) == "centrifuging"


def test_glued_spheres_are_neighbours_but_not_counted():
    """With ``bed`` (a rough drum) a glued sphere keeps a bed sphere near it from being in
    flight, but is itself neither in flight nor counted as moving with the drum."""
    pos = np.array([[0.010, 0.03, 0.0],  # bed, at rest (not turning with the drum)
                    [0.010, 0.03, -0.0095],  # glued, 1.5 mm below it (in the middle, for the
                    [0.010, -0.05, 0.03]])  # test); glued, far away, at rest
    bed = np.array([True, False, False])
    flying, moving, turn = da.flight_and_rotation(pos, np.zeros_like(pos), np.full(3, R), L,
                                                  1.0, bed)
    assert (flying, moving, turn) == (0.0, 0.0, 0.0)
    flying, _, _ = da.flight_and_rotation(pos[[0, 2]], np.zeros((2, 3)), np.full(2, R), L, 1.0,
                                          bed[[0, 2]])
    assert flying == 1.0
