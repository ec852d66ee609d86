"""Every touching contact once, from the rows' own lists (``ContactPass.contact_list`` with
``lower=False``): a sphere pair from the row of its lower-id sphere, a wall contact, and a
contact with a fixed sphere (a chute's base, a glued sphere: no row of its own) from its
free sphere's row. (``lower=True`` keeps a pair on its lower-id sphere's row, so it would
leave out a fixed sphere's contacts with spheres of higher id; snapshots' contact network
is :func:`each_once` turned by :func:`lower_first`.)"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..particles import FIXED


def fixed_ids(comm, store) -> np.ndarray:
    """The global ids of every rank's fixed spheres, sorted (collective: an allgather)."""
    h = store.owned
    mine = store.gid[h[(store.flags[h] & FIXED) != 0]]
    return np.sort(np.concatenate([np.asarray(x, np.int64) for x in comm.allgather(mine)]))


@njit(**JIT)
def _once(ids, fixed):
    """Which rows of ``ids`` (K, 2) to keep (:func:`once_mask`): a wall (negative second id),
    a partner of higher id, or a ``fixed`` one (sorted ids; a binary search)."""
    keep = np.empty(ids.shape[0], np.bool_)
    for k in range(ids.shape[0]):
        j = ids[k, 1]
        keep[k] = j < 0 or ids[k, 0] < j
        if not keep[k] and fixed.shape[0] > 0:
            at = np.searchsorted(fixed, j)
            keep[k] = at < fixed.shape[0] and fixed[at] == j
    return keep


def once_mask(contacts: dict, fixed: np.ndarray) -> np.ndarray:
    """Which contacts of ``contacts`` (every row's, from its side) count each contact once over
    all ranks: walls, pairs whose partner has the higher id or is ``fixed`` (sorted ids)."""
    return _once(np.ascontiguousarray(contacts["id"], np.int64),
                 np.ascontiguousarray(fixed, np.int64))


def each_once(contacts: dict, fixed: np.ndarray) -> dict:
    """The contacts of ``contacts`` that :func:`once_mask` keeps."""
    keep = once_mask(contacts, fixed)
    out = {k: v[keep] for k, v in contacts.items() if k != "ends"}
    out["ends"] = contacts["ends"].reshape(-1, 2, 3)[keep].reshape(-1, 3)
    return out


def lower_first(contacts: dict) -> dict:
    """``contacts`` (from :func:`each_once`) with every sphere pair as the contact network
    states it: the lower id first, its ends in that order and the forces on that sphere
    (a fixed sphere's contact seen from its free partner's row turned around: ends swapped,
    forces negated — exact)."""
    ids = contacts["id"]
    turn = (ids[:, 1] >= 0) & (ids[:, 0] > ids[:, 1])
    if not turn.any():
        return contacts
    out = dict(contacts)
    out["id"] = np.where(turn[:, None], ids[:, ::-1], ids)
    ends = contacts["ends"].reshape(-1, 2, 3)
    out["ends"] = np.where(turn[:, None, None], ends[:, ::-1], ends).reshape(-1, 3)
    for k in ("normal_force", "tangential_force"):
        out[k] = np.where(turn[:, None], -contacts[k], contacts[k])
    return out
