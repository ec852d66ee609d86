"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg;
rad/s, N·m for the spin).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;
v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice. In a run
that rotates the angular velocity of each solid sphere is kicked with it, ω += dt/2 · T / I,
I = 2/5 m r² (walls are never integrated: infinite inertia), for the handles ``spinning``
the contact pass names — those that touched something, the only ones whose torque may be
nonzero (in a loose gas most spheres touch nothing); without rotation ``omega`` and ``torque``
are None and numba compiles the kicks without them.

The closing half-kick of a step and the opening one of the next use the same force, so a run
may leave the first to the second: :func:`kick_drift` then applies both, one after the other,
in one walk over the particles — v ← (v + dt/2 · F/m) + dt/2 · F/m, the same bits as two
walks.
"""

import numpy as np
from numba import njit

from .._jit import JIT

# Loop counters and handles are unsigned: numba then omits its negative-index wraparound from
# every array access (the same bits; kick_drift 0.88x, kick 0.95x on the 97 336-sphere gas).


@njit(inline="always", **JIT)
def _kick_spin(omega, torque, mass, radius, h, half_dt, kicks):
    """``kicks`` (1 or 2) times ω += dt/2 · T / I of the solid sphere ``h``, I = 2/5 m r²."""
    s = half_dt / (0.4 * mass[h] * radius[h] * radius[h])
    for a in range(3):
        kicked = s * torque[h, a]
        w = omega[h, a] + kicked
        if kicks == 2:
            w += kicked
        omega[h, a] = w


@njit(**JIT)
def _kick_spins(omega, torque, mass, radius, spinning, half_dt, kicks):
    """``kicks`` half kicks of the spins of ``spinning`` (none without ``omega``)."""
    if omega is not None:
        for t in range(np.uint64(spinning.shape[0])):
            _kick_spin(omega, torque, mass, radius, np.uint64(spinning[t]), half_dt, kicks)


@njit(**JIT)
def kick(vel, force, mass, handles, half_dt, omega, torque, radius, spinning):
    """Half kick of the velocities of ``handles`` (and, with ``omega``, the spins of
    ``spinning``)."""
    for t in range(np.uint64(handles.shape[0])):
        h = np.uint64(handles[t])
        s = half_dt / mass[h]
        vel[h, 0] += s * force[h, 0]
        vel[h, 1] += s * force[h, 1]
        vel[h, 2] += s * force[h, 2]
    # np.int64: the helper kick_drift compiled serves (a literal 1 compiled another)
    _kick_spins(omega, torque, mass, radius, spinning, half_dt, np.int64(1))


@njit(**JIT)
def kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt, omega, torque, radius,
               spinning, kicks, out):
    """First half kick then the drift of ``handles`` (and with ``omega`` the first half kick
    of the spins of ``spinning``); ``kicks`` = 2: the closing half-kick of the step before
    first (the module docstring).
    Writes to ``out[0]`` the largest squared displacement (m²) of this step and to ``out[1]``
    the largest since the positions ``build_pos`` of the last neighbour-list build (the
    first two numbers of the step's one reduction: no array made a step); each is inf if any
    is NaN (a maximum keeps it on every rank; ``pdyn.checks.StepGuard`` stops the run
    then)."""
    step2 = 0.0
    drift2 = 0.0
    for t in range(np.uint64(handles.shape[0])):
        h = np.uint64(handles[t])
        s = half_dt / mass[h]
        d2 = 0.0
        b2 = 0.0
        for a in range(3):
            kicked = s * force[h, a]
            v = vel[h, a] + kicked
            if kicks == 2:  # the step before's closing half-kick, then this step's
                v += kicked
            vel[h, a] = v
            dx = dt * v
            pos[h, a] += dx
            d2 += dx * dx
            b = pos[h, a] - build_pos[h, a]
            b2 += b * b
        if not d2 <= step2:  # larger, or NaN
            step2 = d2 if d2 == d2 else np.inf
        if not b2 <= drift2:
            drift2 = b2 if b2 == b2 else np.inf
    _kick_spins(omega, torque, mass, radius, spinning, half_dt, kicks)
    out[0] = step2
    out[1] = drift2
