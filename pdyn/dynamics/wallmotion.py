"""Moving walls as a component of the step: translating walls' points and turning meshes'
frames put where they are at a step, from the step count (units: m, s).

A wall's motion is closed-form (point p₀ + v t, a mesh's frame turned by Ω t about its axis,
``pdyn.walls.WallSet``), computed from the step's time t, never accumulated: every rank and a
restart get the same bits (t the run's ``pdyn.clock.Clock``: piecewise when a stage changes
dt). The lists reach half the skin farther for moving walls
(``WallSet.set_reach``) and the schedule rebuilds before one has moved that far
(:meth:`WallMotion.every`). A programmed wall (``pdyn.programs``) is placed the same way, its
table's velocity and angular velocity set to the program's exact derivative at the step's
time; a servo wall (:class:`Servo`) moves by the speed its last step's load set,
every rank from the same exactly summed load.

Servo walls (:class:`Servo`): a wall moved to hold a target load — a force, or a pressure
over an area — that may itself follow a table of time (``pdyn.programs.check_servo``):

* a plane along its unit normal n̂ (toward the spheres): its point p₀ + s n̂;
* a mesh along its unit ``direction`` d̂ (toward the spheres): its point p₀ + s d̂;
* a cylinder by its radius: R = R₀ − s inside (and a finite tube: the spheres inside it),
  R₀ + s outside — s > 0 moves the surface toward the spheres; its surface velocity in the
  contacts is Ṙ q̂ (``pdyn.walls``, column ``RATE``). A pressure's area is 2π R L (L its
  length, R the radius of the step); an infinite cylinder takes a force only.

Each step the load L (N, > 0 when the spheres press the wall) is, over the step's contacts
with the wall (``ContactPass.contact_list``), gathered from every rank and summed exactly
(``math.fsum``: correctly rounded, so the same bits in any order, on any rank count):

* a plane or a cylinder: Σ f_n, the normal forces (a plane's friction lies in it);
* a mesh: Σ (F_n + F_t)·d̂, the force on the spheres (normal and friction, as the last force
  pass recorded it) along d̂ — the sum of the 6 products F_{n,i} d_i, F_{t,i} d_i of every
  contact, each rounded once.

The wall's speed toward the spheres for the next step is

    v = clamp(g (L*(t) − L), −v_max, v_max)

(g the gain, m/(s·N), v_max the speed limit, L* the target at the step's time), and s moves
by s ← s + v dt: a limited proportional speed, as LIGGGHTS' servo walls ([LIGGGHTSservo]).
Under a bed of stiffness k_b the load's error shrinks by 1 − g k_b dt a step: the loop is
stable for g k_b dt < 2 and does not overshoot for g k_b dt < 1. Its state (s, v) is kept in
checkpoints. Units: m, s, N.
"""

from __future__ import annotations

import math

import numpy as np

from ..programs import servo_target
from ..wallkinds import (CYLINDER_INSIDE, CYLINDER_OUTSIDE, HALF, KIND, MESH, RADIUS, RATE, VX,
                         VZ, X0, Z0)

#: what a step must record for a mesh servo's load: its wall contacts' friction forces
#: (``pdyn.io.OutputView`` needs; the force pass records the wall entries alone)
MESH_SERVO_NEEDS = frozenset({"wall_loads"})


class WallMotion:
    """The walls of ``wallset`` (``pdyn.walls.WallSet``) moving in the time of ``clock``
    (``pdyn.clock.Clock``)."""

    def __init__(self, wallset, clock, step: int = 0, servos: dict | None = None,
                 r_max: float = 0.0):
        """``step``: the run's first; ``servos``: a checkpoint's servo states by wall id
        (``Servo.state``; None: every servo at rest at its point); ``r_max`` (m): the largest
        sphere's radius (:meth:`every`)."""
        self.wallset, self.clock, self.r_max = wallset, clock, float(r_max)
        self.servos = [Servo(k, wallset, spec, clock, step, (servos or {}).get(str(-1 - k)))
                       for k, spec in wallset.servos.items()]
        #: what every step's force pass must record for the servos' loads
        self.needs = (MESH_SERVO_NEEDS if any(s.mesh for s in self.servos)
                      else frozenset())

    def advance(self, store, walls: np.ndarray, step: int) -> None:
        """Translating walls (their handles ``walls``, in table order) to their place at
        ``step`` (p₀ + v t, a program's p₀ + x(t), t the step's time) in ``store``, programmed
        walls' velocities to that time, servo walls to that step, turning meshes' frames to
        that time."""
        time = self.clock.time(step)
        if self.wallset.translating or self.wallset.programs:
            store.pos[walls] = self.wallset.points(time, move=True)
        for servo in self.servos:
            servo.place(store.pos, walls, self.wallset.table, step)
        self.wallset.turn(time)

    def respond(self, contact, store, lists, comm, step: int) -> None:
        """The servos' loads of ``step`` (its force pass over ``lists``) set their next
        speeds (:class:`Servo`). Collective when there are servos."""
        if self.servos:
            loads = servo_loads(contact, store, lists, comm, self.clock.dt, self.servos)
            for servo, load in zip(self.servos, loads):
                servo.respond(load, step)

    def state(self) -> dict | None:
        """What a checkpoint keeps: each servo's state by wall id (None without servos)."""
        return {str(s.gid): s.state() for s in self.servos} or None

    def every(self, skin: float) -> int:
        """Steps between forced rebuilds so that no wall moves more than ``skin``/2 (m)
        between them, relative to spheres of radius at most ``r_max``, at the largest time
        step the run plans (``Clock.largest``); 0: none needed (``WallSet.rebuild_every``)."""
        return self.wallset.rebuild_every(skin, self.clock.largest, self.r_max)


