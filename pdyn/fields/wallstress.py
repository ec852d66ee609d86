"""Wall pressure maps: the normal and shear stress the spheres exert on each patch of a wall
(``pdyn.fields.wallpatches``), as LIGGGHTS' ``mesh/surface/stress`` [Kloss2012] gives per
triangle. Per contact c of a sphere with a wall, F_c the contact force on the sphere (normal +
tangential, N) and n̂_c the wall's unit normal at the contact point toward the sphere (from
the contact point to the centre):

    p_c = F_c · n̂_c                 (the push on the wall along its normal, > 0 pressing),
    τ_c = −(F_c − p_c n̂_c)           (the tangential force on the wall),

and per patch P of area A_P, over the samples s of a window (N of them):

    σ_n = (1/N) Σ_s Σ_{c ∈ P} p_c / A_P   (Pa, the pressure on the wall),
    τ   = (1/N) Σ_s Σ_{c ∈ P} τ_c / A_P   (Pa, a vector in the wall's tangent plane: the shear
                                         traction on the wall; its length is the shear stress).

A contact counts on the patch holding its contact point. **Exact**: each sample's sums per
patch are integer fixed point (``pdyn.fields.exact``), joined by an integer allreduce, so the
same on any rank count; the samples are added in step order on every rank."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from .exact import fixed_scale
from .wallpatches import locate

#: the sums per patch: pressure, then the three components of the shear force
N_SUMS = 4


def contact_values(contacts: dict) -> np.ndarray:
    """(K, 4): p_c and τ_c (N) of each wall contact of ``contacts`` (``ContactPass``'s
    wall contacts: ``ends`` the centre and the contact point, forces on the sphere)."""
    force = contacts["normal_force"] + contacts["tangential_force"]
    out_normal = contacts["ends"][0::2] - contacts["ends"][1::2]
    length = np.linalg.norm(out_normal, axis=1)
    n = out_normal / np.where(length > 0.0, length, 1.0)[:, None]
    p = np.einsum("ij,ij->i", force, n)
    vals = np.empty((len(p), N_SUMS))
    vals[:, 0] = p
    vals[:, 1:] = -(force - p[:, None] * n)
    return vals


@njit(**JIT)
def _add_fixed(index, values, scale, out):
    """out[index[k], c] += round(values[k, c] · scale[c]) for every k with index[k] ≥ 0."""
    for k in range(index.shape[0]):
        if index[k] < 0:
            continue
        for c in range(values.shape[1]):
            out[index[k], c] += np.int64(np.rint(values[k, c] * scale[c]))


def sample(comm, walls: list, contacts: dict) -> np.ndarray:
    """The sums (P, 4) of this moment's wall contacts over every rank per patch of ``walls``
    (``wall_patches``; ``contacts`` this rank's wall contacts with ``facet``, each
    triangle's number in the mesh bundle or −1), the same bits on any rank count
    (collective: a maximum and two integer sums)."""
    total = sum(w.count for w in walls)
    vals = contact_values(contacts)
    index = locate(walls, -1 - contacts["id"][:, 1], contacts["ends"][1::2], contacts["facet"])
    most = comm.allreduce_max(np.abs(vals).max(axis=0) if len(vals) else np.zeros(N_SUMS))
    count = comm.allreduce_sum(np.array([len(vals)], np.int64))[0]
    scale = fixed_scale(2.0 * most * count)
    sums = np.zeros((total, N_SUMS), np.int64)
    _add_fixed(index, np.ascontiguousarray(vals), scale, sums)
    if comm.size > 1:
        sums = comm.allreduce_sum(sums)
    return sums / scale


def stresses(mean: np.ndarray, area: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(normal stress (P,), shear traction (P, 3)) in Pa from a window's mean sums (P, 4) and
    the patches' areas (P,) m² (a patch of no area: zero)."""
    inv = np.where(area > 0.0, 1.0 / np.where(area > 0.0, area, 1.0), 0.0)
    return mean[:, 0] * inv, mean[:, 1:] * inv[:, None]


__all__ = ["N_SUMS", "contact_values", "sample", "stresses"]
