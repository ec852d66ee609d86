"""The normal force of a contact, two sub-models: the elastic law and its damping, one function
each ([CundallStrack1979]; split as LAMMPS ``pair granular`` splits ``normal`` and ``damping``,
[LAMMPSgranular]).

A law maps the state of one contact seen from particle i — overlap δ ≥ 0 (m), normal approach
speed v_n (m/s, > 0 when approaching, from the half-step velocities), effective radius R_eff and
mass m_eff of the pair, and the time step dt (s, for the dashpot's quadrature below) — to
the magnitude of the normal force on i (N, never attractive: a damped force that would pull is
clamped at 0, as LAMMPS' ``limit_damping`` [LAMMPSgranular]) and the elastic energy stored in
the contact (J). It reads nothing else, so it is evaluated the same way for sphere–sphere and
sphere–wall contacts and on whichever rank owns i.

  linear: F = k δ, k = ``stiffness`` or E·R_eff (E a stiffness scale here), energy k δ²/2;
  Hertz:  F = 4/3 · E* · √R_eff · δ^{3/2}, energy 8/15 · E* · √R_eff · δ^{5/2}, with the
          effective modulus 1/E* = 2 (1 − ν²)/E of two bodies of Young's modulus E and
          Poisson ratio ν ([ChungOoi2011] §2); a wall is a half-space of the same material.

A law declares its tangent stiffness k_t(δ) = K δ^p (linear: k, p = 0; Hertz: 2 E* √R_eff,
p = 1/2) and its force exponent a (F ∝ δ^a); a damping reads only those and adds the force of a
dashpot along the normal, so each law takes each damping:

  tangent (default): c(δ) = 2 ζ √(m_eff k_t(δ)) ([Tsuji1992]: constant for the linear law,
          ∝ δ^{1/4} for Hertz);
  constant: c = 2 ζ √(m_eff k_t(δ̄)), δ̄ = :data:`REFERENCE_OVERLAP` · R_eff — the linear
          law's tangent damping, bit for bit; for Hertz a dashpot that does not stiffen with
          the overlap.
  mass_velocity, viscoelastic, tsuji: LAMMPS' ``pair granular`` dampings ([LAMMPSgranular]),
          η = γ m_eff, γ m_eff √(R_eff δ) ([Brilliantov1996]) and α √(m_eff F_e/δ)
          ([Tsuji1992], α from e by [Marshall2009]), sampled as LAMMPS samples them: η v_n
          at the half-step approach speed (:func:`damping_force`), without the window, lag
          correction and cap below — LAMMPS' numbers, for reproducing its studies.

With the tangent damping the coefficient of restitution of a contact does not depend on the
impact speed, only on ζ; with the clamp it is not the linear oscillator's closed form, so
:func:`damping_ratio` finds the ζ that gives the asked e by integrating the dimensionless
contact once (bisection on ζ): the restitution coefficient of the law is e to 1e-5, for both
laws. With the constant damping Hertz' restitution depends on the impact speed (the contact
stiffens as it deepens); ζ is the linear contact's for e, so e holds for impacts whose mean
tangent stiffness is near k_t(δ̄) and faster ones rebound higher. ζ is at most
:data:`MAX_DAMPING_RATIO` (20: e ≥ 6.2e-4 linear, 5.2e-4 Hertz; the config asks e ≥ 1e-3).

**The dashpot in a discrete step** (:func:`_dashpot`). Velocity Verlet samples the force at
t_{n+1} from the positions there and the half-step velocities v_{n+1/2}; the sample stands for
the impulse of the window [t_{n+1/2}, t_{n+3/2}]. The law sees one contact — its overlap δ
and approach speed u = v_n at the half step —, never the other forces on the pair. Four
requirements fix the scheme.

*Statics.* At rest every velocity is 0 (to rounding), so u = 0, while the spring is held by
gravity and the other contacts. From (δ, u) alone that cannot be told from the turning point
of an impact, so the damping force must vanish at u = 0 whatever δ, or every resting contact
carries a wrong force. Every term of pdyn's damping force vanishes with u (below), so a
contact at rest carries exactly its elastic force F_s(δ), for both laws and any e. (A scheme
that predicts the speed at t_{n+1} from the contact's own spring, u* = (u − dt F_s/(2 m_eff))
/(1 + ε), fails this: at rest it damps a separation that never comes, its force is
F_s/(1 + ε), and the spring stands at (1 + ε) times its load.)

*The lag.* The plain dashpot c u_{n+1/2} (what LAMMPS' ``pair gran/*`` do with velocity
Verlet, [LAMMPSgranular]) lags the position by dt/2: u_{n+1/2} = δ'(t_{n+1}) − (dt/2) δ'' +
O(dt²). The modified equation ([WarmingHyett1974]: the differential equation the discrete
scheme solves, to the next order in dt) of an isolated pair m_eff δ'' = −F_s − c u_{n+1/2} is

    m_eff (1 − ε(δ)) δ'' = −F_s(δ) − c(δ) δ',   ε(δ) = c(δ) dt / (2 m_eff),

the contact seen lighter by 1 − ε, or spring and dashpot both stiffer by 1 + ε. The stiffer
spring F_s (1 + ε) depends on δ alone — a conservative force, no work over a contact — but it
shortens the contact, and with the stiffer dashpot the rebound comes out low: 32 % (linear)
and 18 % (Hertz) at e = 0.1 and the default dt. The spring part cannot be taken out without a
standing force at rest (that is what the earlier predictor did), so the dashpot alone is
corrected: it sees

    u* = u / (1 + α ε + γ ε²).

With F_s ∝ δ^a and c ∝ δ^q, the energy the modified contact dissipates, ∮ β (1 + ε) δ' dδ
along the path in the potential of F_s (1 + ε), with β = c (1 − α ε), has no first-order term
in ε when 1 − α = (2q + 1)/(a + 1 + q) (two Beta integrals over s = δ/δ_max, weak damping):
α = (a − q)/(a + 1 + q). Linear law (a = 1, q = 0): α = 1/2, there for any damping, since e
depends on ζ alone and the modified contact's ζ is ζ_β / √(1 − ε_β) = ζ (1 + O(ε²)) when
β = c (1 − ε/2). Hertz (a = 3/2, q = 1/4): α = 5/11; the α that makes the measured e exact at
e = 0.1 tends to it as dt → 0 (0.46 at 80 steps per contact time). γ, the second order, is
fitted to the discrete impact: that best α exceeds the first-order one by 0.13–0.16 ε for
Hertz (20 to 80 steps per contact time, impact speeds 0.1 to 10 m/s) and by −0.01 to 0.03 ε
for the linear law, so γ = 0.15 (Hertz), 0 (linear): :func:`_lag`.

*The window.* The damping impulse over any stretch of a contact is a function of the overlaps
at its ends, ∫ c(δ) δ' dt = D(δ_b) − D(δ_a), D(δ) = C δ^{q+1}/(q + 1) (c = C δ^q), so the
sample is [D(δ_{n+3/2}) − D(δ_{n+1/2})]/dt with δ_{n+1/2} = δ − u dt/2 (exact for the drift
just made) and δ_{n+3/2} = δ + (2 u* − u) dt/2, each clipped at 0 (a contact that ends inside
the window); in the bulk of a linear contact that is c u*. At the first touch (δ < u dt: the
overlap a step ago was negative) the window starts at the touch: D(δ + u dt/2)/dt · u*/u.
The first-touch test keeps no state, so a touch exactly on a step boundary (to rounding) can
be counted twice.

*Friction at the first touch.* The first sample's damping force is the impulse of the part of
the window after the touch, over dt: between 1/2 and 3/2 of the dashpot of a contact that was
there over the whole window, c(δ) u*. Friction's Coulomb limit must not read it: a contact
that slides from its first touch would slide at μ times that share, and when the next sample
brings the whole dashpot (twice as much for a touch late in the step) its spring is too short
for the new limit, so it sticks for steps while it really slides — the tangential impulse fell
up to 5 % short of μ times the normal one, and more as dt shrank. So :func:`normal_forces`
also gives the whole window's force; the tangential step runs on it (its limit and the
spring it leaves follow the contact as the next samples see it), and its force is then
scaled by the sample's share of the window, f / f_whole: in sliding exactly μ f, the same
share of the window as the normal dashpot's (``pdyn.dynamics.contact._evaluate``; tested
from the default dt to t_c/320 in ``tests/dynamics/test_first_touch.py``). The normal force,
and so statics and restitution, are untouched.

*Never reversing.* A dashpot stops relative motion but never reverses it: the damping force
is at most m_eff |u| / dt, the force that stops the pair's approach within the step. It
binds only for ε ≳ 2/3 (linear law, default dt: ζ ≳ 4, e ≲ 0.02), where it keeps the explicit
update of u stable (its factor 1 − 2ε/(1 + α ε) would pass −1 at ε = 2 for the linear law).
The γ term stops growing at ε = 1/√γ (2.6, where the cap binds already), so that the damping
force never decreases as ε grows.

Measured on one sphere hitting a wall at eight phases of the impact within a step
(``benchmarks/restitution.py``, ``docs/validation.md``): the rebound is within 0.6 % (linear)
and 0.5 % (Hertz) of the asked e for e in [0.1, 1] at the default dt (the plain dashpot: 32 %,
18 %); a contact at rest carries its elastic force to 1e-10 (``tests/dynamics/
test_statics.py``). An elastic contact (ζ = 0) has no dashpot: its force is unchanged.

Law and damping are chosen in Python once, by their parameter records (:class:`Linear` or
:class:`Hertz`, and a :class:`Damping` of one of five kinds; together a :class:`Normal`);
:func:`normal_forces` dispatches on the law record's type (compiled once per law and inlined
by LLVM into the pair loops: ``JIT_INLINE``) and on the damping's kind at run time (a branch every
contact of a run takes the same way: one kernel serves all five dampings). The parameters
each reads and the history each keeps are declared in :data:`SUB_MODELS`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT, JIT_INLINE
from ..broadphase.params import Param


@njit(**JIT)
def _clamped(x, v, exponent, c):
    """Force of the dimensionless damped contact at overlap x, speed v (≥ 0: never pulls)."""
    xp = max(x, 0.0)
    return max(xp ** exponent + c * xp ** (0.5 * exponent - 0.5) * v, 0.0)


@njit(**JIT)
def _rebound(exponent, zeta, steps):
    """Rebound speed of the dimensionless damped contact x'' = −max(x^a + 2 ζ √(a) x^{(a−1)/2}
    x', 0) from x = 0, x' = 1 (unit mass, unit spring constant; a = 1 linear, 3/2 Hertz, whose
    tangent stiffness is a x^{(a−1)/2}): the speed when the force first vanishes (from then on
    the sphere moves freely). Classical RK4 with ``steps`` steps per unit time."""
    h = 1.0 / steps
    c = 2.0 * zeta * math.sqrt(exponent)
    x, v = 0.0, 1.0
    for _ in range(200 * steps):
        k1x, k1v = v, -_clamped(x, v, exponent, c)
        k2x = v + 0.5 * h * k1v
        k2v = -_clamped(x + 0.5 * h * k1x, k2x, exponent, c)
        k3x = v + 0.5 * h * k2v
        k3v = -_clamped(x + 0.5 * h * k2x, k3x, exponent, c)
        k4x = v + h * k3v
        k4v = -_clamped(x + h * k3x, k4x, exponent, c)
        x += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        if v < 0.0 and (x <= 0.0 or _clamped(x, v, exponent, c) == 0.0):
            return -v
    return 0.0


#: the largest damping ratio :func:`damping_ratio` returns (the bisection's bracket): the
#: clamped contact rebounds at e = 6.2e-4 (linear), 5.2e-4 (Hertz) with it; a smaller e is
#: refused (``pdyn.config.MIN_RESTITUTION`` = 1e-3 lies above both)
MAX_DAMPING_RATIO = 20.0


@functools.lru_cache(maxsize=64)
def damping_ratio(restitution: float, law: str = "linear") -> float:
    """ζ of the damped ``law`` (``"linear"`` or ``"hertz"``) whose coefficient of restitution
    is ``restitution`` e (0 < e ≤ 1) with the force clamped at zero (bisection on ζ in
    [0, :data:`MAX_DAMPING_RATIO`], the rebound of the dimensionless contact integrated by
    :func:`_rebound`). ValueError if e is below what the largest ζ gives (or not a number)."""
    if restitution >= 1.0:
        return 0.0
    exponent = 1.5 if law == "hertz" else 1.0
    lo, hi = 0.0, MAX_DAMPING_RATIO
    smallest = _rebound(exponent, hi, 2000)
    if not restitution > smallest:
        raise ValueError(f"restitution {restitution!r}: below {smallest:.3g}, the {law} "
                         f"contact's rebound at the largest damping ratio {hi:g}")
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if _rebound(exponent, mid, 2000) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class Linear(NamedTuple):
    """Linear spring: Young's modulus ``E`` (Pa), constant stiffness ``k`` (N/m; 0:
    k = E·R_eff)."""

    E: float
    k: float

    def stiffness(self, r_eff, radius):
        """Stiffness (N/m) of contacts of effective radius ``r_eff`` between spheres of
        ``radius`` (arrays)."""
        return np.full_like(r_eff, self.k) if self.k > 0 else self.E * r_eff


class Hertz(NamedTuple):
    """Hertz contact: effective modulus ``E`` = E* (Pa)."""

    E: float

    def stiffness(self, r_eff, radius):
        """Tangent stiffness (N/m) at an overlap of 1 % of ``radius``."""
        return 2.0 * self.E * np.sqrt(r_eff * 0.01 * radius)


class Damping(NamedTuple):
    """The normal dashpot: its ``coefficient`` — the damping ratio ζ of :data:`TANGENT` and
    :data:`CONSTANT`, γ of :data:`MASS_VELOCITY` (1/s) and :data:`VISCOELASTIC` (1/(m·s)),
    α of :data:`TSUJI`; 0: undamped — and its ``kind`` (a float, so that a pair table of
    several materials holds it as it holds every value). One record type for every damping:
    the kernels branch on the kind at run time (a branch every contact of a run takes the same
    way), so numba compiles each contact kernel once for all five, not once per damping."""

    coefficient: float
    kind: float


#: the dampings' kinds. TANGENT: a dashpot on the normal law's tangent stiffness, c(δ) = 2 ζ
#: √(m_eff k_t(δ)) ([Tsuji1992]: c ∝ δ^{1/4} for Hertz, constant for the linear law).
#: CONSTANT: a dashpot of constant coefficient c = 2 ζ √(m_eff k̄), k̄ the law's tangent
#: stiffness at the overlap :data:`REFERENCE_OVERLAP` × R_eff (for the linear law the same
#: as TANGENT). The dampings of LAMMPS' ``pair granular`` ([LAMMPSgranular]), sampled as
#: LAMMPS samples them (:func:`damping_force`): MASS_VELOCITY, ``pair gran/hooke/history``'s
#: η = γ m_eff; VISCOELASTIC ([Brilliantov1996], ``pair gran/hertz/history``'s) η = γ m_eff a,
#: a = √(R_eff δ) the contact radius; TSUJI ([Tsuji1992]) η = α √(m_eff F_e/δ), F_e/δ the
#: elastic force over the overlap (the linear law's k; Hertz' 4/3 E* √(R_eff δ)), α from the
#: restitution by Marshall's fit (:func:`tsuji_alpha`). Kinds from SAMPLED on are sampled.
TANGENT, CONSTANT, MASS_VELOCITY, VISCOELASTIC, TSUJI = 0.0, 1.0, 2.0, 3.0, 4.0
SAMPLED = MASS_VELOCITY


class Normal(NamedTuple):
    """The normal force of a contact, two sub-models: the elastic ``law`` (:class:`Linear` or
    :class:`Hertz`) and its ``damping`` (a :class:`Damping`)."""

    law: object
    damping: object

    def stiffness(self, r_eff, radius):
        """The law's stiffness (N/m) for the time step (:meth:`Linear.stiffness`)."""
        return self.law.stiffness(r_eff, radius)


