"""``hash_grid`` vs ``linked_cells`` on [Koch2020]'s polydisperse scenes (Sec. 4.1.7-4.1.8,
Tables 6-7), same run, same trajectory.

A step is ``update(positions)`` + ``candidate_pairs()`` after moving every particle by its
(small) scene velocity. Reported per structure: median time per step and candidate pairs per
step (``stats()["candidates"]``: pairs handed to the exact test; ``hash_grid`` applies the test
itself, so its candidates are the pair tests its grids performed). Both structures' exact
overlapping pairs are checked to be identical.
Koch's targets: very_polydisperse ``hash_grid`` >= 100x faster with <= 1 % of linked cells'
candidates (Table 7); more_polydisperse >= 5x faster (Table 6: ~7x).

Linked cells' candidate count grows as N^2 on ``very_polydisperse`` (its cell is the huge
sphere's diameter), so its pair buffer needs 16 N^2 / 2 bytes: scale 0.25 = 10^4 spheres = 0.8
GB, scale 0.5 = 3.2 GB; scale 1 (Koch's 40 000) would need 13 GB.

    python benchmarks/polydisperse.py                       # scales 0.5 (very), 0.25 (more)
    python benchmarks/polydisperse.py --very-scale 0.25 --more-scale 1 --steps 3   # Koch's full more_polydisperse
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdyn.broadphase import make_broadphase
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping
from pdyn.scenarios import make_scene

STRUCTURES = ("linked_cells", "hash_grid")
#: linked cells refuses more than 2**26 candidates by default; here we want to measure them
PARAMS = {"linked_cells": {"max_candidates": 1 << 40}, "hash_grid": {}}


def run(scene_name, scale, steps, seed=0):
    sc = make_scene(scene_name, scale=scale, seed=seed)
    pos = sc.positions.copy()
    bps = {s: make_broadphase(s, **PARAMS[s]).build(pos, sc.radii) for s in STRUCTURES}
    times = {s: [] for s in STRUCTURES}
    cpu = {s: [] for s in STRUCTURES}
    cands = {s: [] for s in STRUCTURES}
    for _ in range(steps):
        pos = pos + sc.velocities  # dt = 1: Koch's velocities are 0.01
        exact = {}
        for s in STRUCTURES:
            bp = bps[s]
            t0, c0 = time.perf_counter(), time.process_time()
            bp.update(pos)
            pairs = bp.candidate_pairs()
            times[s].append(time.perf_counter() - t0)
            cpu[s].append(time.process_time() - c0)
            cands[s].append(bp.stats()["candidates"])
            exact[s] = canonical_pairs(filter_overlapping(pairs, pos, sc.radii))
            del pairs
        if not np.array_equal(exact["linked_cells"], exact["hash_grid"]):
            raise AssertionError(f"{scene_name}: structures disagree")
    st = bps["hash_grid"].stats()
    row = {"scene": scene_name, "scale": scale, "n": int(sc.radii.shape[0]), "steps": steps,
           "overlapping_pairs": int(exact["hash_grid"].shape[0]), "hhg_grids": st["grids"],
           "hhg_cells_per_axis": st["cells_per_axis"], "hhg_memory_bytes": st["memory_bytes"],
           "lc_memory_bytes": bps["linked_cells"].stats()["memory_bytes"]}
    for s in STRUCTURES:
        row[f"{s}_ms"] = 1e3 * float(np.median(times[s]))
        row[f"{s}_cpu_ms"] = 1e3 * float(np.median(cpu[s]))
        row[f"{s}_candidates"] = int(np.median(cands[s]))
    row["speedup"] = row["linked_cells_ms"] / row["hash_grid_ms"]
    row["speedup_cpu"] = row["linked_cells_cpu_ms"] / row["hash_grid_cpu_ms"]
    row["candidate_ratio"] = row["hash_grid_candidates"] / max(row["linked_cells_candidates"], 1)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--very-scale", type=float, default=0.5,
                    help="very_polydisperse scale (1 = Koch's 40 000 spheres)")
    ap.add_argument("--more-scale", type=float, default=0.25,
                    help="more_polydisperse scale (1 = Koch's 80 000 spheres)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    run("very_polydisperse", 0.01, 1)  # warm-up: numba compilation
    run("more_polydisperse", 0.01, 1)
    rows = [run("very_polydisperse", args.very_scale, args.steps),
            run("more_polydisperse", args.more_scale, args.steps)]
    print(f"{'scene':>18} {'N':>7} {'LC ms':>9} {'HHG ms':>8} {'speedup':>8} {'cpu spd':>8} "
          f"{'LC cand':>10} {'HHG cand':>9} {'cand %':>7} {'grids':>5}")
    for r in rows:
        print(f"{r['scene']:>18} {r['n']:>7} {r['linked_cells_ms']:>9.1f} "
              f"{r['hash_grid_ms']:>8.2f} {r['speedup']:>8.1f} {r['speedup_cpu']:>8.1f} "
              f"{r['linked_cells_candidates']:>10.3g} "
              f"{r['hash_grid_candidates']:>9.3g} {100 * r['candidate_ratio']:>7.3f} "
              f"{r['hhg_grids']:>5}")
    print("(median per step of update + candidate_pairs, wall clock; 'cpu spd' = the same ratio in "
          "process CPU time, less sensitive to a shared machine; cand % = HHG / LC candidates)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "polydisperse", "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
