"""Walls drawn as triangles (snapshot format 7, ``pdyn.io.wallmesh``): a plane clipped exactly
to the box (the polygon where it cuts it), cylinders as tubes over the box or their length,
meshes as their triangles, each at its place of the snapshot's time (a translating plane or
mesh moved, a turning tube's tessellation turned); the surface opens in VTK's XDMF 2 reader (what ParaView uses), and a
snapshot of format 6 (quadrilaterals) is still read, listed and rendered."""

import math

import numpy as np
import pytest

from pdyn.config import (BoxConfig, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.domain import Box
from pdyn.io import read_snapshot
from pdyn.io.snapshot import write_series
from pdyn.io.wallmesh import SEGMENTS, plane_polygon, wall_surfaces
from pdyn.simulation import Simulation
from pdyn.walls import CYLINDER_INSIDE, CYLINDER_OUTSIDE, WallSet

from .test_bad_files import older_snapshot

LO, HI = np.zeros(3), np.ones(3)


def areas(verts, tris):
    """Each triangle's area vector (its normal times its area)."""
    a, b, c = (verts[tris[:, k]] for k in range(3))
    return 0.5 * np.cross(b - a, c - a)


def test_plane_through_the_cube_centre_is_the_regular_hexagon():
    """x + y + z = 3/2 cuts the unit cube in a regular hexagon of side √2/2, area 3√3/4; its
    triangles lie in the plane and face the normal."""
    n = np.array([1.0, 1.0, 1.0]) / math.sqrt(3)
    poly = plane_polygon([0.5, 0.5, 0.5], n, LO, HI)
    assert len(poly) == 6
    assert np.linalg.norm(np.diff(np.vstack((poly, poly[:1])), axis=0), axis=1) == \
        pytest.approx([math.sqrt(0.5)] * 6, abs=1e-15)
    ws = WallSet(np.zeros((0, 3)), np.zeros((0, 3)),
                 [{"kind": 0, "point": (0.5, 0.5, 0.5), "normal": tuple(n)}])
    v, t, ids = wall_surfaces(ws.table, ws.points(0.0), ws.normals, LO, HI, 0.0)
    assert ids.tolist() == [-1] * 4
    s = areas(v, t)
    assert np.linalg.norm(s, axis=1).sum() == pytest.approx(3 * math.sqrt(3) / 4, abs=1e-14)
    assert (s @ n > 0).all()
    assert np.abs((v - 0.5) @ n).max() < 1e-15


@pytest.mark.parametrize("point,normal,corners", [
    ([0.0, 0.5, 0.5], [1, 0, 0], 4),  # the face x = 0 itself
    ([0.5, 0.5, 0.5], [0, 0.6, 0.8], 4),  # a slanted cut through two opposite faces
    ([0.9, 0.9, 0.9], [1, 1, 1], 3),  # a corner cut off
    ([2.0, 0.0, 0.0], [1, 0, 0], 0)])  # outside the box: nothing drawn
def test_plane_polygons(point, normal, corners):
    poly = plane_polygon(point, normal, LO, HI)
    assert len(poly) == corners
    if corners:
        n = np.asarray(normal, float) / np.linalg.norm(normal)
        assert np.abs((poly - point) @ n).max() < 1e-15
        assert ((poly >= -1e-15) & (poly <= 1 + 1e-15)).all()


def test_tubes_over_the_box_or_their_length_and_turned():
    """An infinite cylinder along x spans the box's x extent; a finite one its length about
    its point; the tessellation of one turning at Ω is turned by Ω t; inside cylinders face
    the axis, outside ones away from it."""
    lo, hi = np.array([0.0, -0.2, -0.2]), np.array([0.3, 0.2, 0.2])
    specs = [{"kind": CYLINDER_INSIDE, "point": (0.0, 0.0, 0.0), "normal": (1, 0, 0),
              "radius": 0.1, "angular_velocity": 2.0},
             {"kind": CYLINDER_OUTSIDE, "point": (0.1, 0.0, 0.0), "normal": (1, 0, 0),
              "radius": 0.05, "length": 0.04}]
    ws = WallSet(np.zeros((0, 3)), np.zeros((0, 3)), specs)
    v, t, ids = wall_surfaces(ws.table, ws.points(0.0), ws.normals, lo, hi, 0.25)
    assert (ids == -1).sum() == (ids == -2).sum() == 2 * SEGMENTS
    drum = np.unique(t[ids == -1])
    assert sorted(set(v[drum, 0].tolist())) == [0.0, 0.3]
    assert np.hypot(v[drum, 1], v[drum, 2]) == pytest.approx(0.1, abs=1e-15)
    first = v[drum[0]]
    w0 = WallSet(np.zeros((0, 3)), np.zeros((0, 3)), specs)
    v0 = wall_surfaces(w0.table, w0.points(0.0), w0.normals, lo, hi, 0.0)[0]
    turned = math.atan2(first[2], first[1]) - math.atan2(v0[drum[0], 2], v0[drum[0], 1])
    assert math.remainder(turned - 2.0 * 0.25, 2 * math.pi) == pytest.approx(0.0, abs=1e-12)
    tube = np.unique(t[ids == -2])
    assert sorted(set(v[tube, 0].round(15).tolist())) == [0.08, 0.12]
    for k, sign in ((-1, -1.0), (-2, 1.0)):  # inside: facing the axis; outside: away
        tk = t[ids == k]
        c = v[tk].mean(axis=1)
        radial = c - c * [1, 0, 0]  # from the axis (x) to the triangle's centre
        assert (sign * np.einsum("ij,ij->i", areas(v, tk), radial) > 0).all()


def drum_run(folder, steps=40, **output):
    """A sphere in a turning drum (axis x, periodic over 0.3 m) with a finite tube and a
    plane rising at 0.1 m/s, snapshots every 20 steps (``output``: more output fields)."""
    return Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.5, friction=0.3),
        box=BoxConfig(lo=(0.0, -0.2, -0.2), hi=(0.3, 0.2, 0.2),
                      boundary=("periodic", "open", "open")),
        particles=ParticlesConfig(positions=[[0.15, 0.0, -0.08]], radii=[0.01], density=2500),
        walls=[{"type": "cylinder", "point": [0, 0, 0], "axis": [1, 0, 0], "radius": 0.1,
                "angular_velocity": 3.0},
               {"type": "cylinder", "point": [0.15, 0, 0.05], "axis": [1, 0, 0],
                "radius": 0.02, "length": 0.1},
               {"type": "plane", "point": [0, 0, -0.15], "normal": [0, 0.6, 0.8],
                "velocity": [0, 0, 0.1]}],
        gravity=(0.0, 0.0, -9.81), progress=False,
        output=OutputConfig(folder=str(folder), snapshot_every=20, **output)))


