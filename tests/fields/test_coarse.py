"""Coarse-grained fields (``pdyn.fields.coarse``): mass and virial kept exactly, a wide kernel
gives the mean, sums independent of how the points are split, the stress of a settled bed is
the weight above, and the files (HDF5 + XDMF, CSV) open in VTK."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import erfc

from pdyn.config import ConfigError, FieldsConfig, OutputConfig, SimulationConfig
from pdyn.fields.coarse import (CONTACT, MASS, N_SUMS, contact_values, fields_of,
                                 fixed_scales, local_sums, sample, sphere_values)
from pdyn.fields.grid import Grid
from pdyn.io import read_fields
from pdyn.parallel import SerialComm
from pdyn.simulation import Simulation

from ..dynamics.test_statics import G
from ..mpi.scenes import thrown_chute, walled_pile

KERNELS = ("gaussian", "lucy", "bins")


def cloud(n=400, seed=0, box=(1.0, 2.0, 3.0)):
    """A store-like record of ``n`` spheres at random in ``box`` and a random contact network
    between neighbours in id order (ends and forces), as arrays."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, 1, (n, 3)) * box
    store = SimpleNamespace(owned=np.arange(n), pos=pos, vel=rng.normal(0, 1, (n, 3)),
                            mass=rng.uniform(0.5, 2.0, n), radius=rng.uniform(0.02, 0.04, n))
    a, b = np.arange(n - 1), np.arange(1, n)
    near = np.linalg.norm(pos[a] - pos[b], axis=1) < 0.6
    ends = np.stack([pos[a[near]], pos[b[near]]], axis=1).reshape(-1, 3)
    force = rng.normal(0, 1, (near.sum(), 3))
    network = {"ends": ends, "normal_force": force, "tangential_force": np.zeros_like(force)}
    return store, network


def box_of(hi, boundary=("wall",) * 3):
    return SimpleNamespace(lo=np.zeros(3), hi=np.asarray(hi, float), boundary=boundary)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("cells", [(4, 5, 6), (1, 1, 12), (7, 1, 3)])
def test_density_integrates_to_the_mass_and_stress_to_the_virial(kernel, cells):
    store, net = cloud()
    grid = Grid.over(box_of((1.0, 2.0, 3.0)), cells)
    sums = sample(SerialComm(), store, net, grid, kernel, 0.15)
    f = fields_of(sums, grid.cell_volume)
    mass = store.mass.sum()
    assert np.sum(f["density"]) * grid.cell_volume / mass == pytest.approx(1.0, abs=1e-14)
    b = net["ends"][1::2] - net["ends"][0::2]
    virial = np.einsum("ka,kb->ab", b, net["normal_force"]).ravel()
    got = f["contact_stress"].reshape(9, -1).sum(axis=1) * grid.cell_volume
    np.testing.assert_allclose(got, virial, rtol=0, atol=1e-13 * np.abs(virial).max())
    assert np.sum(f["volume_fraction"]) * grid.cell_volume == pytest.approx(
        np.sum(4 / 3 * np.pi * store.radius ** 3), rel=1e-14)


def test_kernel_wider_than_the_box_gives_the_mean():
    """Periodic along x and y, a Gaussian 100 boxes wide: every cell holds the mean density
    and the mean velocity (to the kernel's curvature over the box, 10⁻⁵)."""
    store, net = cloud()
    box = box_of((1.0, 2.0, 3.0), ("periodic", "periodic", "periodic"))
    grid = Grid.over(box, (3, 4, 5))
    f = fields_of(sample(SerialComm(), store, net, grid, "gaussian", 300.0), grid.cell_volume)
    np.testing.assert_allclose(f["density"], store.mass.sum() / 6.0, rtol=1e-4)
    mean_v = (store.mass[:, None] * store.vel).sum(axis=0) / store.mass.sum()
    np.testing.assert_allclose(f["velocity"].reshape(3, -1).T, np.tile(mean_v, (60, 1)),
                               rtol=0, atol=1e-4)


