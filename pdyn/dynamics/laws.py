"""Normal contact force laws, one function per law ([CundallStrack1979]).

A law maps the state of one contact seen from particle i — overlap δ ≥ 0 (m), normal approach
speed v_n (m/s, > 0 when approaching), effective radius R_eff and mass m_eff of the pair — to
the magnitude of the repulsive normal force on i (N) and the elastic energy stored in the
contact (J). It reads nothing else, so it is evaluated the same way for sphere–sphere and
sphere–wall contacts and on whichever rank owns i.

  linear: F = k δ, k = ``stiffness`` or E·R_eff, energy k δ²/2;
  Hertz:  F = 4/3 · E · √R_eff · δ^{3/2}, energy 8/15 · E · √R_eff · δ^{5/2}.

Damping adds c · v_n with c = 2 ζ √(m_eff k_t) and ζ = −ln e / √(π² + ln² e): the linear
spring–dashpot whose coefficient of restitution is exactly e; for Hertz k_t is the tangent
stiffness 2 E √(R_eff δ), so e is approximate.

A law is chosen in Python once, by its parameter record (:class:`Linear` or :class:`Hertz`);
:func:`normal_force` dispatches on the record's type, so numba compiles one force kernel per
law with the law inlined and no branch on the law inside the pair loop.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT


def damping_ratio(restitution: float) -> float:
    """ζ for a linear spring-dashpot with coefficient of restitution e (0 < e ≤ 1)."""
    if restitution >= 1.0:
        return 0.0
    le = math.log(restitution)
    return -le / math.sqrt(math.pi**2 + le * le)


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
    """Hertz contact: Young's modulus ``E`` (Pa), damping ratio ``zeta``."""

    E: float
    zeta: float

    def stiffness(self, r_eff, radius):
        """Tangent stiffness (N/m) at an overlap of 1 % of ``radius``."""
        return 2.0 * self.E * np.sqrt(r_eff * 0.01 * radius)


@njit(**JIT)
def linear(law, delta, v_n, r_eff, m_eff):
    """Linear spring–dashpot: (normal force magnitude on i, elastic energy)."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    f = k * delta
    energy = 0.5 * k * delta * delta
    if law.zeta > 0.0:
        f += 2.0 * law.zeta * math.sqrt(m_eff * k) * v_n
    return f, energy


@njit(**JIT)
def hertz(law, delta, v_n, r_eff, m_eff):
    """Hertz contact with tangent-stiffness damping: (normal force magnitude on i, energy)."""
    s = math.sqrt(r_eff * delta)
    f = 4.0 / 3.0 * law.E * s * delta
    energy = 8.0 / 15.0 * law.E * s * delta * delta
    if law.zeta > 0.0:
        f += 2.0 * law.zeta * math.sqrt(m_eff * (2.0 * law.E * s)) * v_n
    return f, energy


#: parameter record → law kernel
KERNELS = {Linear: linear, Hertz: hertz}


def law_parameters(law: str, youngs_modulus: float, stiffness: float, zeta: float):
    """The parameter record of the law named ``law`` (``stiffness`` is the linear law's)."""
    if law == "hertz":
        return Hertz(youngs_modulus, zeta)
    return Linear(youngs_modulus, stiffness, zeta)


def normal_force(law, delta, v_n, r_eff, m_eff):
    """The force law ``law`` (a :class:`Linear` or :class:`Hertz` record) applied to one
    contact: (normal force magnitude on i, elastic energy)."""
    return KERNELS[type(law)](law, delta, v_n, r_eff, m_eff)


@overload(normal_force, jit_options=JIT)
def _normal_force(law, delta, v_n, r_eff, m_eff):
    """Inside numba: resolve the law from the record's type at compile time."""
    kernel = KERNELS[law.instance_class]

    def impl(law, delta, v_n, r_eff, m_eff):
        return kernel(law, delta, v_n, r_eff, m_eff)

    return impl