class Servo:
    """The servo ``spec`` (``pdyn.programs.check_servo``) of wall-table row ``row`` (id
    −1 − row) of ``wallset`` (a plane, a mesh or a cylinder: module docstring), in the time of
    ``clock`` (``pdyn.clock.Clock``), at step ``step`` with ``state`` (offset s (m), speed v
    (m/s); None: at rest where the config puts it)."""

    def __init__(self, row: int, wallset, spec: dict, clock, step: int, state=None):
        self.row, self.gid, self.spec = row, -1 - row, spec
        kind = int(wallset.table[row, KIND])
        self.mesh = kind == MESH
        #: a cylinder's: R = R₀ + sign · s (−1 inside, +1 outside); its length (m, or inf)
        self.radial = kind in (CYLINDER_INSIDE, CYLINDER_OUTSIDE)
        self.sign = 1.0 if kind == CYLINDER_OUTSIDE else -1.0
        self.radius0, self.length = wallset.table[row, RADIUS], 2.0 * wallset.table[row, HALF]
        #: the unit direction of its motion (a plane's normal, a mesh's direction)
        self.direction = wallset.normals[row]
        if self.mesh:
            d = np.asarray(spec["direction"], float)
            self.direction = d / np.linalg.norm(d)
        self.clock, self.at = clock, int(step)
        self.offset, self.speed = (0.0, 0.0) if state is None else map(float, state)
        self.load = math.nan  # the last step's load (N)
        self.since = 0  # the step its target's time counts from (a stage's start)

    def retarget(self, spec: dict, step: int) -> None:
        """Follow ``spec`` (``pdyn.programs.check_servo``) from ``step`` on, its target's time
        counted from there (a stage's new servo, ``pdyn.stages``); offset, speed and a mesh's
        direction go on."""
        self.spec, self.since = spec, int(step)

    @property
    def radius(self) -> float:
        """A cylinder's radius now (m): R₀ + sign · s."""
        return self.radius0 + self.sign * self.offset

    def place(self, pos: np.ndarray, walls: np.ndarray, table: np.ndarray, step: int) -> None:
        """Move to ``step`` (s += v dt for each step since the last) and put the wall's point
        and velocity into ``pos`` (wall handles ``walls`` in table order) and ``table`` (a
        cylinder's radius and its rate)."""
        if step > self.at:
            self.offset += self.speed * self.clock.dt * (step - self.at)
            self.at = step
        if self.radial:
            table[self.row, RADIUS] = self.radius
            table[self.row, RATE] = self.sign * self.speed
            return
        pos[walls[self.row]] = table[self.row, X0:Z0 + 1] + self.offset * self.direction
        table[self.row, VX:VZ + 1] = self.speed * self.direction

    def respond(self, load: float, step: int) -> None:
        """The load ``load`` (N) of ``step``: the speed of the next step."""
        self.load = load
        area = 2.0 * math.pi * self.radius * self.length if self.radial else None
        error = servo_target(self.spec, self.clock.since(self.since, step), area) - load
        limit = self.spec["max_speed"]
        self.speed = min(max(self.spec["gain"] * error, -limit), limit)

    def state(self) -> list:
        """(offset s (m), speed v (m/s)), what a checkpoint keeps."""
        return [self.offset, self.speed]


def servo_loads(contact, store, lists, comm, dt: float, servos: list) -> list[float]:
    """The load (N) on each of ``servos`` this step (module docstring): a plane's and a
    cylinder's as :func:`wall_loads`, a mesh's the exact sum of its contacts' force on the
    spheres along its direction. Collective."""
    meshes = [s for s in servos if s.mesh]
    tangential = contact.recorded_tangential(lists, spheres=False) if meshes else None
    found = contact.contact_list(store, lists, dt, spheres=False, tangential=tangential)
    wall = found["id"][:, 1]
    mine = []
    for s in servos:
        on = wall == s.gid
        if s.mesh:  # the 6 products of each contact, each rounded once
            f = np.concatenate((found["normal_force"][on], found["tangential_force"][on]))
            mine.append((f * s.direction).ravel())
        else:
            mine.append(found["force"][on])
    parts = comm.allgather(mine)
    return [math.fsum(np.concatenate([p[k] for p in parts]).tolist())
            for k in range(len(servos))]


def wall_loads(contact, store, lists, comm, dt: float, gids: list) -> list[float]:
    """The load (N) on each wall of ids ``gids`` this step: the normal forces of its contacts
    in ``lists`` (``ContactPass.contact_list`` of ``contact``), from every rank, summed
    exactly (the same bits on any rank count). Collective."""
    found = contact.contact_list(store, lists, dt, spheres=False)
    wall = found["id"][:, 1]
    parts = comm.allgather([found["force"][wall == g] for g in gids])
    return [math.fsum(np.concatenate([p[k] for p in parts]).tolist())
            for k in range(len(gids))]
