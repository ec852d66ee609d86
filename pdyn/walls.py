"""Wall geometry: half-spaces (planes at any angle) and cylinders, fixed or moving.

A wall is an infinite particle of the store (radius inf, negative gid −1, −2, …, the same on
every rank): ``pos`` is a point of it (a plane's point, a point of a cylinder's axis) and
``normal`` a unit vector (a plane's normal toward the spheres, a cylinder's axis). What the
store does not hold is one row per wall of the *wall table* (:class:`WallSet`), indexed by
−1 − gid: the kind, a cylinder's radius, the wall's velocity and angular velocity, its point
at t = 0 and the extra reach the neighbour lists give it. Geometry is written once
(:func:`wall_contact`), for the contact pass, the neighbour lists and the output.

* ``plane`` (kind 0): gap g = (x − p)·n̂ (distance of a centre from the plane, n̂ toward the
  spheres); overlap δ = r − g; contact normal (sphere → wall) −n̂.
* ``cylinder`` inside (kind 1) / outside (kind 2), axis point p, unit axis â, radius R:
  d = x − p, q = d − (d·â) â, ρ = |q|; inside g = R − ρ, normal q/ρ; outside g = ρ − R,
  normal −q/ρ; δ = r − g. Infinite along its axis.
* ``mesh`` (kind 3): triangles (``pdyn.mesh``); the wall's point is the mesh's translation
  and each triangle within reach is a list entry of its own (:func:`entry_contact`), so
  :func:`wall_contact` gives a mesh no contact.
* Motion ([LAMMPS] ``fix wall/gran`` ``wiggle``/``shear``/``rotate``; mesa_pd's moving
  bodies): a translating wall's point is p(t) = p₀ + v t, computed from the step count
  (t = step·dt), never accumulated, so every rank and a restart get the same bits; a
  cylinder may rotate about its own axis at Ω (rad/s). The wall's surface velocity at the
  contact, u = v + Ω â × R q̂, enters the contact's relative velocity (it drags spheres
  through friction); Ω â is the wall's spin for rolling resistance.

Units: m, m/s, rad/s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._jit import JIT
from .mesh import mesh_contact, pack

PLANE, CYLINDER_INSIDE, CYLINDER_OUTSIDE, MESH = 0, 1, 2, 3
#: columns of the wall table
KIND, RADIUS, VX, VY, VZ, OMEGA, X0, Y0, Z0, REACH = range(10)
WIDTH = 10


@njit(inline="always", **JIT)
def wall_contact(x, y, z, r, pos, normal, table, w, g):
    """Sphere (centre (x, y, z), radius r) against wall handle ``w`` (table row ``g``):
    the unit normal from the sphere to the wall, the overlap δ (m; negative: apart) and the
    wall's surface velocity at the contact (m/s)."""
    kind = table[g, KIND]
    if kind == MESH:  # its triangles are separate entries (:func:`entry_contact`)
        return 0.0, 0.0, 1.0, -np.inf, 0.0, 0.0, 0.0
    if kind == PLANE:
        nx, ny, nz = -normal[w, 0], -normal[w, 1], -normal[w, 2]
        delta = r + ((x - pos[w, 0]) * nx + (y - pos[w, 1]) * ny + (z - pos[w, 2]) * nz)
        return nx, ny, nz, delta, table[g, VX], table[g, VY], table[g, VZ]
    ax, ay, az = normal[w, 0], normal[w, 1], normal[w, 2]
    dx, dy, dz = x - pos[w, 0], y - pos[w, 1], z - pos[w, 2]
    s = dx * ax + dy * ay + dz * az
    qx, qy, qz = dx - s * ax, dy - s * ay, dz - s * az
    rho = math.sqrt(qx * qx + qy * qy + qz * qz)
    if rho > 0.0:
        qx, qy, qz = qx / rho, qy / rho, qz / rho
    else:  # on the axis: any radial direction (a unit vector normal to the axis)
        if abs(ax) < 0.9:
            qx, qy, qz = 0.0, az, -ay
        else:
            qx, qy, qz = -az, 0.0, ax
        n = math.sqrt(qx * qx + qy * qy + qz * qz)
        qx, qy, qz = qx / n, qy / n, qz / n
    big_r = table[g, RADIUS]
    spin = table[g, OMEGA] * big_r  # surface speed Ω R along â × q̂
    ux = table[g, VX] + spin * (ay * qz - az * qy)
    uy = table[g, VY] + spin * (az * qx - ax * qz)
    uz = table[g, VZ] + spin * (ax * qy - ay * qx)
    if kind == CYLINDER_INSIDE:
        return qx, qy, qz, r - (big_r - rho), ux, uy, uz
    return -qx, -qy, -qz, r - (rho - big_r), ux, uy, uz


@njit(inline="always", **JIT)
def entry_contact(x, y, z, r, pos, normal, table, w, g, f, mv, mt, mn, me, mm, ml, mev, mes,
                  met, mvs, mvt):
    """:func:`wall_contact` of a list entry: wall handle ``w`` (table row ``g``), or with
    ``f`` ≥ 0 triangle f of the mesh ``w`` (``pdyn.mesh.mesh_contact``; ``mv`` … ``mvt``
    the run's mesh bundle's first eleven arrays, :func:`mesh_arrays`) — normal, overlap
    (−inf: not a contact to keep) and surface velocity."""
    if f >= 0:
        nx, ny, nz, delta = mesh_contact(x, y, z, r, pos[w, 0], pos[w, 1], pos[w, 2], f, mv, mt,
                                         mn, me, mm, ml, mev, mes, met, mvs, mvt)
        return nx, ny, nz, delta, table[g, VX], table[g, VY], table[g, VZ]
    return wall_contact(x, y, z, r, pos, normal, table, w, g)


