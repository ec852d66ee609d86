"""What does a triangle-mesh wall cost in the step, against a plane?

The same spheres (a square layer of ``--n`` spheres, r = 5 mm, 2.5 r apart so that they touch
only the floor, sliding at ~5 cm/s with friction μ = 0.3, gravity −z) rest on a floor that is
the plane z = 0, the same plane twice (two coincident planes: two wall contacts a sphere), a
flat mesh of 2 triangles, or a flat mesh of ~``--triangles`` triangles
(``pdyn.mesh.grid_surface``). Floors take turns (``--repeat`` rounds after a warm-up round;
medians reported), timed by the process's CPU time (``time.process_time``: what other jobs
of a shared machine take is not counted; the list phase per rebuild is the step's own wall
timer):

* **contact pass** (``Simulation._forces``, repeated ``--passes`` times on one state): the
  cost of a plane contact is the two-plane pass minus the one-plane pass (per sphere on the
  floor); that of a mesh contact the mesh pass minus the one-plane pass plus a plane
  contact's cost;
* **step** (``Simulation.run(--steps)``, list rebuilds included as they come): time per step,
  and the neighbour-list phase (with the mesh's grid queries) per rebuild.

One process, one rank.

    python benchmarks/mesh_cost.py [--n 22500] [--triangles 100000] [--steps 200]
                                   [--passes 20] [--repeat 3] [--layers 1] [--turning W]
                                   [--json out.json]

``--layers K``: the spheres in K stacked layers of touching spheres (2 r apart in each layer,
each on the one below), so that the step also does the sphere contacts; the floor is the
bottom layer's. ``--turning W``: one more floor, the fine mesh turning at W rad/s about the
z axis (a turntable: the same contacts; the contacts go through the mesh's frame and the
lists are rebuilt as it turns).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import print_rows, write_json

from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.mesh import grid_surface
from pdyn.simulation import Simulation

R, E, RHO, G = 0.005, 1e6, 2500.0, 9.81


def spacing(layers: int) -> float:
    """Distance (m) between neighbouring centres of a layer: 2.5 r apart in one layer, touching
    (2 r less 10⁻⁴ r) in a stack of ``layers``."""
    return 2.5 * R if layers == 1 else (2.0 - 1e-4) * R


def scene(n: int, floor: list, layers: int = 1) -> SimulationConfig:
    """``n`` spheres on ``floor`` (wall tables): one layer, or ``layers`` stacked layers of
    touching spheres (each sphere on the one below; the bottom layer on the floor)."""
    per = int(np.ceil(n / layers))
    side = int(np.ceil(np.sqrt(per)))
    a = spacing(layers)
    s = (np.arange(side) - (side - 1) / 2) * a
    x, y = np.meshgrid(s, s)
    m = RHO * 4 / 3 * np.pi * R**3
    z = R - m * G / (E * R) + a * np.arange(layers)
    pos = np.concatenate([np.column_stack((x.ravel(), y.ravel(), np.full(side * side, h)))[:per]
                          for h in z])[:n]
    vel = np.random.default_rng(1).normal(0.0, 0.05, (n, 3)) * [1, 1, 0]
    half = 0.5 * a * side + 2 * R
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=np.full(n, R),
                                  density=RHO),
        box=BoxConfig(lo=(-half, -half, -0.02), hi=(half, half, 0.05 + a * layers),
                      boundary=("open", "open", "open")),
        contact=ContactConfig(youngs_modulus=E, restitution=0.5, friction=0.3),
        walls=floor,
        gravity=(0.0, 0.0, -G), progress=False, reorder_every=0)


def mesh_floor(half: float, triangles: int, turning: float = 0.0) -> dict:
    """A flat mesh of about ``triangles`` triangles over [−half, half]², turning at
    ``turning`` rad/s about the z axis."""
    q = max(1, int(round(np.sqrt(triangles / 2))))
    v, t = grid_surface(q, half)
    spin = {"angular_velocity": turning, "axis": [0, 0, 1]} if turning else {}
    return {"type": "mesh", "vertices": v, "triangles": t, **spin}


def pass_time(sim, passes: int) -> float:
    """Seconds of one contact pass on the current state (``passes`` in a row)."""
    t0 = time.process_time()
    for _ in range(passes):
        sim._forces()
    return (time.process_time() - t0) / passes


def step_time(sim, steps: int) -> tuple[float, float, int]:
    """Seconds per step over ``steps`` steps, list seconds per rebuild, rebuilds."""
    lists, builds = sim.timers.get("neighbours", 0.0), sim.rebuilds
    t0 = time.process_time()
    sim.run(steps)
    cpu = time.process_time() - t0
    n = sim.rebuilds - builds
    return cpu / steps, (sim.timers.get("neighbours", 0.0) - lists) / max(n, 1), n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=22_500)
    ap.add_argument("--triangles", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--turning", type=float, default=0.0)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    side = int(np.ceil(np.sqrt(np.ceil(args.n / args.layers))))
    half = 0.5 * spacing(args.layers) * side + R
    plane = {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}
    fine = mesh_floor(half, args.triangles)
    floors = {"plane": [plane], "two planes": [plane, plane], "mesh, 2 triangles":
              [mesh_floor(half, 2)], f"mesh, {len(fine['triangles'])} triangles": [fine]}
    if args.turning:
        floors[f"mesh, {len(fine['triangles'])} triangles, turning"] = [
            mesh_floor(half, args.triangles, args.turning)]
    sims = {name: Simulation(scene(args.n, f, args.layers)) for name, f in floors.items()}
    passes: dict[str, list] = {name: [] for name in sims}
    steps: dict[str, list] = {name: [] for name in sims if name != "two planes"}
    for r in range(args.repeat + 1):  # round 0 warms up (compiles)
        for name, sim in sims.items():
            p = pass_time(sim, args.passes)
            s = step_time(sim, args.steps) if name in steps else None
            if r:
                passes[name].append(p)
                if s:
                    steps[name].append(s)
    med = {k: statistics.median(v) for k, v in passes.items()}
    bottom = min(args.n, int(np.ceil(args.n / args.layers)))  # the spheres on the floor
    per_plane = (med["two planes"] - med["plane"]) / bottom
    step_plane = statistics.median(s[0] for s in steps["plane"])

    def rows():
        for name in steps:
            contact = per_plane + (med[name] - med["plane"]) / bottom
            step = statistics.median(s[0] for s in steps[name])
            yield {"floor": name, "spheres": args.n,
                   "wall contacts": len(sims[name].wall_contacts()["force"]),
                   "ns / wall contact": round(1e9 * contact, 1),
                   "/ plane's": round(contact / per_plane, 2),
                   "step ms": round(1e3 * step, 2),
                   "step / plane's": round(step / step_plane, 3),
                   "rebuilds": sum(s[2] for s in steps[name]),
                   "ms / rebuild": round(1e3 * statistics.median(s[1] for s in steps[name]), 1)}

    out = print_rows(rows())
    write_json(args.json, {"n": args.n, "layers": args.layers, "steps": args.steps,
                           "passes": args.passes, "turning": args.turning,
                           "repeat": args.repeat, "rows": out})


if __name__ == "__main__":
    main()
