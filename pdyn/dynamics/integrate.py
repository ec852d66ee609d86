"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg;
rad/s, N·m for the spin).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;
v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice. With
friction the angular velocity of a solid sphere is kicked too, ω += dt/2 · T / I,
I = 2/5 m r² (walls are never integrated: infinite inertia), for the handles ``spinning``
only: those whose torque may be nonzero (the force pass knows them: in a loose packing most
spheres touch nothing, and skipping them saves reading and writing their spin and torque
twice a step; for the others the kick would add zero). The force pass also leaves each such
handle's increment dt/2 · T / I in a compact array (``increment``, aligned with ``spinning``;
the same expression, so the same bits): both kicks then add it instead of gathering torque,
mass and radius per handle. Pass ``NO_SPIN`` for no spin.
"""

import numpy as np
from numba import njit

from .._jit import JIT

# Loop counters and handles are unsigned: numba then omits its negative-index wraparound from
# every array access (the same bits; kick_drift 0.88x, kick 0.95x on the 97 336-sphere gas).

#: ``omega``, ``torque``, ``radius``, ``spinning``, ``increment`` of a run without rotation:
#: no spin kicks
NO_SPIN = (np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros(0, np.int64),
           np.zeros((0, 3)))


@njit(**JIT)
def _kick_spins(omega, torque, mass, radius, spinning, increment, half_dt):
    """Half kick of the angular velocities of the solid spheres ``spinning``: ω += dt/2 ·
    T / I, I = 2/5 m r², or ω += ``increment`` where it holds that per handle (same length)."""
    if increment.shape[0] == spinning.shape[0]:
        for t in range(np.uint64(spinning.shape[0])):
            h = np.uint64(spinning[t])
            omega[h, 0] += increment[t, 0]
            omega[h, 1] += increment[t, 1]
            omega[h, 2] += increment[t, 2]
        return
    for t in range(np.uint64(spinning.shape[0])):
        h = np.uint64(spinning[t])
        s = half_dt / (0.4 * mass[h] * radius[h] * radius[h])
        omega[h, 0] += s * torque[h, 0]
        omega[h, 1] += s * torque[h, 1]
        omega[h, 2] += s * torque[h, 2]


@njit(**JIT)
def kick(vel, force, mass, handles, half_dt, omega, torque, radius, spinning, increment):
    """Half kick of the velocities of ``handles`` and the spins of ``spinning``."""
    for t in range(np.uint64(handles.shape[0])):
        h = np.uint64(handles[t])
        s = half_dt / mass[h]
        vel[h, 0] += s * force[h, 0]
        vel[h, 1] += s * force[h, 1]
        vel[h, 2] += s * force[h, 2]
    _kick_spins(omega, torque, mass, radius, spinning, increment, half_dt)


@njit(**JIT)
def kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt, omega, torque, radius,
               spinning, increment):
    """First half kick then the drift of ``handles``, and the first half kick of the spins
    of ``spinning``.
    Returns the largest squared displacement (m²) of this step and the largest since the
    positions ``build_pos`` of the last neighbour-list build, as one array for one reduction;
    each is inf if any is NaN (a maximum keeps it on every rank; ``pdyn.checks.StepGuard``
    stops the run then)."""
    step2 = 0.0
    drift2 = 0.0
    for t in range(np.uint64(handles.shape[0])):
        h = np.uint64(handles[t])
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
        if not d2 <= step2:  # larger, or NaN
            step2 = d2 if d2 == d2 else np.inf
        if not b2 <= drift2:
            drift2 = b2 if b2 == b2 else np.inf
    _kick_spins(omega, torque, mass, radius, spinning, increment, half_dt)
    return np.array([step2, drift2])
