"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg;
rad/s, N·m for the spin).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;
v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice. With
friction the angular velocity of a solid sphere is kicked in the same walks over the rows:
ω += dt/2 · T / I, I = 2/5 m r² (walls are never integrated: infinite inertia). Pass empty
``omega``/``torque``/``radius`` ((0, 3), (0, 3), (0,)) for no spin.
"""

import numpy as np
from numba import njit

from .._jit import JIT

#: ``omega``, ``torque``, ``radius`` of a run without rotation: the kicks skip the spin
NO_SPIN = (np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))


@njit(**JIT)
def _kick_spin(omega, torque, mass, radius, h, half_dt):
    """Half kick of the angular velocity of solid sphere ``h``."""
    s = half_dt / (0.4 * mass[h] * radius[h] * radius[h])
    omega[h, 0] += s * torque[h, 0]
    omega[h, 1] += s * torque[h, 1]
    omega[h, 2] += s * torque[h, 2]


@njit(**JIT)
def kick(vel, force, mass, handles, half_dt, omega, torque, radius):
    """Half kick of the velocities (and, unless ``omega`` is empty, the spins) of ``handles``."""
    spin = omega.shape[0] > 0
    for t in range(handles.shape[0]):
        h = handles[t]
        s = half_dt / mass[h]
        vel[h, 0] += s * force[h, 0]
        vel[h, 1] += s * force[h, 1]
        vel[h, 2] += s * force[h, 2]
        if spin:
            _kick_spin(omega, torque, mass, radius, h, half_dt)


@njit(**JIT)
def kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt, omega, torque, radius):
    """First half kick (spins too, unless ``omega`` is empty) then the drift of ``handles``.
    Returns the largest squared displacement (m²) of this step and the largest since the
    positions ``build_pos`` of the last neighbour-list build, as one array for one reduction;
    each is inf if any is NaN (a maximum keeps it on every rank; ``pdyn.checks.StepGuard``
    stops the run then)."""
    spin = omega.shape[0] > 0
    step2 = 0.0
    drift2 = 0.0
    for t in range(handles.shape[0]):
        h = handles[t]
        s = half_dt / mass[h]
        d2 = 0.0
        b2 = 0.0
        for a in range(3):
            vel[h, a] += s * force[h, a]
            dx = dt * vel[h, a]
            pos[h, a] += dx
            d2 += dx * dx
            b = pos[h, a] - build_pos[h, a]
            b2 += b * b
        if spin:
            _kick_spin(omega, torque, mass, radius, h, half_dt)
        if not d2 <= step2:  # larger, or NaN
            step2 = d2 if d2 == d2 else np.inf
        if not b2 <= drift2:
            drift2 = b2 if b2 == b2 else np.inf
    return np.array([step2, drift2])
