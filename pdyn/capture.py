"""What the writers due at the end of a step read of its contacts: the contact network, the
wall contacts and the contact statistics, taken right after the force pass — with the
velocities it saw, so they are the forces applied (after the closing half-kick damping would
see other velocities, and on several ranks ghosts keep the half-step ones). Units: N, m."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .dynamics.contact import contact_stats, touching_entries
from .heap import Scratch


class Captured(NamedTuple):
    """What a step kept of its contacts for its writers (``pdyn.io.OutputView``): ``network``
    (:func:`contact_network`), ``wall_load`` (its wall contacts), ``contact_stats``
    (``pdyn.dynamics.contact.contact_stats``), ``sphere_contacts`` (every row's contacts
    from its own side: :func:`contact_network` with ``lower=False``) and ``contacts_once``
    (every contact once over the ranks, from its row's side: with ``fixed``); None where no
    due writer needs it. With the need ``wall_patches`` the wall contacts carry ``facet``
    (:func:`wall_facets`)."""

    network: dict | None
    wall_load: dict | None
    contact_stats: dict | None
    sphere_contacts: dict | None = None
    contacts_once: dict | None = None


#: what a step whose writers need no contacts keeps
NOTHING = Captured(None, None, None, None, None)


def contact_network(contact, store, lists, dt: float, spheres: bool = True,
                    lower: bool = True, fixed: np.ndarray | None = None,
                    scratch: Scratch | None = None, just_passed: bool = False) -> dict:
    """This rank's share of the contacts with their forces now (those held past touching
    included: ``ContactPass.evaluated``), each contact on the
    rank that owns its lower-id sphere (``ContactPass.contact_list``, with the tangential
    forces the last force pass recorded); ``spheres=False``: the sphere–wall contacts only;
    ``lower=False``: every row's contacts from its side (a pair on both spheres' rows);
    ``fixed`` (the fixed spheres' sorted global ids): every contact once from its row's side,
    a pair with a fixed sphere on its partner's (``ContactPass.contact_list``); ``scratch``:
    the arrays, kept there (``pdyn.heap.Scratch``), None: new ones; ``just_passed``: right
    after the force pass (its contact history names the contacts: no walk tests them)."""
    return contact.contact_list(store, lists, dt, spheres=spheres, lower=lower, fixed=fixed,
                                tangential=contact.recorded_tangential(lists, spheres),
                                scratch=scratch, just_passed=just_passed)


def wall_facets(contact, store, lists) -> np.ndarray:
    """Of each wall contact (in the order of ``contact_network(..., spheres=False)``) the
    mesh bundle's number of its triangle, −1 for an analytic wall (``lists.facet``)."""
    found = touching_entries(store, lists, contact.wall_table(store),
                             contact.mesh_state(store, lists), spheres=False,
                             evaluated=contact.evaluated(store, lists))
    if lists.facet.shape[0] == 0:
        return np.full(len(found), -1, np.int64)
    return lists.facet[found[:, 0]].astype(np.int64)


def capture(contact, store, lists, dt: float, needs: frozenset,
            fixed: np.ndarray | None = None, scratch: Scratch | None = None) -> Captured:
    """What the due writers' ``needs`` (their ``needs`` attributes: ``network``, ``walls``,
    ``thermo``, ``sphere_contacts``, ``contacts_once``, ``wall_patches``) ask of the contacts
    of ``contact``'s last pass over ``lists``; ``fixed``: the fixed spheres' sorted global ids
    (``pdyn.fields.once.fixed_ids``), for ``contacts_once``, whose arrays ``scratch`` keeps
    (``pdyn.heap.Scratch``: valid until the next capture; None: new ones)."""
    if not needs:
        return NOTHING
    stats = (contact_stats(store, lists, contact.wall_table(store), contact.mesh,
                           contact.evaluated(store, lists)) if "thermo" in needs else None)
    network = (contact_network(contact, store, lists, dt, just_passed=True)
               if "network" in needs else None)
    wall_load = None
    if "walls" in needs or "wall_patches" in needs:
        if network is None:
            wall_load = contact_network(contact, store, lists, dt, spheres=False,
                                        just_passed=True)
        else:  # the network's wall contacts (a wall's gid is negative)
            w = network["id"][:, 1] < 0
            wall_load = {k: v[w] for k, v in network.items() if k != "ends"}
            wall_load["ends"] = network["ends"].reshape(-1, 2, 3)[w].reshape(-1, 3)
        if "wall_patches" in needs:
            wall_load["facet"] = wall_facets(contact, store, lists)
    rows = (contact_network(contact, store, lists, dt, lower=False, just_passed=True)
            if "sphere_contacts" in needs else None)
    once = (contact_network(contact, store, lists, dt, fixed=fixed, scratch=scratch,
                            just_passed=True)
            if "contacts_once" in needs else None)
    return Captured(network, wall_load, stats, rows, once)
