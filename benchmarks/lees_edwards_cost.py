"""The cost of a Lees–Edwards step against a fixed periodic one, on the same sheared state.

The ``shear_cell`` scene (dense frictional spheres, μ = 0.5) is sheared at ``--rate`` until
the images' offset has come round to (within one step's travel of) zero, so its state is also
a fixed periodic box's. From that state — positions and velocities, the shear profile
included — three runs are stepped in turn in one process, each round from the same state:

* **sheared**: the box under Lees–Edwards shear at the rate (images shifted, their velocities
  offset, the lists' rebuild test counting the images' travel);
* **boundary**: the same under Lees–Edwards shear at 10⁻⁹ of the rate: every step does the
  sheared boundary's work (the images' offsets and velocity offsets, their drift in the
  rebuild test, the z faces' extra ghost candidates) while the spheres do what they do in
  the fixed box;
* **fixed**: the same box periodic on every axis, nothing shifted.

"boundary / fixed" is the cost of the sheared boundary itself, on the same contacts and
rebuilds; "sheared / fixed" adds what the flow the shear keeps up costs (the fixed box's
flow decays: fewer contacts and rebuilds as the run goes on). The per-step wall time of each,
its ratio to the fixed run's per round (median and range), the contacts at the end and the
rebuilds are printed and written to ``--json``, which ``benchmarks/performance_tables.py``
turns into a table of docs/performance.md.

    python benchmarks/lees_edwards_cost.py [--scales 1 8] [--rate 1] [--steps 2000]
        [--rounds 9] [--json lees_edwards.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np
from _common import write_json

from pdyn import Simulation, SimulationConfig
from pdyn.scenarios import shear_cell


def sheared_state(scale: float, rate: float, strain: float) -> tuple:
    """The shear cell at ``scale`` sheared at ``rate`` (1/s) for about ``strain``, stopped
    where the images' offset is within one step's travel of 0: (scene, positions,
    velocities) of the spheres in id order."""
    scene = shear_cell(scale=scale, rate=rate)
    sim = Simulation(SimulationConfig(scene="shear_cell", progress=False), scene=scene)
    lx, lz = (float(x) for x in sim.box.length[[0, 2]])
    turns = max(1, round(strain * lz / lx))  # the offset grows by rate L_z t: turns of L_x
    sim.run(int(round(turns * lx / (rate * lz * sim.dt))))
    owned = sim.store.owned
    order = np.argsort(sim.store.gid[owned])
    rows = owned[order]
    pos, vel = sim.store.pos[rows].copy(), sim.store.vel[rows].copy()
    lo, length = sim.box.lo, sim.box.length
    turns_z = np.floor((pos[:, 2] - lo[2]) / length[2])  # into the box (the rebuild wraps)
    vel[:, 0] -= turns_z * rate * length[2]  # a sheared image's velocity offset
    pos = lo + np.mod(pos - lo, length)
    return scene, pos, vel, sim.store.radius[rows].copy()


def timed(scene, steps: int) -> tuple[float, float, int]:
    """(µs per step, mean contacts, rebuilds) of ``steps`` steps of ``scene`` (built first,
    untimed)."""
    sim = Simulation(SimulationConfig(scene="shear_cell", progress=False,
                                      initial_overlap="allow"), scene=scene)
    t0 = time.perf_counter()
    sim.run(steps)
    seconds = time.perf_counter() - t0
    return 1e6 * seconds / steps, float(sim.summary()["contacts"]), sim.rebuilds


def measure(scale: float, rate: float, steps: int, rounds: int, strain: float) -> dict:
    """The sheared and the fixed runs of one scale, ``rounds`` rounds in alternating order
    after one untimed round (compilation)."""
    scene, pos, vel, radii = sheared_state(scale, rate, strain)
    runs = {k: dataclasses.replace(scene, positions=pos, velocities=vel, radii=radii,
                                   shear_profile=False, shear_rate=r)
            for k, r in (("sheared", rate), ("boundary", 1e-9 * rate), ("fixed", 0.0))}
    for s in runs.values():
        timed(s, min(steps, 50))
    times = {k: [] for k in runs}
    contacts = {k: [] for k in runs}
    rebuilds = {k: [] for k in runs}
    for r in range(rounds):
        for k in list(runs)[r % 3:] + list(runs)[:r % 3]:  # each run first in turn
            us, c, b = timed(runs[k], steps)
            times[k].append(us)
            contacts[k].append(c)
            rebuilds[k].append(b)
    out = {"scale": scale, "spheres": len(pos), "rate": rate, "steps": steps, "times": times}
    for k in runs:
        ratios = [a / b for a, b in zip(times[k], times["fixed"])]
        out[k] = {"us": statistics.median(times[k]), "ratio": statistics.median(ratios),
                  "ratio_min": min(ratios), "ratio_max": max(ratios),
                  "contacts": statistics.median(contacts[k]),
                  "rebuilds": statistics.median(rebuilds[k])}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", type=float, nargs="+", default=[1.0, 8.0],
                   help="shear_cell scales (500 spheres each)")
    p.add_argument("--rate", type=float, default=1.0, help="shear rate (1/s)")
    p.add_argument("--strain", type=float, default=1.0,
                   help="the shear before the timed runs (about)")
    p.add_argument("--steps", type=int, default=2000, help="steps per timed run")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--json", help="write the measurements here")
    args = p.parse_args()
    rows = []
    for scale in args.scales:
        row = measure(scale, args.rate, args.steps, args.rounds, args.strain)
        for k in ("sheared", "boundary", "fixed"):
            print(f"{row['spheres']} spheres, {k}: {row[k]}", flush=True)
        rows.append(row)
    write_json(args.json, {"benchmark": "lees_edwards", "args": vars(args), "rows": rows})


if __name__ == "__main__":
    main()
