"""Damping as a sub-model of its own (``pdyn.dynamics.laws``): each normal law takes each
damping; the declared table of sub-models (``laws.SUB_MODELS``) agrees with the config
and with the history the loop stores."""

import dataclasses
import math

import numpy as np
import pytest

from pdyn import config
from pdyn.config import ContactConfig
from pdyn.dynamics import laws
from pdyn.dynamics.contact import ContactLaw
from pdyn.dynamics.laws import (CONSTANT, REFERENCE_OVERLAP, TANGENT, Damping, Hertz, Linear,
                                Normal, normal_force)

from .test_statics import G, MASS, R, by_gid, elastic, scene, settle, static_overlap


def test_the_table_names_what_the_config_accepts():
    assert config.CONTACT_LAWS == laws.names("normal")
    assert config.DAMPINGS == laws.names("damping")
    fields = {f.name: f.default for f in dataclasses.fields(ContactConfig)}
    for m in laws.SUB_MODELS:
        for name, param in m.params.items():
            assert fields[name] == param.default, (m.name, name)


def test_the_history_follows_from_the_chosen_sub_models():
    assert ContactLaw("hertz", friction=0.5).models[2].name == "spring"
    assert laws.history_layout(ContactLaw("hertz", friction=0.5).models) == (
        laws.STORED_HISTORY)
    assert laws.history_layout(ContactLaw("linear", rolling_friction=0.1).models) == ()
    with pytest.raises(ValueError, match="contact damping 'viscous': unknown"):
        ContactLaw("linear", damping="viscous")


def test_config_refuses_an_unknown_damping():
    with pytest.raises(config.ConfigError, match="contact.damping"):
        ContactConfig(damping="viscous")


@pytest.mark.parametrize("delta", [1e-4, 3e-3, 0.02])
@pytest.mark.parametrize("v", [-2.0, 0.3, 5.0])
def test_the_linear_laws_constant_damping_is_its_tangent_damping(delta, v):
    """k is constant: both dashpots are c = 2 ζ √(m k), the same bits."""
    law = Linear(E=1e6, k=0.0)
    for dt in (1e-6, 1e-4):
        assert normal_force(Normal(law, Damping(0.4, CONSTANT)), delta, v, 0.25, 1.5, dt) == (
            normal_force(Normal(law, Damping(0.4, TANGENT)), delta, v, 0.25, 1.5, dt))


def test_hertz_with_constant_damping_has_a_coefficient_independent_of_the_overlap():
    """c = 2 ζ √(m k_t(δ̄)), δ̄ = 0.02 R*: the bulk damping force at a vanishing step is c u at
    any overlap (the tangent dashpot's grows as δ^{1/4})."""
    E, zeta, r, m, u = 1e8, 0.3, 0.01, 0.02, 0.5
    c = 2.0 * zeta * math.sqrt(m * 2.0 * E * math.sqrt(r * REFERENCE_OVERLAP * r))
    for delta in (1e-5, 1e-4, 1e-3):
        elastic_f = normal_force(Normal(Hertz(E), Damping(0.0, TANGENT)), delta, u, r, m, 1e-12)[0]
        damped = normal_force(Normal(Hertz(E), Damping(zeta, CONSTANT)), delta, u, r, m, 1e-12)[0]
        assert damped - elastic_f == pytest.approx(c * u, rel=1e-6)
        tangent = normal_force(Normal(Hertz(E), Damping(zeta, TANGENT)), delta, u, r, m, 1e-12)[0]
        assert tangent - elastic_f != pytest.approx(c * u, rel=1e-3)


@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_a_sphere_at_rest_carries_its_weight_with_constant_damping(law):
    """Every damping vanishes with the approach speed: at rest the contact force is the
    elastic force of its overlap and the sphere's weight."""
    weight = MASS * G
    sim = scene(law, 0.3, [[0.0, 0.0, R - 0.5 * static_overlap(law, weight, R)]], [R],
                damping="constant")
    settle(sim, 1e-13, 60_000)
    (z,) = by_gid(sim, "pos")[:, 2]
    assert elastic(law, R - z, R) / weight == pytest.approx(1.0, abs=1e-9)