def assert_vtk_walls(folder, snaps):
    """VTK's XDMF 2 reader of ``folder``'s series gives each snapshot's walls block as the
    snapshot's triangles: the same points, cells and cell array ``wall``."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXdmf2 import vtkXdmfReader

    r = vtkXdmfReader()
    r.SetFileName(str(folder / "snapshots.xmf"))
    r.UpdateInformation()
    for s in snaps:
        w = s["walls"]
        r.UpdateTimeStep(s["time"])
        out = r.GetOutput()
        blocks = {out.GetMetaData(b).Get(out.NAME()).split("[")[0]: out.GetBlock(b)
                  for b in range(out.GetNumberOfBlocks())}
        g = blocks["walls"]
        assert g.GetNumberOfCells() == len(w["triangles"])
        assert np.array_equal(vtk_to_numpy(g.GetPoints().GetData()), w["vertices"])
        assert np.array_equal(vtk_to_numpy(g.GetCellData().GetArray("wall")),
                              w["triangle_wall"])
        cells = np.array([[g.GetCell(c).GetPointId(k) for k in range(3)]
                          for c in range(g.GetNumberOfCells())])
        assert np.array_equal(cells, w["triangles"])


def test_snapshot_walls_open_in_vtk(tmp_path):
    """Each snapshot's walls block, read by VTK's XDMF 2 reader, is the snapshot's triangles
    with the cell array ``wall``; the rising plane is drawn at its place of the moment."""
    pytest.importorskip("vtkmodules.vtkIOXdmf2")
    sim = drum_run(tmp_path)
    sim.run(40)
    snaps = [read_snapshot(tmp_path / "snapshots" / f"snap_{step:08d}.h5") for step in (20, 40)]
    for s in snaps:
        w = s["walls"]
        plane = np.unique(w["triangles"][w["triangle_wall"] == -3])
        p = np.array([0, 0, -0.15 + 0.1 * s["time"]])
        assert np.abs((w["vertices"][plane] - p) @ np.array([0, 0.6, 0.8])).max() < 1e-15
        assert len(w["triangles"]) == 4 * SEGMENTS + len(plane) - 2
    assert_vtk_walls(tmp_path, snaps)


def test_checkpoint_walls_are_the_snapshot_triangles(tmp_path):
    """A checkpoint (format 8) draws its walls as the snapshot of the same step does: the
    drum as a tube of radius 0.1 m, not a quadrilateral collapsed to its point."""
    import h5py

    drum_run(tmp_path, checkpoint_every=20).run(20)
    snap = read_snapshot(tmp_path / "snapshots" / "snap_00000020.h5")["walls"]
    with h5py.File(tmp_path / "checkpoints" / "ckpt_00000020.h5") as f:
        assert "walls/quads" not in f
        ckpt = {k: f[f"walls/{k}"][()] for k in ("vertices", "triangles", "triangle_wall")}
    for k, v in ckpt.items():
        assert np.array_equal(v, snap[k]), k
    drum = np.unique(ckpt["triangles"][ckpt["triangle_wall"] == -1])
    assert np.hypot(ckpt["vertices"][drum, 1], ckpt["vertices"][drum, 2]) == \
        pytest.approx(0.1, abs=1e-15)


def test_format_6_snapshots_still_listed_read_and_rendered(tmp_path, cli):
    """A snapshot of format 6 (quadrilaterals) in a folder beside format-7 ones: the sidecar
    lists both (VTK reads quadrilaterals for it), ``pdyn info`` and ``pdyn render`` read it."""
    vtk_xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    drum_run(tmp_path).run(40)
    old = tmp_path / "snapshots" / "snap_00000020.h5"
    moved = older_snapshot(old, tmp_path / "v6" / old.name, 6)
    moved.replace(old)
    write_series(tmp_path)
    r = vtk_xdmf.vtkXdmfReader()
    r.SetFileName(str(tmp_path / "snapshots.xmf"))
    r.UpdateInformation()
    for step, cells in ((20, 3), (40, None)):  # a quadrilateral a wall, then triangles
        s = read_snapshot(tmp_path / "snapshots" / f"snap_{step:08d}.h5")
        r.UpdateTimeStep(s["time"])
        out = r.GetOutput()
        walls = [out.GetBlock(b) for b in range(out.GetNumberOfBlocks())
                 if out.GetMetaData(b).Get(out.NAME()).startswith("walls")][0]
        assert walls.GetNumberOfCells() == (cells or len(s["walls"]["triangles"]))
    code, out, _ = cli(["info", old])
    assert code == 0 and "pdyn-snapshot version 6" in out
    assert cli(["render", old, "-o", tmp_path / "old.png"])[0] == 0
    assert cli(["render", tmp_path / "snapshots" / "snap_00000040.h5", "-o",
                tmp_path / "new.png"])[0] == 0
    assert (tmp_path / "old.png").stat().st_size > 0 and (tmp_path / "new.png").stat().st_size


def test_box_faces_are_the_faces():
    """A walled box's faces are drawn as the box's faces: two triangles each, area the face's."""
    lo, hi = np.zeros(3), np.array([1.0, 2.0, 3.0])
    ws = WallSet(*Box(lo, hi, ("wall",) * 3).walls())
    v, t, ids = wall_surfaces(ws.table, ws.points(0.0), ws.normals, lo, hi, 0.0)
    assert np.bincount(-ids).tolist() == [0] + [2] * 6
    face = np.linalg.norm(areas(v, t), axis=1)
    assert np.add.reduceat(face, np.arange(0, 12, 2)) == pytest.approx([6, 6, 3, 3, 2, 2])
    assert (np.einsum("ij,ij->i", areas(v, t), ws.normals[-1 - ids]) > 0).all()  # inward


