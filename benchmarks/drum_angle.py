"""The ``drum`` scene's free surface against its speed: the dynamic angle of repose and the
shape of the surface (flat when rolling, S-shaped when cascading) at a Froude number.

``run``: one Froude number Fr = Ω² R / g. Runs ``pdyn.scenarios.drum`` (scale 1/3 by default:
666 spheres, periodic over 26.4 mm ≈ 3.3 d along the axis, no end walls) for
``--revolutions`` turns of the drum, skips the first ``--skip`` turns, and samples the
cross-section (y, z) ``--samples`` times per turn. The free surface of a sample is the top of
the highest sphere (z + r) in 8 mm bins of y (bins with at least 3 spheres); over the middle
60 % of its chord a straight line gives the angle θ = atan |slope|. The mean profile (the
samples' profiles averaged bin by bin) gives the shape: a cubic fitted over the middle 80 %
of the chord, its local slope angle at the upper end, the middle and the lower end of that
range — S = upper − lower is near 0 for a flat surface and grows as it bends into an S,
steep at its top and flattening at its foot — and the profile's RMS deviation from the
straight line in diameters. Per sample also the motion (``flight_and_rotation``): the
spheres in flight, those moving with the drum and the bed's turn rate over Ω; the report
reads the regime from these (``regime``) beside [Mellmann2001]'s Froude ranges (the analysis
is ``pdyn.analysis.drum``). The largest overlap over a sphere's radius (spheres and the
drum; ``pdyn.dynamics.contact.contact_stats``) is sampled every 200 steps, from the start
and after the skipped turns. Writes JSON.

``report``: reads the JSON of several runs, prints a table and, with ``--docs``, replaces the
drum section of ``docs/validation.md`` between its markers by the table, and with
``--plot`` draws θ and S against Fr and the mean profiles (matplotlib).

    python benchmarks/drum_angle.py run --froude 0.01 --revolutions 1.5 --skip 0.5 \\
        --json drum-0.01.json
    python benchmarks/drum_angle.py report drum-*.json --docs docs/validation.md \\
        --plot docs/drum_regimes.png
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import math
from pathlib import Path

import numpy as np

from pdyn import Simulation, SimulationConfig
from pdyn.analysis.drum import (DRUM_RADIUS, MELLMANN, angle, bin_centres, expected,
                                flight_and_rotation, profile_shape, regime, shape,
                                surface_profile)
from pdyn.config import OutputConfig
from pdyn.dynamics.contact import contact_stats
from pdyn.scenarios import drum

BEGIN, END = "<!-- drum-table: begin -->", "<!-- drum-table: end -->"


def run(args) -> dict:
    scene = drum(scale=args.scale, froude=args.froude, rough=args.rough)
    bed_of = (np.ones(len(scene), bool) if scene.glued is None else scene.glued < 0)
    cfg = SimulationConfig(scene="drum", progress=False)
    omega = math.sqrt(args.froude * 9.81 / DRUM_RADIUS)
    turn = int(round(2 * math.pi / omega / Simulation(cfg, scene=scene).dt))  # steps a turn
    skip, total = int(args.skip * turn), int(args.revolutions * turn)
    if args.snapshot:  # the last step's snapshot (a picture: pdyn render)
        cfg = cfg.with_(output=OutputConfig(folder=args.snapshot, snapshot_every=total,
                                            overwrite=True))
    sim = Simulation(cfg, scene=scene)
    every = max(1, turn // args.samples)
    d = 2.0 * float(np.mean(scene.radii[bed_of]))
    worst_fill = worst_flow = 0.0
    angles, tops, flying, with_drum, turn = [], [], [], [], []
    length = float(scene.box_hi[0])

    def advance(n):
        nonlocal worst_fill, worst_flow
        while n > 0:
            k = min(200, n)
            with contextlib.redirect_stdout(io.StringIO()):  # the load line of each call
                sim.run(k, progress=False)
            n -= k
            w = contact_stats(sim.store, sim.neighbours, sim.contact.wall_table(sim.store))[2]
            if sim.step_index % 20000 == 0:
                print(f"step {sim.step_index} of {total}", flush=True)
            if sim.step_index <= skip:
                worst_fill = max(worst_fill, w)
            else:
                worst_flow = max(worst_flow, w)

    advance(skip)
    while sim.step_index + every <= total:
        advance(every)
        h = sim.store.owned
        bed = bed_of[sim.store.gid[h]]
        top = surface_profile(sim.store.pos[h][bed], sim.store.radius[h][bed])
        tops.append(top)
        angles.append(angle(top))
        f, w, u = flight_and_rotation(sim.store.pos[h], sim.store.vel[h], sim.store.radius[h],
                                      length, omega, bed)
        flying.append(f)
        with_drum.append(w)
        turn.append(u)
        print(f"step {sim.step_index} t {sim.time:.3f} s angle {angles[-1]:.2f}", flush=True)
    advance(total - sim.step_index)  # to the end (its snapshot)
    if not angles:
        raise SystemExit("drum_angle: no sample: give more --revolutions after --skip or more "
                         "--samples")
    mean_top = np.nanmean(np.array(tops), axis=0)
    a = np.array(angles)
    return {"froude": args.froude, "omega_rad_s": omega, "spheres": int(bed_of.sum()),
            "rough": bool(args.rough), "glued": int((~bed_of).sum()),
            "length_m": length, "d_m": d, "dt_s": sim.dt,
            "youngs_modulus": sim.contact_config.youngs_modulus,
            "steps": sim.step_index, "revolutions": args.revolutions, "skip": args.skip,
            "samples": len(a), "angle_deg": float(a.mean()), "angle_std_deg": float(a.std()),
            "flying": float(np.mean(flying)), "with_drum": float(np.mean(with_drum)),
            "bed_turn": float(np.mean(turn)),
            **shape(mean_top, d), "profile_y_m": bin_centres().tolist(),
            "profile_top_m": [None if not np.isfinite(v) else float(v) for v in mean_top],
            "max_overlap_fill": worst_fill, "max_overlap_flow": worst_flow,
            "day": datetime.date.today().isoformat()}


def table(results: list[dict]) -> str:
    rows = ["| wall | Fr | Ω (rad/s) | turns averaged (run) | samples | θ (°) | slope upper / "
            "middle / lower (°) | S (°) | RMS from a line (d) | in flight | with the drum | "
            "bed turn / Ω | "
            "regime read | [Mellmann2001] at this Fr | max overlap / r, flowing (filling) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: (r.get("rough", False), r["froude"], r["length_m"])):
        sh = profile_shape(r)
        wall = f"rough ({r['glued']} glued)" if r.get("rough") else "smooth"
        wall += f", {r['length_m'] / r['d_m']:.1f} d long"
        rows.append(f"| {wall} | {r['froude']:g} | {r['omega_rad_s']:.3g} | "
                    f"{r['revolutions'] - r['skip']:g} ({r['revolutions']:g}) | {r['samples']} | "
                    f"{r['angle_deg']:.1f} ± {r['angle_std_deg']:.1f} | {sh['upper_deg']:.1f} / "
                    f"{sh['middle_deg']:.1f} / {sh['lower_deg']:.1f} | {sh['s_deg']:.1f} | "
                    f"{sh['rms_d']:.2f} | {100 * r['flying']:.1f} % | "
                    f"{100 * r['with_drum']:.0f} % | "
                    f"{format(r['bed_turn'], '.2f') if 'bed_turn' in r else '–'} | "
                    f"{regime(r)} | {expected(r['froude'])} | "
                    f"{100 * r['max_overlap_flow']:.2f} % ({100 * r['max_overlap_fill']:.2f} %) |")
    return "\n".join(rows)


def report(args) -> None:
    results = [json.loads(Path(p).read_text()) for p in args.files]
    text = table(results)
    print(text)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (ax, cx, bx) = plt.subplots(1, 3, figsize=(15, 4.2))
        short = min(r["length_m"] for r in results)  # the series; longer drums are checks
        kinds = [(name, sorted((r for r in results if r.get("rough", False) == rough
                                and r["length_m"] == short), key=lambda r: r["froude"]))
                 for name, rough in (("smooth", False), ("rough", True))]
        kinds = [(name, rs) for name, rs in kinds if rs]
        for name, rs in kinds:
            fr = [r["froude"] for r in rs]
            ax.errorbar(fr, [r["angle_deg"] for r in rs], [r["angle_std_deg"] for r in rs],
                        marker="o", label=f"θ (line fit), {name}")
            ax.plot(fr, [profile_shape(r)["s_deg"] for r in rs], "s--",
                    label=f"S = upper − lower slope, {name}")
        for k, (name, lo, hi) in enumerate(MELLMANN):  # the ranges as bars along the top
            y = 46 - 2.2 * k
            ax.plot([max(lo, 1e-4), min(hi, 10.0)], [y, y], lw=5, alpha=0.5)
            ax.text(max(lo, 1e-4), y + 0.5, name, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 10.0)
        ax.set_xlabel("Froude number Ω²R/g (bars: [Mellmann2001]'s ranges)")
        ax.set_ylabel("degrees")
        ax.legend(fontsize="small", loc="lower left")
        for (name, rs), line in zip(kinds, ("--", "-")):
            fr = [r["froude"] for r in rs]
            cx.plot(fr, [100 * r.get("flying", math.nan) for r in rs], "o" + line,
                    label=f"spheres in flight (%), {name}")
            cx.plot(fr, [100 * r.get("with_drum", math.nan) for r in rs], "s" + line,
                    label=f"moving with the drum (%), {name}")
            cx.plot(fr, [100 * r.get("bed_turn", math.nan) for r in rs], "^" + line,
                    label=f"bed's turn rate / Ω (%), {name}")
        cx.set_xscale("log")
        cx.set_xlim(1e-4, 10.0)
        cx.set_xlabel("Froude number Ω²R/g")
        cx.set_ylabel("%")
        cx.legend(fontsize="small")
        for r in kinds[-1][1]:  # the profiles of the rough drum (else the smooth one)
            y = np.array(r["profile_y_m"])
            z = np.array([np.nan if v is None else v for v in r["profile_top_m"]])
            bx.plot(y / r["d_m"], z / r["d_m"], marker=".",
                    label=f"Fr = {r['froude']:g} ({kinds[-1][0]})")
        bx.set_xlabel("y / d")
        bx.set_ylabel("top of the bed z / d")
        bx.set_aspect("equal")
        bx.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
    if args.docs:
        path = Path(args.docs)
        doc = path.read_text()
        a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        day = max(r["day"] for r in results)
        doc = doc[:a] + f"\n{text}\n\n(Run {day}.)\n" + doc[b:]
        path.write_text(doc)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="one Froude number")
    r.add_argument("--froude", type=float, default=0.01, help="Fr = Ω² R / g")
    r.add_argument("--scale", type=float, default=1 / 3, help="the drum scene's scale")
    r.add_argument("--revolutions", type=float, default=1.5, help="turns of the drum run")
    r.add_argument("--skip", type=float, default=0.5, help="turns before the first sample")
    r.add_argument("--samples", type=int, default=24, help="samples per turn")
    r.add_argument("--rough", action="store_true",
                   help="a rough drum: spheres glued to its wall (pdyn.scenarios.drum)")
    r.add_argument("--json", required=True, help="write the result to this JSON file")
    r.add_argument("--snapshot", help="write the last step's snapshot into this run folder")
    q = sub.add_parser("report", help="table (and plot) of several runs")
    q.add_argument("files", nargs="+")
    q.add_argument("--docs", help="docs/validation.md: replace its drum table")
    q.add_argument("--plot", help="a PNG of θ and S against Fr and the mean profiles")
    args = p.parse_args(argv)
    if args.command == "run":
        out = run(args)
        Path(args.json).write_text(json.dumps(out, indent=1))
        print(json.dumps({k: v for k, v in out.items() if not k.startswith("profile")}))
    else:
        report(args)


if __name__ == "__main__":
    main()
