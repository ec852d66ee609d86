"""Contact forces from the neighbour lists: the exact overlap test, the force law, the sum.

One pass over the lists of ``pdyn.dynamics.neighbours`` (row by row, each row an owned,
integrated particle i):

1. **Overlap**: each listed partner j is tested with the exact sphere predicate every broad
   phase shares, |x_i − x_j|² ≤ (r_i + r_j)²; a wall with r_i − (distance to its plane) ≥ 0.
   Partners that do not touch (yet) cost this test only.
2. **Force law** (``pdyn.dynamics.laws``): one function per law, chosen once in Python; it sees
   one contact from one side and returns the normal force on that side and the elastic energy.
3. **Sum**: the force on i is the sum, in list order — partners in ascending global id, then
   the walls in wall order — of f(i←j) computed from i's side (x_i, x_j, v_i, v_j; normal n
   from i to j; force −F n), then gravity m_i g.

Why this order ([CundallStrack1979] for the model; the rule is pdyn's): ghost copies carry the
owner's bits, so whichever rank owns i computes the identical sum, whatever order the broad
phase produced and wherever the memory order put the particles. N-rank runs therefore
reproduce the 1-rank trajectory bit for bit, and a contact between an owned particle and a
ghost is evaluated on both ranks, each applying only its own half. Each pair of owned
particles is evaluated once from each side (full lists): f(j←i) = −f(i←j) exactly in IEEE
arithmetic for these laws, so a half list could halve the force evaluations, but with the
ordered gather of the shared pair forces that determinism needs it measured slower (3.7 vs
3.3 ms a step on the 97 336-sphere gas), and so did the other half-list layouts tried
(ARCHITECTURE.md, "Contacts and forces"). Walls have infinite mass and radius: R_eff = r_i,
m_eff = m_i.

Units: N, m, m/s, kg, J.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT, JIT_IEEE
from ..broadphase import canonical_pairs
from ..broadphase._kernels import overlaps
from .friction import ContactHistory, frictional_forces, friction_parameters
from .laws import law_parameters, normal_force


# The helpers take scalars, not arrays: the same helper taking the arrays and two handles (and
# returning the touch flag in its tuple) made the whole kernel 6-10x slower (measured on the
# 97 336-sphere gas: 22 vs 2.3 ms); with scalars it costs nothing.
@njit(**JIT)
def _sphere_contact(dx, dy, dz, d2, s, dvx, dvy, dvz, i_first):
    """A touching pair seen from i, given x_j − x_i = (dx, dy, dz), its square d2, the sum of
    radii s and v_i − v_j = (dvx, dvy, dvz): normal from i to j, overlap, normal approach
    speed. Coincident centres get a fixed axis, antisymmetric in the pair (``i_first``: gid_i
    < gid_j)."""
    dist = math.sqrt(d2)
    if dist > 0.0:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = (1.0 if i_first else -1.0), 0.0, 0.0
    return nx, ny, nz, max(s - dist, 0.0), dvx * nx + dvy * ny + dvz * nz


# Handles and list positions are cast to unsigned before indexing: numba then omits its
# negative-index wraparound from every array access (with JIT_IEEE, 13-15 % less time for this
# pass on the equilibrated 97 336-sphere gas for the handles, 0.93-0.94x again for the list
# positions; forces bit for bit the same).
@njit(**JIT_IEEE)
def _accumulate(law, dt, rows, start, split, partner, pos, vel, rad, mass, gid, normal, gravity,
                force):
    """Set ``force`` of each row's particle: its touching partners in list order, then its
    touching walls, then gravity. Returns (contacts of this rank's share — a sphere contact
    where gid_i < gid_j, every wall contact —, elastic energy of this rank's share: half of
    each sphere contact, all of each wall contact)."""
    energy = 0.0
    n_contacts = 0
    for t in range(rows.shape[0]):
        i = np.uint64(rows[t])
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ri, mi, gi = rad[i], mass[i], gid[i]
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for u in range(np.uint64(start[t]), np.uint64(split[t])):
            j = np.uint64(partner[u])
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            s = ri + rad[j]
            d2 = dx * dx + dy * dy + dz * dz
            if d2 <= s * s:  # the shared exact predicate (broadphase._kernels.overlaps)
                nx, ny, nz, delta, v_n = _sphere_contact(
                    dx, dy, dz, d2, s, vel[i, 0] - vel[j, 0], vel[i, 1] - vel[j, 1],
                    vel[i, 2] - vel[j, 2], gi < gid[j])
                mj = mass[j]
                f, e = normal_force(law, delta, v_n, ri * rad[j] / s, mi * mj / (mi + mj), dt)
                fx -= f * nx
                fy -= f * ny
                fz -= f * nz
                energy += 0.5 * e
                if gi < gid[j]:
                    n_contacts += 1
        for u in range(np.uint64(split[t]), np.uint64(start[t + 1])):  # walls: half-spaces
            w = np.uint64(partner[u])
            nx, ny, nz = normal[w, 0], normal[w, 1], normal[w, 2]
            dist = (xi - pos[w, 0]) * nx + (yi - pos[w, 1]) * ny + (zi - pos[w, 2]) * nz
            delta = ri - dist
            if delta >= 0.0:
                v_n = -(vel[i, 0] * nx + vel[i, 1] * ny + vel[i, 2] * nz)
                f, e = normal_force(law, delta, v_n, ri, mi, dt)
                fx += f * nx
                fy += f * ny
                fz += f * nz
                energy += e
                n_contacts += 1
        force[i, 0] = fx + mi * gravity[0]
        force[i, 1] = fy + mi * gravity[1]
        force[i, 2] = fz + mi * gravity[2]
    return n_contacts, energy


# Output only (snapshots' contact network, the wall-force series): not called in the step, so
# the per-step kernel above stays as it is.
@njit(**JIT)
def _contact_list(law, dt, rows, start, split, partner, pos, vel, rad, mass, gid, normal,
                  tangential, spheres):
    """Every touching contact of the rows, each once: sphere pairs from the row with the lower
    gid (when ``spheres``), then each row's walls. Returns ``(ids (K, 2), ends (2K, 3),
    f_n (K,), normal force (K, 3), tangential force (K, 3))``: ids = (gid_i, gid_j) with a
    wall's (negative) gid second, ends = x_i and x_j (a wall: the contact point on its plane),
    forces on i from j — the same numbers ``_accumulate`` sums. ``tangential`` (entries, 3):
    the tangential force on the row's particle per list entry, or 0 rows (none)."""
    k = 0
    for t in range(rows.shape[0]):  # count
        i = rows[t]
        if spheres:
            for u in range(start[t], split[t]):
                j = partner[u]
                if gid[i] < gid[j] and overlaps(pos, rad, i, j):
                    k += 1
        for u in range(split[t], start[t + 1]):
            w = partner[u]
            if rad[i] - _plane_distance(pos, normal, i, w) >= 0.0:
                k += 1
    ids = np.empty((k, 2), np.int64)
    ends = np.empty((2 * k, 3))
    f_n = np.empty(k)
    fvec = np.empty((k, 3))
    tvec = np.zeros((k, 3))
    with_t = tangential.shape[0] > 0
    c = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        ri, mi, gi = rad[i], mass[i], gid[i]
        lo = start[t] if spheres else split[t]
        for u in range(lo, start[t + 1]):
            j = partner[u]
            if u < split[t]:
                if gi > gid[j] or not overlaps(pos, rad, i, j):
                    continue
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                s = ri + rad[j]
                nx, ny, nz, delta, v_n = _sphere_contact(
                    dx, dy, dz, dx * dx + dy * dy + dz * dz, s, vel[i, 0] - vel[j, 0],
                    vel[i, 1] - vel[j, 1], vel[i, 2] - vel[j, 2], gi < gid[j])
                mj = mass[j]
                f, e = normal_force(law, delta, v_n, ri * rad[j] / s, mi * mj / (mi + mj), dt)
                ends[2 * c + 1] = pos[j]
            else:
                dist = _plane_distance(pos, normal, i, j)
                if ri - dist < 0.0:
                    continue
                nx, ny, nz = -normal[j, 0], -normal[j, 1], -normal[j, 2]  # from i to the wall
                v_n = vel[i, 0] * nx + vel[i, 1] * ny + vel[i, 2] * nz
                f, e = normal_force(law, ri - dist, v_n, ri, mi, dt)
                ends[2 * c + 1, 0] = pos[i, 0] + dist * nx
                ends[2 * c + 1, 1] = pos[i, 1] + dist * ny
                ends[2 * c + 1, 2] = pos[i, 2] + dist * nz
            ids[c, 0] = gi
            ids[c, 1] = gid[j]
            ends[2 * c] = pos[i]
            f_n[c] = f
            fvec[c, 0] = -f * nx
            fvec[c, 1] = -f * ny
            fvec[c, 2] = -f * nz
            if with_t:
                tvec[c] = tangential[u]
            c += 1
    return ids, ends, f_n, fvec, tvec