@pytest.mark.parametrize("kernel", KERNELS)
def test_sums_do_not_depend_on_the_split_or_order(kernel):
    """The spheres and contacts split in three parts in another order, each part's integer
    sums added as three ranks' allreduce would: the same integers as the whole."""
    store, net = cloud(seed=2)
    grid = Grid.over(box_of((1.0, 2.0, 3.0)), (3, 4, 5))
    most = np.zeros(N_SUMS)
    spheres = sphere_values(store, store.owned, most=most[:14])
    contacts = contact_values(net, most=most[14:])
    assert np.array_equal(most, np.concatenate([np.abs(v).max(axis=0) for v in
                                                (spheres[1], contacts[1])]))
    scale = fixed_scales(SerialComm(), most, (len(spheres[1]), len(contacts[1])))
    whole = local_sums(grid, kernel, 0.2, spheres, contacts, scale)
    rng = np.random.default_rng(5)
    total = np.zeros_like(whole)
    for s, c in zip(np.array_split(rng.permutation(len(spheres[0])), 3),
                    np.array_split(rng.permutation(len(contacts[0])), 3)):
        total += local_sums(grid, kernel, 0.2, (spheres[0][s], spheres[1][s]),
                            (contacts[0][c], contacts[1][c]), scale)
    assert np.array_equal(total, whole)
    assert np.count_nonzero(whole[MASS]) > 0 and np.count_nonzero(whole[CONTACT]) > 0


@pytest.mark.parametrize("cells, width", [((1, 1, 40), 0.02), ((1, 1, 40), 0.3),
                                          ((1, 1, 12), 0.05), ((5, 3, 7), 0.2),
                                          ((30, 1, 1), 0.5), ((4, 4, 4), 1.5)])
def test_gaussian_weights_are_the_exponentials(cells, width):
    """Each point's deposited weights (the factors by recurrence) equal the normalized
    exp(−r²/2w²) over the cell centres within 3w, to 10⁻¹³ — from two dozen cells within the
    cut along an axis (restarts of the recurrence) to one."""
    from pdyn.fields.deposit import deposit

    grid = Grid.over(box_of((1.0, 2.0, 3.0)), cells)
    rng = np.random.default_rng(7)
    points = rng.uniform(0, 1, (40, 3)) * (1.0, 2.0, 3.0)
    centres = np.meshgrid(*[grid.centres(a) for a in range(3)], indexing="ij")
    resolved = np.asarray(cells) > 1
    for x in points:
        out = np.zeros((1,) + tuple(cells), np.int64)
        deposit(grid, "gaussian", width, x[None], np.ones((1, 1)), np.array([2.0 ** 52]), out)
        r2 = sum((c - x[a]) ** 2 for a, c in enumerate(centres) if resolved[a])
        want = np.where(r2 <= (3 * width) ** 2, np.exp(-0.5 * r2 / width ** 2), 0.0)
        want = want / want.sum() * 2.0 ** 52
        np.testing.assert_allclose(out[0], want, rtol=1e-13, atol=1.0)


@pytest.mark.parametrize("kernel", ("gaussian", "lucy"))
@pytest.mark.parametrize("cells, boundary, width", [
    ((1, 1, 12), ("periodic", "periodic", "wall"), 0.2),
    ((1, 9, 1), ("wall", "periodic", "periodic"), 0.3),
    ((10, 1, 1), ("periodic", "wall", "wall"), 0.03),
    ((1, 1, 5), ("wall", "wall", "periodic"), 2.0)])
def test_a_profile_deposits_as_the_3d_grid_does(kernel, cells, boundary, width):
    """On a grid of one resolved axis the profile's deposit (``_profile``) adds the same
    integers as the general one (``_deposit``): points and segments, some outside the
    region, walled and wrapping axes, a kernel wider than the axis."""
    from pdyn.fields import deposit as dep

    store, net = cloud(seed=3)
    grid = Grid.over(box_of((1.0, 2.0, 3.0), boundary), cells, lo=(0.0, 0.0, 0.0),
                     hi=(1.0, 2.0, 2.5) if boundary[2] == "wall" else None)
    assert dep._kernel(grid, kernel) is dep._profile
    for segments, ends, values in ((False, store.pos, store.vel),
                                   (True, net["ends"], net["normal_force"])):
        args = (np.ascontiguousarray(ends), segments, np.ascontiguousarray(values),
                *dep._grid_args(grid, kernel, width), np.full(3, 2.0 ** 50), dep.NODES,
                dep.WEIGHTS)
        sums = [np.zeros((int(np.prod(cells)), 3), np.int64) for _ in range(2)]
        dep._profile(*args, sums[0])
        dep._deposit(*args, sums[1])
        assert np.array_equal(sums[0], sums[1]) and np.count_nonzero(sums[0]) > 0


