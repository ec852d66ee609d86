"""Faults during a run end cleanly with one line and exit 2: a run that blows up (a particle
moving more than its radius in one step, or NaN) stops in that step naming the particle, the
likely cause and the last good files, never a segfault; a full disk or a folder where a file
must go stops the run without a half-written file. One rank here; every rank count in
``tests/mpi/test_faults_mpi.py``."""

import math
import re
import signal

import numpy as np
import pytest

from pdyn.checks import OverlapError, OverlapWatch, RunawayError
from pdyn.config import (BoxConfig, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig, config_from_dict)
from pdyn.io import OutputWriteError, Writer, read_checkpoint, read_snapshot
from pdyn.simulation import Simulation

from . import fast_walls
from .conftest import assert_user_error, mpiexec_pdyn, tmpfs


def test_huge_dt_stops_with_the_cause(tmp_path, cli):
    """The ``drop`` scene with a user dt 200x the default: it used to run to positions of
    1e289 and segfault in the cell-grid sizing."""
    code, _, err = cli(["run", "--dt", "0.05", "--allow-large-dt", "--steps", "300",
                        "--no-progress",
                        "--snapshot-every", "2", "--checkpoint-every", "4", "--output", "out"])
    assert_user_error(code, err, "step 7: particle", "more than its radius",
                      "times the shortest contact time", "lower dt",
                      "last good snapshot: out/snapshots/snap_00000006.h5",
                      "checkpoint: out/checkpoints/ckpt_00000004.h5")
    read_snapshot(tmp_path / "out" / "snapshots" / "snap_00000006.h5")
    assert not list((tmp_path / "out").rglob("*0008*"))  # nothing after the last good step


def test_dt_above_the_limit_is_refused_naming_it(tmp_path, cli):
    """Without --allow-large-dt a dt above contact time / 20 is one line naming the limit."""
    code, _, err = cli(["run", "--dt", "0.05", "--steps", "3", "--no-progress"])
    assert_user_error(code, err, "dt = 0.05: above the time-step limit 0.000241",
                      "contact time", "allow_large_dt")


def test_hertz_default_dt_is_a_fifth_of_the_rayleigh_time():
    """Hertz: the default dt is 0.2 t_R of the smallest sphere when that is the tighter
    limit, t_R = π r √(ρ/G)/(0.1631 ν + 0.8766), G = E/(2(1 + ν)) (with ``dt_safety`` 20 the
    contact time is; with 5 the Rayleigh time is)."""
    cfg = _one_sphere(0.0, dt_safety=5.0).with_(
        contact=ContactConfig(law="hertz", youngs_modulus=7e10, poisson_ratio=0.25))
    sim = Simulation(cfg)
    t_r = math.pi * 0.1 * math.sqrt(1000.0 / (7e10 / 2.5)) / (0.1631 * 0.25 + 0.8766)
    assert sim.dt == pytest.approx(0.2 * t_r, rel=1e-12)


def _one_sphere(speed, radius=0.5, **cfg):
    return SimulationConfig(
        particles=ParticlesConfig(positions=[[20.0, 20.0, 20.0], [5.0, 5.0, 5.0]],
                                  velocities=[[speed, 0.0, 0.0], [0.0, 0.0, 0.0]],
                                  radii=[radius, 0.1], density=1000.0),
        box=BoxConfig(lo=(0, 0, 0), hi=(40, 40, 40)), gravity=(0.0, 0.0, 0.0),
        contact=ContactConfig(youngs_modulus=1e6), progress=False, **cfg)


def test_fast_sphere_stops_the_run():
    """15 000 m/s in a 40 m walled box: it used to end 484 m outside the box with exit 0."""
    sim = Simulation(_one_sphere(15000.0))
    with pytest.raises(RunawayError, match="step 1: particle 0 moved .* more than its radius"):
        sim.run(100)


def test_large_sphere_may_move_more_than_a_small_radius():
    """The guard looks at each particle's own radius: a large sphere moving 0.4 of its radius
    (4x the small sphere's radius) per step runs on."""
    sim = Simulation(_one_sphere(400.0, radius=1.0, dt=1e-3))
    sim.run(20)
    assert sim.step_index == 20


