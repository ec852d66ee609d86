"""The stress validations of ``docs/validation.md`` ("Stress: fields and wall pressure maps"):
a piston's load against the fields' stress, a silo's wall pressure against Janssen's
profile, and which of issue 47's validations the tests hold.

    python benchmarks/stress_validation.py --json /tmp/stress.json --doc docs/validation.md
    python benchmarks/stress_validation.py --quick          # small, for a look (a minute)

**Piston** (:func:`piston`): ``layers`` × 25 frictional spheres (r 4–4.5 mm) between a floor
and a servo piston held at 10 N, periodic across (5 cm × 5 cm), no gravity; once the load is
steady, over a window of steps: the piston's load from its wall pressure map (Σ σ_n A over
its patches), its spread over the patches, and the bed's mean σ_zz from a ``bins`` field of
one cell over [0, H] (H the piston's start) scaled to the bed's height, σ_zz H / z_p, against
−F/A (the virial at rest without body forces: Σ b ⊗ F = Σ_walls c ⊗ F).

**Silo** (:func:`silo`): a square column ``width`` diameters wide, ``n`` spheres (r = 1 mm
± 10 %, ρ = 2500 kg/m³, a linear spring of 100 N/m, e = 0.3, ``friction`` μ with each
other and the walls) dropped from a loose jittered lattice and left to settle
(``silo_settle`` s), its four side walls planes sliding up at 1 cm/s throughout, so that
their friction is mobilised everywhere as Janssen assumes; then over a window of steps the
side walls' pressure maps in horizontal bands of about two diameters: the normal stress σ_h
against the depth below the surface (the 99th percentile of the centres), fitted with
Janssen's σ_h = p_∞ (1 − e^(−d/λ)) (``pdyn.analysis.janssen.wall_pressure_fit``), K =
p_∞/(ρ_b g λ) and the wall friction the profile mobilises, μ_w = ρ_b g A/(P p_∞), beside the
one the maps measure, Σ|τ_z| / Σ σ_n over the walls' bands; and from a ``bins`` field of the
same bands (``janssen.field_stress_profile``) the cross-section's vertical stress σ_v(d),
Janssen's σ_v = ρ_b g λ (1 − e^(−d/λ)) fitted for λ, the floor's share of the weight and
K = σ_h/σ_v of the bulk; and the walls' profile once more with λ held at the bulk's (p_∞
alone fitted: in a narrow column the two-parameter λ of the walls scatters by a factor three
from seed to seed, the bulk's by 15 %).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import STARTED, command_line, write_doc_block, write_json  # noqa: E402
from bulk_validation import MATERIAL  # noqa: E402

from pdyn.analysis.janssen import field_stress_profile, wall_pressure_fit  # noqa: E402
from pdyn.analysis.packing import volume_between  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FULL = {"piston_layers": 6, "piston_steps": 3000, "silo_spheres": 2000, "silo_width": 8.0,
        "window": 2000, "silo_window": 20000, "silo_settle": 0.3}
#: the silo's contacts: a linear spring (N/m; overlaps below 10⁻³ d under its weight) and
#: its restitution, and the time it is left to settle before the window (s)
SILO_STIFFNESS, SILO_RESTITUTION, SILO_SETTLE = 100.0, 0.3, 0.15
#: the side walls slide up at this speed (m/s) so that their friction is mobilised everywhere
SILO_WALL_SPEED = 0.01
#: the silo's radii spread: uniform in (1 ± this) r, so that no crystal forms at the walls
SILO_SPREAD = 0.1
QUICK = {"piston_layers": 2, "piston_steps": 750, "silo_spheres": 300, "silo_width": 5.0,
         "window": 500, "silo_window": 10000, "silo_settle": 0.15}

#: issue 47's validations: what each checks, the test that holds it (None: none yet), its
#: tolerance
CHECKS = [
    ("CG density integrates to the mass; a kernel wider than the box gives the mean",
     "tests/fields/test_coarse.py::test_density_integrates_to_the_mass_and_stress_to_the_virial"
     ", ::test_kernel_wider_than_the_box_gives_the_mean", "10⁻¹⁴"),
    ("Virial at rest: Σ V_i σ_zz,i = −M g z_cm for a bed on a floor",
     "tests/fields/test_sphere_stress.py::test_virial_at_rest_is_the_weight_times_the_centre_"
     "of_mass_height", "10⁻⁶"),
    ("Periodic settled bed: σ_zz(z) = weight above per area (σ_xx = σ_yy not checked)",
     "tests/fields/test_coarse.py::test_settled_bed_stress_is_the_weight_above", "1 %"),
    ("Chute: σ_xz/σ_zz = tan θ through the bulk (less the window's ΔP); σ_zz = g cos θ ∫ρ dz",
     "tests/fields/test_chute_stress.py::test_chute_shear_over_normal_stress_is_tan_theta",
     "0.2 %"),
    ("Steady chute: I(z) from the fields = the Bagnold analysis' I(z)",
     "tests/fields/test_chute_stress.py::test_chute_inertial_number_from_the_fields_is_the_"
     "bagnold_analysis_one", "3 %"),
    ("Piston: mean σ_zz from the fields = −F/A",
     "tests/fields/test_wall_pressure.py::test_piston_stress_is_force_over_area", "0.5 %"),
    ("Silo: wall pressure follows Janssen's saturating profile (K fitted)",
     "tests/fields/test_janssen_silo.py::test_silo_wall_pressure_follows_janssen (the quick "
     "silo); the silo table", "K reported"),
    ("Frictionless packing: contact stress tensor symmetric",
     "tests/fields/test_sphere_stress.py::test_frictionless_tensors_are_symmetric", "rounding"),
    ("Cell pressure from the virial = pressure on the walls",
     "tests/fields/test_sphere_stress.py::test_confined_packing_cell_pressure_is_the_wall_"
     "pressure", "10⁻⁶"),
    ("Wall pressure maps: Σ σ_n A = the wall-force series' mean",
     "tests/fields/test_wall_pressure.py::test_map_totals_are_the_wall_force_series_mean",
     "10⁻¹²"),
]


def patch_table(walls: dict) -> dict:
    """Per patch of a snapshot's maps (each once): wall id, area, normal stress, shear traction
    and the area-weighted centroid of its drawn triangles."""
    v, t = walls["pressure/vertices"], walls["pressure/triangles"]
    patch = walls["pressure/patch"]
    tri_area = 0.5 * np.linalg.norm(np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]),
                                    axis=1)
    ids, first = np.unique(patch, return_index=True)
    drawn = np.bincount(patch, tri_area)[ids]
    centroid = np.stack([np.bincount(patch, tri_area * v[t].mean(axis=1)[:, a])[ids]
                         for a in range(3)], axis=1) / np.where(drawn > 0, drawn, 1.0)[:, None]
    return {"wall": walls["pressure/wall"][first], "area": walls["pressure/area"][first],
            "normal": walls["pressure/normal_stress"][first],
            "shear": walls["pressure/shear_stress"][first], "centroid": centroid}


def piston(layers: int, steps: int, window: int) -> dict:
    """The piston run (module docstring)."""
    from pdyn.config import FieldsConfig, OutputConfig
    from pdyn.io import read_fields, read_snapshot
    from pdyn.simulation import Simulation

    sys.path.insert(0, str(ROOT))
    from tests.mpi.scenes import SERVO_BOX, SERVO_FORCE, servo_bed

    lo, hi = SERVO_BOX
    with tempfile.TemporaryDirectory() as tmp:
        out = OutputConfig(folder=tmp, overwrite=True, snapshot_every=window,
                           wall_pressure=True, wall_patches=(2, 2))
        cfg = servo_bed(SERVO_FORCE, layers=layers, output=out)
        top = float(cfg.walls[0].point[2])
        cfg = cfg.with_(gravity=(0.0, 0.0, 0.0), fields=(FieldsConfig(
            name="bed", cells=(1, 1, 1), kernel="bins", lo=lo, hi=(hi[0], hi[1], top),
            every=1, window=window),))
        sim = Simulation(cfg)
        t0 = time.perf_counter()
        sim.run(steps)
        seconds = time.perf_counter() - t0
        snap = read_snapshot(Path(tmp) / "snapshots" / f"snap_{steps:08d}.h5")
        fields = read_fields(Path(tmp) / "fields" / f"bed_{steps:08d}.h5")
    p = patch_table(snap["walls"])
    on = p["wall"] == -3
    force = float((p["normal"][on] * p["area"][on]).sum())
    area = (hi[0] - lo[0]) * (hi[1] - lo[1])
    walls = sim.store.walls
    z_p = float(sim.store.pos[walls][sim.store.gid[walls] == -3][0, 2])
    szz = float(fields["stress"].reshape(3, 3)[2, 2])
    return {"spheres": 25 * layers, "steps": steps, "window": window, "target": SERVO_FORCE,
            "force": force, "force_over_area": force / area, "sigma_zz_bed": szz * top / z_p,
            "patch_spread": float(p["normal"][on].std() / p["normal"][on].mean()),
            "seconds": seconds}


def column_lattice(n: int, width_d: float, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``n`` spheres of radii uniform in (1 ± ``SILO_SPREAD``) r (r the ``MATERIAL`` radius, d
    = 2r) on a jittered square lattice filling a column ``width_d`` d wide from the floor
    up, layers 1.25 d apart: centres, radii and the box height (m)."""
    d, r_max = 2 * MATERIAL["radius"], MATERIAL["radius"] * (1 + SILO_SPREAD)
    per_row = max(int(width_d * d // (2.5 * r_max)), 1)
    a = width_d * d / per_row
    layer, rest = np.divmod(np.arange(n), per_row * per_row)
    iy, ix = np.divmod(rest, per_row)
    rng = np.random.default_rng(seed)
    radii = MATERIAL["radius"] * rng.uniform(1 - SILO_SPREAD, 1 + SILO_SPREAD, n)
    lo = np.stack([ix * a, iy * a, layer * 2.5 * r_max], axis=1)
    room = np.array([a - 2 * r_max, a - 2 * r_max, 0.5 * r_max])
    return lo + r_max + rng.uniform(0.0, 1.0, (n, 3)) * room, radii, \
        float((layer.max() + 2) * 2.5 * r_max)


def silo(mu: float, n: int, width_d: float, window: int, seed: int = 0,
         settle_seconds: float = SILO_SETTLE, folder: str | None = None) -> dict:
    """The silo run (module docstring); ``folder`` keeps its output (else a temporary one)."""
    from pdyn.config import (BoxConfig, ContactConfig, FieldsConfig, OutputConfig,
                             ParticlesConfig, SimulationConfig, WallConfig)
    from pdyn.io import read_fields, read_snapshot
    from pdyn.simulation import Simulation

    r, rho, g = MATERIAL["radius"], MATERIAL["density"], MATERIAL["gravity"]
    d = 2 * r
    L = width_d * d
    pos, radii, top = column_lattice(n, width_d, seed)
    bands = max(int(round(top / (2 * d))), 1)  # bands of about 2 d
    margin = d  # the box's own walls stand a diameter off: the side planes below act
    sides = tuple(WallConfig(type="plane", point=tuple(pt), normal=tuple(nm),
                             velocity=(0.0, 0.0, SILO_WALL_SPEED))
                  for pt, nm in (((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)),
                                 ((0, 0, 0), (0, 1, 0)), ((0, L, 0), (0, -1, 0))))
    with tempfile.TemporaryDirectory() as tmp:
        out = folder or tmp
        cfg = SimulationConfig(
            particles=ParticlesConfig(positions=pos, radii=radii, density=rho),
            box=BoxConfig(lo=(-margin, -margin, 0), hi=(L + margin, L + margin, top),
                          boundary=("wall",) * 3), walls=sides,
            contact=ContactConfig(law="linear", stiffness=SILO_STIFFNESS,
                                  restitution=SILO_RESTITUTION, friction=mu),
            gravity=(0, 0, -g), progress=False,
            output=OutputConfig(folder=out, overwrite=True, snapshot_every=window,
                                wall_pressure=True, wall_patches=(bands, 1)),
            fields=(FieldsConfig(name="column", cells=(1, 1, bands), kernel="bins",
                                 lo=(0, 0, 0), hi=(L, L, top), every=10,
                                 window=window // 10),))
        sim = Simulation(cfg)
        t0 = time.perf_counter()
        settle = int(math.ceil(settle_seconds / sim.dt / window)) * window
        sim.run(settle)
        ke = sim.kinetic_energy() / (4 / 3 * math.pi * rho * g * r * np.sum(radii ** 3))
        sim.run(window)
        seconds = time.perf_counter() - t0
        snap = read_snapshot(Path(out) / "snapshots" / f"snap_{sim.step_index:08d}.h5")
        fields = read_fields(Path(out) / "fields" / f"column_{sim.step_index:08d}.h5")
    z, radius = sim.store.pos[sim.store.owned, 2], sim.store.radius[sim.store.owned]
    surface = float(np.percentile(z, 99))
    phi = volume_between(z, radius, surface / 3, 2 * surface / 3) / (L * L * surface / 3)
    p = patch_table(snap["walls"])
    side = (p["wall"] <= -7) & (p["area"] > 0)  # the side planes: ids −7 … −10
    zc = p["centroid"][side, 2]
    bands_z = np.unique(np.round(zc, 9))
    depth, pressure = [], []
    for zb in bands_z:
        at = side & (np.abs(p["centroid"][:, 2] - zb) < 1e-9)
        depth.append(surface - zb)
        pressure.append(float((p["normal"][at] * p["area"][at]).sum() / p["area"][at].sum()))
    depth, pressure = np.array(depth), np.array(pressure)
    inside = depth > 0
    fit = wall_pressure_fit(depth[inside], pressure[inside], rho * phi, g, L * L, 4 * L)
    measured = float(np.abs(p["shear"][side, 2] * p["area"][side]).sum()
                     / (p["normal"][side] * p["area"][side]).sum())
    column = field_stress_profile(fields, surface, rho * phi, g)
    bulk_length = wall_pressure_fit(depth[inside], pressure[inside], rho * phi, g, L * L, 4 * L,
                                    length=column["lambda"])
    return {"friction": mu, "spheres": n, "width": L, "width_d": width_d, "phi": phi,
            "bulk_density": rho * phi, "surface": surface, "settle_steps": settle,
            "dt": sim.dt, "ke_over_mgr": ke, "window": window,
            "depth": depth[inside].tolist(), "pressure": pressure[inside].tolist(), **fit,
            "mu_wall_measured": measured, "fields": column, "walls_bulk_lambda": bulk_length,
            "seconds": seconds}


def tables(pistons: list[dict], silos: list[dict]) -> str:
    """The markdown tables of a run."""
    out = ["| spheres | steps (window) | piston load F (N) | F/A (Pa) | bed σ_zz H/z_p (Pa) "
           "| σ_zz / (−F/A) | spread over its patches |", "|---|---|---|---|---|---|---|"]
    for p in pistons:
        out.append(f"| {p['spheres']} | {p['steps']} ({p['window']}) | {p['force']:.4f} "
                   f"| {p['force_over_area']:.1f} | {p['sigma_zz_bed']:.1f} "
                   f"| {-p['sigma_zz_bed'] / p['force_over_area']:.4f} "
                   f"| {p['patch_spread']:.1%} |")
    out += ["", "| μ | spheres | width (d) | depth (d) | φ | walls: p_∞ (Pa) | λ (widths) | K "
            "| μ_w (fit) | μ_w (maps: Σ\\|τ_z\\| / Σ σ_n) | rms / p_∞ | fields: λ (widths) "
            "| rms / ρ_b g λ | floor load / weight | K = σ_h/σ_v (bulk) | wall time |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    if not silos:
        out[-2:] = ["Silo: not run (`--silo-friction` given no values)."]
    for s in silos:
        f = s["fields"]
        out.append(f"| {s['friction']:g} | {s['spheres']} | {s['width_d']:g} "
                   f"| {s['surface'] / (2 * MATERIAL['radius']):.1f} | {s['phi']:.3f} "
                   f"| {s['p_inf']:.2f} | {s['lambda'] / s['width']:.2f} | {s['K']:.2f} "
                   f"| {s['mu_wall']:.2f} | {s['mu_wall_measured']:.2f} "
                   f"| {s['fit_rms']:.3f} | {f['lambda'] / s['width']:.2f} "
                   f"| {f['fit_rms']:.3f} | {f['load_over_weight']:.2f} | {f['K_bulk']:.2f} "
                   f"| {s['seconds']:.0f} s |")
    out += ["", "| validation (issue 47) | held by | tolerance |", "|---|---|---|"]
    for what, where, tol in CHECKS:
        out.append(f"| {what} | {where or 'not yet a test'} | {tol} |")
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small runs (a minute)")
    p.add_argument("--silo-friction", type=float, nargs="*", default=[0.5])
    p.add_argument("--json", help="write the results here")
    p.add_argument("--doc", help="write the tables into this markdown file's stress block")
    args = p.parse_args(argv)
    size = QUICK if args.quick else FULL
    t0 = time.perf_counter()
    pistons = [piston(size["piston_layers"], size["piston_steps"], size["window"] // 2)]
    silos = [silo(mu, size["silo_spheres"], size["silo_width"], size["silo_window"],
                  settle_seconds=size["silo_settle"]) for mu in args.silo_friction]
    text = tables(pistons, silos)
    print(text)
    seconds = time.perf_counter() - t0
    write_json(args.json, {"pistons": pistons, "silos": silos, "seconds": seconds})
    if args.doc:
        when = STARTED.strftime("%Y-%m-%d")
        write_doc_block(args.doc, "stress_validation",
                        f"```\n{command_line()}\n```\n\nRun {when}, {seconds / 60:.0f} min.\n\n"
                        + text)


if __name__ == "__main__":
    main()
