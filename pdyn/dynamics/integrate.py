"""Velocity Verlet (kick–drift–kick) on owned, non-fixed particles (units: s, m, m/s, N, kg).

Step n → n+1: v½ = v + dt/2 · F/m;  x += dt · v½;  F(x, v½) from contacts;  v = v½ + dt/2 · F/m.
Velocity-dependent (damping) forces see the half-step velocity, the usual DEM choice. Both
kernels have a serial and a threaded compilation (``pdyn._jit``); particles are independent
and the largest displacement is a maximum, so the thread count changes no bit.
"""

import numpy as np
from numba import prange

from .._jit import CHUNK, pick, serial_and_threaded


def _kick(vel, force, mass, handles, half_dt):
    for t in prange(handles.shape[0]):
        h = handles[t]
        s = half_dt / mass[h]
        vel[h, 0] += s * force[h, 0]
        vel[h, 1] += s * force[h, 1]
        vel[h, 2] += s * force[h, 2]


def _kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt):
    """First half kick then the drift; returns the largest squared displacement (m²) of
    ``handles`` since the positions ``build_pos`` of the last neighbour-list build."""
    n = handles.shape[0]
    n_chunks = (n + CHUNK - 1) // CHUNK
    chunk_max = np.zeros(n_chunks)
    for c in prange(n_chunks):
        d2max = 0.0
        for t in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            h = handles[t]
            s = half_dt / mass[h]
            d2 = 0.0
            for a in range(3):
                vel[h, a] += s * force[h, a]
                pos[h, a] += dt * vel[h, a]
                d = pos[h, a] - build_pos[h, a]
                d2 += d * d
            d2max = max(d2max, d2)
        chunk_max[c] = d2max
    return chunk_max.max() if n_chunks else 0.0


KICK = serial_and_threaded(_kick)
KICK_DRIFT = serial_and_threaded(_kick_drift)


def kick(vel, force, mass, handles, half_dt) -> None:
    """Half kick v += dt/2 · F/m of ``handles``."""
    pick(KICK, handles.size)(vel, force, mass, handles, half_dt)


def kick_drift(pos, vel, force, mass, build_pos, handles, half_dt, dt) -> float:
    """First half kick then the drift of ``handles``; returns the largest squared displacement
    (m²) since the positions ``build_pos`` of the last neighbour-list build."""
    return pick(KICK_DRIFT, handles.size)(pos, vel, force, mass, build_pos, handles, half_dt, dt)
