"""Shared benchmark plumbing: best-of-N timing after a warm-up, rows printed as they come and
as one table (``pdyn.bench.format_table``), JSON output."""

from __future__ import annotations

import json
import platform
import time


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


def write_json(path: str | None, payload: dict) -> None:
    if path:
        payload = {"machine": platform.platform(), "python": platform.python_version(), **payload}
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {path}")
