"""Handles in the orders the step needs: particle memory along the Z-curve ([Ihmsen2011]
§4.5), and the walls in the order their forces are summed. Handles change at each
reordering; results do not."""

from __future__ import annotations

import numpy as np

from .particles import GHOST, INFINITE, OWNED
from .zorder import zorder


def reorder(store, exchange) -> None:
    """Z-curve reordering of ``store``'s memory: walls first, then every other live particle
    along the Z-curve of cells one largest diameter wide (``ParticleStore.permute``); the
    ``exchange`` remaps the handles it keeps. Done at rebuild steps between migration and the
    ghosts (no ghosts then: the owned particles end up contiguous); the broad phase is then
    built afresh."""
    others = store.handles_with(OWNED | GHOST, INFINITE)
    if others.size:
        cell = 2.0 * float(store.radius[others].max())
        exchange.remap(store.permute(np.concatenate((store.walls,
                                                     zorder(store.pos, others, cell)))))


def wall_order(store) -> np.ndarray:
    """Wall handles in the order their forces are summed: by id −1, −2, ..."""
    walls = store.walls
    return np.ascontiguousarray(walls[np.argsort(-store.gid[walls], kind="stable")])
