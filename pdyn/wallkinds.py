"""The wall kinds: one spec per kind (:class:`WallKind`, table :data:`KINDS`) — its
``[[walls]]`` fields and their validation, the row of the wall table it makes, the distance
of centres from it (the initial-state checks), its triangles (snapshots), whether glued
spheres may ride on it — and the wall table's layout (kind codes, columns).

The config (``pdyn.config.WallConfig``), the wall table (``pdyn.walls.WallSet``), the
initial-state checks (``pdyn.checks``), the snapshots' wall surfaces (``pdyn.io.wallmesh``)
and glued spheres (``pdyn.dynamics.glued``) read a kind's facts here; its contact geometry is
one inlined numba function per kind in ``pdyn.walls``, dispatched on the kind code inside
``wall_contact`` (the contact kernels call that and need one compiled function). Adding a
kind: a code, its columns, a spec here, its geometry there (ARCHITECTURE.md, "Add a wall
kind"). Geometry and equations of each kind: ``docs/walls.md``. Units: m, m/s, rad/s; cone
angles are given by radii at two axial positions, as LAMMPS' ``region cone``
([LAMMPSregion]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .mesh import Mesh, MeshError, corners_of
from .stl import StlError, read_stl
from .values import BadValue, array, flag, number, vector
from .wallshapes import (axial_extent, meridian, plane_fan, revolved, segment_distance)

PLANE, CYLINDER_INSIDE, CYLINDER_OUTSIDE, MESH, CONE = 0, 1, 2, 3, 4
#: columns of the wall table: every kind's (KIND … REACH), a cylinder's (RADIUS, HALF; RATE
#: its radius' rate dR/dt, m/s, a servo's), a cone's (RADIUS, RADIUS_HI at axial positions
#: LO, HI; its segment's parameter in [T0, T1])
(KIND, RADIUS, VX, VY, VZ, OMEGA, X0, Y0, Z0, REACH, HALF, LO, HI, RADIUS_HI, T0, T1,
 RATE) = range(17)
WIDTH = 17


class Missing(BadValue):
    """A required field not given: ``str()`` is ``<name>: <why>`` on one line."""

    def __init__(self, name: str, why: str):
        super().__init__(name, None, why)
        self.args = (f"{name}: {why}",)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class WallKind:
    """What one kind of wall is, apart from its contact geometry (``pdyn.walls``).

    ``name``: its ``[[walls]]`` type; ``fields``: its config fields besides ``type`` and
    ``velocity``; ``explains``: other kinds' fields its ``check`` refuses with a message of
    its own. ``check(values) -> values``: its fields (a dict) validated and normalised
    (:class:`BadValue`, one line); ``spec(values) -> dict``: the wall as ``WallSet`` takes it
    (``kind`` code, ``point``, ``normal``, …). ``columns(spec) -> dict``: its own columns of
    the wall table; ``gaps(pos, point, axis, row, mesh)``: each centre's distance (m) from
    it, positive on the spheres' side; ``draw(point, axis, row, lo, hi, time, mesh)``: its
    triangles at ``time`` in the box [lo, hi] (vertices, int64 triangles facing the spheres);
    ``glued``: glued spheres may ride on it (their motion is the wall's rigid motion).
    ``approach(row, axis, mesh)``: the fastest any point of its surface moves along the
    surface's normal (m/s; motion within the surface — a plane sliding in itself, a cylinder
    or a cone turning about its axis — moves it toward no sphere): what the start-up refuses
    and the overlap watch bounds (``pdyn.checks``). ``axis`` (``normal``) as stored, not
    necessarily of unit length."""

    name: str
    codes: tuple
    fields: tuple
    check: Callable
    spec: Callable
    columns: Callable
    gaps: Callable
    draw: Callable
    glued: bool
    approach: Callable
    explains: tuple = ()


# --- shared checks -----------------------------------------------------------------------

def _oriented(values: dict, name: str, kind: str, other: str | None = None) -> tuple:
    """An analytic wall's ``point`` and its non-zero vector ``name`` (a plane's normal, an
    axis), both required, and its angular velocity checked; ``other``: the other kinds'
    vector, refused with a hint."""
    if values["point"] is None:
        raise Missing("walls.point", "required in [[walls]]")
    point = vector("walls.point", values["point"])
    number("walls.angular_velocity", values["angular_velocity"])
    flag("walls.allow_fast", values["allow_fast"])
    if other is not None and values[other] is not None:
        raise BadValue(f"walls.{other}", values[other], f"not a field of a {kind} (give "
                       f"{name})")
    if values[name] is None:
        raise Missing(f"walls.{name}", f"required for a {kind}")
    d = vector(f"walls.{name}", values[name])
    if not math.hypot(*d) > 0.0:
        raise BadValue(f"walls.{name}", list(d), "must not be zero")
    return point, d


def _moving(values: dict, kind: int, normal: str) -> dict:
    """The spec entries every analytic wall has: kind code, point, normal (or axis), motion."""
    return {"kind": kind, "point": values["point"], "normal": values[normal],
            "velocity": values["velocity"],
            "angular_velocity": float(values["angular_velocity"]),
            "allow_fast": bool(values["allow_fast"])}


def _speed(row) -> float:
    """The wall's translation speed |v| (m/s)."""
    return float(np.linalg.norm(row[VX:VZ + 1]))


