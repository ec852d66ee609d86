"""Wall geometry: half-spaces (planes at any angle), cylinders and cones, fixed or moving.

A wall is an infinite particle of the store (radius inf, negative gid −1, −2, …, the same on
every rank): ``pos`` is a point of it (a plane's point, a point of a cylinder's axis) and
``normal`` a unit vector (a plane's normal toward the spheres, a cylinder's axis). What the
store does not hold is one row per wall of the *wall table* (:class:`WallSet`), indexed by
−1 − gid: the kind, a cylinder's radius (a cone's radii and extent), the wall's velocity and
angular velocity, its point at t = 0 and the extra reach the neighbour lists give it (layout
and each kind's other facts — config fields, table columns, drawing, glued spheres — in
``pdyn.wallkinds``). Geometry is written once, one inlined function per kind dispatched on
the kind code in :func:`wall_contact`, for the contact pass, the neighbour lists and the
output.

* ``plane`` (kind 0): gap g = (x − p)·n̂ (distance of a centre from the plane, n̂ toward the
  spheres); overlap δ = r − g; contact normal (sphere → wall) −n̂.
* ``cylinder`` inside (kind 1) / outside (kind 2), axis point p, unit axis â, radius R:
  d = x − p, q = d − (d·â) â, ρ = |q|; inside g = R − ρ, normal q/ρ; outside g = ρ − R,
  normal −q/ρ; δ = r − g. Infinite along its axis, or of a finite ``length`` L centred on
  p (|d·â| ≤ L/2): an open tube, a thin shell whose both faces act (g = |R − ρ|, normal
  toward the surface), and beyond its ends its two rims, circles of radius R at d·â = ±L/2,
  act as edges: the closest point c = p + e â + R q̂ of the rim (e = ±L/2), gap |c − x|,
  normal (c − x)/|c − x| — equal to the tube's at d·â = ±L/2, so a sphere sliding over a
  rim feels a continuous force (the closest-point rule of triangle-mesh walls' edges).
* ``cone`` (kind 4), axis point p, unit axis â: the surface of revolution of its generating
  segment from (s, ρ) = (lo, R_lo) to (hi, R_hi) in the meridian half-plane (s = d·â,
  ρ = |q|), or of the line through them from its apex on (``infinite``). A thin shell whose
  both faces act, its rims (or apex) acting as edges by the closest point rule, as the
  finite tube's: the closest point (c_s, c_ρ) of the segment to (s, ρ) gives the contact
  point c = p + c_s â + c_ρ q̂, gap |c − x|, normal (c − x)/|c − x| ([Ericson2004] 5.1.2);
  LAMMPS' ``region cone`` ([LAMMPSregion]) names its radii and extent the same way.
* ``mesh`` (kind 3): triangles (``pdyn.mesh``); the wall's point is the mesh's point p
  translated (p + v t), its normal the mesh's axis â, and each triangle within reach is a list
  entry of its own (:func:`entry_contact`), so :func:`wall_contact` gives a mesh no contact
  (it returns before the cylinder branch).
* Motion ([LAMMPS] ``fix wall/gran`` ``wiggle``/``shear``/``rotate``; mesa_pd's moving
  bodies): a translating wall's point is p(t) = p₀ + v t, computed from the step count
  (t the step's time, ``pdyn.clock``), never accumulated, so every rank and a restart get the same bits; a
  cylinder or a cone may rotate about its own axis at Ω (rad/s), a plane about its normal through its
  point (a turntable: its place does not change), a mesh about its axis â through its
  point (its frame turned by Ω t, ``pdyn.mesh.frames``). The wall's surface velocity at the
  contact point c, u = v + Ω â × (c − p(t)) (a cylinder's: v + Ω R â × q̂, a cone's
  v + Ω c_ρ â × q̂; a plane's, â = n̂:
  v + Ω n̂ × (x − p(t)), the same since c − x ∥ n̂), enters the contact's relative velocity
  (it drags spheres through friction); Ω â is the wall's spin for rolling resistance.
* Programs ([LAMMPSfixmove] ``wiggle``; ``pdyn.programs``): a wall's translation and rotation
  may add terms of time to v and Ω — p(t) = p₀ + v t + Σ x_k(t), u(t) = v + Σ x_k′(t), each
  in closed form from the step's time t; the table's velocity and Ω columns hold u(t) and Ω(t) of
  the step (:meth:`WallSet.points`), so the surface velocity above is the exact derivative.
  A servo (``pdyn.dynamics.wallmotion.Servo``) moves a plane along its normal or a mesh
  along its direction by a speed set from its load (the table's velocity holds it), or
  changes a cylinder's radius at a rate Ṙ (column ``RATE``): its surface velocity gains Ṙ q̂.

Units: m, m/s, rad/s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._jit import JIT, JIT_INLINE
from .mesh import frames, pack
from .programs import Program
from .wallkinds import (CONE, CYLINDER_INSIDE, CYLINDER_OUTSIDE, HALF, HI, KIND, LO, MESH,
                        OMEGA, PLANE, RADIUS, RADIUS_HI, RATE, REACH, T0, T1, VX, VY, VZ, WIDTH,
                        X0, Y0, Z0, kind_of, table_row)



@njit(inline="always", **JIT)
def _meridian(dx, dy, dz, ax, ay, az):
    """Of d = x − p about the unit axis â: the axial position s = d·â, the distance ρ from the
    axis and the unit radial direction q̂ (on the axis: any unit vector normal to it)."""
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
    return s, rho, qx, qy, qz


@njit(inline="always", **JIT)
def _plane(x, y, z, r, pos, normal, table, w, g):
    """A plane: normal −n̂, overlap r − (x − p)·n̂, surface velocity v (+ a turntable's)."""
    nx, ny, nz = -normal[w, 0], -normal[w, 1], -normal[w, 2]
    dx, dy, dz = x - pos[w, 0], y - pos[w, 1], z - pos[w, 2]
    delta = r + (dx * nx + dy * ny + dz * nz)
    om = table[g, OMEGA]
    if om == 0.0:
        return nx, ny, nz, delta, table[g, VX], table[g, VY], table[g, VZ]
    # a turntable: u = v + Ω n̂ × (c − p(t)) = v + Ω n̂ × (x − p(t)) (c − x ∥ n̂)
    return (nx, ny, nz, delta, table[g, VX] + om * (nz * dy - ny * dz),
            table[g, VY] + om * (nx * dz - nz * dx), table[g, VZ] + om * (ny * dx - nx * dy))


@njit(inline="always", **JIT)
def _cylinder(x, y, z, r, pos, normal, table, w, g, kind):
    """A cylinder, infinite (inside or outside) or a finite open tube with its rims."""
    ax, ay, az = normal[w, 0], normal[w, 1], normal[w, 2]
    s, rho, qx, qy, qz = _meridian(x - pos[w, 0], y - pos[w, 1], z - pos[w, 2], ax, ay, az)
    big_r, rate = table[g, RADIUS], table[g, RATE]
    spin = table[g, OMEGA] * big_r  # surface speed Ω R along â × q̂, Ṙ along q̂ (a servo's)
    ux = table[g, VX] + spin * (ay * qz - az * qy) + rate * qx
    uy = table[g, VY] + spin * (az * qx - ax * qz) + rate * qy
    uz = table[g, VZ] + spin * (ax * qy - ay * qx) + rate * qz
    half = table[g, HALF]
    if half < math.inf:  # a finite tube: both faces, and its rims beyond its ends
        if abs(s) <= half:
            if rho <= big_r:
                return qx, qy, qz, r - (big_r - rho), ux, uy, uz
            return -qx, -qy, -qz, r - (rho - big_r), ux, uy, uz
        e = half - s if s > 0.0 else -half - s  # from the centre to the rim's plane, along â
        cx, cy, cz = e * ax + (big_r - rho) * qx, e * ay + (big_r - rho) * qy, \
            e * az + (big_r - rho) * qz  # c − x: to the rim's closest point
        dist = math.sqrt(cx * cx + cy * cy + cz * cz)
        if dist == 0.0:  # a centre on the rim: the radial direction
            return qx, qy, qz, r, ux, uy, uz
        return cx / dist, cy / dist, cz / dist, r - dist, ux, uy, uz
    if kind == CYLINDER_INSIDE:
        return qx, qy, qz, r - (big_r - rho), ux, uy, uz
    return -qx, -qy, -qz, r - (rho - big_r), ux, uy, uz


@njit(inline="always", **JIT)
def _cone(x, y, z, r, pos, normal, table, w, g):
    """A cone (thin shell, both faces; its rims, or its apex, as edges): the closest point
    (c_s, c_ρ) of its generating segment (LO, RADIUS) → (HI, RADIUS_HI), parameter t clamped
    to [T0, T1], to the centre's (s, ρ) in the meridian half-plane; c − x = (c_s − s) â +
    (c_ρ − ρ) q̂, normal (c − x)/|c − x|, overlap r − |c − x|; surface velocity
    v + Ω c_ρ â × q̂."""
    ax, ay, az = normal[w, 0], normal[w, 1], normal[w, 2]
    s, rho, qx, qy, qz = _meridian(x - pos[w, 0], y - pos[w, 1], z - pos[w, 2], ax, ay, az)
    lo, r_lo = table[g, LO], table[g, RADIUS]
    es, er = table[g, HI] - lo, table[g, RADIUS_HI] - r_lo
    t = ((s - lo) * es + (rho - r_lo) * er) / (es * es + er * er)
    t = min(max(t, table[g, T0]), table[g, T1])
    c_rho = r_lo + t * er
    cs, cr = lo + t * es - s, c_rho - rho  # c − x in (axial, radial)
    spin = table[g, OMEGA] * c_rho  # surface speed Ω c_ρ along â × q̂
    ux = table[g, VX] + spin * (ay * qz - az * qy)
    uy = table[g, VY] + spin * (az * qx - ax * qz)
    uz = table[g, VZ] + spin * (ax * qy - ay * qx)
    dist = math.sqrt(cs * cs + cr * cr)
    if dist == 0.0:  # a centre on the shell: the face's normal away from the axis
        length = math.sqrt(es * es + er * er)
        ns, nr = -er / length, es / length
        return ns * ax + nr * qx, ns * ay + nr * qy, ns * az + nr * qz, r, ux, uy, uz
    return ((cs * ax + cr * qx) / dist, (cs * ay + cr * qy) / dist, (cs * az + cr * qz) / dist,
            r - dist, ux, uy, uz)


@njit(**JIT_INLINE)
def wall_contact(x, y, z, r, pos, normal, table, w, g):
    """Sphere (centre (x, y, z), radius r) against wall handle ``w`` (table row ``g``):
    the unit normal from the sphere to the wall, the overlap δ (m; negative: apart) and the
    wall's surface velocity at the contact (m/s)."""
    kind = table[g, KIND]
    if kind == MESH:  # its triangles are separate entries (:func:`entry_contact`)
        return 0.0, 0.0, 1.0, -np.inf, 0.0, 0.0, 0.0
    if kind == PLANE:
        return _plane(x, y, z, r, pos, normal, table, w, g)
    if kind == CONE:
        return _cone(x, y, z, r, pos, normal, table, w, g)
    return _cylinder(x, y, z, r, pos, normal, table, w, g, kind)


@njit(inline="always", **JIT)
def overlap_limit(table, g, r):
    """The overlap (m) beyond which a sphere of radius ``r`` has gone through wall row ``g``:
    r for a half-space (a plane, an infinite cylinder), whose overlap grows without bound
    behind it; r/2 for a thin shell whose both faces act (a finite tube, a cone, a mesh),
    whose overlap is at most r — its centre on the surface — and falls again beyond it; a
    sphere that crosses a shell moving at most r a step (the step guard) comes within r/2
    of it at some step."""
    kind = table[g, KIND]
    if kind == MESH or kind == CONE or table[g, HALF] < math.inf:
        return 0.5 * r
    return r


@njit(inline="always", **JIT)
def mesh_entry(mesh, slot, geo, u):
    """Of list entry ``u``: (q, normal, overlap) — q = ``slot[u]`` ≥ 0 for a mesh triangle,
    whose normal and overlap this step are ``geo[q]`` (``pdyn.mesh.contact_geometry``:
    the sphere–triangle contact of every mesh entry, computed before the pass) —, or q = −1.
    ``mesh``: the pair (``slot``, ``geo``), taken apart once per kernel by
    :func:`mesh_arrays`; a run without meshes passes None: numba prunes the test at compile
    time and the kernel holds no mesh code. Scalars out, for :func:`entry_contact`: an inlined
    function that takes arrays and calls another made numba count references to its arrays
    at each call (tens of times slower)."""
    if mesh is None:
        return -1, 0.0, 0.0, 0.0, 0.0
    q = slot[u]
    if q < 0:
        return -1, 0.0, 0.0, 0.0, 0.0
    return q, geo[q, 0], geo[q, 1], geo[q, 2], geo[q, 3]


@njit(inline="always", **JIT)
def entry_contact(x, y, z, r, pos, normal, table, w, g, entry):
    """:func:`wall_contact` of a wall list entry: wall handle ``w`` (table row ``g``), or a
    mesh triangle (``entry``: its :func:`mesh_entry`, q ≥ 0) — normal, overlap (−inf: not a
    contact to keep) and surface velocity."""
    q, nx, ny, nz, delta = entry
    if q >= 0:
        if not delta >= 0.0:  # apart (or not the contact to keep): never read
            return nx, ny, nz, delta, 0.0, 0.0, 0.0
        om = table[g, OMEGA]
        if om == 0.0:
            return nx, ny, nz, delta, table[g, VX], table[g, VY], table[g, VZ]
        # a turning mesh: u = v + Ω â × (c − p(t)), c = x + (r − δ) n the contact point
        dist = r - delta
        cx = x + dist * nx - pos[w, 0]
        cy = y + dist * ny - pos[w, 1]
        cz = z + dist * nz - pos[w, 2]
        ax, ay, az = normal[w, 0], normal[w, 1], normal[w, 2]
        return (nx, ny, nz, delta, table[g, VX] + om * (ay * cz - az * cy),
                table[g, VY] + om * (az * cx - ax * cz), table[g, VZ] + om * (ax * cy - ay * cx))
    return wall_contact(x, y, z, r, pos, normal, table, w, g)


@njit(inline="always", **JIT)
def mesh_arrays(mesh):
    """The two arrays of a step's mesh state (``slot``, ``geo``) that :func:`mesh_entry`
    takes, taken once per kernel outside its loops (a tuple of arrays costs a reference count
    each time one is taken from it); None, None without meshes (pruned at compile time)."""
    if mesh is None:
        return None, None
    return mesh[0], mesh[1]


@njit(inline="always", **JIT)
def wall_spin(table, g, normal, w):
    """The wall's angular velocity (rad/s): Ω â for a cylinder or a mesh, Ω n̂ for a plane."""
    om = table[g, OMEGA]
    if om == 0.0:
        return 0.0, 0.0, 0.0
    return om * normal[w, 0], om * normal[w, 1], om * normal[w, 2]


def gaps(pos: np.ndarray, point, normal, kind: int, radius: float,
         length: float = math.inf) -> np.ndarray:
    """Distance (m) of each centre ``pos`` (N, 3) from one plane's or cylinder's surface,
    positive on the spheres' side (a finite tube of ``length``: the distance from its shell
    or rims, >= 0) (numpy; for checks and pictures; any kind: ``WallKind.gaps``)."""
    row, n = table_row({"kind": kind, "point": point, "normal": normal, "radius": radius,
                        "length": length})
    return kind_of(kind).gaps(pos, point, n, row, None)


#: no translation (a servo wall's approach at rest, :meth:`WallSet.approach`)
_AT_REST = Program(np.zeros(3), ())


class WallSet:
    """The walls of a run: the box's faces (planes, gids −1 … −k, ``Box.walls()`` order)
    followed by the configured walls, with their table (:data:`WIDTH` columns, row −1 − gid).

    ``specs``: dicts (``pdyn.wallkinds.WallKind.spec``; each a row by
    ``pdyn.wallkinds.table_row``) with ``kind`` (``PLANE``, ``CYLINDER_INSIDE``,
    ``CYLINDER_OUTSIDE``, ``CONE``), ``point``, ``normal`` (plane normal or axis; normalised
    here), ``velocity``, ``angular_velocity`` and the kind's own: a cylinder's ``radius``,
    ``length`` (centred on its point; absent or inf: infinite), a cone's ``radius_lo``,
    ``radius_hi``, ``lo``, ``hi``, ``infinite``; a mesh (kind ``MESH``) gives ``mesh`` (a
    :class:`pdyn.mesh.Mesh`, which carries its motion: point, axis, velocity, angular
    velocity) instead. :attr:`bundle` packs the meshes (``pdyn.mesh.pack``; None without
    meshes: the kernels then compile no mesh code), :attr:`meshes` lists them, :attr:`mesh_of`
    maps their rows to them."""

    def __init__(self, box_points, box_normals, specs=()):
        box_points = np.asarray(box_points, float).reshape(-1, 3)
        box_normals = np.asarray(box_normals, float).reshape(-1, 3)
        self.n_box = box_points.shape[0]
        n = self.n_box + len(specs)
        self.table = np.zeros((n, WIDTH))
        self.normals = np.zeros((n, 3))
        self.table[:self.n_box, X0:Z0 + 1] = box_points
        self.table[:, HALF] = math.inf
        self.normals[:self.n_box] = box_normals
        for k, s in enumerate(specs, self.n_box):
            self.table[k], self.normals[k] = table_row(s)
        rows = [k for k, s in enumerate(specs, self.n_box) if s["kind"] == MESH]
        self.meshes = [specs[k - self.n_box]["mesh"] for k in rows]
        self.gid = -1 - np.arange(n, dtype=np.int64)
        self.bundle = pack(self.meshes, rows) if self.meshes else None
        self.mesh_of = dict(zip(rows, self.meshes))  # a mesh wall's row -> its mesh
        #: per row: the config's ``allow_fast`` (``pdyn.checks.refuse_fast_walls``)
        self.allow_fast = np.array([False] * self.n_box
                                   + [bool(s.get("allow_fast", False)) for s in specs])
        #: per row its constant velocity (m/s; a programmed row's table columns change)
        self.velocity = self.table[:, VX:VZ + 1].copy()
        #: programmed rows -> (translation, rotation) (``pdyn.programs.Program``)
        self.programs = {k: (Program(self.velocity[k], s.get("translation", ())),
                             Program(self.table[k, OMEGA], s.get("rotation", ())))
                         for k, s in enumerate(specs, self.n_box)
                         if s.get("translation") or s.get("rotation")}
        #: servo rows -> their servo (``pdyn.programs.check_servo``; moved by
        #: ``pdyn.dynamics.wallmotion.Servo``)
        self.servos = {k: s["servo"] for k, s in enumerate(specs, self.n_box) if s.get("servo")}
        #: programmed rows a stage gave a new motion -> (its start time (s), the point there)
        self.origins: dict[int, tuple[float, np.ndarray]] = {}
        #: rows -> the translations later stages give them (``plan``; their speeds count now)
        self.planned: dict[int, list[Program]] = {}
        #: per row the largest translation speed it reaches (m/s)
        self.peaks = np.linalg.norm(self.velocity, axis=1)
        for k, (shift, _) in self.programs.items():
            self.peaks[k] = shift.peak()
        for k, servo in self.servos.items():
            self.peaks[k] = servo["max_speed"]
        self.speed = float(np.max(self.peaks, initial=0.0))
        #: the turning meshes' rows and their radii (largest distance of a corner from the axis)
        self.turning = {k: m.radius() for k, m in self.mesh_of.items() if m.turning}

    def __len__(self) -> int:
        return self.table.shape[0]

    @property
    def translating(self) -> bool:
        return self.speed > 0.0

    def turn(self, time: float) -> None:
        """Turning meshes' frames to ``time`` (s) in the bundle (``pdyn.mesh.frames``)."""
        if self.turning:
            frames(self.meshes, time, self.bundle.frames)

    def approach(self) -> np.ndarray:
        """Each wall's approach speed (m/s, (W,)): the fastest any point of its surface moves
        along the surface's normal (``pdyn.wallkinds.WallKind.approach``; 0 at rest)."""
        out = np.array([kind_of(self.table[k, KIND]).approach(
            self.table[k], self.normals[k], self.mesh_of.get(k)) for k in range(len(self))])
        for k, (shift, _) in self.programs.items():
            out[k] = self._program_approach(k, shift)
        for k in self.servos:  # its surface along its normal at v_max (any stage's servo),
            out[k] = self._program_approach(k, _AT_REST) + self.peaks[k]  # a mesh turning too
        for k, later in self.planned.items():
            out[k] = max([out[k]] + [self._program_approach(k, shift) for shift in later])
        return out

    def _program_approach(self, k: int, shift: Program) -> float:
        """A bound of a programmed wall's approach speed: its approach at rest in translation
        (a mesh's turning) plus, per term of its translation, the largest excess over it of
        the approach at one of the term's extreme velocities (``Program.extremes``; the
        approach of a translation is a seminorm of its velocity, so its value at a sum is at
        most the sum of its values)."""
        kind, row, normal, mesh = (kind_of(self.table[k, KIND]), self.table[k].copy(),
                                   self.normals[k], self.mesh_of.get(k))
        row[VX:VZ + 1] = 0.0
        base = kind.approach(row, normal, mesh)
        total = base
        for velocities in shift.extremes():
            most = 0.0
            for u in velocities:
                row[VX:VZ + 1] = u
                most = max(most, kind.approach(row, normal, mesh) - base)
            total += most
        return total

    def points(self, time: float, move: bool = False) -> np.ndarray:
        """Each wall's point at ``time`` (s): p₀ + v t, a programmed wall's p₀ + x(t)
        (``pdyn.programs``) (W, 3). ``move``: its velocity and angular velocity in the table
        set to the program's at ``time`` too (the surface velocity of the contacts)."""
        pts = self.table[:, X0:Z0 + 1] + self.velocity * time
        for k, (shift, turn) in self.programs.items():
            since, origin = self.origins.get(k, (0.0, self.table[k, X0:Z0 + 1]))
            x, u = shift(time - since)
            pts[k] = origin + x
            if move:
                self.table[k, VX:VZ + 1] = u
                self.table[k, OMEGA] = turn(time - since)[1][0]
        return pts

    def plan(self, k: int, translation: Program, max_speed: float = 0.0) -> None:
        """Row ``k`` will follow ``translation`` (or a servo of ``max_speed``, m/s) from a
        later stage on (``pdyn.stages``): its speed counts now for the lists' reach, their
        rebuild interval and the fast-wall refusal."""
        self.planned.setdefault(k, []).append(translation)
        self.peaks[k] = max(self.peaks[k], translation.peak(), max_speed)
        self.speed = float(np.max(self.peaks, initial=0.0))

    def reprogram(self, k: int, translation: Program, rotation: Program, time: float) -> None:
        """Row ``k`` follows ``translation`` and ``rotation`` from ``time`` (s) on, from the
        point where its motion so far puts it then: p(t) = p(time) + x(t − time)."""
        origin = self.points(time)[k].copy()
        self.programs[k] = (translation, rotation)
        self.origins[k] = (float(time), origin)

    def set_reach(self, skin: float) -> None:
        """Translating walls and turning meshes move up to ``skin``/2 between rebuilds
        (:meth:`rebuild_every`): the lists take them in within ``skin``/2 more."""
        moving = self.peaks > 0.0
        moving[list(self.turning)] = True
        self.table[:, REACH] = np.where(moving, 0.5 * skin, 0.0)

    def rebuild_every(self, skin: float, dt: float, r_max: float = 0.0) -> int:
        """Steps K between forced rebuilds (rebuild at every step that is a multiple of K) so
        that no wall moves more than ``skin``/2 since the last rebuild, relative to a sphere
        (of radius at most ``r_max``, m) within its reach; 0: none needed. A turning mesh's
        point at distance ρ from its axis moves at |Ω| ρ; a sphere within r + skin of the mesh
        is within R_m + r + skin of the axis (R_m: :meth:`pdyn.mesh.Mesh.radius`), so its
        speed counts as |v| + |Ω| (R_m + r_max + skin)."""
        speed = self.speed
        for k, radius in self.turning.items():
            v = float(self.peaks[k])
            speed = max(speed, v + abs(self.table[k, OMEGA]) * (radius + r_max + skin))
        if speed == 0.0 or skin <= 0.0:
            return 0
        return max(1, int(math.floor(0.5 * skin / (speed * dt))))

    def names(self) -> list[str]:
        """Column names of the configured walls (``wall<k>``, k = −gid)."""
        return [f"wall{k + 1}" for k in range(self.n_box, len(self))]


__all__ = ["PLANE", "CYLINDER_INSIDE", "CYLINDER_OUTSIDE", "MESH", "CONE", "WallSet",
           "wall_contact", "entry_contact", "mesh_entry", "overlap_limit", "gaps"]