#: the lag correction of the dashpot (:func:`_dashpot`): u* = u / (1 + α ε + γ ε²),
#: ε = c dt / (2 m_eff), α = (a − q)/(a + 1 + q) for F ∝ δ^a and c ∝ δ^q (module docstring:
#: from the modified equation; 1/2 linear, 5/11 Hertz with :data:`TANGENT`), γ fitted to the
#: discrete impact: :data:`HERTZ_TANGENT_GAMMA` for Hertz with :data:`TANGENT`, 0 otherwise;
#: the γ term stops growing at ε = 1/√γ, so that the damping force never decreases as ε grows
HERTZ_TANGENT_GAMMA = 0.15

#: :data:`CONSTANT`'s reference overlap, a fraction of R_eff
REFERENCE_OVERLAP = 0.02


@njit(inline="always", **JIT)
def _lag(a, q):
    """(α, γ) of the dashpot's lag correction for F ∝ δ^a, c ∝ δ^q."""
    return (a - q) / (a + 1.0 + q), (HERTZ_TANGENT_GAMMA if a == 1.5 and q == 0.25 else 0.0)


@njit(inline="always", **JIT)
def root(x):
    """√x of an x ≥ 0 (a product of masses, stiffnesses, radii, overlaps) as the processor's
    square root: numba calls libm's ``sqrt``, which LLVM replaces by the instruction only where
    it can prove x ≥ 0 (a sum of squares, a quotient of them), and |x| proves it. A call left
    in the contact loop saves every live floating-point value around it; the same bits."""
    return math.sqrt(abs(x))


