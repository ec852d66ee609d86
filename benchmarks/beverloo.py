"""Beverloo's law for the ``hopper`` scene: the discharge rate W over orifice sizes, its
constancy in time, and the fit W = C ρ_b √g (D − k d)^{5/2} [Beverloo1961].

    python benchmarks/beverloo.py                     # D/d = 4 5 6 7 8, docs/beverloo.png
    python benchmarks/beverloo.py --quick             # two small runs (seconds), no doc
    python benchmarks/beverloo.py --json docs/beverloo.json --doc docs/validation.md
    python benchmarks/beverloo.py --render docs/beverloo.json --doc docs/validation.md
    python benchmarks/beverloo.py --orifices 4 6 8 --json a.json   # runs split over
    python benchmarks/beverloo.py --orifices 5 7 --json b.json     # processes, then
    python benchmarks/beverloo.py --render a.json b.json --json docs/beverloo.json --doc ...

With ``--doc`` the table, headed by the command and the run's date, replaces what lies
between ``<!-- beverloo: begin -->`` and ``<!-- beverloo: end -->`` of that file.

Each run is ``pdyn.scenarios.hopper`` (a square silo, a 15° pyramidal bottom of four planes,
a square orifice of side s = D/d diameters, d = 1 cm, μ = 0.5) at ``--scale``: the spheres
settle on the closed bottom, the outlet opens at ``--opens`` s, and the mass that has left,
M_out(t) (the mass at the opening less the mass present), is sampled every ``--every``
steps until two thirds of it has left or ``--seconds`` after the opening.

The analysis is ``pdyn.analysis.beverloo``.

* **Constant rate** (``rate_window``, ``line_fit``): the window starts ``--skip`` s
  after the opening (the plug resting across the orifice drops out at once) and ends when the
  hopper is a third full (M_out = 2/3 M_0) or the run ends; W is the slope of a straight line
  fitted to M_out(t) over it. Reported: the rms residual over the mass out in the window, and
  the rates of the window's first and last thirds (their relative difference is the drift; a
  rate falling as the hopper empties shows as a negative drift).
* **Bulk density** ρ_b (``bulk_density``): the mass of the sphere centres in the settled
  fill's bulk (2 d from the walls, 2 d above the bottom's highest point inside that, 2 d
  below the 99th percentile of the centres' heights) over that region's volume, at the opening.
* **Orifice diameter**: a square orifice is not a circle; the fit is made with the
  area-equivalent diameter D_A = 2 s/√π (the circle of the orifice's area: the discharge of
  the free-fall-arch picture, W ∝ area × √(g D), is set by the area first) and, for
  comparison, with the side s itself (the hydraulic diameter 4 A / P of a square).
* **Fit** (``beverloo_fit``): (W / (ρ_b √g))^{2/5} = C^{2/5} (D − k d) is a straight line
  in D; its slope and intercept give C and k (least squares on the linearised form, each run
  weighted alike).

The published ranges [Beverloo1961; Mankoc2007]: C ≈ 0.55–0.65, k ≈ 1.3–2.9 for circular
orifices in flat-bottomed silos. Mankoc2007 (after Nedderman) give the silo-width conditions
for a rate independent of the width: L > 2.5 D and L > D + 30 d; the default silo (20 d
wide) meets the first for D ≤ 8 d, never the second.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import STARTED, command_line, write_doc_block, write_json  # noqa: E402
from pdyn.analysis.beverloo import (G, PUBLISHED, analyse, area_diameter,  # noqa: E402
                                    bulk_density)
from pdyn.values import BadValue, number  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
D_SPHERE = 0.01  # m, the scene's mean diameter
SLOPE = 15.0  # degrees, the scene's bottom
FULL = {"orifices": [4.0, 5.0, 6.0, 7.0, 8.0], "scale": 1.0, "seconds": 1.0}
QUICK = {"orifices": [5.0, 7.0], "scale": 0.2, "seconds": 0.15}


def discharge(orifice: float, scale: float, opens: float, seconds: float, every: int,
              seed: int = 0, height: float = 1.0) -> dict:
    """One run of the hopper with an orifice of side ``orifice`` diameters: the samples of
    the mass out, the bulk density at the opening and the largest overlap seen."""
    from pdyn import Simulation, SimulationConfig
    from pdyn.dynamics.contact import contact_stats
    from pdyn.scenarios import hopper

    scene = hopper(scale=scale, seed=seed, orifice=orifice, opens=opens, height=height)
    sim = Simulation(SimulationConfig(scene="hopper", progress=False), scene=scene)
    t0 = time.perf_counter()
    worst = 0.0
    while sim.time < opens - 0.5 * sim.dt:
        sim.run(min(every, int(round((opens - sim.time) / sim.dt))))
        worst = max(worst, contact_stats(sim.store, sim.neighbours, sim.contact.walls)[2])
    h = sim.store.owned
    apex = -0.5 * orifice * D_SPHERE * math.tan(math.radians(SLOPE))
    rho_b = bulk_density(sim.store.pos[h], sim.store.mass[h], float(scene.box_hi[0]), apex,
                         D_SPHERE, SLOPE)
    m0 = float(sim.store.mass[h].sum())
    times, out = [sim.time], [0.0]
    while sim.time < opens + seconds and out[-1] < 2.0 / 3.0 * m0:
        sim.run(every)
        times.append(sim.time)
        out.append(m0 - float(sim.store.mass[sim.store.owned].sum()))
        worst = max(worst, contact_stats(sim.store, sim.neighbours, sim.contact.walls)[2])
    return {"orifice_d": orifice, "side": orifice * D_SPHERE,
            "D_area": area_diameter(orifice * D_SPHERE), "width": float(scene.box_hi[0]),
            "spheres": len(scene.radii), "height": height, "m0": m0, "rho_b": rho_b,
            "opens": opens,
            "dt": sim.dt, "steps": sim.step_index, "max_overlap_over_radius": worst,
            "times": times, "mass_out": out, "seconds": time.perf_counter() - t0}


def table(runs: list[dict], fits: dict) -> str:
    """The markdown table of the runs and the fits."""
    out = ["| s/d | D_A/d | spheres | ρ_b (kg/m³) | W (kg/s) | window (s after opening) | "
           "out at its end | rms residual / range | drift (last − first third) / W | "
           "largest overlap / r |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        a, b = (x - r["opens"] for x in r["window"])
        out.append(f"| {r['orifice_d']:g} | {r['D_area'] / D_SPHERE:.2f} | {r['spheres']} | "
                   f"{r['rho_b']:.0f} | {r['rate']:.3f} | {a:.2f}–{b:.2f} | "
                   f"{r['window_fraction_out']:.0%} | {r['rms_over_range']:.4f} | "
                   f"{r['drift']:+.3f} | {r['max_overlap_over_radius']:.4f} |")
    if "area" not in fits:
        return "\n".join(out + ["", "(one orifice size: no Beverloo fit)"])
    out += ["", "| diameter in the fit | C | k | rms misfit of W | published C | published k |",
            "|---|---|---|---|---|---|"]
    for name, label in (("area", "area-equivalent D_A = 2 s/√π"), ("side", "side s")):
        f = fits[name]
        out.append(f"| {label} | {f['C']:.3f} | {f['k']:.2f} | {f['rms_misfit']:.1%} | "
                   f"{PUBLISHED['C'][0]}–{PUBLISHED['C'][1]} | "
                   f"{PUBLISHED['k'][0]}–{PUBLISHED['k'][1]} |")
    out.append(f"\nρ_b = {fits['rho_b']:.0f} kg/m³ (mean of the runs), g = {G} m/s², "
               f"d = {D_SPHERE * 100:g} cm.")
    return "\n".join(out)


def plot(runs: list[dict], fits: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for r in runs:
        t = np.array(r["times"]) - r["opens"]
        line, = a1.plot(t, np.array(r["mass_out"]) / r["m0"], lw=1,
                        label=f"s = {r['orifice_d']:g} d")
        a, b = (x - r["opens"] for x in r["window"])
        tt = np.linspace(a, b, 2)
        a1.plot(tt, (r["rate"] * (tt + r["opens"]) + _intercept(r)) / r["m0"], "--",
                color=line.get_color(), lw=1)
    a1.axhline(2 / 3, color="k", ls=":", lw=1, label="a third left")
    a1.set(xlabel="time since opening (s)", ylabel="mass out / mass at opening",
           title="discharge (dashed: the fitted line over the window)")
    a1.legend(fontsize=7)
    da = np.array([r["D_area"] for r in runs])
    a2.plot(da / D_SPHERE, [r["rate"] for r in runs], "o", label="pdyn")
    x = np.linspace(1.1 * D_SPHERE, da.max() * 1.05, 100)
    if "area" in fits:
        f = fits["area"]
        x = np.linspace(f["k"] * D_SPHERE + 1e-4, da.max() * 1.05, 100)
        a2.plot(x / D_SPHERE, f["C"] * fits["rho_b"] * math.sqrt(G)
                * (x - f["k"] * D_SPHERE) ** 2.5, "-",
                label=f"Beverloo fit: C = {f['C']:.3f}, k = {f['k']:.2f}")
    for c, k, ls in ((0.55, 2.9, ":"), (0.65, 1.3, "-.")):
        a2.plot(x / D_SPHERE, c * fits["rho_b"] * math.sqrt(G)
                * np.clip(x - k * D_SPHERE, 0, None) ** 2.5, ls, color="gray",
                label=f"C = {c}, k = {k}")
    a2.set(xlabel="area-equivalent orifice diameter D_A / d", ylabel="W (kg/s)",
           title="discharge rate against Beverloo's law")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def _intercept(r: dict) -> float:
    """The fitted line's intercept, recomputed from the window's samples."""
    t, m = np.array(r["times"]), np.array(r["mass_out"])
    keep = (t >= r["window"][0]) & (t <= r["window"][1])
    return float(np.mean(m[keep] - r["rate"] * t[keep]))


def output(args, runs, command: str, when: str, seconds: float) -> dict:
    fits = analyse(runs, args.skip, D_SPHERE)
    text = table(runs, fits)
    print(text)
    if args.plot:
        plot(runs, fits, Path(args.plot))
    if args.doc:
        write_doc_block(args.doc, "beverloo", f"```\n{command}\n```\n\nRun {when}, "
                        f"{seconds / 60:.0f} min of wall time on the shared 2-core machine.\n\n"
                        f"{text}")
    return fits


def busy_seconds(spans) -> float:
    """Seconds during which at least one of the (start, finish) datetime ``spans`` ran (runs
    side by side count once; a gap between sessions not at all)."""
    busy, end = 0.0, None
    for a, b in sorted(spans):
        start = a if end is None else max(a, end)
        busy += max((b - start).total_seconds(), 0.0)
        end = b if end is None else max(end, b)
    return busy


def render(args) -> None:
    """``--render``: the output of stored runs (one JSON, or several merged: their runs by
    orifice, their commands, the wall time while any of them ran)."""
    import datetime

    parts = [json.loads(Path(f).read_text()) for f in args.render]
    runs = sorted((r for d in parts for r in d["runs"]), key=lambda r: r["orifice_d"])
    spans = sorted((datetime.datetime.fromisoformat(d["started"]),
                    datetime.datetime.fromisoformat(d["finished"])) for d in parts)
    started = spans[0][0]
    command = "\n".join(d["command"] for d in parts)
    fits = output(args, runs, command, started.strftime("%Y-%m-%d"), busy_seconds(spans))
    if args.json and len(parts) > 1:
        merged = {**parts[0], "command": command, "started": started.isoformat(),
                  "finished": max(b for _, b in spans).isoformat(), "runs": runs, "fits": fits,
                  "seconds": sum(d["seconds"] for d in parts)}
        Path(args.json).write_text(json.dumps(merged, indent=2))
        print(f"wrote {args.json}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="two small runs (seconds)")
    p.add_argument("--orifices", type=float, nargs="*", default=None,
                   help=f"orifice sides s/d (default {FULL['orifices']})")
    p.add_argument("--scale", type=float, default=None, help=f"default {FULL['scale']}")
    p.add_argument("--seconds", type=float, default=None,
                   help=f"most seconds of discharge per run (default {FULL['seconds']})")
    p.add_argument("--opens", type=float, default=0.3, help="s: the outlet opens")
    p.add_argument("--height", type=float, default=1.0,
                   help="the fill this many times taller (more spheres, same silo width)")
    p.add_argument("--skip", type=float, default=0.1, help="s after the opening: window start")
    p.add_argument("--every", type=int, default=100, help="steps between samples")
    p.add_argument("--plot", default=str(ROOT / "docs" / "beverloo.png"),
                   help="the figure ('' for none)")
    p.add_argument("--json", help="write the runs to this JSON file")
    p.add_argument("--doc", help="write the table into this markdown file's generated block")
    p.add_argument("--render", metavar="JSON", nargs="+", help="no runs: the table, plot and "
                   "--doc block of the runs of these JSON files (with --json: merged into one)")
    args = p.parse_args(argv)
    if args.render:
        render(args)
        return
    try:
        number("--height", args.height, above=0)
    except BadValue as exc:
        raise SystemExit(f"beverloo.py: {exc}") from None
    size = QUICK if args.quick else FULL
    orifices = args.orifices or size["orifices"]
    scale = args.scale or size["scale"]
    seconds = args.seconds or size["seconds"]
    t0 = time.perf_counter()
    runs = []
    for s in orifices:
        r = discharge(s, scale, args.opens, seconds, args.every, height=args.height)
        runs.append(r)
        print(f"s = {s:g} d: {r['spheres']} spheres, {r['mass_out'][-1] / r['m0']:.0%} out "
              f"after {r['times'][-1] - args.opens:.2f} s ({r['steps']} steps, "
              f"{r['seconds']:.0f} s)", flush=True)
    total = time.perf_counter() - t0
    fits = output(args, runs, command_line(), STARTED.strftime("%Y-%m-%d"), total)
    write_json(args.json, {"benchmark": "beverloo", "scale": scale, "skip": args.skip,
                           "published": PUBLISHED, "runs": runs, "fits": fits,
                           "seconds": total})


if __name__ == "__main__":
    main()
