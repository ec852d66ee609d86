"""The contact kernel over neighbour lists: exact overlap test, one function per law, the sum
(ownership rule and summation order by partner gid), pairs handed over between rows."""

import math
from dataclasses import replace

import numpy as np
import pytest

from pdyn import Simulation
from pdyn.config import ParticlesConfig
from pdyn.dynamics import contact
from pdyn.dynamics.contact import ContactLaw, ContactPass
from pdyn.dynamics.laws import (TANGENT, Damping, Hertz, Linear, Normal, damping_ratio,
                                normal_force)
from pdyn.dynamics.neighbours import NeighbourList
from pdyn.particles import FIXED, GHOST, INFINITE, OWNED, ParticleStore
from tests.mpi.scenes import dense_polydisperse, gather_fields


def forces(model, store, pairs, walls, rows, gravity, skin=0.0):
    """``model.forces`` over lists of ``rows`` built from candidate ``pairs`` and ``walls``."""
    lists = NeighbourList(skin)
    lists.hang(*model.hangers)
    lists.build(pairs, store, lists.radii(store.radius), rows, walls)
    return model.forces(store, lists, gravity, 1e-6)[:2]


def _cluster(n=40, seed=0):
    """Overlapping spheres in a small box, owned, plus a floor wall."""
    rng = np.random.default_rng(seed)
    s = ParticleStore(2 * n)
    wall = s.add(gid=[-1], pos=[[0, 0, 0]], normal=[[0, 0, 1]], radius=np.inf, mass=np.inf,
                 flags=INFINITE | FIXED)
    h = s.add(gid=rng.permutation(n) + 10, pos=rng.uniform(0.0, 2.0, (n, 3)),
              vel=rng.normal(0, 1, (n, 3)), radius=rng.uniform(0.3, 0.5, n),
              mass=rng.uniform(1, 2, n))
    i, j = np.triu_indices(n, 1)
    return s, wall, h, np.stack((h[i], h[j]), axis=1)


@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_force_does_not_depend_on_candidate_order_or_skin(law):
    """Shuffled candidates, swapped pair sides, rows in another order, lists with a skin (more
    partners that do not touch): the same forces, contacts and energy, bit for bit."""
    s, wall, h, pairs = _cluster()
    model = ContactPass(ContactLaw(law, 1e5, restitution=0.7))
    g = np.array([0.0, 0.0, -9.81])
    n, e = forces(model, s, pairs, wall, h, g)
    ref = s.force[h].copy()
    assert n > 20 and e > 0
    rng = np.random.default_rng(1)
    shuffled = pairs[rng.permutation(len(pairs))]
    swap = rng.random(len(pairs)) < 0.5
    shuffled[swap] = shuffled[swap][:, ::-1]
    for skin in (0.0, 0.3):
        s.force[:] = 0.0
        n2, e2 = forces(model, s, shuffled, wall, h[::-1], g, skin)
        assert n2 == n and e2 == pytest.approx(e, rel=1e-14)  # energy: summed in row order
        np.testing.assert_array_equal(s.force[h], ref)  # bit for bit


def test_only_owned_sides_get_forces_and_contacts_count_once():
    s = ParticleStore()
    a, b, c = s.add(gid=[5, 3, 7], pos=[[0, 0, 0], [0.8, 0, 0], [-0.8, 0, 0]], radius=0.5,
                    mass=1.0, flags=np.array([OWNED, GHOST, GHOST], np.uint8))
    model = ContactPass(ContactLaw("linear", stiffness=100.0))
    n, e = forces(model, s, np.array([[a, b], [c, a]]), np.zeros(0, np.int64), np.array([a]),
                  np.zeros(3))
    # a–b (gid 5, 3) is counted on b's owner, a–c (5, 7) here; each side holds half the energy
    assert n == 1
    assert e == pytest.approx(2 * 0.5 * (0.5 * 100.0 * 0.2**2))
    np.testing.assert_allclose(s.force[a], [100 * 0.2 - 100 * 0.2, 0, 0], atol=1e-12)
    np.testing.assert_array_equal(s.force[[b, c]], 0.0)  # ghosts: the owner's business


