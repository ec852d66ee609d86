"""Bulk validation: packing fraction φ and coordination number Z of a poured monodisperse bed
against friction, and the floor load of a walled column filled progressively (Janssen);
compared with [Silbert2010], [AgnolinRoux2007] and [Janssen1895] in ``docs/validation.md``.

    python benchmarks/bulk_validation.py                 # docs/bulk_*.png, tables, JSON
    python benchmarks/bulk_validation.py --quick         # a small version (a few seconds)
    python benchmarks/bulk_validation.py --json b.json --out /tmp/b --friction 0 0.5
    python benchmarks/bulk_validation.py --doc docs/validation.md   # + its tables in the doc
    python benchmarks/bulk_validation.py --render b.json --doc docs/validation.md  # no runs

With ``--doc`` the tables, headed by the command and the run's date, replace what lies
between the markers ``<!-- bulk_validation: begin -->`` and ``<!-- bulk_validation: end -->``
of that file (nothing else in it changes). The measures are ``pdyn.analysis.packing`` (φ, Z,
Z*) and ``pdyn.analysis.janssen`` (the saturation); this program runs the scenes.

Material (SI): spheres of radius 1 mm, density 2500 kg/m³, Hertz contacts with E = 2·10⁷ Pa,
ν = 0.3 (soft, so pdyn's default time step is long: 9.1 µs; overlaps stay below ~0.5 % of
the radius), restitution e = 0.5, Coulomb friction μ between spheres and with every wall
alike (pdyn's walls are half-spaces of the spheres' material), no rolling resistance,
gravity 9.81 m/s².

**Poured bed** (:func:`pour`): ``--bed-spheres`` spheres (3000) in a box periodic in x and y,
``--bed-width`` diameters wide (12), with a floor; they start at rest on a jittered simple
cubic lattice of spacing 1.5 diameters (solid fraction 0.16, seeded) and rain down together;
the run stops when the kinetic energy per sphere is below 10⁻⁵ m g r. In the bulk — centres
more than 4 diameters above the floor and 4 below the free surface (the 99th percentile of
centre heights) — φ is the volume of the spheres inside that slab (exact spherical segments)
over the slab's volume, Z the mean number of touching partners (overlap > 0, periodic images
included, the floor counted) of the spheres whose centres lie in it, with rattlers, and Z* the
same after removing rattlers: spheres with fewer than 4 contacts, removed repeatedly (the
frictionless stability count d + 1 = 4), for μ = 0 only: frictional spheres are stable
with fewer contacts, and the same rule applied to a frictional bed removes all of it. Under
gravity every sphere carries at least its weight, so no sphere is force-free (a rattler of the
sources' isotropic packings); ``x4`` is the fraction of bulk spheres with fewer than 4
contacts.

**Janssen column** (:func:`janssen`): a square column ``--column-width`` diameters wide (8)
with walls on all sides, filled from the top by pdyn's insertion (``[insertion]``) in
``--stages`` batches of ``--batch`` spheres (12 × 200); each batch appears at once in a
region under the lid (10 diameters high, or more so that the batch's solid fraction there is
at most 0.08), falls, and the column rests until the next (``--stage-seconds``, 0.35 s); the
floor load is the z-force of the floor's contacts (``Simulation.wall_contacts()``), averaged
over the last 30 % of each stage, before the next batch appears, shown as an apparent mass
F/g against the mass filled in. Janssen's model of a column of bulk density ρ_b,
cross-section A and perimeter P with a wall friction μ_w mobilised everywhere and a ratio
K = σ_h/σ_v of horizontal to vertical stress [Janssen1895] gives F/g = M_∞ (1 − exp(−M/M_∞))
with M_∞ = ρ_b A λ and λ = A/(P μ_w K) (= L/(4 μ_w K) for a square of side L). Two M_∞ are
given, each with its λ and K (ρ_b measured in the column: φ of the middle third of its
height): the plateau, the mean apparent mass of the last three stages, and the least-squares
fit of the form to every stage (with its rms misfit). They differ where the column is not
Janssen's, e.g. when the first batches load the floor beyond their weight. Without friction the
walls carry nothing vertical and the floor carries the whole weight.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import STARTED, command_line, write_doc_block, write_json  # noqa: E402
from pdyn.analysis.janssen import janssen_fit  # noqa: E402
from pdyn.analysis.packing import bulk_measures, most_contacts, volume_between  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MATERIAL = {"radius": 1e-3, "density": 2500.0, "youngs_modulus": 2e7, "poisson_ratio": 0.3,
            "restitution": 0.5, "gravity": 9.81}
#: published φ and Z (Z*: without rattlers) of jammed monodisperse packings, by μ
PUBLISHED = [
    {"source": "Silbert2010", "friction": 0.0, "phi": 0.64, "z": 6.0,
     "note": "φ_c from random close packing (≈ 0.64) at μ = 0 ..."},
    {"source": "Silbert2010", "friction": math.inf, "phi": 0.55, "z": 4.0,
     "note": "... to random loose packing (≈ 0.55), z_c from ≈ 6 to ≈ 4, as μ grows"},
    {"source": "AgnolinRoux2007", "friction": 0.0, "phi": 0.639, "z": 6.0,
     "note": "RCP, frictionless or lubricated assembling; z* on the force-carrying backbone"},
    {"source": "AgnolinRoux2007", "friction": 0.3, "phi": 0.593, "z": 4.5,
     "note": "compressed with μ = 0.3; z* on the force-carrying backbone"},
]
FULL = {"bed_spheres": 3000, "bed_width": 12.0, "column_width": 8.0, "batch": 200,
        "stages": 12, "stage_seconds": 0.35, "margin": 4.0}
QUICK = {"bed_spheres": 300, "bed_width": 6.0, "column_width": 5.0, "batch": 40,
         "stages": 2, "stage_seconds": 0.2, "margin": 1.5}


def _mass(r: float) -> float:
    return MATERIAL["density"] * 4.0 / 3.0 * math.pi * r**3


def _contact(mu: float):
    from pdyn.config import ContactConfig

    m = MATERIAL
    return ContactConfig(law="hertz", youngs_modulus=m["youngs_modulus"],
                         poisson_ratio=m["poisson_ratio"], restitution=m["restitution"],
                         friction=mu)


# ------------------------------------------------------------------ the poured bed
def rain(n: int, width_d: float, seed: int) -> tuple[np.ndarray, float]:
    """Centres of ``n`` spheres on a jittered cubic lattice of spacing 1.5 d filling a
    periodic square ``width_d`` diameters wide from the floor up; the box height (m)."""
    r = MATERIAL["radius"]
    d = 2 * r
    per_row = max(int(width_d // 1.5), 1)
    a = width_d * d / per_row
    k = np.arange(n)
    layer, rest = np.divmod(k, per_row * per_row)
    iy, ix = np.divmod(rest, per_row)
    rng = np.random.default_rng(seed)
    lo = np.stack([ix * a, iy * a, layer * 1.5 * d], axis=1)
    room = np.array([a - d, a - d, 1.5 * d - d])
    return lo + r + rng.uniform(0.0, 1.0, (n, 3)) * room, float((layer.max() + 2) * 1.5 * d)


def settle(sim, n: int, ke_fraction: float, chunk: int = 500, max_steps: int = 400_000) -> int:
    """Step ``sim`` in chunks until its kinetic energy per sphere is below ``ke_fraction``
    m g r; the steps taken."""
    r, g = MATERIAL["radius"], MATERIAL["gravity"]
    limit = ke_fraction * _mass(r) * g * r * n
    steps = 0
    while steps < max_steps:
        for _ in range(chunk):
            sim.step()
        steps += chunk
        if sim.kinetic_energy() < limit:
            return steps
    raise RuntimeError(f"not settled after {max_steps} steps")


def pour(mu: float, n: int, width_d: float, seed: int = 0) -> dict:
    """Pour the bed with friction ``mu``; its centres, box width (m) and run record."""
    from pdyn.config import BoxConfig, OutputConfig, ParticlesConfig, SimulationConfig
    from pdyn.simulation import Simulation

    r = MATERIAL["radius"]
    centres, top = rain(n, width_d, seed)
    w = width_d * 2 * r
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=centres, radii=np.full(n, r),
                                  density=MATERIAL["density"]),
        box=BoxConfig(lo=(0, 0, 0), hi=(w, w, top), boundary=("periodic", "periodic", "wall")),
        contact=_contact(mu), gravity=(0, 0, -MATERIAL["gravity"]), progress=False,
        output=OutputConfig(snapshot_every=0))
    sim = Simulation(cfg)
    t0 = time.perf_counter()
    steps = settle(sim, n, 1e-5)
    h = sim.store.owned
    return {"positions": sim.store.pos[h].copy(), "width": w, "steps": steps, "dt": sim.dt,
            "seconds": time.perf_counter() - t0}


# ------------------------------------------------------------------ the Janssen column
def janssen(mu: float, width_d: float, batch: int, stages: int, stage_seconds: float,
            seed: int = 0) -> dict:
    """Fill the walled column in ``stages`` batches; per stage the mass filled in and the floor
    load (module docstring)."""
    from pdyn.config import (BoxConfig, InsertionConfig, OutputConfig, ParticlesConfig,
                             SimulationConfig)
    from pdyn.simulation import Simulation

    r, rho, g = MATERIAL["radius"], MATERIAL["density"], MATERIAL["gravity"]
    d = 2 * r
    L = width_d * d
    total = batch * stages
    fill = total * (math.pi / 6 * d**3) / (0.55 * L * L)  # the pile's height, loosely
    region = max(10 * d, batch * (math.pi / 6 * d**3) / (0.08 * L * L))  # batch at φ ≤ 0.08
    top = fill + region + 2 * d
    probe = Simulation(_column_config(L, top, region, mu, 1.0, 10**6, total, seed))
    every = max(int(round(stage_seconds / probe.dt)), 1)
    rate = batch / (every * probe.dt) * (1 + 1e-9)
    sim = Simulation(_column_config(L, top, region, mu, rate, every, total, seed))
    window = max(int(0.3 * every), 1)
    rows = []
    t0 = time.perf_counter()
    # a batch appears at the last step of each interval of ``every`` steps (steps k · every):
    # the floor load of interval k + 1, before its own last step, is that of k batches at rest
    for stage in range(stages + 1):
        samples = []
        for k in range(every):
            if k == every - window:
                h = sim.store.owned
                mass, n = float(sim.store.mass[h].sum()), int(h.size)
            if k >= every - window and (k - every + window) % 10 == 0:
                samples.append(_floor_load(sim))
            sim.step()
        if stage:
            rows.append({"stage": stage, "spheres": n, "mass": mass,
                         "apparent_mass": float(np.mean(samples)) / g,
                         "kinetic_energy": float(sim.kinetic_energy())})
    h = sim.store.owned
    z = sim.store.pos[h, 2]
    surface = float(np.percentile(z, 99))
    phi = volume_between(z, r, surface / 3, 2 * surface / 3) / (L * L * surface / 3)
    out = {"friction": mu, "width": L, "dt": sim.dt, "stage_steps": every, "stages": rows,
           "phi": phi, "bulk_density": rho * phi, "seconds": time.perf_counter() - t0,
           "max_contacts": most_contacts(sim.store.pos[h], r)}
    out.update(janssen_fit(out))
    return out


def _column_config(L, top, region, mu, rate, every, total, seed):
    from pdyn.config import (BoxConfig, InsertionConfig, OutputConfig, ParticlesConfig,
                             SimulationConfig)

    r = MATERIAL["radius"]
    return SimulationConfig(
        particles=ParticlesConfig(positions=np.zeros((0, 3)), radii=np.zeros(0),
                                  density=MATERIAL["density"]),
        box=BoxConfig(lo=(0, 0, 0), hi=(L, L, top), boundary=("wall", "wall", "wall")),
        insertion=InsertionConfig(region_lo=(0, 0, top - region), region_hi=(L, L, top),
                                  rate=rate, radius_min=r, radius_max=r,
                                  density=MATERIAL["density"], total=total, every=every,
                                  seed=seed),
        contact=_contact(mu), gravity=(0, 0, -MATERIAL["gravity"]), progress=False,
        output=OutputConfig(snapshot_every=0))


def _floor_load(sim) -> float:
    """The z-force (N) the floor exerts on the spheres now: its contacts' normal and tangential
    forces (``Simulation.wall_contacts()``; the floor's contact points lie at z = 0)."""
    wc = sim.wall_contacts()
    if len(wc["force"]) == 0:
        return 0.0
    at = wc["ends"][1::2, 2]
    on_floor = np.abs(at) < 1e-9
    f = wc["normal_force"][on_floor, 2] + wc["tangential_force"][on_floor, 2]
    return float(f.sum())


# ------------------------------------------------------------------ output
def tables(beds: list[dict], columns: list[dict]) -> str:
    """The markdown tables of a run."""
    out = ["| μ | φ (bulk) | Z (with rattlers) | Z* (μ = 0: < 4 contacts removed) | x4 "
           "| bulk spheres | most contacts | steps |", "|---|---|---|---|---|---|---|---|"]
    for b in beds:
        zs = f"{b['z_star']:.2f}" if math.isfinite(b["z_star"]) else "–"
        out.append(f"| {b['friction']:g} | {b['phi']:.3f} | {b['z']:.2f} | {zs} | "
                   f"{b['x4']:.3f} | {b['bulk_spheres']} | {b['max_contacts']} | "
                   f"{b['steps']} |")
    out += ["", "| μ | spheres | floor load / weight: end (least – most) | plateau M_∞ (g) "
            "| of the last batches' weight on the floor | λ (widths) | K | exponential fit: "
            "M_∞ (g), λ (widths), K, rms / M | φ (column) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in columns:
        lw = (f"{c['load_over_weight']:.4f} ({c['load_over_weight_min']:.3f} – "
              f"{c['load_over_weight_max']:.3f})")
        if math.isfinite(c["m_inf"]):
            sat = (f"{c['m_plateau'] * 1e3:.2f} | {c['plateau_slope']:.1%} | "
                   f"{c['lambda_plateau_widths']:.2f} | {c['K_plateau']:.2f} | "
                   f"{c['m_inf'] * 1e3:.1f}, {c['lambda_widths']:.2f}, {c['K']:.2f}, "
                   f"{c['fit_rms']:.3f}")
        else:
            sat = "no saturation | – | – | – | –"
        out.append(f"| {c['friction']:g} | {c['stages'][-1]['spheres']} | {lw} | {sat} | "
                   f"{c['phi']:.3f} |")
    return "\n".join(out)


def plots(beds: list[dict], columns: list[dict], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    files = []
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    mus = [b["friction"] for b in beds]
    a1.plot(mus, [b["phi"] for b in beds], "o-", label="pdyn, poured bed (bulk)")
    a2.plot(mus, [b["z"] for b in beds], "o-", label="pdyn Z (with rattlers)")
    zero = [b for b in beds if b["friction"] == 0]
    a2.plot([0.0] * len(zero), [b["z_star"] for b in zero], "s", mfc="none",
            label="pdyn Z* (μ = 0, < 4 contacts removed)")
    for p, mk in (("Silbert2010", "kx"), ("AgnolinRoux2007", "r^")):
        pts = [q for q in PUBLISHED if q["source"] == p and math.isfinite(q["friction"])]
        a1.plot([q["friction"] for q in pts], [q["phi"] for q in pts], mk, ms=9, label=p)
        a2.plot([q["friction"] for q in pts], [q["z"] for q in pts], mk, ms=9, label=p)
    a1.axhline(0.55, color="k", ls=":", lw=1, label="RLP ≈ 0.55 (Silbert2010, μ → ∞)")
    a2.axhline(4.0, color="k", ls=":", lw=1, label="z_c ≈ 4 (Silbert2010, μ → ∞)")
    a1.set(xlabel="friction μ", ylabel="packing fraction φ", title="poured bed: φ")
    a2.set(xlabel="friction μ", ylabel="contacts per sphere", title="poured bed: Z")
    a1.legend(fontsize=7)
    a2.legend(fontsize=7)
    fig.tight_layout()
    files.append(str(out / "bulk_packing.png"))
    fig.savefig(files[-1], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    top = max(c["stages"][-1]["mass"] for c in columns) * 1e3
    ax.plot([0, top], [0, top], "k:", lw=1, label="hydrostatic: the whole weight")
    for c in columns:
        m = np.array([s["mass"] for s in c["stages"]]) * 1e3
        f = np.array([s["apparent_mass"] for s in c["stages"]]) * 1e3
        line, = ax.plot(m, f, "o", label=f"pdyn, μ = {c['friction']:g}")
        if math.isfinite(c["m_inf"]):
            x = np.linspace(0, m.max(), 100)
            ms = c["m_inf"] * 1e3
            ax.plot(x, ms * (1 - np.exp(-x / ms)), "-", color=line.get_color(),
                    label=f"Janssen fit, λ = {c['lambda_widths']:.2f} L, K = {c['K']:.2f}")
            mp = c["m_plateau"] * 1e3
            ax.plot(x, mp * (1 - np.exp(-x / mp)), "--", color=line.get_color(),
                    label=f"Janssen with the plateau, λ = {c['lambda_plateau_widths']:.2f} L, "
                    f"K = {c['K_plateau']:.2f}")
    ax.set(xlabel="mass filled in (g)", ylabel="floor load / g (g)",
           title=f"column {columns[0]['width'] * 1e3:.0f} mm wide, filled in batches")
    ax.legend(fontsize=7)
    fig.tight_layout()
    files.append(str(out / "bulk_janssen.png"))
    fig.savefig(files[-1], dpi=110)
    plt.close(fig)
    return files


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small bed and column (seconds)")
    p.add_argument("--friction", type=float, nargs="*", default=[0.0, 0.1, 0.5, 1.0],
                   help="μ of the poured beds")
    p.add_argument("--janssen-friction", type=float, nargs="*", default=[0.0, 0.5],
                   help="μ of the Janssen columns")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(ROOT / "docs"), help="folder of the PNGs")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--doc", help="write the tables into this markdown file's generated block")
    for k, v in FULL.items():
        p.add_argument("--" + k.replace("_", "-"), type=type(v), default=None,
                       help=f"default {v} ({QUICK[k]} with --quick)")
    p.add_argument("--render", metavar="JSON",
                   help="no runs: the tables, plots and --doc block of a run's JSON (its Janssen "
                   "fits recomputed)")
    args = p.parse_args(argv)
    if args.render:
        return render(args)
    size = {k: (getattr(args, k) if getattr(args, k) is not None
                else (QUICK if args.quick else FULL)[k]) for k in FULL}
    t0 = time.perf_counter()
    beds, columns = [], []
    for mu in args.friction:
        run = pour(mu, size["bed_spheres"], size["bed_width"], args.seed)
        m = bulk_measures(run["positions"], MATERIAL["radius"], run["width"], size["margin"],
                          mu)
        beds.append({"friction": mu, **m, "steps": run["steps"], "seconds": run["seconds"]})
        print(f"bed μ = {mu:g}: φ = {m['phi']:.3f}, Z = {m['z']:.2f}, Z* = {m['z_star']:.2f} "
              f"({run['steps']} steps, {run['seconds']:.0f} s)", flush=True)
    for mu in args.janssen_friction:
        c = janssen(mu, size["column_width"], size["batch"], size["stages"],
                    size["stage_seconds"], args.seed)
        columns.append(c)
        print(f"column μ = {mu:g}: floor load / weight {c['load_over_weight']:.4f}, "
              f"λ = {c['lambda_widths']:.3g} widths, K = {c['K']:.3g} "
              f"({c['seconds']:.0f} s)", flush=True)
    seconds = time.perf_counter() - t0
    files = output(args, beds, columns, command_line(), STARTED.strftime("%Y-%m-%d"),
                   seconds)
    write_json(args.json, {"benchmark": "bulk_validation", "size": size,
                           "material": MATERIAL, "published": [
                               {**q, "friction": str(q["friction"])} for q in PUBLISHED],
                           "beds": beds, "columns": columns, "plots": files,
                           "seconds": seconds})


def output(args, beds, columns, command: str, when: str, seconds: float) -> list[str]:
    """Print the tables, draw the plots, fill the ``--doc`` block; the plots' paths."""
    print()
    text = tables(beds, columns)
    print(text)
    files = [] if args.no_plots else plots(beds, columns, Path(args.out))
    for f in files:
        print(f"wrote {f}")
    print(f"({seconds:.0f} s)")
    if args.doc:
        write_doc_block(args.doc, "bulk_validation", f"```\n{command}\n```\n\nRun {when}, "
                        f"{seconds / 60:.0f} min.\n\n{text}")
    return files


def render(args) -> None:
    """``--render``: the output of a stored run, the Janssen fits recomputed."""
    import datetime
    import json

    d = json.loads(Path(args.render).read_text())
    for c in d["columns"]:
        c.update(janssen_fit(c))
    started = datetime.datetime.fromisoformat(d["started"])
    finished = datetime.datetime.fromisoformat(d["finished"])
    output(args, d["beds"], d["columns"], d["command"],
           started.strftime("%Y-%m-%d"), (finished - started).total_seconds())

if __name__ == "__main__":
    main()