@njit(inline="always", **JIT)
def _power(x, q):
    """x^q (x ≥ 0) for the dashpots' exponents: Hertz' q = 1/4 as √√x (pow costs several
    times two square roots in the contact loop), any other q by pow (q = 0: 1)."""
    if q == 0.25:
        return math.sqrt(root(x))
    return x ** q


@njit(inline="always", **JIT)
def _dashpot(coef, q, lag, delta, v_n, m_eff, dt):
    """Damping force (N, along the normal, on i) of the dashpot c(δ) = ``coef`` δ^``q`` for the
    Verlet sample at overlap ``delta`` (m) with half-step approach speed ``v_n`` (m/s), pair
    mass ``m_eff`` (kg), step ``dt`` (s): the damping impulse of the sample's window over
    ``dt`` at the lag-corrected speed u* = u / (1 + α ε + γ ε²), ε = c dt / (2 m_eff),
    (α, γ) = ``lag``, at most the impulse that stops the approach, m_eff |u| / dt (module
    docstring). Exactly 0 at u = 0. Returns (that force, the force of the whole window): they
    differ at a first touch only, where the second is c(δ) u*, the dashpot of a contact
    that was there over the whole window (what friction's Coulomb limit reads, module
    docstring). Inlined, with the damping's kernel, into the force loops: called per contact
    as a function of its own, it kept its tests of q and numba's division checks (the dense
    gas's contact pass took 1.2x the time with friction and without; the same bits)."""
    c = coef if q == 0.0 else coef * _power(delta, q)
    if lag[1] > 0.0:
        eps = 0.5 * dt * c / m_eff
        u = v_n / (1.0 + lag[0] * eps + lag[1] * min(eps * eps, 1.0 / lag[1]))
    else:  # (γ = 0, known when compiled) u / (1 + α ε) with one division
        u = v_n * m_eff / (m_eff + lag[0] * 0.5 * dt * c)
    per_dt = 1.0 / dt  # loop-invariant, as D's 1/(q + 1): the force loops divide once
    scale = per_dt / (q + 1.0)
    if v_n > 0.0 and delta < v_n * dt:  # first touch within the step just made
        y = delta + 0.5 * v_n * dt
        f = coef * (y * _power(y, q)) * scale * (u / v_n)
        whole = c * u
    else:
        hi = delta + (u - 0.5 * v_n) * dt
        lo = delta - 0.5 * v_n * dt
        if q == 0.0 and hi >= 0.0 and lo >= 0.0:
            f = c * u  # D linear: the difference is c u* dt, without the cancellation
        else:
            hi, lo = max(hi, 0.0), max(lo, 0.0)
            f = coef * (hi * _power(hi, q) - lo * _power(lo, q)) * scale
        whole = f
    cap = m_eff * abs(v_n) * per_dt  # a dashpot stops the relative motion, never reverses it
    return min(max(f, -cap), cap), min(max(whole, -cap), cap)