def test_hertz_with_constant_damping_rebounds_damped():
    """A Hertz sphere thrown on the floor with constant damping rebounds slower than it hit
    (e < 1) but rebounds."""
    sim = scene("hertz", 0.5, [[0.0, 0.0, 2.0 * R]], [R], damping="constant")
    sim.store.vel[sim.store.owned] = [0.0, 0.0, -0.5]
    impact = math.sqrt(0.5**2 + 2.0 * G * R)  # at the touch
    up = 0.0
    for _ in range(400):
        sim.run(10, progress=False)
        up = max(up, by_gid(sim, "vel")[0, 2])
    assert 0.0 < up < 0.99 * impact


# ------------------------------------------------------------------ LAMMPS' dampings
#: a damping sampled as LAMMPS per name, with what ``ContactConfig`` needs for it
SAMPLED = {"mass_velocity": {"restitution": 1.0, "damping_coefficient": 300.0},
           "viscoelastic": {"restitution": 1.0, "damping_coefficient": 3e4},
           "tsuji": {"restitution": 0.3}}


def sampled_law(law, damping):
    """The ``ContactLaw`` of ``law`` with the sampled ``damping`` (:data:`SAMPLED`)."""
    c = ContactConfig(law=law, youngs_modulus=1e7, poisson_ratio=0.3, damping=damping,
                      friction=0.5, **SAMPLED[damping])
    return ContactLaw.from_config(c)


def expected_eta(law, damping, delta, r, m):
    """η (N·s/m) of LAMMPS' formula for the sampled ``damping`` ([LAMMPSgranular])."""
    e_star = laws.effective_modulus(1e7, 0.3)
    k_nd = 1e7 * r if law == "linear" else 4.0 / 3.0 * e_star * math.sqrt(r * delta)  # F_e/δ
    if damping == "mass_velocity":
        return 300.0 * m
    if damping == "viscoelastic":
        return 3e4 * m * math.sqrt(r * delta)
    e = 0.3
    alpha = 1.2728 - 4.2783 * e + 11.087 * e**2 - 22.348 * e**3 + 27.467 * e**4 \
        - 18.022 * e**5 + 4.8218 * e**6
    return math.sqrt(2.0) * alpha * math.sqrt(m * k_nd)


@pytest.mark.parametrize("law", ["linear", "hertz"])
@pytest.mark.parametrize("damping", list(SAMPLED))
def test_sampled_dampings_give_lammps_force(law, damping):
    """η v_n at the sampled approach speed, LAMMPS' formulas, at any dt (no window, no lag
    correction); 0 at rest; never attractive; the tangential dashpot is η/2 (LAMMPS'
    gamma_t = NULL)."""
    from pdyn.dynamics.friction import tangential_coefficients

    p = sampled_law(law, damping).parameters
    r, m = 0.004, 3e-4
    for delta in (1e-6, 1e-5, 4e-5):
        f_el = normal_force(p, delta, 0.0, r, m, 1e-5)[0]
        assert f_el == laws.elastic(p.law, delta, r)[0]  # statics: the elastic force alone
        eta = expected_eta(law, damping, delta, r, m)
        for v, dt in ((0.2, 1e-5), (-0.01, 1e-7)):
            f = normal_force(p, delta, v, r, m, dt)[0]
            assert f == pytest.approx(max(f_el + eta * v, 0.0), rel=1e-12)
        assert normal_force(p, delta, -1e3, r, m, 1e-5)[0] == 0.0
        tangential = sampled_law(law, damping).tangential_model
        assert tangential_coefficients(p, tangential, delta, r, m)[1] == pytest.approx(
            0.5 * eta, rel=1e-12)