def test_candidates_that_do_not_touch_are_ignored():
    s = ParticleStore()
    a, b = s.add(gid=[0, 1], pos=[[0, 0, 0], [1.01, 0, 0]], radius=0.5, mass=1.0)
    for skin in (0.0, 0.1):
        n, e = forces(ContactPass(ContactLaw("linear", 1e6)), s, np.array([[a, b]]), np.zeros(0, np.int64),
                      np.array([a, b]), np.zeros(3), skin)
        assert (n, e) == (0, 0.0)
    np.testing.assert_array_equal(s.force[[a, b]], 0.0)


def test_linear_law():
    law = Normal(Linear(E=2e6, k=0.0), Damping(0.0, TANGENT))
    f, e = normal_force(law, 0.01, 3.0, 0.25, 1.0, 1e-4)
    assert f == pytest.approx(2e6 * 0.25 * 0.01) and e == pytest.approx(0.5 * 5e5 * 1e-4)
    f, _ = normal_force(Normal(Linear(E=2e6, k=1e3), Damping(0.0, TANGENT)), 0.01, 3.0, 0.25, 1.0,
                        1e-4)
    assert f == pytest.approx(10.0)  # a given stiffness wins over E R_eff


def test_linear_dashpot_sees_the_velocity_at_the_sample():
    """In a contact's bulk the dashpot is c u*, u* = u / (1 + ε/2) the half-step approach
    speed corrected for its lag (ε = c dt / (2 m)); at the first touch it carries the impulse
    from the touch on; as dt → 0 it is the classic c v."""
    zeta, k, m, dt, v = damping_ratio(0.5), 1e3, 2.0, 1e-3, 3.0
    c = 2 * zeta * math.sqrt(m * k)
    u = v / (1 + 0.25 * dt * c / m)
    damped = Normal(Linear(E=0.0, k=k), Damping(zeta, TANGENT))
    f_d, _ = normal_force(damped, 0.01, v, 0.25, m, dt)
    assert f_d == pytest.approx(k * 0.01 + c * u, rel=1e-12)
    # touching since a quarter step (δ = v dt/4): the window from the touch is 3/4 of a step
    f_0, _ = normal_force(damped, v * dt / 4, v, 0.25, m, dt)
    assert f_0 == pytest.approx(k * v * dt / 4 + c * u * 0.75, rel=1e-12)
    f_c, _ = normal_force(damped, 0.01, v, 0.25, m, 1e-12)
    assert f_c == pytest.approx(k * 0.01 + c * v, rel=1e-9)


@pytest.mark.parametrize("law", [
    Normal(Linear(E=1e6, k=0.0), Damping(damping_ratio(0.1), TANGENT)),
    Normal(Hertz(E=1e6), Damping(damping_ratio(0.1, "hertz"), TANGENT))])
def test_damped_contact_at_rest_is_elastic(law):
    """Issue 30: with no approach speed the damped law returns the elastic force exactly,
    whatever the overlap and the time step (the force of a contact at rest)."""
    elastic = Normal(law.law, Damping(0.0, TANGENT))
    for delta in (1e-9, 1e-6, 1e-3, 0.02):
        for dt in (1e-7, 1e-5, 1e-3):
            assert normal_force(law, delta, 0.0, 0.25, 1.5, dt) == normal_force(
                elastic, delta, 0.0, 0.25, 1.5, dt)


def test_dashpot_never_reverses_the_approach():
    """However large ζ, one sample's damping force at most stops the pair's approach within the
    step: m u / dt (without the cap the explicit update would overshoot)."""
    law, m, dt, v = Normal(Linear(E=0.0, k=1e6), Damping(1e4, TANGENT)), 2.0, 1e-3, 3.0
    assert normal_force(law, 0.01, v, 0.25, m, dt)[0] == pytest.approx(1e4 + m * v / dt,
                                                                       rel=1e-12)
    assert normal_force(law, 0.01, -v, 0.25, m, dt)[0] == pytest.approx(1e4 - m * v / dt,
                                                                        rel=1e-12)
    assert normal_force(law, 0.001, -v, 0.25, m, dt)[0] == 0.0  # would pull: clamped
    hertz = Normal(Hertz(E=1e9), Damping(1e4, TANGENT))
    f_s = normal_force(Normal(Hertz(E=1e9), Damping(0.0, TANGENT)), 0.01, v, 0.25, m, dt)[0]
    assert normal_force(hertz, 0.01, v, 0.25, m, dt)[0] == pytest.approx(f_s + m * v / dt,
                                                                         rel=1e-12)


