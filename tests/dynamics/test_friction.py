"""Frictional contact with rotation and contact history (``pdyn.dynamics.friction``): the
closed forms of a sphere on a plane, the two copies of a pair's spring, history across
rebuilds and reordering, the slot limit, the recorded tangential forces, the merge of a row's
slots with its list."""

import math

import numpy as np
import pytest

from pdyn import Simulation
from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.dynamics.friction import (ContactHistory, HistoryOverflowError,
                                    _accumulate_frictional, _load_slots, _save_slots,
                                    friction_parameters, partner_key)
from pdyn.dynamics.laws import law_parameters
from pdyn.particles import HISTORY_SLOTS
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
    """Both copies of a contact's spring (one per side, kept by each particle) are negatives
    of each other bit for bit, and keyed by the partner's id."""
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
        sim.sync_history()
        if s.history_key[a, 0]:
            seen += 1
            assert s.history_key[a, 0] == partner_key(s.gid[b])
            assert s.history_key[b, 0] == partner_key(s.gid[a])
            assert np.array_equal(s.history_spring[a, 0], -s.history_spring[b, 0])
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
    assert (x[5] != 0).sum() > 50
    for name, u, v in zip(("gid",) + FRICTIONAL_STATE, x, y):
        assert np.array_equal(u, v), name


def test_history_sync_changes_nothing_and_is_required():
    """Saving the per-entry history into the particles' slots after every step changes no
    bit of the run; lists rebuilt without that save are refused (the springs would be lost)."""
    cfg = dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5)
    a, b = Simulation(cfg), Simulation(cfg)
    for _ in range(150):
        a.step()
        b.step()
        b.sync_history()
    a.sync_history()
    for name in ("pos", "vel", "omega", "history_count", "history_key", "history_spring"):
        assert np.array_equal(getattr(a.store, name), getattr(b.store, name)), name
    assert (a.store.history_count > 0).sum() > 20
    a.step()  # the history advances past the slots again
    a._find_neighbours(None, rebuilt=True)
    with pytest.raises(RuntimeError, match="saved"):
        a._forces()


def test_spin_kicks_skip_only_rows_that_touch_nothing(monkeypatch):
    """The spin kicks integrate only the rows that touched something in the last pass, with
    the increments the pass left, and the pass leaves the torque of rows that touched nothing
    in this and the last step as it is: after every step of a run with lists (contacts made
    and lost between rebuilds) every other row's torque is exactly zero, and the run equals
    one that kicks every row from its torque."""
    cfg = dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5)
    sparse = Simulation(cfg)
    skipped = 0
    for _ in range(150):
        sparse.step()
        rows = sparse.neighbours.rows
        spinning = sparse.contact.history.spin_rows(sparse.neighbours)
        rest = np.setdiff1d(rows, spinning)
        assert not sparse.store.torque[rest].any()
        skipped += rest.size
        # the pass left the kicks' increments dt/2 · T / I of those rows, bit for bit
        handles, increment = sparse.contact.history.spin_kicks(sparse.neighbours,
                                                               0.5 * sparse.dt)
        st = sparse.store
        inertia = 0.4 * st.mass[handles] * st.radius[handles] * st.radius[handles]
        expected = (0.5 * sparse.dt / inertia)[:, None] * st.torque[handles]
        assert np.array_equal(handles, spinning) and np.array_equal(increment, expected)
    assert skipped > 150 * 20 and sparse.rebuilds > 3
    sparse.sync_history()  # as run() does at its end
    # the reference kicks every row, with increments computed by the kick from the torques
    monkeypatch.setattr(ContactHistory, "spin_kicks",
                        lambda self, lists, half_dt: (lists.rows, np.zeros((0, 3))))
    dense = Simulation(cfg)
    dense.run(150)
    for name in FRICTIONAL_STATE:
        assert np.array_equal(getattr(sparse.store, name), getattr(dense.store, name)), name


@pytest.mark.parametrize("hint", [0, 1])
def test_the_sliding_hint_changes_no_bit(monkeypatch, hint):
    """The pass computes a contact's Coulomb cap with a branch if it stuck last step and
    without one if it slid (``_tangential``): a run whose hints all say "stuck" (or all
    "slid") ends with the same bits as the run with the real hints, in which contacts both
    slid and stuck."""
    cfg = dense_polydisperse(("wall",) * 3, n=200, law="hertz", friction=0.5)
    real = Simulation(cfg)
    slid = stuck = 0
    for _ in range(150):
        real.step()
        flags = real.contact.history.slid
        slid, stuck = slid + int(flags.sum()), stuck + int((flags == 0).sum())
    real.sync_history()
    assert slid > 100 and stuck > 100
    prepare = ContactHistory.prepare

    def forced(self, store, lists):
        out = prepare(self, store, lists)
        old = out[0]
        old[2][:old[3]] = hint
        return out

    monkeypatch.setattr(ContactHistory, "prepare", forced)
    other = Simulation(cfg)
    other.run(150)
    for name in FRICTIONAL_STATE:
        assert np.array_equal(getattr(real.store, name), getattr(other.store, name)), name


