"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;  v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice.
"""

import numpy as np
from numba import njit

from .._jit import JIT


@njit(**JIT)
def kick(vel, force, mass, handles, half_dt):
    for t in range(handles.shape[0]):
        h = handles[t]
        s = half_dt / mass[h]
        vel[h, 0] += s * force[h, 0]
        vel[h, 1] += s * force[h, 1]
        vel[h, 2] += s * force[h, 2]


@njit(**JIT)
def kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt):
    """First half kick then the drift of ``handles``. Returns the largest squared displacement
    (m²) of this step and the largest since the positions ``build_pos`` of the last
    neighbour-list build, as one array for one reduction; each is inf if any is NaN (a
    maximum keeps it on every rank; ``pdyn.checks.StepGuard`` stops the run then)."""
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
        if not d2 <= step2:  # larger, or NaN
            step2 = d2 if d2 == d2 else np.inf
        if not b2 <= drift2:
            drift2 = b2 if b2 == b2 else np.inf
    return np.array([step2, drift2])
