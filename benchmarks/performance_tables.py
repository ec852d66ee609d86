"""Write ``docs/performance.md`` from the JSON files of benchmark runs: one table per run,
headed by the run's exact command and date (both recorded in the JSON by ``_common``).

    python benchmarks/vs_lammps.py --friction 0 0.5 --rounds 3 --json gas03.json
    python benchmarks/vs_lammps.py --solid-fraction 0.5 --friction 0 0.5 --rounds 3 \\
        --json gas05.json
    python benchmarks/vs_lammps.py --scene bed --friction 0 0.5 --rounds 3 --json bed.json
    python benchmarks/vs_lammps.py --scene bed --scale 0.25 --cohesion jkr --bond 1 \\
        --rounds 3 --json bed_jkr.json
    python benchmarks/vs_lammps.py --scene chute --damping tangent mass_velocity --rounds 5 \\
        --ranks 1 --json chute.json
    python benchmarks/vs_lammps.py --solid-fraction 0.5 --friction 0.5 --damping tangent \\
        mass_velocity --rounds 3 --json gas05_legacy.json
    python benchmarks/vs_lammps.py --scene bed --scale 0.25 --friction 0.5 --damping tangent \\
        viscoelastic --rounds 3 --json bed_legacy.json
    python benchmarks/memory.py --scene gas --solid-fraction 0.5 --friction 0 0.5 \\
        --codes pdyn lammps --ranks 1 --scale 1 --steps 100 --json memory.json
    python benchmarks/lees_edwards_cost.py --json lees_edwards.json
    python benchmarks/performance_tables.py gas03.json gas05.json bed.json bed_jkr.json \\
        chute.json gas05_legacy.json bed_legacy.json memory.json lees_edwards.json

Tables: ``vs_lammps.py`` runs (the gas by solid fraction, then the bed) give, per rank count
and μ, both codes' median ns per particle-step, pdyn / LAMMPS (median and range of the
rounds' ratios), each code's time with μ over its frictionless time in the same round, and the
speed-up from 1 rank; runs of several pdyn models (``--damping``) a row per model, with the
LAMMPS style it is compared with, pdyn's time over its default model's in the same round and,
on the chute, both codes' contacts per sphere after the timed steps; ``memory.py`` runs give each code's peak resident memory above its
baseline, per sphere; a ``lees_edwards_cost.py`` run a sheared cell's step against a fixed
periodic one's. The JSON files are kept next to the page (``docs/performance/``) so it
can be rewritten without running anything (``--render-only``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = """# Performance

