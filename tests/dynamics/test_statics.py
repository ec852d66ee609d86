"""A contact at rest carries its elastic force (issue 30): spheres settled under gravity, both
laws, damped or not, at the default time step — every contact force equals k δ (linear) or
4/3 E* √R δ^{3/2} (Hertz) of its overlap, and equals the load it holds; and the damping
ratio's bound (issue 31). ``pdyn.dynamics.laws`` explains the dashpot."""

import numpy as np
import pytest

from pdyn.config import (MIN_RESTITUTION, BoxConfig, ConfigError, ContactConfig,
                         ParticlesConfig, SimulationConfig)
from pdyn.dynamics import laws
from pdyn.dynamics.laws import MAX_DAMPING_RATIO, _rebound, damping_ratio, effective_modulus
from pdyn.simulation import Simulation

R, E, NU, RHO, G = 0.01, 1e7, 0.2, 2800.0, 9.81  # glass-like sphere, soft contact (m, Pa, kg/m³)
MASS = RHO * 4.0 / 3.0 * np.pi * R**3
LAWS = ("linear", "hertz")


def elastic(law, delta, r_eff):
    """Elastic normal force (N) of an overlap ``delta`` (m) between bodies of effective radius
    ``r_eff`` (m): k δ with k = E R_eff, or 4/3 E* √R_eff δ^{3/2}."""
    delta = np.asarray(delta, float)
    if law == "linear":
        return E * r_eff * delta
    return 4.0 / 3.0 * effective_modulus(E, NU) * np.sqrt(r_eff) * delta**1.5


def static_overlap(law, load, r_eff):
    """The overlap (m) whose elastic force is ``load`` (N)."""
    if law == "linear":
        return load / (E * r_eff)
    return (load / (4.0 / 3.0 * effective_modulus(E, NU) * np.sqrt(r_eff))) ** (2.0 / 3.0)


def scene(law, e, pos, radii, lo=(-0.1, -0.1, 0.0), hi=(0.1, 0.1, 1.0), damping="tangent",
          **contact):
    """Spheres of the glass-like material at rest, periodic sides, a floor wall, gravity, the
    default time step; ``contact``: more ``ContactConfig`` fields."""
    return Simulation(SimulationConfig(
        contact=ContactConfig(law=law, youngs_modulus=E, poisson_ratio=NU, restitution=e,
                              damping=damping, **contact),
        box=BoxConfig(lo=lo, hi=hi, boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=pos, radii=radii, density=RHO),
        gravity=(0.0, 0.0, -G), initial_overlap="allow", progress=False))


def settle(sim, speed, max_steps):
    """Step until no sphere moves faster than ``speed`` (m/s); the steps taken."""
    steps = 0
    while steps < max_steps:
        sim.run(500, progress=False)
        steps += 500
        if np.abs(sim.store.vel[sim.store.owned]).max() < speed:
            return steps
    raise AssertionError(f"not at rest after {steps} steps: "
                         f"{np.abs(sim.store.vel[sim.store.owned]).max():.3g} m/s")


def by_gid(sim, field):
    """The owned spheres' ``field`` of the store, in global-id order."""
    h = sim.store.owned
    return getattr(sim.store, field)[h][np.argsort(sim.store.gid[h])]


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("e", [0.1, 0.3, 0.5, 0.9, 1.0])
def test_sphere_at_rest_on_the_floor_carries_its_weight(law, e):
    """Released at half its static overlap (e = 1: at it, no damping to settle), one sphere
    comes to rest on the floor; its contact force is then its weight and its elastic force to
    1e-9 (the earlier dashpot left the spring at 1.195 × the weight for e = 0.1, linear)."""
    weight = MASS * G
    start = static_overlap(law, weight, R) * (1.0 if e == 1.0 else 0.5)
    sim = scene(law, e, [[0.0, 0.0, R - start]], [R])
    settle(sim, 1e-13, 60_000)
    (z,) = by_gid(sim, "pos")[:, 2]
    assert elastic(law, R - z, R) / weight == pytest.approx(1.0, abs=1e-9)
    (force,) = sim.wall_contacts()["force"]
    assert force / weight == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("e", [0.3, 1.0])
def test_every_contact_of_a_stack_carries_the_weight_above_it(law, e):
    """Ten spheres stacked on the floor, released at 0.9 of their static overlaps (e = 1: at
    them): at rest contact j (the floor's, then sphere j−1 on sphere j) holds the weight of
    spheres j … 9, both in the force it applies and in its elastic force."""
    n = 10
    load = (n - np.arange(n)) * MASS * G  # contact j holds spheres j … n−1
    squeeze = 1.0 if e == 1.0 else 0.9
    gaps = 2 * R - squeeze * static_overlap(law, load, R / 2)
    gaps[0] = R - squeeze * static_overlap(law, load[0], R)  # the floor's contact
    z = np.cumsum(gaps)
    sim = scene(law, e, [[0.0, 0.0, zz] for zz in z], [R] * n)
    settle(sim, 1e-12, 100_000)
    z = by_gid(sim, "pos")[:, 2]
    overlap = np.concatenate(([R - z[0]], 2 * R - np.diff(z)))
    r_eff = np.array([R] + [R / 2] * (n - 1))
    np.testing.assert_allclose(elastic(law, overlap, r_eff) / load, 1.0, rtol=0, atol=1e-9)
    net = sim.contact_network()
    assert len(net["force"]) == n
    lower, upper = net["id"].min(axis=1), net["id"].max(axis=1)  # (wall, 0) or (j − 1, j)
    j = np.where(lower < 0, 0, upper)
    np.testing.assert_allclose(net["force"] / load[j], 1.0, rtol=0, atol=1e-9)


