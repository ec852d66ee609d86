"""Narrow phase and contact forces: sphere–sphere and sphere–half-space (walls), linear or Hertz
normal law, optional normal damping from a restitution coefficient.

Laws (forces in N, lengths in m, overlap δ = r_i + r_j − |x_j − x_i| ≥ 0):
  linear: F = k δ, k = ``stiffness`` or E·R_eff;  Hertz: F = 4/3 · E · √R_eff · δ^{3/2}.
  damping: F_d = c · v_n with c = 2 ζ √(m_eff k) and ζ = −ln e / √(π² + ln² e) (the linear
  spring-dashpot whose restitution is exactly e; for Hertz, k is the tangent stiffness, so e is
  approximate). Walls have infinite mass: m_eff = m_i, R_eff = r_i.

Decomposition independence (DESIGN.md "Parallel decomposition"): each owned particle's force is
computed from its own side of every contact — f(i←j) from (x_i, x_j, v_i, v_j) — and summed in
ascending partner global id, then walls in ascending wall id, then gravity. Ghost copies carry the
owner's bits, so any rank that owns i computes the identical sum: N-rank runs reproduce the
1-rank trajectory bit for bit. Contacts between an owned particle and a ghost are therefore
evaluated on both ranks, each applying only its own half.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ..particles import OWNED

LINEAR = 0
HERTZ = 1


def damping_ratio(restitution: float) -> float:
    """ζ for a linear spring-dashpot with coefficient of restitution e (0 < e ≤ 1)."""
    if restitution >= 1.0:
        return 0.0
    le = math.log(restitution)
    return -le / math.sqrt(math.pi**2 + le * le)


@njit(**JIT)
def _normal_force(law, E, k_const, zeta, delta, r_eff, m_eff, v_n):
    """Magnitude of the repulsive normal force and the elastic energy for overlap ``delta``.
    ``v_n`` is the normal approach velocity (> 0 when approaching)."""
    if law == LINEAR:
        k = k_const if k_const > 0.0 else E * r_eff
        f = k * delta
        energy = 0.5 * k * delta * delta
        k_t = k
    else:
        s = math.sqrt(r_eff * delta)
        f = 4.0 / 3.0 * E * s * delta
        energy = 8.0 / 15.0 * E * s * delta * delta
        k_t = 2.0 * E * s
    if zeta > 0.0:
        f += 2.0 * zeta * math.sqrt(m_eff * k_t) * v_n
    return f, energy


@njit(**JIT)
def _sphere_force(i, j, pos, vel, rad, mass, gid, law, E, k_const, zeta, out):
    """Force on sphere i from sphere j (i's side of the contact); returns elastic energy/2."""
    dx = pos[j, 0] - pos[i, 0]
    dy = pos[j, 1] - pos[i, 1]
    dz = pos[j, 2] - pos[i, 2]
    d2 = dx * dx + dy * dy + dz * dz
    s = rad[i] + rad[j]
    if d2 > s * s:
        return 0.0
    dist = math.sqrt(d2)
    if dist > 0.0:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:  # coincident centres: a fixed axis, antisymmetric in the pair
        nx, ny, nz = (1.0 if gid[i] < gid[j] else -1.0), 0.0, 0.0
    delta = s - dist
    if delta < 0.0:
        delta = 0.0
    r_eff = rad[i] * rad[j] / s
    m_eff = mass[i] * mass[j] / (mass[i] + mass[j])
    v_n = (vel[i, 0] - vel[j, 0]) * nx + (vel[i, 1] - vel[j, 1]) * ny + (vel[i, 2] - vel[j, 2]) * nz
    f, energy = _normal_force(law, E, k_const, zeta, delta, r_eff, m_eff, v_n)
    out[0] -= f * nx
    out[1] -= f * ny
    out[2] -= f * nz
    return 0.5 * energy


@njit(**JIT)
def _wall_force(i, w, pos, vel, rad, mass, normal, law, E, k_const, zeta, out):
    """Force on sphere i from the half-space wall w (point pos[w], inward normal[w]); returns
    the elastic energy, or −1 when they do not touch."""
    nx, ny, nz = normal[w, 0], normal[w, 1], normal[w, 2]
    dist = (pos[i, 0] - pos[w, 0]) * nx + (pos[i, 1] - pos[w, 1]) * ny + (pos[i, 2] - pos[w, 2]) * nz
    delta = rad[i] - dist
    if delta < 0.0:
        return -1.0
    v_n = -(vel[i, 0] * nx + vel[i, 1] * ny + vel[i, 2] * nz)
    f, energy = _normal_force(law, E, k_const, zeta, delta, rad[i], mass[i], v_n)
    out[0] += f * nx
    out[1] += f * ny
    out[2] += f * nz
    return energy


@njit(**JIT)
def _compute_forces(pairs, walls, owned, pos, vel, rad, mass, gid, flags, normal, force,
                    gravity, law, E, k_const, zeta):
    """Zero and fill ``force`` for ``owned`` handles; returns (contacts, potential energy).

    Candidate ``pairs`` are filtered exactly; every overlapping pair with an owned member
    becomes one entry per owned side, bucketed by owner (CSR) and summed in partner-gid order.
    """
    cap = pos.shape[0]
    m = pairs.shape[0]
    count = np.zeros(cap + 1, np.int64)
    hit = np.zeros(m, np.bool_)
    n_contacts = 0
    for k in range(m):
        i = pairs[k, 0]
        j = pairs[k, 1]
        dx = pos[i, 0] - pos[j, 0]
        dy = pos[i, 1] - pos[j, 1]
        dz = pos[i, 2] - pos[j, 2]
        s = rad[i] + rad[j]
        if dx * dx + dy * dy + dz * dz <= s * s:
            oi = (flags[i] & OWNED) != 0
            oj = (flags[j] & OWNED) != 0
            if oi or oj:
                hit[k] = True
                if oi:
                    count[i + 1] += 1
                if oj:
                    count[j + 1] += 1
                # count each physical contact once over all ranks: an owned–ghost
                # contact on the rank owning the member with the lower gid
                if (oi and oj) or (oi and gid[i] < gid[j]) or (oj and gid[j] < gid[i]):
                    n_contacts += 1
    for h in range(cap):
        count[h + 1] += count[h]
    fill = count[:-1].copy()
    partner = np.empty(count[cap], np.int64)
    for k in range(m):
        if hit[k]:
            i = pairs[k, 0]
            j = pairs[k, 1]
            if flags[i] & OWNED:
                partner[fill[i]] = j
                fill[i] += 1
            if flags[j] & OWNED:
                partner[fill[j]] = i
                fill[j] += 1
    energy = 0.0
    f = np.zeros(3)
    for t in range(owned.shape[0]):
        i = owned[t]
        a, b = count[i], count[i + 1]
        # insertion sort of i's partners by gid: decomposition-independent summation order
        for u in range(a + 1, b):
            p = partner[u]
            g = gid[p]
            v = u - 1
            while v >= a and gid[partner[v]] > g:
                partner[v + 1] = partner[v]
                v -= 1
            partner[v + 1] = p
        f[0] = 0.0
        f[1] = 0.0
        f[2] = 0.0
        for u in range(a, b):
            energy += _sphere_force(i, partner[u], pos, vel, rad, mass, gid, law, E, k_const,
                                    zeta, f)
        for w in range(walls.shape[0]):
            e_w = _wall_force(i, walls[w], pos, vel, rad, mass, normal, law, E, k_const, zeta, f)
            if e_w >= 0.0:
                n_contacts += 1
                energy += e_w
        force[i, 0] = f[0] + mass[i] * gravity[0]
        force[i, 1] = f[1] + mass[i] * gravity[1]
        force[i, 2] = f[2] + mass[i] * gravity[2]
    return n_contacts, energy


class ContactModel:
    """Contact law parameters plus the force evaluation over a particle store."""

    def __init__(self, law: str = "linear", youngs_modulus: float = 1e6,
                 stiffness: float | None = None, restitution: float = 1.0):
        self.law = law
        self.law_id = LINEAR if law == "linear" else HERTZ
        self.E = float(youngs_modulus)
        self.k = float(stiffness or 0.0)
        self.restitution = float(restitution)
        self.zeta = damping_ratio(self.restitution)

    @classmethod
    def from_config(cls, cfg) -> "ContactModel":
        return cls(cfg.law, cfg.youngs_modulus, cfg.stiffness, cfg.restitution)

    def contact_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest contact duration t_c = π √(m_eff / k) over sphere–sphere (like pairs) and
        sphere–wall contacts of the given particles (s); inf without stiffness. Hertz uses its
        tangent stiffness at an overlap of 1 % of the radius."""
        if radius.size == 0 or (self.E == 0.0 and self.k == 0.0):
            return math.inf
        m_eff = mass / 2.0  # like pairs are the stiffest relative to their mass
        r_eff = radius / 2.0
        if self.law_id == LINEAR:
            k = np.full_like(radius, self.k) if self.k > 0 else self.E * r_eff
        else:
            k = 2.0 * self.E * np.sqrt(r_eff * 0.01 * radius)
        return float(np.min(np.pi * np.sqrt(m_eff / k)))

    def forces(self, store, pairs: np.ndarray, walls: np.ndarray, owned: np.ndarray,
               gravity: np.ndarray) -> tuple[int, float]:
        """Fill ``store.force`` for ``owned``; return (number of contacts, elastic energy)."""
        return _compute_forces(
            np.ascontiguousarray(pairs, np.int64), walls, owned, store.pos, store.vel,
            store.radius, store.mass, store.gid, store.flags, store.normal, store.force,
            np.asarray(gravity, float), self.law_id, self.E, self.k, self.zeta,
        )
