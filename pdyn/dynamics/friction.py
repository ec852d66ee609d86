"""Tangential and rolling contact sub-models: a tangential spring–dashpot with history and a
Coulomb cap, and a constant-torque rolling resistance. The contact loop
(``pdyn.dynamics.contact``) calls them for each touching contact after the normal law
(``pdyn.dynamics.laws``), as LAMMPS ``pair granular`` combines its normal, damping, tangential
and rolling sub-models ([LAMMPSgranular]).

Each sub-model is chosen once in Python by its parameter record — :class:`Tangential` (μ > 0)
or None, :class:`Rolling` (μ_r > 0) or None — and numba compiles the contact loop with the
chosen ones inlined and the others pruned (a ``None`` argument), so a frictionless run carries
no tangential code at all. Per contact, seen from sphere i, with n the unit normal from i to
its partner j (for a wall n = −wall normal; the wall has v = ω = 0, infinite radius and
mass):

* contact-point velocity of i relative to j ([CundallStrack1979]; the lever arms are the radii,
  as in LAMMPS ``gran/*/history`` [LAMMPSgranular]):
  v_c = v_i − v_j + (r_i ω_i + r_j ω_j) × n,  v_t = v_c − (v_c·n) n;
* the tangential spring s (m, the contact's history) is first turned into the current
  tangent plane, then s ← s + v_t dt; F_t = −k_t s − c_t v_t. How it is turned is the
  history's sub-model (``[contact] tangential_history``, :attr:`Tangential.history`, read at
  run time): ``rescaled`` (the default) rotates it and keeps its length,
  s ← (s − (s·n) n)·|s|/|s − (s·n) n| ([Luding2008] eq. 17, LAMMPS ``pair granular``);
  ``projected`` drops its normal part, s ← s − (s·n) n, as LAMMPS ``pair gran/*/history``
  does ([LAMMPSgranular]: it adds v_t dt first and projects the sum, the same spring since
  v_t ⊥ n);
* Coulomb cap ([CundallStrack1979]): if |F_t| > μ F_n, F_t ← μ F_n F_t/|F_t| and the spring is
  reset to what gives the capped force, s = −(F_t + c_t v_t)/k_t (LAMMPS' rule); at a first
  touch F_n is the whole window's normal force and the contact loop scales F_t to the
  sample's share of it (``pdyn.dynamics.laws``, "Friction at the first touch");
* stiffness and damping of the tangential spring:
  linear law: k_t = 2/7 k_n, c_t = c_n/2 (LAMMPS ``gran/hooke/history`` defaults for
  ``Kt`` and ``gamma_t`` [LAMMPSgranular]);
  Hertz: Mindlin's no-slip stiffness k_t = 8 G* √(R_eff δ) ([MindlinDeresiewicz1953];
  [Tsuji1992]), with G* = E* (1 − ν)/(2(2 − ν)) for two spheres of one material
  (G = E/(2(1 + ν)), 1/E* = 2(1 − ν²)/E, 1/G* = 2(2 − ν)/G, [ChungOoi2011] §2), and
  c_t = 2 ζ √(m_eff k_t), the normal law's damping ratio on the tangential stiffness;
  with the dampings sampled as LAMMPS (``mass_velocity``, ``viscoelastic``, ``tsuji``,
  ``pdyn.dynamics.laws``) c_t = η/2 for both laws, η the normal dashpot's coefficient
  (LAMMPS' ``gamma_t`` = NULL of ``gran/*/history``, ``x_gammat`` = 0.5 of ``pair granular``);
* torque of the tangential force on i: (r_i n) × F_t, on j: (r_j n) × F_t (the force on j is
  −F_t at −r_j n);
* rolling resistance, constant-torque model ("model A" of [Ai2011]): on i
  M_r = −μ_r R_eff F_n ω_r/|ω_r| with ω_r the part of ω_i − ω_j normal to n, on j −M_r (a
  constant torque can chatter about ω_r = 0 at rest: [Ai2011] §2.1).

Every step is written so that seen from j (n, v_c and the spring negated) it gives the negated
force and spring and the torque on j bit for bit: the contact loop evaluates a pair of two rows
once and hands the result to the other row (``pdyn.dynamics.contact``). Each side keeps its
own spring (``pdyn.dynamics.history``).

Units: N, N·m, m, m/s, rad/s, kg, s.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit
from numba.extending import overload

from .._jit import JIT
from .laws import SAMPLED, Hertz, Linear, dashpot_coefficient, root, stiffness


#: how the tangential spring is turned into the new tangent plane (:attr:`Tangential.history`)
RESCALED, PROJECTED = 0.0, 1.0


class Tangential(NamedTuple):
    """Tangential spring–dashpot with a Coulomb cap: coefficient ``mu`` (dimensionless),
    ``kt_ratio`` = k_t / (the normal law's stiffness) and how the spring is turned
    (``history``: :data:`RESCALED` or :data:`PROJECTED`, as LAMMPS ``pair gran/*/history``;
    read at run time, so one compiled contact loop serves both)."""

    mu: float
    kt_ratio: float
    history: float = RESCALED


#: the tangential histories by name (``contact.tangential_history``)
HISTORIES = {"rescaled": RESCALED, "projected": PROJECTED}

#: c_t / η with the dampings sampled as LAMMPS (its ``gamma_t`` = NULL default)
SAMPLED_TANGENTIAL_DAMPING = 0.5


class Rolling(NamedTuple):
    """Constant-torque rolling resistance ([Ai2011] model A): coefficient ``mu_roll``
    (dimensionless)."""

    mu_roll: float


def tangential_model(law: str, friction: float, poisson: float,
                     history: str = "rescaled") -> Tangential | None:
    """The tangential record for μ = ``friction`` (None for μ = 0) with the spring turned as
    ``history`` says (:data:`HISTORIES`): k_t/k_n = 2/7 for the linear law, 2(1 − ν)/(2 − ν)
    (= 8 G*/(2 E*), Mindlin's over Hertz's tangent stiffness) for Hertz."""
    if history not in HISTORIES:
        raise ValueError(f"contact tangential_history {history!r}: unknown (choose from "
                         f"{', '.join(HISTORIES)})")
    if not friction > 0.0:
        return None
    ratio = 2.0 * (1.0 - poisson) / (2.0 - poisson) if law == "hertz" else 2.0 / 7.0
    return Tangential(float(friction), ratio, HISTORIES[history])


def rolling_model(rolling: float) -> Rolling | None:
    """The :class:`Rolling` record for μ_r = ``rolling`` (None for μ_r = 0)."""
    return Rolling(float(rolling)) if rolling > 0.0 else None


@njit(**JIT)
def linear_tangential(law, zeta, tangential, delta, r_eff, m_eff):
    """(k_t, c_t) of the linear law: 2/7 k_n and half the normal dashpot (damping ratio
    ``zeta``)."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    return tangential.kt_ratio * k, (zeta * root(m_eff * k) if zeta > 0.0 else 0.0)


@njit(**JIT)
def hertz_tangential(law, zeta, tangential, delta, r_eff, m_eff):
    """(k_t, c_t) of Hertz–Mindlin: 8 G* √(R δ) and 2 ζ √(m k_t)."""
    kt = tangential.kt_ratio * 2.0 * law.E * root(r_eff * delta)
    return kt, (2.0 * zeta * root(m_eff * kt) if zeta > 0.0 else 0.0)


#: parameter record of the normal law → its tangential coefficients
COEFFICIENTS = {Linear: linear_tangential, Hertz: hertz_tangential}


@njit(inline="always", **JIT)
def sampled_tangential_damping(law, delta, r_eff, m_eff):
    """c_t = :data:`SAMPLED_TANGENTIAL_DAMPING` η under a damping sampled as LAMMPS."""
    mk, p, a = stiffness(law.law, r_eff, m_eff)
    return SAMPLED_TANGENTIAL_DAMPING * dashpot_coefficient(law.damping, mk, p, a, delta,
                                                            r_eff, m_eff)


def tangential_coefficients(law, tangential, delta, r_eff, m_eff):
    """(k_t (N/m), c_t (N·s/m)) of one contact under the normal sub-models ``law`` (a
    ``pdyn.dynamics.laws.Normal`` record: the elastic law and its damping — the damping ratio
    ζ, or a damping sampled as LAMMPS)."""
    kernel = COEFFICIENTS[type(law.law)]
    if law.damping.kind >= SAMPLED:
        return (kernel(law.law, 0.0, tangential, delta, r_eff, m_eff)[0],
                sampled_tangential_damping(law, delta, r_eff, m_eff))
    return kernel(law.law, law.damping.coefficient, tangential, delta, r_eff, m_eff)


@overload(tangential_coefficients, jit_options=JIT)
def _tangential_coefficients(law, tangential, delta, r_eff, m_eff):
    """Inside numba: resolve the law from its record's type at compile time, the damping by
    its kind at run time."""
    kernel = COEFFICIENTS[law.types[0].instance_class]

    def impl(law, tangential, delta, r_eff, m_eff):
        if law.damping.kind >= SAMPLED:
            return (kernel(law.law, 0.0, tangential, delta, r_eff, m_eff)[0],
                    sampled_tangential_damping(law, delta, r_eff, m_eff))
        return kernel(law.law, law.damping.coefficient, tangential, delta, r_eff, m_eff)

    return impl


@njit(inline="always", **JIT)
def rescaled(sx, sy, sz, nx, ny, nz):
    """:data:`RESCALED`: s − (s·n) n, rescaled to the length of s."""
    s_n = sx * nx + sy * ny + sz * nz
    rx, ry, rz = sx - s_n * nx, sy - s_n * ny, sz - s_n * nz
    if s_n != 0.0:  # rescale to the former length (nothing to do for a new spring)
        r2 = rx * rx + ry * ry + rz * rz
        if r2 > 0.0:
            scale = math.sqrt((sx * sx + sy * sy + sz * sz) / r2)
            rx, ry, rz = rx * scale, ry * scale, rz * scale
    return rx, ry, rz


@njit(inline="always", **JIT)
def projected(sx, sy, sz, nx, ny, nz):
    """:data:`PROJECTED`: s − (s·n) n."""
    s_n = sx * nx + sy * ny + sz * nz
    return sx - s_n * nx, sy - s_n * ny, sz - s_n * nz


@njit(inline="always", **JIT)
def turned(tangential, sx, sy, sz, nx, ny, nz):
    """The spring s turned into the tangent plane of n as the ``tangential`` record's
    ``history`` says (:data:`HISTORIES`)."""
    if tangential.history == PROJECTED:
        return projected(sx, sy, sz, nx, ny, nz)
    return rescaled(sx, sy, sz, nx, ny, nz)


@njit(inline="always", **JIT)
def _reset(fx, fy, fz, ct, tx, ty, tz, kt):
    """The spring that gives the capped force F_t: −(F_t + c_t v_t)/k_t, one division (1/k_t,
    loop-invariant for a linear law of one material) and products."""
    inv = 1.0 / kt
    return -(fx + ct * tx) * inv, -(fy + ct * ty) * inv, -(fz + ct * tz) * inv


@njit(inline="always", **JIT)
def tangential_force(law, tangential, sx, sy, sz, nx, ny, nz, vx, vy, vz, f_n, delta, r_eff,
                     m_eff, dt, slid):
    """One contact's tangential step from i's side: old spring s (m), normal n (i → j),
    contact-point velocity v_c (m/s) of i relative to j, normal force F_n ≥ 0 (N), whether the
    contact ``slid`` (hit the Coulomb cap) last step. Returns the new spring, the tangential
    force on i (N), six scalars, and whether it slides now.

    ``slid`` changes how, not what, is computed: a contact that slid last step gets the cap
    without a branch (both outcomes computed, one selected), one that stuck gets the branch.
    In a granular gas a third of the contacts slide, which ones looks random to the
    processor's branch predictor, and the branch comes at the end of the contact's longest
    chain of dependent operations, so each wrong guess stalls the pass; from one step to the
    next 96 % of the contacts keep their state (the 97 336-sphere gas after 300 steps: 1 424
    changes in 36 478 evaluations). The results are the same bits either way: the dense gas's
    step took 1.3× the time with the branch alone and 1.25× with the select alone."""
    v_n = vx * nx + vy * ny + vz * nz
    tx, ty, tz = vx - v_n * nx, vy - v_n * ny, vz - v_n * nz
    rx, ry, rz = turned(tangential, sx, sy, sz, nx, ny, nz)
    sx, sy, sz = rx + tx * dt, ry + ty * dt, rz + tz * dt
    kt, ct = tangential_coefficients(law, tangential, delta, r_eff, m_eff)
    fx = -kt * sx - ct * tx
    fy = -kt * sy - ct * ty
    fz = -kt * sz - ct * tz
    f2 = fx * fx + fy * fy + fz * fz
    cap = tangential.mu * f_n
    sliding = f2 > cap * cap  # Coulomb: slide at the cap; the spring gives the capped force
    if slid:  # both outcomes, then a select: × 1.0 and the old spring where it sticks
        q = cap / math.sqrt(f2)
        q = q if sliding else 1.0
        fx, fy, fz = q * fx, q * fy, q * fz
        # k_t = 0 (Hertz at δ = 0) gives inf or NaN here under the pass's numpy error model,
        # replaced just below
        rx, ry, rz = _reset(fx, fy, fz, ct, tx, ty, tz, kt)
        if not kt > 0.0:
            rx = ry = rz = 0.0
        sx = rx if sliding else sx
        sy = ry if sliding else sy
        sz = rz if sliding else sz
    elif sliding:
        q = cap / math.sqrt(f2)
        fx, fy, fz = q * fx, q * fy, q * fz
        if kt > 0.0:
            sx, sy, sz = _reset(fx, fy, fz, ct, tx, ty, tz, kt)
        else:
            sx, sy, sz = 0.0, 0.0, 0.0
    return sx, sy, sz, fx, fy, fz, sliding


@njit(inline="always", **JIT)
def rolling_torque(rolling, nx, ny, nz, wx, wy, wz, f_n, r_eff):
    """Constant rolling-resistance torque on i ([Ai2011] model A) for the relative spin
    ω_i − ω_j = (wx, wy, wz) (rad/s): −μ_r R_eff F_n ω_r/|ω_r| (N·m), ω_r its part normal to
    n."""
    w_n = wx * nx + wy * ny + wz * nz
    wx, wy, wz = wx - w_n * nx, wy - w_n * ny, wz - w_n * nz
    w = math.sqrt(wx * wx + wy * wy + wz * wz)
    if w == 0.0:
        return 0.0, 0.0, 0.0
    m = -rolling.mu_roll * r_eff * f_n / w
    return m * wx, m * wy, m * wz