def test_too_many_partners_for_the_history_is_an_error():
    """A big sphere touching more small spheres than it has history slots: one line."""
    n = HISTORY_SLOTS + 4
    phi = np.pi * (3.0 - np.sqrt(5.0)) * np.arange(n)  # Fibonacci sphere
    z = 1.0 - 2.0 * (np.arange(n) + 0.5) / n
    rho = np.sqrt(1.0 - z * z)
    dirs = np.stack((rho * np.cos(phi), rho * np.sin(phi), z), axis=1)
    pos = np.vstack(([0.0, 0.0, 0.0], 1.19 * dirs))
    cfg = SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e5, friction=0.3),
        box=BoxConfig(lo=(-3, -3, -3), hi=(3, 3, 3), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=pos, radii=[1.0] + [0.2] * n, density=1000.0),
        gravity=(0, 0, 0), progress=False, initial_overlap="allow")
    with pytest.raises(HistoryOverflowError, match=f"more than {HISTORY_SLOTS} partners"):
        Simulation(cfg)
    # the same crowd arriving during the run: the step after the overflow stops it
    apart = cfg.with_(particles=ParticlesConfig(
        positions=np.vstack(([0.0, 0.0, 0.0], 1.3 * dirs)), velocities=np.vstack(
            ([0.0, 0.0, 0.0], -0.5 * dirs)), radii=[1.0] + [0.2] * n, density=1000.0))
    sim = Simulation(apart)
    with pytest.raises(HistoryOverflowError, match=r"partners \(step \d+\)"):
        sim.run(2000)
    assert 0 < sim.step_index < 2000


def test_recorded_tangential_force_is_coulomb_while_sliding():
    """With ``recording`` the pass leaves the tangential force per list entry: a sliding
    sphere's wall entry holds −μ F_n along the slip."""
    sim = on_floor(vel=(1.0, 0, 0), mu=0.3)
    sim.contact.recording = True
    sim.run(200)
    lists = sim.neighbours
    ft = sim.contact.tangential[lists.split[0]:lists.start[1]]
    h = sim.store.owned[0]
    f_n = sim.store.force[h, 2] + sim.store.mass[h] * G  # the wall's normal force
    assert ft.shape == (1, 3) and f_n > 0
    np.testing.assert_allclose(ft[0], [-0.3 * f_n, 0, 0], rtol=1e-12, atol=1e-15)


def _one_row(touching, hist):
    """The frictional pass on row 0 with sphere partners 1, 2, 3 (those in ``touching``
    overlap it) and old slots ``hist`` ({partner: spring}), through the history's three
    kernels: the slots loaded per list entry, the pass, its entries saved into the slots;
    returns {key: new spring}."""
    pos = np.zeros((4, 3))
    for j, axis in ((1, 0), (2, 1), (3, 2)):
        pos[j, axis] = 0.9 if j in touching else 1.5
    vel = np.array([[0.1, 0.2, -0.3], [-0.2, 0.1, 0.3], [0.3, -0.1, 0.2], [0.1, 0.3, -0.2]])
    omega = np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0], [-0.5, 1.0, 0.2], [0.0, 0.4, 0.6]])
    hcount = np.zeros(4, np.int64)
    hkey = np.zeros((4, HISTORY_SLOTS), np.int64)
    hspring = np.zeros((4, HISTORY_SLOTS, 3))
    for q, j in enumerate(sorted(hist)):
        hkey[0, q], hspring[0, q] = partner_key(j), hist[j]
    hcount[0] = len(hist)
    rows, start, partner, gid = np.array([0]), np.array([0, 3]), np.array([1, 2, 3]), np.arange(4)
    old_e, old_s = np.zeros(3, np.int64), np.zeros((3, 3))
    n_old = _load_slots(rows, start, partner, gid, hcount, hkey, hspring, old_e, old_s)
    assert n_old == len(hist)
    new_e, new_s = np.zeros(3, np.int64), np.zeros((3, 3))
    law = law_parameters("linear", 0.0, 1000.0, 1.0, 0.3)
    *_, k, _ = _accumulate_frictional(
        law, friction_parameters("linear", 0.5, 0.0, 0.3), rows, start, np.array([3]),
        partner, pos, vel, omega, np.full(4, 0.5), np.ones(4), gid, np.zeros((4, 3)),
        np.zeros(3), 1e-3, np.zeros((4, 3)), np.zeros((4, 3)), old_e, old_s,
        np.zeros(3, np.uint8), n_old, new_e, new_s, np.zeros(3, np.uint8), None, True,
        np.zeros(1, np.int64), np.zeros((1, 3)))
    assert k == len(touching) and list(new_e[:k]) == sorted(j - 1 for j in touching)
    _save_slots(rows, start, partner, gid, new_e, new_s, k, hcount, hkey, hspring)
    n = hcount[0]
    assert n == k and not hkey[0, n:].any() and not hspring[0, n:].any()
    return {int(k): tuple(s) for k, s in zip(hkey[0, :n], hspring[0, :n])}


def test_history_merge_keeps_every_spring():
    """The merge of a row's slots with its list: a new contact ahead of kept ones (partner 1 new,
    2 and 3 kept: the kept slots must be read before the new one takes slot 0), a contact
    that ends between kept ones; each spring is what the contact alone gives, bit for bit."""
    old = {2: (1e-3, -2e-3, 5e-4), 3: (-4e-4, 1e-3, 2e-3)}
    alone = {j: _one_row({j}, {j: old[j]} if j in old else {}) for j in (1, 2, 3)}
    both = _one_row({1, 2, 3}, old)
    assert both == {k: v for a in alone.values() for k, v in a.items()}
    assert len(both) == 3
    gap = _one_row({1, 3}, {1: (2e-4, 1e-4, 0.0), 2: old[2], 3: old[3]})
    assert gap == {partner_key(1): _one_row({1}, {1: (2e-4, 1e-4, 0.0)})[partner_key(1)],
                   partner_key(3): alone[3][partner_key(3)]}
