"""Lees–Edwards simple shear ([box] shear_rate; flow x, gradient z): the image offsets, a
sphere crossing the z faces, a contact across them against the same pair in the bulk, the
linear profile of the shear cell, x momentum against the crossings, and the refusals."""

import numpy as np
import pytest

from pdyn.config import (BoxConfig, ConfigError, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.domain import Box, BlockGrid, DecompositionError, default_block_dims
from pdyn.fields.virial import cell_parts, cell_stress
from pdyn.io import read_thermo
from pdyn.simulation import Simulation

L = 4.0
RATE = 0.5


def _run(pos, vel, rate=RATE, friction=0.5, steps=0, dt=1e-3, **cfg):
    pos = np.asarray(pos, float)
    box = BoxConfig(lo=(0.0, 0.0, 0.0), hi=(L, L, L), boundary=("periodic",) * 3,
                    shear_rate=rate)
    sim = Simulation(SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=np.asarray(vel, float),
                                  radii=np.full(len(pos), 0.5), density=1000.0),
        box=box, gravity=(0.0, 0.0, 0.0), dt=dt, progress=False, reorder_every=0,
        initial_overlap="allow",
        contact=ContactConfig(stiffness=1e5, restitution=0.5, friction=friction), **cfg))
    if steps:
        sim.run(steps)
    return sim


def _by_gid(sim, name):
    s = sim.store
    o = s.owned
    return getattr(s, name)[o][np.argsort(s.gid[o])]


def test_image_offset_closed_form():
    """Δ(step) = step dt rate L_z reduced into [−L_x/2, L_x/2); the z images carry ±Δ and
    ±rate L_z along x, the others none."""
    box = Box(np.zeros(3), np.array([3.0, 2.0, 5.0]), ("periodic",) * 3, shear_rate=0.7)
    for step in (0, 1, 999, 12345):
        raw = step * 1e-3 * 0.7 * 5.0
        d = box.shear_offset(step, 1e-3)
        assert -1.5 <= d < 1.5 and abs(((raw - d) / 3.0) - round((raw - d) / 3.0)) < 1e-9
    s = box.shifts(0.25)
    assert s.shape == (27, 6)
    up, down = s[:, 2] > 0, s[:, 2] < 0
    base = Box(box.lo, box.hi, box.boundary).shifts()
    assert np.array_equal(s[~(up | down), :3], base[~(up | down)])
    assert np.allclose(s[up, 0] - base[up, 0], 0.25) and np.all(s[up, 3] == 0.7 * 5.0)
    assert np.allclose(s[down, 0] - base[down, 0], -0.25) and np.all(s[down, 3] == -3.5)
    assert not s[:, 4:].any()


def test_sphere_crossing_the_top_reappears_shifted():
    """A sphere leaving through the top face is wrapped at the next rebuild to z − L_z, x − Δ
    (that step's offset, then into the box) and v_x − rate L_z (its image below)."""
    sim = _run([[1.0, 2.0, L - 0.2]], [[0.3, 0.0, 2.0]])
    crossed = None
    for _ in range(400):
        before_pos, before_vel = sim.store.pos[sim.store.owned][0].copy(), \
            sim.store.vel[sim.store.owned][0].copy()
        sim.step()
        p, v = sim.store.pos[sim.store.owned][0], sim.store.vel[sim.store.owned][0]
        if p[2] < 1.0:
            crossed = (before_pos, before_vel, p.copy(), v.copy(), sim.step_index)
            break
    assert crossed is not None, "the sphere never wrapped"
    bp, bv, p, v, step = crossed
    delta = sim.box.shear_offset(step, sim.dt)
    # the step drifted the sphere by bv dt (no forces), then wrapped it
    z = bp[2] + bv[2] * sim.dt
    x = bp[0] + bv[0] * sim.dt
    assert z >= L and p[2] == pytest.approx(z - L, abs=1e-12)
    assert p[0] == pytest.approx((x - delta) % L, abs=1e-12)
    assert v[0] == pytest.approx(bv[0] - RATE * L, abs=1e-12)
    assert v[2] == bv[2] and abs(delta) > 0.01  # the image offset has grown


@pytest.mark.parametrize("steps", [1, 60])
def test_contact_across_the_boundary_equals_bulk(steps):
    """Two touching spheres, one near the top and one near the bottom, feel the force (and
    friction history) of the same pair placed in the bulk of an unsheared box with the
    image's relative position and velocity (rate L_z added to its x velocity)."""
    a, va = [1.5, 2.0, L - 0.3], [0.05, 0.0, 0.0]
    b, vb = [1.8, 2.1, 0.6], [0.15 - RATE * L, 0.02, -0.01]  # its image: 0.1 m/s past a
    sheared = _run([a, b], [va, vb], steps=steps)
    # the bulk pair: b's image above the top (offset 0 at step 0), moved down by 2 m
    a2 = np.subtract(a, [0.0, 0.0, 2.0])
    b2 = np.add(b, [0.0, 0.0, L - 2.0])
    bulk = _run([a2, b2], [va, np.add(vb, [RATE * L, 0.0, 0.0])], rate=0.0, steps=steps)
    f1, f2 = _by_gid(sheared, "force"), _by_gid(bulk, "force")
    assert np.abs(f1[0]).max() > 1.0  # they touch
    assert np.allclose(f1, f2, rtol=1e-7, atol=1e-7 * np.abs(f1).max())
    assert np.allclose(_by_gid(sheared, "torque"), _by_gid(bulk, "torque"), rtol=1e-6,
                       atol=1e-6 * np.abs(_by_gid(bulk, "torque")).max() + 1e-12)
    if steps > 1:
        w1, w2 = _by_gid(sheared, "omega"), _by_gid(bulk, "omega")
        assert np.abs(w2).max() > 1e-3 and np.allclose(w1, w2, rtol=1e-6, atol=1e-9)
    # the cell's contact stress takes the branch to the image: the bulk pair's (with the
    # step's force on a; the network's own force is evaluated after the closing half-kick,
    # which the ghost's velocity misses, as in any periodic box)
    c1, c2 = (cell_stress([cell_parts(s.store, dict(
        s.contact_network(), normal_force=_by_gid(s, "force")[:1],
        tangential_force=np.zeros((1, 3))), s.box)], L ** 3)[1] for s in (sheared, bulk))
    assert abs(c1[0, 2]) > 1.0 and np.allclose(c1, c2, rtol=1e-6, atol=1e-6 * np.abs(c2).max())


