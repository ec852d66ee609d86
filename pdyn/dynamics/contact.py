"""Contact forces from the neighbour lists: one loop over rows, partners and walls, the
contact's sub-models chosen at compile time.

The loop (:func:`_pass`) walks the lists of ``pdyn.dynamics.neighbours`` row by row, each row
an owned, integrated sphere i, and for each listed partner:

1. **Geometry** (written once here for both kinds of partner): a sphere j with the exact
   overlap predicate every broad phase shares, |x_j − x_i + shift|² ≤ (r_i + r_j)², where
   ``shift`` is the periodic image of j the entry names (``NeighbourList.code``; ghosts carry
   their owner's position); a wall by the overlap δ = r_i − (distance of x_i from its plane).
   Partners that do not touch (yet) cost this test only.
2. **Sub-models** ([LAMMPSgranular]'s ``pair granular`` split): the normal law
   (``pdyn.dynamics.laws``: ``Linear`` or ``Hertz``), then with friction the tangential
   spring–dashpot with history (``pdyn.dynamics.friction.Tangential``) and with rolling
   friction the rolling torque (``Rolling``). Each is a parameter record (or None), and numba
   compiles one loop per combination with the chosen parts inlined and the others pruned.
3. **Sum**, in an order fixed by global ids, so the force on each sphere has the same bits on
   every rank count and memory order ([CundallStrack1979] for the model; the rule is pdyn's).

Two ways through the lists, chosen by the model at compile time:

* **Frictionless** (no tangential or rolling part, no rotation): each row evaluates every one
  of its partners from its own side, f(i←j), and sums them in list order — partners in
  ascending global id, then the walls in wall order — then gravity m_i g. A pair of owned
  spheres is evaluated from both sides (full lists): with the cheap normal law alone this
  measured faster than evaluating it once and gathering (1.0× the time on the dense gas,
  1.35× on the dilute one).
* **With rotation** each contact is evaluated once, at its *site*
  (``pdyn.dynamics.history``): a sphere pair from its lower-id sphere's side, in that sphere's
  row; a wall contact in the sphere's row. Pass one (:func:`_pass`) evaluates each row's
  sites: its higher-id partners and walls, summed in list order into the row's partial force
  and torque, and the pairs with a lower-id *ghost* (a sphere another rank owns, or a periodic
  image), evaluated from the ghost's side; each pair's force on its lower sphere and torque on
  its higher sphere are kept per site. Pass two (:func:`_gather`) adds to each row the pairs
  with its lower-id partners, in ascending id: −(force on the partner) and the torque, from
  the partner row's site (``mirror``) or the ghost's. The force on i is then
  (Σ lower + (Σ higher + Σ walls)) + m_i g. A pair across ranks (or across a periodic face on
  one rank) is evaluated on both sides' ranks with the same bits: ghosts carry the owner's
  position and the relative position is (x_j − x_i) + shift, whose negation is exact, so both
  evaluations see the same inputs, and the pair's spring is one history both keep alike. The
  tangential spring–dashpot is the costly part of a contact; evaluating it once per pair took
  0.66× the time of evaluating it from both sides on the dense gas (solid fraction 0.5,
  97 336 spheres, one rank, same state).

Walls have infinite mass and radius: R_eff = r_i, m_eff = m_i. Each contact counts once
(contacts and elastic energy of this rank's share): a sphere pair on the rank that owns its
lower-id sphere (from both sides half of the energy without rotation), every wall contact.

Units: N, N·m, m, m/s, kg, J.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT, JIT_IEEE
from .friction import rolling_model, rolling_torque, tangential_force, tangential_model
from .history import ContactHistory, site_of
from .laws import law_parameters, normal_force


#: the image table of a box without periodic axes (every ``code`` 0)
NO_SHIFT = np.zeros((1, 3))


# ------------------------------------------------------------------ geometry
# The helpers take scalars, not arrays: the same helper taking the arrays and two handles (and
# returning the touch flag in its tuple) made the whole kernel 6-10x slower (measured on the
# 97 336-sphere gas: 22 vs 2.3 ms); with scalars it costs nothing.
@njit(inline="always", **JIT)
def sphere_contact(dx, dy, dz, d2, s):
    """A touching sphere pair seen from i, given x_j − x_i (+ shift) = (dx, dy, dz), its square
    d2 and the sum of radii s (m): the unit normal from i to j and the overlap δ. Coincident
    centres (d2 = 0) get the x axis: the caller turns it for the sphere of higher id
    (:func:`coincident_axis`), so it is antisymmetric in the pair."""
    dist = math.sqrt(d2)
    if dist > 0.0:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = 1.0, 0.0, 0.0
    return nx, ny, nz, max(s - dist, 0.0)


@njit(inline="always", **JIT)
def coincident_axis(nx, gi, gj):
    """The x component of a coincident pair's normal seen from the sphere of id ``gi``: +1
    for the lower id, −1 for the higher."""
    return nx if gi < gj else -nx


@njit(inline="always", **JIT)
def relative_position(pos, i, j, shifts, c):
    """x_j − x_i + shifts[c] (m): where sphere j's image ``c`` (a row of the box's shift
    table) is seen from sphere i, as the difference of the owners' positions plus the shift
    (so the two sides of a pair get exact negations)."""
    return ((pos[j, 0] - pos[i, 0]) + shifts[c, 0], (pos[j, 1] - pos[i, 1]) + shifts[c, 1],
            (pos[j, 2] - pos[i, 2]) + shifts[c, 2])


@njit(inline="always", **JIT)
def plane_gap(x, y, z, px, py, pz, wx, wy, wz):
    """Signed distance (m) of the centre (x, y, z) from the plane through (px, py, pz) with
    unit normal (wx, wy, wz), positive on the side the normal points to."""
    return (x - px) * wx + (y - py) * wy + (z - pz) * wz


# ------------------------------------------------------------------ one contact
@njit(inline="always", **JIT)
def _evaluate(law, tangential, rolling, nx, ny, nz, delta, r_eff, m_eff, ri, rj, dvx, dvy,
              dvz, wix, wiy, wiz, wjx, wjy, wjz, sx, sy, sz, dt):
    """One touching contact seen from i (normal n from i to j, overlap δ, v_i − v_j, spins
    ω_i, ω_j, lever arms r_i, r_j, spring s): the normal force magnitude (> 0 repulsive) and
    elastic energy, the force on i (normal and tangential), the new spring, n × F_t (the
    tangential torque on i is r_i n × F_t, on j r_j n × F_t), the rolling torque on i and the
    tangential force on i. Without a tangential or rolling part those are zero."""
    f, e = normal_force(law, delta, dvx * nx + dvy * ny + dvz * nz, r_eff, m_eff, dt)
    tx = ty = tz = 0.0
    cx = cy = cz = 0.0
    mx = my = mz = 0.0
    if tangential is not None:
        # contact-point velocity of i relative to j: dv + (r_i ω_i + r_j ω_j) × n
        wx = ri * wix + rj * wjx
        wy = ri * wiy + rj * wjy
        wz = ri * wiz + rj * wjz
        sx, sy, sz, tx, ty, tz = tangential_force(
            law, tangential, sx, sy, sz, nx, ny, nz, dvx + (wy * nz - wz * ny),
            dvy + (wz * nx - wx * nz), dvz + (wx * ny - wy * nx), f, delta, r_eff, m_eff, dt)
        cx = ny * tz - nz * ty
        cy = nz * tx - nx * tz
        cz = nx * ty - ny * tx
    if rolling is not None:
        mx, my, mz = rolling_torque(rolling, nx, ny, nz, wix - wjx, wiy - wjy, wiz - wjz, f,
                                    r_eff)
    return (f, e, tx - f * nx, ty - f * ny, tz - f * nz, sx, sy, sz, cx, cy, cz, mx, my, mz,
            tx, ty, tz)


# ------------------------------------------------------------------ the loop
# Handles and list positions are cast to unsigned before indexing: numba then omits its
# negative-index wraparound from every array access (with JIT_IEEE, 13-15 % less time for the
# frictionless pass on the equilibrated 97 336-sphere gas for the handles, 0.93-0.94x again for
# the list positions; forces bit for bit the same).
@njit(**JIT_IEEE)
def _pass(law, tangential, rolling, dt, gravity, shifts, rows, start, mid, split, partner,
          mirror, code, imaged, ghostly, pos, vel, rad, mass, gid, normal, force, omega, sites,
          record):
    """The contact loop (module docstring). Without rotation (``omega`` None) it sets
    ``force`` of every row's sphere. With rotation ``sites`` = (last step's sites, their
    springs, their number, this step's sites and springs (written), ``slot`` (per entry:
    this step's site, written for the touching entries evaluated here; an entry whose slot
    does not name a site of this step whose entry it is does not touch: :func:`site_of`),
    the force on the lower
    sphere and the torque on the higher sphere of each site, the store's ``torque``, and
    ``hits`` per row: bit 1 set where a row has a touching lower-id partner, bit 2 where it
    has a touching higher-id partner or wall); :func:`_gather` then completes the forces and
    torques. ``record``
    (entries × 3, or None) receives the tangential force on the row's sphere of each site in
    its row. Returns (contacts of this rank's share, their elastic energy, sites: those written,
    or more than fit the site buffers, which then hold the first that fit — the caller grows
    them and runs the pass again; it reads nothing it writes).
    With rotation the row's partial sums are left in ``force`` and ``torque`` (gravity not
    yet added) for :func:`_gather`."""
    energy = 0.0
    n_contacts = 0
    k = 0  # sites written
    p = 0  # last step's sites passed
    cap = 0  # sites the buffers hold
    if sites is not None:
        cap = sites[3].shape[0]
    for t in range(rows.shape[0]):
        i = np.uint64(rows[t])
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ri, mi, gi = rad[i], mass[i], gid[i]
        vix, viy, viz = vel[i, 0], vel[i, 1], vel[i, 2]
        wix = wiy = wiz = 0.0
        if omega is not None:
            wix, wiy, wiz = omega[i, 0], omega[i, 1], omega[i, 2]
        fx = fy = fz = 0.0
        mx = my = mz = 0.0
        u_mid = np.uint64(start[t])
        if omega is not None:
            u_mid = np.uint64(mid[t])
        u_split = np.uint64(split[t])
        row_imaged = imaged[t]
        u_first = np.uint64(start[t])
        if omega is not None and not ghostly[t]:  # every lower-id partner a row: none here
            u_first = u_mid
        for u in range(u_first, np.uint64(start[t + 1])):
            own = True
            if omega is not None and u < u_mid:
                if mirror[u] >= 0:  # evaluated at its site in the partner's row
                    continue
                own = False  # a lower-id ghost: evaluated here from its side
            j = np.uint64(partner[u])
            wjx = wjy = wjz = 0.0
            if u < u_split:
                if omega is None:  # periodic images are at their place (pdyn.particles)
                    dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
                elif row_imaged:  # a row with a periodic image among its partners
                    dx, dy, dz = relative_position(pos, i, j, shifts, code[u])
                else:  # the same without the table, for most rows
                    dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
                rj = rad[j]
                s = ri + rj
                d2 = dx * dx + dy * dy + dz * dz
                if d2 > s * s:  # the shared exact predicate (broadphase._kernels.overlaps)
                    continue
                nx, ny, nz, delta = sphere_contact(dx, dy, dz, d2, s)
                if d2 == 0.0:
                    nx = coincident_axis(nx, gi, gid[j])
                mj = mass[j]
                r_eff, m_eff = ri * rj / s, mi * mj / (mi + mj)
                dvx, dvy, dvz = vix - vel[j, 0], viy - vel[j, 1], viz - vel[j, 2]
                if omega is not None:
                    wjx, wjy, wjz = omega[j, 0], omega[j, 1], omega[j, 2]
            else:  # a wall: half-space, n = −(inward normal), no motion, infinite radius
                nx, ny, nz = -normal[j, 0], -normal[j, 1], -normal[j, 2]
                delta = ri - plane_gap(xi, yi, zi, pos[j, 0], pos[j, 1], pos[j, 2],
                                       normal[j, 0], normal[j, 1], normal[j, 2])
                if delta < 0.0:
                    continue
                rj, r_eff, m_eff = 0.0, ri, mi
                dvx, dvy, dvz = vix, viy, viz
            sx = sy = sz = 0.0
            if sites is not None and tangential is not None:  # last step's spring, if any
                old_site, old_spring, n_old = sites[0], sites[1], sites[2]
                while p < n_old and np.uint64(old_site[p]) < u:  # ended contacts: springs go
                    p += 1
                if p < n_old and np.uint64(old_site[p]) == u:
                    sx, sy, sz = old_spring[p, 0], old_spring[p, 1], old_spring[p, 2]
            if own:
                (f, e, cfx, cfy, cfz, sx, sy, sz, cx, cy, cz, rx, ry, rz, tx, ty,
                 tz) = _evaluate(law, tangential, rolling, nx, ny, nz, delta, r_eff, m_eff,
                                 ri, rj, dvx, dvy, dvz, wix, wiy, wiz, wjx, wjy, wjz, sx, sy,
                                 sz, dt)
                fx += cfx
                fy += cfy
                fz += cfz
                if omega is not None:
                    mx += ri * cx + rx
                    my += ri * cy + ry
                    mz += ri * cz + rz
                if record is not None:
                    record[u, 0] = tx
                    record[u, 1] = ty
                    record[u, 2] = tz
                if u >= u_split:
                    energy += e
                    n_contacts += 1
                elif omega is not None:
                    energy += e
                    n_contacts += 1
                else:
                    energy += 0.5 * e
                    if gi < gid[j]:
                        n_contacts += 1
                if sites is not None:
                    sites[9][t] |= 2
                    if u < u_split and mirror[u] >= 0:  # the partner's row gathers it
                        sites[9][mirror[u]] |= 1
                if sites is not None and k < cap:
                    sites[6][k, 0] = cfx  # force on the lower sphere (i)
                    sites[6][k, 1] = cfy
                    sites[6][k, 2] = cfz
                    sites[7][k, 0] = rj * cx - rx  # torque on the higher sphere (j)
                    sites[7][k, 1] = rj * cy - ry
                    sites[7][k, 2] = rj * cz - rz
            else:  # from the lower-id ghost's side: n → −n, i ↔ j
                (f, e, cfx, cfy, cfz, sx, sy, sz, cx, cy, cz, rx, ry, rz, tx, ty,
                 tz) = _evaluate(law, tangential, rolling, -nx, -ny, -nz, delta, r_eff, m_eff,
                                 rj, ri, -dvx, -dvy, -dvz, wjx, wjy, wjz, wix, wiy, wiz, sx, sy,
                                 sz, dt)
                if sites is not None:
                    sites[9][t] |= 1
                if sites is not None and k < cap:
                    sites[6][k, 0] = cfx  # force on the lower sphere (the ghost)
                    sites[6][k, 1] = cfy
                    sites[6][k, 2] = cfz
                    sites[7][k, 0] = ri * cx - rx  # torque on the higher sphere (i)
                    sites[7][k, 1] = ri * cy - ry
                    sites[7][k, 2] = ri * cz - rz
            if sites is not None:
                if k < cap:
                    sites[3][k] = u
                    sites[4][k, 0] = sx
                    sites[4][k, 1] = sy
                    sites[4][k, 2] = sz
                sites[5][u] = k
                k += 1
        if omega is not None:  # the partial sums: _gather completes them
            force[i, 0] = fx
            force[i, 1] = fy
            force[i, 2] = fz
            torque = sites[8]
            torque[i, 0] = mx
            torque[i, 1] = my
            torque[i, 2] = mz
        else:
            force[i, 0] = fx + mi * gravity[0]
            force[i, 1] = fy + mi * gravity[1]
            force[i, 2] = fz + mi * gravity[2]
    return n_contacts, energy, k


@njit(**JIT)
def _gather(rows, start, mid, mirror, slot, sites, n_sites, pair_force, pair_torque, hits,
            mass, gravity, force, torque, spinning, spinning_t):
    """Second pass with rotation: each row's lower-id partners in ascending id — the force
    −(force on the partner) and the torque each pair's site (:func:`_pass`) left; only rows
    whose ``hits`` say they have one are scanned — then the row's partial sums :func:`_pass`
    left in ``force`` and ``torque``, and gravity. Writes the handles of the rows that touch
    something (the only ones whose torque may be nonzero) into ``spinning`` and their row
    indices into ``spinning_t``, clears ``hits`` and returns how many."""
    q = 0
    for t in range(np.uint64(rows.shape[0])):
        i = np.uint64(rows[t])
        fx = fy = fz = 0.0
        mx = my = mz = 0.0
        h = hits[t]
        if h & 1:
            for u in range(np.uint64(start[t]), np.uint64(mid[t])):
                v = mirror[u]
                k = site_of(np.uint64(v) if v >= 0 else u, slot, sites, n_sites)
                if k >= 0:
                    fx -= pair_force[k, 0]
                    fy -= pair_force[k, 1]
                    fz -= pair_force[k, 2]
                    mx += pair_torque[k, 0]
                    my += pair_torque[k, 1]
                    mz += pair_torque[k, 2]
        if h:
            spinning[q] = i
            spinning_t[q] = t
            q += 1
            hits[t] = 0
        mi = mass[i]
        force[i, 0] = (fx + force[i, 0]) + mi * gravity[0]
        force[i, 1] = (fy + force[i, 1]) + mi * gravity[1]
        force[i, 2] = (fz + force[i, 2]) + mi * gravity[2]
        torque[i, 0] = mx + torque[i, 0]
        torque[i, 1] = my + torque[i, 1]
        torque[i, 2] = mz + torque[i, 2]
    return q


# ------------------------------------------------------------------ output
# Output only (snapshots' contact network, the wall-force series): not called in the step.
@njit(**JIT)
def _contact_list(law, dt, shifts, rows, start, split, partner, code, pos, vel, rad, mass, gid,
                  normal, tangential, spheres):
    """Every touching contact of the rows, each once: sphere pairs from the row with the lower
    gid (when ``spheres``), then each row's walls. Returns ``(ids (K, 2), ends (2K, 3),
    f_n (K,), normal force (K, 3), tangential force (K, 3))``: ids = (gid_i, gid_j) with a
    wall's (negative) gid second, ends = x_i and x_j (a ghost at its image; a wall: the contact
    point on its plane), forces on i from j — the same numbers the contact loop computes.
    ``tangential`` (entries, 3): the tangential force on the row's sphere per list entry, or 0
    rows (none)."""
    k = 0
    for t in range(rows.shape[0]):  # count
        i = rows[t]
        for u in range(start[t] if spheres else split[t], start[t + 1]):
            j = partner[u]
            if u < split[t]:
                dx, dy, dz = relative_position(pos, i, j, shifts, code[u])
                s = rad[i] + rad[j]
                if gid[i] < gid[j] and dx * dx + dy * dy + dz * dz <= s * s:
                    k += 1
            elif rad[i] - plane_gap(pos[i, 0], pos[i, 1], pos[i, 2], pos[j, 0], pos[j, 1],
                                    pos[j, 2], normal[j, 0], normal[j, 1],
                                    normal[j, 2]) >= 0.0:
                k += 1
    ids = np.empty((k, 2), np.int64)
    ends = np.empty((2 * k, 3))
    f_n = np.empty(k)
    fvec = np.empty((k, 3))
    tvec = np.zeros((k, 3))
    with_t = tangential.shape[0] > 0
    q = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        ri, mi, gi = rad[i], mass[i], gid[i]
        for u in range(start[t] if spheres else split[t], start[t + 1]):
            j = partner[u]
            if u < split[t]:
                dx, dy, dz = relative_position(pos, i, j, shifts, code[u])
                s = ri + rad[j]
                d2 = dx * dx + dy * dy + dz * dz
                if gi > gid[j] or d2 > s * s:
                    continue
                nx, ny, nz, delta = sphere_contact(dx, dy, dz, d2, s)
                if d2 == 0.0:
                    nx = coincident_axis(nx, gi, gid[j])
                v_n = ((vel[i, 0] - vel[j, 0]) * nx + (vel[i, 1] - vel[j, 1]) * ny
                       + (vel[i, 2] - vel[j, 2]) * nz)
                mj = mass[j]
                f, e = normal_force(law, delta, v_n, ri * rad[j] / s, mi * mj / (mi + mj), dt)
                ends[2 * q + 1, 0] = pos[i, 0] + dx
                ends[2 * q + 1, 1] = pos[i, 1] + dy
                ends[2 * q + 1, 2] = pos[i, 2] + dz
            else:
                dist = plane_gap(pos[i, 0], pos[i, 1], pos[i, 2], pos[j, 0], pos[j, 1],
                                 pos[j, 2], normal[j, 0], normal[j, 1], normal[j, 2])
                if ri - dist < 0.0:
                    continue
                nx, ny, nz = -normal[j, 0], -normal[j, 1], -normal[j, 2]  # from i to the wall
                v_n = vel[i, 0] * nx + vel[i, 1] * ny + vel[i, 2] * nz
                f, e = normal_force(law, ri - dist, v_n, ri, mi, dt)
                ends[2 * q + 1, 0] = pos[i, 0] + dist * nx
                ends[2 * q + 1, 1] = pos[i, 1] + dist * ny
                ends[2 * q + 1, 2] = pos[i, 2] + dist * nz
            ids[q, 0] = gi
            ids[q, 1] = gid[j]
            ends[2 * q] = pos[i]
            f_n[q] = f
            fvec[q, 0] = -f * nx
            fvec[q, 1] = -f * ny
            fvec[q, 2] = -f * nz
            if with_t:
                tvec[q] = tangential[u]
            q += 1
    return ids, ends, f_n, fvec, tvec


@njit(**JIT)
def _touching(shifts, rows, start, split, partner, code, pos, rad, gid):
    """Global-id pairs (gid_i, gid_j) of the touching sphere partners of every row."""
    out = np.empty((start[rows.shape[0]], 2), np.int64)
    k = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        for u in range(start[t], split[t]):
            j = partner[u]
            dx, dy, dz = relative_position(pos, i, j, shifts, code[u])
            s = rad[i] + rad[j]
            if dx * dx + dy * dy + dz * dz <= s * s:
                out[k, 0] = gid[i]
                out[k, 1] = gid[j]
                k += 1
    return out[:k]


def touching_pairs(store, lists, shifts=None) -> np.ndarray:
    """The sphere–sphere contacts of the rows of ``lists`` now, as sorted global-id pairs
    (K, 2) with the lower id first, each once (``shifts``: the box's image table)."""
    shifts = NO_SHIFT if shifts is None else shifts
    pairs = _touching(shifts, lists.rows, lists.start, lists.split, lists.partner, lists.code,
                      store.pos, store.radius, store.gid)
    if pairs.shape[0] == 0:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.sort(pairs, axis=1), axis=0)


