"""μ(I) and φ(I): the shear cell at constant pressure against published rheology of frictional
spheres.

Runs the ``shear_cell`` scene (Lees–Edwards simple shear, flow x, gradient z; frictional
spheres, μ_p = 0.5, e = 0.7, d 0.8–1 m, ρ_s = 6/π kg/m³) with its z length following the
pressure ``--pressure`` (``[box] target_pressure``, ``pdyn.dynamics.cell``) at the shear rate
that gives each inertial number asked,

    I = γ̇ d / √(P / ρ_s),   d = 0.9 m the mean diameter,

for ``--settle`` strain units (the cell compresses from its loose lattice and the flow
forgets it), then samples every ``--every`` steps for ``--average`` strain units: the
friction coefficient μ = −σ_xz / σ_zz and the solid fraction φ = Σ (4/3) π r³ / V of the
cell's exact stress and volume (σ_zz's mean against the target says how well the pressure
was held), and of the mean stress tensor the mobilised friction sin φ = (σ1 − σ3)/(σ1 + σ3)
of its principal values and b = (σ2 − σ3)/(σ1 − σ3) (the triaxial test's sin φ, at b = 0).
Compared with [Jop2006]'s μ(I) = μ_s + (μ_2 − μ_s) / (I_0 / I + 1) for glass beads (μ_s = tan
20.9°, μ_2 = tan 32.76°, I_0 = 0.279: the values ``pdyn.analysis.bagnold`` quotes) and the
linear laws μ = μ_min + b I, φ = φ_max − a I fitted to the runs (the form [daCruz2005] and
[GDRMiDi2004] give; their numbers are for disks and for other set-ups: docs/validation.md says
what could be read).

    python benchmarks/mu_of_i.py [--inertial 0.02 0.05 0.1 0.2 0.4] [--pressure 200]
        [--scale 1] [--settle 2] [--average 4] [--every 20] [--jobs 2]
        [--json docs/mu_of_i.json] [--csv docs/mu_of_i.csv] [--plot docs/mu_of_i.png]
        [--doc docs/validation.md]

``--doc`` rewrites the block between ``<!-- mu_of_i: begin -->`` and ``<!-- mu_of_i: end -->``
with the command, the day of the run and the table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import (STARTED, add_outputs, command_line, publish, save_figure,
                     side_by_side, write_json)

from pdyn import Simulation, SimulationConfig
from pdyn.analysis.bagnold import JOP

#: the spheres' density (kg/m³) and mean diameter (m) of the shear cell
RHO, D = 6.0 / np.pi, 0.9


def jop_mu(i) -> np.ndarray:
    """[Jop2006]'s μ(I) for glass beads."""
    mu_s, mu_2, i_0 = JOP
    return mu_s + (mu_2 - mu_s) / (i_0 / np.asarray(i, float) + 1.0)


def run_point(inertial: float, pressure: float = 200.0, scale: float = 1.0,
              settle: float = 2.0, average: float = 4.0, every: int = 20,
              seed: int = 0) -> dict:
    """One steady shear at inertial number ``inertial`` and ``pressure`` (Pa): the means and
    standard errors (of block means over the averaging window) of μ, φ and −σ_zz."""
    rate = inertial * np.sqrt(pressure / RHO) / D
    sim = Simulation(SimulationConfig(
        scene="shear_cell", scale=scale, seed=seed, progress=False,
        scene_options={"rate": float(rate), "pressure": float(pressure)}))
    volume = float(np.sum(4.0 / 3.0 * np.pi * sim.store.radius[sim.store.owned] ** 3))
    per_strain = 1.0 / (rate * sim.dt)
    t0 = time.perf_counter()
    sim.run(int(round(settle * per_strain)))
    mu, phi, pz, tensors = [], [], [], []
    for _ in range(int(round(average * per_strain / every))):
        sim.run(every)
        s = sim.cell.stress
        tensors.append(s.copy())
        mu.append(-s[0, 2] / s[2, 2])
        phi.append(volume / float(np.prod(sim.box.length)))
        pz.append(-s[2, 2])
    out = {"I": inertial, "shear_rate": rate, "pressure": pressure, "spheres": len(sim.store.owned),
           "dt": sim.dt, "steps": sim.step_index, "samples": len(mu),
           "seconds": round(time.perf_counter() - t0, 1), **principal(np.mean(tensors, axis=0))}
    for name, x in (("mu", mu), ("phi", phi), ("pzz", pz)):
        blocks = np.array_split(np.asarray(x), 8)
        means = np.array([b.mean() for b in blocks])
        out[name] = float(np.mean(x))
        out[name + "_err"] = float(means.std(ddof=1) / np.sqrt(len(means)))
    return out


