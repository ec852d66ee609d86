"""Coarse-grained fields of one sample ([Goldhirsch2010]; walls as [Weinhart2012]): every
rank deposits its owned spheres and its share of the contacts, each once
(``pdyn.fields.once``; ``pdyn.fields.deposit``), one integer allreduce joins them, and every
rank holds the same sums. Fields (``FIELDS``) from the sums S over a cell of volume V_c:

* volume fraction φ = Σ V_i w_i / V_c (a sphere's volume at its centre);
* density ρ = Σ m_i w_i / V_c (kg/m³);
* velocity u = Σ m_i v_i w_i / Σ m_i w_i (m/s);
* kinetic stress σᵏ = −(Σ m_i v_i ⊗ v_i w_i − ρ V_c u ⊗ u) / V_c (Pa);
* contact stress σᶜ = Σ_c (x_b − x_a) ⊗ F_c ∫₀¹ w(x_a + s (x_b − x_a)) ds / V_c (Pa): every
  contact once, F_c on its first sphere a, x_b the other centre (its periodic image) or the
  wall's contact point — the branch split along the line between them as MercuryCG does;
* stress σ = σᵏ + σᶜ,

w_i the point's normalized kernel weight of the cell. Stresses tension positive (the sign
of ``pdyn.fields.sphere``), 3 × 3 with the branch's index first; in a cell at rest inside
a bed σ_zz is minus the weight above per unit area. Each field sums to its total exactly:
Σ_cells ρ V_c is the mass, Σ_cells σᶜ V_c the contact virial."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ..heap import Scratch
from .deposit import deposit, deposit_segments
from .exact import fixed_scale

#: the raw sums of a sample: volume, mass, momentum (3), m v ⊗ v (9), contact b ⊗ F (9)
VOLUME, MASS, MOMENTUM, MVV, CONTACT, N_SUMS = 0, 1, slice(2, 5), slice(5, 14), \
    slice(14, 23), 23
#: the fields: name -> components
FIELDS = {"volume_fraction": 1, "density": 1, "velocity": 3, "kinetic_stress": 9,
          "contact_stress": 9, "stress": 9}


@njit(**JIT)
def _sphere_values(handles, pos, vel, radius, mass, points, vals, most):
    """:func:`sphere_values` in one pass (numpy's operations, term by term) into ``points``
    (N, 3) and ``vals`` (N, 14), each column's largest magnitude into ``most`` (14,)."""
    volume = 4.0 / 3.0 * np.pi
    for q in range(handles.shape[0]):
        h = handles[q]
        m = mass[h]
        vals[q, 0] = volume * radius[h] ** 3.0
        vals[q, 1] = m
        for a in range(3):
            points[q, a] = pos[h, a]
            vals[q, 2 + a] = m * vel[h, a]
            for b in range(3):
                vals[q, 5 + 3 * a + b] = m * vel[h, a] * vel[h, b]
        for c in range(14):
            most[c] = max(most[c], abs(vals[q, c]))


def sphere_values(store, handles, scratch: Scratch | None = None,
                  most: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(points (N, 3), values (N, 14)): the spheres ``handles``' volume, mass, momentum and
    m v ⊗ v at their centres (in ``scratch``'s arrays if given); each column's largest
    magnitude raised into ``most`` (14,) if given (:func:`fixed_scales`)."""
    scratch = Scratch() if scratch is None else scratch
    handles = np.asarray(handles, np.int64)
    points = scratch.take("points", handles.shape[0], 3)
    vals = scratch.take("spheres", handles.shape[0], 14)
    _sphere_values(handles, store.pos, store.vel, store.radius, store.mass, points, vals,
                   np.zeros(14) if most is None else most)
    return points, vals


@njit(**JIT)
def _branch_moments(ends, normal_force, tangential_force, keep, kept, out, most):
    """The ``keep`` contacts' ends into ``kept`` (2K, 3) and b ⊗ F into ``out`` (K, 9) (b =
    ends[2k + 1] − ends[2k], F the sum of the normal and tangential force), in their order;
    each column's largest magnitude into ``most`` (9,)."""
    q = 0
    for k in range(keep.shape[0]):
        if not keep[k]:
            continue
        for a in range(3):
            kept[2 * q, a] = ends[2 * k, a]
            kept[2 * q + 1, a] = ends[2 * k + 1, a]
            b = ends[2 * k + 1, a] - ends[2 * k, a]
            for c in range(3):
                out[q, 3 * a + c] = b * (normal_force[k, c] + tangential_force[k, c])
                most[3 * a + c] = max(most[3 * a + c], abs(out[q, 3 * a + c]))
        q += 1


def contact_values(network: dict, keep: np.ndarray | None = None,
                   scratch: Scratch | None = None,
                   most: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(segments (K, 2, 3), values (K, 9)): each contact's branch and its b ⊗ F, to be spread
    along the branch (:func:`~pdyn.fields.deposit.deposit_segments`); ``keep`` (bool, one a
    contact of ``network``): those alone (``pdyn.fields.once.once_mask``), None: all (in
    ``scratch``'s arrays if given); each column's largest magnitude raised into ``most`` (9,)
    if given (:func:`fixed_scales`)."""
    scratch = Scratch() if scratch is None else scratch
    ends = np.ascontiguousarray(network["ends"], float)
    if keep is None:
        keep = np.ones(ends.shape[0] // 2, np.bool_)
    count = int(np.count_nonzero(keep))
    kept, values = scratch.take("ends", 2 * count, 3), scratch.take("contacts", count, 9)
    _branch_moments(ends, np.ascontiguousarray(network["normal_force"], float),
                    np.ascontiguousarray(network["tangential_force"], float), keep, kept,
                    values, np.zeros(9) if most is None else most)
    return kept.reshape(-1, 2, 3), values


def fixed_scales(comm, most: np.ndarray, counts: tuple[int, int]) -> np.ndarray:
    """The fixed-point scale of each raw sum (``pdyn.fields.exact.fixed_scale``) from every
    rank's largest magnitude of each (``most``, N_SUMS: :func:`sphere_values`' 14, then
    :func:`contact_values`' 9) and its ``counts`` of spheres and contacts (collective: a
    maximum and an integer sum, the same on any rank count)."""
    most = comm.allreduce_max(np.asarray(most, float))
    count = comm.allreduce_sum(np.array(counts, np.int64))
    return fixed_scale(2.0 * most * np.where(np.arange(N_SUMS) < 14, count[0], count[1]))


def local_sums(grid, kind: str, width: float, spheres: tuple, contacts: tuple,
               scale: np.ndarray) -> np.ndarray:
    """This rank's raw sums (N_SUMS, nx, ny, nz) as integers (times ``scale``) from its
    ``spheres`` (:func:`sphere_values`) and ``contacts`` (:func:`contact_values`)."""
    sums = np.zeros((N_SUMS,) + tuple(int(c) for c in grid.cells), np.int64)
    deposit(grid, kind, width, *spheres, scale[:14], sums[:14])
    ends, values = contacts
    deposit_segments(grid, kind, width, ends.reshape(-1, 3), values, scale[14:], sums[14:])
    return sums


def sample(comm, store, network: dict, grid, kind: str, width: float,
           keep: np.ndarray | None = None, scratch: Scratch | None = None) -> np.ndarray:
    """The raw sums (N_SUMS, nx, ny, nz) of this moment over every rank (the owned spheres
    and the contact network's share of each — the contacts ``keep`` says, None: all), the
    same bits on any rank count: integer sums joined by an integer allreduce (collective);
    ``scratch``: the values' arrays kept between samples (``pdyn.heap.Scratch``)."""
    most = np.zeros(N_SUMS)
    spheres = sphere_values(store, store.owned, scratch, most[:14])
    contacts = contact_values(network, keep, scratch, most[14:])
    scale = fixed_scales(comm, most, (len(spheres[1]), len(contacts[1])))
    sums = local_sums(grid, kind, width, spheres, contacts, scale)
    sums = comm.allreduce_sum(sums) if comm.size > 1 else sums
    return sums / scale[:, None, None, None]


def fields_of(sums: np.ndarray, cell_volume: float) -> dict:
    """The fields (:data:`FIELDS`, each (components, nx, ny, nz)) from raw sums (one sample's
    or a window's mean)."""
    mass = sums[MASS]
    safe = np.where(mass > 0, mass, 1.0)
    u = np.where(mass > 0, sums[MOMENTUM] / safe, 0.0)
    mvv = sums[MVV].reshape((3, 3) + mass.shape)
    kinetic = -(mvv - mass * u[:, None] * u[None, :]).reshape((9,) + mass.shape) / cell_volume
    contact = sums[CONTACT] / cell_volume
    return {"volume_fraction": sums[VOLUME:VOLUME + 1] / cell_volume,
            "density": sums[MASS:MASS + 1] / cell_volume, "velocity": u,
            "kinetic_stress": kinetic, "contact_stress": contact, "stress": kinetic + contact}
