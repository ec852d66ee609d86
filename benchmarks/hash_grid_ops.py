"""Are ``hash_grid`` insert and remove O(1)? Mean time per operation vs resident count.

Scene: N spheres at constant number density (~2 overlaps per object, [Schornbaum2009] Sec. 4)
with radii spanning 1:10 (several grids). With N residents, a batch of B = min(1000, N/2)
random residents is removed and reinserted (same positions), repeated; the mean time per
operation is reported (a) through the public API (``bp.remove(handles)`` /
``bp.insert(handles)``: includes the base class's argument checks and resident-set
bookkeeping), (b) for the structure alone (``_remove``/``_insert``: the HHG kernels), and
(c) for single-handle calls (Python call overhead dominates). The sizes are timed
round-robin, minimum and median over the rounds. O(1) means flat in N; the ratio max/min
over N is printed.

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


def setup(n, seed=0):
    pos, rad = scene(n, seed)
    return make_broadphase("hash_grid").build(pos, rad)


def timed_round(bp, n, b, singles, rng, out):
    """One round on one structure: remove + reinsert a random batch through the API, then
    through the kernels alone, then ``singles`` single-handle calls; appends ns per op. An
    untimed batch first brings the structure back into cache as far as a run of rounds on
    this size alone would have it (a small structure entirely; at 10^6 only the batch's own
    lines, which the timed batches do not reuse), so interleaving does not make the small
    sizes cold."""
    def remove_then_insert(remove, insert, handles):
        t0 = time.perf_counter()
        remove(handles)
        t1 = time.perf_counter()
        insert(handles)
        t2 = time.perf_counter()
        return 1e9 * (t1 - t0) / handles.size, 1e9 * (t2 - t1) / handles.size

    def batch():
        return rng.choice(n, size=b, replace=False).astype(np.int64)

    remove_then_insert(bp.remove, bp.insert, batch())  # untimed warm-up batch
    rm, ins = remove_then_insert(bp.remove, bp.insert, batch())
    out["remove_ns"].append(rm)
    out["insert_ns"].append(ins)
    # the structure alone (the base class's resident flags left untouched), on handles not
    # touched by the timing above (cold, like the API numbers)
    rm, ins = remove_then_insert(bp._remove, bp._insert, batch())
    out["kernel_remove_ns"].append(rm)
    out["kernel_insert_ns"].append(ins)
    one = rng.choice(n, size=min(singles, n), replace=False).astype(np.int64)
    t0 = time.perf_counter()
    for h in one:
        bp.remove(h)
    t1 = time.perf_counter()
    for h in one:
        bp.insert(h)
    t2 = time.perf_counter()
    out["single_remove_ns"].append(1e9 * (t1 - t0) / one.size)
    out["single_insert_ns"].append(1e9 * (t2 - t1) / one.size)


COLS = ("remove_ns", "insert_ns", "kernel_remove_ns", "kernel_insert_ns",
        "single_remove_ns", "single_insert_ns")


def measure(sizes, batch, repeats, singles, seed=0):
    """Build one structure per size, then time the sizes round-robin (a burst of load from
    other jobs on this shared machine then hits every size alike); per size and column the
    minimum over the rounds (least disturbed) and the median are reported."""
    bps = [setup(n, seed) for n in sizes]
    rng = np.random.default_rng(seed + 1)
    times = [{c: [] for c in COLS} for _ in sizes]
    for _ in range(repeats):
        for n, bp, out in zip(sizes, bps, times):
            timed_round(bp, n, min(batch, n // 2), singles, rng, out)
    rows = []
    for n, bp, out in zip(sizes, bps, times):
        if n <= 100_000:
            bp.check_invariants()
        st = bp.stats()
        row = {"n": n, "grids": st["grids"], "cells_per_axis": st["cells_per_axis"],
               "batch": min(batch, n // 2), "repeats": repeats}
        row.update({c: float(np.min(v)) for c, v in out.items()})
        row.update({"median_" + c: float(np.median(v)) for c, v in out.items()})
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--full", action="store_true", help="sizes 1e3 .. 1e6")
    ap.add_argument("--batch", type=int, default=1000, help="operations per timed call")
    ap.add_argument("--repeats", type=int, default=60)
    ap.add_argument("--singles", type=int, default=100, help="single-handle calls per round")
    ap.add_argument("--json", default=None, help="write results to this JSON file")
    args = ap.parse_args(argv)
    sizes = [1_000, 10_000, 100_000, 1_000_000] if args.full else args.sizes
    measure([2000], 100, 2, 10)  # warm-up: numba compilation
    rows = measure(sizes, args.batch, args.repeats, args.singles)
    print(f"ns per operation: minimum (median) over {args.repeats} rounds, sizes interleaved")
    print(f"{'N':>9} {'grids':>5} {'cells/axis':>18} " + " ".join(f"{c:>18}" for c in COLS))
    for r in rows:
        print(f"{r['n']:>9} {r['grids']:>5} {str(r['cells_per_axis']):>18} " + " ".join(
            f"{r[c]:>8.0f} ({r['median_' + c]:>7.0f})" for c in COLS))
    ratios = {c: max(r[c] for r in rows) / min(r[c] for r in rows) for c in COLS}
    print("max/min over N (minima): " + ", ".join(f"{c} {v:.2f}" for c, v in ratios.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "hash_grid_ops", "rows": rows, "ratio_max_min": ratios}, fh,
                      indent=1)
    return rows


if __name__ == "__main__":
    main()