@njit(**JIT)
def _plane_distance(pos, normal, i, w):
    """Distance (m) of the centre of i from the plane of wall w, along its inward normal."""
    return ((pos[i, 0] - pos[w, 0]) * normal[w, 0] + (pos[i, 1] - pos[w, 1]) * normal[w, 1]
            + (pos[i, 2] - pos[w, 2]) * normal[w, 2])


@njit(**JIT)
def _touching(rows, start, split, partner, pos, rad, gid):
    """Global-id pairs (gid_i, gid_j) of the touching sphere partners of every row."""
    out = np.empty((start[rows.shape[0]], 2), np.int64)
    k = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        for u in range(start[t], split[t]):
            if overlaps(pos, rad, i, partner[u]):
                out[k, 0] = gid[i]
                out[k, 1] = gid[partner[u]]
                k += 1
    return out[:k]


def touching_pairs(store, lists) -> np.ndarray:
    """The sphere–sphere contacts of the rows of ``lists`` now, as sorted global-id pairs
    (K, 2) with the lower id first, each once."""
    pairs = _touching(lists.rows, lists.start, lists.split, lists.partner, store.pos,
                      store.radius, store.gid)
    if pairs.shape[0] == 0:
        return np.zeros((0, 2), np.int64)
    return np.unique(canonical_pairs(pairs), axis=0)


