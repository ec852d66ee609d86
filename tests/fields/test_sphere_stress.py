"""Per-sphere stress (``pdyn.fields.sphere``) and the cell's stress (``pdyn.fields.virial``,
thermo columns) at rest: the virial theorem of a bed on a floor at z = 0, a frictionless
packing's symmetric tensors, the snapshot datasets, and a confined packing whose cell
pressure is the pressure on its walls."""

from dataclasses import replace

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, OutputConfig, SimulationConfig
from pdyn.fields.sphere import sphere_tensors, symmetric_six
from pdyn.fields.virial import cell_parts, cell_stress, invariants
from pdyn.io import read_snapshot, read_thermo
from pdyn.io.thermo import COLUMNS
from pdyn.scenarios import Scene
from pdyn.simulation import Simulation

from ..dynamics.test_statics import E, G, MASS, NU, R, scene, settle
from ..mpi.scenes import walled_pile


def row_contacts(sim):
    return sim.contact.contact_list(sim.store, sim.neighbours, sim.dt, lower=False,
                                    tangential=sim.contact.recorded_tangential(sim.neighbours))


def owned_by_gid(sim):
    h = sim.store.owned
    return h[np.argsort(sim.store.gid[h])]


def test_virial_at_rest_is_the_weight_times_the_centre_of_mass_height(bed):
    """Σ V_i σ_zz,i = −M g z_cm (compression negative), to 1e-6; every sphere is
    compressed vertically and carries its contacts' count."""
    h = owned_by_gid(bed)
    stress, count, force = sphere_tensors(bed.store, h, row_contacts(bed))
    volume = 4.0 / 3.0 * np.pi * bed.store.radius[h] ** 3
    mass = bed.store.mass[h]
    z_cm = np.sum(mass * bed.store.pos[h, 2]) / mass.sum()
    want = -mass.sum() * G * z_cm
    assert np.sum(volume * stress[:, 2, 2]) / want == pytest.approx(1.0, abs=1e-6)
    assert (stress[:, 2, 2] < 0).all()
    assert (count >= 9).all() and count.max() == 12  # 12 in the bulk, floor layer 9 + floor
    # at rest the contact forces balance the weight
    np.testing.assert_allclose(force[:, 2], MASS * G, rtol=1e-6)


def test_frictionless_tensors_are_symmetric(bed):
    """Without friction every b ⊗ F is symmetric (b ∥ F): the tensors to rounding."""
    h = owned_by_gid(bed)
    stress = sphere_tensors(bed.store, h, row_contacts(bed))[0]
    scale = np.abs(stress).max()
    assert np.abs(stress - np.swapaxes(stress, 1, 2)).max() <= 1e-13 * scale
    kinetic, contact = cell_stress([cell_parts(bed.store, bed.contact_network())], 1.0)
    assert np.abs(contact - contact.T).max() <= 1e-13 * np.abs(contact).max()


def test_cell_stress_of_the_bed_balances_its_weight(bed):
    """The cell's σ_zz × the box volume is −(floor load) × z_cm: the weight's column
    integral ∫ σ_zz dz = −(F_floor / A) z_cm (a hydrostatic column: −ρ g h² / 2); the
    kinetic part vanishes at rest; the per-sphere sums add up to the cell's contact part."""
    net = bed.contact_network()
    wall = net["id"][:, 1] < 0
    floor = np.sum(net["normal_force"][wall, 2])  # on the spheres, up
    h = owned_by_gid(bed)
    mass = bed.store.mass[h]
    z_cm = np.sum(mass * bed.store.pos[h, 2]) / mass.sum()
    box = np.asarray(bed.box.hi) - np.asarray(bed.box.lo)
    kinetic, contact = cell_stress([cell_parts(bed.store, net)], float(np.prod(box)))
    assert contact[2, 2] * np.prod(box) / (-floor * z_cm) == pytest.approx(1.0, abs=1e-6)
    assert floor / (len(h) * MASS * G) == pytest.approx(1.0, abs=1e-6)
    assert np.abs(kinetic).max() < 1e-12 * np.abs(contact).max()
    per_sphere = sphere_tensors(bed.store, h, row_contacts(bed))[0]
    volume = 4.0 / 3.0 * np.pi * bed.store.radius[h] ** 3
    np.testing.assert_allclose(np.einsum("i,iab->ab", volume, per_sphere),
                               contact * np.prod(box), rtol=0,
                               atol=1e-9 * np.abs(contact).max() * np.prod(box))


def test_invariants_of_a_triaxial_state():
    """σ = diag(−1, −1, −4): p = 2, q = 3 (= |σ_1 − σ_3|)."""
    p, q = invariants(np.diag([-1.0, -1.0, -4.0]))
    assert p == pytest.approx(2.0) and q == pytest.approx(3.0)


