"""Output on one rank: snapshots + XDMF series (read back through VTK's XDMF reader),
checkpoints and bit-identical restart (API and CLI), crash safety under SIGKILL, pdyn info,
pdyn render, and one-line errors for bad files. Multi-rank: tests/mpi/test_io_mpi.py."""

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.io import OutputFileError, read_checkpoint, read_snapshot
from pdyn.io.hdf5 import open_pdyn
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from ..conftest import assert_user_error, listing

SMALL = dict(scale=0.05, progress=False)  # 50 spheres of the default 'drop' scene (damped)


def state(sim):
    h = sim.store.owned
    h = h[np.argsort(sim.store.gid[h])]
    s = sim.store
    return s.gid[h].copy(), s.pos[h].copy(), s.vel[h].copy(), s.force[h].copy()


def assert_identical(a, b):
    for x, y, name in zip(a, b, ("gid", "pos", "vel", "force")):
        assert x.shape == y.shape and np.array_equal(x, y), f"{name} differs"


# ------------------------------------------------------------------ snapshots
def test_snapshot_series_reads_back(tmp_path):
    cfg = SimulationConfig(**SMALL, output=OutputConfig(folder=str(tmp_path / "o"),
                                                        snapshot_every=10))
    sim = Simulation(cfg)
    sim.run(30)
    files = sorted((tmp_path / "o" / "snapshots").glob("snap_*.h5"))
    assert [f.name for f in files] == [f"snap_{s:08d}.h5" for s in (10, 20, 30)]
    snap = read_snapshot(files[-1])
    gid, pos, vel, _ = state(sim)
    assert snap["step"] == 30 and snap["time"] == 30 * sim.dt
    assert np.array_equal(snap["id"], gid) and np.array_equal(snap["position"], pos)
    assert np.array_equal(snap["velocity"], vel) and (snap["rank"] == 0).all()
    assert snap["walls"]["normal"].shape == (6, 3) and snap["walls"]["triangles"].shape == (12, 3)
    assert not list((tmp_path / "o").rglob("*.tmp"))


def test_xdmf_series_opens_in_vtk(tmp_path):
    vtk_xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline as SDDP

    cfg = SimulationConfig(**SMALL, output=OutputConfig(folder=str(tmp_path), snapshot_every=5))
    Simulation(cfg).run(15)
    r = vtk_xdmf.vtkXdmfReader()
    r.SetFileName(str(tmp_path / "snapshots.xmf"))
    r.UpdateInformation()
    times = r.GetOutputInformation(0).Get(SDDP.TIME_STEPS())
    snaps = [read_snapshot(p) for p in sorted((tmp_path / "snapshots").glob("snap_*.h5"))]
    assert list(times) == [s["time"] for s in snaps]
    for t, s in zip(times, snaps):
        r.UpdateTimeStep(t)
        out = r.GetOutput()
        blocks = {out.GetMetaData(b).Get(out.NAME()).split("[")[0]: out.GetBlock(b)
                  for b in range(out.GetNumberOfBlocks())}
        p = blocks["particles"]
        assert p.GetNumberOfPoints() == len(s["id"]) == 50
        pd = p.GetPointData()
        assert np.array_equal(vtk_to_numpy(p.GetPoints().GetData()), s["position"])
        for name in ("id", "velocity", "radius", "rank"):
            assert np.array_equal(vtk_to_numpy(pd.GetArray(name)), s[name]), name
        assert blocks["walls"].GetNumberOfCells() == 12  # two triangles a box face


# ------------------------------------------------------------------ checkpoints / restart
def test_restart_is_bit_identical(tmp_path):
    out = OutputConfig(folder=str(tmp_path / "a"), checkpoint_every=50)
    ref = Simulation(SimulationConfig(**SMALL, output=out))
    ref.run(100)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000050.h5",
                                      output=OutputConfig(folder=str(tmp_path / "b")))
    assert cont.step_index == 50 and cont.time == 50 * ref.dt
    cont.run(50)
    assert_identical(state(ref), state(cont))
    assert cont.time == ref.time and cont.step_index == 100


