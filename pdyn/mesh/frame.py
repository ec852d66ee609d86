"""A mesh's frame: its triangles stay in their own frame, and a sphere centre is taken there.

A mesh may turn at Ω about a unit axis a through its point p: a corner X is at
p + v t + R(Ω t)(X − p) (R: Rodrigues' rotation, :func:`rotation`). A centre x is taken into
the frame, X = p + R(−Ω t)(x − p − v t) (:func:`in_frame`, :func:`to_body`, from the frames
at the step's time, :func:`frames`, computed from t alone), the contact found there and its
normal turned back (:func:`to_world`); ``pdyn.walls.entry_contact`` adds the surface velocity
Ω a × (c − p − v t). Without frames (no mesh turns or has a point: ``frame`` None) the
kernels' ``frame is None`` tests are pruned at compile time and a centre is x − v t.

Units: m, s, rad.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT


def rotation(axis, angle: float) -> np.ndarray:
    """The matrix (3, 3) of a turn by ``angle`` (rad, right-handed) about the unit ``axis``
    (Rodrigues: R = cos θ I + sin θ [a]× + (1 − cos θ) a aᵀ)."""
    a = np.asarray(axis, float)
    c, s = math.cos(angle), math.sin(angle)
    cross = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return c * np.eye(3) + s * cross + (1.0 - c) * np.outer(a, a)


@njit(inline="always", **JIT)
def in_frame(x, y, z, ox, oy, oz, frame, m):
    """A point (x, y, z) in the frame of mesh m, whose wall point is (ox, oy, oz):
    X = p + A (x − o) with A (row-major) and p ``frame[m]`` (:func:`frames`), or x − o
    without frames (``frame`` None: pruned at compile time)."""
    if frame is None:
        return x - ox, y - oy, z - oz
    dx, dy, dz = x - ox, y - oy, z - oz
    return (frame[m, 9] + (frame[m, 0] * dx + frame[m, 1] * dy + frame[m, 2] * dz),
            frame[m, 10] + (frame[m, 3] * dx + frame[m, 4] * dy + frame[m, 5] * dz),
            frame[m, 11] + (frame[m, 6] * dx + frame[m, 7] * dy + frame[m, 8] * dz))


@njit(inline="always", **JIT)
def to_body(x, y, z, ox, oy, oz, frame, tmesh, f):
    """:func:`in_frame` for the mesh of triangle f (``tmesh[f]``, read only with frames)."""
    if frame is None:
        return x - ox, y - oy, z - oz
    return in_frame(x, y, z, ox, oy, oz, frame, tmesh[f])


@njit(inline="always", **JIT)
def to_world(nx, ny, nz, frame, tmesh, f):
    """A direction in the frame of the mesh of triangle f back in the world: Aᵀ n (n itself
    without frames)."""
    if frame is None:
        return nx, ny, nz
    m = tmesh[f]
    return (frame[m, 0] * nx + frame[m, 3] * ny + frame[m, 6] * nz,
            frame[m, 1] * nx + frame[m, 4] * ny + frame[m, 7] * nz,
            frame[m, 2] * nx + frame[m, 5] * ny + frame[m, 8] * nz)


def frames(meshes, time: float, out: np.ndarray | None = None) -> np.ndarray:
    """Each mesh's frame at ``time`` (s) (M, 12; :meth:`pdyn.mesh.Mesh.frame`), into ``out``
    when given (the bundle's, updated in place at each step): computed from the time alone,
    so every rank and a restart get the same bits."""
    out = np.empty((len(meshes), 12)) if out is None else out
    for m, mesh in enumerate(meshes):
        out[m] = mesh.frame(time)
    return out
