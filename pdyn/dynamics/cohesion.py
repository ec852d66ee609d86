"""Cohesion: an attractive normal force added to the normal law of a contact, one
sub-model per run (``[contact] cohesion``, the part ``cohesion`` of
``pdyn.dynamics.laws.SUB_MODELS``), its parameters per pair of materials.

Seen from sphere i, with R* the pair's effective radius, δ the overlap (≥ 0 but for JKR's
contacts held past touching) and s = r_i + r_j the sum of radii (a wall: s = ∞), each model
gives the attraction F_a (N, > 0 pulling i towards its partner), the part friction's Coulomb
limit adds to the repulsive force, and the overlap the tangential stiffness reads:

  dmt:  F_a = 2π w R* (Derjaguin, Muller & Toporov [DMT1975]), w the work of adhesion (J/m²);
        LAMMPS ``pair granular`` normal ``dmt`` ([LAMMPSgranular]), whose γ is w/2:
        F_ne = 4/3 E* √R* δ^{3/2} − 4π γ R*. It acts while the spheres overlap (δ ≥ 0),
        so the pull-off force is 2π w R*. Coulomb limit: μ (F_r + F_a), F_r the repulsive
        (elastic and damping) force — LAMMPS' F_n0 = |F_ne + 2 F_pulloff|.
  jkr:  Johnson, Kendall & Roberts' adhesive elastic contact ([JKR1971]; LAMMPS ``pair
        granular`` normal ``jkr``, γ = w/2) on Hertz's law (E* its modulus): the contact
        radius a follows from δ = a²/R* − √(2π w a/E*) (:func:`jkr_radius`), the force is
        F_JKR = 4 E* a³/(3 R*) − √(8π w E* a³), so F_a = F_Hertz(δ) − F_JKR (F_Hertz = 0 for
        δ < 0). A contact forms at δ = 0 (where F_JKR = −4/3 π w R*) and, once made, holds
        past zero overlap down to δ_c = −(3/4)(π² w² R*/E*²)^{1/3} (:func:`jkr_limit`; whether
        it touched is whether it has a history record, ``pdyn.dynamics.history``: JKR runs
        keep the history, their spheres rotate); the largest pull, 3/2 π w R*, comes at
        δ = −a²/(3 R*), a³ = 9π w R*²/(8 E*). Coulomb limit: μ (F_JKR + 3π w R*) plus the
        damping (LAMMPS' F_n0 = |F_ne + 2 F_pulloff|); the tangential stiffness reads the
        overlap a²/R* of Hertz's contact of the same radius (Mindlin's 8 G* a, as LAMMPS).
        Past zero overlap there is no damping. The neighbour lists' skin must reach |δ_c|
        (``pdyn.assembly``). The jumps at δ = 0 and δ_c are sampled at the steps: 72 steps
        over |δ_c| at the sticking speed give the closed form's stick and rebound within 2 %
        (``tests/dynamics/test_cohesion.py``); with 8 (a sphere on a wall at the default dt)
        the sphere stuck at 1.02 times it.
  liquid_bridge: a capillary bridge of liquid volume V, surface tension γ and contact angle
        θ ([Willett2000]'s closed form, MercuryDPM's ``LiquidBridgeWillet``): with R = 2 R*
        (the spheres' harmonic mean radius), F_a = 2π R γ cos θ while touching and
        2π R γ cos θ / (1 + 2.1 Ŝ + 10 Ŝ²), Ŝ = (S/2) √(R/V), at separation S = −δ > 0. The
        bridge forms when the surfaces touch and holds (as JKR, by the history record) until
        S exceeds S_c = (1 + θ/2) V^{1/3} ([Lian1993]). Coulomb limit: μ F_r, no tangential
        stiffness apart (F_r = 0 there).
  sjkr: F_a = k A, k the cohesion energy density (J/m³), A = π a² the area of the circle in
        which the two spheres' surfaces intersect, a² = (d² − (r_i − r_j)²)((r_i + r_j)² −
        d²)/(4 d²) at centre distance d = s − δ (a wall: a² = 2 r_i δ − δ²) — LIGGGHTS
        ``cohesion sjkr`` ([LIGGGHTSsjkr]). In terms of (δ, R*, s), with x = δ/s:
        a² = (4 R* − 2δ + δ x)(2δ − δ x)/(4 (1 − x)²). Coulomb limit: μ F_r (LIGGGHTS'
        default ``tangential_reduce off``: friction does not see the cohesion force).

The records (:class:`DMT`, :class:`JKR`, :class:`LiquidBridge`, :class:`SJKR`) are chosen in
Python (:func:`cohesion_model`); :func:`cohesion_force` dispatches on the record's type, so
numba compiles the contact loop with the one chosen inlined; a run without cohesion passes None
and carries no cohesion code (the branch is pruned at compile time, ``pdyn.dynamics.contact``).

The energy the contact loop reports stays the elastic energy of the normal law: the surface
energy of adhesion is not in it.

Mixing (``pdyn.dynamics.materials``): each parameter of two materials is mixed as the
geometric mean √(x₁ x₂) (a material without cohesion counts 0: the pair has none), for w the
combining rule of works of adhesion w₁₂ ≈ √(w₁ w₂) ([Israelachvili2011]), and the rule pdyn
and LAMMPS ``pair granular`` use for their other coefficients; an ``[[interactions]]`` table
sets a pair's values itself.

Units: N, m, J/m², J/m³, N/m, degrees (the config's contact angle).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT


class DMT(NamedTuple):
    """DMT adhesion: work of adhesion ``w`` (J/m²); F_a = 2π w R* while overlapping."""

    w: float


class JKR(NamedTuple):
    """JKR adhesion: work of adhesion ``w`` (J/m²) and the pair's effective modulus ``E`` = E*
    (Pa, Hertz's); the contact holds past zero overlap down to δ_c (module docstring). The
    pair's constants the contact reads, made once by :meth:`of`: ``k`` = √(2π w/E*) (√m),
    ``s`` = √(8π w E*) (N/m^{3/2}) and ``h`` = (π w/E*)² (m²)."""

    w: float
    E: float
    k: float
    s: float
    h: float

    @classmethod
    def of(cls, w: float, e_star: float) -> JKR:
        """The record of work of adhesion ``w`` (J/m²) and effective modulus ``e_star`` (Pa)."""
        ratio = math.pi * w / e_star if e_star > 0.0 else math.inf
        return cls(w, e_star, math.sqrt(2.0 * ratio), math.sqrt(8.0 * math.pi * w * e_star),
                   ratio * ratio)


class LiquidBridge(NamedTuple):
    """A liquid bridge ([Willett2000]): the liquid's ``volume`` V per bridge (m³), ``tension``
    γ cos θ (N/m: surface tension times the cosine of the contact angle) and the ``rupture``
    separation S_c = (1 + θ/2) V^{1/3} (m, θ in radians; [Lian1993])."""

    volume: float
    tension: float
    rupture: float


class SJKR(NamedTuple):
    """Simplified JKR (LIGGGHTS ``sjkr``): cohesion energy density ``k`` (J/m³); F_a = k A,
    A the area of the surfaces' intersection circle."""

    k: float


@njit(inline="always", **JIT)
def dmt_force(model, delta, r_eff, s):
    """:class:`DMT`: (F_a = 2π w R*, the same added to the Coulomb limit's normal force, the
    overlap itself)."""
    f = 2.0 * math.pi * model.w * r_eff
    return f, f, delta


@njit(**JIT)
def _cbrt(x):
    """The real cube root."""
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


@njit(**JIT)
def _jkr_root(c, p):
    """x = √a of JKR's contact radius a: the larger root of x⁴ − c x − p = 0 (c = R* √(2π w/E*),
    p = R* δ), by Ferrari's resolvent m³ + p m − c²/8 = 0 (Cardano, its one positive root, the
    form without cancellation for each sign of p: for p > 0, m = q/(u² − uv + v²) with
    v = −p/(3u), one division), then x = (t + √(2c/t − t²))/2, t = √(2m)."""
    q = 0.125 * c * c
    disc = max(0.25 * q * q + p * p * p * (1.0 / 27.0), 0.0)  # 0 at δ_c (to rounding)
    u = _cbrt(0.5 * q + math.sqrt(disc))
    if p > 0.0:
        u2 = u * u
        m = 9.0 * q * u2 / ((9.0 * u2 + 3.0 * p) * u2 + p * p)
    else:
        m = u - p / (3.0 * u)
    t = math.sqrt(2.0 * m)
    return 0.5 * (t + math.sqrt(max(2.0 * c / t - t * t, 0.0)))


@njit(**JIT)
def jkr_radius(w, e_star, delta, r_eff):
    """JKR's contact radius a (m) at overlap ``delta`` (m, ≥ δ_c), the larger root of
    δ = a²/R* − √(2π w a/E*) ([JKR1971]): with a = x², x⁴ − c x − R* δ = 0
    (c = R* √(2π w/E*), :func:`_jkr_root`)."""
    x = _jkr_root(r_eff * math.sqrt(2.0 * math.pi * w / e_star), r_eff * delta)
    return x * x


@njit(inline="always", **JIT)
def jkr_limit(w, e_star, r_eff):
    """δ_c (m, < 0): the overlap at which a JKR contact opens under a given displacement,
    −3 a_c²/R*, a_c³ = π w R*²/(8 E*): −(3/4) (π² w² R*/E*²)^{1/3}."""
    return -0.75 * _cbrt(math.pi * math.pi * w * w * r_eff / (e_star * e_star))


@njit(inline="always", **JIT)
def jkr_force(model, delta, r_eff, s):
    """:class:`JKR`: (F_a = F_Hertz(δ) − F_JKR(a), the Coulomb limit's addition 3π w R* − F_a
    (so μ (F_JKR + 2 F_pulloff) plus damping), the overlap a²/R* of Hertz's contact of the
    same radius, which the tangential stiffness reads); F_JKR = 4 E* a³/(3 R*) − √(8π w E* a³)."""
    w, e = model.w, model.E
    if w == 0.0:
        return 0.0, 0.0, delta
    x = _jkr_root(r_eff * model.k, r_eff * delta)  # a = x², √(a³) = x³
    a = x * x
    x3 = x * a
    inv_r = 1.0 / r_eff
    f_jkr = 4.0 / 3.0 * e * x3 * x3 * inv_r - model.s * x3
    f_hertz = 4.0 / 3.0 * e * math.sqrt(r_eff * delta) * delta if delta > 0.0 else 0.0
    pull = f_hertz - f_jkr
    return pull, 3.0 * math.pi * w * r_eff - pull, a * a * inv_r


@njit(inline="always", **JIT)
def intersection_area(delta, r_eff, s):
    """Area (m²) of the circle in which two sphere surfaces of effective radius ``r_eff`` and
    sum of radii ``s`` (∞: a sphere on a wall) overlapping by ``delta`` intersect (module
    docstring)."""
    x = delta / s
    return (math.pi * (4.0 * r_eff - 2.0 * delta + delta * x) * (2.0 * delta - delta * x)
            / (4.0 * (1.0 - x) * (1.0 - x)))


@njit(inline="always", **JIT)
def sjkr_force(model, delta, r_eff, s):
    """:class:`SJKR`: (F_a = k A, 0: friction does not see it, the overlap itself)."""
    return model.k * intersection_area(delta, r_eff, s), 0.0, delta


@njit(inline="always", **JIT)
def bridge_force(model, delta, r_eff, s):
    """:class:`LiquidBridge`: (F_a, 0, the overlap clipped at 0: no tangential stiffness apart)
    with F_a = 2π R γ cos θ / (1 + 2.1 Ŝ + 10 Ŝ²), Ŝ = (S/2) √(R/V), S = −δ the separation
    (0 touching), R = 2 R* ([Willett2000])."""
    r = 2.0 * r_eff
    f = 2.0 * math.pi * r * model.tension
    if delta >= 0.0:
        return f, 0.0, delta
    if model.volume == 0.0:
        return 0.0, 0.0, 0.0
    x = -0.5 * delta * math.sqrt(r / model.volume)
    return f / (1.0 + 2.1 * x + 10.0 * x * x), 0.0, 0.0


@njit(**JIT)
def jkr_stiffness(w, e_star, r_eff, delta_ref):
    """The tangent stiffness dF/dδ (N/m) of JKR contacts of effective radii ``r_eff`` (array,
    m) at the larger of ``delta_ref`` (array, m) and the overlap δ₀ = a₀²/(3R*) where a contact
    rests unloaded (a₀³ = 9π w R*²/(2E*)): 2E* a (2a/R* − 3s/2)/(2a/R* − s/2),
    s = √(2π w/(E* a)) — dF/da over dδ/da of [JKR1971]'s F(a), δ(a); 6/5 E* a₀ at δ₀. The
    stable branch stiffens with δ, and a resting contact sits at δ₀ at least, so this bounds
    the stiffness of a contact at rest or at ``delta_ref``, which the time step reads."""
    out = np.empty(r_eff.shape[0])
    for q in range(r_eff.shape[0]):
        r = r_eff[q]
        a0 = _cbrt(4.5 * math.pi * w * r * r / e_star)
        a = jkr_radius(w, e_star, max(delta_ref[q], a0 * a0 / (3.0 * r)), r)
        s = math.sqrt(2.0 * math.pi * w / (e_star * a))
        out[q] = 2.0 * e_star * a * (2.0 * a / r - 1.5 * s) / (2.0 * a / r - 0.5 * s)
    return out


def stiffness(model, r_eff: np.ndarray, delta_ref: np.ndarray) -> np.ndarray | None:
    """The stiffness (N/m) a contact of the cohesion record ``model`` can reach at rest or at
    the overlaps ``delta_ref`` (arrays of effective radii and overlaps, m) where it exceeds the
    normal law's, for the time step: JKR's (:func:`jkr_stiffness`); None for the others (DMT
    adds a constant force, sjkr and liquid bridges soften the contact)."""
    if not isinstance(model, JKR) or model.w == 0.0:
        return None
    return jkr_stiffness(model.w, model.E, np.ascontiguousarray(r_eff, float),
                         np.ascontiguousarray(delta_ref, float))


#: record → kernel: (attraction F_a, what the Coulomb limit's normal force adds, the overlap
#: the tangential stiffness reads)
KERNELS = {DMT: dmt_force, JKR: jkr_force, SJKR: sjkr_force, LiquidBridge: bridge_force}


def cohesion_force(model, delta, r_eff, s):
    """The attraction (N, ≥ 0) of the cohesion record ``model`` at overlap ``delta`` (m) of a
    pair of effective radius ``r_eff`` and sum of radii ``s`` (m; a wall: inf), the force
    friction's Coulomb limit adds to the repulsive normal force (module docstring) and the
    overlap the tangential stiffness reads."""
    return KERNELS[type(model)](model, delta, r_eff, s)


@overload(cohesion_force, jit_options=JIT)
def _cohesion_force(model, delta, r_eff, s):
    """Inside numba: the model's kernel, resolved from the record's type at compile time."""
    kernel = KERNELS[model.instance_class]
    return lambda model, delta, r_eff, s: kernel(model, delta, r_eff, s)


@njit(inline="always", **JIT)
def _never(model, delta, r_eff):
    return False


@njit(inline="always", **JIT)
def _jkr_holds(model, delta, r_eff):
    # δ ≥ δ_c = −(3/4) (h R*)^{1/3} (:func:`jkr_limit`), cubed: no cube root
    return (delta >= 0.0 or -delta * delta * delta <= 0.421875 * model.h * r_eff
            if model.w > 0.0 else False)


@njit(inline="always", **JIT)
def _bridge_holds(model, delta, r_eff):
    return delta >= -model.rupture


#: record → whether a contact that touched holds at a negative overlap
HOLDS = {DMT: _never, JKR: _jkr_holds, SJKR: _never, LiquidBridge: _bridge_holds}


def holds(model, delta, r_eff):
    """Whether a contact of the cohesion record ``model`` that touched last step still acts
    at the overlap ``delta`` (m, < 0): JKR down to δ_c (:func:`jkr_limit`), a liquid bridge
    down to −S_c, the others never."""
    return HOLDS[type(model)](model, delta, r_eff)


@overload(holds, jit_options=JIT)
def _holds(model, delta, r_eff):
    """Inside numba: the model's test, resolved from the record's type at compile time."""
    kernel = HOLDS[model.instance_class]
    return lambda model, delta, r_eff: kernel(model, delta, r_eff)


#: the cohesion models by name (``contact.cohesion``; "none": no cohesion) and the
#: ``[contact]`` field each reads
PARAMETER = {"dmt": ("work_of_adhesion",), "jkr": ("work_of_adhesion",),
             "sjkr": ("cohesion_energy_density",),
             "liquid_bridge": ("liquid_volume", "surface_tension", "contact_angle")}
#: the models whose contacts act past touching (their runs keep the contact history)
HELD = ("jkr", "liquid_bridge")


def cohesion_model(name: str, values: dict, e_star: float = 0.0):
    """The record of the cohesion model ``name`` (None for ``"none"``) from ``values`` (its
    parameter by :data:`PARAMETER`'s name; None counts 0); JKR takes the pair's Hertz modulus
    ``e_star`` (Pa)."""
    if name == "none":
        return None
    x = [float(values.get(f) or 0.0) for f in PARAMETER[name]]
    if name == "liquid_bridge":
        volume, tension, angle = x[0], x[1], math.radians(x[2])
        return LiquidBridge(volume, tension * math.cos(angle),
                            (1.0 + 0.5 * angle) * volume ** (1.0 / 3.0))
    return {"dmt": DMT, "sjkr": SJKR}[name](x[0]) if name != "jkr" else JKR.of(x[0], float(e_star))


def reach(model, r_max: float) -> float:
    """How far past touching (m) a contact of ``model`` acts, for spheres up to ``r_max``
    (m): |δ_c| of JKR at R* = r_max (a sphere on a wall, the largest), a liquid bridge's
    rupture separation S_c, else 0."""
    if isinstance(model, LiquidBridge):
        return float(model.rupture)
    if not isinstance(model, JKR) or model.w == 0.0:
        return 0.0
    return -float(jkr_limit(model.w, model.E, float(r_max)))