@njit(inline="always", **JIT)
def mesh_arrays(mesh):
    """The eleven arrays of a mesh bundle that :func:`entry_contact` takes (take them once per
    kernel, outside its loops)."""
    return (mesh[0], mesh[1], mesh[2], mesh[3], mesh[4], mesh[5], mesh[6], mesh[7], mesh[8],
            mesh[9], mesh[10])


@njit(inline="always", **JIT)
def wall_spin(table, g, normal, w):
    """The wall's angular velocity (rad/s): Ω â for a cylinder, zero for a plane."""
    if table[g, KIND] == PLANE:
        return 0.0, 0.0, 0.0
    om = table[g, OMEGA]
    return om * normal[w, 0], om * normal[w, 1], om * normal[w, 2]


def gaps(pos: np.ndarray, point, normal, kind: int, radius: float) -> np.ndarray:
    """Distance (m) of each centre ``pos`` (N, 3) from one wall's surface, positive on the
    spheres' side (numpy; for checks and pictures)."""
    d = np.asarray(pos, float) - np.asarray(point, float)
    n = np.asarray(normal, float)
    if kind == PLANE:
        return d @ n
    rho = np.linalg.norm(d - np.outer(d @ n, n), axis=1)
    return radius - rho if kind == CYLINDER_INSIDE else rho - radius


class WallSet:
    """The walls of a run: the box's faces (planes, gids −1 … −k, ``Box.walls()`` order)
    followed by the configured walls, with their table (:data:`WIDTH` columns, row −1 − gid).

    ``specs``: dicts with ``kind`` (``PLANE``, ``CYLINDER_INSIDE``, ``CYLINDER_OUTSIDE``),
    ``point``, ``normal`` (plane normal or cylinder axis; normalised here), ``radius``,
    ``velocity``, ``angular_velocity``; a mesh (kind ``MESH``) gives ``mesh`` (a
    :class:`pdyn.mesh.Mesh`) instead of point and normal. :attr:`bundle` packs the meshes
    (``pdyn.mesh.pack``), :attr:`meshes` lists them."""

    def __init__(self, box_points, box_normals, specs=()):
        box_points = np.asarray(box_points, float).reshape(-1, 3)
        box_normals = np.asarray(box_normals, float).reshape(-1, 3)
        self.n_box = box_points.shape[0]
        n = self.n_box + len(specs)
        self.table = np.zeros((n, WIDTH))
        self.normals = np.zeros((n, 3))
        self.table[:self.n_box, X0:Z0 + 1] = box_points
        self.normals[:self.n_box] = box_normals
        self.meshes, rows = [], []
        for k, s in enumerate(specs, self.n_box):
            if s["kind"] == MESH:
                self.meshes.append(s["mesh"])
                rows.append(k)
                s = {**s, "point": (0.0, 0.0, 0.0), "normal": (0.0, 0.0, 1.0),
                     "velocity": tuple(s["mesh"].velocity)}
            a = np.asarray(s["normal"], float)
            self.normals[k] = a / np.linalg.norm(a)
            self.table[k, KIND] = s["kind"]
            self.table[k, RADIUS] = s.get("radius", 0.0)
            self.table[k, VX:VZ + 1] = s.get("velocity", (0.0, 0.0, 0.0))
            self.table[k, OMEGA] = s.get("angular_velocity", 0.0)
            self.table[k, X0:Z0 + 1] = s["point"]
        self.gid = -1 - np.arange(n, dtype=np.int64)
        self.bundle = pack(self.meshes, rows)
        self.speed = float(np.max(np.linalg.norm(self.table[:, VX:VZ + 1], axis=1), initial=0.0))

    def __len__(self) -> int:
        return self.table.shape[0]

    @property
    def translating(self) -> bool:
        return self.speed > 0.0

    def points(self, time: float) -> np.ndarray:
        """Each wall's point at ``time`` (s): p₀ + v t (W, 3)."""
        return self.table[:, X0:Z0 + 1] + self.table[:, VX:VZ + 1] * time

    def set_reach(self, skin: float) -> None:
        """Translating walls move up to ``skin``/2 between rebuilds (:meth:`rebuild_every`):
        the lists take them in within ``skin``/2 more."""
        moving = np.linalg.norm(self.table[:, VX:VZ + 1], axis=1) > 0.0
        self.table[:, REACH] = np.where(moving, 0.5 * skin, 0.0)

    def rebuild_every(self, skin: float, dt: float) -> int:
        """Steps K between forced rebuilds (rebuild at every step that is a multiple of K) so
        that no wall moves more than ``skin``/2 since the last rebuild; 0: none needed."""
        if not self.translating or skin <= 0.0:
            return 0
        return max(1, int(math.floor(0.5 * skin / (self.speed * dt))))

    def names(self) -> list[str]:
        """Column names of the configured walls (``wall<k>``, k = −gid)."""
        return [f"wall{k + 1}" for k in range(self.n_box, len(self))]


__all__ = ["PLANE", "CYLINDER_INSIDE", "CYLINDER_OUTSIDE", "MESH", "WallSet", "wall_contact",
           "entry_contact", "gaps"]
