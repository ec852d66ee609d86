"""Normal contact force laws, one function per law ([CundallStrack1979]).

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

Damping adds the force of a dashpot c(δ) = 2 ζ √(m_eff k_t) along the normal, k_t the law's
tangent stiffness (k, or 2 E* √(R_eff δ) for Hertz: c ∝ δ^{1/4}, [Tsuji1992]). For both laws
the coefficient of restitution of such a contact does not depend on the impact speed, only on
ζ; with the clamp it is not the linear oscillator's closed form, so :func:`damping_ratio` finds
the ζ that gives the asked e by integrating the dimensionless contact once (bisection on ζ):
the restitution coefficient of the law is e to 1e-5, for both laws.

**The dashpot in a discrete step** (:func:`_dashpot`). Velocity Verlet samples the force at
t_{n+1} from the positions there and the half-step velocities v_{n+1/2}, and that sample
stands for the impulse of the window [t_{n+1/2}, t_{n+3/2}]. Two first-order errors follow if
the dashpot is simply c v_{n+1/2}: the velocity lags the position by dt/2 (with ζ near 1
that adds ~ζ ω dt of damping), and at the first touch the dashpot is on for the whole window
although the contact began inside it. A heavily damped contact makes both large: at the
default dt (t_c/20) the rebound came out 39 % (linear) and 18 % (Hertz) low for e = 0.1,
depending on where in a step the impact fell. pdyn instead gives the sample the damping
impulse of its window. The damping impulse over any stretch of a contact is a function of the
overlaps at its ends, ∫ c(δ) δ' dt = D(δ_b) − D(δ_a) with D(δ) = ∫₀^δ c = C δ^{q+1}/(q + 1)
(c = C δ^q, q = 0 linear, 1/4 Hertz), so the force is [D(δ_{n+3/2}) − D(δ_{n+1/2})]/dt with
δ_{n+1/2} = δ − u dt/2 (u = v_n at the half step: exact for the drift just made) and
δ_{n+3/2} = δ + (2 u* − u) dt/2, where u* is the approach speed at t_{n+1} solved implicitly
for this contact alone, u* = (u − dt F_s/(2 m_eff)) / (1 + dt c/(2 m_eff)) (the speed the
closing half-kick gives an isolated pair; F_s the elastic force) — in the bulk of a linear
contact this is c u*, the dashpot at a velocity in sync with the position. At the first touch
(δ < u dt: the overlap a step ago was negative) the window starts at the touch, so the sample
is D(δ + u dt/2)/dt scaled by u*/u. Measured on one sphere hitting a wall at eight phases of
the impact within a step (``benchmarks/restitution.py``, ``docs/validation.md``): the rebound
is within 1.2 % (linear) and 0.4 % (Hertz) of the asked e for e in [0.1, 1] at the default dt
(the plain dashpot: 32 %, 18 %), 0.2 % / 0.1 % at 40 steps per contact time (second order).
The first-touch test keeps no state, so a touch exactly on a step boundary (to rounding) can
be counted twice. An elastic contact (ζ = 0) has no dashpot: its force is unchanged.

A law is chosen in Python once, by its parameter record (:class:`Linear` or :class:`Hertz`);
:func:`normal_force` dispatches on the record's type, so numba compiles one force kernel per
law with the law inlined and no branch on the law inside the pair loop.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT


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


@functools.lru_cache(maxsize=64)
def damping_ratio(restitution: float, law: str = "linear") -> float:
    """ζ of the damped ``law`` (``"linear"`` or ``"hertz"``) whose coefficient of restitution
    is ``restitution`` e (0 < e ≤ 1) with the force clamped at zero (bisection on ζ, the
    rebound of the dimensionless contact integrated by :func:`_rebound`)."""
    if restitution >= 1.0:
        return 0.0
    exponent = 1.5 if law == "hertz" else 1.0
    lo, hi = 0.0, 1.0
    while _rebound(exponent, hi, 2000) > restitution:
        hi *= 2.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if _rebound(exponent, mid, 2000) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class Linear(NamedTuple):
    """Linear spring–dashpot: Young's modulus ``E`` (Pa), constant stiffness ``k`` (N/m; 0:
    k = E·R_eff), damping ratio ``zeta``."""

    E: float
    k: float
    zeta: float

    def stiffness(self, r_eff, radius):
        """Stiffness (N/m) of contacts of effective radius ``r_eff`` between spheres of
        ``radius`` (arrays)."""
        return np.full_like(r_eff, self.k) if self.k > 0 else self.E * r_eff


class Hertz(NamedTuple):
    """Hertz contact: effective modulus ``E`` = E* (Pa), damping ratio ``zeta``."""

    E: float
    zeta: float

    def stiffness(self, r_eff, radius):
        """Tangent stiffness (N/m) at an overlap of 1 % of ``radius``."""
        return 2.0 * self.E * np.sqrt(r_eff * 0.01 * radius)


@njit(**JIT)
def _dashpot(coef, q, delta, f_s, v_n, m_eff, dt):
    """Damping force (N, along the normal, on i) of the dashpot c(δ) = ``coef`` δ^``q`` for the
    Verlet sample at overlap ``delta`` with half-step approach speed ``v_n`` and elastic force
    ``f_s``: the damping impulse of the sample's window over ``dt`` (module docstring)."""
    c = coef if q == 0.0 else coef * delta ** q
    u = (v_n - 0.5 * dt * f_s / m_eff) / (1.0 + 0.5 * dt * c / m_eff)  # speed at t_{n+1}
    p = q + 1.0
    if v_n > 0.0 and delta < v_n * dt:  # first touch within the step just made
        return coef / p * (delta + 0.5 * v_n * dt) ** p / dt * (u / v_n)
    hi = delta + (u - 0.5 * v_n) * dt
    lo = delta - 0.5 * v_n * dt
    if q == 0.0 and hi >= 0.0 and lo >= 0.0:
        return c * u  # D linear: the difference is c u dt, without the cancellation
    hi, lo = max(hi, 0.0), max(lo, 0.0)
    return coef / p * (hi ** p - lo ** p) / dt