def test_nan_stops_the_run(tmp_path):
    sim = Simulation(_one_sphere(1.0, output=OutputConfig(folder=str(tmp_path),
                                                          checkpoint_every=2)))
    sim.run(4)
    h = sim.store.owned[sim.store.gid[sim.store.owned] == 1]
    sim.store.vel[h, 2] = np.nan
    with pytest.raises(RunawayError) as err:
        sim.step()
    msg = str(err.value)
    assert msg.startswith("step 5: particle 1 is no longer finite") and "nan" in msg
    assert f"last good checkpoint: {tmp_path / 'checkpoints' / 'ckpt_00000004.h5'}" in msg
    read_checkpoint(tmp_path / "checkpoints" / "ckpt_00000004.h5")


def _run_with_snapshots(tmp_path, steps=2):
    sim = Simulation(SimulationConfig(scale=0.05, progress=False,
                                      output=OutputConfig(folder=str(tmp_path / "out"),
                                                          snapshot_every=1)))
    sim.run(steps)
    return sim


def test_folder_where_the_sidecar_goes(tmp_path):
    sim = _run_with_snapshots(tmp_path)
    xmf = tmp_path / "out" / "snapshots.xmf"
    xmf.unlink()
    xmf.mkdir()
    with pytest.raises(OutputWriteError, match="snapshots.xmf: cannot write"):
        sim.step()
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_file_where_the_snapshot_folder_goes(tmp_path):
    sim = _run_with_snapshots(tmp_path)
    folder = tmp_path / "out" / "snapshots"
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.write_text("in the way")
    with pytest.raises(OutputWriteError, match="snapshots: cannot create the folder"):
        sim.step()


@pytest.fixture
def tiny_disk(tmp_path):
    with tmpfs(tmp_path / "disk", "size=256k") as where:
        yield where


def test_full_disk(tiny_disk, cli):
    """Snapshots and checkpoints until the disk is full: one line, exit 2, every file that was
    written still reads, and no temporary file is left."""
    out = tiny_disk / "out"
    code, _, err = cli(["run", "--scale", "0.2", "--steps", "500", "--no-progress",
                        "--snapshot-every", "2", "--checkpoint-every", "4", "--output", out])
    assert_user_error(code, err, "cannot write (No space left on device)")
    assert not list(out.rglob("*.tmp"))
    snaps = sorted(out.glob("snapshots/snap_*.h5"))
    assert snaps
    for p in snaps:
        read_snapshot(p)
    for p in out.glob("checkpoints/ckpt_*.h5"):
        read_checkpoint(p)


# ------------------------------------------------------------------ stopping a run
class _Hook(Writer):
    """A writer (the declared protocol, ``pdyn.io.Writer``) that does ``action()`` in the output phase of step ``at`` (a signal or a
    failure arriving in the middle of a run, at a known step)."""

    name = "hook"
    needs = frozenset()
    written: list = []

    def __init__(self, at, action):
        self.at, self.action = at, action

    def due(self, step):
        return step == self.at

    def __call__(self, view):
        self.action()


@pytest.fixture
def hook(monkeypatch):
    """``hook(at, action)``: runs built from now on do ``action()`` after step ``at``."""
    import pdyn.assembly

    def install(at, action):
        real = pdyn.assembly.make_writers
        monkeypatch.setattr(pdyn.assembly, "make_writers",
                            lambda output, *more: real(output, *more) + [_Hook(at, action)])
    return install


def _drop(folder, **out):
    return SimulationConfig(scale=0.05, progress=False,
                            output=OutputConfig(folder=str(folder), **out))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_at_the_end_of_a_step_with_a_checkpoint(tmp_path, hook, signum):
    """A signal in step 13 (taken into the next step's reduction): the run ends after step 14
    with a checkpoint there — also without scheduled checkpoints — and says where; continued
    from it, the run equals the uninterrupted one bit for bit."""
    from pdyn.interrupt import Stopped
    from pdyn.restart import from_checkpoint

    ref = Simulation(_drop(tmp_path / "c"))
    ref.run(40)
    hook(13, lambda: signal.raise_signal(signum))
    sim = Simulation(_drop(tmp_path / "a", snapshot_every=5))
    with pytest.raises(Stopped) as err:
        sim.run(40)
    path = tmp_path / "a" / "checkpoints" / "ckpt_00000014.h5"
    assert sim.step_index == 14 and err.value.exit_code == 128 + signum
    name = "SIGINT (Ctrl-C)" if signum == signal.SIGINT else "SIGTERM"
    assert str(err.value) == (f"stopped by {name} at the end of step 14; checkpoint {path}; "
                              f"continue with: pdyn run --restart {path}")
    cont = from_checkpoint(path, output=OutputConfig(folder=str(tmp_path / "b")))
    cont.run(26)
    for k in ("gid", "pos", "vel"):
        a, b = (getattr(s.store, k)[s.store.owned[np.argsort(s.store.gid[s.store.owned])]]
                for s in (ref, cont))
        assert np.array_equal(a, b), k


