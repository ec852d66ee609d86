"""The cohesion validations of ``docs/validation.md`` ("Cohesion: pull-off, the JKR curve,
sticking, liquid bridges", issue 49): each model's runs against its closed form.

    python benchmarks/cohesion_validation.py --json docs/cohesion_validation.json --doc docs/validation.md

Spheres of radius 5 mm (E = 10⁷ Pa, ν = 0.3, ρ = 1000 kg/m³), elastic (no damping), no
gravity, a floor wall; the closed forms are written here independently of ``pdyn``'s kernels
(``tests/dynamics/test_cohesion.py`` reads them from this file):

* **DMT pull-off** (:func:`dmt_pull_off`): two spheres and a sphere on the floor barely
  touching (δ = 10⁻¹² R): the contact network's force against 2π w R* ([DMT1975]).
* **JKR** (:func:`jkr_impact`): a sphere flies at the floor at 0.01 m/s (held) and 0.05 m/s
  (torn off); every step from the touch on, the force against JKR's F(δ) (:func:`jkr_force`,
  the contact radius by bisection on δ(a) = a²/R − √(2π w a/E*), [JKR1971]), loading,
  unloading and past zero overlap, as a share of F_c = 3/2 π w R*; the largest pull over the
  steps against F_c, and the kernel's force at the overlap of the largest pull.
* **Sticking** (:func:`collide`): two spheres head on at factors of the sticking speed:
  held (stuck) after 0.02 s or separated, and the speed they part at against the energy left,
  √(v² − V_s²). V_s is the integral of the model's loop (:func:`sticking_speed`):
  ½ m* V_s² = ∫_{δ_c}^0 |F_JKR| dδ, which is C (F_c⁵/(E*² R* m*³))^{1/6} with C = 1.035;
  [ThorntonNing1998]'s C = 1.84 (:data:`TN_CONSTANT`) is run too.
* **Liquid bridge** (:func:`bridge`): two touching spheres parting at 0.2 m/s; every step
  apart, the force against [Willett2000]'s expression (:func:`willett`) and the separation at
  which it vanished against [Lian1993]'s rupture distance S_c = (1 + θ/2) V^{1/3}.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _common import STARTED, command_line, write_doc_block, write_json

from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.dynamics.cohesion import JKR, cohesion_force, jkr_limit
from pdyn.dynamics.laws import effective_modulus
from pdyn.simulation import Simulation

#: the spheres: radius (m), Young's modulus (Pa), Poisson ratio, density (kg/m³); the work of
#: adhesion (J/m²) of the JKR and DMT runs
JR, JE, JNU, JRHO, JW = 0.005, 1e7, 0.3, 1000.0, 1.0
JES = effective_modulus(JE, JNU)
#: the liquid bridge: volume (m³), surface tension (N/m, water), contact angle (degrees)
LV, LG, LT = 2e-9, 0.072, 20.0
#: Thornton & Ning's constant of the sticking speed C (F_c⁵/(E*² R* m*³))^{1/6}
TN_CONSTANT = 1.84


# ------------------------------------------------------------------ closed forms
def jkr_force(delta, r_eff, w=JW, e=JES):
    """JKR's force (N, > 0 repulsive) at overlap ``delta`` (m) on the branch stable under a
    given displacement ([JKR1971]): the contact radius by bisection on δ(a) = a²/R −
    √(2π w a/E*) above a_c (where δ(a) is least), F = 4E* a³/(3R) − √(8π w E* a³)."""
    lo, hi = (math.pi * w * r_eff**2 / (8 * e)) ** (1 / 3), r_eff
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid * mid / r_eff - math.sqrt(2 * math.pi * w * mid / e) < delta:
            lo = mid
        else:
            hi = mid
    a = 0.5 * (lo + hi)
    return 4 * e * a**3 / (3 * r_eff) - math.sqrt(8 * math.pi * w * e * a**3)


def sticking_speed(w, e, r_eff, m_eff):
    """The relative speed (m/s) below which two elastic JKR spheres stick, by the approach of
    [ThorntonNing1998] applied to the model as implemented: ½ m* V_s² = the work of the loop
    ∫_{δ_c}^0 |F| dδ (the contact forms at δ = 0, opens at δ_c), in closed form over the
    contact radius from a_c (δ_c) to a(0)."""
    A, B, C = 4 * e / (3 * r_eff), math.sqrt(8 * math.pi * w * e), math.sqrt(2 * math.pi * w / e)
    a_c = (math.pi * w * r_eff**2 / (8 * e)) ** (1 / 3)
    a_0 = (2 * math.pi * w * r_eff**2 / e) ** (1 / 3)

    def work(a):  # ∫ −F(a) δ'(a) da, F = A a³ − B a^{3/2}, δ' = 2a/R − (C/2) a^{-1/2}
        return -(2 * A * a**5 / (5 * r_eff) - (A * C / 2 + 2 * B / r_eff) * a**3.5 / 3.5
                 + B * C / 4 * a * a)
    return math.sqrt(2 * (work(a_0) - work(a_c)) / m_eff)


def speed_scale(w, e, r_eff, m_eff):
    """(F_c⁵/(E*² R* m*³))^{1/6} (m/s), F_c = 3/2 π w R*: the sticking speed over its constant."""
    f_c = 1.5 * math.pi * w * r_eff
    return (f_c**5 / (e * e * r_eff * m_eff**3)) ** (1 / 6)


def willett(separation, r_eff, volume=LV, tension=LG, angle=LT):
    """[Willett2000]'s force (N, attractive) at ``separation`` S ≥ 0: 2π R γ cos θ/(1 + 2.1 Ŝ
    + 10 Ŝ²), Ŝ = (S/2) √(R/V), R = 2 R*."""
    r = 2 * r_eff
    s = separation / 2 * math.sqrt(r / volume)
    return 2 * math.pi * r * tension * math.cos(math.radians(angle)) / (1 + 2.1 * s + 10 * s * s)


def rupture(volume=LV, angle=LT):
    """[Lian1993]'s rupture separation (m): (1 + θ/2) V^{1/3}."""
    return (1 + math.radians(angle) / 2) * volume ** (1 / 3)


