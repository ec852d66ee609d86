"""Signals outside the steps and a rank that stops answering, under the real entry point
(``python -m pdyn``, 1 rank, and ``mpiexec`` with 2): SIGINT / SIGTERM during start-up (numba
loading, the scene's set-up) end the command with one pdyn line and 130 / 143, never MPICH's
"BAD TERMINATION"; a stopped rank (SIGSTOP) ends the job after the watchdog's timeout with one
line naming it (``pdyn.parallel.comm``)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from pdyn.parallel.comm import DEFAULT_TIMEOUT, ENV, start_watchdog, timeout_from

from .conftest import MPIEXEC, assert_user_error

CAUGHT = "SigCgt:"


def _launch(ranks, args, cwd, env=()):
    cmd = ([str(MPIEXEC), "-n", str(ranks)] if ranks > 1 else []) + [
        sys.executable, "-m", "pdyn", *map(str, args)]
    if ranks > 1 and not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable} (install the 'mpich' wheel)")
    return subprocess.Popen(cmd, cwd=cwd, env=dict(os.environ, PYTHONUNBUFFERED="1",
                                                   MPIR_CVAR_ENABLE_HEAVY_YIELD="1", **dict(env)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _ranks(marker: str) -> list[int]:
    """The pids of the pdyn processes whose command line holds ``marker`` (not mpiexec), in
    rank order (``PMI_RANK`` of their environment; pids need not follow the ranks)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline").read().split("\0")
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if marker in argv and "pdyn" in argv and "mpiexec" not in argv[0]:
            rank = next((int(e[9:]) for e in env if e.startswith(b"PMI_RANK=")), int(pid))
            found.append((rank, int(pid)))
    return [pid for _, pid in sorted(found)]


def _catches(pid: int, signum: int) -> bool:
    """Has process ``pid`` a handler for ``signum`` (``/proc/PID/status``)?"""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(int(ln.split()[1], 16) for ln in f if ln.startswith(CAUGHT))
    except (OSError, StopIteration):
        return False
    return bool(mask >> (signum - 1) & 1)


def _wait_for(condition, seconds=300.0, what=""):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"no {what} within {seconds} s (it measures nothing: a hang)")
        time.sleep(0.01)


def _end(proc, seconds=120):
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"no end within {seconds} s (a hang); stderr: {err[-2000:]}")
    return proc.returncode, out, err


def _pdyn_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("pdyn")]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("ranks,signum", [
    (1, signal.SIGTERM), (2, signal.SIGTERM), (1, signal.SIGINT),
    pytest.param(2, signal.SIGINT, marks=pytest.mark.slow)])  # the lane has both, and 2 ranks
def test_signal_during_start_up_is_one_line(tmp_path, ranks, signum):
    """The signal as soon as every rank has pdyn's handler (numba and the kernels still to
    load): one line, the exit code 128 + signum, nothing else on stderr."""
    marker = str(tmp_path / "out")
    proc = _launch(ranks, ["run", "--scene", "drum", "--steps", "100000", "--no-progress",
                           "--output", marker], tmp_path)
    try:
        _wait_for(lambda: len(p := _ranks(marker)) == ranks
                  and all(_catches(q, signal.SIGTERM) for q in p), what="handler")
        proc.send_signal(signum)  # mpiexec forwards it to every rank
        code, out, err = _end(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == 128 + signum, (code, err[-2000:])
    assert "BAD TERMINATION" not in out + err and "Traceback" not in err, err[-2000:]
    name = "SIGINT (Ctrl-C)" if signum == signal.SIGINT else "SIGTERM"
    assert _pdyn_lines(err) == [f"pdyn: stopped by {name} while no step runs (start-up or the "
                                "end of a run): no checkpoint was written"], err[-2000:]


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
def test_stopped_rank_ends_the_job_after_the_timeout(tmp_path):
    """Rank 1 stopped (SIGSTOP) in the middle of the steps: with ``PDYN_WATCHDOG=4`` rank 0
    says so in one line and every rank ends, non-zero, within seconds."""
    marker = str(tmp_path / "out")
    proc = _launch(2, ["run", "--scene", "box", "--scale", "0.1", "--steps", "10000000",
                       "--no-progress", "--snapshot-every", "50", "--output", marker], tmp_path,
                   {ENV: "4"})
    pids = []
    try:
        snapshots = tmp_path / "out" / "snapshots"
        _wait_for(lambda: len(list(snapshots.glob("snap_*.h5"))) >= 2, what="steps")
        pids = _ranks(marker)
        os.kill(pids[1], signal.SIGSTOP)
        t0 = time.monotonic()
        code, _, err = _end(proc, seconds=60)
        waited = time.monotonic() - t0
    finally:
        for pid in pids:
            for s in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, s)
                except ProcessLookupError:
                    pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code != 0 and waited < 30, (code, waited, err[-2000:])
    lines = _pdyn_lines(err)
    assert len(lines) == 1 and lines[0].startswith(
        "pdyn: error: rank 1 has not answered for ") and lines[0].endswith(
        " s (stopped or hung; watchdog timeout PDYN_WATCHDOG = 4 s): every rank is aborted"), \
        err[-2000:]


@pytest.mark.parametrize("text,seconds", [(None, DEFAULT_TIMEOUT), ("", DEFAULT_TIMEOUT),
                                          ("0", 0.0), ("2.5", 2.5), (" 60 ", 60.0)])
def test_watchdog_timeout_from_the_environment(text, seconds):
    assert timeout_from({} if text is None else {ENV: text}) == seconds


@pytest.mark.parametrize("text", ["-1", "abc", "nan", "inf", "1e999"])
def test_bad_watchdog_timeout_is_one_line(cli, monkeypatch, text):
    monkeypatch.setenv(ENV, text)
    code, _, err = cli(["scenes"])
    assert_user_error(code, err, f"{ENV} = {text!r}: expected seconds >= 0")


def test_no_watchdog_on_one_rank():
    from pdyn.parallel import SerialComm

    assert start_watchdog(SerialComm(), 300.0) is None
