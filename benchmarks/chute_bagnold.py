"""Flow down a rough incline (the ``chute`` scene) against Bagnold's velocity profile and
Silbert et al. 2001's packing fraction.

Runs ``pdyn.scenarios.chute`` at each angle asked from rest for ``--settle`` time units
√(d/g), then samples every ``--every`` steps for ``--average`` more: the kinetic energy per
flowing sphere (steadiness: its mean over the first and the second half of the averaging
window), and, in bins of z one diameter thick measured from the top of the rough base
(z = d), the packing fraction φ(z) (the exact volume of the spheres inside each slab) and the
mean downhill velocity v_x(z) of the spheres whose centres lie in the bin, averaged over the
samples. The flow height H is where φ falls to half its bulk value (the bulk: bins between
H/4 and 3H/4); Bagnold's profile ([Bagnold1954], as [Silbert2001] write it)

    v(z) = (2/3) A √(g d) [H^{3/2} − (H − z)^{3/2}] / d^{3/2}

is fitted for A by least squares over the bins with centres in 0 < z < H (the model is linear
in A); the residual is reported as an rms over the surface velocity. The analysis is
``pdyn.analysis.bagnold``.

    python benchmarks/chute_bagnold.py [--angles 22 24] [--scale 1] [--stiffness 2e4]
        [--settle 250] [--average 150] [--every 2000] [--jobs 2] [--json docs/chute_bagnold.json]
        [--plot docs/chute_bagnold.png] [--doc docs/validation.md]
    python benchmarks/chute_bagnold.py --render docs/chute_bagnold.json --doc docs/validation.md

``--doc`` rewrites the block between ``<!-- chute_bagnold: begin -->`` and
``<!-- chute_bagnold: end -->`` with the command, the day of the run and the table.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from _common import STARTED, command_line, write_doc_block, write_json

from pdyn import Simulation, SimulationConfig
from pdyn.analysis.bagnold import D, SILBERT_PHI, bagnold, jop_inertial, measures, profiles
from pdyn.scenarios import chute


def run_angle(angle, args) -> dict:
    scene = chute(scale=args.scale, angle=angle, stiffness=args.stiffness, seed=args.seed)
    sim = Simulation(SimulationConfig(scene="chute", progress=False), scene=scene)
    base = int(scene.fixed.sum())
    length = float(scene.box_hi[0])
    edges = np.arange(0.0, scene.box_hi[2] + D, D)  # bins in lab z; base top at z = d
    settle = int(round(args.settle / sim.dt))
    total = settle + int(round(args.average / sim.dt))
    series, sums, samples = [], None, 0
    t0 = time.perf_counter()
    while sim.step_index < total:
        sim.run(min(args.every, total - sim.step_index))
        h = sim.store.owned
        flowing = h[sim.store.gid[h] >= base]
        pos, vel = sim.store.pos[flowing], sim.store.vel[flowing]
        ke = 0.5 * float((vel**2).sum()) / len(flowing)  # m = 1
        series.append({"t": round(sim.time, 3), "ke": ke, "vx": float(vel[:, 0].mean())})
        print(f"θ = {angle:g}: t = {sim.time:7.1f}  KE/sphere = {ke:.4g}  "
              f"<v_x> = {series[-1]['vx']:.4g}", flush=True)
        if sim.step_index > settle:
            phi, vx, count = profiles(pos, vel, 0.5 * D, length * length, edges)
            sums = (phi, vx, count) if sums is None else tuple(
                s + x for s, x in zip(sums, (phi, vx, count)))
            samples += 1
    seconds = time.perf_counter() - t0
    phi = sums[0] / samples
    vx = np.where(sums[2] > 0, sums[1] / np.maximum(sums[2], 1), 0.0)
    z = 0.5 * (edges[:-1] + edges[1:]) - D  # above the top of the base
    return analyse(angle, z, phi, vx, series, settle * sim.dt, sim.dt, samples, seconds,
                   len(scene) - base, base, length)


def analyse(angle, z, phi, vx, series, settle_time, dt, samples, seconds, n, base,
            length) -> dict:
    """One angle's record: the run's numbers, ``pdyn.analysis.bagnold.measures`` of its
    profiles and series, and the profiles and series themselves."""
    return {"angle_deg": angle, "spheres": n, "base_spheres": base, "width_d": length,
            "dt": dt, "settle": settle_time, "average": series[-1]["t"] - settle_time,
            "samples": samples, "seconds": round(seconds, 1),
            **measures(angle, z, phi, vx, series, settle_time),
            "z": z.tolist(), "phi": phi.tolist(), "vx": vx.tolist(), "series": series}


def reanalyse(r: dict) -> dict:
    """:func:`analyse` again from a saved result's profiles and series (a JSON written before
    a measure was added gets it)."""
    return analyse(r["angle_deg"], np.array(r["z"]), np.array(r["phi"]), np.array(r["vx"]),
                   r["series"], r["settle"], r["dt"], r["samples"], r["seconds"], r["spheres"],
                   r["base_spheres"], r["width_d"])


def table(results, command, day) -> str:
    out = [f"```\n{command}\n```", "", f"Run {day}.", "",
           "| θ | spheres (+ base) | settle, average (√(d/g)) | ⟨v_x⟩ change, 2nd half / "
           "1st | ⟨v_x⟩ change along a line over the window | KE change, 2nd half / 1st | "
           "H (d) | φ bulk (Silbert: 0.56–0.58) | A (fit) | fit rms / v_surface | "
           "I in the bulk (± spread) | A from I: I √(φ cos θ) | I, A by [Jop2006]'s μ(I) | "
           "v_x surface, base bin (√(gd)) | wall time |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = np.cos(np.radians(r["angle_deg"]))
        jop = jop_inertial(r["angle_deg"])
        out.append(f"| {r['angle_deg']:g}° | {r['spheres']} (+ {r['base_spheres']}) | "
                   f"{r['settle']:.0f}, {r['average']:.0f} | {r['vx_change']:+.1%} | "
                   f"{r['vx_trend']:+.1%} | {r['ke_change']:+.1%} | "
                   f"{r['H']:.1f} | {r['phi_bulk']:.3f} | {r['A']:.3f} | {r['fit_rms']:.3f} | "
                   f"{r['I_bulk']:.3f} ± {r['I_spread']:.3f} | "
                   f"{r['I_bulk'] * np.sqrt(r['phi_bulk'] * c):.3f} | "
                   f"{jop:.3f}, {jop * np.sqrt(r['phi_bulk'] * c):.3f} | "
                   f"{r['v_surface']:.2f}, {r['v_base_bin']:.2f} | "
                   f"{r['seconds'] / 60:.0f} min |")
    out += ["", "![chute: velocity and packing profiles, Bagnold fit](chute_bagnold.png)"]
    return "\n".join(out)


def plot(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(13, 4.2))
    for r in results:
        z, phi, vx = (np.array(r[k]) for k in ("z", "phi", "vx"))
        use = (z > -0.5 * D) & (z < r["H"] + 2)
        line, = a1.plot(vx[use], z[use], "o", ms=4, label=f"pdyn θ = {r['angle_deg']:g}°")
        zz = np.linspace(0, r["H"], 100)
        a1.plot(bagnold(zz, r["H"], r["A"]), zz, "-", color=line.get_color(),
                label=f"Bagnold, A = {r['A']:.3f}")
        a2.plot(phi[use], z[use], "o-", ms=4, color=line.get_color(),
                label=f"θ = {r['angle_deg']:g}°, bulk {r['phi_bulk']:.3f}")
        t = np.array([s["t"] for s in r["series"]])
        a3.plot(t, [s["vx"] for s in r["series"]], "-", color=line.get_color(),
                label=f"θ = {r['angle_deg']:g}°")
        a3.axvline(r["settle"], color=line.get_color(), ls=":", lw=1)
    a2.axvspan(*SILBERT_PHI, color="0.85", label="Silbert 2001 bulk (as quoted)")
    a1.set(xlabel="v_x (√(gd))", ylabel="z above the base (d)", title="velocity profile")
    a2.set(xlabel="packing fraction φ", ylabel="z above the base (d)", xlim=(0, 0.8),
           title="packing profile")
    a3.set(xlabel="time (√(d/g))", ylabel="mean downhill velocity ⟨v_x⟩ (√(gd))",
           title="⟨v_x⟩ (dotted: averaging starts)")
    for a in (a1, a2, a3):
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--angles", type=float, nargs="+", default=[22.0, 24.0])
    p.add_argument("--scale", type=float, default=1.0, help="area × scale (depth stays)")
    p.add_argument("--stiffness", type=float, default=2e4, help="k_n in mg/d")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--settle", type=float, default=250.0, help="time before averaging")
    p.add_argument("--average", type=float, default=150.0, help="time averaged over")
    p.add_argument("--every", type=int, default=2000, help="steps between samples")
    p.add_argument("--jobs", type=int, default=1, help="angles run side by side")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--plot", help="write the figure here")
    p.add_argument("--doc", help="rewrite the generated block of this markdown file")
    p.add_argument("--render", help="no runs: table and figure from this JSON")
    args = p.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        results = [reanalyse(r) for r in saved["results"]]
        command, day = saved["command"], saved["started"][:10]
    else:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            results = list(pool.map(run_angle, args.angles, [args] * len(args.angles)))
        command, day = command_line(), STARTED.date().isoformat()
        write_json(args.json, {"results": results})
    text = table(results, command, day)
    print(text)
    if args.plot:
        plot(results, args.plot)
    if args.doc:
        write_doc_block(args.doc, "chute_bagnold", text)


if __name__ == "__main__":
    main()
