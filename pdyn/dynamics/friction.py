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
exactly, everything else is symmetric in i and j), so their springs stay exact negatives and
ghosts carrying the owner's bits make N-rank runs reproduce the 1-rank run bit for bit.

History lives with the particle (``history_count`` / ``history_key`` / ``history_spring`` of
``pdyn.particles.FIELDS``): slot k < count of i holds the key of a touching partner and i's
spring for that contact, in list order (a dense count, so a row without contacts reads 8 bytes
of history). The pass merge-joins a row's slots with
its list each step and writes back the contacts that touch now, so rebuilds of the lists need
nothing, and reordering, migration and checkpoints carry the slots as any field.

Units: N, N·m, m, m/s, rad/s, kg, s.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT
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


@njit(**JIT)
def _tangential(law, fr, sx, sy, sz, nx, ny, nz, vx, vy, vz, f_n, delta, r_eff, m_eff, dt):
    """One contact's tangential step from i's side: old spring s, normal n (i → j),
    contact-point velocity v_c of i relative to j, normal force F_n ≥ 0. Returns the new spring
    and the tangential force on i (six scalars)."""
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
    if f2 > cap * cap:
        q = cap / math.sqrt(f2)
        fx, fy, fz = q * fx, q * fy, q * fz
        if kt > 0.0:
            sx, sy, sz = -(fx + ct * tx) / kt, -(fy + ct * ty) / kt, -(fz + ct * tz) / kt
        else:
            sx, sy, sz = 0.0, 0.0, 0.0
    return sx, sy, sz, fx, fy, fz


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


@njit(**JIT)
def _contact(law, fr, nx, ny, nz, delta, r_eff, m_eff, ri, rj, dvx, dvy, dvz, wix, wiy, wiz,
             wjx, wjy, wjz, sx, sy, sz, dt):
    """One touching contact seen from i (normal n from i to j, overlap δ, v_i − v_j, spins
    ω_i, ω_j, lever arms r_i, r_j, old spring s): returns the normal force magnitude on i
    (repulsive > 0), its elastic energy, the new spring, the tangential force on i and the
    torque on i (tangential and rolling), as scalars."""
    # contact-point velocity of i relative to j: dv + (r_i ω_i + r_j ω_j) × n
    wx = ri * wix + rj * wjx
    wy = ri * wiy + rj * wjy
    wz = ri * wiz + rj * wjz
    vcx = dvx + (wy * nz - wz * ny)
    vcy = dvy + (wz * nx - wx * nz)
    vcz = dvz + (wx * ny - wy * nx)
    f, e = normal_force(law, delta, dvx * nx + dvy * ny + dvz * nz, r_eff, m_eff, dt)
    f_n = f if f > 0.0 else 0.0
    sx, sy, sz, tx, ty, tz = _tangential(law, fr, sx, sy, sz, nx, ny, nz, vcx, vcy, vcz, f_n,
                                         delta, r_eff, m_eff, dt)
    mx = ri * (ny * tz - nz * ty)
    my = ri * (nz * tx - nx * tz)
    mz = ri * (nx * ty - ny * tx)
    if fr.mu_roll > 0.0:
        rx, ry, rz = _rolling(fr, nx, ny, nz, wix - wjx, wiy - wjy, wiz - wjz, f_n, r_eff)
        mx += rx
        my += ry
        mz += rz
    return f, e, sx, sy, sz, tx, ty, tz, mx, my, mz