def test_signal_without_output_says_so(hook):
    from pdyn.interrupt import Stopped

    hook(3, lambda: signal.raise_signal(signal.SIGTERM))
    with pytest.raises(Stopped, match=r"^stopped by SIGTERM at the end of step 4; no "
                       r"checkpoint: the run writes no output \(give --checkpoint-every\); no "
                       r"checkpoint written by this run$"):
        Simulation(SimulationConfig(scale=0.05, progress=False)).run(10)


def test_signal_handlers_are_restored_after_the_run(tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    Simulation(_drop(tmp_path)).run(3)
    assert {s: signal.getsignal(s) for s in before} == before


def test_ctrl_c_on_the_command_line(tmp_path, cli, hook):
    """Exit code 130 and one line naming the checkpoint to continue from; the stderr line of a
    second Ctrl-C (interrupting at once) names the last good checkpoint."""
    hook(7, lambda: signal.raise_signal(signal.SIGINT))
    code, _, err = cli(["run", "--scale", "0.05", "--steps", "50", "--no-progress",
                        "--snapshot-every", "5", "--output", "out"])
    assert code == 130 and err.strip().splitlines() == [
        "pdyn: stopped by SIGINT (Ctrl-C) at the end of step 8; checkpoint "
        "out/checkpoints/ckpt_00000008.h5; continue with: pdyn run --restart "
        "out/checkpoints/ckpt_00000008.h5"]
    read_checkpoint(tmp_path / "out" / "checkpoints" / "ckpt_00000008.h5")

    def twice():
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)

    hook(13, twice)
    code, _, err = cli(["run", "--restart", "out", "--steps", "30", "--no-progress",
                        "--checkpoint-every", "4"])
    assert code == 130 and err.strip().splitlines() == [  # the run's folder, resolved
        f"pdyn: interrupted; last good checkpoint: {tmp_path}/out/checkpoints/ckpt_00000012.h5"]


def test_every_stop_names_the_last_good_checkpoint(tmp_path, cli, hook):
    """An error in the middle of a run names the checkpoint to continue from: the run's
    newest, or the one it was restarted from, or none."""
    from pdyn.io import OutputWriteError

    def fail():
        raise OutputWriteError("out/x: cannot write (No space left on device)")

    hook(9, fail)
    code, _, err = cli(["run", "--scale", "0.05", "--steps", "50", "--no-progress",
                        "--checkpoint-every", "4", "--output", "out"])
    assert_user_error(code, err, "cannot write (No space left on device); last good "
                      "checkpoint: out/checkpoints/ckpt_00000008.h5")
    hook(10, fail)
    code, _, err = cli(["run", "--restart", "out", "--steps", "5", "--no-progress",
                        "--output", "more"])
    assert_user_error(code, err, "; last good checkpoint: out/checkpoints/ckpt_00000008.h5")
    code, _, err = cli(["run", "--scale", "0.05", "--steps", "50", "--no-progress",
                        "--snapshot-every", "0", "--output", "none"])
    assert_user_error(code, err, "; no checkpoint written by this run")


# ------------------------------------------------------------------ a damaged per-rank piece
def _damage(path, how):
    """Truncate the file at ``path`` to half its size, or replace it by text."""
    if how == "truncated":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)
    else:
        path.write_text("not an HDF5 file\n")


