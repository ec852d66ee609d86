"""Frictional contact with rotation and contact history (``pdyn.dynamics.friction``,
``pdyn.dynamics.history``): the closed forms of a sphere on a plane, the two copies of a pair's
spring, history across rebuilds and reordering, any number of contacts per sphere, the
recorded tangential forces, the spin kicks of the rows that touch something."""

import math
from dataclasses import replace

import numpy as np
import pytest

from pdyn import Simulation
from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.dynamics import contact
from pdyn.dynamics.contact import ContactPass
from pdyn.dynamics.history import partner_key
from tests.mpi.scenes import FRICTIONAL_STATE, dense_polydisperse, gather_fields

R, RHO, G = 0.01, 2500.0, 9.81


def on_floor(vel=(1.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0), gravity=(0.0, 0.0, -G), law="hertz",
             mu=0.3, e=0.5, **contact):
    """One glass-like sphere resting on a floor wall (periodic in x and y)."""
    cfg = SimulationConfig(
        contact=ContactConfig(law=law, youngs_modulus=1e7, friction=mu, restitution=e,
                              **contact),
        box=BoxConfig(lo=(-1, -1, 0), hi=(1, 1, 1), boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=[[0, 0, R]], radii=[R], velocities=[vel],
                                  density=RHO),
        gravity=gravity, progress=False)
    sim = Simulation(cfg)
    sim.store.omega[sim.store.owned] = omega
    return sim


@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_sliding_sphere_rolls_at_five_sevenths(law):
    """A sphere launched sliding without spin decelerates at μ g until it rolls without
    slip at 5/7 of its initial speed, ω r = v ([ChungOoi2011]-style closed form)."""
    v0, mu = 1.0, 0.3
    sim = on_floor(vel=(v0, 0, 0), law=law, mu=mu)
    h = sim.store.owned
    t_roll = 2.0 * v0 / (7.0 * mu * G)  # end of sliding
    sim.run(int(0.5 * t_roll / sim.dt))
    v_half = sim.store.vel[h, 0][0]
    assert v_half == pytest.approx(v0 - mu * G * sim.time, rel=2e-3)  # Coulomb: a = μ g
    sim.run(int(1.0 * t_roll / sim.dt))
    v, w = sim.store.vel[h][0], sim.store.omega[h][0]
    assert v[0] == pytest.approx(5.0 / 7.0 * v0, rel=1e-3)
    assert w[1] * R == pytest.approx(v[0], rel=1e-3)
    assert abs(w[0]) + abs(w[2]) < 1e-9


@pytest.mark.parametrize("law", ["linear", "hertz"])
@pytest.mark.parametrize("theta", [10.0, 30.0])
def test_incline_rolls_or_slides(law, theta):
    """On an incline (gravity tilted by θ) a sphere from rest rolls without slip,
    a = 5/7 g sin θ, while tan θ < 7/2 μ, and slides, a = g (sin θ − μ cos θ), beyond."""
    mu = 0.1  # 7/2 μ = 0.35: tan 10° = 0.18 rolls, tan 30° = 0.58 slides
    th = math.radians(theta)
    sim = on_floor(vel=(0, 0, 0), law=law, mu=mu,
                   gravity=(G * math.sin(th), 0.0, -G * math.cos(th)))
    h = sim.store.owned
    sim.run(int(0.2 / sim.dt))
    a = sim.store.vel[h, 0][0] / sim.time
    rolls = math.tan(th) < 3.5 * mu
    expect = 5.0 / 7.0 * G * math.sin(th) if rolls else G * (math.sin(th) - mu * math.cos(th))
    assert a == pytest.approx(expect, rel=2e-3)
    slip = sim.store.vel[h, 0][0] - sim.store.omega[h, 1][0] * R
    assert (abs(slip) < 1e-3 * sim.store.vel[h, 0][0]) == rolls


