"""Scenes of issue 44's fast walls: six resting spheres (r 0.05 m, E 1 MPa, glass-like
density) in a row along x, no gravity, dt 0.8 ms (the default is 0.80 ms; the lists' skin is
0.6 r, so half the skin is 0.3 r a step), swept by one wall of each kind whose surface moves
``per_step`` radii a step: a plate of two triangles, a plane, an open tube (axis along x)
and a cone, all moving across the row (+y), an infinite cylinder moving across its axis, a
paddle (a mesh blade turning about z) sweeping twelve spheres on a ray; and walls whose
motion stays within their surface (a plane sliding along x, a drum and a cone turning about
their axes), which no speed makes pass a sphere. Used by ``tests/test_bad_input.py``
(start-up refusals) and ``tests/test_faults.py`` (runs)."""

import math

import numpy as np

from pdyn.config import SimulationConfig, config_from_dict

R, DT = 0.05, 8e-4  # sphere radius (m), time step (s)
ROW = np.column_stack((0.2 + 0.15 * np.arange(6), np.zeros(6), np.full(6, 0.3)))
PADDLE = 1.4  # the paddle's length (m): its tip's distance from its axis
#: the paddle's twelve spheres: on a ray 20° ahead of the blade, 0.105 m apart
RAY = np.column_stack((np.cos(math.radians(20.0)) * (0.2 + 0.105 * np.arange(12)),
                       np.sin(math.radians(20.0)) * (0.2 + 0.105 * np.arange(12)),
                       np.full(12, 0.3)))


def _across(kind: str, v: float) -> dict:
    """A wall of ``kind`` just below the row (y < 0), moving +y at ``v`` m/s."""
    moving = {"velocity": [0.0, v, 0.0]}
    if kind == "plate":
        y = -R - 0.01
        return {"type": "mesh", "vertices": [[0.0, y, 0.0], [1.2, y, 0.0], [1.2, y, 0.6],
                                             [0.0, y, 0.6]],
                "triangles": [[0, 1, 2], [0, 2, 3]], **moving}
    if kind == "plane":
        return {"type": "plane", "point": [0.0, -R - 0.01, 0.0], "normal": [0.0, 1.0, 0.0],
                **moving}
    if kind == "tube":
        return {"type": "cylinder", "point": [0.575, -R - 0.11, 0.3], "axis": [1.0, 0.0, 0.0],
                "radius": 0.1, "length": 1.2, **moving}
    if kind == "cone":
        return {"type": "cone", "point": [0.0, -R - 0.11, 0.3], "axis": [1.0, 0.0, 0.0],
                "radius_lo": 0.1, "radius_hi": 0.1001, "lo": 0.0, "hi": 1.2, **moving}
    if kind == "cylinder":  # infinite, along z: moving across its axis
        return {"type": "cylinder", "point": [0.575, -R - 0.31, 0.0], "axis": [0.0, 0.0, 1.0],
                "radius": 0.3, "inside": False, **moving}
    raise ValueError(kind)


#: walls that approach the spheres: kind -> wall at a speed of ``per_step`` radii a step
APPROACHING = ("plate", "plane", "tube", "cone", "cylinder", "paddle")
#: walls whose surface stays in place: never refused
WITHIN = {
    "conveyor": lambda v: {"type": "plane", "point": [0.0, -R, 0.0], "normal": [0.0, 1.0, 0.0],
                           "velocity": [v, 0.0, 0.0]},
    "drum": lambda v: {"type": "cylinder", "point": [0.575, 0.0, 0.3], "axis": [1.0, 0.0, 0.0],
                       "radius": 0.2, "angular_velocity": v / 0.2},
    "turning cone": lambda v: {"type": "cone", "point": [0.0, 0.0, 0.3],
                               "axis": [1.0, 0.0, 0.0], "radius_lo": 0.2, "radius_hi": 0.3,
                               "lo": -0.1, "hi": 1.3, "angular_velocity": v / 0.3},
}


def wall(kind: str, per_step: float, allow_fast: bool = False) -> dict:
    """The wall ``kind`` whose fastest surface point moves ``per_step`` radii a step."""
    v = per_step * R / DT
    if kind == "paddle":
        w = {"type": "mesh", "vertices": [[0.0, 0.0, 0.0], [PADDLE, 0.0, 0.0],
                                          [PADDLE, 0.0, 0.6], [0.0, 0.0, 0.6]],
             "triangles": [[0, 1, 2], [0, 2, 3]], "axis": [0.0, 0.0, 1.0],
             "angular_velocity": v / PADDLE}
    elif kind in WITHIN:
        w = WITHIN[kind](v)
    else:
        w = _across(kind, v)
    return {**w, "allow_fast": True} if allow_fast else w


def doc(kind: str, per_step: float, allow_fast: bool = False) -> dict:
    """The run as a config dict (TOML-ready): the spheres (the paddle's ray, else the row)
    with the wall ``kind``."""
    pos = RAY if kind == "paddle" else ROW
    return {"contact": {"youngs_modulus": 1e6, "restitution": 0.5},
            "box": {"lo": [-2.0, -2.0, -2.0], "hi": [2.0, 2.0, 2.0],
                    "boundary": ["open", "open", "open"]},
            "particles": {"positions": pos.tolist(), "radii": [R] * len(pos),
                          "density": 2500.0},
            "walls": [wall(kind, per_step, allow_fast)], "gravity": [0.0, 0.0, 0.0],
            "dt": DT, "progress": False}


def config(kind: str, per_step: float, allow_fast: bool = False) -> SimulationConfig:
    """:func:`doc` as a config."""
    return config_from_dict(doc(kind, per_step, allow_fast))


def steps(kind: str, per_step: float) -> int:
    """Steps for the wall to sweep through the spheres' place: 0.35 m across the row, an
    eighth of a turn of the paddle (its blade 25° past the ray)."""
    travel = 0.25 * math.pi * PADDLE if kind == "paddle" else 0.35
    return int(math.ceil(travel / (per_step * R)))


def passed(sim, kind: str) -> list[int]:
    """Ids of the spheres on the wrong side of the wall now: behind the plate or the plane,
    inside the tube or the cone or behind its axis, behind the paddle's blade (less far
    round than it, within its reach)."""
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    pos = s.pos[h]
    w = sim.config.walls[0]
    t = sim.time
    if kind == "paddle":
        angle = np.arctan2(pos[:, 1], pos[:, 0])
        rho = np.hypot(pos[:, 0], pos[:, 1])
        bad = (angle < w.angular_velocity * t) & (rho < PADDLE + R)
    elif kind in ("plate", "plane"):
        bad = pos[:, 1] < (w.vertices[0][1] if kind == "plate" else w.point[1]) + \
            w.velocity[1] * t
    else:  # inside the tube, the cone or the cylinder, or behind its axis
        y = w.point[1] + w.velocity[1] * t
        bad = pos[:, 1] < y
        if kind == "cylinder":
            bad |= np.hypot(pos[:, 0] - w.point[0], pos[:, 1] - y) < w.radius
        else:
            bad |= np.hypot(pos[:, 1] - y, pos[:, 2] - w.point[2]) < 0.1
    return s.gid[h][bad].tolist()
