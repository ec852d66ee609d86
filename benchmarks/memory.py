"""Peak memory per rank of a run: a 10⁶-sphere box (``pdyn run --scene box --scale 500``) on
1, 2, 4 ranks, each minus the baseline of the same run with (almost) no particles.

    python benchmarks/memory.py                         # 1, 2, 4 ranks, 10^6 spheres, 2 steps
    python benchmarks/memory.py --ranks 1 4 --scale 50 --json m.json

Each worker (one ``mpiexec -n N`` per rank count and scene size) sets the run up, advances
``--steps`` steps and reports the peak resident set size of every rank
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the high-water mark of the whole process,
set-up included). The baseline is the same scene at ``--baseline-scale`` (one sphere): the
interpreter, numpy, numba's compiled kernels and MPI. The table gives, per rank count, the
largest rank's peak above the baseline and its ratio to the 1-rank figure (the share of a rank
on N ranks would ideally be 1/N; ghosts and the cells a rank draws beyond its blocks add to
it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402


def worker(args) -> None:
    from pdyn.config import SimulationConfig
    from pdyn.parallel import get_comm
    from pdyn.simulation import Simulation

    comm = get_comm()
    cfg = SimulationConfig(scene=args.scene, scale=args.scale, progress=False)
    sim = Simulation(cfg, comm=comm)
    sim.run(args.steps)
    owned = int(sim.store.owned.size)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    rows = comm.gather((peak, owned, int(sim.store.ghosts.size)), root=0)
    if comm.rank == 0:
        print("RESULT " + json.dumps({"ranks": comm.size, "scale": args.scale,
                                      "peak_bytes": [r[0] for r in rows],
                                      "owned": [r[1] for r in rows],
                                      "ghosts": [r[2] for r in rows]}), flush=True)


def _run(args, ranks: int, scale: float) -> dict:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [str(mpiexec), "-n", str(ranks), sys.executable, "-m", "mpi4py", __file__,
           "--worker", "--scene", args.scene, "--scale", repr(scale), "--steps",
           str(args.steps)]
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        sys.exit(f"memory: {ranks} ranks at scale {scale} failed:\n{res.stderr[-3000:]}")
    line = next(x for x in res.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def driver(args) -> None:
    results = []
    for n in args.ranks:
        base = _run(args, n, args.baseline_scale)
        full = _run(args, n, args.scale)
        results.append({"ranks": n, "baseline": base, "full": full})
        print(f"  {n} rank(s): peak {max(full['peak_bytes']) / 2**20:.0f} MiB, baseline "
              f"{max(base['peak_bytes']) / 2**20:.0f} MiB", flush=True)
    rows = []
    one = None
    for r in results:
        above = [p - b for p, b in zip(r["full"]["peak_bytes"], r["baseline"]["peak_bytes"])]
        top = max(above)
        one = top if one is None else one
        rows.append({"ranks": r["ranks"], "particles/rank": max(r["full"]["owned"]),
                     "ghosts/rank": max(r["full"]["ghosts"]),
                     "peak MiB": max(r["full"]["peak_bytes"]) / 2**20,
                     "baseline MiB": max(r["baseline"]["peak_bytes"]) / 2**20,
                     "above MiB": top / 2**20, "vs 1 rank": top / one})
    n = sum(results[0]["full"]["owned"])
    print(f"peak resident memory per rank (largest rank), {args.scene} scene at scale "
          f"{args.scale} ({n} spheres), {args.steps} steps; baseline: scale "
          f"{args.baseline_scale}")
    print(format_table(rows, ["ranks", "particles/rank", "ghosts/rank", "peak MiB",
                              "baseline MiB", "above MiB", "vs 1 rank"]))
    write_json(args.json, {"benchmark": "memory", "args": vars(args), "results": results})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--scene", default="box")
    p.add_argument("--scale", type=float, default=500.0, help="box: 2000 spheres per unit")
    p.add_argument("--baseline-scale", type=float, default=1e-4)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--json", help="write results here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    (worker if args.worker else driver)(args)


if __name__ == "__main__":
    main()
