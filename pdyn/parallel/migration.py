"""Migration plan: owned particles whose centre left this rank's blocks move to the owner of
their new block (Cabana's ``Distributor``, [Slattery2022]).

Done at each Verlet-skin rebuild, right after periodic wrapping (``pdyn.domain.wrap_periodic``):
the plan is the destination rank of every owned particle (block of its centre → owner). The
exchange (``pdyn.parallel.exchange``) packs the emigrants with every field whose schema says
``migrate`` (``pdyn.particles.MIGRATE``: a particle is moved, not copied), removes them in O(1)
from the store and inserts them at the receiver in O(1). Destinations must be neighbour ranks;
anything else means a particle moved farther than the interaction reach between two rebuilds
(time step too large) and is reported as an error, never dropped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..domain import _block_ids


@njit(**JIT)
def _destinations(pos, handles, lo, inv_edge, dims, owner, out):
    blocks = np.empty(handles.shape[0], np.int64)
    _block_ids(pos, handles, lo, inv_edge, dims, blocks)
    for t in range(handles.shape[0]):
        out[t] = owner[blocks[t]]


def destinations(store, owned, grid) -> np.ndarray:
    """The rank owning the block of each ``owned`` centre (``grid.owner``)."""
    out = np.empty(len(owned), np.int64)
    _destinations(store.pos, np.ascontiguousarray(owned, np.int64), grid.lo, grid.inv_edge,
                  grid.dims, grid.owner, out)
    return out

