"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;  v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice.
"""

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
def kick_drift(pos, vel, force, mass, handles, half_dt, dt):
    """First half kick then the drift; returns the largest displacement (m) this step, NaN if
    any displacement is NaN (``pdyn.checks.StepGuard`` stops the run then)."""
    dmax2 = 0.0
    for t in range(handles.shape[0]):
        h = handles[t]
        s = half_dt / mass[h]
        d2 = 0.0
        for a in range(3):
            vel[h, a] += s * force[h, a]
            dx = dt * vel[h, a]
            pos[h, a] += dx
            d2 += dx * dx
        if d2 > dmax2 or d2 != d2:  # NaN sticks
            dmax2 = d2
    return dmax2 ** 0.5
