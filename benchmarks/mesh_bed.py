"""What does a triangle-mesh floor add to the step of a settled bed, against a plane floor?

The settled polydisperse bed of ``vs_lammps.py --scene bed`` (``bed.py``: 80 000 · ``--scale``
spheres, radii 1–2 mm, Hertz, μ = ``--friction``, periodic in x and y, cached after its first
settling) rests on three floors in one process: the box's wall z = 0 (the bed's own), a
configured plane wall z = 0, and a flat mesh of ~``--triangles`` triangles
(``pdyn.mesh.grid_surface``) covering the periodic cell. Each starts from the cached centres
at rest and is warmed up ``--chunk`` steps (numba compiles; lists built); then the three step
in turn, ``--chunks`` chunks of ``--chunk`` steps each, the order reversed every chunk, each
chunk timed by the process's CPU time (``time.process_time``: time other jobs on a shared
machine take from this process is not counted). The table gives the median time per
particle-step and its ratio to the plane wall's (min–max over the chunks of the chunk-by-chunk
ratio), the wall contacts and list rebuilds. One process, one rank.

    python benchmarks/mesh_bed.py [--scale 1] [--triangles 100000] [--friction 0.5]
                                  [--chunks 8] [--chunk 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import print_rows, write_json

import bed as bed_scene
from pdyn.config import BoxConfig
from pdyn.mesh import grid_surface
from pdyn.simulation import Simulation


def floors(p: dict, triangles: int) -> dict:
    """name → (walls, z boundary) of the three floors under a bed of parameters ``p``."""
    w = p["width"]
    q = max(1, int(round(np.sqrt(triangles / 2))))
    v, t = grid_surface(q, 0.5 * w + 2 * p["r_max"])  # a little wider than the cell
    v = v + [0.5 * w, 0.5 * w, 0.0]
    plane = {"type": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0]}
    return {"box wall": ((), "wall"), "plane wall": ([plane], "open"),
            f"mesh, {len(t)} triangles": ([{"type": "mesh", "vertices": v, "triangles": t}],
                                          "open")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--triangles", type=int, default=100_000)
    ap.add_argument("--friction", type=float, default=0.5)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--chunk", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    p = bed_scene.parameters(args.scale)
    bed = bed_scene.settled_bed(p)
    n = len(bed["radii"])
    base = bed_scene.pdyn_config(p, bed["positions"], bed["radii"], bed["top"], args.friction,
                                 10**9, dt=bed["dt"])
    sims = {}
    for name, (walls, z) in floors(p, args.triangles).items():
        box = BoxConfig(lo=base.box.lo, hi=base.box.hi, boundary=("periodic", "periodic", z))
        sims[name] = Simulation(base.with_(box=box, walls=list(walls)))
        sims[name].run(args.chunk)  # warm-up: numba compiles, the lists are built
    times: dict[str, list] = {name: [] for name in sims}
    for c in range(args.chunks):
        for name in (list(sims) if c % 2 == 0 else list(sims)[::-1]):
            t0 = time.process_time()
            sims[name].run(args.chunk)
            times[name].append(time.process_time() - t0)
    ref = times["plane wall"]

    def rows():
        for name, ts in times.items():
            ratios = [a / b for a, b in zip(ts, ref)]
            yield {"floor": name, "spheres": n,
                   "wall contacts": len(sims[name].wall_contacts()["force"]),
                   "ns / particle-step": round(1e9 * statistics.median(ts) / (n * args.chunk), 1),
                   "/ plane wall's": round(statistics.median(ts) / statistics.median(ref), 3),
                   "min–max": f"{min(ratios):.2f}–{max(ratios):.2f}",
                   "rebuilds": sims[name].rebuilds}

    out = print_rows(rows())
    write_json(args.json, {"scale": args.scale, "triangles": args.triangles,
                           "friction": args.friction, "chunks": args.chunks,
                           "chunk": args.chunk, "rows": out})


if __name__ == "__main__":
    main()
