"""The plots of ``docs/validation.md``: pdyn at its default time step against the closed-form
solutions of the [ChungOoi2011] particle-impact tests and of a sphere on a plane.

    python benchmarks/validation.py                 # writes docs/validation_*.png and a JSON
    python benchmarks/validation.py --out /tmp/v --json v.json

Figures: (1) normal elastic impact on a wall, force and overlap against time vs Hertz's
solution (tests 1–2); (2) measured restitution vs asked e for both laws, the spread over where
in a step the impact falls (test 3); (3) oblique impact at incident angle θ: tangential speed
and spin after the impact vs the rigid-body solution (test 4); (4) impact with initial spin; (5) a sphere launched sliding on a floor: v and ω r meeting at 5/7 v₀, and the
incline's acceleration vs tan θ (rolls at 5/7 g sin θ below tan θ = 7/2 μ, slides above).
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

from pdyn.validation import GLASS, hertz_impact, impact, oblique, on_floor  # noqa: E402

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


def _rebounds(ax, x, runs, **labels) -> dict:
    """Plot v_t and ω r after impact (pdyn points, rigid-body lines) against ``x``."""
    for key, mark, name in (("vt", "o", "v_t after"), ("wr", "s", "ω r after")):
        ax.plot(x, [o[key] for o in runs], mark, ms=4, label=f"pdyn {name}")
        ax.plot(x, [o[key + "_rigid"] for o in runs], "-", label=f"rigid body {name}")
    ax.set(ylabel="m/s", **labels)
    ax.legend(fontsize=7)
    return {"x": list(map(float, x)), "runs": [{k: float(v) for k, v in o.items()}
                                               for o in runs]}


def oblique_angles(ax, mu=0.3):
    angles = np.arange(2.0, 89.0, 4.0)
    ax.axvline(math.degrees(math.atan(3.5 * mu * 2)), color="grey", lw=0.8)
    return _rebounds(ax, angles, [oblique(a, mu=mu, e=1.0) for a in angles],
                     xlabel="incident angle θ (deg), impact speed 1 m/s",
                     title=f"oblique impact on a wall, μ = {mu:g}, e = 1")


def oblique_spin(ax, mu=0.1, theta=45.0):
    spins = np.linspace(-150.0, 150.0, 13)
    return _rebounds(ax, spins * GLASS["radius"],
                     [oblique(theta, mu=mu, e=1.0, spin=w) for w in spins],
                     xlabel="initial ω r (m/s)",
                     title=f"impact at {theta:g}° with spin, μ = {mu:g}, e = 1")


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
