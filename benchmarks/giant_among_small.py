"""One giant among many small spheres: ``find_contacts`` with its default (``auto``) against
``find_contacts(..., method="linked_cells")`` on the same positions, in the same run.

The scene is Koch's ``very_polydisperse`` ([Koch2020] Sec. 4.1.8, Table 7; ``pdyn scenes``):
one sphere spanning about half the box among small equal ones (40 000 spheres at scale 1; the
box grows with the scale, so the density stays the same). A dense grid sizes its cells by the
largest diameter, so linked cells puts nearly everything into one cell and tests ~N²/2 pairs.
The default takes the giant apart (``auto.py``: it is tested against every sphere, the others
go into the index sort their statistics pick, cells sized by their own diameter); the hierarchy
of grids (``hash_grid``, one grid per size class, the default's choice before) is timed too.
All test pairs while they emit them (no candidate list is materialised, so linked cells runs
at any N the O(N²) time allows). The ratio grows with N.

Each round calls each once, rotating which goes first (a burst of load hits all alike), after
one untimed warm-up call each; times are CPU seconds of the process. Prints per scale the
median ms of each, the pairs each handed to the exact test, and the per-round ratios
linked_cells / default (median, min, max) and hash_grid / default (median).

    python benchmarks/giant_among_small.py                      # scales 0.25 ... 4, 3 rounds
    python benchmarks/giant_among_small.py --scales 1 2 --rounds 5 --json giant.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_rows, write_json  # noqa: E402

from pdyn.broadphase import canonical_pairs, make_broadphase  # noqa: E402
from pdyn.scenarios import make_scene  # noqa: E402

#: (label, structure, parameters) compared; the first is what ``find_contacts`` uses by default
METHODS = [("default", "auto", {"usage": "once"}), ("linked_cells", "linked_cells", {}),
           ("hash_grid", "hash_grid", {})]


def call(pos, rad, name, params):
    """``find_contacts(pos, rad, name, **params)``; returns (CPU s, pairs, pairs tested,
    structure auto chose)."""
    t0 = time.process_time()
    bp = make_broadphase(name, **params).build(pos, rad)
    pairs = canonical_pairs(bp.contacts())
    dt = time.process_time() - t0
    return dt, pairs, bp.stats()["candidates"], getattr(bp, "chosen", None)


def measure(scale: float, rounds: int) -> dict:
    """Both methods on ``very_polydisperse`` at ``scale``: the row of the table."""
    sc = make_scene("very_polydisperse", scale=scale)
    times = {label: [] for label, _, _ in METHODS}
    tested, answers, chosen = {}, {}, None
    for label, name, params in METHODS:  # warm-up (compiles at the first scale)
        _, answers[label], tested[label], c = call(sc.positions, sc.radii, name, params)
        chosen = chosen or c
    for r in range(rounds):
        for label, name, params in METHODS[r % len(METHODS):] + METHODS[: r % len(METHODS)]:
            times[label].append(call(sc.positions, sc.radii, name, params)[0])
    ratio = np.array(times["linked_cells"]) / np.array(times["default"])
    a = answers["default"]
    return {"scale": scale, "particles": len(sc), "giant_radius": float(sc.radii.max()),
            "chosen": chosen, **{f"{label}_ms": 1e3 * float(np.median(times[label]))
                                 for label, _, _ in METHODS},
            **{f"{label}_tested": tested[label] for label, _, _ in METHODS},
            "contacts": int(a.shape[0]),
            "same_pairs": all(np.array_equal(a, b) for b in answers.values()),
            "ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()),
            "ratio_max": float(ratio.max()),
            "hash_grid_ratio": float(np.median(np.array(times["hash_grid"])
                                               / np.array(times["default"])))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0, 4.0],
                    help="scene scales (1: Koch's 40 000 spheres; default 0.25 0.5 1 2 4)")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls of each (default 3)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    columns = ["particles", "chosen", "default_ms", "linked_cells_ms", "hash_grid_ms",
               "default_tested", "linked_cells_tested", "same_pairs", "ratio", "ratio_min",
               "ratio_max", "hash_grid_ratio"]
    rows = print_rows((measure(s, args.rounds) for s in args.scales), columns)
    write_json(args.json, {"rounds": args.rounds, "rows": rows})


if __name__ == "__main__":
    main()