def close_packed(nx, ny, nz, seed, squeeze=1e-3):
    """Centres (m) of ``nz`` hexagonal layers of ``nx`` × ``ny`` spheres of radius R on the
    floor, neighbours in a layer 2 R (1 − ``squeeze``) apart, each layer touching the one
    below in one of its two kinds of hollows (chosen at random): a close packing (12
    neighbours) with a random stacking; and the periodic box width along x and y (m)."""
    rng = np.random.default_rng(seed)
    a = R * (1.0 - squeeze)
    lx, ly = 2 * a * nx, np.sqrt(3) * a * ny  # ny even: the layer is periodic
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="xy")
    x0, y0 = (2 * i + j % 2).ravel() * a, (np.sqrt(3) * j).ravel() * a
    rise = np.sqrt(4 * R * R - 4 * a * a / 3)  # centre height over the layer below
    layers, site = [], 0
    for k in range(nz):
        dx, dy = site * a, site * a / np.sqrt(3)  # site 0, 1, 2: A, B, C
        layers.append(np.column_stack(((x0 + dx) % lx, (y0 + dy) % ly,
                                       np.full(x0.size, R + k * rise))))
        site = (site + rng.integers(1, 3)) % 3
    return np.concatenate(layers), (lx, ly)


@pytest.fixture(scope="module", params=LAWS)
def bed(request):
    """1960 frictionless spheres in 10 randomly stacked close-packed layers (neighbours in a
    layer pressed 0.1 % of a diameter together, so every contact carries a load), released on
    a floor in a periodic box, strongly damped (e = 0.1), run until every speed is below
    1e-10 m/s, then 2000 steps more. (A poured frictionless bed takes ~10⁵ steps to stop
    flowing, and spheres sliding on the flat frictionless floor keep their speed.)"""
    pos, (lx, ly) = close_packed(14, 14, 10, seed=3)
    sim = scene(request.param, 0.1, pos, [R] * len(pos), lo=(0.0, 0.0, 0.0), hi=(lx, ly, 1.0))
    settle(sim, 1e-10, 40_000)
    sim.run(2000, progress=False)
    return request.param, sim


@pytest.mark.slow
def test_settled_bed_contacts_carry_their_elastic_forces(bed):
    """Every contact of the settled bed applies its elastic force (to 1e-9 of a sphere's
    weight; the earlier dashpot's were up to 16 % less at this e), and the floor carries the
    bed's weight, in the forces applied and in the elastic forces."""
    law, sim = bed
    net = sim.contact_network()
    i, j = net["id"][:, 0], net["id"][:, 1]
    wall = j < 0
    dist = np.linalg.norm(net["ends"][1::2] - net["ends"][0::2], axis=1)
    overlap = np.where(wall, R - dist, 2 * R - dist)  # a wall's end: the contact point
    f_el = elastic(law, overlap, np.where(wall, R, R / 2))
    weight = MASS * G
    assert len(i) > 5 * len(sim.store.owned)  # a packing: 12 neighbours a sphere
    assert net["force"].min() > 0.1 * weight  # every contact loaded
    np.testing.assert_allclose(net["force"], f_el, rtol=0, atol=1e-9 * weight)
    total = len(sim.store.owned) * weight
    assert np.sum(net["force"][wall]) / total == pytest.approx(1.0, abs=1e-9)
    assert np.sum(f_el[wall]) / total == pytest.approx(1.0, abs=1e-9)


def test_damping_ratio_is_bounded(monkeypatch):
    """Issue 31: an e below what the largest damping ratio gives is refused at once (the
    bracket used to double without end for e ≤ ~1e-7), the smallest accepted e is found in a
    bounded bisection, and the config's floor lies above the law's."""
    calls = []

    def counted(exponent, zeta, steps):
        calls.append(zeta)
        assert len(calls) < 100, "the bisection does not end"
        return _rebound(exponent, zeta, steps)

    monkeypatch.setattr(laws, "_rebound", counted)
    for law in LAWS:
        for e in (1e-300, 1e-7, 0.0, -1.0, float("nan")):
            calls.clear()
            with pytest.raises(ValueError, match="restitution"):
                damping_ratio.__wrapped__(e, law)
            assert len(calls) == 1
        calls.clear()
        zeta = damping_ratio.__wrapped__(MIN_RESTITUTION, law)
        assert 0.0 < zeta < MAX_DAMPING_RATIO and len(calls) < 60
        assert counted(1.5 if law == "hertz" else 1.0, MAX_DAMPING_RATIO, 2000) < MIN_RESTITUTION


@pytest.mark.parametrize("e", [1e-300, 5e-4, 0.0])
def test_config_refuses_a_restitution_below_the_floor(e):
    """One line naming ``contact.restitution`` and the value, instead of a bisection."""
    with pytest.raises(ConfigError, match=r"^contact\.restitution = .*: must be in \[0\.001, 1\]"):
        ContactConfig(restitution=e)
    ContactConfig(restitution=MIN_RESTITUTION)  # the floor itself is accepted