@pytest.fixture(scope="module")
def multi_rank_runs(tmp_path_factory):
    """``run(ranks)``: a run folder of the ``box`` scene run on that many ranks (made once),
    checkpoints at steps 5 and 10, each with its per-rank pieces."""
    runs = {}

    def run(ranks):
        if ranks not in runs:
            where = tmp_path_factory.mktemp(f"ranks{ranks}")
            code, _, err = mpiexec_pdyn(ranks, ["run", "--scene", "box", "--scale", "0.1",
                                                "--steps", "10", "--checkpoint-every", "5",
                                                "--snapshot-every", "0", "--no-progress",
                                                "--output", "out"], where, timeout=600)
            assert code == 0, err[-3000:]
            runs[ranks] = where / "out"
        return runs[ranks]
    return run


def _piece_cases():
    """(ranks, piece, damage, what --restart names): every piece of a 2-rank checkpoint,
    truncated and not HDF5, and each piece of a 4-rank one, truncated or not HDF5 in turn,
    named as a file; each piece of the 2-rank one through its run folder; the fast lane takes
    one 2-rank case (another rank's piece)."""
    cases = [(2, piece, how, "file") for piece in range(2) for how in ("truncated", "not HDF5")]
    cases += [(4, piece, ("truncated", "not HDF5")[piece % 2], "file") for piece in range(4)]
    cases += [(2, piece, "truncated", "folder") for piece in range(2)]
    return [pytest.param(*c, marks=() if c == (2, 1, "not HDF5", "file") else pytest.mark.slow,
                         id=f"{c[0]}ranks-r{c[1]}-{c[2].replace(' ', '')}-{c[3]}")
            for c in cases]


class TestDamagedPieceOnEveryRank:
    """A restart on N ranks from an N-rank checkpoint one of whose per-rank pieces cannot be
    opened: every rank takes part in the check, so the job ends within the timeout with one
    line and exit 2 (it used to print the line on rank 0 and leave the other ranks waiting
    forever). ``--restart FOLDER`` picks the newest checkpoint, whose piece is the damaged
    one."""

    @pytest.mark.parametrize("ranks,piece,how,target", _piece_cases())
    def test_one_line_and_exit_2(self, multi_rank_runs, tmp_path, ranks, piece, how, target):
        import shutil

        out = tmp_path / "out"
        shutil.copytree(multi_rank_runs(ranks), out)
        ckpt = out / "checkpoints" / "ckpt_00000010.h5"
        _damage(ckpt.with_name(f"ckpt_00000010.r{piece:04d}.h5"), how)
        restart = ckpt if target == "file" else out
        code, _, err = mpiexec_pdyn(ranks, ["run", "--restart", restart, "--steps", "5",
                                            "--no-progress"], tmp_path, timeout=240)
        assert_user_error(code, err, f"{ckpt}: cannot read its per-rank pieces")


class TestWallsNeverPassSilently:
    """Issue 44's sweeps (``tests/fast_walls.py``): six resting spheres (r 0.05 m, E 1 MPa)
    swept by a plate of two triangles, a plane, an open tube, a paddle turning about z. Below
    the start-up limits (0.01 r a step) the wall pushes every sphere ahead of it; forced
    (``allow_fast``) at 0.2 r and 0.3 r a step — faster than the spheres can be stopped — the
    run stops the moment a sphere is through it, naming the step, the sphere and the wall;
    without that stop the same runs end with spheres behind the wall and no word."""

    KINDS = ("plate", "plane", "tube", "paddle")

    @pytest.mark.parametrize("kind", KINDS)
    def test_below_the_limits_it_pushes_them(self, kind):
        sim = Simulation(fast_walls.config(kind, 0.01))
        sim.run(fast_walls.steps(kind, 0.01))
        assert fast_walls.passed(sim, kind) == []
        if kind != "paddle":
            assert (sim.store.vel[sim.store.owned][:, 1] > 0.0).all()  # every one pushed

    @pytest.mark.parametrize("kind", KINDS)
    @pytest.mark.parametrize("per_step", [0.2, 0.3])
    def test_forced_it_stops_naming_sphere_and_wall(self, kind, per_step):
        """Every shell stops the run; the plane (a half-space, which pushes back a sphere
        behind it) stops it at 0.3 r a step and pushes every sphere at 0.2 r."""
        sim = Simulation(fast_walls.config(kind, per_step, allow_fast=True))
        try:
            sim.run(fast_walls.steps(kind, per_step))
        except OverlapError as err:
            msg = str(err)
        else:
            assert (kind, per_step) == ("plane", 0.2) and fast_walls.passed(sim, kind) == []
            return
        assert len(msg.splitlines()) == 1
        assert re.match(r"step \d+: particle \d+ \(radius 0.05 m\) overlaps the wall "
                        r"walls\[0\] \((mesh|plane|cylinder)\)", msg), msg
        assert ("more than its radius" if kind == "plane" else "more than half its radius") \
            in msg
        assert "lower the speeds or dt, or stiffen the contacts" in msg

    @pytest.mark.parametrize("kind", ["plate", "tube", "paddle"])
    def test_without_the_stop_they_pass_silently(self, kind, monkeypatch):
        """What the stop prevents (and this suite would miss, were it broken)."""
        monkeypatch.setattr(OverlapWatch, "look", lambda self, store, step: 0.0)
        sim = Simulation(fast_walls.config(kind, 0.3, allow_fast=True))
        sim.run(fast_walls.steps(kind, 0.3))
        assert fast_walls.passed(sim, kind)

    def test_spheres_through_each_other(self):
        """Two spheres meeting head-on at 20 m/s each (0.32 r a step, the contact stops them
        only after an overlap of about 2 r): stopped when one is through the other."""
        with pytest.raises(OverlapError, match=r"step \d+: particles 0 and 1 overlap by "
                           r"0\.0\d+ m, more than the smaller radius 0\.05 m"):
            Simulation(config_from_dict(_head_on(0.0))).run(100)


