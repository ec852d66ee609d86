"""Contacts and forces in three pieces: the narrow phase, the force law, the accumulation.

1. **Narrow phase**: the broad phase's candidate pairs are filtered with the exact overlap test
   every structure shares (``pdyn.broadphase.filter_overlapping``).
2. **Force law** (``pdyn.dynamics.laws``): one function per law, chosen once in Python; it sees
   one contact from one side and returns the normal force on that side and the elastic energy.
3. **Accumulation** (:func:`_partners_by_gid`, :func:`_accumulate`): the ownership rule and a
   fixed summation order. Every overlapping pair with an owned member becomes one entry per
   *owned* side; the partners of each owned particle i are sorted by ascending global id, and
   its force is the sum, in that order, of f(i←j) computed from i's side — (x_i, x_j, v_i, v_j),
   normal n from i to j, force −F n — then the walls (half-spaces, normal inward) in ascending
   wall id, then gravity m_i g.

Why this order ([CundallStrack1979] for the model; the rule is pdyn's): ghost copies carry the
owner's bits, so whichever rank owns i computes the identical sum whatever order the broad
phase produced. N-rank runs therefore reproduce the 1-rank trajectory bit for bit, and a
contact between an owned particle and a ghost is evaluated on both ranks, each applying only
its own half. Walls have infinite mass and radius: R_eff = r_i, m_eff = m_i.

Units: N, m, m/s, kg, J.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ..broadphase import filter_overlapping
from ..particles import OWNED
from .laws import damping_ratio, law_parameters, normal_force


@njit(**JIT)
def _partners_by_gid(touching, flags, gid, capacity):
    """Ownership rule and summation order for overlapping pairs ``touching`` (K, 2).

    Returns ``(start, partner, n_contacts)``: the partners of handle h are
    ``partner[start[h]:start[h + 1]]`` in ascending global id, listed only for owned h; each
    physical contact counts once over all ranks (an owned–ghost contact on the rank owning the
    member with the lower gid)."""
    start = np.zeros(capacity + 1, np.int64)
    n_contacts = 0
    for k in range(touching.shape[0]):
        i = touching[k, 0]
        j = touching[k, 1]
        oi = (flags[i] & OWNED) != 0
        oj = (flags[j] & OWNED) != 0
        if oi:
            start[i + 1] += 1
        if oj:
            start[j + 1] += 1
        if (oi and oj) or (oi and gid[i] < gid[j]) or (oj and gid[j] < gid[i]):
            n_contacts += 1
    for h in range(capacity):
        start[h + 1] += start[h]
    fill = start[:-1].copy()
    partner = np.empty(start[capacity], np.int64)
    for k in range(touching.shape[0]):
        i = touching[k, 0]
        j = touching[k, 1]
        if flags[i] & OWNED:
            partner[fill[i]] = j
            fill[i] += 1
        if flags[j] & OWNED:
            partner[fill[j]] = i
            fill[j] += 1
    for h in range(capacity):  # insertion sort of each (short) partner list by gid
        for u in range(start[h] + 1, start[h + 1]):
            p = partner[u]
            g = gid[p]
            v = u - 1
            while v >= start[h] and gid[partner[v]] > g:
                partner[v + 1] = partner[v]
                v -= 1
            partner[v + 1] = p
    return start, partner, n_contacts


@njit(**JIT)
def _sphere_contact(i, j, pos, vel, rad, mass, gid):
    """The contact of sphere i with sphere j seen from i: normal (from i to j), overlap,
    normal approach speed, effective radius and mass."""
    dx = pos[j, 0] - pos[i, 0]
    dy = pos[j, 1] - pos[i, 1]
    dz = pos[j, 2] - pos[i, 2]
    s = rad[i] + rad[j]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 0.0:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:  # coincident centres: a fixed axis, antisymmetric in the pair
        nx, ny, nz = (1.0 if gid[i] < gid[j] else -1.0), 0.0, 0.0
    delta = max(s - dist, 0.0)
    v_n = (vel[i, 0] - vel[j, 0]) * nx + (vel[i, 1] - vel[j, 1]) * ny + (vel[i, 2] - vel[j, 2]) * nz
    return nx, ny, nz, delta, v_n, rad[i] * rad[j] / s, mass[i] * mass[j] / (mass[i] + mass[j])


@njit(**JIT)
def _wall_contact(i, w, pos, vel, rad, normal):
    """The contact of sphere i with the half-space w (point ``pos[w]``, inward ``normal[w]``)
    seen from i: normal (from i into the wall), overlap (< 0: apart), approach speed."""
    nx, ny, nz = normal[w, 0], normal[w, 1], normal[w, 2]
    dist = ((pos[i, 0] - pos[w, 0]) * nx + (pos[i, 1] - pos[w, 1]) * ny
            + (pos[i, 2] - pos[w, 2]) * nz)
    v_n = -(vel[i, 0] * nx + vel[i, 1] * ny + vel[i, 2] * nz)
    return -nx, -ny, -nz, rad[i] - dist, v_n


@njit(**JIT)
def _accumulate(law, owned, start, partner, walls, pos, vel, rad, mass, gid, normal, gravity,
                force):
    """Set ``force`` of each ``owned`` handle: its sphere contacts in partner order, then the
    walls in order, then gravity. Returns (wall contacts, elastic energy of this rank's
    share: half of each sphere contact, all of each wall contact)."""
    energy = 0.0
    n_walls = 0
    for t in range(owned.shape[0]):
        i = owned[t]
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for u in range(start[i], start[i + 1]):
            nx, ny, nz, delta, v_n, r_eff, m_eff = _sphere_contact(i, partner[u], pos, vel, rad,
                                                                   mass, gid)
            f, e = normal_force(law, delta, v_n, r_eff, m_eff)
            fx -= f * nx
            fy -= f * ny
            fz -= f * nz
            energy += 0.5 * e
        for k in range(walls.shape[0]):
            nx, ny, nz, delta, v_n = _wall_contact(i, walls[k], pos, vel, rad, normal)
            if delta >= 0.0:
                f, e = normal_force(law, delta, v_n, rad[i], mass[i])
                fx -= f * nx
                fy -= f * ny
                fz -= f * nz
                energy += e
                n_walls += 1
        force[i, 0] = fx + mass[i] * gravity[0]
        force[i, 1] = fy + mass[i] * gravity[1]
        force[i, 2] = fz + mass[i] * gravity[2]
    return n_walls, energy


class ContactModel:
    """A contact law with its parameters, and the force evaluation over a particle store.

    ``law`` is ``"linear"`` (default) or ``"hertz"``; ``youngs_modulus`` E (Pa), ``stiffness``
    (N/m, linear only; default E·R_eff), ``restitution`` e (1 = elastic).
    """

    def __init__(self, law: str = "linear", youngs_modulus: float = 1e6,
                 stiffness: float | None = None, restitution: float = 1.0):
        self.law = law
        self.E = float(youngs_modulus)
        self.k = float(stiffness or 0.0)
        self.restitution = float(restitution)
        self.parameters = law_parameters(law, self.E, self.k, damping_ratio(self.restitution))

    @classmethod
    def from_config(cls, cfg) -> "ContactModel":
        return cls(cfg.law, cfg.youngs_modulus, cfg.stiffness, cfg.restitution)

    def contact_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest contact duration t_c = π √(m_eff / k) over sphere–sphere (like pairs)
        contacts of the given particles (s); inf without stiffness. Hertz uses its tangent
        stiffness at an overlap of 1 % of the radius."""
        if radius.size == 0 or (self.E == 0.0 and self.k == 0.0):
            return math.inf
        m_eff = mass / 2.0  # like pairs are the stiffest relative to their mass
        k = self.parameters.stiffness(radius / 2.0, radius)
        return float(np.min(np.pi * np.sqrt(m_eff / k)))

    def forces(self, store, pairs: np.ndarray, walls: np.ndarray, owned: np.ndarray,
               gravity: np.ndarray) -> tuple[int, float]:
        """Set ``store.force`` of the ``owned`` handles from the candidate ``pairs`` and the
        ``walls``; return (contacts, elastic energy) of this rank's share."""
        touching = filter_overlapping(np.ascontiguousarray(pairs, np.int64), store.pos,
                                      store.radius)
        start, partner, n_pairs = _partners_by_gid(touching, store.flags, store.gid,
                                                   store.capacity)
        n_walls, energy = _accumulate(self.parameters, owned, start, partner, walls, store.pos,
                                      store.vel, store.radius, store.mass, store.gid,
                                      store.normal, np.asarray(gravity, float), store.force)
        return n_pairs + n_walls, energy
