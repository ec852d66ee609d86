"""Moving walls as a component of the step: translating walls' points and turning meshes'
frames put where they are at a step, from the step count (units: m, s).

A wall's motion is closed-form (point p₀ + v t, a mesh's frame turned by Ω t about its axis,
``pdyn.walls.WallSet``), computed from t = step · dt, never accumulated: every rank and a
restart get the same bits. The lists reach half the skin farther for moving walls
(``WallSet.set_reach``) and the schedule rebuilds before one has moved that far
(:meth:`WallMotion.every`).
"""

from __future__ import annotations

import numpy as np


class WallMotion:
    """The walls of ``wallset`` (``pdyn.walls.WallSet``) moving with time step ``dt`` (s)."""

    def __init__(self, wallset, dt: float):
        self.wallset, self.dt = wallset, float(dt)

    def advance(self, store, walls: np.ndarray, step: int) -> None:
        """Translating walls (their handles ``walls``, in table order) to their place at
        ``step`` (p₀ + v · step·dt) in ``store``, turning meshes' frames to that time."""
        time = step * self.dt
        if self.wallset.translating:
            store.pos[walls] = self.wallset.points(time)
        self.wallset.turn(time)

    def every(self, skin: float, r_max: float = 0.0) -> int:
        """Steps between forced rebuilds so that no wall moves more than ``skin``/2 (m)
        between them, relative to spheres of radius at most ``r_max`` (m); 0: none needed
        (``WallSet.rebuild_every``)."""
        return self.wallset.rebuild_every(skin, self.dt, r_max)
