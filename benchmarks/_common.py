"""Shared benchmark plumbing: best-of-N timing after a warm-up, JSON output (tables are printed
with ``pdyn.bench.format_table``)."""

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


def write_json(path: str | None, payload: dict) -> None:
    if path:
        payload = {"machine": platform.platform(), "python": platform.python_version(), **payload}
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {path}")