# --- plane -------------------------------------------------------------------------------

def _check_plane(v: dict) -> dict:
    point, normal = _oriented(v, "normal", "plane", "axis")
    for name, default in (("radius", None), ("inside", True), ("length", None)):
        if v[name] != default:
            raise BadValue(f"walls.{name}", v[name], "only for cylinders")
    return {"point": point, "normal": normal}


def _plane_gaps(pos, point, normal, row, mesh):
    return (np.asarray(pos, float) - np.asarray(point, float)) @ np.asarray(normal, float)


def _draw_plane(point, normal, row, lo, hi, time, mesh):
    return plane_fan(point, normal, lo, hi)


def _plane_approach(row, normal, mesh) -> float:
    """|v·n̂|: sliding in itself or turning about its normal moves it toward no sphere."""
    n = np.asarray(normal, float)
    return abs(float(row[VX:VZ + 1] @ n)) / float(np.linalg.norm(n))


# --- cylinder ----------------------------------------------------------------------------

def _check_cylinder(v: dict) -> dict:
    point, axis = _oriented(v, "axis", "cylinder", "normal")
    if v["radius"] is None:
        raise Missing("walls.radius", "required for a cylinder")
    number("walls.radius", v["radius"], above=0)
    flag("walls.inside", v["inside"])
    if v["length"] is not None:
        number("walls.length", v["length"], above=0)
        if not v["inside"]:
            raise BadValue("walls.inside", v["inside"], "a finite cylinder is an open "
                           "tube whose both faces act (omit inside)")
    return {"point": point, "axis": axis}


def _cylinder_spec(v: dict) -> dict:
    return {**_moving(v, CYLINDER_INSIDE if v["inside"] else CYLINDER_OUTSIDE, "axis"),
            "radius": float(v["radius"]),
            "length": math.inf if v["length"] is None else float(v["length"])}


def _cylinder_columns(s: dict) -> dict:
    return {RADIUS: s.get("radius", 0.0), HALF: 0.5 * s.get("length", math.inf)}


def _cylinder_gaps(pos, point, axis, row, mesh):
    """Inside R − ρ, outside ρ − R; a finite tube: the distance from its shell or rims."""
    s, rho = meridian(pos, point, axis)
    radius, half = row[RADIUS], row[HALF]
    if half < math.inf:
        return np.hypot(np.maximum(np.abs(s) - half, 0.0), radius - rho)
    return radius - rho if row[KIND] == CYLINDER_INSIDE else rho - radius


def _cylinder_approach(row, axis, mesh) -> float:
    """Infinite: the velocity across the axis (along it and turning about it, the surface
    stays in place); a finite tube: |v| (its rims move along the axis)."""
    v = row[VX:VZ + 1]
    if row[HALF] < math.inf:
        return _speed(row)
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return float(np.linalg.norm(v - (v @ a) * a))


