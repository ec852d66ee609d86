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

Servo walls: a plane moved along its normal to hold a target load — the force the spheres
press on it, or a pressure over an area — that may itself follow a table of time
(``pdyn.programs.check_servo``).

Each step the load L (N, > 0 when the spheres press the plane) is the sum of the normal forces
of the step's contacts with the plane (``ContactPass.contact_list``; the friction forces lie in
the plane), gathered from every rank and summed exactly (``math.fsum``: correctly rounded, so
the same bits in any order, on any rank count). The plane's speed toward the spheres for the
next step is

    v = clamp(g (L*(t) − L), −v_max, v_max)

(g the gain, m/(s·N), v_max the speed limit, L* the target at the step's time), and its point
p₀ + s n̂ moves by s ← s + v dt: a limited proportional speed, as LIGGGHTS' servo walls
([LIGGGHTSservo]). Under a bed of stiffness k_b the load's error shrinks by 1 − g k_b dt a
step: the loop is stable for g k_b dt < 2 and does not overshoot for g k_b dt < 1. Its state
(s, v) is kept in checkpoints. Units: m, s, N.
"""

from __future__ import annotations

import math

import numpy as np

from ..programs import servo_target
from ..wallkinds import VX, VZ, X0, Z0


class WallMotion:
    """The walls of ``wallset`` (``pdyn.walls.WallSet``) moving in the time of ``clock``
    (``pdyn.clock.Clock``)."""

    def __init__(self, wallset, clock, step: int = 0, servos: dict | None = None,
                 r_max: float = 0.0):
        """``step``: the run's first; ``servos``: a checkpoint's servo states by wall id
        (``Servo.state``; None: every servo at rest at its point); ``r_max`` (m): the largest
        sphere's radius (:meth:`every`)."""
        self.wallset, self.clock, self.r_max = wallset, clock, float(r_max)
        self.servos = [Servo(k, wallset.normals[k], spec, clock, step,
                             (servos or {}).get(str(-1 - k))) for k, spec in wallset.servos.items()]

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
    """The servo ``spec`` (``pdyn.programs.check_servo``) of the plane of wall-table row
    ``row`` (id −1 − row) with unit normal ``normal``, in the time of ``clock``
    (``pdyn.clock.Clock``), at step ``step`` with ``state`` (offset s (m), speed v (m/s);
    None: at rest at its point)."""

    def __init__(self, row: int, normal: np.ndarray, spec: dict, clock, step: int,
                 state=None):
        self.row, self.gid, self.normal, self.spec = row, -1 - row, normal, spec
        self.clock, self.at = clock, int(step)
        self.offset, self.speed = (0.0, 0.0) if state is None else map(float, state)
        self.load = math.nan  # the last step's load (N)
        self.since = 0  # the step its target's time counts from (a stage's start)

    def retarget(self, spec: dict, step: int) -> None:
        """Follow ``spec`` (``pdyn.programs.check_servo``) from ``step`` on, its target's time
        counted from there (a stage's new servo, ``pdyn.stages``); offset and speed go on."""
        self.spec, self.since = spec, int(step)

    def place(self, pos: np.ndarray, walls: np.ndarray, table: np.ndarray, step: int) -> None:
        """Move to ``step`` (s += v dt for each step since the last) and put the wall's point
        and velocity into ``pos`` (wall handles ``walls`` in table order) and ``table``."""
        if step > self.at:
            self.offset += self.speed * self.clock.dt * (step - self.at)
            self.at = step
        pos[walls[self.row]] = table[self.row, X0:Z0 + 1] + self.offset * self.normal
        table[self.row, VX:VZ + 1] = self.speed * self.normal

    def respond(self, load: float, step: int) -> None:
        """The load ``load`` (N) of ``step``: the speed of the next step."""
        self.load = load
        error = servo_target(self.spec, self.clock.since(self.since, step)) - load
        limit = self.spec["max_speed"]
        self.speed = min(max(self.spec["gain"] * error, -limit), limit)

    def state(self) -> list:
        """(offset s (m), speed v (m/s)), what a checkpoint keeps."""
        return [self.offset, self.speed]


def servo_loads(contact, store, lists, comm, dt: float, servos: list) -> list[float]:
    """The load (N) on each of ``servos`` this step (:func:`wall_loads`). Collective."""
    return wall_loads(contact, store, lists, comm, dt, [s.gid for s in servos])


def wall_loads(contact, store, lists, comm, dt: float, gids: list) -> list[float]:
    """The load (N) on each wall of ids ``gids`` this step: the normal forces of its contacts
    in ``lists`` (``ContactPass.contact_list`` of ``contact``), from every rank, summed
    exactly (the same bits on any rank count). Collective."""
    found = contact.contact_list(store, lists, dt, spheres=False)
    wall = found["id"][:, 1]
    parts = comm.allgather([found["force"][wall == g] for g in gids])
    return [math.fsum(np.concatenate([p[k] for p in parts]).tolist())
            for k in range(len(gids))]
