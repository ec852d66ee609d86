"""The settled polydisperse bed of ``vs_lammps.py --scene bed``: its parameters, how it is
made (poured on a lattice and settled once in pdyn, cached), its LAMMPS model and the
measures that compare the two codes on it.

The scene (``BED``; SI units): 80 000 · ``scale`` glass-like spheres, radii uniform in
[1, 2] mm (the 1:2 size ratio of the benchmark's question; uniform in radius rather than in
volume so that small and large spheres come in comparable numbers; no sphere fits through the
pores of the others, which takes a size ratio above 6.5), density 2500 kg/m³, Hertz contacts
of a soft material (E = 2·10⁷ Pa, ν = 0.3, so pdyn's default time step, t_c/20 = 9.1 µs, is
long; the settled bed's overlaps are 0.24 % of the smaller radius on average, 2 % at most),
restitution e = 0.5, Coulomb friction μ = 0.5 between spheres and with the floor, gravity
9.81 m/s² along −z. The box is periodic in x and y, 0.2 · ``scale``^(1/3) m wide (200
smallest radii), with a floor at z = 0 (pdyn's wall: a half-space of the spheres' material,
R* = r_i, m* = m_i); the settled bed is 55 mm (about 18 mean diameters) deep.

Making it (:func:`settled_bed`): centres on a simple cubic lattice of spacing 2.1 largest
radii (cells of 4.2 mm, ``n`` per row filling the width), filled layer by layer from the floor
up, each sphere jittered inside its cell (seeded by ``seed``: the same bed on every run and
machine, up to the floating point of the settling run), at rest; pdyn then runs with the
scene's friction (μ = 0.5; ``--settle-friction 0`` settles without friction) at its default time step in chunks of 1000 steps until the kinetic energy per sphere
is below 10⁻⁴ m̄ g r_min (m̄ the mean mass). The settled centres, radii, box and dt are cached in
``benchmarks/.cache/bed_<key>.npz``, the key a hash of every parameter, so later runs start
from the file; the cache directory is ignored by git. At scale 1 settling took 36 000 steps,
about half an hour on a 2-core machine.

The benchmark starts both codes from those centres with zero velocities (and no tangential
springs). :func:`lammps_commands` is the LAMMPS model of the same contact law.
"""

from __future__ import annotations

import functools
import json
import math
import time

import numpy as np
from _common import cached

#: the bed's parameters at scale 1 (SI units)
BED = {"spheres": 80000, "r_min": 1e-3, "r_max": 2e-3, "density": 2500.0,
       "youngs_modulus": 2e7, "poisson_ratio": 0.3, "restitution": 0.5, "friction": 0.5,
       "gravity": 9.81, "width": 0.2, "spacing": 2.1}
#: settled: kinetic energy per sphere below this fraction of m̄ g r_min
SETTLED_KE = 1e-4
SETTLE_CHUNK = 1000
SETTLE_MAX_STEPS = 400_000


def parameters(scale: float = 1.0, seed: int = 0, settle_friction: float | None = None) -> dict:
    """The bed's parameters at ``scale`` (the count × scale, the width × scale^(1/3))."""
    p = dict(BED, scale=float(scale), seed=int(seed))
    p["spheres"] = max(int(round(BED["spheres"] * scale)), 8)
    p["width"] = BED["width"] * scale ** (1 / 3)
    p["settle_friction"] = BED["friction"] if settle_friction is None else float(settle_friction)
    return p


