"""``hash_grid`` update strategies: incremental ([Schornbaum2009] Alg. 2) vs clear-and-reinsert.

Scene: Schornbaum's constant-density benchmark (``make_scene("schornbaum")``, Sec. 4.1-4.3):
spheres in a periodic cube, ~2 overlaps per object, each moving a random distance of at most
20 % of its size per step (no forces; positions wrap). Both structures see the same
trajectory in the same run; per step we time ``update(positions)`` and ``candidate_pairs()``
separately and check that both strategies report the same pairs. Reported: mean time per step
(ms), update time per object (ns), fraction of objects the incremental update moved, and the
rebuild/incremental ratios.

    python benchmarks/hash_grid_update.py                    # 1e4 and 1e5 objects
    python benchmarks/hash_grid_update.py --full             # up to 1e6 objects
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdyn.broadphase import make_broadphase
from pdyn.broadphase._kernels import canonical_pairs
from pdyn.scenarios import make_scene

STRATEGIES = ("incremental", "rebuild")


def run(scale, steps, seed=0):
    sc = make_scene("schornbaum", scale=scale, seed=seed)
    L = sc.box_hi - sc.box_lo
    pos = sc.positions.copy()
    n = pos.shape[0]
    bps = {u: make_broadphase("hash_grid", update=u).build(pos, sc.radii) for u in STRATEGIES}
    t_up = {u: [] for u in STRATEGIES}
    t_det = {u: [] for u in STRATEGIES}
    moved = []
    for _ in range(steps):
        pos = np.mod(pos + sc.velocities, L)
        got = {}
        for u in STRATEGIES:
            bp = bps[u]
            t0 = time.perf_counter()
            bp.update(pos)
            t1 = time.perf_counter()
            got[u] = bp.candidate_pairs()
            t2 = time.perf_counter()
            t_up[u].append(t1 - t0)
            t_det[u].append(t2 - t1)
        moved.append(bps["incremental"].stats()["moved"] / n)
        a, b = (canonical_pairs(got[u]) for u in STRATEGIES)
        if not np.array_equal(a, b):
            raise AssertionError("strategies disagree")
    st = bps["incremental"].stats()
    row = {"scale": scale, "n": n, "steps": steps, "grids": st["grids"],
           "cells_per_axis": st["cells_per_axis"], "pair_tests_per_step": int(st["candidates"]),
           "moved_fraction": float(np.mean(moved))}
    for u in STRATEGIES:
        row[f"{u}_update_ms"] = 1e3 * float(np.median(t_up[u]))
        row[f"{u}_detect_ms"] = 1e3 * float(np.median(t_det[u]))
        row[f"{u}_update_ns_per_object"] = 1e9 * float(np.median(t_up[u])) / n
    row["rebuild_over_incremental_update"] = row["rebuild_update_ms"] / row["incremental_update_ms"]
    row["rebuild_over_incremental_step"] = (
        (row["rebuild_update_ms"] + row["rebuild_detect_ms"])
        / (row["incremental_update_ms"] + row["incremental_detect_ms"])
    )
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=float, nargs="+", default=[1.0, 10.0],
                    help="scene scale (1 = 10^4 objects)")
    ap.add_argument("--full", action="store_true", help="scales 1, 10, 100 (10^4 .. 10^6)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    scales = [1.0, 10.0, 100.0] if args.full else args.scales
    run(0.1, 2)  # warm-up: numba compilation
    rows = [run(s, args.steps) for s in scales]
    print(f"{'N':>8} {'moved':>6} {'inc upd ms':>11} {'reb upd ms':>11} {'inc ns/obj':>10} "
          f"{'reb ns/obj':>10} {'inc det ms':>10} {'reb det ms':>10} {'upd ratio':>9} "
          f"{'step ratio':>10}")
    for r in rows:
        print(f"{r['n']:>8} {r['moved_fraction']:>6.3f} {r['incremental_update_ms']:>11.2f} "
              f"{r['rebuild_update_ms']:>11.2f} {r['incremental_update_ns_per_object']:>10.1f} "
              f"{r['rebuild_update_ns_per_object']:>10.1f} {r['incremental_detect_ms']:>10.2f} "
              f"{r['rebuild_detect_ms']:>10.2f} {r['rebuild_over_incremental_update']:>9.2f} "
              f"{r['rebuild_over_incremental_step']:>10.2f}")
    print("(median over steps; ratio = rebuild / incremental, > 1 means incremental is faster)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "hash_grid_update", "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