# ------------------------------------------------------------------ normal laws
# Each law gives its elastic force and energy, and its tangent stiffness k_t = K δ^p as
# (m_eff K, p, a) with F ∝ δ^a — what a damping reads of it.
@njit(inline="always", **JIT)
def linear(law, delta, r_eff):
    """Linear spring: (force magnitude on i, elastic energy)."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    return k * delta, 0.5 * k * delta * delta


@njit(inline="always", **JIT)
def linear_stiffness(law, r_eff, m_eff):
    """(m_eff k, 0, 1): the linear law's constant stiffness."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    return m_eff * k, 0.0, 1.0


@njit(inline="always", **JIT)
def hertz(law, delta, r_eff):
    """Hertz contact: (force magnitude on i, elastic energy)."""
    s = root(r_eff * delta)
    return 4.0 / 3.0 * law.E * s * delta, 8.0 / 15.0 * law.E * s * delta * delta


@njit(inline="always", **JIT)
def hertz_stiffness(law, r_eff, m_eff):
    """(m_eff 2 E* √R_eff, 1/2, 3/2): Hertz' k_t = 2 E* √(R_eff δ)."""
    return 2.0 * m_eff * law.E * root(r_eff), 0.5, 1.5


# ------------------------------------------------------------------ dampings
# Each damping gives the dashpot's force (N, along the normal, on i) from the law's
# stiffness (m_eff K, p, a), the overlap and the approach speed (:func:`_dashpot`).
@njit(inline="always", **JIT)
def tangent_damping(zeta, mk, p, a, delta, v_n, m_eff, dt):
    """:data:`TANGENT`: c = 2 ζ √(m_eff K) δ^{p/2}."""
    q = 0.5 * p
    return _dashpot(2.0 * zeta * root(mk), q, _lag(a, q), delta, v_n, m_eff, dt)


