"""A triangle-mesh wall as a model: its triangles welded, with their edges, normals and
adjacency, in its own frame; its motion (translation, a turn about an axis through its point)
and its frame at a time; its grid; its surface for pictures and its distance for checks.

A mesh is one wall of the store (kind ``MESH`` in the wall table, ``pdyn.walls``): its point
is the mesh's point translated, p + v t (from the step count, as every wall's), its triangles
held here in the mesh's own frame (``pdyn.mesh.frame``).

Units: m, s, rad (after the ``scale`` applied by the caller).
"""

from __future__ import annotations

import copy

import numpy as np

from .bundle import pack
from .frame import rotation
from .geometry import triangle_records
from .grid import TriangleGrid, bin_triangles, distances
from .place import placed

#: a mesh's arrays (:meth:`Mesh.arrays`): its geometry, what a placement holds
#: (``pdyn.mesh.place``); ``grid_*`` its grid's fields
ARRAYS = ("verts", "tri", "normal", "edge_v", "tedge", "elen", "tm", "estart", "etri",
          "vstart", "vtri", "records", "grid_lo", "grid_h", "grid_dims", "grid_start",
          "grid_tri")


class MeshError(ValueError):
    """Bad mesh geometry; ``str()`` is one line."""


def _csr(keys: np.ndarray, n: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (start, values sorted by key then value) of ascending ``values`` grouped by
    ``keys`` < n (one stable sort of the keys)."""
    order = np.argsort(keys, kind="stable")
    start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=start[1:])
    return start, values[order].astype(np.int64)


def weld(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct points of ``points`` (P, 3) in ascending lexicographic order (x, then y,
    then z; equal coordinates weld, 0.0 and −0.0 too, the first in ``points`` kept) and each
    point's index among them: what ``np.unique(points, axis=0, return_inverse=True)`` gives,
    by one lexicographic sort of the columns instead of a sort of row records."""
    order = np.lexsort((points[:, 2], points[:, 1], points[:, 0]))
    ranked = points[order]
    new = np.ones(len(ranked), bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    inverse = np.empty(len(ranked), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ranked[new], inverse


def _unique_pairs(lo: np.ndarray, hi: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs (lo, hi) of integers in [0, n) in ascending order (E, 2) and each
    pair's index among them: ``np.unique`` of the rows, by a sort of the keys lo n + hi."""
    keys, inverse = np.unique(lo * np.int64(n) + hi, return_inverse=True)
    return np.column_stack((keys // n, keys % n)), inverse.reshape(-1).astype(np.int64)


def _motion(velocity, angular_velocity, axis, point) -> tuple:
    """A mesh's motion checked: (velocity, Ω, unit axis, point) as floats; MeshError names
    the bad one."""
    v = np.asarray(velocity, float).reshape(3)
    p = np.asarray(point, float).reshape(3)
    a = np.asarray(axis, float).reshape(3)
    om = float(angular_velocity)
    for name, x in (("velocity", v), ("angular_velocity", om), ("axis", a), ("point", p)):
        if not np.isfinite(x).all():
            raise MeshError(f"{name} {np.asarray(x).tolist()}: must be finite")
    norm = float(np.linalg.norm(a))
    if not norm > 0.0:
        raise MeshError(f"axis {a.tolist()}: must not be zero")
    return v, om, a / norm, p


def corners_of(vertices, triangles) -> np.ndarray:
    """The corners (T, 3, 3) of triangles (T, 3) of indices into ``vertices`` (V, 3);
    :class:`MeshError` names a bad shape or index."""
    v = np.asarray(vertices, float)
    t = np.asarray(triangles)
    if v.ndim != 2 or v.shape[1] != 3:
        raise MeshError(f"vertices: expected shape (V, 3), got {list(v.shape)}")
    if t.ndim != 2 or t.shape[1] != 3 or not np.issubdtype(t.dtype, np.integer):
        raise MeshError(f"triangles: expected integers of shape (T, 3), got "
                        f"{list(t.shape)} {t.dtype}")
    outside = (t < 0) | (t >= v.shape[0])
    if outside.any():
        raise MeshError(f"triangles: vertex index {int(t[outside][0])} outside 0 … "
                        f"{v.shape[0] - 1}")
    return v[t]


class Mesh:
    """One triangle mesh in its own frame: corners (T, 3, 3), m, welded by exact coordinates.
    Its motion: ``velocity`` (m/s) and a turn at ``angular_velocity`` Ω (rad/s, right-handed)
    about ``axis`` through ``point`` (m, in its frame): a corner X is at p + v t + R(Ω t)
    (X − p) at time t (:meth:`surface`). Refuses (:class:`MeshError`) an empty mesh, NaN or
    inf coordinates, zero-area triangles, a zero axis."""

    def __init__(self, corners, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0,
                 axis=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0)):
        corners = np.asarray(corners, float)
        if corners.ndim != 3 or corners.shape[1:] != (3, 3) or corners.shape[0] == 0:
            raise MeshError(f"expected triangles (T, 3, 3) with T > 0, got shape "
                            f"{list(corners.shape)}")
        if not np.isfinite(corners).all():
            f = int(np.flatnonzero(~np.isfinite(corners).all(axis=(1, 2)))[0])
            raise MeshError(f"triangle {f} has a NaN or infinite coordinate "
                            f"({corners[f].tolist()})")
        cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        area2 = np.linalg.norm(cross, axis=1)
        side = np.max(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2), axis=1)
        bad = ~(area2 > 1e-12 * side * side)
        if bad.any():
            f = int(np.flatnonzero(bad)[0])
            raise MeshError(f"triangle {f} has zero area (corners {corners[f].tolist()}); "
                            f"{int(bad.sum())} such triangle(s)")
        self.velocity, self.angular_velocity, self.axis, self.point = _motion(
            velocity, angular_velocity, axis, point)
        self.verts, inverse = weld(corners.reshape(-1, 3))
        self.tri = inverse.reshape(-1, 3)
        self.normal = cross / area2[:, None]
        t = self.tri.shape[0]
        a, b = self.tri, np.roll(self.tri, -1, axis=1)  # edge k: corner k to corner k + 1
        self.edge_v, eid = _unique_pairs(np.minimum(a, b).ravel(), np.maximum(a, b).ravel(),
                                         len(self.verts))
        self.tedge = eid.reshape(t, 3)
        d = self.verts[b] - self.verts[a]
        self.elen = np.linalg.norm(self.verts[self.edge_v[:, 1]] - self.verts[self.edge_v[:, 0]],
                                   axis=1)
        m = np.cross(d, self.normal[:, None, :])  # outward in-plane edge normals
        # (the corners are right-handed about the normal: d × n points out of the triangle)
        self.tm = m / np.linalg.norm(m, axis=2, keepdims=True)
        self.estart, self.etri = _csr(self.tedge.ravel(), len(self.edge_v),
                                      np.repeat(np.arange(t), 3))
        self.vstart, self.vtri = _csr(self.tri.ravel(), len(self.verts),
                                      np.repeat(np.arange(t), 3))
        self.grid = bin_triangles(self.verts[self.tri])  # (``pdyn.mesh.grid``)
        self._cell = np.array([self.grid.h])  # its cell size as an array (:meth:`arrays`)
        self.records = triangle_records(self)  # (``pdyn.mesh.geometry``; the kernels')
        self._alone: list = []  # the mesh packed alone, for :meth:`gaps` (at its first call)

    @classmethod
    def from_arrays(cls, vertices, triangles, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0,
                    axis=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0)) -> "Mesh":
        """A mesh from vertices (V, 3) and triangles (T, 3) of vertex indices; its motion as
        :class:`Mesh` takes it."""
        return cls(corners_of(vertices, triangles), velocity, angular_velocity, axis, point)

    @classmethod
    def placed(cls, key, corners) -> "Mesh":
        """The mesh of triangles ``corners()`` (T, 3, 3; called only where the mesh is built),
        at rest, its arrays built by the current placement under ``key`` (``pdyn.mesh.place``:
        on one rank of a node, shared by its ranks) — the same arrays, bit for bit, as
        ``Mesh(corners())``'s."""
        return cls.of_arrays(placed(key, lambda: cls(corners()).arrays()))

    def arrays(self) -> dict:
        """Its geometry as :data:`ARRAYS` (numpy arrays; the grid's cell size as (1,))."""
        g = self.grid
        out = {k: getattr(self, k) for k in ARRAYS if not k.startswith("grid_")}
        return {**out, "grid_lo": g.lo, "grid_h": self._cell, "grid_dims": g.dims,
                "grid_start": g.start, "grid_tri": g.tri}

    @classmethod
    def of_arrays(cls, arrays: dict) -> "Mesh":
        """A mesh at rest of :meth:`arrays` (not copied, not checked again)."""
        out = cls.__new__(cls)
        for k in ARRAYS:
            if not k.startswith("grid_"):
                setattr(out, k, arrays[k])
        out._cell = arrays["grid_h"]
        out.grid = TriangleGrid(arrays["grid_lo"], float(out._cell[0]), arrays["grid_dims"],
                                arrays["grid_start"], arrays["grid_tri"])
        out.velocity, out.angular_velocity, out.axis, out.point = _motion(
            (0.0, 0.0, 0.0), 0.0, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0))
        out._alone = []
        return out

    def __len__(self) -> int:
        return self.tri.shape[0]

    def moved(self, velocity=(0.0, 0.0, 0.0), angular_velocity=0.0, axis=(0.0, 0.0, 1.0),
              point=(0.0, 0.0, 0.0)) -> "Mesh":
        """The same triangles with this motion (a shallow copy: the geometry is shared)."""
        out = copy.copy(self)
        out.velocity, out.angular_velocity, out.axis, out.point = _motion(
            velocity, angular_velocity, axis, point)
        return out

    @property
    def turning(self) -> bool:
        return self.angular_velocity != 0.0

    @property
    def framed(self) -> bool:
        """Does its frame differ from the world's by more than its translation (it turns, or
        its point is not its frame's origin)?"""
        return self.turning or bool(np.any(self.point != 0.0))

    def frame(self, time: float) -> np.ndarray:
        """The 12 numbers of its frame at ``time`` (s) that the kernels take
        (``pdyn.mesh.frame.in_frame``): A = R(−Ω t) row-major, then p; a point x of the world is
        X = p + A (x − (p + v t)) in the mesh's frame."""
        return np.concatenate((rotation(self.axis, -self.angular_velocity * float(time))
                               .ravel(), self.point))

    def radius(self) -> float:
        """The largest distance (m) of a corner from its axis (through its point)."""
        d = self.verts - self.point
        return float(np.max(np.linalg.norm(d - np.outer(d @ self.axis, self.axis), axis=1)))

    def surface(self, time: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Vertices (V, 3) at ``time`` (s: turned by Ω t about its axis through its point,
        translated by velocity · time) and triangles (T, 3) of vertex indices — what a
        picture of the mesh draws."""
        shift = self.velocity * float(time)
        if not self.turning:
            return self.verts + shift, self.tri.copy()
        turn = rotation(self.axis, self.angular_velocity * float(time))
        return self.point + shift + (self.verts - self.point) @ turn.T, self.tri.copy()

    def gaps(self, pos: np.ndarray, time: float = 0.0) -> np.ndarray:
        """Distance (m) of each centre ``pos`` (N, 3) from the surface at ``time`` (numpy
        entry; for checks)."""
        if not self._alone:  # (a list: its moved copies share it with the geometry)
            self._alone.append(pack([self.moved()]))
        bundle = self._alone[0]
        pos = np.asarray(pos, float) - self.velocity * float(time)
        if self.turning:
            pos = self.point + (pos - self.point) @ rotation(
                self.axis, -self.angular_velocity * float(time)).T
        return distances(np.ascontiguousarray(pos), bundle)