def _draw_cylinder(point, axis, row, lo, hi, time, mesh):
    """A tube over its length, or (infinite) over the box's extent along the axis, its
    tessellation turned by Ω t; facing the axis unless the spheres are outside."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    half = row[HALF]
    s0, s1 = (-half, half) if half < math.inf else axial_extent(point, axis, lo, hi)
    verts, tris = revolved(point, axis, s0, row[RADIUS], s1, row[RADIUS], row[OMEGA] * time)
    return verts, (tris[:, ::-1] if row[KIND] == CYLINDER_INSIDE else tris)


# --- cone --------------------------------------------------------------------------------

def _check_cone(v: dict) -> dict:
    """A cone's (or frustum's) fields: radii ``radius_lo``, ``radius_hi`` >= 0 (not both 0)
    at axial positions ``lo`` < ``hi`` from its point, as LAMMPS' ``region cone``."""
    point, axis = _oriented(v, "axis", "cone")
    out = {"point": point, "axis": axis}
    for name in ("lo", "hi", "radius_lo", "radius_hi"):
        if v[name] is None:
            raise Missing(f"walls.{name}", "required for a cone")
        out[name] = number(f"walls.{name}", v[name], lo=0 if name.startswith("radius") else None)
    if not out["hi"] > out["lo"]:
        raise BadValue("walls.hi", v["hi"], f"must be > lo = {out['lo']:g}")
    if out["radius_lo"] == 0.0 and out["radius_hi"] == 0.0:
        raise BadValue("walls.radius_hi", v["radius_hi"], "radius_lo and radius_hi must not "
                       "both be 0")
    flag("walls.infinite", v["infinite"])
    return out


def _cone_spec(v: dict) -> dict:
    return {**_moving(v, CONE, "axis"), "lo": v["lo"], "hi": v["hi"],
            "radius_lo": v["radius_lo"], "radius_hi": v["radius_hi"],
            "infinite": bool(v["infinite"])}


def _cone_columns(s: dict) -> dict:
    """Radii at lo and hi, and the bounds of its generating segment's parameter t (0 at lo,
    1 at hi): [0, 1], or, infinite, from its apex (radius 0) on without end."""
    r0, r1 = s["radius_lo"], s["radius_hi"]
    t0, t1 = 0.0, 1.0
    if s.get("infinite", False):
        t0, t1 = -math.inf, math.inf
        if r1 > r0:
            t0 = -r0 / (r1 - r0)
        elif r1 < r0:
            t1 = r0 / (r0 - r1)
    return {RADIUS: r0, RADIUS_HI: r1, LO: s["lo"], HI: s["hi"], T0: t0, T1: t1}


def _cone_gaps(pos, point, axis, row, mesh):
    """The distance from its generating segment in the meridian half-plane (>= 0)."""
    s, rho = meridian(pos, point, axis)
    return segment_distance(s, rho, (row[LO], row[RADIUS]), (row[HI], row[RADIUS_HI]),
                            (row[T0], row[T1]))