@njit(inline="always", **JIT)
def constant_damping(zeta, mk, p, a, delta, v_n, r_eff, m_eff, dt):
    """:data:`CONSTANT`: c = 2 ζ √(m_eff K (δ̄)^p), δ̄ = :data:`REFERENCE_OVERLAP` R_eff."""
    mk_ref = mk if p == 0.0 else mk * _power(REFERENCE_OVERLAP * r_eff, p)
    return _dashpot(2.0 * zeta * root(mk_ref), 0.0, _lag(a, 0.0), delta, v_n, m_eff, dt)


@njit(inline="always", **JIT)
def dashpot_coefficient(damping, mk, p, a, delta, r_eff, m_eff):
    """η (N·s/m) of a sampled ``damping`` (:class:`Damping`, kind ≥ :data:`SAMPLED`) at one
    contact of the law's tangent stiffness (m_eff K, p, a): γ m_eff (:data:`MASS_VELOCITY`),
    γ m_eff √(R_eff δ) (:data:`VISCOELASTIC`) or α √(m_eff F_e/δ), F_e/δ = k_t(δ)/a = K δ^p / a
    (:data:`TSUJI`)."""
    if damping.kind == MASS_VELOCITY:
        return damping.coefficient * m_eff
    if damping.kind == VISCOELASTIC:
        return damping.coefficient * m_eff * root(r_eff * delta)
    return damping.coefficient * root(mk / a) * _power(delta, 0.5 * p)


