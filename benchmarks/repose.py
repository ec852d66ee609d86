"""The angle of repose of the ``heap`` scene against friction μ, μ_r and cohesion (Bond number).

Pours the ``heap`` scene (spheres poured onto a floor, ``pdyn.scenarios.heap``) with
``contact.friction = μ`` for each μ asked, lets it settle and measures the slope of the cone:
the free surface is the top of the highest sphere (z + r) in rings around the heap's axis
(the mean centre of the spheres in x, y), one mean diameter wide; a straight line is fitted to
the rings whose surface lies between 20 % and 80 % of the peak height, and the angle of repose
is atan(−slope). A flat layer (frictionless spheres spread out) reads a few degrees.
``--rolling`` adds rolling resistance μ_r (``[contact] rolling_friction``) to every μ.
``--bond`` pours each (μ, μ_r) also with cohesion at each granular Bond number
Bo = F_c / (m g): DMT adhesion (``[contact] cohesion = "dmt"``), whose pull-off force is
F_c = 2π w R*, for two spheres of the scene's mean radius r̄ (R* = r̄/2, m = ρ 4/3 π r̄³),
so w = Bo m g / (π r̄) (:func:`work_of_adhesion`; Bo = 0: no cohesion). ``--seed`` repeats
every pour with each seed; ``--doc`` writes the angle against Bo and μ_r, one column a μ_r,
the seeds' angles side by side, with the command and date, into the markdown file's block
``<!-- repose_bond: begin/end -->`` (docs/validation.md).
μ > 0 needs a pdyn with friction (``[contact] friction``); without it only μ = 0 runs.

    python benchmarks/repose.py [--friction 0 0.2 0.5] [--rolling 0 0.1] [--bond 0 1 4]
                                [--scale 1] [--steps 25000] [--seed 0 1 2]
                                [--json out.json] [--doc docs/validation.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
from _common import STARTED, command_line, write_doc_block, write_json

from pdyn import Simulation, SimulationConfig
from pdyn.bench import format_table
from pdyn.config import ContactConfig
from pdyn.scenarios import make_scene


def repose_angle(pos: np.ndarray, radius: np.ndarray) -> tuple[float, float]:
    """(angle of repose in degrees, peak height in m) of a heap on the floor z = 0."""
    axis = pos[:, :2].mean(axis=0)
    ring = 2.0 * float(radius.mean())
    dist = np.linalg.norm(pos[:, :2] - axis, axis=1)
    top = pos[:, 2] + radius
    k = (dist // ring).astype(int)
    surface = np.zeros(k.max() + 1)
    np.maximum.at(surface, k, top)
    centres = (np.arange(len(surface)) + 0.5) * ring
    peak = float(surface.max())
    flank = (surface > 0.2 * peak) & (surface < 0.8 * peak)
    flank &= np.arange(len(surface)) >= int(np.argmax(surface))  # outward of the peak
    if flank.sum() < 2:
        return 0.0, peak
    slope = np.polyfit(centres[flank], surface[flank], 1)[0]
    return float(np.degrees(np.arctan(max(-slope, 0.0)))), peak


def work_of_adhesion(bond: float, scene) -> float:
    """The DMT work of adhesion w (J/m²) giving granular Bond number ``bond`` = 2π w R*/(m g)
    to two spheres of the ``heap`` scene's mean radius r̄ (R* = r̄/2, m = ρ 4/3 π r̄³)."""
    ins = scene.insertion
    r = 0.5 * (ins["radius_min"] + ins["radius_max"])
    weight = ins["density"] * 4.0 / 3.0 * np.pi * r**3 * float(np.linalg.norm(scene.gravity))
    return bond * weight / (np.pi * r)


def pour(mu: float, mu_r: float, scale: float, steps: int, seed: int, bond: float = 0.0) -> dict:
    scene = make_scene("heap", scale=scale, seed=seed)
    contact = dict(scene.contact)
    if mu:
        contact["friction"] = mu
    if mu_r:
        contact["rolling_friction"] = mu_r
    if bond:
        contact["cohesion"] = "dmt"
        contact["work_of_adhesion"] = work_of_adhesion(bond, scene)
    cfg = SimulationConfig(scene="heap", scale=scale, seed=seed, steps=steps, progress=False,
                           contact=ContactConfig(**contact))
    t0 = time.perf_counter()
    sim = Simulation(cfg)
    sim.run()
    h = sim.store.owned
    angle, peak = repose_angle(sim.store.pos[h], sim.store.radius[h])
    return {"mu": mu, "mu_r": mu_r, "Bo": bond, "seed": seed, "spheres": int(h.size),
            "angle_deg": round(angle, 1),
            "peak_m": round(peak, 3), "kinetic_J": sim.kinetic_energy(),
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--friction", type=float, nargs="+", default=[0.0])
    ap.add_argument("--rolling", type=float, nargs="+", default=[0.0],
                    help="rolling friction coefficients (each with every --friction)")
    ap.add_argument("--bond", type=float, nargs="+", default=[0.0],
                    help="granular Bond numbers F_c/(m g), DMT cohesion (each with every μ, μ_r)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=None, help="default: the scene's")
    ap.add_argument("--seed", type=int, nargs="+", default=[0], help="each pour with every seed")
    ap.add_argument("--json", default=None)
    ap.add_argument("--doc", default=None,
                    help="write the table of angle against Bo into this markdown file's block "
                         "<!-- repose_bond: begin/end -->")
    args = ap.parse_args(argv)
    has_friction = "friction" in {f.name for f in dataclasses.fields(ContactConfig)}
    if (any(args.friction) or any(args.rolling)) and not has_friction:
        ap.error("this pdyn has no friction ([contact] friction): only --friction 0 runs")
    steps = args.steps or make_scene("heap", scale=args.scale).steps
    rows = [pour(mu, mu_r, args.scale, steps, seed, bo) for bo in args.bond
            for mu_r in args.rolling for mu in args.friction for seed in args.seed]
    print(format_table(rows, list(rows[0])))
    write_json(args.json, {"benchmark": "repose", "scale": args.scale, "rows": rows})
    if args.doc:
        write_doc_block(args.doc, "repose_bond", f"```\n{command_line()}\n```\n\n"
                        f"Run {STARTED:%Y-%m-%d}; degrees, seeds {' / '.join(map(str, args.seed))}"
                        f" ({rows[0]['spheres']} spheres).\n\n{bond_table(rows)}")


def bond_table(rows: list[dict]) -> str:
    """Markdown: the angle (degrees) against Bo (rows) and μ_r (columns), one table per μ,
    each cell the seeds' angles joined by " / "; an angle whose pour was blocked (the heap
    reached the insertion region, fewer spheres than the most poured) is followed by the
    number of spheres poured in brackets."""
    total = max(r["spheres"] for r in rows)

    def cell(r):
        blocked = f" ({r['spheres']})" if r["spheres"] < total else ""
        return f"{r['angle_deg']:.1f}{blocked}"

    out = []
    for mu in sorted({r["mu"] for r in rows}):
        sub = [r for r in rows if r["mu"] == mu]
        rolls = sorted({r["mu_r"] for r in sub})
        out += [f"| Bo \\ μ_r (μ = {mu:g}) | " + " | ".join(f"{m:g}" for m in rolls) + " |",
                "|---" * (len(rolls) + 1) + "|"]
        for bo in sorted({r["Bo"] for r in sub}):
            cells = [" / ".join(cell(r) for r in sub
                                if r["Bo"] == bo and r["mu_r"] == m) for m in rolls]
            out.append(f"| {bo:g} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip()


if __name__ == "__main__":
    main()
