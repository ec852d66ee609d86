"""Are ``hash_grid`` insert and remove O(1)? Mean time per operation vs resident count.

Scene: N spheres at constant number density (~2 overlaps per object, Schornbaum 2009 Sec. 4)
with radii spanning 1:10 (several grids). With N residents, a batch of B = min(1000, N/2)
random residents is removed and reinserted (same positions), repeated; the mean time per
operation is reported (min over repeats) (a) through the public API (``bp.remove(handles)`` /
``bp.insert(handles)``: includes the base class's argument checks and resident-set
bookkeeping), (b) for the structure alone
(``_remove``/``_insert``: the HHG kernels), and (c) for single-handle calls (Python call
overhead dominates). O(1) means flat in N; the ratio max/min over N is printed.

    python benchmarks/hash_grid_ops.py                 # N = 1e3, 1e4, 1e5
    python benchmarks/hash_grid_ops.py --full          # N up to 1e6
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdyn.broadphase import make_broadphase


def scene(n, seed=0):
    rng = np.random.default_rng(seed)
    rad = 10 ** rng.uniform(-1, 0, n) * 0.5
    mean_vol = float(np.mean((4 / 3) * np.pi * (2 * rad) ** 3))
    L = (n * mean_vol / 2.0) ** (1 / 3)  # ~2 overlaps per object
    return rng.uniform(0, L, (n, 3)), rad


def measure(n, batch, repeats, singles, seed=0):
    pos, rad = scene(n, seed)
    bp = make_broadphase("hash_grid").build(pos, rad)
    rng = np.random.default_rng(seed + 1)
    res = {"n": n, "grids": bp.stats()["grids"], "cells_per_axis": bp.stats()["cells_per_axis"]}
    b = min(batch, n // 2)
    t_rm, t_in, k_rm, k_in = [], [], [], []
    for _ in range(repeats):
        hs = rng.choice(n, size=b, replace=False).astype(np.int64)
        t0 = time.perf_counter()
        bp.remove(hs)
        t1 = time.perf_counter()
        bp.insert(hs)
        t2 = time.perf_counter()
        t_rm.append((t1 - t0) / b)
        t_in.append((t2 - t1) / b)
        # the structure alone (resident set of the base class left untouched)
        t0 = time.perf_counter()
        bp._remove(hs)
        t1 = time.perf_counter()
        bp._insert(hs)
        t2 = time.perf_counter()
        k_rm.append((t1 - t0) / b)
        k_in.append((t2 - t1) / b)
    one = rng.choice(n, size=min(singles, n), replace=False).astype(np.int64)
    t0 = time.perf_counter()
    for h in one:
        bp.remove(h)
    t1 = time.perf_counter()
    for h in one:
        bp.insert(h)
    t2 = time.perf_counter()
    bp.check_invariants() if n <= 100_000 else None
    # min over repeats: the machine is shared, the minimum is the least disturbed estimate
    res.update(
        remove_ns=1e9 * float(np.min(t_rm)), insert_ns=1e9 * float(np.min(t_in)),
        kernel_remove_ns=1e9 * float(np.min(k_rm)), kernel_insert_ns=1e9 * float(np.min(k_in)),
        median_remove_ns=1e9 * float(np.median(t_rm)),
        median_insert_ns=1e9 * float(np.median(t_in)),
        single_remove_us=1e6 * (t1 - t0) / one.size, single_insert_us=1e6 * (t2 - t1) / one.size,
        batch=b, repeats=repeats,
    )
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--full", action="store_true", help="sizes 1e3 .. 1e6")
    ap.add_argument("--batch", type=int, default=1000, help="operations per timed call")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--singles", type=int, default=300, help="single-handle calls timed")
    ap.add_argument("--json", default=None, help="write results to this JSON file")
    args = ap.parse_args(argv)
    sizes = [1_000, 10_000, 100_000, 1_000_000] if args.full else args.sizes
    measure(2000, 100, 2, 10)  # warm-up: numba compilation
    rows = [measure(n, args.batch, args.repeats, args.singles) for n in sizes]
    cols = ("remove_ns", "insert_ns", "kernel_remove_ns", "kernel_insert_ns",
            "single_remove_us", "single_insert_us")
    print(f"{'N':>9} {'grids':>5} {'cells/axis':>16} " + " ".join(f"{c:>17}" for c in cols))
    for r in rows:
        print(f"{r['n']:>9} {r['grids']:>5} {str(r['cells_per_axis']):>16} "
              + " ".join(f"{r[c]:>17.1f}" for c in cols))
    ratios = {c: max(r[c] for r in rows) / min(r[c] for r in rows) for c in cols}
    print("max/min over N: " + ", ".join(f"{c} {v:.2f}" for c, v in ratios.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "hash_grid_ops", "rows": rows, "ratio_max_min": ratios}, fh,
                      indent=1)
    return rows


if __name__ == "__main__":
    main()
