"""The particle-impact benchmarks of [ChungOoi2011] that apply to pdyn, at the default time
step, against their closed-form solutions (``pdyn.validation``); the plots of the same runs are
made by ``benchmarks/validation.py`` for ``docs/validation.md``."""

import math

import numpy as np
import pytest

from pdyn.validation import GLASS, hertz_impact, impact, oblique


@pytest.mark.parametrize("speed", [0.2, 3.9])
def test_normal_elastic_impact_follows_hertz(speed):
    """Tests 1–2 of [ChungOoi2011]: peak overlap and force within 0.5 % of Hertz's, contact
    duration within two time steps, rebound speed = impact speed to 0.1 %."""
    run = impact((0.0, 0.0, -speed), record=True)
    theory = hertz_impact(speed)
    assert run["overlap"].max() == pytest.approx(theory["overlap"], rel=5e-3)
    assert run["force"].max() == pytest.approx(theory["force"], rel=5e-3)
    assert abs(len(run["time"]) * run["dt"] - theory["duration"]) <= 2 * run["dt"]
    assert run["velocity"][2] == pytest.approx(speed, rel=1e-3)


def test_two_spheres_normal_impact_is_symmetric():
    """Test 1 of [ChungOoi2011] with two spheres: equal and opposite, elastic rebound,
    peak overlap of Hertz's solution with R* = r/2, m* = m/2 (checked on the sphere–wall run
    of a sphere with those effective values: the same equation)."""
    from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
    from pdyn.simulation import Simulation

    r, v = GLASS["radius"], 1.0
    cfg = SimulationConfig(
        contact=ContactConfig(law="hertz", youngs_modulus=GLASS["youngs_modulus"],
                              poisson_ratio=GLASS["poisson_ratio"]),
        box=BoxConfig(lo=(-1, -1, -1), hi=(1, 1, 1), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[-r - 1e-5, 0, 0], [r + 1e-5, 0, 0]],
                                  radii=[r, r], velocities=[[v, 0, 0], [-v, 0, 0]],
                                  density=GLASS["density"]),
        gravity=(0, 0, 0), progress=False)
    sim = Simulation(cfg)
    s = sim.store
    a, b = sorted(s.owned, key=lambda h: s.gid[h])
    peak, touched = 0.0, False
    while not (touched and sim.n_contacts == 0):
        sim.step()
        touched |= sim.n_contacts > 0
        peak = max(peak, 2 * r - (s.pos[b, 0] - s.pos[a, 0]))
        assert s.pos[a, 0] == -s.pos[b, 0] and s.vel[a, 0] == -s.vel[b, 0]
    assert s.vel[b, 0] == pytest.approx(v, rel=1e-3)
    m = GLASS["density"] * 4 / 3 * math.pi * r**3
    e_star = GLASS["youngs_modulus"] / (2 * (1 - GLASS["poisson_ratio"] ** 2))
    theory = (15 * (m / 2) * (2 * v) ** 2 / (16 * e_star * math.sqrt(r / 2))) ** 0.4
    assert peak == pytest.approx(theory, rel=5e-3)


@pytest.mark.parametrize("theta", [70.0, 80.0, 85.0])
def test_oblique_impact_in_gross_sliding(theta):
    """Test 4 of [ChungOoi2011] at incident angles beyond tan θ = 7/2 μ (1 + e): the
    tangential speed drops by μ (1 + e) v_n and ω r = 5/2 μ (1 + e) v_n, within 0.5 %."""
    o = oblique(theta, mu=0.3, e=1.0)
    assert o["vt"] == pytest.approx(o["vt_rigid"], rel=5e-3)
    assert o["wr"] == pytest.approx(o["wr_rigid"], rel=5e-3)
    assert o["vn_out"] == pytest.approx(o["vn_in"], rel=1e-3)


@pytest.mark.parametrize("spin", [-40.0, 40.0])
def test_oblique_impact_with_spin_in_gross_sliding(spin):
    """[ChungOoi2011]'s impacts with spin: constant normal speed, initial spin; where it slides
    throughout, the rigid-body change of v_t and ω r holds within 0.5 %."""
    o = oblique(75.0, mu=0.1, e=1.0, spin=spin)
    assert abs(o["vt_in"] - spin * GLASS["radius"]) >= 3.5 * 0.1 * 2 * o["vn_in"]
    assert o["vt"] == pytest.approx(o["vt_rigid"], rel=5e-3)
    assert o["wr"] == pytest.approx(o["wr_rigid"], rel=5e-3)


def test_oblique_impact_at_small_angles_sticks():
    """Below the sliding limit the contact sticks: the rebound spin and tangential speed
    differ from gross sliding's, and the tangential speed changes by less than sliding
    would allow (|Δv_t| < μ (1 + e) v_n)."""
    o = oblique(20.0, mu=0.3, e=1.0)
    assert abs(o["vt"] - o["vt_in"]) < 0.3 * 2 * o["vn_in"]
    assert np.isfinite(o["wr"]) and o["wr"] > 0
