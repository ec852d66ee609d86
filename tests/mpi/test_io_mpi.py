"""Output on several ranks (run under mpiexec at 2 and 4 ranks by tests/test_mpi_suite.py):
per-rank pieces joined by virtual datasets read back as one global array, the XDMF series opens
in VTK's reader with the right points, arrays and times, restart is bit-identical on the same
rank count and keeps ids and counts across rank counts."""

import numpy as np
import pytest

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.io import read_checkpoint, read_snapshot
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import FRICTIONAL_STATE, dense_polydisperse, gather_fields

pytestmark = pytest.mark.mpi


def drop(folder, **out):
    return SimulationConfig(scale=0.05, progress=False,
                            output=OutputConfig(folder=str(folder), **out))


STATE = ("gid", "pos", "vel", "force") + FRICTIONAL_STATE[2:]


def state_names(sim):
    """The fields of ``STATE`` the run's store holds (rotation and history only with
    friction)."""
    return tuple(k for k in STATE if k == "gid" or k in sim.store.fields)


def full_state(sim):
    """Global (gid, pos, vel, force, and with friction omega, torque, contact history) sorted
    by gid, on every rank."""
    return gather_fields(sim, state_names(sim)[1:])


def test_snapshot_series_in_vtk(comm, shared_dir):
    sim = Simulation(drop(shared_dir, snapshot_every=10), comm=comm)
    written = []
    for _ in range(3):
        sim.run(10)
        gid, pos, vel = full_state(sim)[:3]
        owner = np.concatenate(comm.allgather(np.full(sim.store.owned.size, comm.rank)))
        owner = owner[np.argsort(np.concatenate(comm.allgather(sim.store.gid[sim.store.owned])),
                                 kind="stable")]
        written.append((sim.time, gid, pos, vel, owner))
    if comm.rank == 0:
        files = sorted((shared_dir / "snapshots").glob("snap_????????.h5"))
        assert len(files) == 3
        if comm.size > 1:
            assert len(list((shared_dir / "snapshots").glob("snap_*.r*.h5"))) == 3 * comm.size
        for f, (t, gid, pos, vel, owner) in zip(files, written):
            s = read_snapshot(f)
            o = np.argsort(s["id"], kind="stable")
            assert s["time"] == t and np.array_equal(s["id"][o], gid)
            assert np.array_equal(s["position"][o], pos)
            assert np.array_equal(s["velocity"][o], vel)
            assert np.array_equal(s["rank"][o], owner)
            if comm.size > 1:
                assert len(np.unique(s["rank"])) > 1
        _check_vtk(shared_dir / "snapshots.xmf", [read_snapshot(f) for f in files],
                   [w[0] for w in written])
    idle_barrier(comm)


def _check_vtk(xmf, snaps, times):
    vtk_xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline as SDDP

    r = vtk_xdmf.vtkXdmfReader()
    r.SetFileName(str(xmf))
    r.UpdateInformation()
    assert list(r.GetOutputInformation(0).Get(SDDP.TIME_STEPS())) == times
    for t, s in zip(times, snaps):
        r.UpdateTimeStep(t)
        out = r.GetOutput()
        blocks = {out.GetMetaData(b).Get(out.NAME()).split("[")[0]: out.GetBlock(b)
                  for b in range(out.GetNumberOfBlocks())}
        p = blocks["particles"]
        assert p.GetNumberOfPoints() == 50
        assert np.array_equal(vtk_to_numpy(p.GetPoints().GetData()), s["position"])
        for name in ("id", "velocity", "angular_velocity", "radius", "rank"):
            assert np.array_equal(vtk_to_numpy(p.GetPointData().GetArray(name)), s[name]), name
        assert blocks["walls"].GetNumberOfCells() == len(s["walls"]["triangles"]) == 12


def dense_periodic(folder, **out):
    """Periodic dense scene whose step-50 checkpoint falls between two rebuilds with 4 centres
    past a periodic face (wrapped only at the next rebuild, after the checkpoint)."""
    return dense_polydisperse(("periodic",) * 3, n=200, seed=4, speed=4.0, dt=2e-3,
                              neighbour_skin=0.5).with_(
        output=OutputConfig(folder=str(folder), **out))


@pytest.mark.parametrize("scene", ["drop", pytest.param("dense_walled", marks=pytest.mark.slow),
                                   pytest.param("dense_periodic", marks=pytest.mark.slow),
                                   "frictional"])
def test_restart_bit_identical_same_ranks(comm, shared_dir, scene):
    """Continued from the step-50 checkpoint, the run equals the uninterrupted one bit for bit
    (with friction: spins, torques and contact history too)."""
    if scene == "drop":
        cfg = drop(shared_dir / "a", checkpoint_every=50)
    elif scene in ("dense_walled", "frictional"):
        cfg = dense_polydisperse(("wall",) * 3, n=200, dt=2e-3, law="hertz",
                                 friction=0.5 if scene == "frictional" else 0.0).with_(
            output=OutputConfig(folder=str(shared_dir / "a"), checkpoint_every=50))
    else:
        cfg = dense_periodic(shared_dir / "a", checkpoint_every=50)
    cfg = cfg.with_(balance_every=10, balance_threshold=1.0)  # blocks move before and after
    ref = Simulation(cfg, comm=comm)
    ref.run(100)
    if comm.size > 1 and scene != "drop":  # the drop does not rebuild in 100 steps
        assert ref.balancer.rebalances > 1
    path = shared_dir / "a" / "checkpoints" / "ckpt_00000050.h5"
    ck = read_checkpoint(path)
    if scene == "dense_periodic":  # the case under test really happens at the checkpoint
        assert ref.box.outside(ck["pos"]).any(), "no centre past a periodic face"
        drift = np.sqrt(((ck["pos"] - ck["build_pos"]) ** 2).sum(axis=1)).max()
        assert 0.0 < drift <= 0.5 * ck["exchange"]["skin"]
    cont = from_checkpoint(path, comm=comm,
                                      output=OutputConfig(folder=str(shared_dir / "b")))
    # every rank continues with exactly what it owned at the checkpoint, same block map
    mine = np.sort(cont.store.gid[cont.store.owned])
    assert np.array_equal(mine, ck["gid"][ck["rank"] == comm.rank])
    if hasattr(ref.exchange, "grid"):  # the checkpoint's map (blocks move during the run)
        assert np.array_equal(cont.exchange.grid.owner, ck["exchange"]["owner"])
    cont.run(50)
    if scene == "frictional":
        assert (ck["history_key"] != 0).sum() > 50 and np.abs(ck["omega"]).max() > 0.1
    assert len(state_names(cont)) == (len(STATE) if scene == "frictional" else 4)
    for x, y, name in zip(full_state(ref), full_state(cont), state_names(ref)):
        assert np.array_equal(x, y), f"{name} differs after restart"
    assert np.array_equal(np.sort(ref.store.gid[ref.store.owned]),
                          np.sort(cont.store.gid[cont.store.owned]))


