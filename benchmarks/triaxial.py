"""The triaxial test: stress ratio and volumetric strain against axial strain, peak and
critical-state friction angles of frictional spheres.

Runs the ``triaxial`` scene (``pdyn.scenarios.triaxial``: a periodic cell of spheres, d 0.8–1
m, linear spring k = 2 × 10⁴ N/m, e = 0.7) in its two stages: isotropic compression to p0 =
``--pressure`` at friction ``--compaction-friction`` (a low μ packs dense), then axial
compression along z at the fixed true strain rate ``--rate`` (``[box] strain_rate`` of the
stage) with x and y held at p0 (``target_pressure``) and friction ``--friction``, to the
axial strain ``--strain``. Every ``--every`` steps of the second stage it reads the cell's
exact stress (``CellControl.stress``) and volume:

    ε_a = 1 − L_z / L_z0,  ε_v = 1 − V / V0  (compression positive, from the stage's start),
    σ1 = −σ_zz,  σ3 = −(σ_xx + σ_yy) / 2,  q = σ1 − σ3,  p = (σ1 + 2 σ3) / 3,
    sin φ = (σ1 − σ3) / (σ1 + σ3)  (the mobilised friction angle, Mohr–Coulomb).

The peak angle is the largest of the running means of 5 readings; the critical-state
(large-strain) angle, solid fraction and dilatancy rate dε_v/dε_a are the means over the last
third of the axial strain. Seeds ``--seeds`` (independent packings) run side by side
(``--jobs``). docs/validation.md compares them with the published values that could be read.

    python benchmarks/triaxial.py [--scale 1] [--seeds 0 1 2] [--pressure 200] [--rate 0.02]
        [--strain 0.5] [--friction 0.5] [--compaction-friction 0.1] [--every 100]
        [--jobs 2] [--json docs/triaxial.json] [--csv docs/triaxial.csv]
        [--plot docs/triaxial.png] [--doc docs/validation.md]

``--doc`` rewrites the block between ``<!-- triaxial: begin -->`` and ``<!-- triaxial: end
-->`` with the command, the day of the run and the table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import (STARTED, add_outputs, command_line, publish, save_figure,
                     side_by_side, write_json)

from pdyn import Simulation, SimulationConfig
from pdyn.scenarios import TRIAXIAL_COMPRESS

#: the spheres' density (kg/m³) and mean diameter (m) of the scene
RHO, D = 6.0 / np.pi, 0.9
#: readings in the running mean the peak is taken from
PEAK_WINDOW = 5


def run_seed(seed: int, scale: float = 1.0, pressure: float = 200.0, rate: float = 0.02,
             strain: float = 0.3, friction: float = 0.5, compaction_friction: float = 0.1,
             every: int = 100) -> dict:
    """One triaxial test: the curve (ε_a, ε_v, σ1, σ3 per reading) and its summary."""
    sim = Simulation(SimulationConfig(
        scene="triaxial", scale=scale, seed=seed, progress=False,
        scene_options={"pressure": pressure, "rate": rate, "strain": strain,
                       "friction": friction, "compaction_friction": compaction_friction}))
    if every % sim.cell.every:
        raise SystemExit(f"--every {every}: must be a multiple of the cell's reading interval "
                         f"({sim.cell.every} steps)")
    solid = float(np.sum(4.0 / 3.0 * np.pi * sim.store.radius[sim.store.owned] ** 3))
    t0 = time.perf_counter()
    sim.run(round(TRIAXIAL_COMPRESS / sim.dt))  # the compression, to its last step
    iso = -np.diag(sim.cell.stress)
    length0 = sim.box.length.copy()
    volume0 = float(np.prod(length0))
    rows = []
    while not sim.stages.finished:
        sim.run(every)
        s = -np.diag(sim.cell.stress)
        length = sim.box.length
        rows.append((1.0 - length[2] / length0[2], 1.0 - float(np.prod(length)) / volume0,
                     s[2], 0.5 * (s[0] + s[1]), s[0], s[1]))
    curve = np.array(rows)
    eps_a, eps_v, s1, s3 = curve[:, 0], curve[:, 1], curve[:, 2], curve[:, 3]
    sin_phi = (s1 - s3) / (s1 + s3)
    smooth = np.convolve(sin_phi, np.ones(PEAK_WINDOW) / PEAK_WINDOW, mode="valid")
    k = int(np.argmax(smooth))
    late = eps_a >= eps_a[-1] * 2.0 / 3.0
    slope = np.polyfit(eps_a[late], eps_v[late], 1)[0]
    p = (s1 + 2.0 * s3) / 3.0
    return {
        "seed": seed, "spheres": int(len(sim.store.owned)), "dt": sim.dt,
        "steps": sim.step_index, "inertial": rate * D * np.sqrt(RHO / pressure),
        "phi0": solid / volume0, "iso_error": float(np.abs(iso / pressure - 1.0).max()),
        "peak_sin": float(smooth[k]), "peak_at": float(eps_a[k + PEAK_WINDOW // 2]),
        "peak_q_over_p": float(np.max(np.convolve((s1 - s3) / p, np.ones(PEAK_WINDOW)
                                                  / PEAK_WINDOW, mode="valid"))),
        "cs_sin": float(sin_phi[late].mean()), "cs_sin_err": float(
            sin_phi[late].std(ddof=1) / np.sqrt(late.sum())),
        "cs_q_over_p": float(((s1 - s3) / p)[late].mean()),
        "cs_phi": float(np.mean(solid / (volume0 * (1.0 - eps_v[late])))),
        "cs_dilatancy": float(slope), "max_dilation": float(-eps_v.min()),
        "lateral_error": float(np.abs(curve[:, 4:] / pressure - 1.0).mean()),
        "lateral_worst": float(np.abs(curve[len(curve) // 20:, 4:] / pressure - 1.0).max()),
        "seconds": round(time.perf_counter() - t0, 1),
        "curve": curve.tolist(),
    }


def degrees(sin_value: float) -> float:
    return float(np.degrees(np.arcsin(sin_value)))


def summary(results) -> dict:
    """Means and standard deviations over the seeds of the friction angles (degrees)."""
    out = {}
    for key in ("peak_sin", "cs_sin"):
        angles = np.array([degrees(r[key]) for r in results])
        out[key.replace("_sin", "_angle")] = float(angles.mean())
        out[key.replace("_sin", "_angle_sd")] = float(angles.std(ddof=1)) if len(angles) > 1 \
            else 0.0
    return out


def table(results, command, day) -> str:
    s = summary(results)
    out = [f"```\n{command}\n```", "", f"Run {day}.", "",
           "| seed | spheres | φ after compression | peak sin φ (φ) | at ε_a | peak q/p | "
           "critical sin φ (φ) | critical q/p | φ_solid critical | dε_v/dε_a critical | "
           "lateral σ error mean, worst | wall time |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        out.append(
            f"| {r['seed']} | {r['spheres']} | {r['phi0']:.3f} | {r['peak_sin']:.3f} "
            f"({degrees(r['peak_sin']):.1f}°) | {r['peak_at']:.3f} | {r['peak_q_over_p']:.2f} | "
            f"{r['cs_sin']:.3f} ± {r['cs_sin_err']:.3f} ({degrees(r['cs_sin']):.1f}°) | "
            f"{r['cs_q_over_p']:.2f} | {r['cs_phi']:.3f} | {r['cs_dilatancy']:+.3f} | "
            f"{100 * r['lateral_error']:.2f} %, {100 * r['lateral_worst']:.1f} % | "
            f"{r['seconds'] / 60:.1f} min |")
    out += ["", f"Over the seeds: peak φ = {s['peak_angle']:.1f}° ± {s['peak_angle_sd']:.1f}°, "
            f"critical-state φ = {s['cs_angle']:.1f}° ± {s['cs_angle_sd']:.1f}° (± the "
            "standard deviation between packings); inertial number of the axial strain "
            f"{results[0]['inertial']:.1g}.", "",
            "![triaxial test: stress ratio and volumetric strain against axial strain]"
            "(triaxial.png)"]
    return "\n".join(out)


def write_csv(results, path) -> None:
    lines = ["seed,eps_a,eps_v,sigma1,sigma3,sigma_xx,sigma_yy"]
    for r in results:
        lines += [",".join([str(r["seed"])] + [repr(float(v)) for v in row])
                  for row in r["curve"]]
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def plot(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.8))
    for r in results:
        c = np.array(r["curve"])
        a1.plot(c[:, 0], (c[:, 2] - c[:, 3]) / (c[:, 2] + c[:, 3]), lw=1,
                label=f"seed {r['seed']}")
        a2.plot(c[:, 0], c[:, 1], lw=1, label=f"seed {r['seed']}")
    a1.set(xlabel="axial strain ε_a", ylabel="sin φ = (σ1 − σ3) / (σ1 + σ3)")
    a2.set(xlabel="axial strain ε_a", ylabel="volumetric strain ε_v (compression > 0)")
    save_figure(fig, (a1, a2), path)


def _seed(args_seed):
    args, seed = args_seed
    return run_seed(seed, args.scale, args.pressure, args.rate, args.strain, args.friction,
                    args.compaction_friction, args.every)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=1.0, help="spheres / 500")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--pressure", type=float, default=200.0, help="p0 (Pa)")
    p.add_argument("--rate", type=float, default=0.02, help="axial strain rate (1/s)")
    p.add_argument("--strain", type=float, default=0.5, help="axial strain to reach")
    p.add_argument("--friction", type=float, default=0.5, help="μ of the shear stage")
    p.add_argument("--compaction-friction", type=float, default=0.1,
                   help="μ of the isotropic compression")
    p.add_argument("--every", type=int, default=100, help="steps between readings")
    add_outputs(p)
    args = p.parse_args(argv)
    results = side_by_side(_seed, [(args, s) for s in args.seeds], args.jobs)
    write_json(args.json, {"results": [{k: v for k, v in r.items() if k != "curve"}
                                       for r in results], "summary": summary(results)})
    text = table(results, command_line(), STARTED.date().isoformat())
    publish(args, "triaxial", text, results, write_csv, plot)


if __name__ == "__main__":
    main()