def test_mesh_walls_drawn_as_their_triangles_at_the_snapshot_time(tmp_path):
    """A translating mesh floor is drawn as its own triangles (the winding of its arrays),
    moved by v t at each snapshot's time, in the read-back snapshot and through VTK's XDMF 2
    reader; its torque in wall_forces.csv is about its point v t."""
    pytest.importorskip("vtkmodules.vtkIOXdmf2")
    from pdyn.mesh import grid_surface

    v0, t0 = grid_surface(3, 0.1, lift=lambda x, y: 0.2 * x)
    sim = Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.5, friction=0.3),
        box=BoxConfig(lo=(-0.2, -0.2, -0.2), hi=(0.2, 0.2, 0.2), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[0.03, 0.02, 0.006 + 0.00998 * math.sqrt(1.04)]],
                                  radii=[0.01], density=2500),
        walls=[{"type": "mesh", "vertices": v0.tolist(), "triangles": t0.tolist(),
                "velocity": [0.0, 0.0, 0.05]}],
        gravity=(0.0, 0.0, -9.81), progress=False,
        output=OutputConfig(folder=str(tmp_path), snapshot_every=5, wall_forces=True)))
    sim.run(10)  # still touching (it bounces off at step 18)
    snaps = [read_snapshot(tmp_path / "snapshots" / f"snap_{step:08d}.h5") for step in (5, 10)]
    for s in snaps:
        w = s["walls"]
        mine = w["triangle_wall"] == -1
        assert mine.sum() == len(t0) == 18
        drawn = w["vertices"][w["triangles"][mine]]
        assert np.array_equal(drawn - [0.0, 0.0, 0.05 * s["time"]], v0[t0])
    assert_vtk_walls(tmp_path, snaps)
    rows = np.genfromtxt(tmp_path / "wall_forces.csv", delimiter=",", names=True)
    force = np.array([rows[f"wall1_f{a}"][-1] for a in "xyz"])
    torque = np.array([rows[f"wall1_t{a}"][-1] for a in "xyz"])
    assert force[2] < 0.0  # the sphere presses on the floor
    # one face contact: c the centre's projection on the face z = 0.2 x + v t, p = v t
    x = sim.store.pos[sim.store.owned[0]]
    p = np.array([0.0, 0.0, 0.05 * sim.time])
    nu = np.array([-0.2, 0.0, 1.0]) / math.sqrt(1.04)
    c = x - ((x - p) @ nu) * nu
    assert torque == pytest.approx(np.cross(c - p, force), rel=1e-9, abs=1e-15)