def test_restart_adds_or_drops_the_rotation_fields(tmp_path):
    """A frictionless run checkpoints no spin, torque or contact history; continued with
    friction they start at zero (and then spin and springs build up); a frictional checkpoint
    continued without friction drops them, keeping every other field."""
    from dataclasses import replace

    from ..mpi.scenes import dense_polydisperse

    cfg = dense_polydisperse(("wall",) * 3, n=200, dt=2e-3, law="hertz")
    Simulation(cfg.with_(output=OutputConfig(folder=str(tmp_path / "a"),
                                              checkpoint_every=20))).run(20)
    first = tmp_path / "a" / "checkpoints" / "ckpt_00000020.h5"
    assert "omega" not in read_checkpoint(first) and "history_key" not in read_checkpoint(first)
    cont = from_checkpoint(first, contact=replace(cfg.contact, friction=0.5),
                           output=OutputConfig(folder=str(tmp_path / "b"), checkpoint_every=10))
    h = cont.store.owned
    assert not (cont.store.omega[h].any() or cont.store.torque[h].any()
                or cont.store.history_count[h].any())
    cont.run(10)
    h = cont.store.owned
    assert np.abs(cont.store.omega[h]).max() > 0 and (cont.store.history_count[h] > 0).sum() > 20
    second = tmp_path / "b" / "checkpoints" / "ckpt_00000030.h5"
    ck = read_checkpoint(second)
    assert (ck["history_key"] != 0).sum() > 20
    back = from_checkpoint(second, contact=cfg.contact,
                           output=OutputConfig(folder=str(tmp_path / "c")))
    assert "omega" not in back.store.fields and not back.contact.rotating
    assert_identical(state(back), tuple(ck[k] for k in ("gid", "pos", "vel", "force")))
    back.run(5)


def test_restart_keeps_the_scenes_friction(tmp_path):
    """A run whose scene, not its config, sets friction checkpoints its whole contact
    configuration: the restart rotates too and continues bit for bit."""
    from dataclasses import replace

    from pdyn.scenarios import make_scene

    scene = make_scene("heap", scale=0.05)
    scene = replace(scene, contact=dict(scene.contact, friction=0.5, rolling_friction=0.01,
                                        poisson_ratio=0.25),
                    insertion=dict(scene.insertion, rate=2000.0, every=20,
                                   velocity=(0.0, 0.0, -6.0)))  # contacts within 500 steps
    out = OutputConfig(folder=str(tmp_path / "a"), checkpoint_every=350)
    ref = Simulation(SimulationConfig(**SMALL, output=out), scene=scene)
    assert ref.config.contact is None and ref.contact.rotating
    ref.run(600)
    first = tmp_path / "a" / "checkpoints" / "ckpt_00000350.h5"
    assert read_checkpoint(first)["contact"]["friction"] == 0.5
    cont = from_checkpoint(first, output=OutputConfig(folder=str(tmp_path / "b")))
    assert cont.contact.rotating and cont.contact_config == ref.contact_config
    cont.run(250)
    assert_identical(state(ref), state(cont))
    h, g = ref.store.owned, cont.store.owned
    assert np.array_equal(ref.store.omega[h][np.argsort(ref.store.gid[h])],
                          cont.store.omega[g][np.argsort(cont.store.gid[g])])
    assert np.abs(ref.store.omega[h]).max() > 0


def _periodic(folder, **out):
    from ..mpi.scenes import dense_polydisperse

    return dense_polydisperse(("periodic",) * 3, n=200, seed=4, speed=4.0, dt=2e-3,
                              neighbour_skin=0.5).with_(
        output=OutputConfig(folder=str(folder), **out))