@njit(**JIT)
def _accumulate_frictional(law, fr, rows, start, split, partner, pos, vel, omega, rad, mass,
                           gid, normal, gravity, dt, force, torque, hcount, hkey, hspring,
                           record):
    """Set ``force`` and ``torque`` of each row's particle and advance its contact history
    (see the module docstring). ``record`` (list entries × 3, or empty) receives the
    tangential force on the row's particle per list entry (0 where not touching). Returns
    (contacts of this rank's share, elastic normal energy of its share — as the frictionless
    pass —, contacts that found no free history slot)."""
    slots = hkey.shape[1]
    old_key = np.zeros(slots + 1, np.int64)
    old_spring = np.zeros((slots, 3))
    recording = record.shape[0] > 0
    energy = 0.0
    n_contacts = 0
    overflow = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        n_old = hcount[i]
        for q in range(n_old):
            old_key[q] = hkey[i, q]
            old_spring[q, 0] = hspring[i, q, 0]
            old_spring[q, 1] = hspring[i, q, 1]
            old_spring[q, 2] = hspring[i, q, 2]
        old_key[n_old] = -1  # sentinel: below every key, ends the merge
        p = 0
        n_new = 0
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ri, mi, gi = rad[i], mass[i], gid[i]
        wix, wiy, wiz = omega[i, 0], omega[i, 1], omega[i, 2]
        fx = fy = fz = 0.0
        mx = my = mz = 0.0
        if recording:
            for u in range(start[t], start[t + 1]):
                record[u, 0] = record[u, 1] = record[u, 2] = 0.0
        for u in range(start[t], start[t + 1]):
            j = partner[u]
            if u < split[t]:
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
                dvx, dvy, dvz = vel[i, 0] - vel[j, 0], vel[i, 1] - vel[j, 1], vel[i, 2] - vel[j, 2]
                wjx, wjy, wjz = omega[j, 0], omega[j, 1], omega[j, 2]
            else:  # a wall: half-space, n = −(inward normal), no motion, infinite radius
                nx, ny, nz = -normal[j, 0], -normal[j, 1], -normal[j, 2]
                delta = ri + ((xi - pos[j, 0]) * nx + (yi - pos[j, 1]) * ny
                              + (zi - pos[j, 2]) * nz)
                if delta < 0.0:
                    continue
                rj, r_eff, m_eff = 0.0, ri, mi
                dvx, dvy, dvz = vel[i, 0], vel[i, 1], vel[i, 2]
                wjx = wjy = wjz = 0.0
            key = partner_key(gid[j])
            while old_key[p] >= 0 and old_key[p] < key:
                p += 1
            if old_key[p] == key:
                sx, sy, sz = old_spring[p, 0], old_spring[p, 1], old_spring[p, 2]
            else:
                sx = sy = sz = 0.0
            f, e, sx, sy, sz, tx, ty, tz, cx, cy, cz = _contact(
                law, fr, nx, ny, nz, delta, r_eff, m_eff, ri, rj, dvx, dvy, dvz, wix, wiy, wiz,
                wjx, wjy, wjz, sx, sy, sz, dt)
            if n_new < slots:
                hkey[i, n_new] = key
                hspring[i, n_new, 0] = sx
                hspring[i, n_new, 1] = sy
                hspring[i, n_new, 2] = sz
                n_new += 1
            else:
                overflow += 1
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
            if u >= split[t]:
                energy += e
                n_contacts += 1
            else:
                energy += 0.5 * e
                if gi < gid[j]:
                    n_contacts += 1
        if n_new != n_old:
            hcount[i] = n_new
        for q in range(n_new, n_old):  # emptied slots hold zeros (checkpoints compare bits)
            hkey[i, q] = 0
            hspring[i, q, 0] = 0.0
            hspring[i, q, 1] = 0.0
            hspring[i, q, 2] = 0.0
        force[i, 0] = fx + mi * gravity[0]
        force[i, 1] = fy + mi * gravity[1]
        force[i, 2] = fz + mi * gravity[2]
        torque[i, 0] = mx
        torque[i, 1] = my
        torque[i, 2] = mz
    return n_contacts, energy, overflow


def frictional_forces(law, fr, store, lists, gravity, dt, record):
    """Forces and torques of the rows of ``lists`` with history (see
    :func:`_accumulate_frictional`); raises nothing (the caller reduces ``overflow``)."""
    return _accumulate_frictional(
        law, fr, lists.rows, lists.start, lists.split, lists.partner, store.pos, store.vel,
        store.omega, store.radius, store.mass, store.gid, store.normal, gravity, float(dt),
        store.force, store.torque, store.history_count, store.history_key,
        store.history_spring, record)