@njit(inline="always", **JIT)
def damping_force(damping, mk, p, a, delta, v_n, r_eff, m_eff, dt):
    """The dashpot force (N, on i) of the ``damping`` record (:class:`Damping`), and that of
    the whole window (:func:`_dashpot`; a sampled damping gives LAMMPS' η v_n twice: its
    sample is the whole window's — no window, no lag correction, no cap: LAMMPS' numbers)."""
    if damping.kind == TANGENT:
        return tangent_damping(damping.coefficient, mk, p, a, delta, v_n, m_eff, dt)
    if damping.kind == CONSTANT:
        return constant_damping(damping.coefficient, mk, p, a, delta, v_n, r_eff, m_eff, dt)
    f = dashpot_coefficient(damping, mk, p, a, delta, r_eff, m_eff) * v_n
    return f, f


#: parameter record → kernel: elastic force, tangent stiffness
ELASTIC = {Linear: linear, Hertz: hertz}
STIFFNESS = {Linear: linear_stiffness, Hertz: hertz_stiffness}


def elastic(law, delta, r_eff):
    """The elastic force of the ``law`` record: (force magnitude on i, energy)."""
    return ELASTIC[type(law)](law, delta, r_eff)


def stiffness(law, r_eff, m_eff):
    """The tangent stiffness of the ``law`` record as (m_eff K, p, a)."""
    return STIFFNESS[type(law)](law, r_eff, m_eff)


@overload(elastic, jit_options=JIT)
def _elastic(law, delta, r_eff):
    """Inside numba: the law's kernel, resolved from the record's type at compile time."""
    kernel = ELASTIC[law.instance_class]
    return lambda law, delta, r_eff: kernel(law, delta, r_eff)


@overload(stiffness, jit_options=JIT)
def _stiffness(law, r_eff, m_eff):
    """Inside numba: the law's kernel, resolved from the record's type at compile time."""
    kernel = STIFFNESS[law.instance_class]
    return lambda law, r_eff, m_eff: kernel(law, r_eff, m_eff)


@njit(**JIT_INLINE)
def normal_forces(model, delta, v_n, r_eff, m_eff, dt):
    """The normal sub-models ``model`` (a :class:`Normal` record) applied to one contact
    sampled in a step of ``dt`` s: (normal force magnitude on i, elastic energy, the normal
    force of the whole window) — the law's elastic force plus its damping's dashpot, never
    attractive; the third differs from the first at a first touch only (:func:`_dashpot`:
    what friction's Coulomb limit reads, module docstring)."""
    f, energy = elastic(model.law, delta, r_eff)
    whole = f
    if model.damping.coefficient > 0.0:
        mk, p, a = stiffness(model.law, r_eff, m_eff)
        d, d_whole = damping_force(model.damping, mk, p, a, delta, v_n, r_eff, m_eff, dt)
        f += d
        whole += d_whole
        if f < 0.0:  # never attractive
            f = 0.0
        if whole < 0.0:
            whole = 0.0
    return f, energy, whole


@njit(inline="always", **JIT)
def normal_force(model, delta, v_n, r_eff, m_eff, dt):
    """:func:`normal_forces` without the whole window's: (normal force magnitude on i,
    elastic energy)."""
    f, energy, _ = normal_forces(model, delta, v_n, r_eff, m_eff, dt)
    return f, energy


def effective_modulus(youngs_modulus: float, poisson_ratio: float) -> float:
    """E* (Pa) of two bodies of one material: E / (2 (1 − ν²)) ([ChungOoi2011] §2)."""
    return youngs_modulus / (2.0 * (1.0 - poisson_ratio * poisson_ratio))


#: Marshall's fit of Tsuji's α(e) ([Marshall2009] eq. 53), coefficients of e⁰ … e⁶
TSUJI_FIT = (1.2728, -4.2783, 11.087, -22.348, 27.467, -18.022, 4.8218)


def tsuji_alpha(restitution: float) -> float:
    """α of :data:`TSUJI` for the restitution e: √2 × Marshall's fit of Tsuji's α(e)
    ([Marshall2009] eq. 53; the √2 turns Tsuji's particle mass into the effective mass of the
    pair, as LAMMPS' ``damping tsuji`` does since 2026 — its 22 Jul 2025 release omits it);
    0 at e = 1 (elastic; the fit leaves 3·10⁻⁴ there)."""
    if restitution >= 1.0:
        return 0.0
    return math.sqrt(2.0) * sum(c * restitution**n for n, c in enumerate(TSUJI_FIT))