def poured(p: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unsettled bed: centres (N, 3) on a jittered lattice, radii (N,), box top (m)."""
    rng = np.random.default_rng(p["seed"])
    n = p["spheres"]
    radii = rng.uniform(p["r_min"], p["r_max"], n)
    per_row = max(int(p["width"] // (p["spacing"] * p["r_max"])), 1)
    a_xy = p["width"] / per_row  # cells fill the periodic width exactly
    a_z = p["spacing"] * p["r_max"]
    k = np.arange(n)
    layer, rest = np.divmod(k, per_row * per_row)
    iy, ix = np.divmod(rest, per_row)
    lo = np.stack([ix * a_xy, iy * a_xy, layer * a_z], axis=1)
    room = np.stack([a_xy - 2 * radii, a_xy - 2 * radii, a_z - 2 * radii], axis=1)
    centres = lo + radii[:, None] + rng.uniform(0.0, 1.0, (n, 3)) * room
    return centres, radii, float((layer.max() + 2) * a_z)


def contact_config(p: dict, friction: float, adhesion: float = 0.0, legacy: bool = False):
    """pdyn's ``ContactConfig`` of the bed with Coulomb coefficient ``friction`` and, when
    ``adhesion`` (J/m²) > 0, JKR cohesion of that work of adhesion with LAMMPS'
    ``viscoelastic`` damping (:func:`viscoelastic_coefficient`); ``legacy``: LAMMPS'
    ``gran/hertz/history`` model instead of the restitution's dashpot — the same
    ``viscoelastic`` damping and the ``projected`` tangential history."""
    from pdyn.config import ContactConfig

    damping = {"restitution": p["restitution"]}
    if adhesion > 0 or legacy:
        damping = {"damping": "viscoelastic", "damping_coefficient": viscoelastic_coefficient(p)}
    if adhesion > 0:
        damping.update(cohesion="jkr", work_of_adhesion=adhesion)
    if legacy:
        damping.update(tangential_history="projected")
    return ContactConfig(law="hertz", youngs_modulus=p["youngs_modulus"],
                         poisson_ratio=p["poisson_ratio"], friction=friction, **damping)


def viscoelastic_coefficient(p: dict) -> float:
    """γ (1/(m s)) of LAMMPS' ``viscoelastic`` dashpot η = γ m* a (a = √(R* δ)) equal to
    pdyn's ``tangent`` one of the bed's restitution, 2 ζ √(m* 2 E* a), for two spheres of the
    mean radius at the settled bed's mean overlap (0.24 % of r_min): the JKR bed's damping,
    as LAMMPS refuses ``coeff_restitution`` and ``tsuji`` with ``jkr``."""
    from pdyn.dynamics.laws import effective_modulus

    r = 0.5 * (p["r_min"] + p["r_max"])
    m_eff = 0.5 * p["density"] * 4 / 3 * math.pi * r**3
    a = math.sqrt(0.5 * r * 0.0024 * p["r_min"])
    e_star = effective_modulus(p["youngs_modulus"], p["poisson_ratio"])
    eta = 2 * hertz_damping_ratio(p["restitution"]) * math.sqrt(m_eff * 2 * e_star * a)
    return eta / (m_eff * a)


def work_of_adhesion(p: dict, bond: float) -> float:
    """The JKR work of adhesion w (J/m²) whose pull-off force 3/2 π w R* between two spheres of
    the mean radius r̄ (R* = r̄/2) is ``bond`` times one's weight m g (m = ρ 4/3 π r̄³): the
    granular Bond number."""
    r = 0.5 * (p["r_min"] + p["r_max"])
    weight = p["density"] * 4 / 3 * math.pi * r**3 * p["gravity"]
    return bond * weight / (1.5 * math.pi * 0.5 * r)


def pdyn_config(p: dict, centres, radii, top: float, friction: float, steps: int,
                dt: float | None = None, adhesion: float = 0.0, legacy: bool = False):
    """pdyn's ``SimulationConfig`` of the bed (spheres given as arrays, at rest; JKR of work
    ``adhesion`` when > 0; ``legacy``: :func:`contact_config`'s)."""
    from pdyn.config import BoxConfig, OutputConfig, ParticlesConfig, SimulationConfig

    w = p["width"]
    return SimulationConfig(
        particles=ParticlesConfig(positions=centres, radii=radii, density=p["density"]),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(w, w, top),
                      boundary=("periodic", "periodic", "wall")),
        contact=contact_config(p, friction, adhesion, legacy), gravity=(0.0, 0.0, -p["gravity"]),
        steps=steps,
        dt=dt, initial_overlap="allow", progress=False, output=OutputConfig(snapshot_every=0))