def test_tsuji_alpha_is_marshalls_fit_times_root_two():
    """[Marshall2009] eq. 53 with the effective-mass factor √2; elastic at e = 1; for Hertz
    the dashpot is the tangent one's form (∝ √(m k_t(δ))): the ratio is the same at every
    overlap, and near the exact one (the fit is Tsuji's, without the clamp)."""
    assert laws.tsuji_alpha(1.0) == 0.0
    fit = (1.2728 - 4.2783 / 2 + 11.087 / 4 - 22.348 / 8 + 27.467 / 16 - 18.022 / 32
           + 4.8218 / 64)
    assert laws.tsuji_alpha(0.5) == pytest.approx(math.sqrt(2) * fit, rel=1e-14)
    for e in (0.5, 0.9):
        exact = math.sqrt(6.0) * laws.damping_ratio(e, "hertz")  # √(k_t/(F/δ)) = √(3/2)
        assert laws.tsuji_alpha(e) == pytest.approx(exact, rel=0.2)


@pytest.mark.parametrize("law", ["linear", "hertz"])
@pytest.mark.parametrize("damping", list(SAMPLED))
def test_a_sphere_at_rest_carries_its_weight_with_sampled_damping(law, damping):
    """η v_n vanishes at rest: the contact holds the sphere's weight with its elastic force."""
    weight = MASS * G
    given = dict(SAMPLED[damping])
    if damping != "tsuji":  # settle it well within the test's steps (η ≈ 0.3 √(m k))
        given["damping_coefficient"] = 1500.0 if damping == "mass_velocity" else 1e6
    e = given.pop("restitution")
    sim = scene(law, e, [[0.0, 0.0, R - 0.5 * static_overlap(law, weight, R)]], [R],
                damping=damping, **given)
    settle(sim, 1e-13, 60_000)
    (z,) = by_gid(sim, "pos")[:, 2]
    assert elastic(law, R - z, R) / weight == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("given, match", [
    ({"damping": "mass_velocity"}, r"^contact\.damping_coefficient: damping 'mass_velocity' "
                                   "needs it"),
    ({"damping": "viscoelastic", "damping_coefficient": -1.0}, r"^contact\.damping_coefficient"
                                                              " = -1.0"),
    ({"damping": "mass_velocity", "damping_coefficient": 5.0, "restitution": 0.5},
     r"^contact\.restitution = 0\.5: damping 'mass_velocity' takes"),
    ({"damping": "tsuji", "damping_coefficient": 5.0},
     r"^contact\.damping_coefficient = 5\.0: only for damping"),
    ({"tangential_history": "rotated"}, r"^contact\.tangential_history = 'rotated'"),
])
def test_config_refuses_damping_coefficients_where_they_do_not_belong(given, match):
    with pytest.raises(config.ConfigError, match=match):
        ContactConfig(**given)


# ------------------------------------------------------------------ the tangential history
def test_the_histories_turn_the_spring_into_the_tangent_plane():
    """``rescaled`` keeps the spring's length, ``projected`` drops its normal part (LAMMPS
    gran/*/history); both leave a spring in the plane as it is."""
    from pdyn.dynamics.friction import HISTORIES, PROJECTED, Tangential, turned

    n = np.array([0.0, 0.6, 0.8])
    s = np.array([1e-4, 2e-4, -1e-4])
    a = np.array(turned(Tangential(0.5, 0.3), *s, *n))
    b = np.array(turned(Tangential(0.5, 0.3, PROJECTED), *s, *n))
    ulp = 4 * np.finfo(float).eps * np.linalg.norm(s)  # rounding (BLAS dots differ by CPU)
    assert abs(a @ n) < ulp and abs(b @ n) < ulp
    assert np.linalg.norm(a) == pytest.approx(np.linalg.norm(s), rel=1e-14)
    np.testing.assert_allclose(b, s - (s @ n) * n, rtol=0, atol=ulp)
    flat = np.array([1e-4, 0.8e-4, -0.6e-4])  # ⊥ n
    flat_turned = turned(Tangential(0.5, 0.3, PROJECTED), *flat, *n)
    assert flat_turned == pytest.approx(tuple(flat), abs=1e-20)
    assert set(HISTORIES) == set(config.TANGENTIAL_HISTORIES)
