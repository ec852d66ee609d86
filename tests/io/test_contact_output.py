"""The contact network in snapshots (HDF5, the XDMF block ParaView reads as lines) and the
wall-force series: the numbers are the contact kernel's forces, the lines open in VTK's XDMF 2
reader, the floor carries the weight of a settled pile, and a restart keeps the series."""

import math

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, OutputConfig, ParticlesConfig, SimulationConfig
from pdyn.io import read_snapshot, read_wall_forces
from pdyn.io.checkpoint import set_aside_after
from pdyn.io.wallforces import wall_names
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation


def pile(folder=None, n=40, seed=1, restitution=0.3, friction=0.0, **out):
    """``n`` spheres dropped into a small walled box under gravity (damped)."""
    from pdyn.scenarios import place_spheres

    rng = np.random.default_rng(seed)
    radii = rng.uniform(0.1, 0.2, n)
    pos = place_spheres(radii, np.zeros(3), np.array([1.2, 1.2, 2.5]), seed)
    output = OutputConfig(folder=str(folder), **out) if folder else OutputConfig()
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=2500.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(1.2, 1.2, 3.0)),
        contact=ContactConfig(youngs_modulus=1e6, restitution=restitution, friction=friction,
                              rolling_friction=0.1 * friction),
        gravity=(0.0, 0.0, -9.81), progress=False, output=output)


@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_network_sums_to_the_kernel_forces(tmp_path, friction):
    """Each particle's contact forces from the snapshot's network of the step (both sides of
    every pair, normal plus tangential) plus gravity are the force the contact kernel summed:
    every contact is there once, with its force."""
    sim = Simulation(pile(tmp_path, friction=friction, snapshot_every=1500))
    sim.run(1500)
    net = read_snapshot(tmp_path / "snapshots" / "snap_00001500.h5")["contacts"]
    net["ends"] = net["points"]
    ids, f = net["id"], net["normal_force"] + net["tangential_force"]
    assert len(ids) > 30 and (ids[:, 0] >= 0).all()
    sphere = ids[:, 1] >= 0
    assert (ids[sphere, 0] < ids[sphere, 1]).all()
    assert len(np.unique(ids, axis=0)) == len(ids)
    assert np.array_equal(np.sort(sim.contact_pairs(), axis=0),
                          np.sort(ids[sphere], axis=0))
    h = sim.store.owned
    gid = sim.store.gid[h]
    total = np.zeros((gid.max() + 1, 3))
    np.add.at(total, ids[:, 0], f)
    np.add.at(total, ids[sphere, 1], -f[sphere])
    want = sim.store.force[h] - sim.store.mass[h, None] * sim.gravity
    assert np.allclose(total[gid], want, rtol=0, atol=1e-9 * np.abs(want).max())
    f_n = net["normal_force"]
    assert np.allclose(np.linalg.norm(f_n, axis=1), np.abs(net["force"]))
    t = net["tangential_force"]
    assert np.allclose(np.einsum("ij,ij->i", t, f_n), 0.0, atol=1e-9 * np.abs(f_n).max())
    assert t.any() == (friction > 0)  # tangential only with friction
    assert (np.linalg.norm(t, axis=1) <= friction * np.abs(net["force"]) * (1 + 1e-12)).all()
    ends = net["ends"].reshape(-1, 2, 3)
    pos = dict(zip(gid.tolist(), sim.store.pos[h]))
    assert np.array_equal(ends[:, 0], np.array([pos[i] for i in ids[:, 0]]))
    floor = ids[:, 1] == -5  # the wall z = 0: its end is the contact point on the plane
    assert floor.any() and (ends[floor, 1, 2] == 0).all()