def test_settled_bed_stress_is_the_weight_above(bed):
    """A bed at rest on a floor, periodic sides: with bins, the mean σ_zz of each slab is
    minus the weight above its planes per unit area, averaged over the slab (momentum
    balance, to 1e-6 of the floor's pressure); with a Gaussian of a quarter diameter, σ_zz(z)
    is minus the weight of the Gaussian-smoothed spheres above z per area, within 1 % in the
    bulk (4 widths above the floor, 3 below the top centres: a kernel cut by the region's
    end is normalized over the cells left, which lifts the floor contacts' share by up to
    1.3 % at 3 widths)."""
    s = bed.store
    h = s.owned
    area = float(np.prod(np.asarray(bed.box.hi)[:2] - np.asarray(bed.box.lo)[:2]))
    top = s.pos[h, 2].max() + s.radius[h].max()
    net = bed.contact_network()
    region = dict(lo=(bed.box.lo[0], bed.box.lo[1], 0.0), hi=(bed.box.hi[0], bed.box.hi[1], top))
    grid = Grid.over(bed.box, (1, 1, 16), region["lo"], region["hi"])
    f = fields_of(sample(SerialComm(), s, net, grid, "bins", 0.0), grid.cell_volume)
    z0 = grid.lo[2] + np.arange(16) * grid.spacing[2]
    dz = grid.spacing[2]
    above = (s.mass[h][None, :] * np.clip(s.pos[h, 2][None, :] - z0[:, None], 0, dz)).sum(1)
    want = -G * above / dz / area
    floor = s.mass[h].sum() * G / area
    sigma_zz = f["stress"][8, 0, 0, :]
    np.testing.assert_allclose(sigma_zz, want, rtol=0, atol=1e-6 * floor)
    assert f["kinetic_stress"].max() < 1e-12 * floor
    r = s.radius[h].max()
    width = 0.5 * r  # a quarter diameter
    grid = Grid.over(bed.box, (1, 1, 32), region["lo"], region["hi"])
    f = fields_of(sample(SerialComm(), s, net, grid, "gaussian", width), grid.cell_volume)
    z = grid.centres(2)
    smooth = (s.mass[h][None, :] * 0.5 * erfc((z[:, None] - s.pos[h, 2][None, :])
                                               / (np.sqrt(2) * width))).sum(1)
    bulk = (z > 4 * width) & (z < s.pos[h, 2].max() - 3 * width)
    assert bulk.sum() >= 6
    np.testing.assert_allclose(f["stress"][8, 0, 0, bulk], -G * smooth[bulk] / area, rtol=0.01)
    xx, yy = f["stress"][0, 0, 0, bulk], f["stress"][4, 0, 0, bulk]
    np.testing.assert_allclose(xx, yy, rtol=0.05)  # lateral stress ratio the same both ways


def test_fields_files_open_in_vtk_and_the_profile_as_csv(tmp_path):
    """A run with two [[fields]] tables: a 3D grid whose XDMF + HDF5 VTK's XDMF reader
    opens with the file's values, and a 1D profile also written as CSV."""
    vtk = pytest.importorskip("vtk", reason="the vtk package reads XDMF (pip install vtk)")
    from vtk.util.numpy_support import vtk_to_numpy

    cfg = walled_pile(n=60, output=OutputConfig(folder=str(tmp_path))).with_(fields=(
        FieldsConfig(name="grid", cells=(3, 4, 5), every=50, window=2),
        FieldsConfig(name="depth", cells=(1, 1, 6), kernel="bins", every=100)))
    Simulation(cfg).run(200)
    data = read_fields(tmp_path / "fields" / "grid_00000200.h5")
    assert data["samples"] == 2 and data["density"].shape == (5, 4, 3)
    assert data["stress"].shape == (5, 4, 3, 9) and data["density"].sum() > 0
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(tmp_path / "grid.xmf"))
    reader.UpdateInformation()
    reader.UpdateTimeStep(reader.GetOutputInformation(0).Get(
        vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())[-1])
    out = reader.GetOutputDataObject(0)
    assert out.GetNumberOfCells() == 60
    np.testing.assert_allclose(out.GetBounds(), [0, 2.4, 0, 2.4, 0, 3.0])
    density = vtk_to_numpy(out.GetCellData().GetArray("density"))
    assert np.array_equal(density, data["density"].ravel())
    stress = vtk_to_numpy(out.GetCellData().GetArray("stress"))
    assert np.array_equal(stress, data["stress"].reshape(-1, 9))
    names, *rows = (tmp_path / "fields" / "depth_00000200.csv").read_text().splitlines()
    assert names.split(",")[:4] == ["z", "volume_fraction", "density", "velocity_x"]
    table = np.array([[float(x) for x in r.split(",")] for r in rows])
    depth = read_fields(tmp_path / "fields" / "depth_00000200.h5")
    assert np.array_equal(table[:, 2], depth["density"].ravel())
    assert not (tmp_path / "fields" / "grid_00000200.csv").exists()
    pytest.importorskip("matplotlib", reason="pdyn plot draws with matplotlib")
    from pdyn.io.plot import plot_run
    written, notes = plot_run(tmp_path, tmp_path / "png")
    assert written == [tmp_path / "png" / "fields_depth.png"] and not notes
    assert written[0].stat().st_size > 10_000