# ------------------------------------------------------------------ the runs
def run_of(positions, velocities, cohesion: dict, dt=None, neighbour_skin=1e-4,
           initial_overlap="refuse"):
    """Spheres of radius :data:`JR`, elastic, with the ``cohesion`` fields of ``[contact]``,
    no gravity, periodic sides and a floor at z = −0.05 m."""
    return Simulation(SimulationConfig(
        contact=ContactConfig(law="hertz", youngs_modulus=JE, poisson_ratio=JNU, **cohesion),
        box=BoxConfig(lo=(-0.05, -0.05, -0.05), hi=(0.05, 0.05, 0.05),
                      boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=positions, radii=[JR] * len(positions),
                                  density=JRHO, velocities=velocities),
        gravity=(0.0, 0.0, 0.0), progress=False, neighbour_skin=neighbour_skin, dt=dt,
        initial_overlap=initial_overlap))


def jkr_run(positions, velocities, dt=None, neighbour_skin=1e-4):
    """:func:`run_of` with JKR adhesion of work :data:`JW`."""
    return run_of(positions, velocities, {"cohesion": "jkr", "work_of_adhesion": JW}, dt,
                  neighbour_skin)


def bridged(positions, velocities, **given):
    """:func:`run_of` with liquid bridges of :data:`LV`, :data:`LG`, :data:`LT` (``given``
    replaces any) and a skin past their rupture distance."""
    return run_of(positions, velocities, {"cohesion": "liquid_bridge", **{
        "liquid_volume": LV, "surface_tension": LG, "contact_angle": LT, **given}},
        neighbour_skin=2e-3)


def by_gid(sim, field):
    """The owned spheres' ``field``, in global-id order."""
    h = sim.store.owned
    return getattr(sim.store, field)[h][np.argsort(sim.store.gid[h])]