class ContactModel:
    """A contact law with its parameters, and the force evaluation over a particle store.

    ``law`` is ``"linear"`` (default) or ``"hertz"``; ``youngs_modulus`` E (Pa), ``stiffness``
    (N/m, linear only; default E·R_eff), ``restitution`` e (1 = elastic); ``friction`` μ and
    ``rolling_friction`` μ_r (0: no tangential force, no torque — the frictionless pass),
    ``poisson_ratio`` ν (Hertz–Mindlin's tangential stiffness). With μ or μ_r > 0 the pass is
    :mod:`pdyn.dynamics.friction` (torques, contact history) and :attr:`rotating` is true.
    Set :attr:`recording` to have each pass leave the tangential force on the row's particle
    per list entry in :attr:`tangential` (entries × 3, aligned with ``lists.partner``).
    """

    def __init__(self, law: str = "linear", youngs_modulus: float = 1e6,
                 stiffness: float | None = None, restitution: float = 1.0,
                 friction: float = 0.0, poisson_ratio: float = 0.3,
                 rolling_friction: float = 0.0):
        self.law = law
        self.E = float(youngs_modulus)
        self.k = float(stiffness or 0.0)
        self.restitution = float(restitution)
        self.poisson_ratio = float(poisson_ratio)
        self.parameters = law_parameters(law, self.E, self.k, self.restitution, poisson_ratio)
        self.friction = friction_parameters(law, friction, rolling_friction, poisson_ratio)
        self.rotating = friction > 0.0 or rolling_friction > 0.0
        self.recording = False
        self.tangential = np.zeros((0, 3))
        self.history = ContactHistory()  # with friction: the springs between rebuilds

    @classmethod
    def from_config(cls, cfg) -> "ContactModel":
        return cls(cfg.law, cfg.youngs_modulus, cfg.stiffness, cfg.restitution, cfg.friction,
                   cfg.poisson_ratio, cfg.rolling_friction)

    def contact_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest contact duration t_c = π √(m_eff / k) over sphere–sphere (like pairs)
        contacts of the given particles (s); inf without stiffness. Hertz uses its tangent
        stiffness at an overlap of 1 % of the radius."""
        if radius.size == 0 or (self.E == 0.0 and self.k == 0.0):
            return math.inf
        m_eff = mass / 2.0  # like pairs are the stiffest relative to their mass
        k = self.parameters.stiffness(radius / 2.0, radius)
        return float(np.min(np.pi * np.sqrt(m_eff / k)))

    def contact_list(self, store, lists, dt: float, *, spheres: bool = True,
                     tangential: np.ndarray | None = None) -> dict:
        """The touching contacts of the rows of ``lists`` with their forces as the force pass of
        a step of ``dt`` s computed them, for output (not used by the step): ``id`` (K, 2)
        int64 — (gid_i, gid_j), a sphere pair once (lower gid first), a wall's negative gid
        second —, ``ends`` (2K, 3) m — x_i, then x_j or the
        contact point on the wall —, ``force`` (K,) N — the normal force magnitude, > 0
        repulsive —, ``normal_force`` and ``tangential_force`` (K, 3) N on i from j.
        ``spheres=False``: wall contacts only (the cheap pass of the wall-force series).

        ``tangential`` is where a tangential (friction) force enters: an (entries, 3) array,
        aligned with ``lists.partner``, of the tangential force on each row's particle per
        list entry; None: no friction, zeros."""
        t = np.zeros((0, 3)) if tangential is None else np.ascontiguousarray(tangential, float)
        ids, ends, f_n, fvec, tvec = _contact_list(
            self.parameters, float(dt), lists.rows, lists.start, lists.split, lists.partner, store.pos,
            store.vel, store.radius, store.mass, store.gid, store.normal, t, spheres)
        return {"id": ids, "ends": ends, "force": f_n, "normal_force": fvec,
                "tangential_force": tvec}

    def rayleigh_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest Rayleigh time t_R = π r √(ρ/G) / (0.1631 ν + 0.8766) of the given spheres
        (s; ρ from mass and radius, G = E/(2(1 + ν)); inf for the linear law, whose E is no
        material modulus) — the time a shear (Rayleigh) wave takes to cross a sphere
        ([EDEMtimestep])."""
        if radius.size == 0 or self.law != "hertz" or self.E == 0.0:
            return math.inf
        nu = self.poisson_ratio
        rho = mass / (4.0 / 3.0 * np.pi * radius**3)
        shear = self.E / (2.0 * (1.0 + nu))
        return float(np.min(np.pi * radius * np.sqrt(rho / shear) / (0.1631 * nu + 0.8766)))

    def forces(self, store, lists, gravity: np.ndarray, dt: float) -> tuple[int, float, int]:
        """Set ``store.force`` (and with friction ``store.torque``, advancing the contact
        history by ``dt`` s) of the rows of the neighbour ``lists``
        (:class:`~pdyn.dynamics.neighbours.NeighbourList`); return (contacts, elastic energy)
        of this rank's share and the contacts of its fullest row that found no history slot (0
        without friction; the caller reduces it and raises :class:`HistoryOverflowError`). With
        friction the history between rebuilds is kept in :attr:`history`; call
        :meth:`ContactHistory.save` before the lists are rebuilt or particles move in memory."""
        if not self.rotating:
            n, e = _accumulate(self.parameters, float(dt), lists.rows, lists.start, lists.split,
                               lists.partner, store.pos, store.vel, store.radius, store.mass,
                               store.gid, store.normal, gravity, store.force)
            return n, e, 0
        if self.recording and self.tangential.shape[0] != lists.partner.shape[0]:
            self.tangential = np.zeros((lists.partner.shape[0], 3))
        record = self.tangential if self.recording else None
        return frictional_forces(self.parameters, self.friction, store, lists, gravity, dt,
                                 record, self.history)