def test_restart_periodic_bit_identical(tmp_path):
    """Periodic box, checkpoint between two rebuilds with centres past a periodic face: the
    restart keeps them unwrapped (wrapped at the next rebuild, as in the uninterrupted run) and
    continues the schedule from the checkpointed build positions."""
    ref = Simulation(_periodic(tmp_path / "a", checkpoint_every=50))
    ref.run(100)
    path = tmp_path / "a" / "checkpoints" / "ckpt_00000050.h5"
    ck = read_checkpoint(path)
    assert ref.box.outside(ck["pos"]).any(), "no centre past a periodic face at the checkpoint"
    drift = np.sqrt(((ck["pos"] - ck["build_pos"]) ** 2).sum(axis=1)).max()
    assert 0.0 < drift <= 0.5 * ck["exchange"]["skin"] and (ck["rank"] == 0).all()
    cont = from_checkpoint(path, output=OutputConfig(folder=str(tmp_path / "b")))
    now = cont.exchange.state()  # the plan continues where it stopped
    assert now["skin"] == ck["exchange"]["skin"]
    assert np.array_equal(now["owner"], ck["exchange"]["owner"])
    outside = cont.box.outside(cont.store.pos[cont.store.owned])
    assert outside.sum() == ref.box.outside(ck["pos"]).sum()  # not wrapped at restart
    cont.run(50)
    assert_identical(state(ref), state(cont))


def test_restart_rejects_centres_far_outside(tmp_path):
    """Unwrapped restart centres may lie at most one skin past a periodic face; a walled axis
    allows none."""
    from pdyn.checks import InitialStateError
    from pdyn.parallel import ExchangeError

    Simulation(_periodic(tmp_path / "p", checkpoint_every=10)).run(10)
    path = tmp_path / "p" / "checkpoints" / "ckpt_00000010.h5"
    skin = read_checkpoint(path)["exchange"]["skin"]
    _move_past_top(path, 1, 0.5 * skin)  # allowed
    from_checkpoint(path, output=OutputConfig(folder=str(tmp_path / "q")))
    _move_past_top(path, 1, 2.0 * skin)
    with pytest.raises(ExchangeError, match="more than one skin"):
        from_checkpoint(path, output=OutputConfig(folder=str(tmp_path / "q")))
    Simulation(SimulationConfig(**SMALL, output=OutputConfig(folder=str(tmp_path / "w"),
                                                             checkpoint_every=10))).run(10)
    path = tmp_path / "w" / "checkpoints" / "ckpt_00000010.h5"
    _move_past_top(path, 0, 1e-9)
    with pytest.raises(InitialStateError, match="outside the box"):
        from_checkpoint(path, output=OutputConfig(folder=str(tmp_path / "v")))


def _move_past_top(path, axis, by):
    """Move a sphere of the checkpoint's top index cells along ``axis`` to ``by`` past the
    box's top face, with its build position (so the file stays consistent: the index cell,
    the drift since the last rebuild)."""
    from pdyn.lattice import Lattice

    with h5py.File(path, "r+") as f:
        pos, build = f["particles/pos"][()], f["particles/build_pos"][()]
        cell = Lattice.over(f.attrs["box_lo"], f.attrs["box_hi"], f.attrs["index_dims"])
        top = f.attrs["index_dims"][axis] - 1
        k = int(np.flatnonzero(np.floor((pos[:, axis] - cell.lo[axis]) / cell.edge[axis])
                               >= top)[0])
        pos[k, axis] = build[k, axis] = f.attrs["box_hi"][axis] + by
        f["particles/pos"][...] = pos
        f["particles/build_pos"][...] = build


def test_checkpoint_holds_everything(tmp_path):
    out = OutputConfig(folder=str(tmp_path), checkpoint_every=20)
    sim = Simulation(SimulationConfig(**SMALL, output=out))
    sim.run(20)
    ck = read_checkpoint(tmp_path / "checkpoints" / "ckpt_00000020.h5")
    gid, pos, vel, force = state(sim)
    assert np.array_equal(ck["gid"], gid) and np.array_equal(ck["force"], force)
    assert np.array_equal(ck["pos"], pos) and np.array_equal(ck["vel"], vel)
    assert ck["step"] == 20 and ck["dt"] == sim.dt and ck["config"]["scale"] == 0.05
    assert ck["contact"]["restitution"] == 0.5 and ck["gravity"][2] == -9.81