@njit(**JIT)
def linear(law, delta, v_n, r_eff, m_eff, dt):
    """Linear spring–dashpot: (normal force magnitude on i, elastic energy)."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    f = k * delta
    energy = 0.5 * k * delta * delta
    if law.zeta > 0.0:
        f += _dashpot(2.0 * law.zeta * math.sqrt(m_eff * k), 0.0, delta, f, v_n, m_eff, dt)
        if f < 0.0:  # never attractive
            f = 0.0
    return f, energy


@njit(**JIT)
def hertz(law, delta, v_n, r_eff, m_eff, dt):
    """Hertz contact with tangent-stiffness damping: (normal force magnitude on i, energy)."""
    s = math.sqrt(r_eff * delta)
    f = 4.0 / 3.0 * law.E * s * delta
    energy = 8.0 / 15.0 * law.E * s * delta * delta
    if law.zeta > 0.0:  # c = 2 ζ √(m_eff 2 E* √(R_eff δ)) = C δ^{1/4}
        coef = 2.0 * law.zeta * math.sqrt(2.0 * m_eff * law.E * math.sqrt(r_eff))
        f += _dashpot(coef, 0.25, delta, f, v_n, m_eff, dt)
        if f < 0.0:  # never attractive
            f = 0.0
    return f, energy


#: parameter record → law kernel
KERNELS = {Linear: linear, Hertz: hertz}


def effective_modulus(youngs_modulus: float, poisson_ratio: float) -> float:
    """E* (Pa) of two bodies of one material: E / (2 (1 − ν²)) ([ChungOoi2011] §2)."""
    return youngs_modulus / (2.0 * (1.0 - poisson_ratio * poisson_ratio))


def law_parameters(law: str, youngs_modulus: float, stiffness: float, restitution: float,
                   poisson_ratio: float):
    """The parameter record of the law named ``law``: the linear law takes ``youngs_modulus``
    as its stiffness scale (k = E·R_eff unless ``stiffness``), Hertz the material's E and ν
    (E* from :func:`effective_modulus`); ζ from the restitution e (:func:`damping_ratio`)."""
    zeta = damping_ratio(restitution, law)
    if law == "hertz":
        return Hertz(effective_modulus(youngs_modulus, poisson_ratio), zeta)
    return Linear(youngs_modulus, stiffness, zeta)


def normal_force(law, delta, v_n, r_eff, m_eff, dt):
    """The force law ``law`` (a :class:`Linear` or :class:`Hertz` record) applied to one
    contact sampled in a step of ``dt`` s: (normal force magnitude on i, elastic energy)."""
    return KERNELS[type(law)](law, delta, v_n, r_eff, m_eff, dt)


@overload(normal_force, jit_options=JIT)
def _normal_force(law, delta, v_n, r_eff, m_eff, dt):
    """Inside numba: resolve the law from the record's type at compile time."""
    kernel = KERNELS[law.instance_class]

    def impl(law, delta, v_n, r_eff, m_eff, dt):
        return kernel(law, delta, v_n, r_eff, m_eff, dt)

    return impl