def dmt_pull_off() -> dict:
    """Two spheres and a sphere on the floor touching by 10⁻¹² R: the contact network's
    forces over 2π w R* (R* = R/2 and R)."""
    delta = 1e-12 * JR
    sim = run_of([[0.0, 0.0, -0.05 + JR - delta], [0.0, 0.0, -0.05 + 3 * JR - 2 * delta]],
                 [[0.0] * 3] * 2, {"cohesion": "dmt", "work_of_adhesion": JW},
                 initial_overlap="allow")
    net = sim.contact_network()
    r_eff = np.where(net["id"].min(axis=1) < 0, JR, JR / 2)
    ratio = -net["force"] / (2 * math.pi * JW * r_eff)
    return {"model": "dmt", "contacts": len(ratio), "worst": float(np.abs(ratio - 1).max())}


def jkr_impact(speed: float, steps: int = 3000) -> dict:
    """A sphere flying at the floor at ``speed``: from the touch on, the largest |F − F_JKR(δ)|
    over the steps (held ones) as a share of F_c, the largest pull over F_c, whether it was
    held at the end, and the steps over |δ_c| at the impact speed."""
    sim = jkr_run([[0.0, 0.0, -0.05 + JR + 2e-6]], [[0.0, 0.0, -speed]])
    h = sim.store.owned[0]
    f_c = 1.5 * math.pi * JW * JR
    limit = jkr_limit(JW, JES, JR)
    touched = False
    worst = pull = 0.0
    held = 0
    for _ in range(steps):
        sim.run(1, progress=False)
        delta = JR - (sim.store.pos[h, 2] + 0.05)
        force = sim.store.force[h, 2]
        touched = touched or delta >= 0.0
        if touched and delta >= limit:
            worst = max(worst, abs(force - jkr_force(delta, JR)) / f_c)
            pull = max(pull, -force / f_c)
            held += bool(delta < 0.0)
    return {"speed": speed, "steps_over_limit": -limit / (speed * sim.dt),
            "curve_error": float(worst),
            "largest_pull": float(pull), "held_steps": int(held),
            "held_at_end": bool(JR - (sim.store.pos[h, 2] + 0.05) >= limit)}


def jkr_kernel_pull_off() -> float:
    """The kernel's pull at the overlap of the largest pull, −a²/(3R*) (a³ = 9π w R*²/(8E*)),
    over 3/2 π w R*, worst over R* = R, R/2 and 10 µm, less 1."""
    worst = 0.0
    for r_eff in (JR, JR / 2, 1e-5):
        a_p = (9 * math.pi * JW * r_eff**2 / (8 * JES)) ** (1 / 3)
        pull = cohesion_force(JKR.of(JW, JES), -a_p**2 / (3 * r_eff), r_eff, math.inf)[0]
        worst = max(worst, abs(pull / (1.5 * math.pi * JW * r_eff) - 1))
    return worst


def collide(factor: float, constant: float | None = None, dt=4e-6, steps=5000) -> dict:
    """Two JKR spheres head on at ``factor`` times the sticking speed (``constant``: C (F_c⁵/
    (E*² R* m*³))^{1/6} with that C; None: :func:`sticking_speed`): stuck (the gap within
    |δ_c| after ``steps``) or the speed they part at over √(v² − V_s²)."""
    m = JRHO * 4 / 3 * math.pi * JR**3
    v_s = sticking_speed(JW, JES, JR / 2, m / 2)
    given = v_s if constant is None else constant * speed_scale(JW, JES, JR / 2, m / 2)
    v = factor * given
    sim = jkr_run([[0.0, 0.0, -JR - 1e-8], [0.0, 0.0, JR + 1e-8]],
                  [[0.0, 0.0, v / 2], [0.0, 0.0, -v / 2]], dt=dt)
    sim.run(steps, progress=False)
    z, w = by_gid(sim, "pos")[:, 2], by_gid(sim, "vel")[:, 2]
    gap = z[1] - z[0] - 2 * JR
    stuck = bool(gap < -jkr_limit(JW, JES, JR / 2))
    parting = float("nan") if stuck or v <= v_s else (w[1] - w[0]) / math.sqrt(v * v - v_s * v_s)
    return {"constant": constant or v_s / speed_scale(JW, JES, JR / 2, m / 2),
            "factor": factor, "speed": v, "stuck": stuck, "parting_ratio": parting,
            "steps_over_limit": -jkr_limit(JW, JES, JR / 2) / (v * dt)}


