"""The SLURM jobscripts (``jobscripts/``) run to completion under a real single-node SLURM
started on this machine for the test.

SLURM comes from Debian's packages (``slurmctld slurmd slurm-client``), which the CI script
``.ci/run`` installs; where they are missing the test skips, saying so. The daemons run as root
without systemd, cgroups or munge (``auth/none``, ``proctrack/linuxproc``, ``task/none``), with
state, spool, pid and log files in a temporary folder and private ports, and are stopped by
pid at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JOBSCRIPTS = ROOT / "jobscripts"
PACKAGES = ["slurmctld", "slurmd", "slurm-client"]
TOOLS = ["slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol"]


def test_jobscripts_are_valid_bash():
    """The fast lane's check of the jobscripts (the full run submits them to SLURM below):
    bash parses each one."""
    scripts = sorted(JOBSCRIPTS.glob("*.sbatch"))
    assert [p.name for p in scripts] == ["dem_benchmark.sbatch", "run.sbatch", "scaling.sbatch"]
    for script in scripts:
        res = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True,
                             timeout=30)
        assert res.returncode == 0, f"{script.name}: {res.stderr}"


def _which_all() -> bool:
    extra = os.pathsep.join(("/usr/sbin", "/usr/bin", "/sbin"))
    return all(shutil.which(t, path=os.environ.get("PATH", "") + os.pathsep + extra)
               for t in TOOLS)


def _missing_slurm() -> str | None:
    """Why SLURM cannot be started here, or None."""
    if not _which_all():
        return (f"SLURM is not installed (needs {', '.join(TOOLS)}; "
                f"apt-get install {' '.join(PACKAGES)}, as .ci/run does)")
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the test starts slurmctld and slurmd as root and is not root"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_resources(env) -> tuple[int, int]:
    out = subprocess.run(["slurmd", "-C"], env=env, capture_output=True, text=True,
                         timeout=30).stdout
    cpus = int(re.search(r"CPUs=(\d+)", out).group(1))
    mem = int(re.search(r"RealMemory=(\d+)", out).group(1))
    return min(cpus, 2), min(mem, 1000)


CONF = """\
ClusterName=pdyntest
FirstJobId={first_job}
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmi2
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    reason = _missing_slurm()
    if reason:
        pytest.skip(reason)
    d = tmp_path_factory.mktemp("slurm")
    (d / "state").mkdir()
    (d / "spool").mkdir()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", ""),
                                   "/usr/sbin", "/usr/bin"))
    cpus, mem = _node_resources(env)
    conf = d / "slurm.conf"
    # a fresh job id per test run: MPICH names its shared-memory segments after the job step,
    # and a segment left in /dev/shm by a killed earlier run with the same id breaks MPI_Init
    first_job = 1000 + (os.getpid() * 7919 + time.time_ns() // 1000) % 10**7
    conf.write_text(CONF.format(d=d, ctld_port=_free_port(), d_port=_free_port(), cpus=cpus,
                                first_job=first_job,
                                mem=mem))
    env["SLURM_CONF"] = str(conf)
    for key in [k for k in env if k.startswith(("SLURM_", "PMI_", "HYDRA_"))]:
        if key != "SLURM_CONF":
            env.pop(key)
    pids = []
    try:
        subprocess.run(["slurmctld", "-i"], env=env, check=True, timeout=30)
        pids.append(d / "slurmctld.pid")
        subprocess.run(["slurmd", "-N", "localhost"], env=env, check=True, timeout=30)
        pids.append(d / "slurmd.pid")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                   text=True, timeout=10).stdout.strip()
            if state.startswith("idle"):
                break
            time.sleep(0.5)
        else:
            log = (d / "slurmctld.log").read_text()[-2000:] if (d / "slurmctld.log").exists() \
                else ""
            pytest.fail(f"SLURM node never became idle (state {state!r}):\n{log}")
        yield env, d, cpus
    finally:
        for pidfile in reversed(pids):
            _stop(pidfile)


def _stop(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _submit_and_wait(env, workdir: Path, script: Path, extra_env: dict, timeout=180):
    env = dict(env, **extra_env)
    venv = Path(sys.executable).parent.parent
    if (venv / "bin" / "activate").exists():
        env["PDYN_VENV"] = str(venv)
    res = subprocess.run(["sbatch", "--parsable", f"--chdir={workdir}", str(script)], env=env,
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    job = res.stdout.strip().split(";")[0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], env=env,
                           capture_output=True, text=True, timeout=30)
        if not q.stdout.strip():
            break
        time.sleep(0.5)
    else:
        subprocess.run(["scancel", job], env=env, timeout=30)
        pytest.fail(f"job {job} ({script.name}) still queued/running after {timeout} s")
    info = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True,
                          text=True, timeout=30).stdout
    return job, info


@pytest.mark.slow  # a SLURM started for the test
def test_run_jobscript(slurm, tmp_path):
    env, _, _ = slurm
    job, info = _submit_and_wait(env, tmp_path, JOBSCRIPTS / "run.sbatch", {
        "PDYN_SCENE": "box", "PDYN_SCALE": "0.1", "PDYN_STEPS": "40"})
    out = (tmp_path / f"pdyn-run-{job}.out").read_text()
    assert "JobState=COMPLETED" in info and "ExitCode=0:0" in info, info + out
    assert "pdyn: scene 'box': 200 particles, 2 rank(s)" in out, out
    assert "40 steps of dt" in out, out
    assert "pdyn: load over 2 rank(s)" in out, out
    assert out.rstrip().endswith("pdyn job done"), out


@pytest.mark.slow
def test_scaling_jobscript(slurm, tmp_path):
    env, _, _ = slurm
    job, info = _submit_and_wait(env, tmp_path, JOBSCRIPTS / "scaling.sbatch", {
        "PDYN_SCALE": "0.5", "PDYN_STEPS": "20", "PDYN_LAUNCHER": "mpiexec"})
    out = (tmp_path / f"pdyn-scaling-{job}.out").read_text()
    assert "JobState=COMPLETED" in info and "ExitCode=0:0" in info, info + out
    assert "1000 particles, 1 rank(s)" in out and "1000 particles, 2 rank(s)" in out, out
    rows = re.findall(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+\d+%$", out, re.M)
    assert [r[0] for r in rows] == ["1", "2"], out
    assert out.rstrip().endswith("scaling series done"), out
