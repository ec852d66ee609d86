"""What a Python user would reach for instead of pdyn's structures, each made to answer the same
question: the exact overlapping pairs (i < j, sorted) of spheres with centres ``pos`` and radii
``rad`` (|x_i − x_j| ≤ r_i + r_j).

* scipy ``cKDTree.query_pairs`` with r = the largest diameter, then the exact radius filter;
* matscipy ``neighbour_list`` with per-atom cutoffs = the radii (its sphere-overlap mode), in a
  shrink-wrapped non-periodic cell;
* freud ``AABBQuery`` and ``LinkCell`` with r_max = the largest diameter (freud only pairs in
  periodic boxes, so the box is padded by r_max: no periodic image is ever within reach).

Each returns ``(pairs, candidates)``: the exact pairs after pdyn's own filter
(``filter_overlapping``, the predicate every structure shares) and the number of pairs the
peer handed to it. Peers whose package is not installed are left out (``available``).
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ..broadphase import canonical_pairs, filter_overlapping

#: relative enlargement of the peers' search radius: float32 (freud) and strict comparisons
#: must never lose a touching pair; pdyn's exact filter decides
SLACK = 1e-5


def _exact(pairs: np.ndarray, pos, rad) -> tuple[np.ndarray, int]:
    pairs = np.ascontiguousarray(pairs, np.int64).reshape(-1, 2)
    return canonical_pairs(filter_overlapping(pairs, pos, rad)), int(pairs.shape[0])


def kdtree(pos, rad):
    """scipy ``cKDTree(pos).query_pairs(2 r_max)`` + exact filter."""
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos).query_pairs(2.0 * rad.max() * (1 + SLACK), output_type="ndarray")
    return _exact(pairs, pos, rad)


def matscipy(pos, rad):
    """matscipy ``neighbour_list("ij", cutoff=radii)`` (non-periodic) + exact filter."""
    from matscipy.neighbours import neighbour_list

    lo = pos.min(axis=0) - rad.max()
    ext = pos.max(axis=0) + rad.max() - lo
    i, j = neighbour_list("ij", positions=pos - lo, cutoff=rad * (1 + SLACK),
                          cell=np.diag(np.maximum(ext, 1e-9)), pbc=[False] * 3)
    keep = i < j
    return _exact(np.stack((i[keep], j[keep]), axis=1), pos, rad)


def _freud(pos, rad, make):
    import freud

    r_max = 2.0 * float(rad.max()) * (1 + SLACK)
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    box_len = np.maximum(hi - lo + 2.0 * r_max, 2.5 * r_max)  # no image within r_max
    box = freud.box.Box(*box_len)
    pts = (pos - (lo + hi) / 2.0).astype(np.float32)
    nl = make(freud, box, pts, r_max).query(
        pts, {"r_max": r_max, "exclude_ii": True}).toNeighborList()
    i, j = nl.query_point_indices, nl.point_indices
    keep = i < j
    return _exact(np.stack((i[keep], j[keep]), axis=1), pos, rad)


def freud_aabb(pos, rad):
    """freud ``AABBQuery`` with r_max = the largest diameter + exact filter."""
    return _freud(pos, rad, lambda f, box, pts, r: f.locality.AABBQuery(box, pts))


def freud_linkcell(pos, rad):
    """freud ``LinkCell`` (cell width = r_max = the largest diameter) + exact filter."""
    return _freud(pos, rad, lambda f, box, pts, r: f.locality.LinkCell(box, pts, r))


#: peer name -> (module it needs, function)
PEERS = {
    "scipy cKDTree": ("scipy", kdtree),
    "matscipy neighbour_list": ("matscipy", matscipy),
    "freud AABBQuery": ("freud", freud_aabb),
    "freud LinkCell": ("freud", freud_linkcell),
}


def available() -> dict:
    """The peers whose package is installed (``pip install ".[peers]"`` brings them)."""
    return {name: fn for name, (mod, fn) in PEERS.items()
            if importlib.util.find_spec(mod) is not None}