def bridge(steps: int = 400) -> dict:
    """Two touching spheres parting at 0.2 m/s: the largest |F − F_Willett(S)| over the steps
    apart as a share of the touching force, and the last separation with a force and the first
    without, over S_c."""
    sim = bridged([[0.0, 0.0, -JR], [0.0, 0.0, JR]], [[0.0, 0.0, -0.1], [0.0, 0.0, 0.1]])
    f_0 = willett(0.0, JR / 2)
    worst, last, first = 0.0, 0.0, math.inf
    apart = 0
    for _ in range(steps):
        sim.run(1, progress=False)
        gap = float(np.diff(by_gid(sim, "pos")[:, 2])[0] - 2 * JR)
        f = by_gid(sim, "force")[1, 2]
        if f != 0.0 and gap > 0.0:
            apart += 1
            worst = max(worst, abs(-f - willett(gap, JR / 2)) / f_0)
            last = max(last, gap)
        elif f == 0.0:
            first = min(first, gap)
    return {"apart_steps": apart, "force_error": worst, "last_held": last / rupture(),
            "first_free": first / rupture()}


# ------------------------------------------------------------------ report
def report(rows: dict) -> str:
    """Markdown: the tables of the validations."""
    d, k = rows["dmt"], rows["jkr_kernel"]
    out = ["| check | closed form | measured |", "|---|---|---|",
           f"| DMT pull-off, {d['contacts']} contacts (sphere pair, floor) | 2π w R* | "
           f"within {d['worst']:.1e} |",
           f"| JKR pull-off, the kernel at δ = −a²/(3R*) | 3/2 π w R* | within {k:.1e} |"]
    for r in rows["jkr"]:
        out.append(f"| JKR impact at {r['speed']:g} m/s ({r['steps_over_limit']:.0f} steps over"
                   f" \\|δ_c\\|): F(δ) every step, {r['held_steps']} held past touching; largest "
                   f"pull | F_JKR(δ); 3/2 π w R* | \\|ΔF\\| ≤ {r['curve_error']:.1e} F_c; "
                   f"{r['largest_pull']:.4f} F_c; {'held' if r['held_at_end'] else 'torn off'}"
                   " at the end |")
    b = rows["bridge"]
    out.append(f"| Liquid bridge parting at 0.2 m/s, {b['apart_steps']} steps apart | Willett's "
               f"F(S) | \\|ΔF\\| ≤ {b['force_error']:.1e} F(0) |")
    out.append(f"| Liquid bridge rupture | S_c = (1 + θ/2) V^(1/3) | last held at "
               f"{b['last_held']:.4f} S_c, first free at {b['first_free']:.4f} S_c |")
    out += ["", "| sticking: constant C | v / V_s | stuck? | parting speed / √(v² − V_s²) | "
            "steps over \\|δ_c\\| |", "|---|---|---|---|---|"]
    for r in rows["sticking"]:
        parting = "—" if r["stuck"] else f"{r['parting_ratio']:.3f}"
        out.append(f"| {r['constant']:.3f} | {r['factor']:g} | "
                   f"{'yes' if r['stuck'] else 'no'} | {parting} | {r['steps_over_limit']:.0f} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--doc", default=None, help="write the tables into this markdown file's "
                    "block <!-- cohesion_validation: begin/end -->")
    args = ap.parse_args(argv)
    rows = {"dmt": dmt_pull_off(), "jkr_kernel": jkr_kernel_pull_off(),
            "jkr": [jkr_impact(0.01), jkr_impact(0.05)], "bridge": bridge(),
            "sticking": [collide(0.98), collide(1.02), collide(0.98, TN_CONSTANT),
                         collide(1.02, TN_CONSTANT)]}
    text = report(rows)
    print(text)
    write_json(args.json, {"benchmark": "cohesion_validation", "rows": rows})
    if args.doc:
        write_doc_block(args.doc, "cohesion_validation",
                        f"```\n{command_line()}\n```\n\nRun {STARTED:%Y-%m-%d}.\n\n{text}")


if __name__ == "__main__":
    main()
