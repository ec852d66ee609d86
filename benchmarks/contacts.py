"""How fast is ``pdyn.find_contacts`` against what a Python user would reach for?

Times ``find_contacts`` with its default (``auto``), ``index_sort``, ``linked_cells`` and
``hash_grid``, ``brute`` (small N only) and scipy's ``cKDTree.query_pairs`` (radius = largest diameter, then the exact
|x_i - x_j| <= r_i + r_j filter, then sorted like ours) on the *same* positions: monodisperse
spheres at solid fraction ~0.3, N = 1e4, 1e5, 1e6. Best of ``--repeat`` after a warm-up;
ratios are measured in the same run (the machine is shared and noisy).

    python benchmarks/contacts.py [--sizes 10000 100000 1000000] [--json out.json]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best_time, write_json

from pdyn import find_contacts
from pdyn.bench import format_table
from pdyn.bench.peers import kdtree
from pdyn.bench.report import uniform_spheres

BRUTE_MAX = 20_000


def kdtree_contacts(pos, rad):
    """scipy's ``cKDTree.query_pairs`` (r = largest diameter) + exact filter, sorted."""
    return kdtree(pos, rad)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--solid-fraction", type=float, default=0.3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    methods = ["auto", "index_sort", "linked_cells", "hash_grid"]
    rows = []
    for n in args.sizes:
        pos, rad = uniform_spheres(n, args.solid_fraction)
        t_kd, ref = best_time(lambda: kdtree_contacts(pos, rad), args.repeat)
        row = {"N": n, "contacts": int(ref.shape[0]), "cKDTree_s": t_kd}
        for m in methods + (["brute"] if n <= BRUTE_MAX else []):
            # the default as a user calls it; the others by name
            call = ((lambda: find_contacts(pos, rad)) if m == "auto"
                    else (lambda: find_contacts(pos, rad, method=m)))
            t, got = best_time(call, args.repeat)
            assert np.array_equal(got, ref), f"{m} disagrees with cKDTree at N={n}"
            row[f"{m}_s"] = t
            row[f"cKDTree/{m}"] = t_kd / t
        rows.append(row)
        print(f"N={n}: done", flush=True)
    cols = ["N", "contacts", "cKDTree_s"] + [c for m in methods + ["brute"]
                                             for c in (f"{m}_s", f"cKDTree/{m}")]
    print(format_table(rows, cols))
    write_json(args.json, {"benchmark": "contacts", "rows": rows})


if __name__ == "__main__":
    main()