def owned_state(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(global ids, centres, velocities) of this rank's spheres, sorted by id."""
    h = sim.store.owned
    order = np.argsort(sim.store.gid[h])
    h = h[order]
    return sim.store.gid[h].copy(), sim.store.pos[h].copy(), sim.store.vel[h].copy()


def settle(p: dict, log=print) -> dict:
    """Pour and settle the bed in pdyn on this process (1 rank); the cached record."""
    from pdyn.simulation import Simulation

    centres, radii, top = poured(p)
    cfg = pdyn_config(p, centres, radii, top, p["settle_friction"], SETTLE_CHUNK)
    sim = Simulation(cfg)
    mass = p["density"] * 4 / 3 * np.pi * radii**3
    threshold = SETTLED_KE * mass.mean() * p["gravity"] * p["r_min"] * len(radii)
    t0 = time.perf_counter()
    while True:
        for _ in range(SETTLE_CHUNK):
            sim.step()
        ke = sim.kinetic_energy()
        log(f"settling the bed ({len(radii)} spheres): step {sim.step_index}, kinetic energy "
            f"{ke:.3g} J (settled below {threshold:.3g} J)", flush=True)
        if ke < threshold:
            break
        if sim.step_index >= SETTLE_MAX_STEPS:
            raise RuntimeError(f"the bed did not settle in {SETTLE_MAX_STEPS} steps")
    log(f"settled in {sim.step_index} steps ({time.perf_counter() - t0:.0f} s)", flush=True)
    gid, pos, _ = owned_state(sim)
    pos[:, :2] %= p["width"]  # wrapped into the periodic box
    r = radii[gid]
    return {"positions": pos, "radii": r, "top": float(pos[:, 2].max() + r.max() + 2 * p["r_max"]),
            "dt": float(sim.dt), "settle_steps": int(sim.step_index),
            "settle_seconds": time.perf_counter() - t0, "kinetic_energy": float(ke),
            "parameters": json.dumps(p, sort_keys=True)}


def settled_bed(p: dict, log=print) -> dict:
    """The settled bed of parameters ``p``: from the cache, or settled now and cached."""
    rec = cached("bed", p, lambda: settle(p, log), log)
    for k in ("top", "dt", "kinetic_energy", "settle_seconds"):
        rec[k] = float(rec[k])
    rec["settle_steps"] = int(rec["settle_steps"])
    return rec


# ------------------------------------------------------------------ the LAMMPS model
def _rebound(zeta: float, steps: int = 2000) -> float:
    """Rebound speed of the dimensionless clamped Hertz contact x'' = −max(x^1.5 +
    2 ζ √1.5 x^(1/4) x', 0) from x = 0, x' = 1 (RK4, ``steps`` per unit time): its
    restitution coefficient."""
    c = 2.0 * zeta * math.sqrt(1.5)

    def acc(x, v):
        xp = max(x, 0.0)
        return -max(xp**1.5 + c * xp**0.25 * v, 0.0)

    h, x, v = 1.0 / steps, 0.0, 1.0
    for _ in range(200 * steps):
        k1x, k1v = v, acc(x, v)
        k2x, k2v = v + 0.5 * h * k1v, acc(x + 0.5 * h * k1x, v + 0.5 * h * k1v)
        k3x, k3v = v + 0.5 * h * k2v, acc(x + 0.5 * h * k2x, v + 0.5 * h * k2v)
        k4x, k4v = v + h * k3v, acc(x + h * k3x, v + h * k3v)
        x += h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if v < 0.0 and (x <= 0.0 or acc(x, v) == 0.0):
            return -v
    return 0.0


@functools.lru_cache(maxsize=8)
def hertz_damping_ratio(restitution: float) -> float:
    """ζ of pdyn's damped Hertz contact (dashpot 2 ζ √(m* · 2 E* √(R* δ)), force clamped at
    0) whose restitution coefficient is ``restitution``: bisection on ζ. This is the definition
    in docs/contacts.md; recomputed here so the benchmark needs only pdyn's public API."""
    if restitution >= 1.0:
        return 0.0
    lo, hi = 0.0, 1.0
    while _rebound(hi) > restitution:
        hi *= 2.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _rebound(mid) > restitution else (lo, mid)
    return 0.5 * (lo + hi)


def lammps_model(p: dict, friction: float, adhesion: float = 0.0) -> str:
    """The LAMMPS ``pair_coeff``/``fix wall/gran`` model string of pdyn's bed contact:
    ``hertz/material E e' ν`` (E* = E/(2(1 − ν²)) for a pair of one material and for the
    wall alike, F = 4/3 E* √(R* δ) δ), ``damping coeff_restitution`` with e' chosen so its
    dashpot, η = √5 (−ln e')/√(π² + ln² e') √(m* 4/3 E* √(R* δ)), is pdyn's
    2 ζ √(m* 2 E* √(R* δ)) (i.e. √5 (−ln e')/√(π² + ln² e') = √6 ζ), ``limit_damping``
    (pdyn's clamp); with μ > 0 ``tangential mindlin NULL x μ`` (k_t = 8 G* √(R* δ), G* from
    E and ν as in pdyn; tangential dashpot x η with x = √(8 G*/(2 E*)) = √(2(1 − ν)/(2 − ν)):
    pdyn's 2 ζ √(m* k_t)); with μ = 0 ``tangential linear_nohistory 0 0`` (no tangential
    force). ``coeff_restitution``'s prefactor is below √5 for any e', so pdyn's ζ must be
    below √(5/6) = 0.913: e ≥ 0.136 (ValueError otherwise). With ``adhesion`` w > 0 the
    model is ``jkr E γ_v ν γ`` with γ = w/2 (LAMMPS' pull-off 3π γ R*: pdyn's JKR of work w,
    ``pdyn.dynamics.cohesion``), ``tangential mindlin NULL 0.5 μ``, ``damping viscoelastic``
    with γ_v of :func:`viscoelastic_coefficient` (LAMMPS refuses ``coeff_restitution``,
    ``tsuji`` and ``limit_damping`` with ``jkr``; pdyn's ``viscoelastic`` of that γ_v, its
    tangential dashpot half the normal one: docs/contacts.md)."""
    nu = p["poisson_ratio"]
    if adhesion > 0:
        return (f"jkr {p['youngs_modulus']!r} {viscoelastic_coefficient(p)!r} {nu!r} "
                f"{adhesion / 2!r} tangential mindlin NULL 0.5 {friction!r} "
                "damping viscoelastic")
    a = math.sqrt(6.0) * hertz_damping_ratio(p["restitution"])
    if a >= math.sqrt(5.0):
        raise ValueError(f"restitution {p['restitution']!r}: pdyn's damping ratio "
                         f"{a / math.sqrt(6.0):.4g} has no LAMMPS coeff_restitution equivalent "
                         "(at most √(5/6) = 0.913, e ≥ 0.136)")
    x = a * math.pi / math.sqrt(5.0 - a * a)  # −ln e'
    e_lmp = math.exp(-x)
    if friction > 0:
        xt = math.sqrt(2.0 * (1.0 - nu) / (2.0 - nu))
        tangential = f"tangential mindlin NULL {xt!r} {friction!r}"
    else:
        tangential = "tangential linear_nohistory 0 0"
    return (f"hertz/material {p['youngs_modulus']!r} {e_lmp!r} {nu!r} {tangential} "
            "damping coeff_restitution limit_damping")


def hertz_history_style(youngs_modulus: float, poisson_ratio: float, friction: float,
                        gamma: float = 0.0) -> str:
    """LAMMPS' legacy ``pair_style gran/hertz/history`` of pdyn's Hertz law (E, ν) with
    friction μ: F_n = Kn √(R* δ) δ with Kn = 4/3 E*, the tangential spring Kt √(R* δ) with
    Kt = 8 G* (Mindlin's k_t), both as pdyn's (E* = E/(2(1 − ν²)), G* = E* (1 − ν)/(2(2 −
    ν))); its dashpot γ m* √(R* δ) v_n (γ_t = γ/2 by NULL) is pdyn's ``viscoelastic``
    damping of coefficient ``gamma`` (1/(m s)), clamped by ``limit_damping``; ``gamma`` 0:
    undamped (dampflag 0)."""
    e_star = youngs_modulus / (2.0 * (1.0 - poisson_ratio**2))
    kt = 2.0 * e_star * 2.0 * (1.0 - poisson_ratio) / (2.0 - poisson_ratio)
    damping = f"{gamma!r} NULL {friction!r} 1 limit_damping" if gamma else f"0 0 {friction!r} 0"
    return f"pair_style gran/hertz/history {4.0 / 3.0 * e_star!r} {kt!r} {damping}"


def lammps_commands(p: dict, bed: dict, friction: float, skin: float,
                    adhesion: float = 0.0, legacy: bool = False) -> list[str]:
    """LAMMPS input lines of the bed up to (not including) the atoms: box, model (JKR of work
    ``adhesion`` when > 0), floor, gravity, integrator, neighbour lists with ``skin`` (m).
    ``legacy``: the spheres' contacts by ``gran/hertz/history`` (:func:`hertz_history_style`,
    pdyn's ``contact_config(legacy=True)``), the floor by ``fix wall/gran granular`` with
    the same law and ``damping viscoelastic`` (the classic ``wall/gran hertz/history`` spins
    a sticking sphere too little: docs/contacts.md)."""
    w = p["width"]
    model = lammps_model(p, friction, adhesion)
    pair = ["pair_style granular", f"pair_coeff * * {model}"]
    if legacy:
        gamma = viscoelastic_coefficient(p)
        tangential = (f"tangential mindlin NULL 0.5 {friction!r}" if friction > 0
                      else "tangential linear_nohistory 0 0")
        model = (f"hertz/material {p['youngs_modulus']!r} {gamma!r} {p['poisson_ratio']!r} "
                 f"{tangential} damping viscoelastic limit_damping")
        pair = [hertz_history_style(p["youngs_modulus"], p["poisson_ratio"], friction, gamma),
                "pair_coeff * *"]
    return [
        "units si", "atom_style sphere", "atom_modify map array", "boundary p p f",
        "comm_modify vel yes", f"region box block 0 {w!r} 0 {w!r} 0 {bed['top']!r}",
        "create_box 1 box", f"neighbor {skin!r} bin", "neigh_modify every 1 delay 0 check yes",
        *pair, f"fix floor all wall/gran granular {model} zplane 0.0 NULL",
        f"fix gravity all gravity {p['gravity']!r} vector 0 0 -1",
        f"timestep {bed['dt']!r}", "fix integrate all nve/sphere",
    ]


def lammps_atoms(lmp, p: dict, bed: dict) -> None:
    """Create the bed's spheres in ``lmp`` (ids 1..N, at rest) with their radii and masses."""
    pos, radii = bed["positions"], bed["radii"]
    n = len(radii)
    ids = np.arange(1, n + 1, dtype=np.int32)
    lmp.create_atoms(n, ids.tolist(), [1] * n, pos.reshape(-1).tolist(), [0.0] * (3 * n))
    local = int(lmp.extract_global("nlocal"))
    tag = lmp.numpy.extract_atom("id")[:local]
    r = radii[np.asarray(tag) - 1]
    lmp.numpy.extract_atom("radius")[:local] = r
    lmp.numpy.extract_atom("rmass")[:local] = p["density"] * 4 / 3 * np.pi * r**3


# ------------------------------------------------------------------ comparing the codes
def bed_measures(pos: np.ndarray, radii: np.ndarray, width: float) -> dict:
    """Overlaps of a bed (centres by id, periodic in x and y): sphere contacts per sphere, mean
    and largest sphere–sphere overlap and mean floor overlap, relative to the smaller radius."""
    from scipy.spatial import cKDTree

    x = pos.copy()
    x[:, :2] %= width
    top = float(x[:, 2].max() + 4 * radii.max())
    tree = cKDTree(x, boxsize=[width, width, 2 * top])
    pairs = tree.query_pairs(2 * radii.max(), output_type="ndarray")
    d = x[pairs[:, 1]] - x[pairs[:, 0]]
    d[:, :2] -= width * np.round(d[:, :2] / width)
    gap = np.linalg.norm(d, axis=1) - radii[pairs[:, 0]] - radii[pairs[:, 1]]
    touching = gap < 0
    rel = -gap[touching] / np.minimum(radii[pairs[touching, 0]], radii[pairs[touching, 1]])
    floor = radii - x[:, 2]
    return {"contacts_per_sphere": 2 * int(touching.sum()) / len(radii),
            "mean_overlap": float(rel.mean()) if rel.size else 0.0,
            "max_overlap": float(rel.max()) if rel.size else 0.0,
            "floor_contacts": int((floor > 0).sum()),
            "mean_floor_overlap": float((floor[floor > 0] / radii[floor > 0]).mean())
            if (floor > 0).any() else 0.0}