def _draw_cone(point, axis, row, lo, hi, time, mesh):
    """Its surface between lo and hi, or (infinite) from its apex over the box's extent along
    the axis, turned by Ω t, facing the axis (no triangle of zero area at an apex); nothing
    when it misses the box."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    s0, s1 = row[LO], row[HI]
    r0, dr = row[RADIUS], row[RADIUS_HI] - row[RADIUS]
    a, b = row[T0], row[T1]
    if not (a == 0.0 and b == 1.0):  # infinite: clip to the box's extent along the axis
        e0, e1 = axial_extent(point, axis, lo, hi)
        a, b = max(a, (e0 - s0) / (s1 - s0)), min(b, (e1 - s0) / (s1 - s0))
        if not a < b:
            return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    ra, rb = r0 + a * dr, r0 + b * dr
    verts, tris = revolved(point, axis, s0 + a * (s1 - s0), ra, s0 + b * (s1 - s0), rb,
                           row[OMEGA] * time)
    half = len(tris) // 2  # (triangles with two corners on the first ring, then the second)
    keep = np.r_[np.full(half, ra > 0.0), np.full(half, rb > 0.0)]  # none at an apex
    return verts, tris[keep, ::-1]


# --- mesh --------------------------------------------------------------------------------

def _stl_mesh(path: str, stamp: tuple, scale: float) -> Mesh:
    """The mesh of an STL file (``stamp``: its size and time, so a changed file is read
    again), scaled; built by the current placement (``pdyn.mesh.place``: once per node in a
    run); errors as :class:`BadValue` of ``walls.file``."""

    def corners():
        try:
            return read_stl(path) * scale
        except StlError as exc:
            raise BadValue("walls.file", path, str(exc)) from None

    try:
        return Mesh.placed(("stl", path, stamp, scale), corners)
    except MeshError as exc:
        raise BadValue("walls.file", path, str(exc)) from None


def _array_mesh(vertices: tuple, triangles: tuple, scale: float) -> Mesh:
    """The mesh of vertex and triangle arrays (as nested tuples), scaled; built by the
    current placement."""
    v = array("walls.vertices", vertices, (3,))
    try:
        t = np.asarray(triangles)
    except ValueError:  # ragged
        t = np.zeros(0)
    if t.dtype.kind not in "iu" or t.ndim != 2 or t.shape[1] != 3:
        raise BadValue("walls.triangles", triangles, "expected integers of shape (T, 3)")
    try:
        return Mesh.placed(("arrays", vertices, triangles, scale),
                           lambda: corners_of(v * scale, t))
    except MeshError as exc:
        raise BadValue("walls.triangles", triangles, str(exc)) from None


def _nested(value):
    """Lists and arrays as nested tuples (hashable, comparable)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_nested(x) for x in (value.tolist() if isinstance(value, np.ndarray)
                                           else value))
    return value


def load_mesh(values: dict) -> Mesh:
    """A mesh wall's geometry (``pdyn.mesh.Mesh``, in m; read once and cached) from its
    ``file`` or ``vertices`` and ``triangles``, times ``scale``."""
    if values["file"] is not None:
        try:
            st = Path(values["file"]).stat()
        except OSError as exc:
            raise BadValue("walls.file", values["file"], f"cannot read ({exc.strerror})") \
                from None
        return _stl_mesh(str(Path(values["file"]).resolve()), (st.st_size, st.st_mtime_ns),
                         float(values["scale"]))
    return _array_mesh(values["vertices"], values["triangles"], float(values["scale"]))


def _check_mesh(v: dict) -> dict:
    """A mesh's source (a file, or vertices and triangles), scale and motion; reads it."""
    number("walls.scale", v["scale"], above=0)
    number("walls.scale", v["scale"], lo=1e-9, hi=1e9, note="file units to m")
    number("walls.angular_velocity", v["angular_velocity"])
    flag("walls.allow_fast", v["allow_fast"])
    out = {}
    if v["point"] is not None:
        out["point"] = vector("walls.point", v["point"])
    if v["axis"] is not None:
        a = vector("walls.axis", v["axis"])
        if not math.hypot(*a) > 0.0:
            raise BadValue("walls.axis", list(a), "must not be zero")
        out["axis"] = a
    elif v["angular_velocity"] != 0.0:
        raise Missing("walls.axis", "required for a turning mesh (angular_velocity)")
    given = v["file"] is not None, v["vertices"] is not None or v["triangles"] is not None
    if given[0] == given[1]:
        raise Missing("walls.file", "a mesh needs a file, or vertices and triangles (not both)")
    if given[0]:
        if not isinstance(v["file"], str) or not v["file"]:
            raise BadValue("walls.file", v["file"], "expected a file name")
    else:
        for name in ("vertices", "triangles"):
            if v[name] is None:
                raise Missing(f"walls.{name}", "required with "
                              f"{'triangles' if name == 'vertices' else 'vertices'}")
            out[name] = _nested(v[name])
    load_mesh({**v, **out})
    return out


def _mesh_spec(v: dict) -> dict:
    mesh = load_mesh(v).moved(v["velocity"], float(v["angular_velocity"]),
                              v["axis"] or (0.0, 0.0, 1.0), v["point"] or (0.0, 0.0, 0.0))
    return {"kind": MESH, "mesh": mesh, "velocity": v["velocity"],
            "allow_fast": bool(v["allow_fast"])}