def _shear_cell(steps=0, output=None, **options):
    sim = Simulation(SimulationConfig(scene="shear_cell", scale=0.5, progress=False,
                                      scene_options=options, output=output or OutputConfig()))
    if steps:
        sim.run(steps)
    return sim


def test_shear_cell_profile_is_linear(tmp_path):
    """The cell starts on the linear profile (its kinetic stress about it is zero). After a
    strain of 1 (rate 2/s) the mean v_x(z) of the cell (7 slabs) is linear with slope rate
    within 10 % (R² > 0.95): the images drive it (without their velocity offset the slope
    falls to 0.24). The thermo's stress gives an effective friction μ = −σ_xz / σ_zz
    between 0.2 and 1 (the spheres' μ = 0.5): the sign and size of a sheared packing's."""
    sim = _shear_cell(rate=2.0, output=OutputConfig(folder=str(tmp_path), thermo_every=50))
    s, o = sim.store, sim.store.owned
    assert np.array_equal(s.vel[o, 0], 2.0 * (s.pos[o, 2] - 0.5 * sim.box.hi[2]))
    kinetic = cell_stress([cell_parts(s, sim.contact_network(), sim.box)], 1.0)[0]
    assert not kinetic.any()
    steps = int(round(1.0 / (2.0 * sim.dt)))
    sim.run(steps)
    s = sim.store
    o = s.owned
    z = s.pos[o, 2] % sim.box.hi[2]
    edges = np.linspace(0.0, sim.box.hi[2], 8)
    k = np.digitize(z, edges) - 1
    zc = np.array([z[k == i].mean() for i in range(7)])
    vc = np.array([s.vel[o, 0][k == i].mean() for i in range(7)])
    slope, icpt = np.polyfit(zc, vc, 1)
    r2 = 1.0 - np.sum((vc - slope * zc - icpt) ** 2) / np.sum((vc - vc.mean()) ** 2)
    assert slope == pytest.approx(2.0, rel=0.1) and r2 > 0.95, (slope, r2)
    assert sim.n_contacts > len(o)  # a dense, touching packing
    names, rows = read_thermo(tmp_path / "thermo.csv")
    late = rows[len(rows) // 2:]
    sxz, szz = (late[:, names.index(k)].mean() for k in ("stress_xz", "stress_zz"))
    assert szz < 0.0 and 0.2 < -sxz / szz < 1.0, (sxz, szz)


def test_x_momentum_changes_only_by_the_crossings():
    """Σ m v_x changes, step by step, only by −rate L_z m k for every sphere wrapped k
    periods across the z faces (contact forces cancel in pairs, to rounding): the identity
    P_x(n + 1) − P_x(n) = −rate L_z Σ_wrapped k m."""
    sim = _shear_cell(rate=4.0)
    s = sim.store
    speed = 4.0 * float(sim.box.length[2])
    crossings = 0

    def state():
        o = s.owned[np.argsort(s.gid[s.owned])]
        return s.pos[o, 2].copy(), s.mass[o].copy(), float(np.sum(s.mass[o] * s.vel[o, 0]))

    z0, mass, p0 = state()
    for _ in range(600):
        sim.step()
        z1, _, p1 = state()
        k = np.round((z0 - z1) / float(sim.box.length[2]))
        expected = -speed * float(np.sum(k * mass))
        crossings += int(np.count_nonzero(k))
        assert p1 - p0 == pytest.approx(expected, abs=1e-9 * speed * float(mass.sum()))
        z0, p0 = z1, p1
    assert crossings > 0


def test_refusals():
    """One line naming the field: shear without periodic x and z, with [[walls]], a block
    grid split along x; the default grid never splits x."""
    with pytest.raises(ConfigError, match=r"^box.shear_rate = 1.0: needs box.boundary periodic"):
        BoxConfig(boundary=("periodic", "periodic", "wall"), shear_rate=1.0)
    with pytest.raises(ConfigError, match=r"^box.shear_profile"):
        BoxConfig(boundary=("periodic",) * 3, shear_profile=True)
    with pytest.raises(ConfigError, match=r"^walls = .*sheared box"):
        SimulationConfig(box=BoxConfig(boundary=("periodic",) * 3, shear_rate=1.0),
                         particles=ParticlesConfig(positions=[[0.5] * 3], radii=[0.1]),
                         walls=[{"type": "plane", "point": [0, 0, 0.5],
                                 "normal": [0, 0, 1]}])
    box = Box(np.zeros(3), np.array([9.0, 2.0, 3.0]), ("periodic",) * 3, shear_rate=1.0)
    with pytest.raises(DecompositionError, match=r"^blocks = \[2, 1, 1\]: a sheared box"):
        BlockGrid(box, (2, 1, 1))
    for ranks in (2, 4, 8):
        assert default_block_dims(box, ranks, n_particles=10000)[0] == 1
