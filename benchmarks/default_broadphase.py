"""Which ``broadphase`` should ``pdyn run`` default to: two structures step the same scene in
one process, round robin (``--chunk`` steps of each in turn, ``--rounds`` times), with the
default neighbour lists, timed in CPU seconds of the process (on a shared machine wall time
also measures the neighbours' load). Prints the median per chunk of each and the per-round
ratio A / B (median, min, max).

    python benchmarks/default_broadphase.py --scene drop --chunk 2000 --rounds 9
    python benchmarks/default_broadphase.py --scene gas --chunk 100 --rounds 7
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.simulation import Simulation


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="drop", help="scene name (default: drop)")
    ap.add_argument("--scale", type=float, default=1.0, help="scene scale (default 1)")
    ap.add_argument("--structures", nargs=2, default=["auto", "linked_cells"],
                    metavar=("A", "B"), help="the two broad phases (default: auto linked_cells)")
    ap.add_argument("--warm", type=int, default=100, help="untimed steps first (default 100)")
    ap.add_argument("--chunk", type=int, default=1000, help="steps per turn (default 1000)")
    ap.add_argument("--rounds", type=int, default=7, help="turns of each (default 7)")
    args = ap.parse_args(argv)
    sims = {b: Simulation(SimulationConfig(scene=args.scene, scale=args.scale, steps=1 << 40,
                                           broadphase=b, progress=False, output=OutputConfig()))
            for b in args.structures}
    for sim in sims.values():
        for _ in range(args.warm):
            sim.step()
    cpu = {b: [] for b in sims}
    for _ in range(args.rounds):
        for b, sim in sims.items():
            t0 = time.process_time()
            for _ in range(args.chunk):
                sim.step()
            cpu[b].append(time.process_time() - t0)
    for b, sim in sims.items():
        picked = getattr(sim.broadphase, "chosen", None)
        print(f"{b}{f' -> {picked}' if picked else ''}: {np.median(cpu[b]):.3f} s CPU per "
              f"{args.chunk} steps (median of {args.rounds}); {sim.rebuilds} rebuilds")
    a, b = args.structures
    r = np.array(cpu[a]) / np.array(cpu[b])
    print(f"{a} / {b} per round: median {np.median(r):.3f}, min {r.min():.3f}, "
          f"max {r.max():.3f}")


if __name__ == "__main__":
    main()
