"""Migration plan and execution: owned particles whose centre left this rank's blocks move to
the owner of their new block (DESIGN.md "The time step", step 1).

Done at each Verlet-skin rebuild, right after periodic wrapping (``pdyn.domain.wrap_periodic``):
the plan is the destination rank of every owned particle (block of its centre → owner); the
emigrants are packed with every stored field (a particle is moved, not copied), removed here in
O(1) from the store and the broad phase, and inserted at the receiver in O(1). Destinations must
be neighbour ranks; anything else means a particle moved farther than the interaction reach
between two rebuilds (time step too large) and is reported as an error, never dropped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..domain import _block_ids

#: float columns of a migrating particle: pos(3) vel(3) force(3) radius mass
MIGRATE_WIDTH = 11


@njit(**JIT)
def _destinations(pos, handles, lo, inv_edge, dims, owner, out):
    blocks = np.empty(handles.shape[0], np.int64)
    _block_ids(pos, handles, lo, inv_edge, dims, blocks)
    for t in range(handles.shape[0]):
        out[t] = owner[blocks[t]]


@njit(**JIT)
def _pack_migrants(handles, pos, vel, force, rad, mass, gid, flags, fout, iout):
    for t in range(handles.shape[0]):
        h = handles[t]
        for a in range(3):
            fout[t, a] = pos[h, a]
            fout[t, 3 + a] = vel[h, a]
            fout[t, 6 + a] = force[h, a]
        fout[t, 9] = rad[h]
        fout[t, 10] = mass[h]
        iout[t, 0] = gid[h]
        iout[t, 1] = flags[h]


def destinations(store, owned, grid) -> np.ndarray:
    out = np.empty(len(owned), np.int64)
    _destinations(store.pos, np.ascontiguousarray(owned, np.int64), grid.lo, grid.inv_edge,
                  grid.dims, grid.owner, out)
    return out


def pack_migrants(store, handles):
    f = np.empty((len(handles), MIGRATE_WIDTH))
    i = np.empty((len(handles), 2), np.int64)
    _pack_migrants(handles, store.pos, store.vel, store.force, store.radius, store.mass,
                   store.gid, store.flags, f, i)
    return f, i


def unpack_migrants(store, f, i) -> np.ndarray:
    """Insert received migrants as owned particles; returns their new handles."""
    return store.add(gid=i[:, 0], pos=f[:, 0:3], vel=f[:, 3:6], force=f[:, 6:9],
                     radius=f[:, 9], mass=f[:, 10], flags=i[:, 1].astype(np.uint8))