def _head_on(x: float) -> dict:
    """The config (dict) of two spheres (r 0.05 m) meeting head-on at 20 m/s each, centres at
    x and x + 0.2 m on the x axis (``tests/fast_walls.py``'s material, no wall)."""
    doc = fast_walls.doc("plane", 0.0)
    doc["walls"] = []
    doc["particles"] = {"positions": [[x, 0.0, 0.0], [x + 0.2, 0.0, 0.0]],
                        "velocities": [[20.0, 0.0, 0.0], [-20.0, 0.0, 0.0]],
                        "radii": [0.05, 0.05], "density": 2500.0}
    return doc


def _overlap_cases():
    """(ranks, kind): the sweeps of :class:`TestWallsNeverPassSilently` and the head-on
    spheres on 2 ranks, a wall's and the spheres' on 4; the fast lane takes one."""
    cases = [(2, kind) for kind in (*TestWallsNeverPassSilently.KINDS, "spheres")]
    cases += [(4, "plate"), (4, "spheres")]
    return [pytest.param(*c, marks=() if c == (2, "plate") else pytest.mark.slow,
                         id=f"{c[0]}ranks-{c[1]}") for c in cases]


class TestOverlapStopOnEveryRank:
    """The overlap stop of :class:`TestWallsNeverPassSilently` (a wall forced through the
    spheres at 0.3 r a step; two spheres through each other) on 2 and 4 ranks: the blocks
    (8 along x, 0.5 m) put the spheres on a rank other than 0 (the head-on pair on two
    ranks), yet every rank ends within the timeout, exit 2, with one line naming the step,
    the sphere and the wall (or the two spheres): the line of the same run on one rank."""

    @pytest.mark.parametrize("ranks,kind", _overlap_cases())
    def test_one_line_and_exit_2(self, tmp_path, ranks, kind):
        from .test_bad_input import toml

        if kind == "spheres":
            doc, steps = _head_on(-0.1), 100
        else:
            doc, steps = fast_walls.doc(kind, 0.3, allow_fast=True), fast_walls.steps(kind, 0.3)
        with pytest.raises(OverlapError) as one_rank:
            Simulation(config_from_dict(doc)).run(steps)
        (tmp_path / "run.toml").write_text(toml(doc))
        code, _, err = mpiexec_pdyn(ranks, ["run", "run.toml", "--steps", steps, "--blocks",
                                            8, 1, 1, "--snapshot-every", 0, "--no-progress",
                                            "--output", "out"], tmp_path, timeout=240)
        head = str(one_rank.value).split(";")[0]
        assert re.match(r"step \d+: particles? \d+ (\(radius 0.05 m\) overlaps the wall "
                        r"walls\[0\] \((mesh|plane|cylinder)\)|and 1 overlap by)", head), head
        assert_user_error(code, err, head)
