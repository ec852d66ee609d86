"""Frictional contact with rotation: tangential spring–dashpot with history, Coulomb cap,
optional constant-torque rolling resistance; the force-and-torque pass over the neighbour lists.

Chosen once in Python (``ContactModel``) when ``friction`` μ > 0 or ``rolling_friction``
μ_r > 0; the frictionless pass (``pdyn.dynamics.contact._accumulate``) is untouched otherwise.
Same order and side rule as that pass: the force and torque on i are the sums, in list order
(partners in ascending global id, then walls), of what each contact does to i, computed from
i's side; the normal force comes from the same law (``pdyn.dynamics.laws``).

Per contact, seen from i, with n the unit normal from i to j (for a wall n = −wall normal,
the wall having v = ω = 0 and infinite radius and mass):

* contact-point velocity of i relative to j ([CundallStrack1979]; the lever arms are the radii,
  as in LAMMPS ``gran/*/history`` [LAMMPSgranular]):
  v_c = v_i − v_j + (r_i ω_i + r_j ω_j) × n,  v_t = v_c − (v_c·n) n;
* the tangential spring s (m, i's copy of the contact's history) is first rotated into the
  current tangent plane and rescaled to its former length, s ← (s − (s·n) n)·|s|/|s − (s·n) n|
  ([LAMMPSgranular]), then s ← s + v_t dt; F_t = −k_t s − c_t v_t;
* Coulomb cap ([CundallStrack1979]): if |F_t| > μ F_n, F_t ← μ F_n F_t/|F_t| and the spring is
  reset to what gives the capped force, s = −(F_t + c_t v_t)/k_t (LAMMPS' rule);
* torque on i: (r_i n) × F_t; rolling resistance, constant-torque model ("model A" of
  [Ai2011]): M_r = −μ_r R_eff F_n ω_r/|ω_r| with ω_r the part of ω_i − ω_j normal to n
  (a constant torque can chatter about ω_r = 0 at rest: [Ai2011] §2.1);
* stiffness and damping of the tangential spring:
  linear law: k_t = 2/7 k_n, c_t = c_n/2 (LAMMPS ``gran/hooke/history`` defaults for
  ``Kt`` and ``gamma_t`` [LAMMPSgranular]);
  Hertz: Mindlin's no-slip stiffness k_t = 8 G* √(R_eff δ) ([MindlinDeresiewicz1953];
  [Tsuji1992]), with G* = E* (1 − ν)/(2(2 − ν)) for two spheres of one material
  (G = E/(2(1 + ν)), 1/E* = 2(1 − ν²)/E, 1/G* = 2(2 − ν)/G, [ChungOoi2011] §2), and
  c_t = 2 ζ √(m_eff k_t), the normal law's damping ratio on the tangential stiffness.

Both sides of a pair evaluate the same formulas on the same inputs (n, v_t and s change sign
exactly, everything else is symmetric in i and j), so their springs stay exact negatives —
except for a pair seen through a periodic image, whose shifted positions round differently on
each side —, and each side is computed from the same bits on whichever rank holds it (ghosts
carry the owner's bits), so N-rank runs reproduce the 1-rank run bit for bit.

History has two homes (as LAMMPS' internal ``fix neigh/history``,
``src/fix_neigh_history.cpp`` of [Thompson2022]): between rebuilds of the lists the pass
keeps it per *list entry*, compact — the entries that touch, in list order, with their
springs (:class:`ContactHistory`) — and merges last step's with this step's as both stream
by in the same order, so a step reads and writes only the contacts' springs, contiguously.
At a rebuild (before migration and reordering move particles) it is saved into the
particle's own slots (``history_count`` / ``history_key`` / ``history_spring`` of
``pdyn.particles.FIELDS``: slot k < count of i holds the key of a touching partner and i's
spring for that contact, in list order), which reordering, migration, rebalancing and
checkpoints carry as any field; the next pass loads the entries of the new lists from them.
Slots kept every step instead (the earlier layout: 512 bytes a particle, read and written in
place) made the pass miss the cache on every particle with a contact: on the 97 336-sphere
gas with ~2·10⁴ contacts it cost 11 ms a step against 4 ms without friction.

Units: N, N·m, m, m/s, rad/s, kg, s.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT, JIT_IEEE
from .laws import Hertz, Linear, normal_force

#: key of a wall partner with gid g < 0 (walls sort after spheres, in wall order −1, −2, ...);
#: a sphere partner with gid g ≥ 0 has key g + 1; key 0 marks an empty slot
WALL_KEY_BASE = 1 << 62


class HistoryOverflowError(RuntimeError):
    """A sphere touches more partners than it has contact-history slots (one line)."""


class Friction(NamedTuple):
    """Tangential and rolling parameters: Coulomb coefficient ``mu``, rolling coefficient
    ``mu_roll`` (dimensionless), ``kt_ratio`` = k_t / (the law's normal stiffness)."""

    mu: float
    mu_roll: float
    kt_ratio: float


def friction_parameters(law: str, friction: float, rolling: float, poisson: float) -> Friction:
    """The :class:`Friction` record: k_t/k_n = 2/7 for the linear law, 2(1 − ν)/(2 − ν)
    (= 8 G*/(2 E*), Mindlin's over Hertz's tangent stiffness) for Hertz."""
    ratio = 2.0 * (1.0 - poisson) / (2.0 - poisson) if law == "hertz" else 2.0 / 7.0
    return Friction(float(friction), float(rolling), ratio)


@njit(**JIT)
def linear_tangential(law, fr, delta, r_eff, m_eff):
    """(k_t, c_t) of the linear law: 2/7 k_n and half the normal dashpot."""
    k = law.k if law.k > 0.0 else law.E * r_eff
    return fr.kt_ratio * k, (law.zeta * math.sqrt(m_eff * k) if law.zeta > 0.0 else 0.0)


@njit(**JIT)
def hertz_tangential(law, fr, delta, r_eff, m_eff):
    """(k_t, c_t) of Hertz–Mindlin: 8 G* √(R δ) and 2 ζ √(m k_t)."""
    kt = fr.kt_ratio * 2.0 * law.E * math.sqrt(r_eff * delta)
    return kt, (2.0 * law.zeta * math.sqrt(m_eff * kt) if law.zeta > 0.0 else 0.0)


#: parameter record of the normal law → its tangential coefficients
TANGENTIAL = {Linear: linear_tangential, Hertz: hertz_tangential}


def tangential_coefficients(law, fr, delta, r_eff, m_eff):
    """(k_t (N/m), c_t (N·s/m)) of one contact under the normal ``law`` record."""
    return TANGENTIAL[type(law)](law, fr, delta, r_eff, m_eff)


@overload(tangential_coefficients, jit_options=JIT)
def _tangential_coefficients(law, fr, delta, r_eff, m_eff):
    """Inside numba: resolve the law from the record's type at compile time."""
    kernel = TANGENTIAL[law.instance_class]

    def impl(law, fr, delta, r_eff, m_eff):
        return kernel(law, fr, delta, r_eff, m_eff)

    return impl


@njit(inline="always", **JIT)
def _tangential(law, fr, sx, sy, sz, nx, ny, nz, vx, vy, vz, f_n, delta, r_eff, m_eff, dt,
                slid):
    """One contact's tangential step from i's side: old spring s, normal n (i → j),
    contact-point velocity v_c of i relative to j, normal force F_n ≥ 0, whether the contact
    ``slid`` (hit the Coulomb cap) last step. Returns the new spring, the tangential force on i
    (six scalars) and whether it slides now.

    ``slid`` changes how, not what, is computed: a contact that slid last step gets the cap
    without a branch (both outcomes computed, one selected), one that stuck gets the branch.
    In the gas a third of the contacts slide, which ones looks random to the processor's branch
    predictor, and the branch comes at the end of the contact's longest chain of dependent
    operations, so each wrong guess stalled the pass; from one step to the next 96 % of the
    contacts keep their state (the 97 336-sphere gas after 300 steps: 1 424 changes in 36 478
    evaluations). The results are the same bits either way."""
    v_n = vx * nx + vy * ny + vz * nz
    tx, ty, tz = vx - v_n * nx, vy - v_n * ny, vz - v_n * nz
    s_n = sx * nx + sy * ny + sz * nz
    rx, ry, rz = sx - s_n * nx, sy - s_n * ny, sz - s_n * nz
    if s_n != 0.0:  # rescale to the former length (nothing to do for a new spring)
        r2 = rx * rx + ry * ry + rz * rz
        if r2 > 0.0:
            scale = math.sqrt((sx * sx + sy * sy + sz * sz) / r2)
            rx, ry, rz = rx * scale, ry * scale, rz * scale
    sx, sy, sz = rx + tx * dt, ry + ty * dt, rz + tz * dt
    kt, ct = tangential_coefficients(law, fr, delta, r_eff, m_eff)
    fx = -kt * sx - ct * tx
    fy = -kt * sy - ct * ty
    fz = -kt * sz - ct * tz
    f2 = fx * fx + fy * fy + fz * fz
    cap = fr.mu * f_n
    sliding = f2 > cap * cap
    if slid:  # both outcomes, then a select: × 1.0 and the old spring where it sticks
        q = cap / math.sqrt(f2)
        q = q if sliding else 1.0
        fx, fy, fz = q * fx, q * fy, q * fz
        # k_t = 0 (Hertz at δ = 0) gives inf or NaN here under the pass's numpy error model,
        # replaced just below
        rx, ry, rz = -(fx + ct * tx) / kt, -(fy + ct * ty) / kt, -(fz + ct * tz) / kt
        if not kt > 0.0:
            rx = ry = rz = 0.0
        sx = rx if sliding else sx
        sy = ry if sliding else sy
        sz = rz if sliding else sz
    elif sliding:
        q = cap / math.sqrt(f2)
        fx, fy, fz = q * fx, q * fy, q * fz
        if kt > 0.0:
            sx, sy, sz = -(fx + ct * tx) / kt, -(fy + ct * ty) / kt, -(fz + ct * tz) / kt
        else:
            sx, sy, sz = 0.0, 0.0, 0.0
    return sx, sy, sz, fx, fy, fz, sliding


@njit(**JIT)
def _rolling(fr, nx, ny, nz, wx, wy, wz, f_n, r_eff):
    """Constant rolling-resistance torque on i ([Ai2011] model A) for the relative spin
    ω_i − ω_j = (wx, wy, wz): −μ_r R_eff F_n ω_r/|ω_r|, ω_r its part normal to n."""
    w_n = wx * nx + wy * ny + wz * nz
    wx, wy, wz = wx - w_n * nx, wy - w_n * ny, wz - w_n * nz
    w = math.sqrt(wx * wx + wy * wy + wz * wz)
    if w == 0.0:
        return 0.0, 0.0, 0.0
    m = -fr.mu_roll * r_eff * f_n / w
    return m * wx, m * wy, m * wz


@njit(**JIT)
def partner_key(g):
    """History key of a partner with global id ``g`` (ascending in list order)."""
    return g + 1 if g >= 0 else WALL_KEY_BASE - g


@njit(inline="always", **JIT)
def _contact(law, fr, nx, ny, nz, delta, r_eff, m_eff, ri, rj, dvx, dvy, dvz, wix, wiy, wiz,
             wjx, wjy, wjz, sx, sy, sz, dt, slid):
    """One touching contact seen from i (normal n from i to j, overlap δ, v_i − v_j, spins
    ω_i, ω_j, lever arms r_i, r_j, old spring s, whether it slid last step): returns the normal
    force magnitude on i (repulsive > 0), its elastic energy, the new spring, the tangential
    force on i and the torque on i (tangential and rolling), as scalars, and whether it
    slides."""
    # contact-point velocity of i relative to j: dv + (r_i ω_i + r_j ω_j) × n
    wx = ri * wix + rj * wjx
    wy = ri * wiy + rj * wjy
    wz = ri * wiz + rj * wjz
    vcx = dvx + (wy * nz - wz * ny)
    vcy = dvy + (wz * nx - wx * nz)
    vcz = dvz + (wx * ny - wy * nx)
    f, e = normal_force(law, delta, dvx * nx + dvy * ny + dvz * nz, r_eff, m_eff, dt)
    f_n = f if f > 0.0 else 0.0
    sx, sy, sz, tx, ty, tz, sliding = _tangential(law, fr, sx, sy, sz, nx, ny, nz, vcx, vcy,
                                                  vcz, f_n, delta, r_eff, m_eff, dt, slid)
    mx = ri * (ny * tz - nz * ty)
    my = ri * (nz * tx - nx * tz)
    mz = ri * (nx * ty - ny * tx)
    if fr.mu_roll > 0.0:
        rx, ry, rz = _rolling(fr, nx, ny, nz, wix - wjx, wiy - wjy, wiz - wjz, f_n, r_eff)
        mx += rx
        my += ry
        mz += rz
    return f, e, sx, sy, sz, tx, ty, tz, mx, my, mz, sliding


# unsigned handles and list positions and numpy's error model (divisors are positive on valid
# input), as the frictionless pass (``pdyn._jit.JIT_IEEE``; unsigned positions: 0.96-0.97x)
@njit(**JIT_IEEE)
def _accumulate_frictional(law, fr, rows, start, split, partner, pos, vel, omega, rad, mass,
                           gid, normal, gravity, dt, force, torque, old_entry, old_spring,
                           old_slid, n_old, new_entry, new_spring, new_slid, record,
                           all_torques, torqued, spin_kick):
    """Set ``force`` and ``torque`` of each row's particle and advance the contact history
    (module docstring): ``old_entry[:n_old]`` / ``old_spring`` / ``old_slid`` are last step's
    touching list entries (ascending), springs and whether each slid (:func:`_tangential`: a
    hint for how to compute, not what), ``new_entry`` / ``new_spring`` / ``new_slid`` receive
    this step's.
    ``record`` (list entries × 3, or None: numba compiles the pass without it) receives the
    tangential force on the row's particle per list entry (0 where not touching). ``torqued``
    (rows) receives the rows' particles that touch something, in row order: the only ones whose
    torque may be nonzero; ``spin_kick`` (rows × 3) their spin half-kick, dt/2 · T / I with
    I = 2/5 m r² (the increment ``pdyn.dynamics.integrate`` adds, computed here while m, r
    and T are at hand: the kicks then read two compact arrays instead of four scattered ones).
    The torque of the others is written as zero only if ``all_torques`` or they touched
    something last step (``old_entry``): a row without either already holds zero — the last
    pass over these lists wrote it —, and most rows of a loose packing are such rows.
    Returns (contacts of this rank's share, elastic normal energy of its share — as the
    frictionless pass —, the most touching entries of one row — a running maximum, which
    measured 0.96–0.97× the pass against testing each row against the history's slots —,
    touching entries written, torqued rows written)."""
    recording = record is not None
    half_dt = 0.5 * dt
    energy = 0.0
    n_contacts = 0
    most = 0
    p = 0
    k = 0
    q = 0
    for t in range(rows.shape[0]):
        i = np.uint64(rows[t])
        k_row = k
        while p < n_old and old_entry[p] < start[t]:
            p += 1
        p_row = p
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ri, mi, gi = rad[i], mass[i], gid[i]
        # read with every row (a stream in memory order), not at each contact (a cache miss)
        vix, viy, viz = vel[i, 0], vel[i, 1], vel[i, 2]
        wix, wiy, wiz = omega[i, 0], omega[i, 1], omega[i, 2]
        fx = fy = fz = 0.0
        mx = my = mz = 0.0
        if recording:
            for u in range(start[t], start[t + 1]):
                record[u, 0] = record[u, 1] = record[u, 2] = 0.0
        u_split = np.uint64(split[t])
        for u in range(np.uint64(start[t]), np.uint64(start[t + 1])):
            j = np.uint64(partner[u])
            if u < u_split:
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                rj = rad[j]
                s = ri + rj
                d2 = dx * dx + dy * dy + dz * dz
                if d2 > s * s:  # the shared exact predicate
                    continue
                dist = math.sqrt(d2)
                if dist > 0.0:
                    nx, ny, nz = dx / dist, dy / dist, dz / dist
                else:  # coincident centres: a fixed axis, antisymmetric in the pair
                    nx, ny, nz = (1.0 if gi < gid[j] else -1.0), 0.0, 0.0
                delta = max(s - dist, 0.0)
                mj = mass[j]
                r_eff, m_eff = ri * rj / s, mi * mj / (mi + mj)
                dvx, dvy, dvz = vix - vel[j, 0], viy - vel[j, 1], viz - vel[j, 2]
                wjx, wjy, wjz = omega[j, 0], omega[j, 1], omega[j, 2]
            else:  # a wall: half-space, n = −(inward normal), no motion, infinite radius
                nx, ny, nz = -normal[j, 0], -normal[j, 1], -normal[j, 2]
                delta = ri + ((xi - pos[j, 0]) * nx + (yi - pos[j, 1]) * ny
                              + (zi - pos[j, 2]) * nz)
                if delta < 0.0:
                    continue
                rj, r_eff, m_eff = 0.0, ri, mi
                dvx, dvy, dvz = vix, viy, viz
                wjx = wjy = wjz = 0.0
            while p < n_old and np.uint64(old_entry[p]) < u:  # ended contacts: springs go
                p += 1
            if p < n_old and np.uint64(old_entry[p]) == u:
                sx, sy, sz = old_spring[p, 0], old_spring[p, 1], old_spring[p, 2]
                slid = old_slid[p] != 0
            else:
                sx = sy = sz = 0.0
                slid = False
            f, e, sx, sy, sz, tx, ty, tz, cx, cy, cz, sliding = _contact(
                law, fr, nx, ny, nz, delta, r_eff, m_eff, ri, rj, dvx, dvy, dvz,
                wix, wiy, wiz, wjx, wjy, wjz, sx, sy, sz, dt, slid)
            new_entry[k] = u
            new_spring[k, 0] = sx
            new_spring[k, 1] = sy
            new_spring[k, 2] = sz
            new_slid[k] = sliding
            k += 1
            if recording:
                record[u, 0] = tx
                record[u, 1] = ty
                record[u, 2] = tz
            fx += tx - f * nx  # normal force on i: −F n
            fy += ty - f * ny
            fz += tz - f * nz
            mx += cx
            my += cy
            mz += cz
            if u >= u_split:
                energy += e
                n_contacts += 1
            else:
                energy += 0.5 * e
                if gi < gid[j]:
                    n_contacts += 1
        most = max(most, k - k_row)
        force[i, 0] = fx + mi * gravity[0]
        force[i, 1] = fy + mi * gravity[1]
        force[i, 2] = fz + mi * gravity[2]
        while p < n_old and old_entry[p] < start[t + 1]:  # the row's ended contacts
            p += 1
        if k > k_row:
            torque[i, 0] = mx
            torque[i, 1] = my
            torque[i, 2] = mz
            torqued[q] = i
            c = half_dt / (0.4 * mi * ri * ri)  # the kick's own expression: the same bits
            spin_kick[q, 0] = c * mx
            spin_kick[q, 1] = c * my
            spin_kick[q, 2] = c * mz
            q += 1
        elif all_torques or p > p_row:
            torque[i, 0] = torque[i, 1] = torque[i, 2] = 0.0
    return n_contacts, energy, most, k, q


@njit(**JIT)
def _save_slots(rows, start, partner, gid, entry, spring, n, hcount, hkey, hspring):
    """Write the touching list entries ``entry[:n]`` (ascending) and their springs into the
    history slots of the rows' particles, in list order (at most the slots there are);
    emptied slots are zeroed (checkpoints compare bits)."""
    slots = hkey.shape[1]
    q = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        c = 0
        while q < n and entry[q] < start[t + 1]:
            if c < slots:
                hkey[i, c] = partner_key(gid[partner[entry[q]]])
                hspring[i, c, 0] = spring[q, 0]
                hspring[i, c, 1] = spring[q, 1]
                hspring[i, c, 2] = spring[q, 2]
                c += 1
            q += 1
        for r in range(c, hcount[i]):
            hkey[i, r] = 0
            hspring[i, r, 0] = 0.0
            hspring[i, r, 1] = 0.0
            hspring[i, r, 2] = 0.0
        if hcount[i] != c:
            hcount[i] = c


@njit(**JIT)
def _load_slots(rows, start, partner, gid, hcount, hkey, hspring, entry, spring):
    """The list entries of the rows whose partner has a slot in the row's particle's history
    (keys ascend in list order, so one merge per row), with those springs, into ``entry`` /
    ``spring``; returns how many."""
    k = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        n_old = hcount[i]
        q = 0
        for u in range(start[t], start[t + 1]):
            if q >= n_old:
                break
            key = partner_key(gid[partner[u]])
            while q < n_old and hkey[i, q] < key:
                q += 1
            if q < n_old and hkey[i, q] == key:
                entry[k] = u
                spring[k, 0] = hspring[i, q, 0]
                spring[k, 1] = hspring[i, q, 1]
                spring[k, 2] = hspring[i, q, 2]
                k += 1
                q += 1
    return k


def _history_buffers(n: int) -> tuple:
    """One buffer of the per-entry history: ``n`` list entries (int64), springs (m, (n, 3))
    and whether each contact slid (uint8)."""
    return np.zeros(n, np.int64), np.zeros((n, 3)), np.zeros(n, np.uint8)


class ContactHistory:
    """The contact history between rebuilds, per touching list entry (module docstring):
    ``entry`` (ascending list-entry indices of the lists it follows), ``spring`` (m, the
    row particle's spring of each) and whether each contact slid (a hint for the next pass,
    :func:`_tangential`; not saved), ``count`` of them; two buffers, last step's and this
    step's. :meth:`save` writes it into the particles' slots, a pass on lists it does not
    follow loads it from them. It also keeps which rows' particles touched something in the
    last pass (:meth:`spin_rows`): the others' torque is zero, so the spin kicks skip them;
    and the pass's spin half-kick of each of those (:meth:`spin_kicks`)."""

    def __init__(self):
        self._buffers = [_history_buffers(0)] * 2
        self.count = 0
        self._follows = None  # (the lists, their build number) the entries refer to
        self.saved = True  # the slots hold what the entries hold
        self._torqued = np.zeros(0, np.int64)  # rows' particles that touched in the last pass
        self._n_torqued = 0
        self._torqued_in = None  # (the lists, their build number) of that pass
        self._spin_kick = np.zeros((0, 3))  # dt/2 · T / I of those rows (rad/s)
        self._half_dt = 0.0  # the dt/2 (s) of those increments

    @property
    def entry(self) -> np.ndarray:
        return self._buffers[0][0][:self.count]

    @property
    def spring(self) -> np.ndarray:
        return self._buffers[0][1][:self.count]

    @property
    def slid(self) -> np.ndarray:
        """Whether each contact of :attr:`entry` slid (hit the Coulomb cap) in the last pass."""
        return self._buffers[0][2][:self.count]

    def _sized(self, n: int) -> None:
        """Both buffers hold at least ``n`` entries (grown with slack, never shrunk)."""
        if self._buffers[0][0].shape[0] < n or self._buffers[1][0].shape[0] < n:
            m = max(64, n + n // 4)
            self._buffers = [_history_buffers(m) for _ in range(2)]
            self.count = 0

    def reset(self) -> None:
        """Forget the entries: the next pass loads the history from the particles' slots (a
        restart, which puts the checkpoint's slots back after its first pass)."""
        self.count, self._follows, self.saved = 0, None, True
        self._torqued_in = None

    def save(self, store, lists) -> None:
        """Write the history into the slots of the particles of ``lists``' rows (before the
        lists are rebuilt or particles move in memory; idempotent)."""
        if self.saved:
            return
        _save_slots(lists.rows, lists.start, lists.partner, store.gid, self.entry,
                    self.spring, self.count, store.history_count, store.history_key,
                    store.history_spring)
        self.saved = True

    def prepare(self, store, lists) -> tuple:
        """Last step's buffer (entries, springs, slid, count) for a pass over ``lists``, the buffer
        it writes, the buffers of its torqued rows and of their spin half-kicks, and whether it
        must write every row's torque (``lists`` are new: loaded from the slots, and rows
        without history may hold any torque)."""
        fresh = self._follows != (lists, lists.builds)
        if fresh:
            if not self.saved:
                raise RuntimeError("contact history: the neighbour lists were rebuilt before "
                                   "the history was saved into the particles (save first)")
            entries = lists.partner.shape[0]
            self._sized(entries)
            e, s, slid = self._buffers[0]
            self.count = _load_slots(lists.rows, lists.start, lists.partner, store.gid,
                                     store.history_count, store.history_key,
                                     store.history_spring, e, s)
            slid[:self.count] = 0  # not kept in the slots: a hint only
            self._follows = (lists, lists.builds)
        if self._torqued.shape[0] < lists.rows.shape[0]:
            n = lists.rows.shape[0] + lists.rows.shape[0] // 4
            self._torqued, self._spin_kick = np.empty(n, np.int64), np.empty((n, 3))
        self._torqued_in = None
        return (self._buffers[0] + (self.count,), self._buffers[1], self._torqued,
                self._spin_kick, fresh)

    def advanced(self, count: int, lists, torqued: int, half_dt: float) -> None:
        """The pass over ``lists`` wrote ``count`` entries into the second buffer (it becomes
        the history) and ``torqued`` rows, with their spin half-kicks for a half step of
        ``half_dt`` s, into the torqued buffers."""
        self._buffers.reverse()
        self.count = count
        self.saved = False
        self._n_torqued, self._torqued_in = torqued, (lists, lists.builds)
        self._half_dt = half_dt

    def spin_rows(self, lists) -> np.ndarray:
        """The rows of ``lists`` whose spin a kick must integrate: those whose particle touched
        something in the last pass over these lists (the others have zero torque), all rows
        if no pass over them has run since (a restart, a rebuild)."""
        if self._torqued_in != (lists, lists.builds):
            return lists.rows
        return self._torqued[:self._n_torqued]

    def spin_kicks(self, lists, half_dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`spin_rows`, their spin half-kicks dt/2 · T / I (rad/s) as the last pass
        computed them for ``half_dt``, or an empty array where it did not: the kick then
        computes them from the torques)."""
        if self._torqued_in != (lists, lists.builds) or self._half_dt != half_dt:
            return self.spin_rows(lists), _NO_KICKS
        return self._torqued[:self._n_torqued], self._spin_kick[:self._n_torqued]


def frictional_forces(law, fr, store, lists, gravity, dt, record, history):
    """Forces and torques of the rows of ``lists`` with the contact ``history``
    (:class:`ContactHistory`, see :func:`_accumulate_frictional`); returns (contacts, elastic
    energy, overflow: the touching partners beyond the history's slots of the fullest row) and
    raises nothing (the caller reduces ``overflow``)."""
    (old_e, old_s, old_slid, n_old), (new_e, new_s, new_slid), torqued, kicks, fresh = \
        history.prepare(store, lists)
    n, energy, most, k, q = _accumulate_frictional(
        law, fr, lists.rows, lists.start, lists.split, lists.partner, store.pos, store.vel,
        store.omega, store.radius, store.mass, store.gid, store.normal, gravity, float(dt),
        store.force, store.torque, old_e, old_s, old_slid, n_old, new_e, new_s, new_slid,
        record, fresh, torqued, kicks)
    history.advanced(k, lists, q, 0.5 * float(dt))
    return n, energy, max(most - store.history_key.shape[1], 0)


_NO_KICKS = np.zeros((0, 3))
