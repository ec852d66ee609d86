"""The dynamic angle of repose of the ``drum`` scene (a first measurement, not a validation).

Runs ``pdyn.scenarios.drum`` at the Froude number asked (default 0.01) and, every
``--every`` steps after ``--skip``, measures the free surface in the drum's cross-section
(y, z): the top of the highest sphere (z + r) in bins of 8 mm along y, a straight line fitted
to the middle 60 % of the bins; the angle is atan(|slope|). Reports each sample, their mean and
standard deviation.

    python benchmarks/drum_angle.py [--froude 0.01] [--steps 30000] [--skip 15000]
                                    [--every 1000] [--json out.json]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import write_json

from pdyn import Simulation, SimulationConfig
from pdyn.bench import format_table
from pdyn.scenarios import drum


def surface_angle(pos: np.ndarray, radius: np.ndarray, big: float = 0.1) -> float:
    """Angle (degrees) of the free surface of the bed in the (y, z) section of a drum of
    radius ``big`` (m) about the x axis."""
    y, top = pos[:, 1], pos[:, 2] + radius
    edges = np.arange(-big, big + 1e-9, 0.008)
    k = np.digitize(y, edges) - 1
    mids, tops = [], []
    for b in range(len(edges) - 1):
        m = k == b
        if m.sum() >= 3:
            mids.append(0.5 * (edges[b] + edges[b + 1]))
            tops.append(top[m].max())
    mids, tops = np.array(mids), np.array(tops)
    w = mids.max() - mids.min()
    keep = (mids > mids.min() + 0.2 * w) & (mids < mids.max() - 0.2 * w)
    return float(np.degrees(np.arctan(abs(np.polyfit(mids[keep], tops[keep], 1)[0]))))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--froude", type=float, default=0.01, help="Fr = Ω² R / g")
    p.add_argument("--steps", type=int, default=30000)
    p.add_argument("--skip", type=int, default=15000, help="steps before the first sample")
    p.add_argument("--every", type=int, default=1000, help="steps between samples")
    p.add_argument("--json", help="write the results to this JSON file")
    args = p.parse_args(argv)
    scene = drum(froude=args.froude)
    sim = Simulation(SimulationConfig(scene="drum", progress=False), scene=scene)
    sim.run(args.skip)
    rows = []
    while sim.step_index < args.steps:
        sim.run(args.every)
        h = sim.store.owned
        rows.append({"step": sim.step_index, "time_s": round(sim.time, 4),
                     "angle_deg": round(surface_angle(sim.store.pos[h], sim.store.radius[h]), 2)})
        print(rows[-1], flush=True)
    a = np.array([r["angle_deg"] for r in rows])
    print(format_table(rows, ["step", "time_s", "angle_deg"]))
    print(f"Froude {args.froude:g}: dynamic angle {a.mean():.1f} ± {a.std():.1f} deg "
          f"({len(a)} samples, t = {rows[0]['time_s']}-{rows[-1]['time_s']} s)")
    write_json(args.json, {"froude": args.froude, "samples": rows,
                           "mean_deg": float(a.mean()), "std_deg": float(a.std())})


if __name__ == "__main__":
    main()
