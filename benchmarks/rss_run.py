"""Resident set of each rank of a running ``pdyn run`` against its step: does memory grow with a
run's length? (issue 44: a 60 000-step 2-rank ``drum`` run with every writer on keeps its resident
set within 10 % of its value at 2 000 steps.)

    python benchmarks/rss_run.py --output drum-rss --json rss.json -- \\
        mpiexec -n 2 pdyn run --scene drum --steps 60000 --snapshot-every 5000 \\
        --checkpoint-every 10000 --thermo-every 100 --wall-forces --output drum-rss --no-progress

Runs the command after ``--``, and every ``--interval`` seconds reads ``VmRSS`` of each pdyn rank
among its descendants (``/proc/PID/status``; the rank from the ``PMI_RANK`` or
``OMPI_COMM_WORLD_RANK`` variable of the process) and the last complete step of
``OUTPUT/thermo.csv`` (the command needs ``--thermo-every``). The table gives each rank's
resident set (MiB) at the first sample at or after each step of ``--report-steps`` and at the
end, and the ratio of the last sample to the one at the first reported step; the JSON holds every
sample. Each sample's step is the last thermo row written, so it lags the true step by at most
the thermo interval.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_rows, write_json  # noqa: E402


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (``/proc/PID/task/*/children``)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``."""
    todo, seen = [pid], []
    while todo:
        kids = _children(todo.pop())
        seen += kids
        todo += kids
    return seen


def _rank_of(pid: int) -> int | None:
    """The MPI rank of a pdyn process (from its environment), None for anything else."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    if b"pdyn" not in cmd:
        return None
    for var in (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK="):
        for entry in env:
            if entry.startswith(var):
                return int(entry[len(var):])
    return 0 if b"mpiexec" not in cmd and b"hydra" not in cmd else None


def _rss_mib(pid: int) -> float | None:
    """``VmRSS`` of ``pid`` in MiB (None when it has ended)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _last_step(thermo: Path) -> int | None:
    """The step of the last complete row of ``thermo.csv`` (None before the first)."""
    try:
        with open(thermo, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            lines = f.read().split(b"\n")
    except OSError:
        return None
    for line in reversed(lines[:-1]):  # the text after the last newline may be cut
        try:
            return int(line.split(b",", 1)[0])
        except ValueError:
            continue
    return None


def sample(command: list[str], thermo: Path, interval: float) -> tuple[list[dict], int, float]:
    """Run ``command``; every ``interval`` s one sample {t, step, rss: {rank: MiB}}. Returns the
    samples, the exit code and the wall time (s)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command)
    ranks: dict[int, int] = {}
    samples = []
    while proc.poll() is None:
        for pid in _descendants(proc.pid):
            if pid not in ranks.values():
                rank = _rank_of(pid)
                if rank is not None:
                    ranks[rank] = pid
        rss = {r: _rss_mib(p) for r, p in sorted(ranks.items())}
        step = _last_step(thermo)
        if step is not None and all(v is not None for v in rss.values()) and rss:
            samples.append({"t": round(time.perf_counter() - t0, 1), "step": step, "rss": rss})
        time.sleep(interval)
    return samples, proc.returncode, time.perf_counter() - t0


def report(samples: list[dict], steps: list[int]) -> list[dict]:
    """One row per reported step (the first sample at or after it) and one for the last sample:
    each rank's MiB and the ratio to the first row."""
    rows, picked = [], []
    for s in steps:
        at = next((x for x in samples if x["step"] >= s), None)
        if at is not None and at not in picked:
            picked.append(at)
    if samples and samples[-1] not in picked:
        picked.append(samples[-1])
    for x in picked:
        row = {"step": x["step"], "time (s)": x["t"]}
        for r, v in x["rss"].items():
            row[f"rank {r} (MiB)"] = f"{v:.1f}"
            row[f"rank {r} / first"] = f"{v / picked[0]['rss'][r]:.3f}"
        rows.append(row)
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--output", required=True, help="the run's output folder (holds thermo.csv)")
    p.add_argument("--interval", type=float, default=3.0, help="seconds between samples")
    p.add_argument("--report-steps", type=int, nargs="+",
                   default=[2000, 10000, 20000, 30000, 40000, 50000, 60000])
    p.add_argument("--json", help="write every sample and the table to this file")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("give the command after --")
    samples, code, wall = sample(command, Path(args.output) / "thermo.csv", args.interval)
    print(f"exit code {code}, {wall:.0f} s, {len(samples)} samples")
    rows = print_rows(report(samples, args.report_steps)) if samples else []
    write_json(args.json, {"exit_code": code, "wall_s": wall, "rows": rows, "samples": samples})
    sys.exit(code)


if __name__ == "__main__":
    main()