def test_cli_restart_matches_uninterrupted_run(tmp_path, cli):
    base = ["--scale", "0.05", "--no-progress", "--snapshot-every", "25",
            "--checkpoint-every", "50"]
    assert cli(["run", *base, "--steps", "100", "--output", "full"])[0] == 0
    assert cli(["run", *base, "--steps", "50", "--output", "half"])[0] == 0
    code, out, err = cli(["run", "--restart", "half/checkpoints/ckpt_00000050.h5", "--steps",
                          "50", "--no-progress"])
    assert code == 0, err
    assert "restarted from" in out and "50 steps (step 50 to 100)" in out
    a = read_checkpoint(tmp_path / "full" / "checkpoints" / "ckpt_00000100.h5")
    b = read_checkpoint(tmp_path / "half" / "checkpoints" / "ckpt_00000100.h5")
    for k in ("gid", "pos", "vel", "force"):
        assert np.array_equal(a[k], b[k]), k
    assert a["time"] == b["time"]
    # the continued series is one series: 4 snapshots, times of the full run
    xa = (tmp_path / "full" / "snapshots.xmf").read_text()
    xb = (tmp_path / "half" / "snapshots.xmf").read_text()
    assert xa.replace("full", "half") == xb.replace("full", "half")


def test_restart_refuses_changed_scene_and_finished_run(tmp_path, cli):
    base = ["--scale", "0.05", "--no-progress", "--checkpoint-every", "10", "--steps", "10"]
    assert cli(["run", *base])[0] == 0
    ck = "pdyn-output/checkpoints/ckpt_00000010.h5"
    code, _, err = cli(["run", "--restart", ck, "--scene", "box"])
    assert code == 2 and "--scene" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(["run", "--restart", ck])
    assert code == 2 and "ended at step 10" in err
    # a run folder restarts from its newest checkpoint; another folder must be empty
    code, out, err = cli(["run", "--restart", "pdyn-output", "--steps", "5", "--output", "new",
                          "--no-progress"])
    assert code == 0, err
    assert (tmp_path / "new" / "checkpoints").exists() is False
    assert read_checkpoint(tmp_path / ck)["step"] == 10


def test_existing_checkpoints_need_overwrite(tmp_path, cli):
    args = ["run", "--scale", "0.05", "--steps", "10", "--no-progress", "--snapshot-every", "0",
            "--checkpoint-every", "10"]
    assert cli(args)[0] == 0
    code, _, err = cli(args)
    assert code == 2 and "--overwrite" in err
    assert cli(args + ["--overwrite"])[0] == 0


def _series(xmf: Path) -> list[str]:
    """The snapshot files an XDMF sidecar lists, in order."""
    return re.findall(r"(snapshots/snap_\d+\.h5):/particles/position", xmf.read_text())


def _contents(folder: Path) -> dict:
    """sha256 of every file below ``folder`` -> its path."""
    return {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in folder.rglob("*.h5")}


def test_restart_with_no_further_steps_changes_nothing(tmp_path, cli):
    args = ["run", "--scale", "0.05", "--steps", "30", "--no-progress", "--snapshot-every",
            "10", "--checkpoint-every", "10", "--output", "out"]
    assert cli(args)[0] == 0
    before = listing(tmp_path)
    for steps in ("0", "-5"):
        code, _, err = cli(["run", "--restart", "out/checkpoints/ckpt_00000010.h5", "--steps",
                            steps])
        assert_user_error(code, err, f"--steps = {steps}", "nothing was changed")
        assert listing(tmp_path) == before
    for opt in ("--allow-overlap", "--relax-overlap"):
        code, _, err = cli(["run", "--restart", "out", "--steps", "5", opt])
        assert_user_error(code, err, opt, "does not apply to --restart")
    assert listing(tmp_path) == before


