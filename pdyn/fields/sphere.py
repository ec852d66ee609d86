"""Stress per sphere from its contacts, the contact part of the virial split per sphere (as
LAMMPS' ``compute stress/atom`` [Thompson2022], Yade's ``bodyStressTensors``; [Christoffersen1981]
for the granular form):

    σ_i = (1 / V_i) Σ_c b_ic ⊗ F_ic,  V_i = 4/3 π r_i³,

over the sphere's touching contacts c, walls included: F_ic the contact force on sphere i
(normal + tangential, N), b_ic the branch vector from its centre to the contact point (m).
The contact point of two spheres is the middle of their overlap on the line of centres,
x_i + ½ (d + r_i − r_j) n̂ (d the distance of the centres, n̂ from i to j): the same point
from either side. A wall's is the point of its surface nearest the centre (where its force
acts). Units Pa.

**Sign**: tension positive, compression negative — the Cauchy stress of continuum mechanics,
so ``σ`` enters a momentum balance as ∇·σ + ρ g = ρ a and the pressure is p = −tr σ / 3. A
resting pile has σ_zz < 0. Summed over the spheres, Σ V_i σ_i = Σ_pairs (x_j − x_i) ⊗ F_ij
+ Σ_walls (c − x_i) ⊗ F: the virial; at rest, with the floor at z = 0,
Σ V_i σ_zz,i = −M g z_cm. With friction σ_i is not symmetric (its antisymmetric part is
half the moment of the contact forces over V_i); snapshots store the symmetric part."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT

#: the six stored components, as (row, column) of the 3 × 3 tensor
VOIGT = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
NAMES = ("xx", "yy", "zz", "xy", "xz", "yz")


@njit(**JIT)
def _branch_moments(row, ends, force, r_row, r_far, wall, moment, count, total):
    """For each contact q of row ``row[q]`` (in list order): add b ⊗ F to ``moment[row]``
    (3 × 3), one to ``count`` and F to ``total``; ``ends`` (2K, 3) the centre x_i and x_j
    (a wall: its contact point), ``force`` (K, 3) on the row's sphere, ``r_row``/``r_far``
    the radii, ``wall`` whether the far end is a wall."""
    for q in range(row.shape[0]):
        k = row[q]
        dx = ends[2 * q + 1, 0] - ends[2 * q, 0]
        dy = ends[2 * q + 1, 1] - ends[2 * q, 1]
        dz = ends[2 * q + 1, 2] - ends[2 * q, 2]
        if not wall[q]:  # the middle of the overlap on the line of centres
            d = np.sqrt(dx * dx + dy * dy + dz * dz)
            s = 0.5 * (d + r_row[q] - r_far[q]) / d
            dx, dy, dz = s * dx, s * dy, s * dz
        fx, fy, fz = force[q, 0], force[q, 1], force[q, 2]
        moment[k, 0, 0] += dx * fx
        moment[k, 0, 1] += dx * fy
        moment[k, 0, 2] += dx * fz
        moment[k, 1, 0] += dy * fx
        moment[k, 1, 1] += dy * fy
        moment[k, 1, 2] += dy * fz
        moment[k, 2, 0] += dz * fx
        moment[k, 2, 1] += dz * fy
        moment[k, 2, 2] += dz * fz
        count[k] += 1
        total[k, 0] += fx
        total[k, 1] += fy
        total[k, 2] += fz


def radius_by_id(store, ids: np.ndarray) -> np.ndarray:
    """The radius of the spheres with global ids ``ids`` among this rank's live spheres
    (owned and ghosts; every copy of a sphere has its radius)."""
    live = np.concatenate((store.owned, store.ghosts))
    live = live[np.argsort(store.gid[live], kind="stable")]
    at = np.minimum(np.searchsorted(store.gid[live], ids), max(len(live) - 1, 0))
    return store.radius[live[at]]


def sphere_tensors(store, handles: np.ndarray, contacts: dict) -> tuple:
    """(stress (N, 3, 3) Pa, contacts (N,) int32, contact force (N, 3) N) of the owned spheres
    ``handles`` (their global ids ascending) from ``contacts``: every row's touching contacts
    from its own side (``ContactPass.contact_list`` with ``lower=False``), each sphere's in
    its list order — the same numbers on any rank count. Spheres that are no row (fixed)
    have none."""
    n = len(handles)
    moment = np.zeros((n, 3, 3))
    count = np.zeros(n, np.int32)
    total = np.zeros((n, 3))
    ids = contacts["id"]
    if len(ids):
        gids = store.gid[handles]
        row = np.searchsorted(gids, ids[:, 0])
        wall = ids[:, 1] < 0
        r_far = np.where(wall, 0.0, radius_by_id(store, np.where(wall, 0, ids[:, 1])))
        _branch_moments(row, contacts["ends"], contacts["normal_force"]
                        + contacts["tangential_force"], store.radius[handles][row], r_far,
                        wall, moment, count, total)
    volume = 4.0 / 3.0 * np.pi * store.radius[handles] ** 3
    return moment / volume[:, None, None], count, total


def symmetric_six(tensor: np.ndarray) -> np.ndarray:
    """(…, 6) xx, yy, zz, xy, xz, yz of the symmetric part of (…, 3, 3) tensors."""
    t = 0.5 * (tensor + np.swapaxes(tensor, -1, -2))
    return np.stack([t[..., a, b] for a, b in VOIGT], axis=-1)