def test_snapshot_holds_the_sphere_stress_and_thermo_the_cell_stress(tmp_path):
    """``sphere_stress`` snapshots: (N, 6) stress, coordination and contact force as the
    functions give them; thermo's stress columns are the cell's (kinetic + contact)."""
    cfg = walled_pile(n=60, output=OutputConfig(folder=str(tmp_path), snapshot_every=300,
                                                thermo_every=300, sphere_stress=True))
    sim = Simulation(cfg.with_(contact=replace(cfg.contact, friction=0.5)))
    sim.run(300)
    snap = read_snapshot(tmp_path / "snapshots" / "snap_00000300.h5")
    h = owned_by_gid(sim)
    stress, count, force = sphere_tensors(sim.store, h, sim.sphere_contacts)
    assert np.array_equal(snap["stress"], symmetric_six(stress))
    assert np.array_equal(snap["coordination"], count) and count.sum() > 0
    assert np.array_equal(snap["contact_force"], np.linalg.norm(force, axis=1))
    names, rows = read_thermo(tmp_path / "thermo.csv")
    assert tuple(names) == COLUMNS
    box = np.asarray(sim.box.hi) - np.asarray(sim.box.lo)
    net = snap["contacts"]  # the step's network, each contact once
    kin, con = cell_stress([cell_parts(sim.store, dict(net, ends=net["points"]))],
                           float(np.prod(box)))
    total = kin + con
    assert rows[-1, names.index("stress_zz")] == total[2, 2]
    assert rows[-1, names.index("pressure")] == invariants(total)[0] > 0


def test_confined_packing_cell_pressure_is_the_wall_pressure():
    """125 spheres of radii 1-1.03 R on a cubic lattice of spacing 2 R, pressed against each
    other and the six walls of their box, no gravity, damped to rest: the cell's stress is
    minus the pressure on each pair of walls (σ_aa = −F_a / A_a), its pressure their mean."""
    n = 5
    rng = np.random.default_rng(4)
    grid = (np.indices((n, n, n)).reshape(3, -1).T * 2.0 + 1.0) * R
    radii = R * rng.uniform(1.0, 1.03, len(grid))
    cfg = scene("linear", 0.1, grid, radii, lo=(0.0, 0.0, 0.0), hi=(2 * n * R,) * 3).config
    sim = Simulation(cfg.with_(box=BoxConfig(lo=cfg.box.lo, hi=cfg.box.hi),
                               gravity=(0.0, 0.0, 0.0)))
    settle(sim, 1e-8, 40_000)
    net = sim.contact_network()
    wall = net["id"][:, 1] < 0
    normal = np.abs(net["normal_force"][wall])
    side = 2 * n * R
    push = np.array([normal[:, a].sum() for a in range(3)]) / 2.0  # each wall of a pair
    kin, con = cell_stress([cell_parts(sim.store, net)], side ** 3)
    np.testing.assert_allclose(np.diag(kin + con), -push / side ** 2, rtol=1e-6)
    p = invariants(kin + con)[0]
    assert p / (push.sum() / 3 / side ** 2) == pytest.approx(1.0, abs=1e-6)


def test_a_fixed_spheres_contacts_count_in_the_cell_stress(tmp_path):
    """A sphere resting on a fixed one of lower id (a chute's base): the thermo's σ_zz V is
    −m g (z_free − z_fixed), the contact seen from the free sphere's row (the lists' network
    of lower-id rows leaves it out: the fixed sphere has no row); the snapshot's contact
    network holds it as (0, 1), the force on the fixed sphere m g down."""
    start = 2 * R - MASS * G / (E * R / 2)  # at its static overlap (linear: k = E R_eff)
    scene_ = Scene(name="stack", box_lo=np.zeros(3), box_hi=np.array([8 * R, 8 * R, 1.0]),
                   boundary=("periodic", "periodic", "wall"),
                   positions=np.array([[2 * R, 2 * R, 2 * R], [2 * R, 2 * R, 2 * R + start]]),
                   velocities=np.zeros((2, 3)), radii=np.full(2, R), density=2800.0,
                   gravity=np.array([0.0, 0.0, -G]),
                   fixed=np.array([True, False]))
    cfg = SimulationConfig(
        scene="drop", contact=ContactConfig(law="linear", youngs_modulus=E, poisson_ratio=NU,
                                            restitution=0.1),
        gravity=(0.0, 0.0, -G), progress=False, initial_overlap="allow",
        output=OutputConfig(folder=str(tmp_path), thermo_every=4000, snapshot_every=4000))
    sim = Simulation(cfg, scene=scene_)
    sim.run(4000)
    assert not len(sim.contact_network()["id"])  # the lower-id rows miss the contact
    net = read_snapshot(tmp_path / "snapshots" / "snap_00004000.h5")["contacts"]
    assert net["id"].tolist() == [[0, 1]]
    np.testing.assert_allclose(net["normal_force"], [[0.0, 0.0, -MASS * G]], rtol=1e-6)
    np.testing.assert_array_equal(net["points"], sim.store.pos[owned_by_gid(sim)])
    names, rows = read_thermo(tmp_path / "thermo.csv")
    z = sim.store.pos[sim.store.owned, 2]
    volume = 64 * R * R * 1.0
    want = -MASS * G * (z.max() - z.min())
    assert rows[-1, names.index("stress_zz")] * volume / want == pytest.approx(1.0, abs=1e-6)