class ContactModel:
    """A contact law with its parameters, and the force evaluation over a particle store.

    ``law`` is ``"linear"`` (default) or ``"hertz"``; ``youngs_modulus`` E (Pa), ``stiffness``
    (N/m, linear only; default E·R_eff), ``restitution`` e (1 = elastic); ``friction`` μ and
    ``rolling_friction`` μ_r (0: no tangential force, no torque), ``poisson_ratio`` ν
    (Hertz–Mindlin's tangential stiffness). With μ or μ_r > 0 the spheres rotate
    (:attr:`rotating`) and the contact history is kept (:attr:`history`). Set
    :attr:`recording` to have each pass leave the tangential force on the row's sphere of each
    contact evaluated in its row in :attr:`tangential` (entries × 3, aligned with
    ``lists.partner``).
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
        self.tangential_model = tangential_model(law, friction, poisson_ratio)
        self.rolling_model = rolling_model(rolling_friction)
        self.rotating = friction > 0.0 or rolling_friction > 0.0
        self.recording = False
        self.tangential = np.zeros((0, 3))
        self.history = ContactHistory()  # with rotation: the sites between rebuilds
        self._pairs = (np.zeros((0, 3)), np.zeros((0, 3)))
        self._hit_flags = np.zeros(0, np.uint8)
        self.spinning = np.zeros(0, np.int64)  # rows that touched something in the last pass
        self._spinning_t = np.zeros(0, np.int64)  # the same as row indices
        self.n_spinning = 0

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

    def contact_list(self, store, lists, dt: float, shifts: np.ndarray | None = None, *,
                     spheres: bool = True, tangential: np.ndarray | None = None) -> dict:
        """The touching contacts of the rows of ``lists`` with their forces as the force pass of
        a step of ``dt`` s computed them, for output (not used by the step): ``id`` (K, 2)
        int64 — (gid_i, gid_j), a sphere pair once (lower gid first), a wall's negative gid
        second —, ``ends`` (2K, 3) m — x_i, then x_j (a ghost at its image, ``shifts`` the
        box's table) or the contact point on the wall —, ``force`` (K,) N — the normal force
        magnitude, > 0 repulsive —, ``normal_force`` and ``tangential_force`` (K, 3) N on i
        from j. ``spheres=False``: wall contacts only (the cheap pass of the wall-force
        series).

        ``tangential`` is where a tangential (friction) force enters: an (entries, 3) array,
        aligned with ``lists.partner``, of the tangential force on each row's sphere per list
        entry; None: no friction, zeros."""
        t = np.zeros((0, 3)) if tangential is None else np.ascontiguousarray(tangential, float)
        shifts = NO_SHIFT if shifts is None else shifts
        ids, ends, f_n, fvec, tvec = _contact_list(
            self.parameters, float(dt), shifts, lists.rows, lists.start, lists.split,
            lists.partner, lists.code, store.pos, store.vel, store.radius, store.mass,
            store.gid, store.normal, t, spheres)
        return {"id": ids, "ends": ends, "force": f_n, "normal_force": fvec,
                "tangential_force": tvec}

    def forces(self, store, lists, gravity: np.ndarray, dt: float,
               shifts: np.ndarray | None = None) -> tuple[int, float]:
        """Set ``store.force`` (and with rotation ``store.torque``, advancing the contact
        history by ``dt`` s) of the rows of the neighbour ``lists``
        (:class:`~pdyn.dynamics.neighbours.NeighbourList`, linked when the model rotates;
        ``shifts``: the box's image table, default none but the zero shift); return (contacts,
        elastic energy) of this rank's share. With rotation the history between rebuilds is kept in :attr:`history`; call
        :meth:`ContactHistory.save` before the lists are rebuilt or particles move."""
        dt = float(dt)
        shifts = NO_SHIFT if shifts is None else shifts
        record = None
        if self.recording:
            if self.tangential.shape[0] != lists.partner.shape[0]:
                self.tangential = np.zeros((lists.partner.shape[0], 3))
            else:
                self.tangential[:] = 0.0
            record = self.tangential
        if not self.rotating:
            n, e, _ = _pass(self.parameters, None, None, dt, gravity, shifts, lists.rows,
                            lists.start, lists.start, lists.split, lists.partner,
                            lists.partner, lists.code, lists.imaged, lists.imaged, store.pos, store.vel,
                            store.radius, store.mass, store.gid, store.normal, store.force, None,
                            None, None)
            return n, e
        (old_site, old_spring, n_old), slot = self.history.prepare(store, lists)
        while True:  # the sites' buffers grow with the contacts
            new_site, new_spring = self.history.next_buffer()
            pair_force, pair_torque = self._pair_buffers(new_site.shape[0])
            hits = self._hits(lists.rows.shape[0])
            sites = (old_site, old_spring, n_old, new_site, new_spring, slot, pair_force,
                     pair_torque, store.torque, hits)
            n, e, k = _pass(self.parameters, self.tangential_model, self.rolling_model, dt,
                            gravity, shifts, lists.rows, lists.start, lists.mid, lists.split,
                            lists.partner, lists.mirror, lists.code, lists.imaged,
                            lists.ghostly, store.pos, store.vel,
                            store.radius, store.mass, store.gid, store.normal, store.force,
                            store.omega, sites, record)
            if k <= new_site.shape[0]:
                break
            hits[:] = 0
            self.history.reserve(k)
        if self.spinning.shape[0] < lists.rows.shape[0]:
            n = lists.rows.shape[0] + lists.rows.shape[0] // 4
            self.spinning, self._spinning_t = np.empty(n, np.int64), np.empty(n, np.int64)
        q = _gather(lists.rows, lists.start, lists.mid, lists.mirror, slot, new_site, k,
                    pair_force, pair_torque, hits, store.mass, gravity, store.force,
                    store.torque, self.spinning, self._spinning_t)
        self.n_spinning = q
        self.history.advanced(k, lists)
        return n, e

    def save_history(self, store, lists) -> None:
        """With rotation: the contact history into the particles' records
        (:meth:`ContactHistory.save`)."""
        self.history.save(store, lists, self._spinning_t[:self.n_spinning])

    def spinning_rows(self) -> np.ndarray:
        """Handles of the rows that touched something in the last pass: the only ones whose
        torque may be nonzero (the spin kicks integrate these)."""
        return self.spinning[:self.n_spinning]

    def _hits(self, rows: int) -> np.ndarray:
        """The per-row flags of a pass (zero between passes: :func:`_gather` clears them)."""
        if self._hit_flags.shape[0] < rows:
            self._hit_flags = np.zeros(rows + rows // 4, np.uint8)
        return self._hit_flags

    def _pair_buffers(self, sites: int) -> tuple:
        """The per-site force and torque of a pass (kept between passes, as large as the
        sites' buffers)."""
        pf, pt = self._pairs
        if pf.shape[0] != sites:
            pf, pt = np.empty((sites, 3)), np.empty((sites, 3))
        self._pairs = (pf, pt)
        return self._pairs