def test_hertz_law():
    f, e = normal_force(Normal(Hertz(E=1e6), Damping(0.0, TANGENT)), 0.01, 0.0, 0.25, 1.0, 1e-4)
    assert f == pytest.approx(4 / 3 * 1e6 * math.sqrt(0.25) * 0.01**1.5)
    assert e == pytest.approx(8 / 15 * 1e6 * math.sqrt(0.25) * 0.01**2.5)
    # the energy is the work of the elastic force: dE/dδ = F
    d = 1e-6
    e2 = normal_force(Normal(Hertz(E=1e6), Damping(0.0, TANGENT)), 0.01 + d, 0.0, 0.25, 1.0,
                      1e-4)[1]
    assert (e2 - e) / d == pytest.approx(f, rel=1e-4)


@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_jitted_law_matches_the_python_law(law):
    """The accumulation kernel (compiled per law) applies exactly the law function."""
    s = ParticleStore()
    a, w = s.add(gid=[0, -1], pos=[[0, 0, 0.45], [0, 0, 0]], vel=[[0, 0, -1.0], [0, 0, 0]],
                 normal=[[0, 0, 0], [0, 0, 1]], radius=[0.5, np.inf], mass=[2.0, np.inf],
                 flags=np.array([OWNED, INFINITE | FIXED], np.uint8))
    model = ContactPass(ContactLaw(law, 1e6, restitution=0.6))
    n, e = forces(model, s, np.zeros((0, 2), np.int64), np.array([w]), np.array([a]),
                  np.zeros(3))
    f, e_ref = normal_force(model.law.parameters, 0.5 - 0.45, 1.0, 0.5, 2.0, 1e-6)
    assert n == 1 and e == e_ref
    assert s.force[a].tolist() == [0.0, 0.0, f]


@pytest.mark.parametrize("law,slots", [("linear", None), ("hertz", None), ("hertz", 3)])
def test_frictionless_pairs_evaluated_once_give_the_bits_of_both_sides(monkeypatch, law, slots):
    """Without rotation too a pair of two rows is evaluated once and handed to the other row:
    positions, velocities and forces, the contact count and the elastic energy of every step
    are those of every pair evaluated from both sides, bit for bit (damped contacts, periodic,
    reordered); so they are when the results wait in so few ``slots`` that most pairs find
    theirs taken and are evaluated in both rows. The first run's rows gather their entries with
    work first, the second's do not (``contact.GATHER_FROM``)."""
    cfg = dense_polydisperse(("periodic",) * 3, n=300, law=law, reorder_every=20)
    if slots is not None:
        monkeypatch.setattr(contact, "SLOTS_PER_ROW", 0.0)
        monkeypatch.setattr(contact, "MIN_SLOTS", slots)
    monkeypatch.setattr(contact, "HAND_OVER_FROM",
                        dict.fromkeys(contact.HAND_OVER_FROM, 0.0))  # always
    monkeypatch.setattr(contact, "GATHER_FROM", 0.0)
    once = Simulation(cfg)
    handed, sums = 0, []
    for _ in range(150):
        once.step()
        link = once.contact._link[:once.neighbours.entries()]
        handed += int((link > np.arange(link.size)).sum())
        sums.append((once.n_contacts, once.elastic_energy))
    assert once.rebuilds > 5 and handed > 150 * 100
    monkeypatch.setattr(contact, "HAND_OVER_FROM",
                        dict.fromkeys(contact.HAND_OVER_FROM, math.inf))  # never
    monkeypatch.setattr(contact, "GATHER_FROM", math.inf)
    both = Simulation(cfg)
    for step in range(150):
        both.step()
        assert (both.n_contacts, both.elastic_energy) == sums[step]
    assert both.contact._link.size == 0 and not both.contact._gather
    assert sum(n for n, _ in sums) > 150 * 100
    fields = ("pos", "vel", "force")
    x, y = gather_fields(once, fields), gather_fields(both, fields)
    for name, u, v in zip(("gid",) + fields, x, y):
        assert np.array_equal(u, v), name