def test_rolling_friction_stops_a_rolling_sphere():
    """Constant rolling torque μ_r R F_n ([Ai2011] model A): a sphere rolling without slip
    decelerates at 5/7 μ_r g and stops."""
    v0, mu_r = 0.1, 0.02
    sim = on_floor(vel=(v0, 0, 0), omega=(0, v0 / R, 0), mu=0.5, rolling_friction=mu_r)
    h = sim.store.owned
    sim.run(int(0.2 / sim.dt))
    a = (v0 - sim.store.vel[h, 0][0]) / sim.time
    assert a == pytest.approx(5.0 / 7.0 * mu_r * G, rel=1e-2)


def test_pair_springs_are_exact_negatives():
    """Both copies of a contact's spring (one per side, kept by each sphere's records) are
    negatives of each other bit for bit, and keyed by the partner's id."""
    cfg = SimulationConfig(
        contact=ContactConfig(law="hertz", youngs_modulus=1e6, friction=0.4, restitution=0.8),
        box=BoxConfig(lo=(-5, -5, -5), hi=(5, 5, 5), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[0, 0, 0], [0.95, 0.3, 0.1]], radii=[0.5, 0.5],
                                  velocities=[[0.5, 0, 0], [-0.5, -0.2, 0.1]], density=1000.0),
        gravity=(0, 0, 0), progress=False)
    sim = Simulation(cfg)
    s = sim.store
    a, b = sorted(s.owned, key=lambda h: s.gid[h])
    seen = 0
    for _ in range(400):
        sim.step()
        sim.neighbours.save(sim.store)
        if s.history_count[a]:
            seen += 1
            assert s.history_count[a] == s.history_count[b] == 1
            assert s.values("history_key", [a])[0] == partner_key(s.gid[b])
            assert s.values("history_key", [b])[0] == partner_key(s.gid[a])
            spring = s.values("history_spring", [a])[0]
            assert np.array_equal(spring, -s.values("history_spring", [b])[0]) and spring.any()
    assert seen > 10 and np.abs(s.omega[a]).max() > 0


def _state(**cfg):
    sim = Simulation(dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5,
                                        **cfg))
    sim.run(150)
    return sim, gather_fields(sim, FRICTIONAL_STATE)


def test_history_survives_rebuilds_and_reordering():
    """The same frictional run with lists rebuilt every step and never reordered, and with a
    skin and reordering every 5 steps: identical bits (a spring lost or mixed up at a rebuild
    or a reorder would change the trajectory)."""
    every, x = _state(neighbour_skin=0.0, reorder_every=0)
    lists, y = _state(reorder_every=5)
    assert lists.rebuilds > 5 and lists.rebuilds < lists.step_index
    assert (x[FRICTIONAL_STATE.index("history_count") + 1] != 0).sum() > 50
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name


def test_history_sync_changes_nothing_and_lists_save_it_before_a_rebuild():
    """Saving the history into the particles' records after every step changes no bit of the
    run; lists rebuilt without that save save it first (the history hangs on them: the
    springs are never lost)."""
    cfg = dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5)
    a, b = Simulation(cfg), Simulation(cfg)
    for _ in range(150):
        a.step()
        b.step()
        b.neighbours.save(b.store)
    a.neighbours.save(a.store)
    x, y = gather_fields(a, FRICTIONAL_STATE), gather_fields(b, FRICTIONAL_STATE)
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name
    assert (a.store.history_count > 0).sum() > 20
    a.step()  # the history advances past the records again
    assert not a.contact.history.saved and a.store.history_count.sum() == 0
    a.neighbours.rebuild(a.broadphase, a.store, None, relist=True, walls=a.store.walls,
                         table=a.wallset.table)
    assert a.contact.history.saved and (a.store.history_count > 0).sum() > 20