@pytest.mark.slow  # the fast lane has test_restart_on_other_rank_count
def test_periodic_restart_on_other_rank_count(comm, shared_dir):
    """A periodic checkpoint with centres past a face, continued on another rank count: same
    ids and count, the same contacts (and here the same trajectory)."""
    cfg = dense_periodic(shared_dir / "n", checkpoint_every=50)
    sim = Simulation(cfg, comm=comm)
    sim.run(100)
    ref = full_state(sim)
    ref_contacts = _all_contacts(sim)
    path = shared_dir / "n" / "checkpoints" / "ckpt_00000050.h5"
    assert sim.box.outside(read_checkpoint(path)["pos"]).any()
    if comm.rank == 0:
        serial = Simulation(dense_periodic(shared_dir / "s", checkpoint_every=50),
                            comm=SerialComm())
        serial.run(50)
        one = from_checkpoint(path, comm=SerialComm(),
                                         output=OutputConfig(folder=str(shared_dir / "x")))
        one.run(50)
        g, p = full_state(one)[:2]
        assert np.array_equal(g, ref[0]) and np.array_equal(p, ref[1])
        assert np.array_equal(_all_contacts(one), ref_contacts)
    idle_barrier(comm)
    many = from_checkpoint(shared_dir / "s" / "checkpoints" / "ckpt_00000050.h5",
                                      comm=comm, output=OutputConfig(folder=str(shared_dir / "y")))
    assert comm.allreduce_sum(int(many.store.owned.size)) == 200
    many.run(50)
    g, p = full_state(many)[:2]
    assert np.array_equal(g, ref[0]) and np.array_equal(p, ref[1])
    assert np.array_equal(_all_contacts(many), ref_contacts)


def _all_contacts(sim):
    """Every sphere-sphere contact of the run as sorted unique gid pairs, on every rank."""
    parts = sim.comm.allgather(sim.contact_pairs())
    pairs = np.concatenate(parts).reshape(-1, 2)
    return np.unique(pairs, axis=0) if len(pairs) else pairs


def test_restart_on_other_rank_count(comm, shared_dir):
    """N-rank checkpoint continued on 1 rank and a 1-rank checkpoint continued on N ranks: same
    ids and count (and, decomposition-independent forces, the same trajectory)."""
    sim = Simulation(drop(shared_dir / "n", checkpoint_every=20), comm=comm)
    sim.run(40)
    ref = full_state(sim)
    if comm.rank == 0:
        serial = Simulation(drop(shared_dir / "s", checkpoint_every=20), comm=SerialComm())
        serial.run(20)
    idle_barrier(comm)
    ck = read_checkpoint(shared_dir / "n" / "checkpoints" / "ckpt_00000020.h5")
    assert ck["ranks"] == comm.size and np.array_equal(ck["gid"], np.arange(50))
    if comm.rank == 0:
        one = from_checkpoint(shared_dir / "n" / "checkpoints" / "ckpt_00000020.h5",
                                         comm=SerialComm(),
                                         output=OutputConfig(folder=str(shared_dir / "x")))
        one.run(20)
        g, p = full_state(one)[:2]
        assert np.array_equal(g, ref[0]) and np.array_equal(p, ref[1])
    many = from_checkpoint(shared_dir / "s" / "checkpoints" / "ckpt_00000020.h5",
                                      comm=comm, output=OutputConfig(folder=str(shared_dir / "y")))
    assert comm.allreduce_sum(int(many.store.owned.size)) == 50
    many.run(20)
    g, p = full_state(many)[:2]
    assert np.array_equal(g, ref[0]) and np.array_equal(p, ref[1])


def test_piece_without_checksum_is_named(comm, shared_dir):
    """A multi-rank file's datasets are virtual: a per-rank piece rewritten without its
    Fletcher-32 filter is found in the piece."""
    import h5py

    from pdyn.io.schema import unchecked

    Simulation(drop(shared_dir, checkpoint_every=5), comm=comm).run(5)
    path = shared_dir / "checkpoints" / "ckpt_00000005.h5"
    if comm.rank == 0:
        assert unchecked(path) == []
        last = path if comm.size == 1 else path.with_name(f"ckpt_00000005.r{comm.size - 1:04d}.h5")
        with h5py.File(last, "r+") as f:
            values = f["particles/mass"][()]
            del f["particles/mass"]
            f["particles/mass"] = values
        assert unchecked(path) == ["particles/mass"]
    idle_barrier(comm)