@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_the_first_pass_decides_nothing_and_the_next_go_by_the_pass_before(friction):
    """How a pass works (``HAND_OVER_FROM``, ``GATHER_FROM``) goes by the share of entries that
    touched in the pass before; the run's first pass has none, so it neither hands pairs over
    nor gathers. A loose start (no sphere touches) then gathers in none of its first lists'
    passes (it did when the first pass guessed that every entry touched), and a packing where
    every sphere presses on its six lattice neighbours hands its Hertz pairs over and gathers
    from the second pass on; the same bits either way (tests above)."""
    loose = Simulation(dense_polydisperse(("periodic",) * 3, n=300, law="hertz",
                                          friction=friction))
    assert not loose.contact._gather and loose.contact._link.size == 0
    loose.step()
    assert loose.rebuilds == 0 and not loose.contact._gather
    assert loose.contact._link.size == 0
    n, d = 6, 1.0
    grid = np.stack(np.meshgrid(*[np.arange(n) * 0.95 * d] * 3, indexing="ij"), -1)
    cfg = dense_polydisperse(("periodic",) * 3, n=300, law="hertz", friction=friction)
    cfg = replace(cfg, box=replace(cfg.box, hi=(n * 0.95 * d,) * 3), initial_overlap="allow",
                  particles=ParticlesConfig(positions=grid.reshape(-1, 3),
                                            radii=np.full(n**3, d / 2), density=1000.0))
    pressed = Simulation(cfg)
    assert not pressed.contact._gather and pressed.contact._link.size == 0
    assert pressed.contact._touching > 0.5
    pressed.step()
    assert pressed.contact._link.size > 0 and pressed.contact._gather


@pytest.mark.parametrize("friction", [0.0, 0.5])
@pytest.mark.parametrize("law, contact, frictionless", [
    ("hertz", {}, True), ("hertz", {"damping": "constant"}, True),
    ("hertz", {"damping": "tsuji"}, True),
    ("hertz", {"damping": "viscoelastic", "damping_coefficient": 1e3, "restitution": 1.0},
     False),
    ("hertz", {"damping": "mass_velocity", "damping_coefficient": 1e3, "restitution": 1.0},
     False),
    ("hertz", {"restitution": 1.0}, False),
    ("hertz", {"damping": "viscoelastic", "damping_coefficient": 1e3, "restitution": 1.0,
               "cohesion": "jkr", "work_of_adhesion": 0.01}, True),
    ("linear", {"damping": "mass_velocity", "damping_coefficient": 10.0, "restitution": 1.0},
     False),
    ("linear", {"restitution": 1.0}, False)])
def test_pairs_are_handed_over_where_their_dashpot_costs(law, contact, frictionless, friction):
    """Dense frictionless Hertz contacts hand their pairs over (``frictionless``) where the
    dashpot makes a contact cost more than its hand-over — pdyn's windowed ones (the default
    ``tangent``, ``constant``) and ``tsuji`` —, not undamped or with LAMMPS' ``mass_velocity``
    or ``viscoelastic`` (``contact.CHEAP_DAMPINGS``), unless cohesion adds its cost (JKR);
    frictionless linear ones never; frictional contacts always (their tangential part and the
    second row's spring outweigh the hand-over)."""
    cfg = dense_polydisperse(("periodic",) * 3, n=300, law=law, friction=friction)
    sim = Simulation(replace(cfg, contact=replace(cfg.contact, **contact)))
    model = sim.contact
    model._touching, model._link_found = 0.5, False  # half the entries touch: dense
    assert (model._links(sim.store, sim.neighbours) is not None) == (friction > 0.0
                                                                      or frictionless)


@pytest.mark.parametrize("friction", [0.0, 0.5])
@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_pairs_are_handed_over_where_it_pays(law, friction):
    """By default a dense packing of damped spheres hands its pairs over with the Hertz law,
    whose contact costs more than its hand-over, and with the linear law with friction; never
    the frictionless linear law (``contact.HAND_OVER_FROM``)."""
    sim = Simulation(dense_polydisperse(("periodic",) * 3, n=300, law=law, friction=friction))
    model = sim.contact
    for touching, dense in ((0.5, True), (0.1, False)):  # half the entries touch: dense
        model._touching, model._link_found = touching, False
        link = model._links(sim.store, sim.neighbours)
        assert (link is not None) == (dense and (law == "hertz" or friction > 0.0))