def crowd(n: int, gap: float = 1.25, speed: float = 0.5, **cfg):
    """One sphere of radius 1 at the origin with ``n`` spheres of radius 0.2 around it on a
    Fibonacci sphere of radius ``gap``, all moving towards it at ``speed`` (m/s): they hit it
    at once and touch it, and their neighbours, for a contact time. Frictional linear contacts
    with rolling friction, no gravity."""
    phi = np.pi * (3.0 - np.sqrt(5.0)) * np.arange(n)
    z = 1.0 - 2.0 * (np.arange(n) + 0.5) / n
    rho = np.sqrt(1.0 - z * z)
    dirs = np.stack((rho * np.cos(phi), rho * np.sin(phi), z), axis=1)
    rng = np.random.default_rng(n)
    vel = -speed * dirs + rng.normal(0.0, 0.05, dirs.shape)
    return SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e5, friction=0.3, rolling_friction=0.05,
                              restitution=0.5),
        box=BoxConfig(lo=(-3, -3, -3), hi=(3, 3, 3), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=np.vstack(([0.0, 0.0, 0.0], gap * dirs)),
                                  velocities=np.vstack(([0.0, 0.0, 0.0], vel)),
                                  radii=[1.0] + [0.2] * n, density=1000.0),
        gravity=(0, 0, 0), progress=False, initial_overlap="allow", **cfg)


def test_a_sphere_keeps_a_spring_for_each_of_a_hundred_contacts():
    """A big sphere hit at once by 120 small ones keeps a record for each contact (no cap),
    through rebuilds: the run with lists rebuilt every step ends with the same bits as the one
    with a skin."""
    every = Simulation(crowd(120, neighbour_skin=0.0))
    skin = Simulation(crowd(120))
    most = 0
    for _ in range(120):
        every.step()
        every.neighbours.save(every.store)
        big = every.store.owned[every.store.gid[every.store.owned] == 0][0]
        c = int(every.store.history_count[big])
        if c > most:
            most = c
            keys = every.store.values("history_key", [big])
            assert np.all(np.diff(keys) > 0)
            assert np.abs(every.store.values("history_spring", [big])).max() > 0
    assert most >= 100
    skin.run(120)
    every.run(0)
    x, y = gather_fields(every, FRICTIONAL_STATE), gather_fields(skin, FRICTIONAL_STATE)
    assert skin.rebuilds < skin.step_index
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name


def test_recorded_tangential_force_is_coulomb_while_sliding():
    """A pass told to record leaves the tangential force per list entry: a sliding
    sphere's wall entry holds −μ F_n along the slip."""
    sim = on_floor(vel=(1.0, 0, 0), mu=0.3)
    sim.record_tangential = True
    sim.run(200)
    lists = sim.neighbours
    ft = sim.contact.tangential[lists.split[0]:lists.start[1]]
    h = sim.store.owned[0]
    f_n = sim.store.force[h, 2] + sim.store.mass[h] * G  # the wall's normal force
    assert ft.shape == (1, 3) and f_n > 0
    np.testing.assert_allclose(ft[0], [-0.3 * f_n, 0, 0], rtol=1e-12, atol=1e-15)
    net = sim.wall_contacts()  # read from Python: the record
    np.testing.assert_array_equal(net["tangential_force"], ft)


def test_unrecorded_tangential_force_reads_nan():
    """Read from Python after a run that recorded nothing, a frictional contact's
    tangential force is NaN (not a silent 0); its normal force is there."""
    sim = on_floor(vel=(1.0, 0, 0), mu=0.3)
    sim.run(200)
    net = sim.wall_contacts()
    assert len(net["force"]) == 1 and net["force"][0] > 0
    assert np.isnan(net["tangential_force"]).all()


def test_spin_kicks_skip_only_rows_that_touch_nothing(monkeypatch):
    """The spin kicks integrate only the rows that touched something in the last pass, and
    the pass leaves the torque of rows that touched nothing in this and the last step as it
    is: after every step of a run with lists (contacts made and lost between rebuilds) every
    other row's torque is exactly zero, and the run equals one that kicks every row."""
    cfg = dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5)
    sparse = Simulation(cfg)
    skipped = 0
    for _ in range(150):
        sparse.step()
        rows = sparse.neighbours.rows
        rest = np.setdiff1d(rows, sparse.contact.spinning_rows(sparse.neighbours))
        assert not sparse.store.torque[rest].any()
        skipped += rest.size
    assert skipped > 150 * 20 and sparse.rebuilds > 3
    sparse.neighbours.save(sparse.store)
    monkeypatch.setattr(ContactPass, "spinning_rows", lambda self, lists: lists.rows)
    dense = Simulation(cfg)
    dense.run(150)
    x, y = gather_fields(sparse, FRICTIONAL_STATE), gather_fields(dense, FRICTIONAL_STATE)
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name


