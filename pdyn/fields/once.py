"""Every touching contact once, from the rows' own lists (``ContactPass.contact_list`` with
``lower=False``): a sphere pair from the row of its lower-id sphere, a wall contact, and a
contact with a fixed sphere (a chute's base, a glued sphere: no row of its own) from its
free sphere's row. (The contact network keeps a pair on its lower-id sphere's row, so it
leaves out a fixed sphere's contacts with spheres of higher id.)"""

from __future__ import annotations

import numpy as np

from ..particles import FIXED


def fixed_ids(comm, store) -> np.ndarray:
    """The global ids of every rank's fixed spheres, sorted (collective: an allgather)."""
    h = store.owned
    mine = store.gid[h[(store.flags[h] & FIXED) != 0]]
    return np.sort(np.concatenate([np.asarray(x, np.int64) for x in comm.allgather(mine)]))


def each_once(contacts: dict, fixed: np.ndarray) -> dict:
    """The contacts of ``contacts`` (every row's, from its side) that count each contact once
    over all ranks: walls, pairs whose partner has the higher id or is ``fixed``."""
    ids = contacts["id"]
    at = np.minimum(np.searchsorted(fixed, ids[:, 1]), max(len(fixed) - 1, 0))
    partner_fixed = (fixed[at] == ids[:, 1]) if len(fixed) else np.zeros(len(ids), bool)
    keep = (ids[:, 1] < 0) | (ids[:, 0] < ids[:, 1]) | partner_fixed
    out = {k: v[keep] for k, v in contacts.items() if k != "ends"}
    out["ends"] = contacts["ends"].reshape(-1, 2, 3)[keep].reshape(-1, 3)
    return out
