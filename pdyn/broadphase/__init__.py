"""Broad-phase (coarse collision detection) structures behind one protocol, chosen by name.

``make_broadphase(name, **params)`` builds one; ``find_contacts(positions, radii, method=...)``
is the one-call convenience: the exact overlapping pairs (i < j, sorted), identical for every
structure. See ``base.py`` for the protocol.
"""

from __future__ import annotations

import numpy as np

from ..geometry import overlaps
from ._kernels import canonical_pairs, filter_overlapping
from .base import BroadPhase, BroadPhaseError, BruteForce
from .linked_cells import LinkedCells
from .index_sort import IndexSort, ZIndexSort
from .sweep_prune import SweepPrune
from .spatial_hash import SpatialHash
from .compact_hash import CompactHash
from .octree import Octree
from .hash_grid import HashGrid
from .auto import Auto

#: name -> class (``auto`` delegates to one of the others); every entry gets the whole
#: contract test suite (tests/broadphase).
REGISTRY: dict[str, type] = {
    cls.name: cls
    for cls in (
        BruteForce,
        LinkedCells,
        IndexSort,
        ZIndexSort,
        SweepPrune,
        SpatialHash,
        CompactHash,
        Octree,
        HashGrid,
        Auto,
    )
}


def make_broadphase(name: str, **params) -> BroadPhase:
    """Instantiate the structure registered as ``name`` with its parameters."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise BroadPhaseError(
            f"broadphase = {name!r}: unknown structure (choose from {', '.join(REGISTRY)})"
        ) from None
    return cls(**params)


def find_contacts(positions, radii, method: str = "auto", **params) -> np.ndarray:
    """Exactly the pairs (i, j), i < j, with |x_i − x_j| ≤ r_i + r_j, as sorted int32 (K, 2).

    ``method`` names a registered structure; ``params`` go to it. The default, ``auto``, picks
    the structure from the input's radius spread, sparsity and clustering (``auto.py``) for
    one build and one query (``usage="once"``). Infinite radii overlap every finite particle
    (walls), never each other.
    """
    if method == "auto":
        params = {"usage": "once", **params}
    bp = make_broadphase(method, **params)
    bp.build(positions, radii)
    return canonical_pairs(bp.contacts())


__all__ = [
    "REGISTRY", "BroadPhase", "BroadPhaseError", "make_broadphase", "find_contacts",
    "canonical_pairs", "filter_overlapping", "overlaps",
]
