"""Motion per step against the choice between ``index_sort`` and ``hash_grid``: where ``auto``'s
rule 2 draws ``MOTION_MAX`` (``pdyn/broadphase/auto.py``).

A dense scene of equal spheres, simulated without neighbour lists (skin 0, the structure finds
the contacts at every step): the ``gas`` scene (97 336 spheres at scale 1, solid fraction 0.3,
few contacts), ``packed`` (the gas's lattice with spacing 0.998 diameters: solid fraction
0.53, ~6 contacts per sphere) and Schornbaum's scene (10⁵ objects at scale 10, ~2 overlaps
each, no forces; [Schornbaum2009] Sec. 4), each with its velocities multiplied by the factors
given, so the median displacement per step grows from ~0.15 % (the gas as it is) to ~10 % of
a diameter (Schornbaum's 20 % motion). The hash grid's incremental update moves only the
objects that changed cell and it hands only touching pairs to the contact kernel; the index
sort re-sorts every particle and hands all its candidates on ([Schornbaum2009] Sec. 4.3,
[Ihmsen2011]).

Each factor runs ``index_sort``, ``hash_grid`` and ``auto`` step by step in turn
(``pdyn.bench.measure.simulations``, CPU ms per step, median over the steps) and prints
the median motion per step in diameters, the times, hash_grid / index_sort, and what
``auto`` ran at the end.

    python benchmarks/auto_motion.py                  # gas, packed (scale 1), Schornbaum (10)
    python benchmarks/auto_motion.py --scenes gas --factors 1 10 20 30 --steps 20
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_rows, write_json  # noqa: E402

from pdyn.bench.measure import simulations  # noqa: E402
from pdyn.scenarios import make_scene  # noqa: E402

#: scene -> (scale, velocity factors)
SCENES = {"gas": (1.0, [1, 3, 10, 15, 20, 30]), "packed": (1.0, [1, 3, 10, 15, 20, 30]),
          "schornbaum": (10.0, [0.025, 0.05, 0.1, 0.25, 0.5, 1.0])}
STRUCTURES = ["index_sort", "hash_grid", "auto"]


def scene_of(name: str, scale: float):
    """The scene ``name`` with every particle drawn; ``packed``: the gas with its lattice
    shrunk to a spacing of 0.998 diameters (neighbours overlap by 0.2 %)."""
    if name != "packed":
        return make_scene(name, scale=scale).materialised()
    gas = make_scene("gas", scale=scale).materialised()
    a = np.cbrt(np.pi / (6.0 * 0.3))  # the gas's lattice spacing
    return replace(gas, positions=gas.positions * (0.998 / a), box_hi=gas.box_hi * (0.998 / a))


def measure(scene: str, scale: float, factor: float, steps: int) -> dict:
    """One row: the scene with its velocities times ``factor``, each structure ``steps``
    steps."""
    base = scene_of(scene, scale)
    sc = replace(base, velocities=base.velocities * factor)
    move = np.linalg.norm(sc.velocities, axis=1) * sc.dt / (2.0 * sc.radii)
    rows = {r["structure"]: r for r in simulations(sc, STRUCTURES, steps,
                                                   {"initial_overlap": "allow"}, steps)}
    ms = {k: rows[k].get("total_ms") for k in STRUCTURES}
    return {"scene": scene, "particles": len(sc), "factor": factor,
            "motion": float(np.median(move)), **{f"{k}_ms": v for k, v in ms.items()},
            "hash/index": ms["hash_grid"] / ms["index_sort"],
            "auto ran": rows["auto"].get("chosen"),
            "same": all(r.get("exact") for r in rows.values())}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(SCENES),
                    help="scenes (default: gas packed schornbaum)")
    ap.add_argument("--factors", type=float, nargs="+",
                    help="velocity factors (default per scene: see SCENES)")
    ap.add_argument("--steps", type=int, default=10, help="steps per structure (default 10)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = print_rows(measure(scene, SCENES[scene][0], f, args.steps) for scene in args.scenes
                      for f in args.factors or SCENES[scene][1])
    write_json(args.json, {"steps": args.steps, "rows": rows})


if __name__ == "__main__":
    main()
