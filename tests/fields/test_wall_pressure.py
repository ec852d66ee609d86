"""Wall pressure maps (``pdyn.fields.wallpatches``, ``pdyn.fields.wallstress``,
``pdyn.io.wallpressure``): patches cover each wall's surface in the box, a contact point
lands on the patch that holds it, the maps' totals are the wall-force series' mean, a bed
under a servo piston carries σ_zz = −F/A (the validation of docs/validation.md), and
ParaView's reader opens the maps as cell data."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, FieldsConfig, OutputConfig
from pdyn.fields.wallpatches import locate, patch_surface, wall_patches
from pdyn.fields.wallstress import contact_values, sample
from pdyn.io import read_fields, read_snapshot, read_wall_forces
from pdyn.mesh import Mesh, grid_surface
from pdyn.parallel import SerialComm
from pdyn.simulation import Simulation
from pdyn.wallkinds import table_row
from pdyn.wallshapes import plane_polygon

from ..mpi.scenes import SERVO_BOX, SERVO_FORCE, servo_bed

LO, HI = np.zeros(3), np.array([2.0, 3.0, 4.0])


def walls_of(specs, meshes=None):
    """(table, points, normals) of wall specs (``pdyn.walls.table_row`` dicts)."""
    rows = [table_row(s) for s in specs]
    table = np.array([r[0] for r in rows])
    return table, np.array([s.get("point", (0.0, 0.0, 0.0)) for s in specs], float), \
        np.array([r[1] for r in rows])


def test_plane_patches_tile_its_polygon_and_hold_their_points():
    """A box face: 4 × 3 equal rectangles; a tilted plane: patches clipped to its hexagon,
    their areas summing to the hexagon's; every point of the plane in the box lands on the
    patch whose drawn triangles hold it."""
    face = {"kind": 0, "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0]}
    tilted = {"kind": 0, "point": [1.0, 1.5, 2.0], "normal": [1.0, 1.0, 1.0]}
    table, points, normals = walls_of([face, tilted])
    walls = wall_patches(table, points, normals, LO, HI, None, (4, 3))
    assert [w.count for w in walls] == [12, 12]
    np.testing.assert_allclose(walls[0].area, 0.5, rtol=1e-14)
    verts, tris, patch = patch_surface(walls, table, points, normals, LO, HI, 0.0, None)
    tri_area = 0.5 * np.linalg.norm(np.cross(verts[tris[:, 1]] - verts[tris[:, 0]],
                                             verts[tris[:, 2]] - verts[tris[:, 0]]), axis=1)
    drawn = np.bincount(patch, tri_area, minlength=24)
    np.testing.assert_allclose(drawn, np.concatenate([w.area for w in walls]), atol=1e-12)
    poly = plane_polygon(points[1], normals[1], LO, HI)
    hexagon = 0.5 * np.linalg.norm(np.cross(poly, np.roll(poly, -1, axis=0)).sum(axis=0))
    assert len(poly) == 6 and walls[1].area.sum() == pytest.approx(hexagon, rel=1e-12)
    assert walls[1].area.min() < 0.5 * walls[1].area.max()  # the corners' patches clipped
    rng = np.random.default_rng(1)
    k = rng.integers(0, len(tris), 200)
    w = rng.dirichlet(np.ones(3), 200)
    pts = np.einsum("kc,kcd->kd", w, verts[tris[k]])
    row = (patch[k] >= 12).astype(np.int64)
    got = locate(walls, row, pts, np.full(200, -1))
    assert np.array_equal(got, patch[k])


def test_cylinder_and_cone_patches():
    """(angle, axial) patches of a finite tube sum to 2πRL, of a frustum to its lateral area;
    a point at angle θ and height s lands in sector ⌊θ nu / 2π⌋ of band ⌊(s − s_a) nv / L⌋."""
    tube = {"kind": 1, "point": [1.0, 1.5, 2.0], "normal": [0.0, 0.0, 1.0], "radius": 0.5,
            "length": 2.0}
    cone = {"kind": 4, "point": [1.0, 1.5, 0.0], "normal": [0.0, 0.0, 1.0], "radius_lo": 0.2,
            "radius_hi": 0.8, "lo": 1.0, "hi": 3.0}
    table, points, normals = walls_of([tube, cone])
    walls = wall_patches(table, points, normals, LO, HI, None, (6, 4))
    assert walls[0].area.sum() == pytest.approx(2 * math.pi * 0.5 * 2.0, rel=1e-14)
    slant = math.hypot(2.0, 0.6)
    assert walls[1].area.sum() == pytest.approx(math.pi * (0.2 + 0.8) * slant, rel=1e-14)
    origin, a, u, v = walls[0].frame[:4]
    theta, s = 2.0, 0.3  # sector 1 of 6, band ⌊(0.3 + 1) · 4 / 2⌋ = 2
    p = origin + 0.5 * (math.cos(theta) * u + math.sin(theta) * v) + s * a
    assert locate(walls, np.array([0]), p[None], np.array([-1]))[0] == 2 * 6 + 1


def test_mesh_patches_are_its_triangles():
    v, t = grid_surface(3, 1.0)
    mesh = Mesh(v[t])
    table, points, normals = walls_of([{"kind": 3, "mesh": mesh}] * 2)
    walls = wall_patches(table, points, normals, LO - 2, HI, {0: mesh, 1: mesh}, (4, 4))
    assert [w.count for w in walls] == [len(t), len(t)]
    assert walls[0].area.sum() == pytest.approx(4.0, rel=1e-14)
    # the bundle numbers the second mesh's triangles after the first's
    got = locate(walls, np.array([0, 1]), np.zeros((2, 3)), np.array([5, len(t) + 5]))
    assert got.tolist() == [5, len(t) + 5]


def test_contact_values_split_normal_and_shear():
    """A sphere above a floor pressed by (1, 2, −3) N: pressure 3 N, shear (−1, −2, 0) N on
    the wall."""
    contacts = {"ends": np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.0]]),
                "normal_force": np.array([[0.0, 0.0, 3.0]]),
                "tangential_force": np.array([[1.0, 2.0, 0.0]])}
    np.testing.assert_array_equal(contact_values(contacts), [[3.0, -1.0, -2.0, -0.0]])


def test_sums_do_not_depend_on_the_split():
    """Half the contacts on one 'rank', half on another: the integer sums add to the whole."""
    rng = np.random.default_rng(2)
    face = {"kind": 0, "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0]}
    table, points, normals = walls_of([face])
    walls = wall_patches(table, points, normals, LO, HI, None, (3, 3))
    k = 500
    contact = np.column_stack((rng.uniform(0, 2, k), rng.uniform(0, 3, k), np.zeros(k)))
    centre = contact + [0.0, 0.0, 0.05]
    ends = np.stack([centre, contact], axis=1).reshape(-1, 3)
    f = rng.normal(0.0, 1.0, (k, 3)) * 10.0 ** rng.uniform(-8, 2, (k, 1))
    net = {"id": np.column_stack((np.arange(k), np.full(k, -1))), "ends": ends,
           "normal_force": f * [0, 0, 1], "tangential_force": f * [1, 1, 0],
           "facet": np.full(k, -1)}
    whole = sample(SerialComm(), walls, net)
    order = rng.permutation(k)
    part = {key: (val.reshape(k, 2, 3)[order].reshape(-1, 3) if key == "ends" else val[order])
            for key, val in net.items()}
    assert np.array_equal(sample(SerialComm(), walls, part), whole)


def test_wall_pressure_needs_snapshots_and_sane_patches():
    with pytest.raises(ConfigError, match="output.wall_pressure"):
        OutputConfig(wall_pressure=True)
    with pytest.raises(ConfigError, match="output.wall_patches"):
        OutputConfig(snapshot_every=10, wall_pressure=True, wall_patches=(0, 4))
    assert OutputConfig(snapshot_every=10, wall_pressure=True, wall_patches=[2, 5]
                        ).wall_patches == (2, 5)


#: the piston run: steps, snapshots (and the fields' window) every WINDOW steps
STEPS, WINDOW = 750, 250


@pytest.fixture(scope="module")
def piston(tmp_path_factory):
    """Two layers of frictional spheres without gravity between a floor and a servo piston
    held at 10 N (periodic across): the load carried to the floor; wall pressure maps, the
    wall-force series and the mean stress of a cell [0, H] over the bed (bins), every step."""
    folder = tmp_path_factory.mktemp("piston")
    out = OutputConfig(folder=str(folder), overwrite=True, snapshot_every=WINDOW,
                       wall_pressure=True, wall_patches=(2, 3), wall_forces=True)
    cfg = servo_bed(SERVO_FORCE, layers=2, output=out)
    top = float(cfg.walls[0].point[2])
    lo, hi = SERVO_BOX
    cfg = cfg.with_(gravity=(0.0, 0.0, 0.0), fields=(FieldsConfig(
        name="bed", cells=(1, 1, 1), kernel="bins", lo=lo, hi=(hi[0], hi[1], top), every=1,
        window=WINDOW),))
    sim = Simulation(cfg)
    sim.run(STEPS)
    return sim, folder, top


def patch_totals(walls: dict, wall: int):
    """(normal force, shear force (3)) of one wall from a snapshot's maps: Σ stress × area
    over its patches (each once)."""
    on = walls["pressure/wall"] == wall
    _, first = np.unique(walls["pressure/patch"][on], return_index=True)
    area = walls["pressure/area"][on][first]
    return ((walls["pressure/normal_stress"][on][first] * area).sum(),
            (walls["pressure/shear_stress"][on][first] * area[:, None]).sum(axis=0))


def test_map_totals_are_the_wall_force_series_mean(piston):
    """Σ over a wall's patches of stress × area is the mean over the window's steps of the
    force on it in wall_forces.csv (floor −1: its normal +z; piston −3: −z)."""
    sim, folder, _ = piston
    snap = read_snapshot(folder / "snapshots" / f"snap_{STEPS:08d}.h5")
    names, rows = read_wall_forces(folder / "wall_forces.csv")
    window = rows[(rows[:, 0] > STEPS - WINDOW) & (rows[:, 0] <= STEPS)]
    assert len(window) == WINDOW
    for wall, name, sign in ((-1, "z_lo", 1.0), (-3, "wall3", -1.0)):
        mean = window[:, [names.index(f"{name}_f{a}") for a in "xyz"]].mean(axis=0)
        normal, shear = patch_totals(snap["walls"], wall)
        assert normal == pytest.approx(-sign * mean[2], rel=1e-12)
        np.testing.assert_allclose(shear, [mean[0], mean[1], 0.0], atol=1e-12 * abs(mean[2]))
    assert normal > 5.0  # the piston pressed


def test_piston_stress_is_force_over_area(piston):
    """Validation (docs/validation.md, "Piston"): at rest with no body force the virial of
    the contacts is that of the walls' forces, so the bed's mean σ_zz is −F/A: F the
    piston's load from its pressure map (10 N, the servo's target, to 0.5 %), A the box's
    cross-section; the fields' cell [0, H] holds the bed (height z_p) and σ_zz · H / z_p is
    −F/A to 0.5 %. Each patch of the piston carries a share of it (no patch empty)."""
    sim, folder, top = piston
    snap = read_snapshot(folder / "snapshots" / f"snap_{STEPS:08d}.h5")
    fields = read_fields(folder / "fields" / f"bed_{STEPS:08d}.h5")
    lo, hi = SERVO_BOX
    area = (hi[0] - lo[0]) * (hi[1] - lo[1])
    force, _ = patch_totals(snap["walls"], -3)
    assert force == pytest.approx(SERVO_FORCE, rel=5e-3)
    z_piston = float(sim.store.pos[sim.store.walls][sim.store.gid[sim.store.walls] == -3][0, 2])
    szz = float(fields["stress"].reshape(3, 3)[2, 2])
    assert szz * top / z_piston == pytest.approx(-force / area, rel=5e-3)
    on = snap["walls"]["pressure/wall"] == -3
    assert (snap["walls"]["pressure/normal_stress"][on] > 0).all()
    assert snap["walls"]["pressure/area"][on].sum() > 0


def test_maps_open_in_vtk_as_cell_data(piston):
    """ParaView's XDMF reader (VTK's vtkXdmfReader) finds the wall_pressure grid with its
    cell arrays."""
    vtk_xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2",
                                   reason="the 'vtk' wheel is not installed (pip install vtk)")
    from vtkmodules.util.numpy_support import vtk_to_numpy

    _, folder, _ = piston
    reader = vtk_xdmf.vtkXdmfReader()
    reader.SetFileName(str(folder / "snapshots.xmf"))
    snap = read_snapshot(folder / "snapshots" / f"snap_{STEPS:08d}.h5")
    reader.UpdateInformation()
    reader.UpdateTimeStep(snap["time"])
    out = reader.GetOutput()
    names = [out.GetMetaData(k).Get(out.NAME()).split("[")[0]
             for k in range(out.GetNumberOfBlocks())]
    grid = out.GetBlock(names.index("wall_pressure"))
    cells = grid.GetCellData()
    assert grid.GetNumberOfCells() == len(snap["walls"]["pressure/triangles"])
    np.testing.assert_array_equal(vtk_to_numpy(cells.GetArray("normal_stress")),
                                  snap["walls"]["pressure/normal_stress"])
    assert vtk_to_numpy(cells.GetArray("shear_stress")).shape == (grid.GetNumberOfCells(), 3)