def test_restart_from_an_older_checkpoint_keeps_later_files(tmp_path, cli):
    """A shorter continuation from an older checkpoint moves the later snapshots and
    checkpoints aside (nothing deleted), and each snapshots.xmf lists exactly its files."""
    assert cli(["run", "--scale", "0.05", "--steps", "60", "--no-progress", "--snapshot-every",
                "5", "--checkpoint-every", "10", "--output", "out"])[0] == 0
    out = tmp_path / "out"
    original = _contents(out)
    assert len(original) == 12 + 6
    code, stdout, err = cli(["run", "--restart", "out/checkpoints/ckpt_00000020.h5", "--steps",
                             "10", "--no-progress"])
    assert code == 0, err
    aside = out / "superseded" / "after_00000020"
    assert f"moved to {aside}" in stdout
    after = _contents(out)
    assert set(original) <= set(after), "a file was deleted"
    steps = lambda folder, prefix: sorted(int(p.stem.split("_")[1])
                                          for p in folder.glob(f"{prefix}_*.h5"))
    assert steps(out / "snapshots", "snap") == [5, 10, 15, 20, 25, 30]
    assert steps(out / "checkpoints", "ckpt") == [10, 20, 30]
    assert steps(aside / "snapshots", "snap") == list(range(25, 65, 5))
    assert steps(aside / "checkpoints", "ckpt") == [30, 40, 50, 60]
    for folder in (out, aside):
        listed = _series(folder / "snapshots.xmf")
        on_disk = sorted(f"snapshots/{p.name}" for p in (folder / "snapshots").glob("*.h5"))
        assert listed == on_disk
    for p in (aside / "snapshots").glob("*.h5"):
        read_snapshot(p)
    # a second restart from the same checkpoint does not mix with the first one's files
    assert cli(["run", "--restart", "out/checkpoints/ckpt_00000020.h5", "--steps", "5",
                "--no-progress"])[0] == 0
    assert steps(aside.with_name("after_00000020_2") / "snapshots", "snap") == [25, 30]
    assert _series(out / "snapshots.xmf") == [f"snapshots/snap_{s:08d}.h5"
                                              for s in (5, 10, 15, 20, 25)]


# ------------------------------------------------------------------ crash safety
@pytest.mark.parametrize("victim", [pytest.param("snapshots", marks=pytest.mark.slow),
                                    "checkpoints"])