VISCOELASTIC = {"damping": "viscoelastic", "damping_coefficient": 1e3, "restitution": 1.0}


@pytest.mark.parametrize("law,slots,switch,model", [
    ("linear", None, False, {}), ("hertz", None, False, {}), ("linear", 3, False, {}),
    ("linear", None, True, {}),
    ("linear", None, False, {"damping": "mass_velocity", "damping_coefficient": 10.0,
                             "restitution": 1.0}),
    ("hertz", None, False, VISCOELASTIC),
    ("hertz", 3, False, {**VISCOELASTIC, "cohesion": "jkr", "work_of_adhesion": 10.0})])
def test_pairs_evaluated_once_give_the_bits_of_both_sides(monkeypatch, law, slots, switch,
                                                          model):
    """A pair of two rows evaluated once and handed to the other row (periodic, so that springs
    made through a periodic image, not exact negatives, meet rebuilds that make the pair
    direct; friction and rolling) gives the run of every pair evaluated from both sides, bit
    for bit, its springs kept by the first row alone and both sides' saved; so it does when
    the results wait in so few slots (``slots``) that most pairs find theirs taken and are
    evaluated in both rows, and when the run ``switch``es between the two with every other
    build of the lists (``ContactPass.hand_over``); its rows gather their entries with work
    first (those they evaluate that touch, those posted to them), the second run's do not
    (``contact.GATHER_ROTATING_FROM``; with cohesion no row gathers); with pdyn's default
    dashpot, with LAMMPS' sampled ones and with JKR cohesion, which holds pairs past
    touching (``model``: the ``[contact]`` fields changed)."""
    cfg = dense_polydisperse(("periodic",) * 3, n=300, law=law, friction=0.5, reorder_every=20)
    cfg = replace(cfg, contact=replace(cfg.contact, **model))
    if slots is not None:
        monkeypatch.setattr(contact, "SLOTS_PER_ROW", 0.0)
        monkeypatch.setattr(contact, "MIN_SLOTS", slots)
    monkeypatch.setattr(contact, "HAND_OVER_FROM",
                        dict.fromkeys(contact.HAND_OVER_FROM, 0.0))  # always
    monkeypatch.setattr(contact, "GATHER_ROTATING_FROM", 0.0)
    once = Simulation(cfg)
    handed = unlinked = gathered = 0
    for _ in range(150):
        if switch:
            once.contact.hand_over = once.neighbours.builds % 2 == 0
        once.step()
        link = once.contact._link[:once.neighbours.entries()]
        handed += int((link > np.arange(link.size)).sum())  # pairs this row evaluates for both
        unlinked += link.size == 0
        gathered += bool(once.contact._gather)
    assert once.rebuilds > 5 and handed > 150 * (40 if switch else 100)
    assert (unlinked > 30) == switch and (gathered > 140) == ("cohesion" not in model)
    monkeypatch.setattr(contact, "HAND_OVER_FROM",
                        dict.fromkeys(contact.HAND_OVER_FROM, math.inf))  # never
    monkeypatch.setattr(contact, "GATHER_ROTATING_FROM", math.inf)
    both = Simulation(cfg)
    both.run(150)
    assert both.contact._link.size == 0 and not both.contact._gather
    held = once.contact.history.count  # between rebuilds a pair handed over has one spring
    once.neighbours.save(once.store)  # and both sides' records once saved
    x, y = gather_fields(once, FRICTIONAL_STATE), gather_fields(both, FRICTIONAL_STATE)
    records = x[FRICTIONAL_STATE.index("history_count") + 1]
    assert (records != 0).sum() > 50
    assert switch or records.sum() > held
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name
