"""Scaling of the block decomposition: one scene run on 1, 2, … ranks under the venv's
``mpiexec``; wall time per step, speed-up, where the time goes (seconds per phase, max over
ranks), owned/ghost counts and the point-to-point message volume per rank; and a weak-scaling
model fitted to the measurement that projects the parallel efficiency to 10⁴ ranks (a PNG).

    python benchmarks/scaling.py                         # strong: 1 and 2 ranks, 2e5 spheres
    python benchmarks/scaling.py --ranks 1 2 4 --particles 50000 --steps 30 --json s.json
    python benchmarks/scaling.py --ranks 1 2 4 --weak 25000 --json w.json --plot docs/scaling.png
    python benchmarks/scaling.py --from-json w.json --plot docs/scaling.png   # model only

The scene is a dense elastic gas on a jittered cubic lattice (radii 0.3-0.45 m at spacing
1 m, ~20 % solid fraction, random velocities ~1 m/s) in a walled (or ``--periodic``) box,
generated in a second on every rank (random non-overlapping placement of 2·10⁵ spheres takes
minutes). ``--weak N`` gives every run N spheres per rank. Each run: set-up, ``--warmup``
steps (numba compiles, first ghost plan), then the best of ``--repeat`` blocks of ``--steps``
timed steps. The driver starts one ``mpiexec -n N`` per rank count; each worker prints one
JSON line from rank 0. The model and its assumptions are in :func:`weak_model` (and
``docs/scaling.md``).
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

PHASES = ("integrate", "migrate", "balance", "ghosts", "broadphase", "neighbours", "contacts")


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
            "peers": len(st["neighbours"]),
            **{k: st.get(k, 0) - st0.get(k, 0) for k in ("bytes_sent", "messages_sent")},
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
            "peers": [r["peers"] for r in rows],
            "bytes_per_step": [r["bytes_sent"] / args.steps for r in rows],
            "messages_per_step": [r["messages_sent"] / args.steps for r in rows],
            "imbalance": max(owned) / (sum(owned) / len(owned)),
            "rebuilds": st["rebuilds"] - st0["rebuilds"],
            "blocks": ex.grid.dims.tolist() if hasattr(ex, "grid") else [1, 1, 1],
        }
        print("RESULT " + json.dumps(out), flush=True)


def measure(args) -> list[dict]:
    """One ``mpiexec`` run per rank count; the workers' RESULT lines."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    results = []
    for n in args.ranks:
        particles = args.weak * n if args.weak else args.particles
        cmd = [str(mpiexec), "-n", str(n), sys.executable, "-m", "mpi4py", __file__,
               "--worker", "--particles", str(particles), "--steps", str(args.steps),
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
    return results


def driver(args) -> None:
    if args.from_json:
        with open(args.from_json) as f:
            stored = json.load(f)
        results = stored["results"]
        for k in ("weak", "steps", "repeat", "broadphase", "periodic", "particles"):
            setattr(args, k, stored["args"].get(k, getattr(args, k)))
    else:
        results = measure(args)
    rows = []
    for r in results:
        # strong: speed-up over 1 rank; weak (same particles per rank): efficiency directly
        per_rank = r["particles"] / r["ranks"]
        base = results[0]["s_per_step"] * (per_rank / results[0]["particles"]
                                           if args.weak else results[0]["ranks"])
        speedup = base / r["s_per_step"] * (r["ranks"] if args.weak else 1)
        row = {"ranks": r["ranks"], "ms/step": r["s_per_step"] * 1e3, "speedup": speedup,
               "efficiency": speedup / r["ranks"], "imbalance": r["imbalance"],
               "ghosts/rank": int(np.mean(r["ghosts"])), "rebuilds": r["rebuilds"]}
        for p in PHASES:
            row[p] = r["phase_max_s"][p] / r["steps"] * 1e3
        for k in ("sync", "rebuild", "comm"):
            row[k if k != "comm" else "msgs"] = r[f"{k}_max_s"] / r["steps"] * 1e3
        row["kB/step/rank"] = float(np.mean(r["bytes_per_step"])) / 1e3
        row["msgs/step/rank"] = float(np.mean(r["messages_per_step"]))
        rows.append(row)
    kind = (f"weak scaling, {args.weak} spheres per rank" if args.weak
            else f"strong scaling, {args.particles} spheres")
    print(f"{kind}, best of {args.repeat} x {args.steps} steps,"
          f" {args.broadphase}"
          f" ({'periodic' if args.periodic else 'walled'}); phases in ms/step, max over ranks"
          "; of migrate + ghosts: 'sync' = the per-step allreduce incl. waiting for slower"
          " ranks, 'rebuild' = ghost removal, wrap, migration, plan, ghost creation, 'msgs' ="
          " inside point-to-point messages")
    print(format_table(rows, ["ranks", "ms/step", "speedup", "efficiency", "imbalance",
                              "ghosts/rank", "rebuilds", *PHASES, "sync", "rebuild", "msgs",
                              "kB/step/rank", "msgs/step/rank"]))
    if not args.from_json:
        write_json(args.json, {"benchmark": "scaling", "args": vars(args), "results": results})
    if args.plot:
        plot_model(results, args.plot)


# ------------------------------------------------------------------ weak-scaling model
#: assumptions of the model (stated in docs/scaling.md): per-message latency including
#: mpi4py's Python overhead (s), per-rank bandwidth of a node's network link shared by its
#: cores (B/s), Verlet-skin rebuild interval and balance interval (steps), blocks per rank
ALPHA = 5e-6
BANDWIDTH = 1e9
NEIGHBOURS = 26
BALANCE_EVERY = 100
BLOCKS_PER_RANK = 32
#: bytes per ghost per step (6 float64: position, velocity) and per new ghost at a rebuild
#: (8 float64 + 1 int64) — the widths of the GHOST_UPDATE and GHOST_CREATE selections of a
#: frictionless run's store (pdyn.particles; with friction the spin adds 3 float64 to both)
GHOST_UPDATE_BYTES = 48
GHOST_CREATE_BYTES = 72


def _block_seconds(n_blocks: int) -> float:
    """Measured: one rebalance's replicated work on ``n_blocks`` blocks (the cut along the
    cached curve order, the loads per rank) on this machine."""
    from pdyn.domain import BlockGrid, Box

    k = min(max(int(round(n_blocks ** (1 / 3))), 2), 64)  # measured up to 64³, then linear
    grid = BlockGrid(Box(np.zeros(3), np.ones(3), ("wall",) * 3), (k, k, k))
    ranks = max(grid.n_blocks // BLOCKS_PER_RANK, 2)
    w = np.random.default_rng(0).uniform(0, 10, grid.n_blocks)
    grid.assign(w, ranks)  # numba compiles, the curve order is cached
    t0 = time.perf_counter()
    for _ in range(3):
        grid.assign(w, ranks)
        np.bincount(grid.owner, weights=w)
    return (time.perf_counter() - t0) / 3 / grid.n_blocks * n_blocks


def weak_model(one_rank: dict, ranks, per_rank: float, skin_reach: float = 1.1,
               imbalance: float = 1.05, rebuild_every: float | None = None) -> np.ndarray:
    """Projected weak-scaling efficiency T(1)/T(P) for ``per_rank`` spheres per rank.

    T(1) is measured (``one_rank``: seconds per step, ``per_rank`` spheres, rebuilds). At P
    ranks a rank's subdomain is a cube of ``per_rank`` lattice cells (spacing 1 m) with
    min(``NEIGHBOURS``, P − 1) neighbour ranks k; its ghosts fill a shell ``skin_reach`` deep (r + r_max +
    skin, m): G = n((1 + 2h/ℓ)³ − 1), ℓ = n^(1/3). Per step:
    T(P) = imbalance · T(1)                                   (compute, the slowest rank)
         + k α + G · GHOST_UPDATE_BYTES / BANDWIDTH             (ghost update)
         + 2 ⌈log₂P⌉ α                                         (the step's allreduce)
         + [3 k · 2 α + G · GHOST_CREATE_BYTES / BANDWIDTH] / rebuild interval
         + [2 ⌈log₂P⌉ α + 2 · 8 B · 32 P / BANDWIDTH + replicated O(blocks) work] / 100.
    """
    ranks = np.asarray(ranks, float)
    t1 = one_rank["s_per_step"]
    n = float(per_rank)
    R = rebuild_every or one_rank["steps"] / max(one_rank["rebuilds"], 1)
    edge = n ** (1 / 3)
    ghosts = n * ((1 + 2 * skin_reach / edge) ** 3 - 1)
    logp = np.ceil(np.log2(np.maximum(ranks, 1)))
    nb = BLOCKS_PER_RANK * ranks
    block_s = np.array([_block_seconds(int(b)) for b in nb])
    k = np.minimum(NEIGHBOURS, ranks - 1)
    comm = (k * ALPHA + ghosts * GHOST_UPDATE_BYTES / BANDWIDTH
            + 2 * logp * ALPHA
            + (6 * k * ALPHA + ghosts * GHOST_CREATE_BYTES / BANDWIDTH) / R
            + (2 * logp * ALPHA + 16 * nb / BANDWIDTH + block_s) / BALANCE_EVERY)
    t = np.where(ranks > 1, imbalance * t1 + comm, t1)
    return t1 / t


def plot_model(results: list[dict], path: str) -> None:
    """Efficiency projected to 10⁴ ranks for 10⁴, 10⁵ and 10⁶ spheres per rank (the 1-rank
    time per sphere-step scaled from the measurement), with the measured points."""
    try:
        import matplotlib
    except ImportError:
        sys.exit("scaling: --plot needs matplotlib (pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    one = results[0]
    per_particle = one["s_per_step"] / one["particles"]
    ranks = np.unique(np.round(np.logspace(0, 4, 33)))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    print("projected weak-scaling efficiency (model):")
    last = results[-1]  # the rebuild interval of the largest run (1 rank does not count)
    every = last["steps"] / max(last["rebuilds"], 1)
    for n in (1e4, 1e5, 1e6):
        base = dict(one, s_per_step=per_particle * n)
        eff = weak_model(base, ranks, n, rebuild_every=every)
        ax.semilogx(ranks, eff, label=f"model, {n:.0e} spheres/rank")
        at = {int(p): float(e) for p, e in zip(ranks, eff) if int(p) in (1000, 10000)}
        print(f"  {n:.0e} spheres/rank: " + ", ".join(f"{p} ranks {e:.2f}" for p, e in at.items()))
    measured = [(r["ranks"], results[0]["s_per_step"] / r["s_per_step"]
                 * (r["particles"] / r["ranks"]) / results[0]["particles"]) for r in results]
    ax.semilogx(*zip(*measured), "ko", label="measured on 2 shared cores (scaling.md)")
    ax.set_xlabel("ranks")
    ax.set_ylabel("weak-scaling efficiency T(1)/T(P)")
    ax.set_ylim(0, 1.05)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"pdyn, lattice gas: α = {ALPHA * 1e6:.0f} µs, {BANDWIDTH / 1e9:.0f} GB/s per "
                 f"rank, {NEIGHBOURS} neighbours", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


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
    p.add_argument("--weak", type=int, help="spheres per rank (weak scaling) instead of "
                   "--particles in total")
    p.add_argument("--json", help="write results here")
    p.add_argument("--plot", help="write the weak-scaling model's PNG here")
    p.add_argument("--from-json", help="take the measurement from this JSON (no runs)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    (worker if args.worker else driver)(args)


if __name__ == "__main__":
    main()
