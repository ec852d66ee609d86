"""The ``chute`` scene (issue 33; Silbert et al. 2001): its rough base of fixed spheres, a
short run in which the base never moves, and the profile tools of ``pdyn.analysis.bagnold``
(the Bagnold fit recovers A, the slab volumes add up)."""

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.analysis import bagnold as cb
from pdyn.analysis.packing import slab_volume
from pdyn.particles import FIXED
from pdyn.placement import SceneError, random_layer
from pdyn.scenarios import chute, make_scene


def periodic_distances(xy, lx, ly):
    d = xy[:, None, :] - xy[None, :, :]
    d -= np.array([lx, ly]) * np.round(d / np.array([lx, ly]))
    dist = np.hypot(d[..., 0], d[..., 1])
    return dist[np.triu_indices(len(xy), 1)]


def test_random_layer_is_a_periodic_monolayer_near_jamming():
    xy = random_layer(10.0, 7.0, 1.0, seed=4)
    assert periodic_distances(xy, 10.0, 7.0).min() >= 1.0
    assert ((xy >= 0) & (xy < [10.0, 7.0])).all()
    assert 0.50 < len(xy) * np.pi / 4 / 70.0 < 0.547  # RSA's jamming coverage is 0.547
    assert np.array_equal(xy, random_layer(10.0, 7.0, 1.0, seed=4))
    assert not np.array_equal(xy[:5], random_layer(10.0, 7.0, 1.0, seed=5)[:5])
    with pytest.raises(SceneError, match="narrower than two diameters"):
        random_layer(1.5, 7.0, 1.0, seed=0)


def test_chute_scene_has_a_fixed_rough_base_and_tilted_gravity():
    s = make_scene("chute")
    base = s.fixed
    assert base.sum() == 70 and (~base).sum() == 2177 and np.array_equal(base[:70], [True] * 70)
    assert np.all(s.positions[base, 2] == 0.5) and not s.velocities.any()
    assert s.boundary == ("periodic", "periodic", "wall")
    assert np.allclose(s.gravity, [np.sin(np.radians(23)), 0, -np.cos(np.radians(23))])
    assert s.contact == {"stiffness": 2e4, "restitution": 0.88, "friction": 0.5}
    assert s.dt == pytest.approx(1e-4 * np.sqrt(10))
    flowing = s.positions[~base]
    assert flowing[:, 2].min() - 0.5 > 1.0  # above the base
    # no overlaps: lattice spacing above a diameter, jitter ±0.02
    assert periodic_distances(flowing[:200, :2], 10.0, 10.0)[
        np.abs(np.subtract.outer(flowing[:200, 2], flowing[:200, 2])[
            np.triu_indices(200, 1)]) < 1.0].min() > 1.0
    big = chute(scale=4.0, angle=22.0, stiffness=2e5)
    assert big.box_hi[0] == 20.0 and 4 * 2177 - 10 < (~big.fixed).sum() < 4 * 2177 + 10
    assert big.dt == pytest.approx(1e-4) and big.contact["stiffness"] == 2e5


def test_fixed_spheres_never_move_while_the_rest_flows():
    s = make_scene("chute", scale=0.25)
    s.velocities[~s.fixed, 2] = -2.0  # onto the base at once
    sim = Simulation(SimulationConfig(scene="chute", progress=False), scene=s)
    sim.run(300)
    st = sim.store
    h = st.owned
    gid = st.gid[h]
    fixed = s.fixed[gid]
    assert np.array_equal((st.flags[h] & FIXED) != 0, fixed)
    assert np.array_equal(st.pos[h][fixed], s.positions[gid[fixed]])
    assert not st.vel[h][fixed].any() and not st.omega[h][fixed].any()
    touching = sim.contact_pairs()
    assert np.isin(touching, np.flatnonzero(s.fixed)).any()  # flowing spheres hit the base
    assert st.vel[h][~fixed, 0].mean() > 0.0  # and gravity drives them downhill


def test_bagnold_fit_recovers_A():
    z = np.arange(0.5, 20.0, 1.0)
    v = cb.bagnold(z, 20.0, 0.42)
    A, rms = cb.fit_bagnold(z, v, 20.0)
    assert A == pytest.approx(0.42, rel=1e-12) and rms < 1e-12
    noisy = v + np.random.default_rng(0).normal(0.0, 0.05, v.shape)
    A, rms = cb.fit_bagnold(z, noisy, 20.0)
    assert A == pytest.approx(0.42, rel=0.01) and 0.0005 < rms < 0.01
    assert cb.bagnold(0.0, 20.0, 1.0) == 0.0
    assert cb.bagnold(20.0, 20.0, 1.0) == pytest.approx(2 / 3 * 20.0**1.5)


def test_slab_volumes_add_up_to_the_spheres():
    zc = np.array([[0.3], [1.7], [2.0]])
    edges = np.arange(-1.0, 4.0, 0.5)
    vol = slab_volume(zc, 0.5, edges[None, :-1], edges[None, 1:])
    assert np.allclose(vol.sum(1), np.pi / 6)
    pos = np.array([[0.5, 0.5, 1.0], [1.5, 0.5, 1.0]])
    phi, vx, count = cb.profiles(pos, np.array([[1.0, 0, 0], [3.0, 0, 0]]), 0.5, 4.0,
                                 np.array([0.0, 0.5, 1.5, 2.0]))
    assert count.tolist() == [0, 2, 0] and vx[1] == 4.0
    assert phi[1] == pytest.approx(2 * np.pi / 6 / 4.0)


def test_bagnold_profile_has_one_inertial_number():
    z = np.arange(0.5, 20.0, 1.0)
    phi = np.full(z.shape, 0.57)
    theta, A = 23.0, 0.1
    # dv/dz = A √(H − z) and P/ρ_s = cos θ φ (H − z): I = A / √(φ cos θ) at every depth
    fine = np.linspace(0.0, 20.0, 20001)
    v = np.interp(z, fine, cb.bagnold(fine, 20.0, A))
    inertial = cb.inertial_number(z, phi, v, theta)[3:-3]
    assert np.allclose(inertial, A / np.sqrt(0.57 * np.cos(np.radians(theta))), rtol=0.01)


def test_velocity_trend_over_the_averaging_window():
    series = [{"t": t, "vx": 1.0 + 0.001 * t, "ke": 0.0} for t in np.arange(0.0, 300.0, 1.0)]
    halves, line = cb.trend(series, since=99.5)
    assert halves == pytest.approx(1.2495 / 1.1495 - 1.0)  # the halves' means
    assert line == pytest.approx(0.199 / 1.1995)  # slope × window / mean
    steady = [dict(s, vx=2.0) for s in series]
    assert cb.trend(steady, since=99.5) == (0.0, pytest.approx(0.0, abs=1e-12))


def test_jop_inertial_number_inverts_mu_of_i():
    mu_s, mu_2, i_0 = cb.JOP
    for angle in (21.0, 22.0, 24.0, 30.0):
        i = cb.jop_inertial(angle)
        assert mu_s + (mu_2 - mu_s) / (i_0 / i + 1.0) == pytest.approx(np.tan(np.radians(angle)))
    assert np.isnan(cb.jop_inertial(20.0)) and np.isnan(cb.jop_inertial(33.0))
