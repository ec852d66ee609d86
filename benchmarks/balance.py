"""Dynamic load balancing on a settling scene: how even the ranks' particle counts stay, and
what balancing costs, for each block order (Hilbert, Morton), block count and balancing on/off.

    python benchmarks/balance.py                          # drop scene x4, 4 ranks, 6000 steps
    python benchmarks/balance.py --ranks 2 --steps 2000 --per-rank 4 32 --json b.json
    python benchmarks/balance.py --surface        # curve geometry only: cut faces, neighbours

Each variant is one ``mpiexec -n RANKS`` run of the ``drop`` scene (spheres falling onto a
floor: the load gathers at the bottom of the box). Rank 0 prints one JSON line: the final
owned max/mean, its time average over the steps, the number of rebalances, ghosts and
neighbour ranks per rank (the communication a block order causes), and the share of the run
spent in the ``balance`` phase (max over ranks). Imbalances do not depend on timing, so they
can be measured with more ranks than cores; the times are then only indicative.

``--surface`` compares the curves without running anything: a cubic box, the default grid for
2 … 1024 ranks, equal weights; it counts the block faces between different ranks (the ghost
layer grows with them) and the neighbour ranks per rank (messages per step).
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


def worker(args) -> None:
    from pdyn.config import SimulationConfig
    from pdyn.domain import Box, default_block_dims
    from pdyn.parallel import get_comm
    from pdyn.scenarios import make_scene
    from pdyn.simulation import Simulation

    comm = get_comm()
    scene = make_scene("drop", scale=args.scale)
    box = Box(scene.box_lo, scene.box_hi, scene.boundary)
    dims = default_block_dims(box, comm.size, per_rank=args.per_rank[0],
                              n_particles=len(scene))
    cfg = SimulationConfig(scene="drop", scale=args.scale, progress=False, blocks=dims,
                           balance_every=args.every, balance_curve=args.curve)
    sim = Simulation(cfg, comm=comm, scene=scene)
    comm.barrier()
    t0 = time.perf_counter()
    sim.run(args.steps)
    wall = comm.allreduce_max(time.perf_counter() - t0)
    st = sim.exchange.stats()
    rows = comm.gather((st["owned"], st["ghosts"], len(st["neighbours"]),
                        sim.timers.get("balance", 0.0)), root=0)
    if comm.rank == 0:
        owned = np.array([r[0] for r in rows], float)
        print("RESULT " + json.dumps({
            "curve": args.curve, "per_rank": args.per_rank[0], "every": args.every,
            "blocks": list(dims), "n_blocks": int(np.prod(dims)), "ranks": comm.size,
            "imbalance": float(owned.max() / owned.mean()),
            "mean_imbalance": sim.balancer.mean_imbalance,
            "rebalances": sim.balancer.rebalances,
            "ghosts_mean": float(np.mean([r[1] for r in rows])),
            "peers_mean": float(np.mean([r[2] for r in rows])),
            "balance_share": max(r[3] for r in rows) / wall, "wall_s": wall}), flush=True)


def driver(args) -> None:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")  # ranks may oversubscribe the cores
    variants = [(curve, k, args.every) for k in args.per_rank for curve in args.curves]
    variants += [("hilbert", k, 0) for k in args.per_rank]  # balancing off
    results = []
    for curve, k, every in variants:
        cmd = [str(mpiexec), "-n", str(args.ranks), sys.executable, "-m", "mpi4py", __file__,
               "--worker", "--curve", curve, "--per-rank", str(k), "--every", str(every),
               "--scale", str(args.scale), "--steps", str(args.steps)]
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            sys.exit(f"balance: {curve} {k} failed:\n{res.stderr[-3000:]}")
        line = next(x for x in res.stdout.splitlines() if x.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
        r = results[-1]
        print(f"  {curve} {k}/rank every {every}: imbalance {r['imbalance']:.3f}, "
              f"time-averaged {r['mean_imbalance']:.3f}", flush=True)
    rows = [{"curve": r["curve"] if r["every"] else "off", "blocks/rank": r["per_rank"],
             "blocks": "x".join(map(str, r["blocks"])), "final": r["imbalance"],
             "time-avg": r["mean_imbalance"], "rebalances": r["rebalances"],
             "ghosts/rank": int(r["ghosts_mean"]), "peers/rank": r["peers_mean"],
             "balance %": 100 * r["balance_share"], "wall s": r["wall_s"]} for r in results]
    print(f"drop scene x{args.scale}, {args.ranks} ranks, {args.steps} steps; owned max/mean at "
          "the end and averaged over the steps")
    print(format_table(rows, list(rows[0])))
    write_json(args.json, {"benchmark": "balance", "args": vars(args), "results": results})


def surface(args) -> None:
    from pdyn.domain import CURVES, BlockGrid, Box, default_block_dims

    box = Box(np.zeros(3), np.full(3, 10.0), ("wall",) * 3)
    rows = []
    for ranks in (2, 4, 8, 16, 64, 256, 1024):
        grid = BlockGrid(box, default_block_dims(box, ranks, n_particles=10**9))
        row = {"ranks": ranks, "blocks": "x".join(map(str, grid.dims.tolist()))}
        for curve in CURVES:
            owner = grid.assign(np.ones(grid.n_blocks), ranks, curve=curve)
            cube = owner.reshape(grid.dims[::-1].tolist())
            row[f"{curve} faces"] = sum(int((np.diff(cube, axis=a) != 0).sum())
                                        for a in range(3))
            row[f"{curve} peers"] = float(np.mean(
                [len(grid.neighbour_ranks(r, 1e-3, ranks)) for r in range(ranks)]))
        rows.append(row)
    print("block faces between ranks and neighbour ranks per rank (equal weights, cubic box)")
    print(format_table(rows, list(rows[0])))
    write_json(args.json, {"benchmark": "balance-surface", "results": rows})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--scale", type=float, default=4.0)
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--per-rank", type=int, nargs="+", default=[4, 8, 32, 64],
                   help="blocks per rank of the grid (pdyn.domain.default_block_dims)")
    p.add_argument("--curves", nargs="+", default=["hilbert", "morton"])
    p.add_argument("--every", type=int, default=100, help="balance_every (steps)")
    p.add_argument("--curve", default="hilbert", help=argparse.SUPPRESS)
    p.add_argument("--surface", action="store_true", help="curve geometry only (no runs)")
    p.add_argument("--json", help="write results here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    (worker if args.worker else surface if args.surface else driver)(args)


if __name__ == "__main__":
    main()