def _mesh_columns(s: dict) -> dict:
    """A mesh's motion is its own (point, axis, velocity, angular velocity): the table's."""
    m = s["mesh"]
    return {X0: m.point[0], Y0: m.point[1], Z0: m.point[2], VX: m.velocity[0],
            VY: m.velocity[1], VZ: m.velocity[2], OMEGA: m.angular_velocity}


def _mesh_gaps(pos, point, axis, row, mesh):
    return mesh.gaps(pos)


def _draw_mesh(point, axis, row, lo, hi, time, mesh):
    """Its surface at ``time`` moved to its wall point ``point`` (a programmed or servo
    mesh's differs from p + v t)."""
    verts, tris = mesh.surface(time)
    return verts + (np.asarray(point, float) - (mesh.point + mesh.velocity * float(time))), tris


def _mesh_approach(row, axis, mesh) -> float:
    """|v| + |Ω| R_m, R_m its farthest corner from the axis (a paddle's tip): no point of a
    triangle lies farther from the axis than its farthest corner."""
    return _speed(row) + (abs(mesh.angular_velocity) * mesh.radius() if mesh.turning else 0.0)


#: the kinds by their ``[[walls]]`` type
KINDS = {k.name: k for k in (
    WallKind("plane", (PLANE,), ("point", "normal", "angular_velocity", "allow_fast"),
             _check_plane, lambda v: _moving(v, PLANE, "normal"), lambda s: {}, _plane_gaps,
             _draw_plane, glued=True, approach=_plane_approach,
             explains=("axis", "radius", "inside", "length")),
    WallKind("cylinder", (CYLINDER_INSIDE, CYLINDER_OUTSIDE),
             ("point", "axis", "radius", "inside", "angular_velocity", "length", "allow_fast"),
             _check_cylinder, _cylinder_spec, _cylinder_columns, _cylinder_gaps,
             _draw_cylinder, glued=True, approach=_cylinder_approach, explains=("normal",)),
    WallKind("cone", (CONE,), ("point", "axis", "radius_lo", "radius_hi", "lo", "hi",
                               "infinite", "angular_velocity", "allow_fast"),
             _check_cone, _cone_spec, _cone_columns, _cone_gaps, _draw_cone, glued=True,
             approach=lambda row, axis, mesh: _speed(row)),
    WallKind("mesh", (MESH,), ("file", "scale", "vertices", "triangles", "point", "axis",
                               "angular_velocity", "allow_fast"),
             _check_mesh, _mesh_spec, _mesh_columns, _mesh_gaps, _draw_mesh, glued=False,
             approach=_mesh_approach),
)}
#: the kinds by their code in the wall table
BY_CODE = {code: k for k in KINDS.values() for code in k.codes}


def kind_of(code) -> WallKind:
    """The kind of a wall table's kind code (a float of the table, or an int)."""
    return BY_CODE[int(code)]


def table_row(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """One wall's row of the wall table (:data:`WIDTH`,) and its unit normal or axis, from
    its spec (``WallKind.spec``; ``kind`` code, ``point``, ``normal``, ``velocity``,
    ``angular_velocity`` and the kind's own entries)."""
    row = np.zeros(WIDTH)
    row[HALF] = math.inf
    kind = kind_of(spec["kind"])
    row[KIND] = spec["kind"]
    if spec["kind"] != MESH:
        a = np.asarray(spec["normal"], float)
        row[VX:VZ + 1] = spec.get("velocity", (0.0, 0.0, 0.0))
        row[OMEGA] = spec.get("angular_velocity", 0.0)
        row[X0:Z0 + 1] = spec["point"]
    else:
        a = np.asarray(spec["mesh"].axis, float)
    for col, value in kind.columns(spec).items():
        row[col] = value
    return row, a / np.linalg.norm(a)


__all__ = ["PLANE", "CYLINDER_INSIDE", "CYLINDER_OUTSIDE", "MESH", "CONE", "WIDTH", "KINDS",
           "BY_CODE", "WallKind", "Missing", "kind_of", "table_row", "load_mesh"]
