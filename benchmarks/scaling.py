"""Strong scaling of the block decomposition: one scene (default 2·10⁵ spheres), run on 1, 2, …
ranks under the venv's ``mpiexec``; wall time per step, speed-up, and where the time goes
(seconds per phase, max over ranks, plus owned/ghost counts per rank).

    python benchmarks/scaling.py                         # 1 and 2 ranks, 2e5 spheres
    python benchmarks/scaling.py --ranks 1 2 4 --particles 50000 --steps 30 --json s.json

The scene is a dense elastic gas on a jittered cubic lattice (radii 0.3-0.45 m at spacing
1 m, ~20 % solid fraction, random velocities ~1 m/s) in a walled (or ``--periodic``) box,
generated in a second on every rank (random non-overlapping placement of 2·10⁵ spheres takes
minutes). Each run: set-up, ``--warmup`` steps (numba compiles, first ghost plan), then the
best of ``--repeat`` blocks of ``--steps`` timed steps. The driver starts one ``mpiexec -n N``
per rank count; each worker prints one JSON line from rank 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402

PHASES = ("integrate", "migrate", "ghosts", "broadphase", "neighbours", "contacts")


def lattice_gas(n: int, seed: int = 0, periodic: bool = False):
    """``n`` spheres on a jittered cubic lattice of spacing 1 m (a box sized to fit)."""
    from pdyn.scenarios import Scene

    rng = np.random.default_rng(seed)
    k = int(np.ceil(n ** (1 / 3)))
    idx = np.arange(n)
    cells = np.stack((idx % k, (idx // k) % k, idx // (k * k)), axis=1).astype(float)
    radii = rng.uniform(0.3, 0.45, n)
    jitter = rng.uniform(-1, 1, (n, 3)) * (0.5 - radii)[:, None] * 0.9
    pos = cells + 0.5 + jitter
    L = float(k)
    return Scene(
        name=f"lattice_gas_{n}", box_lo=np.zeros(3), box_hi=np.full(3, L),
        boundary=("periodic" if periodic else "wall",) * 3, positions=pos,
        velocities=rng.normal(0, 1.0, (n, 3)), radii=radii, density=1000.0,
        contact={"youngs_modulus": 1e6, "restitution": 0.9}, steps=100,
        description=f"{n} spheres on a jittered lattice",
    )


def worker(args) -> None:
    from pdyn.config import SimulationConfig
    from pdyn.parallel import get_comm
    from pdyn.simulation import Simulation

    comm = get_comm()
    t0 = time.perf_counter()
    scene = lattice_gas(args.particles, args.seed, args.periodic)
    cfg = SimulationConfig(scene="box", broadphase=args.broadphase, progress=False,
                           gravity=(0.0, 0.0, 0.0))
    sim = Simulation(cfg, comm=comm, scene=scene)
    setup = time.perf_counter() - t0
    sim.run(args.warmup)
    ex = sim.exchange
    best = None
    for _ in range(args.repeat):  # best of ``repeat`` blocks of ``steps`` steps
        sim.timers.clear()
        st0 = ex.stats()
        comm.barrier()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            sim.step()
        comm.barrier()
        wall = comm.allreduce_max(time.perf_counter() - t0)
        st = ex.stats()
        if best is None or wall < best[0]:
            best = (wall, st0, st, dict(sim.timers))
    wall, st0, st, timers = best
    mine = {"owned": st["owned"], "ghosts": st["ghosts"], "timers": timers,
            **{k: st.get(f"{k}_seconds", 0.0) - st0.get(f"{k}_seconds", 0.0)
               for k in ("comm", "sync", "rebuild")}}
    rows = comm.gather(mine, root=0)
    if comm.rank == 0:
        phase_max = {p: max(r["timers"].get(p, 0.0) for r in rows) for p in PHASES}
        phase_mean = {p: float(np.mean([r["timers"].get(p, 0.0) for r in rows]))
                      for p in PHASES}
        owned = [r["owned"] for r in rows]
        out = {
            "ranks": comm.size, "particles": args.particles, "steps": args.steps,
            "setup_s": setup, "wall_s": wall, "s_per_step": wall / args.steps,
            "phase_max_s": phase_max, "phase_mean_s": phase_mean,
            "comm_max_s": max(r["comm"] for r in rows),
            "sync_max_s": max(r["sync"] for r in rows),
            "rebuild_max_s": max(r["rebuild"] for r in rows),
            "owned": owned, "ghosts": [r["ghosts"] for r in rows],
            "imbalance": max(owned) / (sum(owned) / len(owned)),
            "rebuilds": st["rebuilds"] - st0["rebuilds"],
            "blocks": ex.grid.dims.tolist() if hasattr(ex, "grid") else [1, 1, 1],
        }
        print("RESULT " + json.dumps(out), flush=True)


def driver(args) -> None:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    results = []
    for n in args.ranks:
        cmd = [str(mpiexec), "-n", str(n), sys.executable, "-m", "mpi4py", __file__,
               "--worker", "--particles", str(args.particles), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--repeat", str(args.repeat),
               "--broadphase", args.broadphase,
               "--seed", str(args.seed)] + (["--periodic"] if args.periodic else [])
        env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            sys.exit(f"scaling: {n} ranks failed:\n{res.stderr[-3000:]}")
        line = next(x for x in res.stdout.splitlines() if x.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
        print(f"  {n} rank(s): {results[-1]['s_per_step'] * 1e3:.1f} ms/step", flush=True)
    base = results[0]["s_per_step"] * results[0]["ranks"]
    rows = []
    for r in results:
        speedup = base / r["s_per_step"]
        row = {"ranks": r["ranks"], "ms/step": r["s_per_step"] * 1e3, "speedup": speedup,
               "efficiency": speedup / r["ranks"], "imbalance": r["imbalance"],
               "ghosts/rank": int(np.mean(r["ghosts"])), "rebuilds": r["rebuilds"]}
        for p in PHASES:
            row[p] = r["phase_max_s"][p] / r["steps"] * 1e3
        for k in ("sync", "rebuild", "comm"):
            row[k if k != "comm" else "msgs"] = r[f"{k}_max_s"] / r["steps"] * 1e3
        rows.append(row)
    print(f"strong scaling, {args.particles} spheres, best of {args.repeat} x {args.steps} steps,"
          f" {args.broadphase}"
          f" ({'periodic' if args.periodic else 'walled'}); phases in ms/step, max over ranks"
          "; of migrate + ghosts: 'sync' = the per-step allreduce incl. waiting for slower"
          " ranks, 'rebuild' = ghost removal, wrap, migration, plan, ghost creation, 'msgs' ="
          " inside point-to-point messages")
    print(format_table(rows, ["ranks", "ms/step", "speedup", "efficiency", "imbalance",
                              "ghosts/rank", "rebuilds", *PHASES, "sync", "rebuild", "msgs"]))
    write_json(args.json, {"benchmark": "scaling", "args": vars(args), "results": results})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    p.add_argument("--particles", type=int, default=200_000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3, help="best of this many timed blocks")
    p.add_argument("--broadphase", default="linked_cells")
    p.add_argument("--periodic", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write results here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    (worker if args.worker else driver)(args)


if __name__ == "__main__":
    main()