def test_sigkill_during_a_write(tmp_path, cli, victim):
    """Kill the run (SIGKILL) while a snapshot or a checkpoint is half written (its .tmp
    exists): every complete file still reads strictly, and --restart from the folder (in this
    process) continues bit for bit like a run that was never interrupted. The victim's files
    come twice as often as the other's, so one is being written soon after the first
    checkpoint is complete."""
    env = dict(os.environ, PDYN_TEST_WRITE_DELAY="0.3", PYTHONUNBUFFERED="1")
    every = {"snapshots": ("10", "20"), "checkpoints": ("20", "10")}[victim]
    cmd = [sys.executable, "-m", "pdyn", "run", "--scale", "0.05", "--steps", "100000",
           "--no-progress", "--snapshot-every", every[0], "--checkpoint-every", every[1],
           "--output", "out"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out = tmp_path / "out"
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            if (list(out.glob("checkpoints/ckpt_*.h5"))
                    and list(out.glob(f"{victim}/*.tmp"))):
                break
            time.sleep(0.01)
        else:
            pytest.fail(f"the run never wrote into {victim} after a checkpoint")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert list(out.glob(f"{victim}/*.tmp")), "the kill did not interrupt a write"
    for f in sorted(out.glob("snapshots/snap_*.h5")):
        read_snapshot(f)
    ckpts = sorted(out.glob("checkpoints/ckpt_*.h5"))
    for f in ckpts:
        read_checkpoint(f)
    last = read_checkpoint(ckpts[-1])["step"]
    code, stdout, err = cli(["run", "--restart", "out", "--steps", "20", "--no-progress"])
    assert code == 0, err[-2000:]
    assert f"restarted from out/checkpoints/{ckpts[-1].name}" in stdout
    assert not list(out.rglob("*.tmp")), "stray temporary files not cleaned on restart"
    ref = Simulation(SimulationConfig(**SMALL))
    ref.run(last + 20)
    cont = read_checkpoint(out / "checkpoints" / f"ckpt_{last + 20:08d}.h5")
    assert_identical(state(ref), tuple(cont[k] for k in ("gid", "pos", "vel", "force")))


# ------------------------------------------------------------------ inspection
def test_info_describes_snapshot_and_checkpoint(tmp_path, cli):
    args = ["run", "--scale", "0.05", "--steps", "10", "--no-progress", "--snapshot-every", "10",
            "--checkpoint-every", "10"]
    assert cli(args)[0] == 0
    code, out, _ = cli(["info", "pdyn-output/snapshots/snap_00000010.h5"])
    run = (tmp_path / "pdyn-output" / "run_id").read_text().strip()
    assert code == 0 and "pdyn-snapshot version 8" in out and "50 particles" in out
    assert " contacts (" in out and "sphere pairs" in out and f"run {run}" in out
    assert "step 10" in out and "6 walls" in out and "particles/velocity" in out
    code, out, _ = cli(["info", "pdyn-output/checkpoints/ckpt_00000010.h5"])
    assert code == 0 and "pdyn-checkpoint version 10" in out and "config:" in out
    assert f"run {run}" in out


def test_render_writes_png(tmp_path, cli):
    pytest.importorskip("vtkmodules.vtkRenderingOpenGL2")
    args = ["run", "--scale", "0.05", "--steps", "10", "--no-progress", "--snapshot-every", "10"]
    assert cli(args)[0] == 0
    code, out, err = cli(["render", "pdyn-output", "-o", "pic.png", "--size", "320", "240"])
    if code != 0 and "render window" in err.lower():  # pragma: no cover - no EGL/OSMesa here
        pytest.skip(f"no offscreen OpenGL: {err}")
    assert code == 0, err
    png = (tmp_path / "pic.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (w, h) == (320, 240)


# ------------------------------------------------------------------ bad files
@pytest.fixture
def good_files(tmp_path):
    cfg = SimulationConfig(**SMALL, output=OutputConfig(folder=str(tmp_path / "o"),
                                                        snapshot_every=10, checkpoint_every=10))
    Simulation(cfg).run(10)
    return (tmp_path / "o" / "snapshots" / "snap_00000010.h5",
            tmp_path / "o" / "checkpoints" / "ckpt_00000010.h5")


def test_wrong_kind_and_missing_files(tmp_path, cli, good_files):
    snap, ckpt = good_files
    code, _, err = cli(["run", "--restart", str(snap)])
    assert code == 2 and "a pdyn snapshot, expected a pdyn checkpoint" in err
    code, _, err = cli(["info", str(tmp_path / "nope.h5")])
    assert code == 2 and "no such file" in err
    with pytest.raises(OutputFileError, match="no readable checkpoint"):
        from pdyn.io import latest_checkpoint

        latest_checkpoint(tmp_path)


def test_missing_piece_of_multi_rank_file(tmp_path):
    """A master whose per-rank piece is gone must not read zeros silently."""
    from pdyn.io.hdf5 import write_global

    class FakeComm:  # a 2-rank layout written from one process: rank 0 and rank 1 pieces
        size = 2

        def __init__(self, rank):
            self.rank = rank

        def allgather(self, x):
            return [x, x]

        def barrier(self):
            pass

    path = tmp_path / "snap_00000001.h5"
    for r in (1, 0):  # rank 0 writes the master after its piece
        write_global(path, FakeComm(r), {"format": "pdyn-snapshot", "version": 2},
                     {"particles/id": np.arange(3) + 3 * r})
    with open_pdyn(path) as f:
        assert f["particles/id"][()].tolist() == [0, 1, 2, 3, 4, 5]
    (tmp_path / "snap_00000001.r0001.h5").unlink()
    with pytest.raises(OutputFileError, match="piece snap_00000001.r0001.h5 is missing"):
        open_pdyn(path)


def test_render_without_vtk_is_one_line_error(tmp_path, cli, good_files, monkeypatch):
    monkeypatch.setitem(sys.modules, "vtkmodules.vtkRenderingOpenGL2", None)  # import fails
    code, _, err = cli(["render", str(good_files[0])])
    assert code == 2 and "needs the 'vtk' package" in err and len(err.strip().splitlines()) == 1


def test_run_does_not_import_vtk():
    res = subprocess.run([sys.executable, "-c", "import sys, pdyn.cli, pdyn.simulation, pdyn.io; "
                          "print(any(m.startswith('vtk') for m in sys.modules))"],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "False", res.stderr