def principal(stress: np.ndarray) -> dict:
    """The mean stress tensor's principal values σ1 ≥ σ2 ≥ σ3 (compression positive):
    the mobilised friction sin φ = (σ1 − σ3) / (σ1 + σ3) (Mohr–Coulomb, as the triaxial
    test's), b = (σ2 − σ3) / (σ1 − σ3) (0: triaxial compression) and the major axis's angle
    from the flow x in the x–z plane (degrees; 45° for a coaxial simple shear)."""
    values, vectors = np.linalg.eigh(-0.5 * (stress + stress.T))
    s3, s2, s1 = values
    major = vectors[:, 2]
    return {"sin_phi": float((s1 - s3) / (s1 + s3)), "b": float((s2 - s3) / (s1 - s3)),
            "major_angle": float(np.degrees(np.arctan2(abs(major[2]), abs(major[0]))))}


def fits(results) -> dict:
    """Least-squares lines μ = μ_min + b I and φ = φ_max − a I through the runs."""
    i = np.array([r["I"] for r in results])
    b, mu_min = np.polyfit(i, [r["mu"] for r in results], 1)
    a, phi_max = np.polyfit(i, [r["phi"] for r in results], 1)
    return {"mu_min": float(mu_min), "b": float(b), "phi_max": float(phi_max), "a": float(-a)}


def table(results, command, day) -> str:
    f = fits(results)
    out = [f"```\n{command}\n```", "", f"Run {day}.", "",
           "| I | γ̇ (1/s) | spheres | −σ_zz / P* | μ = −σ_xz/σ_zz | [Jop2006] μ(I) | φ | "
           "sin φ principal, b, major axis | wall time |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        out.append(f"| {r['I']:g} | {r['shear_rate']:.3g} | {r['spheres']} | "
                   f"{r['pzz'] / r['pressure']:.3f} ± {r['pzz_err'] / r['pressure']:.3f} | "
                   f"{r['mu']:.3f} ± {r['mu_err']:.3f} | {float(jop_mu(r['I'])):.3f} | "
                   f"{r['phi']:.3f} ± {r['phi_err']:.3f} | {r['sin_phi']:.3f}, {r['b']:.2f}, "
                   f"{r['major_angle']:.0f}° | {r['seconds'] / 60:.1f} min |")
    out += ["", f"Fits: μ = {f['mu_min']:.3f} + {f['b']:.2f} I, "
            f"φ = {f['phi_max']:.3f} − {f['a']:.2f} I.", "",
            "![shear cell at constant pressure: μ(I) and φ(I)](mu_of_i.png)"]
    return "\n".join(out)


def write_csv(results, path) -> None:
    keys = ("I", "shear_rate", "pressure", "spheres", "mu", "mu_err", "phi", "phi_err", "pzz",
            "pzz_err", "sin_phi", "b", "major_angle")
    lines = [",".join(keys)] + [",".join(repr(r[k]) for k in keys) for r in results]
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def plot(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    i = np.array([r["I"] for r in results])
    f = fits(results)
    fine = np.geomspace(i.min() / 2, i.max() * 2, 100)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.8))
    a1.errorbar(i, [r["mu"] for r in results], [r["mu_err"] for r in results], fmt="o",
                label="pdyn, shear cell at constant P")
    a1.plot(fine, jop_mu(fine), "-", label="Jop et al. 2006, glass beads")
    a1.plot(fine, f["mu_min"] + f["b"] * fine, ":", label="linear fit")
    a2.errorbar(i, [r["phi"] for r in results], [r["phi_err"] for r in results], fmt="o",
                label="pdyn")
    a2.plot(fine, f["phi_max"] - f["a"] * fine, ":", label="linear fit")
    a1.set(xscale="log", xlabel="inertial number I", ylabel="μ = −σ_xz / σ_zz")
    a2.set(xscale="log", xlabel="inertial number I", ylabel="solid fraction φ")
    save_figure(fig, (a1, a2), path)


def _point(args_i):
    args, i = args_i
    return run_point(i, args.pressure, args.scale, args.settle, args.average, args.every,
                     args.seed)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inertial", type=float, nargs="+", default=[0.02, 0.05, 0.1, 0.2, 0.4])
    p.add_argument("--pressure", type=float, default=200.0, help="target P* (Pa)")
    p.add_argument("--scale", type=float, default=1.0, help="spheres / 500")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--settle", type=float, default=2.0, help="strain before averaging")
    p.add_argument("--average", type=float, default=4.0, help="strain averaged over")
    p.add_argument("--every", type=int, default=20, help="steps between samples")
    add_outputs(p)
    args = p.parse_args(argv)
    results = side_by_side(_point, [(args, i) for i in args.inertial], args.jobs)
    write_json(args.json, {"results": results, "fits": fits(results)})
    text = table(results, command_line(), STARTED.date().isoformat())
    publish(args, "mu_of_i", text, results, write_csv, plot)


if __name__ == "__main__":
    main()
