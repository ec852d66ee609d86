"""Shared benchmark plumbing: best-of-N timing after a warm-up, rows printed as they come and
as one table (``pdyn.bench.format_table``), JSON output."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np

#: when this benchmark process started (UTC): the "date of the run" its JSON records
STARTED = datetime.datetime.now(datetime.timezone.utc)
#: the machine's load averages (1, 5, 15 min) then: how busy the shared machine was
LOAD_AT_START = os.getloadavg()


def best_time(fn, repeat: int = 3, warmup: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls after ``warmup`` calls (numba compiles in warm-up)."""
    out = None
    for _ in range(warmup):
        out = fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def print_rows(rows, columns=None) -> list[dict]:
    """Print each row of the iterable ``rows`` as it is measured, then all of them as one table
    (``columns``: the table's, default the first row's keys); returns them as a list."""
    from pdyn.bench import format_table

    out = []
    for row in rows:
        out.append(row)
        print(format_table([row], list(row)), flush=True)
    print()
    print(format_table(out, columns or list(out[0])))
    return out


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), or the platform's word for it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def command_line() -> str:
    """The command that runs this benchmark, as typed from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(Path(__file__).resolve().parents[1])
    except ValueError:
        pass
    return shlex.join(["python", str(script), *sys.argv[1:]])


#: states a benchmark makes once (a settled bed, a flowing chute), ignored by git
CACHE = Path(__file__).resolve().parent / ".cache"


def cache_path(kind: str, p: dict) -> Path:
    """``.cache/<kind>_<key>.npz``, the key a hash of every parameter in ``p``."""
    key = hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest()[:16]
    return CACHE / f"{kind}_{key}.npz"


def cached(kind: str, p: dict, make, log=print) -> dict:
    """The arrays ``make()`` returns for parameters ``p`` (a dict of arrays and scalars): from
    the cache, or made now and written (under a temporary name, then
    renamed); ``path`` added."""
    path = cache_path(kind, p)
    if not path.exists():
        rec = make()
        CACHE.mkdir(exist_ok=True)
        (CACHE / ".gitignore").write_text("*\n")
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **rec)
        tmp.rename(path)
        log(f"{kind}: cached in {path}", flush=True)
    with np.load(path) as f:
        rec = {k: f[k] for k in f.files}
    rec["path"] = str(path)
    return rec


def write_json(path: str | None, payload: dict) -> None:
    """Write ``payload`` with the machine, the command line, the run's start and end (UTC) and
    the load averages then to ``path`` (nothing when None)."""
    if path:
        now = datetime.datetime.now(datetime.timezone.utc)
        payload = {"machine": platform.platform(), "python": platform.python_version(),
                   "cpu": cpu_model(), "cores": os.cpu_count(),
                   "command": command_line(),
                   "started": STARTED.isoformat(timespec="seconds"),
                   "finished": now.isoformat(timespec="seconds"),
                   "load_average": {"start": LOAD_AT_START, "end": os.getloadavg()}, **payload}
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {path}")


def write_doc_block(path, name: str, text: str) -> None:
    """Replace what lies between the lines ``<!-- name: begin -->`` and ``<!-- name: end -->``
    of the markdown file ``path`` by ``text`` (nothing else in it changes)."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    path = Path(path)
    doc = path.read_text(encoding="utf-8")
    if doc.count(begin) != 1 or doc.count(end) != 1:
        sys.exit(f"{name}: {path} needs one {begin} and one {end} line")
    head, rest = doc.split(begin)
    _, tail = rest.split(end)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")
    print(f"wrote the tables into {path}")


def add_outputs(p) -> None:
    """The options of a validation script that :func:`publish` and :func:`side_by_side`
    read: ``--jobs``, ``--json``, ``--csv``, ``--plot``, ``--doc``."""
    p.add_argument("--jobs", type=int, default=1, help="runs side by side")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--csv", help="write the table's numbers here")
    p.add_argument("--plot", help="write the figure here")
    p.add_argument("--doc", help="rewrite the generated block of this markdown file")


def side_by_side(fn, items, jobs: int) -> list:
    """``fn`` of each of ``items`` in ``jobs`` processes (started afresh: numba and MPI
    state are not forked), in order."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        return list(pool.map(fn, items))


def publish(args, name: str, text: str, results, write_csv, plot) -> None:
    """Print a validation script's table ``text`` and write what its options ask: ``--csv``
    (``write_csv(results, path)``), ``--plot`` (``plot(results, path)``) and ``--doc`` (the
    block ``name`` of that markdown file, :func:`write_doc_block`)."""
    print(text)
    if args.csv:
        write_csv(results, args.csv)
    if args.plot:
        plot(results, args.plot)
    if args.doc:
        write_doc_block(args.doc, name, text)


def save_figure(fig, axes, path) -> None:
    """Legends on ``axes``, then ``fig`` laid out, written to ``path`` and closed."""
    import matplotlib.pyplot as plt

    for a in axes:
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")
