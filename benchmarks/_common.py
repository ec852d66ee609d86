"""Shared benchmark plumbing: best-of-N timing after a warm-up, JSON output (tables are printed
with ``pdyn.bench.format_table``)."""

from __future__ import annotations

import json
import platform
import time

import numpy as np


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


def uniform_spheres(n: int, solid_fraction: float, radius: float = 0.5, seed: int = 0):
    """``n`` random centres (may overlap) in a cube sized for the given solid fraction."""
    rng = np.random.default_rng(seed)
    L = (n * 4 / 3 * np.pi * radius**3 / solid_fraction) ** (1 / 3)
    return rng.uniform(0, L, (n, 3)), np.full(n, radius)


def write_json(path: str | None, payload: dict) -> None:
    if path:
        payload = {"machine": platform.platform(), "python": platform.python_version(), **payload}
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {path}")
