"""Cohesion: an attractive normal force added to the normal law of a touching contact, one
sub-model per run (``[contact] cohesion``, the part ``cohesion`` of
``pdyn.dynamics.laws.SUB_MODELS``), its parameters per pair of materials.

Seen from sphere i, with R* the pair's effective radius, δ ≥ 0 the overlap and s = r_i + r_j
the sum of radii (a wall: s = ∞), each model gives the attraction F_a ≥ 0 (N, pulling i towards
its partner) and the part of it friction's Coulomb limit adds to the repulsive force:

  dmt:  F_a = 2π w R* (Derjaguin, Muller & Toporov [DMT1975]), w the work of adhesion (J/m²);
        LAMMPS ``pair granular`` normal ``dmt`` ([LAMMPSgranular]), whose γ is w/2:
        F_ne = 4/3 E* √R* δ^{3/2} − 4π γ R*. It acts while the spheres overlap (δ ≥ 0),
        so the pull-off force is 2π w R*. Coulomb limit: μ (F_r + F_a), F_r the repulsive
        (elastic and damping) force — LAMMPS' F_n0 = |F_ne + 2 F_pulloff|.
  sjkr: F_a = k A, k the cohesion energy density (J/m³), A = π a² the area of the circle in
        which the two spheres' surfaces intersect, a² = (d² − (r_i − r_j)²)((r_i + r_j)² −
        d²)/(4 d²) at centre distance d = s − δ (a wall: a² = 2 r_i δ − δ²) — LIGGGHTS
        ``cohesion sjkr`` ([LIGGGHTSsjkr]). In terms of (δ, R*, s), with x = δ/s:
        a² = (4 R* − 2δ + δ x)(2δ − δ x)/(4 (1 − x)²). Coulomb limit: μ F_r (LIGGGHTS'
        default ``tangential_reduce off``: friction does not see the cohesion force).

The records (:class:`DMT`, :class:`SJKR`) are chosen in Python (:func:`cohesion_model`);
:func:`cohesion_force` dispatches on the record's type, so numba compiles the contact loop
with the one chosen inlined; a run without cohesion passes None and carries no cohesion code
(the branch is pruned at compile time, ``pdyn.dynamics.contact``).

The energy the contact loop reports stays the elastic energy of the normal law: the surface
energy of adhesion is not in it.

Mixing (``pdyn.dynamics.materials``): w and k of two materials are mixed as their geometric
mean √(x₁ x₂) (a material without cohesion counts 0: the pair has none), the combining rule
of works of adhesion w₁₂ ≈ √(w₁ w₂) ([Israelachvili2011]) and the rule pdyn and LAMMPS
``pair granular`` use for their other coefficients; an ``[[interactions]]`` table sets a
pair's value itself.

Units: N, m, J/m², J/m³.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit
from numba.extending import overload

from .._jit import JIT


class DMT(NamedTuple):
    """DMT adhesion: work of adhesion ``w`` (J/m²); F_a = 2π w R* while overlapping."""

    w: float


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


#: record → kernel: (attraction F_a, what the Coulomb limit's normal force adds, the overlap
#: the tangential stiffness reads)
KERNELS = {DMT: dmt_force, SJKR: sjkr_force}


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


#: the cohesion models by name (``contact.cohesion``; "none": no cohesion) and the
#: ``[contact]`` field each reads
PARAMETER = {"dmt": "work_of_adhesion", "sjkr": "cohesion_energy_density"}
RECORDS = {"dmt": DMT, "sjkr": SJKR}


def cohesion_model(name: str, values: dict):
    """The record of the cohesion model ``name`` (None for ``"none"``) from ``values`` (its
    parameter by :data:`PARAMETER`'s name; None counts 0)."""
    if name == "none":
        return None
    return RECORDS[name](float(values.get(PARAMETER[name]) or 0.0))