def law_parameters(law: str, youngs_modulus: float, stiffness: float, restitution: float,
                   poisson_ratio: float, damping: str = "tangent",
                   coefficient: float | None = None) -> Normal:
    """The :class:`Normal` record of the law named ``law`` with the damping named ``damping``:
    the linear law takes ``youngs_modulus`` as its stiffness scale (k = E·R_eff unless
    ``stiffness``), Hertz the material's E and ν (E* from :func:`effective_modulus`); ζ from
    the restitution e (:func:`damping_ratio`), Tsuji's α from e (:func:`tsuji_alpha`), the
    coefficient γ of ``mass_velocity`` and ``viscoelastic`` is ``coefficient`` (None: 0)."""
    elastic_law = (Hertz(effective_modulus(youngs_modulus, poisson_ratio)) if law == "hertz"
                   else Linear(youngs_modulus, stiffness))
    kind = DAMPINGS[damping]
    if kind in (MASS_VELOCITY, VISCOELASTIC):
        return Normal(elastic_law, Damping(float(coefficient or 0.0), kind))
    if kind == TSUJI:
        return Normal(elastic_law, Damping(tsuji_alpha(restitution), kind))
    zeta = damping_ratio(restitution, law if kind == TANGENT else "linear")
    return Normal(elastic_law, Damping(zeta, kind))


#: the dampings by name (``contact.damping``) → their kind
DAMPINGS = {"tangent": TANGENT, "constant": CONSTANT, "mass_velocity": MASS_VELOCITY,
            "viscoelastic": VISCOELASTIC, "tsuji": TSUJI}


# ------------------------------------------------------------------ the declared sub-models
# The contact sub-models a run chooses from, in one table: each names its part (normal,
# damping, tangential, rolling, cohesion: ``pdyn.dynamics.cohesion``), the ``[contact]``
# fields it reads with their kind, range, default and meaning (``Param``, as the broad phases
# declare theirs) and the history it keeps per contact and side, as LAMMPS ``pair
# granular``'s sub-models declare their coefficients and ``size_history`` ([LAMMPSgranular]).
# A run's sub-models are one of each part (:func:`chosen`; the tangential and rolling parts
# only with μ > 0 and μ_r > 0, cohesion unless "none"); its contact history holds
# what they declare (:func:`history_layout`). Only the tangential spring keeps history, so
# the layout is the one ``pdyn.dynamics.history`` stores — the spring (3 floats, saved with
# the particles and checkpointed) and whether the contact slid (a byte, between rebuilds) —
# and ``ContactLaw`` refuses a choice whose layout differs (a sub-model with other history
# needs that module, the ``history_*`` fields of ``pdyn.particles.FIELDS`` and the loop
# taught it). The tangential and rolling records are built in ``pdyn.dynamics.friction``.
@dataclass(frozen=True)
class SubModel:
    """One sub-model: its ``part`` (normal, damping, tangential or rolling) and ``name`` (what
    ``[contact]`` names it; the tangential and rolling parts have one each, chosen by their
    coefficient), the ``[contact]`` fields it reads (name → :class:`Param`), the ``history``
    it keeps per contact and side ((field, dtype, width), ...) and ``help``: what it
    computes."""

    part: str
    name: str
    params: dict
    help: str
    history: tuple = ()


YOUNGS = Param("number", 1e6, "Young's modulus E (Pa); the linear law's stiffness scale "
               "(N/m per m of R*)", lo=0)
POISSON = Param("number", 0.3, "Poisson ratio ν (Hertz's E*, Mindlin's G*)", above=-1, hi=0.5)
RESTITUTION = Param("number", 1.0, "coefficient of restitution e (1: elastic); sets the "
                    "damping ratio ζ", lo=1e-3, hi=1)
DAMPING_COEFFICIENT = Param("number", None, "γ of the mass_velocity (1/s) and viscoelastic "
                            "(1/(m s)) dampings, as LAMMPS' damping coefficient", lo=0)

