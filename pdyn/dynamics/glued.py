"""Glued spheres: fixed spheres that move rigidly with a wall (a rough drum's wall, a rough
plate that slides), in closed form (units: m, s, m/s, rad/s).

A glued sphere is a *fixed* sphere (flag ``FIXED``: never integrated, no rows of its own, a
partner like a ghost) that belongs to the ``GLUED`` feature of the store: ``glued`` holds the
id (< 0) of the wall it moves with, ``anchor`` its centre x₀ at t = 0. The wall's motion (its
row of the wall table, ``pdyn.walls``: point p₀, velocity v, angular velocity Ω about its
unit axis â — a cylinder's axis, a plane's normal) carries it: at the time t of a step

    x(t) = p₀ + v t + R(Ω t) (x₀ − p₀),    v(x) = v + Ω â × (x − p₀ − v t),    ω = Ω â,

R(θ) the rotation by θ about â (Rodrigues: d cos θ + (â × d) sin θ + â (â · d)(1 − cos θ)).
Its velocity and spin are the wall's surface motion where it sits, so a contact sees the
glued sphere's true surface velocity (friction drags the spheres it touches). This is LAMMPS'
``fix move rotate`` (and ``linear``) on a group of atoms ([LAMMPSfixmove]): each atom's
position is computed from its original position and the time since the fix was defined,
never accumulated, and its velocity (and an extended particle's angular velocity) set to the
motion's. Computed from the step count and the anchor, the same arithmetic on every rank, so
N ranks and a restart (the anchor and the wall are checkpointed) give the same bits.

Along a periodic axis the centre takes the image nearest to its previous position (a glued
sphere moves less than half a period in a step), so it moves continuously between rebuilds
and follows the exchange's wrapping at a rebuild. A glued sphere keeps its own mass: a
contact's effective mass (damping) is that of the two spheres, as LAMMPS' ``fix move``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT
from ..placement import SceneError
from ..particles import FIXED, OWNED
from ..wallkinds import KINDS
from ..walls import OMEGA, VX, VY, VZ, X0, Y0, Z0
from .neighbours import Hanger


@njit(**JIT)
def place_glued(pos, vel, omega, anchor, glued, handles, table, axes, time, period, build_pos):
    """Put the glued spheres ``handles`` where their walls' motion has them at ``time`` (s):
    centre, velocity and (with ``omega``) spin (module docstring). ``table``: the wall table,
    ``axes`` (W, 3) the walls' unit normals / axes by table row, ``period`` (3,) the box's
    period along each axis (0: not periodic). Returns the largest squared move (m²) and the
    largest squared displacement since ``build_pos`` (the neighbour lists' drift), as
    ``kick_drift`` does for the integrated spheres."""
    step2 = 0.0
    drift2 = 0.0
    x = np.empty(3)
    for t in range(handles.shape[0]):
        h = handles[t]
        g = -1 - glued[h]
        om = table[g, OMEGA]
        ax, ay, az = axes[g, 0], axes[g, 1], axes[g, 2]
        dx = anchor[h, 0] - table[g, X0]
        dy = anchor[h, 1] - table[g, Y0]
        dz = anchor[h, 2] - table[g, Z0]
        c, s = math.cos(om * time), math.sin(om * time)
        ad = (ax * dx + ay * dy + az * dz) * (1.0 - c)
        rx = dx * c + (ay * dz - az * dy) * s + ax * ad  # R(Ω t)(x₀ − p₀)
        ry = dy * c + (az * dx - ax * dz) * s + ay * ad
        rz = dz * c + (ax * dy - ay * dx) * s + az * ad
        x[0] = table[g, X0] + table[g, VX] * time + rx
        x[1] = table[g, Y0] + table[g, VY] * time + ry
        x[2] = table[g, Z0] + table[g, VZ] * time + rz
        d2 = 0.0
        b2 = 0.0
        for a in range(3):
            if period[a] > 0.0:  # the image nearest to the previous centre
                x[a] -= period[a] * math.floor((x[a] - pos[h, a]) / period[a] + 0.5)
            m = x[a] - pos[h, a]
            d2 += m * m
            b = x[a] - build_pos[h, a]
            b2 += b * b
            pos[h, a] = x[a]
        vel[h, 0] = table[g, VX] + om * (ay * rz - az * ry)
        vel[h, 1] = table[g, VY] + om * (az * rx - ax * rz)
        vel[h, 2] = table[g, VZ] + om * (ax * ry - ay * rx)
        if omega is not None:
            omega[h, 0], omega[h, 1], omega[h, 2] = om * ax, om * ay, om * az
        if not d2 <= step2:  # larger, or NaN
            step2 = d2 if d2 == d2 else np.inf
        if not b2 <= drift2:
            drift2 = b2 if b2 == b2 else np.inf
    return np.array([step2, drift2])


def glued_walls(glued, n: int, walls: tuple, n_box: int) -> np.ndarray | None:
    """The ``glued`` field of a scene's ``n`` spheres: per sphere the id (< 0) of the wall it
    moves with, 0 for none, from ``Scene.glued`` (per sphere the index k of the scene's wall
    ``walls[k]``, −1 for none; None: no glued spheres) and the box's ``n_box`` faces (the
    scene's walls follow them in the wall table). Refuses (:class:`SceneError`, one line)
    anything else and a wall whose kind cannot carry spheres (``WallKind.glued``: a mesh)."""
    if glued is None:
        return None
    try:
        k = np.asarray(glued)
        ok = k.shape == (n,) and k.dtype.kind in "iu"
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise SceneError(f"glued = {str(glued)[:60]}: expected {n} integers, one per sphere "
                         "(the index of the scene's wall it moves with, -1: none)")
    bad = np.flatnonzero((k < -1) | (k >= len(walls)))
    if bad.size:
        raise SceneError(f"glued[{bad[0]}] = {int(k[bad[0]])}: not one of the scene's "
                         f"{len(walls)} walls (0 to {len(walls) - 1}) or -1 (not glued)")
    for w in np.unique(k[k >= 0]).tolist():
        kind = walls[w]["type"] if isinstance(walls[w], dict) else walls[w].type
        get = walls[w].get if isinstance(walls[w], dict) else lambda k: getattr(walls[w], k)
        if any(get(k) for k in ("translation", "rotation", "servo")):
            raise SceneError(f"glued: spheres glued to walls[{w}], which follows a program or a "
                             "servo: spheres move with a wall's constant motion only")
        if kind in KINDS and not KINDS[kind].glued:
            riders = [f"a {name}" for name, spec in KINDS.items() if spec.glued]
            raise SceneError(f"glued: spheres glued to walls[{w}], a {kind}: spheres move with "
                             f"{', '.join(riders[:-1])} or {riders[-1]} only")
    return np.where(k >= 0, -1 - (n_box + k), 0).astype(np.int64)


def glued_handles(flags, glued) -> np.ndarray:
    """Handles of the owned glued spheres, ascending (``glued`` None: none)."""
    if glued is None:
        return np.zeros(0, np.int64)
    return np.flatnonzero(((flags & OWNED) != 0) & ((flags & FIXED) != 0) & (glued != 0))


class GluedMotion(Hanger):
    """The glued spheres' motion, a component of the step: :meth:`place` puts this rank's
    glued spheres where their walls have them at a step (after the drift); it hangs on the
    neighbour lists (``pdyn.dynamics.neighbours.Hanger``) to find them again when the store
    changed (a rebuild that listed the rows afresh). ``table`` and ``axes``: the wall table
    and the walls' unit normals / axes (``pdyn.walls.WallSet``), ``clock`` the run's time
    (``pdyn.clock.Clock``), ``period`` (3,)
    the box's period per axis (0: not periodic)."""

    def __init__(self, store, table: np.ndarray, axes: np.ndarray, clock,
                 period: np.ndarray):
        self.table, self.axes, self.clock, self.period = table, axes, clock, period
        self.handles = np.zeros(0, np.int64)
        self.find(store)

    def find(self, store) -> None:
        """This rank's glued spheres in ``store`` now (:func:`glued_handles`)."""
        self.handles = glued_handles(store.flags,
                                     store.glued if "glued" in store.fields else None)

    def after_build(self, store, lists) -> None:
        if lists.relisted:
            self.find(store)

    def place(self, store, step: int) -> np.ndarray | None:
        """The glued spheres where their walls' motion has them at ``step`` (its time t):
        centre, velocity, spin; the largest squared move and drift (m²) as ``kick_drift``
        returns them, None without glued spheres on this rank."""
        if not self.handles.size:
            return None
        s = store
        return place_glued(s.pos, s.vel, s.omega if "omega" in s.fields else None, s.anchor,
                           s.glued, self.handles, self.table, self.axes, self.clock.time(step),
                           self.period, s.build_pos)


__all__ = ["place_glued", "glued_walls", "glued_handles", "GluedMotion"]