def test_snapshot_network_opens_as_lines_in_vtk(tmp_path):
    vtk_xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2",
                                   reason="the 'vtk' wheel is not installed (pip install vtk)")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonDataModel import VTK_POLY_LINE

    sim = Simulation(pile(tmp_path, snapshot_every=750))
    sim.run(1500)
    snap = read_snapshot(tmp_path / "snapshots" / "snap_00001500.h5")
    c = snap["contacts"]
    k = len(c["id"])
    assert k > 30 and c["points"].shape == (2 * k, 3)
    assert np.array_equal(c["lines"], np.arange(2 * k).reshape(k, 2))
    r = vtk_xdmf.vtkXdmfReader()
    r.SetFileName(str(tmp_path / "snapshots.xmf"))
    r.UpdateInformation()
    r.UpdateTimeStep(snap["time"])
    out = r.GetOutput()
    blocks = {out.GetMetaData(b).Get(out.NAME()).split("[")[0]: out.GetBlock(b)
              for b in range(out.GetNumberOfBlocks())}
    lines = blocks["contacts"]
    assert lines.GetNumberOfCells() == k and lines.GetNumberOfPoints() == 2 * k
    assert all(lines.GetCellType(e) == VTK_POLY_LINE and lines.GetCell(e).GetNumberOfPoints()
               == 2 for e in range(k))
    assert np.array_equal(vtk_to_numpy(lines.GetPoints().GetData()), c["points"])
    cd = lines.GetCellData()
    for name in ("force", "normal_force", "tangential_force"):
        assert np.array_equal(vtk_to_numpy(cd.GetArray(name)), c[name]), name
    assert np.array_equal(vtk_to_numpy(cd.GetArray("id_a")), c["id"][:, 0])
    assert np.array_equal(vtk_to_numpy(cd.GetArray("id_b")), c["id"][:, 1])


def test_floor_carries_the_settled_pile(tmp_path):
    from pdyn.capture import contact_network
    from pdyn.io import WallForceWriter

    sim = Simulation(pile(tmp_path, wall_forces=True))
    writer = next(w for w in sim.writers if isinstance(w, WallForceWriter))
    collect, seen = writer.collect, {}

    def keep(contact, store, lists, dt, step, time):  # the step's wall contacts, as seen
        seen["net"] = contact_network(contact, store, lists, dt, spheres=False)
        collect(contact, store, lists, dt, step, time)

    writer.collect = keep
    sim.run(6000)
    names, rows = read_wall_forces(tmp_path / "wall_forces.csv")
    assert names[:2] == ["step", "time"] and "z_lo_fz" in names and len(names) == 2 + 6 * 3
    assert np.array_equal(rows[:, 0], np.arange(1, 6001))
    assert np.array_equal(rows[:, 1], rows[:, 0] * sim.dt)
    weight = sim.store.mass[sim.store.owned].sum() * 9.81
    floor = rows[-1, names.index("z_lo_fz")]
    assert abs(floor + weight) < 0.02 * weight  # pushed down by the weight
    assert rows[-1, names.index("z_hi_fz")] == 0.0  # nothing touches the lid
    # the last row is the last step's floor contacts' forces, their correctly rounded sum
    net = seen["net"]
    assert floor == math.fsum((-net["normal_force"][net["id"][:, 1] == -5, 2]).tolist())


def test_wall_names():
    assert wall_names(np.array([[1, 0, 0], [0, 0, -1], [0.6, 0.8, 0]])) == ["x_lo", "z_hi",
                                                                           "wall3"]


def test_restart_keeps_the_series(tmp_path):
    ref = Simulation(pile(tmp_path / "a", wall_forces=True))
    ref.run(400)
    run = Simulation(pile(tmp_path / "b", wall_forces=True, checkpoint_every=200))
    run.run(300)  # the rows after the checkpoint (201..300) are superseded by the restart
    cont = from_checkpoint(tmp_path / "b" / "checkpoints" / "ckpt_00000200.h5")
    set_aside_after(tmp_path / "b", 200, cont.comm)  # what `pdyn run --restart` does
    cont.run(200)
    a = (tmp_path / "a" / "wall_forces.csv").read_text()
    b = (tmp_path / "b" / "wall_forces.csv").read_text()
    assert a == b and len(a.splitlines()) == 401
    kept = tmp_path / "b" / "superseded" / "after_00000200" / "wall_forces.csv"
    assert len(kept.read_text().splitlines()) == 301
