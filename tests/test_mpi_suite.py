"""Runs the multi-rank tests (``tests/mpi``) under the venv's real ``mpiexec`` with 2 and 4
ranks (oversubscribed is fine), so a plain ``python -m pytest`` covers them, plus the abort
test: an exception on one rank ends the job through ``MPI_Abort`` with a non-zero exit, and a
CLI run on two ranks."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"

pytestmark = pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec next to "
                                f"{sys.executable} (install the 'mpich' wheel)")


def _mpiexec(n, *args, timeout):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # ranks oversubscribe the cores: let MPICH yield the CPU while it polls
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    cmd = [str(MPIEXEC), "-n", str(n), sys.executable, "-m", "mpi4py", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("ranks,select", [
    (2, "not slow"),
    pytest.param(2, "slow", marks=pytest.mark.slow),
    pytest.param(4, None, marks=pytest.mark.slow),
], ids=["2-fast", "2-slow", "4"])
def test_mpi_suite(ranks, select):
    """``tests/mpi`` on 2 ranks (its fast tests in the fast lane, its slow ones beside them) and
    all of it on 4. Not on 1: there ``get_comm`` is the serial stand-in, so each comparison
    with the 1-rank run would compare a run with itself. The 4-rank session, which runs
    beside the 2-rank ones (tests/conftest.py), goes through the tests in reverse order."""
    marks = ["-m", select] if select else []
    order = ["--reverse"] if ranks == 4 else []
    res = _mpiexec(ranks, "-m", "pytest", "--with-mpi", "-q", "-p", "no:cacheprovider", *marks,
                   *order, "tests/mpi", timeout=2400)  # a hang guard, not a time limit (a cold
    # compile on a loaded machine takes minutes: the 4-rank session outran 1200 s at load 7-10)
    tail = (res.stdout + res.stderr)[-4000:]
    assert res.returncode == 0, tail
    assert "passed" in res.stdout and "failed" not in res.stdout, tail


def test_exception_on_one_rank_aborts_job():
    """An exception on the last rank after its fifth step ends the whole job through
    ``MPI_Abort`` (called by that rank), so the other rank is not left waiting in the sixth
    step's collective: it finishes no step the failing rank did not take part in, and the job
    ends on its own with the abort's error code 1. Without the abort the job hangs (run without
    ``-m mpi4py`` it was still waiting after 60 s), so the timeout fails that; it measures
    nothing. MPICH's own line ``application called MPI_Abort`` is not asserted: on a loaded
    machine the launcher sometimes ends the job before it forwards the aborting rank's last
    write."""
    res = _mpiexec(2, "-m", "tests.mpi.fail_on_one_rank", timeout=120)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "injected failure on rank 1" in res.stderr
    assert "finished without failure" not in res.stderr
    # not anchored to lines: the two ranks' writes share one pipe and may interleave
    finished = {r: [int(s) for s in re.findall(rf"rank {r} finished step (\d+);", res.stderr)]
                for r in (0, 1)}
    assert finished[1] == [1, 2, 3, 4, 5], res.stderr[-3000:]
    assert max(finished[0], default=0) <= 5, res.stderr[-3000:]


def test_cli_run_on_two_ranks(tmp_path):
    """``mpiexec -n 2 pdyn run`` runs the decomposition and prints the load line."""
    res = subprocess.run(
        [str(MPIEXEC), "-n", "2", sys.executable, "-m", "pdyn", "run", "--scene", "box",
         "--scale", "0.1", "--steps", "30", "--no-progress", "--snapshot-every", "0",
         "--output", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "200 particles, 2 rank(s)" in res.stdout, res.stdout
    assert "30 steps" in res.stdout
    assert "pdyn: load over 2 rank(s)" in res.stdout


@pytest.mark.parametrize("args,needle", [
    (["--steps", "-1"], "pdyn: error: steps = -1: must be >= 1"),
    # the rest in the full run: a start of mpiexec each
    pytest.param(["--dt", "0.05", "--allow-large-dt"], "pdyn: error: step 7: particle 25 moved",
                 marks=pytest.mark.slow),
    pytest.param(["--scene", "gas", "--scale", "0.01", "--blocks", "64", "64", "64"],
                 "pdyn: error: blocks = [64, 64, 64]: 262144 blocks for 1000 particles on 2 "
                 "rank(s)", marks=pytest.mark.slow),
    # refused before the grid is allocated (they were killed by the kernel at 12.6 GB)
    pytest.param(["--blocks", "1000", "1000", "1000"],
                 "pdyn: error: blocks = [1000, 1000, 1000]: 1000000000 blocks for 1000 "
                 "particles on 2", marks=pytest.mark.slow),
    pytest.param(["--blocks", "1290", "1290", "1290"],
                 "pdyn: error: blocks = [1290, 1290, 1290]: 2146689000 blocks for 1000 "
                 "particles on 2", marks=pytest.mark.slow),
], ids=["steps", "runaway", "blocks-64", "blocks-1000", "blocks-1290"])
def test_cli_user_error_on_two_ranks(tmp_path, args, needle):
    """Under mpiexec a user error is one line (from rank 0) and exit code 2, not an abort."""
    res = subprocess.run(
        [str(MPIEXEC), "-n", "2", sys.executable, "-m", "pdyn", "run", "--no-progress",
         "--snapshot-every", "0", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, MPIR_CVAR_ENABLE_HEAVY_YIELD="1"))
    assert res.returncode == 2, res.stderr[-3000:]
    assert res.stderr.strip().splitlines() == [res.stderr.strip()], res.stderr
    assert res.stderr.startswith(needle), res.stderr


@pytest.mark.slow  # a run until its first snapshot, a restart and the 1-rank reference
def test_sigterm_under_mpiexec_stops_every_rank_with_a_checkpoint(tmp_path):
    """SIGTERM to ``mpiexec`` (what Slurm sends at the time limit; Hydra forwards it to every
    rank): every rank stops at the end of the same step, a checkpoint is written there, exit
    code 143 and one line naming it; continued from it on 2 ranks, the run equals the
    uninterrupted 1-rank run bit for bit."""
    import signal

    import numpy as np

    from pdyn.config import OutputConfig, SimulationConfig
    from pdyn.io import read_checkpoint
    from pdyn.simulation import Simulation

    env = dict(os.environ, MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
    run = [str(MPIEXEC), "-n", "2", sys.executable, "-m", "pdyn", "run", "--no-progress"]
    proc = subprocess.Popen(run + ["--scale", "0.05", "--steps", "1000000", "--snapshot-every",
                                   "50", "--output", "out"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = tmp_path / "out" / "snapshots" / "snap_00000050.h5"
    deadline = time.monotonic() + 300  # a safety net against a hang, not a measurement
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 143, err[-3000:]
    lines = [ln for ln in err.splitlines() if ln.startswith("pdyn:")]
    assert len(lines) == 1 and lines[0].startswith("pdyn: stopped by SIGTERM at the end of step ")
    step = int(lines[0].split("step ")[1].split(";")[0])
    path = f"out/checkpoints/ckpt_{step:08d}.h5"
    assert lines[0].endswith(f"checkpoint {path}; continue with: pdyn run --restart {path}")
    assert step >= 50 and read_checkpoint(tmp_path / path)["ranks"] == 2
    end = (step // 50 + 2) * 50  # a checkpoint step of the continued run
    res = subprocess.run(run + ["--restart", "out", "--steps", str(end - step),
                                "--checkpoint-every", "50"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    got = read_checkpoint(tmp_path / "out" / "checkpoints" / f"ckpt_{end:08d}.h5")
    ref = Simulation(SimulationConfig(scale=0.05, progress=False, output=OutputConfig(
        folder=str(tmp_path / "ref"), checkpoint_every=end)))
    ref.run(end)
    want = read_checkpoint(tmp_path / "ref" / "checkpoints" / f"ckpt_{end:08d}.h5")
    for k in ("gid", "pos", "vel"):
        assert np.array_equal(got[k], want[k]), k