@pytest.mark.parametrize("table, message", [
    ({"kernel": "box"}, "fields[0].kernel"), ({"cells": (0, 1, 1)}, "fields[0].cells"),
    ({"width": 0}, "fields[0].width"), ({"every": 0}, "fields[0].every"),
    ({"lo": (0, 0, 0)}, "fields[0].hi"), ({"colour": 1}, "fields[0].colour"),
    ({"name": "a b"}, "fields[0].name")])
def test_bad_fields_tables_are_one_line(table, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SimulationConfig(fields=[table])


def test_a_run_with_only_fields_writes_files(tmp_path):
    """[[fields]] alone make a run write into its folder: the folder is checked before the
    run (here a file where the folder should be is refused)."""
    from pdyn.cli import check_output_folder

    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    cfg = SimulationConfig(output=OutputConfig(folder=str(taken)), fields=[{"every": 10}])
    assert cfg.writes_files and not cfg.output.writes_files
    with pytest.raises(ConfigError, match="exists and is not a folder"):
        check_output_folder(cfg)
    check_output_folder(cfg.with_(fields=()))  # nothing written: not checked


def test_contacts_once_are_every_rows_contacts_each_once():
    """The walk that takes each contact once (``contacts_once``: walls, a partner of higher id
    or fixed) gives the rows of every row's contacts that ``each_once`` keeps, in their order
    and to the bit — on a chute whose flow was thrown onto its base of fixed spheres (their
    contacts on the free sphere's row, of lower id or not)."""
    from pdyn.capture import capture
    from pdyn.fields.once import each_once, fixed_ids

    sim = Simulation(SimulationConfig(scene="chute", progress=False), scene=thrown_chute())
    sim.record_tangential = True
    sim.run(1000)
    fixed = fixed_ids(sim.comm, sim.store)
    got = capture(sim.contact, sim.store, sim.neighbours, sim.dt,
                  frozenset({"sphere_contacts", "contacts_once"}), fixed)
    want = each_once(got.sphere_contacts, fixed)
    ids = want["id"]
    assert (np.isin(ids[:, 1], fixed) & (ids[:, 1] < ids[:, 0])).any()  # kept: fixed, lower
    assert 0 < len(ids) < len(got.sphere_contacts["id"])
    assert want.keys() == got.contacts_once.keys()
    for key, value in want.items():
        np.testing.assert_array_equal(got.contacts_once[key], value, err_msg=key)


def test_capture_takes_the_contacts_the_pass_wrote_as_a_walk_finds_them():
    """Right after a force pass (``just_passed``) the contacts come from the contact history
    it wrote, not from a walk testing every list entry: the same contacts in the same order,
    to the bit, for every view of them (each once, every row's, the walls', with the fixed
    spheres) — after passes that recorded every pair's tangential force and passes that did
    not (pairs handed over between rows); on a chute's flow thrown onto its fixed base and a
    frictional pile in a walled box."""
    from pdyn.capture import contact_network
    from pdyn.config import ContactConfig
    from pdyn.fields.once import fixed_ids

    pile = walled_pile(n=100).with_(contact=ContactConfig(youngs_modulus=1e6, restitution=0.3,
                                                          friction=0.5))
    compared = set()  # the views met with contacts
    for sim in (Simulation(SimulationConfig(scene="chute", progress=False),
                           scene=thrown_chute()), Simulation(pile)):
        fixed = fixed_ids(sim.comm, sim.store)
        for record in (True, False):
            sim.record_tangential = record
            for _ in range(4):
                sim.run(97)
                assert sim.contact.acting(sim.store, sim.neighbours) is not None
                views = ({}, {"lower": False}, {"fixed": fixed}) if record else ()
                for view in ({"spheres": False}, *views):
                    got, want = (contact_network(sim.contact, sim.store, sim.neighbours,
                                                 sim.dt, just_passed=passed, **view)
                                 for passed in (True, False))
                    for key, value in want.items():
                        np.testing.assert_array_equal(got[key], value, err_msg=f"{key} {view}")
                    if len(want["id"]):
                        compared.add((record, *view))
    assert len(compared) == 5, compared
