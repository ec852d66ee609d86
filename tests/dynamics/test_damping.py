"""Damping as a sub-model of its own (``pdyn.dynamics.laws``): each normal law takes each
damping; the declared table of sub-models (``laws.SUB_MODELS``) agrees with the config
and with the history the loop stores."""

import dataclasses
import math

import pytest

from pdyn import config
from pdyn.config import ContactConfig
from pdyn.dynamics import laws
from pdyn.dynamics.contact import ContactLaw
from pdyn.dynamics.laws import (REFERENCE_OVERLAP, Constant, Hertz, Linear, Normal, Tangent,
                                normal_force)

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
        assert normal_force(Normal(law, Constant(0.4)), delta, v, 0.25, 1.5, dt) == (
            normal_force(Normal(law, Tangent(0.4)), delta, v, 0.25, 1.5, dt))


def test_hertz_with_constant_damping_has_a_coefficient_independent_of_the_overlap():
    """c = 2 ζ √(m k_t(δ̄)), δ̄ = 0.02 R*: the bulk damping force at a vanishing step is c u at
    any overlap (the tangent dashpot's grows as δ^{1/4})."""
    E, zeta, r, m, u = 1e8, 0.3, 0.01, 0.02, 0.5
    c = 2.0 * zeta * math.sqrt(m * 2.0 * E * math.sqrt(r * REFERENCE_OVERLAP * r))
    for delta in (1e-5, 1e-4, 1e-3):
        elastic_f = normal_force(Normal(Hertz(E), Tangent(0.0)), delta, u, r, m, 1e-12)[0]
        damped = normal_force(Normal(Hertz(E), Constant(zeta)), delta, u, r, m, 1e-12)[0]
        assert damped - elastic_f == pytest.approx(c * u, rel=1e-6)
        tangent = normal_force(Normal(Hertz(E), Tangent(zeta)), delta, u, r, m, 1e-12)[0]
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