pdyn against LAMMPS on the same scenes, same machine, same runs, and a feature's step against
the same step without it. Every table below is written
by `python benchmarks/performance_tables.py` from the JSON its command wrote (kept in
[`performance/`](performance/)); do not edit them by hand — rerun the command and the script.
Times are wall clock of the slowest rank, medians over the rounds; ratios are per round, as the
machine is shared and its speed drifts between runs minutes apart. "CPU pdyn / LAMMPS" is the
same ratio of CPU seconds (slowest rank): on a busy machine a 1-rank run's wall time counts the
time it waited for a core, its CPU time does not (a rank waiting in MPI spins: CPU time is
wall time there).
"""


def _f(x, fmt: str = ".2f") -> str:
    """``x`` formatted, or a dash where the run has no such number."""
    return "–" if x is None else format(x, fmt)


def _when(d: dict) -> str:
    """The day of the run (the JSON keeps its start and end)."""
    return d["started"].split("T")[0]


def _head(d: dict, title: str, what: str) -> list[str]:
    load = d.get("load_average")
    busy = (f"; load average {load['start'][0]:.1f} at the start, {load['end'][0]:.1f} at "
            "the end" if load else "")
    return [f"## {title}", "", what, "", "```", d["command"], "```", "",
            f"Run {_when(d)} on {d.get('cpu', '?')} ({d.get('cores', '?')} cores, shared"
            f"{busy}), {d['machine']}.", ""]


def vs_lammps_table(d: dict) -> list[str]:
    a = d["args"]
    steps = a["steps"]
    if d.get("scene") == "chute":
        return chute_table(d)
    if d.get("scene", "gas") == "bed" and a.get("cohesion", "none") == "jkr":
        title = f"The settled bed with JKR cohesion (Bo = {a['bond']:g})"
        what = (f"ns per particle-step of {steps} steps of the settled bed (scale "
                f"{a['scale']:g}: radii uniform in [1, 2] mm, Hertz, periodic in x and y, a "
                "floor, gravity; `benchmarks/bed.py`) from rest with JKR adhesion of work "
                f"w = {d['work_of_adhesion']:.4g} J/m² (pdyn `cohesion = \"jkr\"`, LAMMPS "
                "`pair granular` normal `jkr` with γ = w/2) and LAMMPS' `viscoelastic` "
                "damping in both codes (`benchmarks/vs_lammps.py`: the mapping), the same "
                "positions in both codes; μ is the Coulomb coefficient of the timed run.")
    elif d.get("scene", "gas") == "bed":
        title = "The settled polydisperse bed"
        what = (f"ns per particle-step of {steps} steps of the settled bed (radii uniform in "
                "[1, 2] mm, Hertz, e = 0.5, periodic in x and y, a floor, gravity; "
                "`benchmarks/bed.py`) from rest, the same positions in both codes; μ is the "
                "Coulomb coefficient of the timed run.")
        if _models(d):
            title += ", LAMMPS' legacy model"
            what = (f"ns per particle-step of {steps} steps of the settled bed (scale "
                    f"{a['scale']:g}: radii uniform in [1, 2] mm, Hertz, periodic in x and y, a "
                    "floor, gravity; `benchmarks/bed.py`) from rest, the same positions in both "
                    "codes, with pdyn's default model (e = 0.5) against LAMMPS' `pair granular` "
                    "with the same law, and with LAMMPS' legacy model (pdyn's `viscoelastic` "
                    "damping of the same dashpot at the bed's mean overlap, projected history) "
                    "against `gran/hertz/history`, the same equations "
                    "(`benchmarks/vs_lammps.py`: the mapping).")
    else:
        title = f"The periodic gas at solid fraction {a['solid_fraction']:g}"
        spheres = f"{d['rows'][0]['particles']:,}".replace(",", " ")
        what = (f"ns per particle-step of {steps} steps of the periodic gas ({spheres} spheres "
                f"d = 1 m at solid fraction {a['solid_fraction']:g}, "
                f"{', '.join(law.capitalize() for law in a['law'])} contacts, no damping), the same positions and velocities in both codes.")
        if _models(d):
            title += ", LAMMPS' legacy model"
            what += (" pdyn's default model and LAMMPS' legacy one (`mass_velocity` damping of "
                     "coefficient 0, projected history: `gran/hooke/history`'s equations) "
                     "against `gran/hooke/history`.")
    out = _head(d, title, what)
    if _models(d):
        return out + _model_rows(d["rows"])
    out += ["| ranks | μ | spheres | pdyn ns | LAMMPS ns | pdyn / LAMMPS (range) | pdyn μ / μ 0 "
            "| LAMMPS μ / μ 0 | pdyn speed-up | LAMMPS speed-up |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        ratio = (f"**{r['ratio']:.2f}** ({r['ratio_min']:.2f}–{r['ratio_max']:.2f})"
                 if "ratio" in r else "–")
        out.append(f"| {r['ranks']} | {r['friction']:g} | {r['particles']} | "
                   f"{r['pdyn_ns']:.1f} | {_f(r.get('lammps_ns'), '.1f')} | {ratio} | "
                   f"{_f(r.get('vs_mu0'))} | {_f(r.get('lammps_vs_mu0'))} | "
                   f"{_f(r.get('pdyn_speedup'))} | {_f(r.get('lammps_speedup'))} |")
    return out + [""]


def _models(d: dict) -> bool:
    """Whether the run timed pdyn models other than the default (``--damping``)."""
    return any(r.get("damping", "tangent") != "tangent" for r in d["rows"])


def _model_rows(rows: list[dict], contacts: bool = False) -> list[str]:
    """The rows of a run of several pdyn models: one per rank count, μ and model."""
    head = ("| ranks | μ | pdyn model | spheres | pdyn ns | LAMMPS style | LAMMPS ns | "
            "pdyn / LAMMPS (range) | CPU pdyn / LAMMPS | pdyn / default model |")
    out = [head + (" contacts per sphere: pdyn, LAMMPS |" if contacts else ""),
           "|---" * (11 if contacts else 10) + "|"]
    for r in rows:
        ratio = (f"**{r['ratio']:.2f}** ({r['ratio_min']:.2f}–{r['ratio_max']:.2f})"
                 if "ratio" in r else "–")
        line = (f"| {r['ranks']} | {r['friction']:g} | `{r['damping']}` | {r['particles']} | "
                f"{r['pdyn_ns']:.1f} | `{r.get('lammps_style', '–')}` | "
                f"{_f(r.get('lammps_ns'), '.1f')} | {ratio} | {_f(r.get('cpu_ratio'))} | "
                f"{_f(r.get('vs_tangent'))} |")
        if contacts:
            line += (f" {_f(r.get('contacts_pdyn'), '.3f')}, "
                     f"{_f(r.get('contacts_lammps'), '.3f')} |")
        out.append(line)
    return out + [""]


def chute_table(d: dict) -> list[str]:
    a, flow = d["args"], d["flow"]
    what = (f"ns per particle-step of {a['steps']} steps of the chute (`chute` scene: "
            f"{d['rows'][0]['particles']} spheres d = 1, 70 of them a fixed rough base, linear "
            "k = 2·10⁴ mg/d, e = 0.88, μ = 0.5, 23°) flowing: the state after "
            f"{a['flow_time']:g} √(d/g) from rest in pdyn (`benchmarks/chute_flow.py`, cached; "
            f"⟨v_x⟩ = {flow['vx']:.2f} √(gd), {flow['contacts_per_sphere']:.2f} contacts per "
            "sphere), the same positions and velocities in both codes, spins and springs zero. "
            "LAMMPS: `gran/hooke/history` with pdyn's dashpot as γ_n; pdyn: its default model "
            "and the LAMMPS-equivalent `mass_velocity` + projected history. CPU: the ratio of "
            "CPU seconds, steadier on a shared machine. Contacts per sphere (sphere pairs that "
            "overlap, the base included) after the timed steps.")
    out = _head(d, "The flowing chute", what) + _model_rows(d["rows"], contacts=True)
    for r in d["rows"]:
        out.append(f"pdyn `{r['damping']}`, its phases (s of the timed steps, wall clock, median "
                   "of the rounds): " + ", ".join(f"{k} {v:.3f}" for k, v in r["phases"].items()
                                                  if v >= 0.0005)
                   + f"; {r['rebuilds']:g} rebuilds.")
        out.append("")
    return out


def memory_table(d: dict) -> list[str]:
    a = d["args"]
    gas = a["scene"] == "gas"
    scene = f"gas at solid fraction {a['solid_fraction']:g}" if gas else f"{a['scene']} scene"
    what = (f"Peak resident memory of one rank above the baseline (the same run with "
            f"{'64 spheres' if gas else 'one sphere'}), per sphere: the {scene} at scale "
            f"{a['scale']:g}, {a['steps']} steps; KB = 1000 bytes.")
    out = _head(d, "Memory per sphere above the baseline", what)
    out += ["| code | μ | ranks | spheres | peak MiB | baseline MiB | above MiB | KB per sphere |",
            "|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        out.append(f"| {r['code']} | {r['friction']:g} | {r['ranks']} | {r['spheres']} | "
                   f"{r['peak MiB']:.0f} | {r['baseline MiB']:.0f} | {r['above MiB']:.1f} | "
                   f"**{r['B/sphere'] / 1000:.2f}** |")
    return out + [""]


def lees_edwards_table(d: dict) -> list[str]:
    a = d["args"]
    what = (f"µs per step of {a['steps']} steps of the shear cell (`shear_cell`: frictional "
            f"spheres, μ = 0.5) from one state sheared at {a['rate']:g} 1/s, run three ways: "
            "**sheared** (Lees–Edwards at that rate), **boundary** (Lees–Edwards at 10⁻⁹ of it: "
            "the sheared boundary's work on the fixed box's motion) and **fixed** (periodic, "
            "nothing shifted; its flow decays, so fewer contacts and rebuilds); one rank, "
            "each run first in turn, the ratio to the fixed run per round "
            "(`benchmarks/lees_edwards_cost.py`: the protocol). Contacts at the run's end.")
    out = _head(d, "A Lees–Edwards cell against a fixed periodic one", what)
    out += ["| spheres | run | µs/step | / fixed (range) | contacts | rebuilds |",
            "|---|---|---|---|---|---|"]
    for r in d["rows"]:
        for k in ("sheared", "boundary", "fixed"):
            m = r[k]
            ratio = ("–" if k == "fixed" else
                     f"**{m['ratio']:.2f}** ({m['ratio_min']:.2f}–{m['ratio_max']:.2f})")
            out.append(f"| {r['spheres']} | {k} | {m['us']:.0f} | {ratio} | "
                       f"{m['contacts']:.0f} | {m['rebuilds']:.0f} |")
    return out + [""]


TABLES = {"memory": memory_table, "lees_edwards": lees_edwards_table}


def _order(d: dict) -> tuple:
    if d["benchmark"] in TABLES:
        return (2, list(TABLES).index(d["benchmark"]))
    legacy = _models(d)
    if d.get("scene") == "chute":
        return (1.5, 0)
    if d.get("scene") == "bed":
        return (1, d["args"].get("cohesion", "none") != "none", legacy)
    return (0, d["args"]["solid_fraction"], legacy)


def render(runs: list[dict]) -> str:
    lines = [HEADER]
    for d in sorted(runs, key=_order):
        lines += TABLES.get(d["benchmark"], vs_lammps_table)(d)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", nargs="*", help="JSON files of vs_lammps.py and memory.py runs")
    p.add_argument("--out", default=str(ROOT / "docs" / "performance.md"))
    p.add_argument("--render-only", action="store_true",
                   help="rewrite the page from the JSON files kept in docs/performance/")
    args = p.parse_args(argv)
    keep = Path(args.out).with_suffix("")
    if args.render_only:
        files = sorted(keep.glob("*.json"))
    else:
        if not args.json:
            p.error("give the JSON files (or --render-only)")
        keep.mkdir(parents=True, exist_ok=True)
        files = []
        for f in map(Path, args.json):
            target = keep / f.name
            if f.resolve() != target.resolve():
                shutil.copyfile(f, target)
            files.append(target)
    runs = []
    for f in files:
        d = json.loads(f.read_text())
        if d.get("benchmark") not in ("vs_lammps", *TABLES):
            sys.exit(f"performance_tables: {f}: not a vs_lammps.py, memory.py or "
                     "lees_edwards_cost.py run")
        runs.append(d)
    Path(args.out).write_text(render(runs))
    print(f"wrote {args.out} ({len(runs)} tables)")


if __name__ == "__main__":
    main()