#: every sub-model, one line each
SUB_MODELS = (
    SubModel("normal", "linear", {"youngs_modulus": YOUNGS, "stiffness": Param(
        "number", None, "constant stiffness k (N/m); default E R*", above=0)},
        "F = k δ, energy k δ²/2"),
    SubModel("normal", "hertz", {"youngs_modulus": YOUNGS, "poisson_ratio": POISSON},
             "F = 4/3 E* √R* δ^{3/2}, E* = E / (2 (1 − ν²))"),
    SubModel("damping", "tangent", {"restitution": RESTITUTION},
             "dashpot c = 2 ζ √(m* k_t(δ)) on the law's tangent stiffness (Tsuji); e exact "
             "at any impact speed for both laws"),
    SubModel("damping", "constant", {"restitution": RESTITUTION},
             "dashpot of constant c = 2 ζ √(m* k_t(0.02 R*)); the linear law's tangent "
             "damping; with Hertz e holds near one impact speed"),
    SubModel("damping", "mass_velocity", {"damping_coefficient": DAMPING_COEFFICIENT},
             "LAMMPS' mass_velocity (gran/hooke/history): η = γ m*, γ in 1/s; η v_n sampled "
             "as LAMMPS"),
    SubModel("damping", "viscoelastic", {"damping_coefficient": DAMPING_COEFFICIENT},
             "LAMMPS' viscoelastic (gran/hertz/history): η = γ m* √(R* δ), γ in 1/(m s); "
             "η v_n sampled as LAMMPS"),
    SubModel("damping", "tsuji", {"restitution": RESTITUTION},
             "LAMMPS' tsuji: η = α √(m* F_e/δ), α = √2 × Marshall's fit of α(e); η v_n "
             "sampled as LAMMPS"),
    SubModel("tangential", "spring", {"friction": Param(
        "number", 0.0, "Coulomb coefficient μ (0: none)", lo=0), "poisson_ratio": POISSON,
        "tangential_history": Param("choice", "rescaled", "the spring turned into a new "
                                    "tangent plane keeps its length (rescaled) or is "
                                    "projected (LAMMPS gran/*/history)",
                                    choices=("rescaled", "projected"))},
        "spring–dashpot with history and a Coulomb cap (Mindlin's stiffness for Hertz)",
        history=(("spring", np.float64, 3), ("slid", np.uint8, 1))),
    SubModel("rolling", "constant_torque", {"rolling_friction": Param(
        "number", 0.0, "rolling coefficient μ_r (0: none)", lo=0)},
        "constant rolling-resistance torque μ_r R* F_n (Ai et al. model A)"),
    SubModel("cohesion", "none", {}, "no cohesion"),
    SubModel("cohesion", "dmt", {"work_of_adhesion": Param(
        "number", None, "work of adhesion w (J/m²; LAMMPS' γ = w/2)", lo=0)},
        "DMT: attraction 2π w R* while overlapping (LAMMPS normal dmt)"),
    SubModel("cohesion", "jkr", {"work_of_adhesion": Param(
        "number", None, "work of adhesion w (J/m²; LAMMPS' γ = w/2)", lo=0)},
        "JKR: F = 4E* a³/(3R*) − √(8π w E* a³), held past zero overlap to δ_c (LAMMPS jkr)"),
    SubModel("cohesion", "liquid_bridge", {
        "liquid_volume": Param("number", None, "liquid volume V per bridge (m³)", above=0),
        "surface_tension": Param("number", None, "surface tension γ (N/m)", lo=0),
        "contact_angle": Param("number", None, "contact angle θ (degrees)", lo=0, hi=90)},
        "capillary bridge formed at touching, 2π R γ cos θ/(1 + 2.1 Ŝ + 10 Ŝ²) to rupture"),
    SubModel("cohesion", "sjkr", {"cohesion_energy_density": Param(
        "number", None, "cohesion energy density k (J/m³)", lo=0)},
        "simplified JKR: attraction k A, A the surfaces' intersection area (LIGGGHTS sjkr)"),
)

#: (part, name) → :class:`SubModel`
TABLE = {(m.part, m.name): m for m in SUB_MODELS}


def names(part: str) -> tuple[str, ...]:
    """The sub-models of ``part``, by name."""
    return tuple(m.name for m in SUB_MODELS if m.part == part)


def chosen(law: str, damping: str, friction: float, rolling: float,
           cohesion: str = "none") -> tuple[SubModel, ...]:
    """The sub-models of a contact: the normal ``law``, the ``damping``, the tangential spring
    if ``friction`` > 0, the rolling torque if ``rolling`` > 0 and the ``cohesion`` unless
    "none" (ValueError, one line, for an unknown name)."""
    for part, name in (("normal", law), ("damping", damping), ("cohesion", cohesion)):
        if (part, name) not in TABLE:
            raise ValueError(f"contact {part} {name!r}: unknown (choose from "
                             f"{', '.join(names(part))})")
    out = [TABLE["normal", law], TABLE["damping", damping]]
    if friction > 0.0:
        out.append(TABLE["tangential", "spring"])
    if rolling > 0.0:
        out.append(TABLE["rolling", "constant_torque"])
    if cohesion != "none":
        out.append(TABLE["cohesion", cohesion])
    return tuple(out)


def history_layout(models) -> tuple:
    """The history a contact side keeps under ``models``: their declared fields in order."""
    return tuple(f for m in models for f in m.history)


#: the layout ``pdyn.dynamics.history`` stores (module docstring)
STORED_HISTORY = TABLE["tangential", "spring"].history

