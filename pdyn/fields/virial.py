"""The stress tensor of the whole cell (the box): kinetic plus contact, the virial form
([AllenTildesley2017] §2.4; [Christoffersen1981] for granular contacts), in Pa with the
sign of ``pdyn.fields.sphere`` (tension positive):

    σ = (1 / V) [ −Σ_i m_i (v_i − u) ⊗ (v_i − u) + Σ_c (x_b − x_a) ⊗ F_c ],

V the box's volume, u = Σ m v / Σ m the mean velocity, the second sum over every touching
contact once (``pdyn.fields.once``): F_c the force on its first sphere a, x_b − x_a the
branch from a's centre to the other sphere's centre (its periodic image: the lists' image
position) or to the wall's contact point. In a periodic box this is exactly the virial
pressure tensor; with walls it is the mean stress of the box, and at rest with a floor at
z = 0 its σ_zz V = −M g z_cm (the weight times the centre of mass height).

Exact: every rank reduces its terms to exact expansions (``pdyn.fields.exact``) that rank 0
sums correctly rounded, so the numbers do not depend on the rank count. Pressure
p = −tr σ / 3 (> 0 in compression); deviator q = √(3/2 s:s), s = σ + p I (the von Mises
equivalent stress, q = |σ_1 − σ_3| in a triaxial test)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from .exact import MAX_PARTIALS, exact_total, grow
from .sphere import NAMES, VOIGT, symmetric_six


@njit(**JIT)
def _contact_partials(ends, force):
    """Exact expansions of the nine Σ_c b_a F_b, b = ends[2c + 1] − ends[2c]."""
    out = np.zeros((9, MAX_PARTIALS))
    n = np.zeros(9, np.int64)
    for c in range(force.shape[0]):
        for a in range(3):
            b = ends[2 * c + 1, a] - ends[2 * c, a]
            for e in range(3):
                n[3 * a + e] = grow(out[3 * a + e], n[3 * a + e], b * force[c, e])
    return out, n


@njit(**JIT)
def _kinetic_partials(h, vel, mass, pos, rate, mid):
    """Exact expansions of Σ m v_a v_b (9), Σ m v_a (3) and Σ m over the spheres ``h``;
    ``rate`` ≠ 0 (a sheared box): v the velocity relative to the profile, v_x − rate (z −
    ``mid``)."""
    out = np.zeros((13, MAX_PARTIALS))
    n = np.zeros(13, np.int64)
    v = np.empty(3)
    for i in h:
        for a in range(3):
            v[a] = vel[i, a]
        if rate != 0.0:
            v[0] -= rate * (pos[i, 2] - mid)
        for a in range(3):
            p = mass[i] * v[a]
            for e in range(3):
                n[3 * a + e] = grow(out[3 * a + e], n[3 * a + e], p * v[e])
            n[9 + a] = grow(out[9 + a], n[9 + a], p)
        n[12] = grow(out[12], n[12], mass[i])
    return out, n


def _trimmed(partials: tuple) -> list:
    out, n = partials
    return [out[k, :n[k]].copy() for k in range(len(n))]


def cell_parts(store, network: dict, box=None) -> tuple:
    """This rank's exact expansions of the cell's sums: (contact (9), kinetic (13)) from its
    owned spheres and its share of the contacts, each once over the ranks (``network``: the
    contact network or ``pdyn.fields.once.each_once``). In a sheared ``box`` (Lees–Edwards)
    the kinetic part takes the velocities relative to the linear profile (the branches of
    contacts across the z faces are the images' offset positions already)."""
    force = network["normal_force"] + network["tangential_force"]
    rate = float(box.shear_rate) if box is not None else 0.0
    mid = 0.5 * (float(box.lo[2]) + float(box.hi[2])) if rate else 0.0
    return (_trimmed(_contact_partials(network["ends"], force)),
            _trimmed(_kinetic_partials(store.owned, store.vel, store.mass, store.pos, rate,
                                       mid)))


def cell_stress(parts: list, volume: float) -> tuple[np.ndarray, np.ndarray]:
    """(kinetic, contact) stress tensors (3 × 3, Pa) of the cell of ``volume`` (m³) from every
    rank's :func:`cell_parts`."""
    contact = np.array([exact_total([p[0][k] for p in parts]) for k in range(9)])
    sums = np.array([exact_total([p[1][k] for p in parts]) for k in range(13)])
    mvv, mv, m = sums[:9].reshape(3, 3), sums[9:12], sums[12]
    kinetic = -(mvv - (np.outer(mv, mv) / m if m > 0 else 0.0))
    return kinetic / volume, contact.reshape(3, 3) / volume


def invariants(sigma: np.ndarray) -> tuple[float, float]:
    """(pressure p = −tr σ / 3, deviator q = √(3/2 s:s)) of a 3 × 3 stress tensor (Pa)."""
    p = -float(np.trace(sigma)) / 3.0
    s = 0.5 * (sigma + sigma.T) + p * np.eye(3)
    return p, float(np.sqrt(1.5 * np.sum(s * s)))


#: the thermo columns of the cell's stress
COLUMNS = tuple(f"stress_{k}" for k in NAMES) + ("pressure", "deviator")


def stress_columns(kinetic: np.ndarray, contact: np.ndarray) -> tuple:
    """The thermo columns (:data:`COLUMNS`) of the total (kinetic + contact) stress."""
    total = kinetic + contact
    return tuple(float(x) for x in symmetric_six(total)) + invariants(total)


__all__ = ["COLUMNS", "VOIGT", "cell_parts", "cell_stress", "invariants", "stress_columns"]
