"""The plots of ``docs/validation.md``: pdyn at its default time step against the closed-form
solutions of the [ChungOoi2011] particle-impact tests and of a sphere on a plane.

    python benchmarks/validation.py                 # writes docs/validation_*.png and a JSON
    python benchmarks/validation.py --out /tmp/v --json v.json

Figures: (1) normal elastic impact on a wall, force and overlap against time vs Hertz's
solution (tests 1–2); (2) measured restitution vs asked e for both laws, the spread over where
in a step the impact falls (test 3); (3) oblique impact at incident angle θ: tangential speed
and spin after the impact vs the rigid-body solution and the converged reference of pdyn's
contact model (test 4); (4) impact with initial spin; (5) the normalised rebound Ψ₂ against
Ψ₁ of walls and two spheres, slip made by sliding or by spin, vs the reference and vs Mindlin
and Deresiewicz's theory with microslip (tests 4–8);
(6) two equal spheres with equal spins (tests 7–8); (7) a sphere launched sliding on a floor:
v and ω r meeting at 5/7 v₀, and the incline's acceleration vs tan θ (rolls at 5/7 g sin θ
below tan θ = 7/2 μ, slides above).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from restitution import sweep  # noqa: E402

from pdyn.validation import (GLASS, hertz_impact, impact, oblique, on_floor,  # noqa: E402
                             pair_oblique, psi_mindlin_deresiewicz, psi_reference, psi_rigid,
                             wall_psi, wall_rebound)

G = 9.81


def normal_impact(ax, speed=1.0):
    run = impact((0.0, 0.0, -speed), record=True)
    th = hertz_impact(speed)
    e_star = GLASS["youngs_modulus"] / (2 * (1 - GLASS["poisson_ratio"] ** 2))
    # Hertz's force history: the overlap equation m δ'' = −4/3 E* √R δ^(3/2) integrated finely
    d, v, dt = 0.0, speed, th["duration"] / 20000
    r, m = GLASS["radius"], GLASS["density"] * 4 / 3 * math.pi * GLASS["radius"] ** 3
    ts, fs = [0.0], [0.0]
    while True:
        f = 4 / 3 * e_star * math.sqrt(r) * max(d, 0.0) ** 1.5
        v -= f / m * dt
        d += v * dt
        if d < 0:
            break
        ts.append(ts[-1] + dt)
        fs.append(4 / 3 * e_star * math.sqrt(r) * d**1.5)
    t0 = run["time"][0] - run["overlap"][0] / speed
    ax.plot(np.array(ts) * 1e6, fs, "k-", label="Hertz")
    ax.plot((run["time"] - t0) * 1e6, run["force"], "o", ms=4, label="pdyn")
    ax.set(xlabel="time since first touch (µs)", ylabel="normal force (N)",
           title=f"normal impact on a wall, {speed:g} m/s (dt = {run['dt']:.3g} s)")
    ax.legend()
    return {"peak_force_ratio": float(run["force"].max() / th["force"]),
            "peak_overlap_ratio": float(run["overlap"].max() / th["overlap"])}


def restitution(ax):
    out = {}
    for law, colour in (("linear", "C0"), ("hertz", "C1")):
        run = sweep(law)
        asked = np.array(run["asked"])
        ax.fill_between(asked, 100 * (np.array(run["min"]) / asked - 1),
                        100 * (np.array(run["max"]) / asked - 1), color=colour, alpha=0.4,
                        label=f"pdyn {law}")
        out[law] = run
    for y in (-2, 2):
        ax.axhline(y, color="k", ls="--", lw=0.8)
    ax.set(xlabel="asked e", ylabel="measured / asked − 1 (%), range over 8 impact phases",
           title="restitution at the default dt (dashed: ±2 %)")
    ax.legend()
    return out


def _rebounds(ax, x, runs, model=None, **labels) -> dict:
    """Plot v_t and ω r after impact (pdyn points, rigid-body lines, and with ``model``,
    (v_t, ω r) arrays, the converged reference of pdyn's contact model) against ``x``."""
    for k, (key, mark, name) in enumerate((("vt", "o", "v_t after"), ("wr", "s", "ω r after"))):
        ax.plot(x, [o[key] for o in runs], mark, ms=4, color=f"C{k}", label=f"pdyn {name}")
        ax.plot(x, [o[key + "_rigid"] for o in runs], "--", lw=1, color=f"C{k}",
                label=f"rigid body {name}")
        if model is not None:
            ax.plot(x, model[k], "-", color=f"C{k}", label=f"pdyn's model (reference) {name}")
    ax.set(ylabel="m/s", **labels)
    ax.legend(fontsize=7)
    return {"x": list(map(float, x)), "runs": [{k: float(v) for k, v in o.items()}
                                               for o in runs]}


def _wall_model(runs, mu):
    """The reference's (v_t, ω r) after each wall run of :func:`oblique` (elastic)."""
    vt = np.array([o["vt_in"] for o in runs])
    wr = np.array([o["wr_in"] for o in runs])
    vn = np.array([o["vn_in"] for o in runs])
    return wall_rebound(vt, wr, vn, mu, psi_reference((vt - wr) / (mu * vn)))


def oblique_angles(ax, mu=0.3):
    angles = np.arange(2.0, 89.0, 4.0)
    ax.axvline(math.degrees(math.atan(3.5 * mu * 2)), color="grey", lw=0.8)
    runs = [oblique(a, mu=mu, e=1.0) for a in angles]
    return _rebounds(ax, angles, runs, _wall_model(runs, mu),
                     xlabel="incident angle θ (deg), impact speed 1 m/s",
                     title=f"oblique impact on a wall, μ = {mu:g}, e = 1")


def oblique_spin(ax, mu=0.1, theta=45.0):
    spins = np.linspace(-150.0, 150.0, 25)
    runs = [oblique(theta, mu=mu, e=1.0, spin=w) for w in spins]
    return _rebounds(ax, spins * GLASS["radius"], runs, _wall_model(runs, mu),
                     xlabel="initial ω r (m/s)",
                     title=f"impact at {theta:g}° with spin, μ = {mu:g}, e = 1")


def oblique_psi(ax):
    """Ψ₂ against Ψ₁ ([ChungOoi2011]'s normalisation, e = 1): pdyn's wall and two-sphere
    runs, slip made by sliding or by spin, against the reference and its brackets, and
    Mindlin and Deresiewicz's theory (microslip, [MawBarberFawcett1976]'s problem)."""
    fine = np.linspace(0.0, 12.0, 481)
    ref = psi_reference(fine)
    ax.plot(fine, ref, "k-", lw=1.5, label="pdyn's model, converged (reference)")
    ax.plot(fine, psi_rigid(fine), "k--", lw=1, label="rigid body (rolls / slides)")
    ax.plot(fine, psi_reference(fine, cap=False), "k:", lw=1, label="pdyn's model, no slip")
    ax.plot(fine, psi_mindlin_deresiewicz(fine), "-", color="tab:red", lw=1.5,
            label="Mindlin–Deresiewicz theory (microslip)")
    ax.plot(fine, psi_mindlin_deresiewicz(fine, slip=False), ":", color="tab:red", lw=1,
            label="Mindlin–Deresiewicz, no slip")
    psi1 = np.arange(0.25, 12.01, 0.5)
    theory = psi_mindlin_deresiewicz(psi1)
    out = {"psi1": psi1.tolist(), "reference": psi_reference(psi1).tolist(),
           "mindlin_deresiewicz": theory.tolist()}
    cases = (("wall, sliding, μ = 0.3, V_n = 1 m/s", "o",
              lambda p: wall_psi(p, mu=0.3, vn=1.0)),
             ("wall, spin only, μ = 0.1, V_n = 3.9 m/s", "s",
              lambda p: wall_psi(p, mu=0.1, vn=3.9, by_spin=True)),
             ("two spheres, sliding, μ = 0.3, V_n = 0.2 m/s", "^",
              lambda p: pair_oblique(0.1, p * 0.03)["psi2"]),
             ("two spheres, equal spins, μ = 0.3, V_n = 0.2 m/s", "v",
              lambda p: pair_oblique(0.1, 0.0, p * 3.0, p * 3.0)["psi2"]))
    for name, mark, run in cases:
        got = np.array([run(p) for p in psi1])
        ax.plot(psi1, got, mark, ms=4, mfc="none", label=f"pdyn: {name}")
        out[name] = {"psi2": got.tolist(),
                     "max_gap": float(np.abs(got - np.array(out["reference"])).max()),
                     "max_gap_theory": float(np.abs(got - theory).max())}
    ax.set(xlabel="Ψ₁ = V_s / (μ V_n)", ylabel="Ψ₂ = V_s' / (μ V_n')", ylim=(-2.5, 6.0),
           title="normalised rebound of elastic oblique impacts")
    ax.legend(fontsize=7)
    return out


def two_spheres(ax, mu=0.3, vn=0.1):
    """Two equal spheres meeting at ±0.1 m/s with equal spins ω (tests 7–8): a's v_t and
    ω r after, against the rigid-body solution and the reference."""
    r = GLASS["radius"]
    spins = np.linspace(-30.0, 30.0, 25)
    runs = []
    for w in spins:
        o = pair_oblique(vn, 0.0, w, w, mu=mu)
        runs.append({"vt": o["vel"][0][1], "wr": o["omega"][0][2] * r,
                     "vt_rigid": o["vt_rigid"], "wr_rigid": o["wr_rigid"][0],
                     "psi1": o["psi1"], "psi2": o["psi2"],
                     "angular_momentum_change": float(np.linalg.norm(
                         o["angular_momentum"][1] - o["angular_momentum"][0])),
                     "momentum_change": float(np.abs(o["momentum"][1]
                                                     - o["momentum"][0]).max())})
    slip = 2.0 * r * spins  # relative slip V_s; V_n = 2 vn (e = 1)
    change = psi_reference(slip / (2.0 * mu * vn)) * mu * 2.0 * vn - slip
    model = (change / 7.0, r * spins + 5.0 / 14.0 * change)  # a: v_t by ΔV_s/7, ω r by 5/14
    ax.axvline(3.5 * mu * 2.0 * vn, color="grey", lw=0.8)
    ax.axvline(-3.5 * mu * 2.0 * vn, color="grey", lw=0.8)
    return _rebounds(ax, spins * r, runs, model, xlabel="initial ω r of each sphere (m/s)",
                     title=f"two equal spheres, ±{vn:g} m/s, equal spins, μ = {mu:g}, e = 1")


def rolling(ax, mu=0.3, v0=1.0):
    sim = on_floor((v0, 0.0, 0.0), friction=mu, restitution=0.5, gravity=(0.0, 0.0, -G))
    h = sim.store.owned
    r = sim.store.radius[h][0]
    t_end = 2.0 * 2 * v0 / (7 * mu * G)
    ts, vs, ws = [], [], []
    every = max(1, int(t_end / sim.dt / 200))
    while sim.time < t_end:
        sim.run(every, progress=False)
        ts.append(sim.time)
        vs.append(sim.store.vel[h, 0][0])
        ws.append(sim.store.omega[h, 1][0] * r)
    ts = np.array(ts)
    t_roll = 2 * v0 / (7 * mu * G)
    ax.plot(ts, vs, "o", ms=3, label="pdyn v")
    ax.plot(ts, ws, "s", ms=3, label="pdyn ω r")
    ax.plot(ts, np.where(ts < t_roll, v0 - mu * G * ts, 5 / 7 * v0), "k-", label="theory v")
    ax.plot(ts, np.where(ts < t_roll, 2.5 * mu * G * ts, 5 / 7 * v0), "k--",
            label="theory ω r")
    ax.set(xlabel="time (s)", ylabel="m/s", title=f"sliding to rolling, μ = {mu:g}: 5/7 v₀")
    ax.legend(fontsize=7)
    return {"final_v_over_v0": float(vs[-1] / v0), "final_wr_over_v0": float(ws[-1] / v0)}


def incline(ax, mu=0.1):
    angles = np.array([5.0, 10.0, 15.0, 18.0, 22.0, 26.0, 30.0, 40.0])
    measured = []
    for a in angles:
        th = math.radians(a)
        sim = on_floor((0.0, 0.0, 0.0), friction=mu, restitution=0.5,
                       gravity=(G * math.sin(th), 0.0, -G * math.cos(th)))
        h = sim.store.owned
        sim.run(int(0.1 / sim.dt), progress=False)
        measured.append(sim.store.vel[h, 0][0] / sim.time / G)
    tan = np.tan(np.radians(np.linspace(1, 42, 200)))
    th = np.arctan(tan)
    theory = np.where(tan < 3.5 * mu, 5 / 7 * np.sin(th), np.sin(th) - mu * np.cos(th))
    ax.plot(tan, theory, "k-", label="theory")
    ax.plot(np.tan(np.radians(angles)), measured, "o", label="pdyn")
    ax.axvline(3.5 * mu, color="grey", lw=0.8)
    ax.set(xlabel="tan θ", ylabel="a / g", title=f"sphere on an incline, μ = {mu:g}")
    ax.legend()
    return {"angles": angles.tolist(), "a_over_g": [float(x) for x in measured]}


def main(argv=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs"),
                   help="folder for validation_*.png")
    p.add_argument("--json", help="write the numbers to this JSON file")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name, fn in (("normal_impact", normal_impact), ("restitution", restitution),
                     ("oblique_angle", oblique_angles), ("oblique_spin", oblique_spin),
                     ("oblique_psi", oblique_psi), ("two_spheres", two_spheres),
                     ("rolling", rolling), ("incline", incline)):
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        results[name] = fn(ax)
        fig.tight_layout()
        fig.savefig(out / f"validation_{name}.png", dpi=90)
        plt.close(fig)
        print(f"{name}: written {out / f'validation_{name}.png'}", flush=True)
    write_json(args.json, {"benchmark": "validation", "results": results})


if __name__ == "__main__":
    main()
