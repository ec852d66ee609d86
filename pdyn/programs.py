"""Programs of time for walls: a wall's translation (m) or its rotation about its axis (rad) as
a constant velocity plus a sum of terms, each evaluated in closed form at the step's time t
(``pdyn.clock``) — its displacement since t = 0 and its exact derivative, the velocity — so
every rank and a restart get the same bits; and a servo's target, a piecewise-linear table of (t, value).

Terms (``[[walls]]`` ``translation`` and ``rotation``: lists of tables with ``type``; a
translation's vectors have 3 components, a rotation's 1, about the wall's axis or normal):

* ``sine`` — ``amplitude`` A (m or rad), ``frequency`` f (Hz), ``phase`` φ (rad, default 0):
  x(t) = A (sin(ω t + φ) − sin φ), u(t) = A ω cos(ω t + φ), ω = 2π f (LAMMPS ``fix move
  wiggle``, [LAMMPSfixmove]; a vibrated bed's plate);
* ``ramp`` — ``velocity`` V (m/s or rad/s), ``start`` t₀ < ``end`` t₁ (s): u = V s(t),
  s = clamp((t − t₀)/(t₁ − t₀), 0, 1) — at rest before t₀, growing linearly, held after
  t₁; x = V (t − t₀)²/(2 (t₁ − t₀)) on [t₀, t₁], V ((t₁ − t₀)/2 + t − t₁) after;
* ``table`` — ``times`` t₀ < t₁ < … (s) and ``velocities`` u₀, u₁, … (one per time): u
  linear between the times, u₀ before the first and the last after the last; x its exact
  integral from 0 (piecewise quadratic).

The largest speed a program reaches is bounded by the sum over its terms of each term's
largest (|A| ω, |V|, max |uₖ|; :meth:`Program.extremes`), what the neighbour lists' rebuild
interval and the fast-wall refusal read. Units: m, rad, s."""

from __future__ import annotations

import math

import numpy as np

from .values import BadValue, number, numbers, vector

#: the term types of a program
TERMS = ("sine", "ramp", "table")
#: each term type's fields: required, then optional with its default
_FIELDS = {"sine": (("amplitude", "frequency"), {"phase": 0.0}),
           "ramp": (("velocity", "start", "end"), {}),
           "table": (("times", "velocities"), {})}


def _values(name: str, value, dim: int) -> tuple:
    """``dim`` finite numbers (a rotation's one may be given as a number)."""
    if dim == 1 and not isinstance(value, (list, tuple, np.ndarray)):
        return (number(name, value),)
    arr = numbers(name, value, f"{dim} numbers")
    if arr.shape != (dim,) or not np.isfinite(arr).all():
        raise BadValue(name, value, f"expected {dim} finite numbers")
    return tuple(float(x) for x in arr)


def _term(name: str, term, dim: int) -> dict:
    """One term checked and normalised (floats, tuples), errors naming ``name.<field>``."""
    if not isinstance(term, dict):
        raise BadValue(name, term, f"expected a table with type ({', '.join(TERMS)})")
    kind = term.get("type")
    if kind not in TERMS:
        raise BadValue(f"{name}.type", kind, f"choose from {', '.join(TERMS)}")
    needed, optional = _FIELDS[kind]
    bad = sorted(set(term) - {"type", *needed, *optional})
    if bad:
        raise BadValue(f"{name}.{bad[0]}", term[bad[0]], f"not a field of a {kind} term "
                       f"(its fields: {', '.join((*needed, *optional))})")
    for k in needed:
        if k not in term:
            raise BadValue(f"{name}.{k}", None, f"required in a {kind} term")
    out = {"type": kind}
    if kind == "sine":
        out["amplitude"] = _values(f"{name}.amplitude", term["amplitude"], dim)
        out["frequency"] = number(f"{name}.frequency", term["frequency"], above=0)
        out["phase"] = number(f"{name}.phase", term.get("phase", 0.0))
    elif kind == "ramp":
        out["velocity"] = _values(f"{name}.velocity", term["velocity"], dim)
        out["start"] = number(f"{name}.start", term["start"], lo=0)
        out["end"] = number(f"{name}.end", term["end"], above=out["start"])
    else:
        times = numbers(f"{name}.times", term["times"], "a list of times")
        if times.ndim != 1 or times.size < 2 or not np.isfinite(times).all():
            raise BadValue(f"{name}.times", term["times"], "expected 2 or more finite times")
        if not np.all(np.diff(times) > 0):
            raise BadValue(f"{name}.times", term["times"], "must increase")
        vel = term["velocities"]
        if not isinstance(vel, (list, tuple, np.ndarray)) or len(vel) != times.size:
            raise BadValue(f"{name}.velocities", vel, f"expected {times.size} velocities, one "
                           "per time")
        out["times"] = tuple(float(t) for t in times)
        out["velocities"] = tuple(_values(f"{name}.velocities[{k}]", v, dim)
                                  for k, v in enumerate(vel))
    return out


def check_program(name: str, terms, dim: int) -> tuple:
    """A program's terms (a list of tables) checked and normalised: a tuple of dicts of floats
    and tuples; ``dim``: 3 (a translation) or 1 (a rotation). :class:`BadValue` naming
    ``name[k].<field>``."""
    if isinstance(terms, dict):
        terms = [terms]
    if not isinstance(terms, (list, tuple)):
        raise BadValue(name, terms, "expected a list of terms (tables with type)")
    return tuple(_term(f"{name}[{k}]", t, dim) for k, t in enumerate(terms))


class _Sine:
    def __init__(self, t: dict):
        self.a = np.array(t["amplitude"])
        self.w = 2.0 * math.pi * t["frequency"]
        self.phase = t["phase"]

    def __call__(self, time: float) -> tuple:
        arg = self.w * time + self.phase
        return (self.a * (math.sin(arg) - math.sin(self.phase)),
                self.a * (self.w * math.cos(arg)))

    def extremes(self) -> np.ndarray:
        return (self.a * self.w)[None]


class _Ramp:
    def __init__(self, t: dict):
        self.v = np.array(t["velocity"])
        self.t0, self.t1 = t["start"], t["end"]

    def __call__(self, time: float) -> tuple:
        span = self.t1 - self.t0
        if time <= self.t0:
            return np.zeros_like(self.v), np.zeros_like(self.v)
        if time < self.t1:
            a = time - self.t0
            return self.v * (a * a / (2.0 * span)), self.v * (a / span)
        return self.v * (0.5 * span + (time - self.t1)), self.v.copy()

    def extremes(self) -> np.ndarray:
        return self.v[None]


class _Table:
    def __init__(self, t: dict):
        self.t = np.array(t["times"])
        self.v = np.array(t["velocities"])
        h = np.diff(self.t)[:, None]
        # the integral of u from the first time to each time (trapezoids: u is linear)
        self.x = np.concatenate((np.zeros((1, self.v.shape[1])),
                                 np.cumsum(0.5 * h * (self.v[:-1] + self.v[1:]), axis=0)))
        self.zero = self._integral(0.0)[0]

    def _integral(self, time: float) -> tuple:
        """(the integral of u from the first time to ``time``, u(time))."""
        t, v, x = self.t, self.v, self.x
        if time <= t[0]:
            return v[0] * (time - t[0]), v[0].copy()
        if time >= t[-1]:
            return x[-1] + v[-1] * (time - t[-1]), v[-1].copy()
        k = int(np.searchsorted(t, time, side="right")) - 1
        a = time - t[k]
        slope = (v[k + 1] - v[k]) / (t[k + 1] - t[k])
        return x[k] + v[k] * a + slope * (0.5 * a * a), v[k] + slope * a

    def __call__(self, time: float) -> tuple:
        x, u = self._integral(time)
        return x - self.zero, u

    def extremes(self) -> np.ndarray:
        return self.v


_KINDS = {"sine": _Sine, "ramp": _Ramp, "table": _Table}


class Program:
    """A wall's translation (``dim`` 3) or rotation (``dim`` 1): the constant velocity
    ``constant`` plus the checked ``terms`` (:func:`check_program`), in their order."""

    def __init__(self, constant, terms):
        self.constant = np.atleast_1d(np.asarray(constant, float))
        self.terms = [_KINDS[t["type"]](t) for t in terms]

    def __call__(self, time: float) -> tuple[np.ndarray, np.ndarray]:
        """(displacement since t = 0, velocity) at ``time`` (s): the constant velocity's
        u t, then each term's, added in order."""
        x, u = self.constant * time, self.constant.copy()
        for term in self.terms:
            dx, du = term(time)
            x, u = x + dx, u + du
        return x, u

    def extremes(self) -> list[np.ndarray]:
        """Per term (the constant first) the velocities (K, dim) whose convex hull, scaled by
        at most 1, holds every velocity it takes: |u(t)| of any seminorm is at most the sum
        over terms of its largest over these."""
        return [self.constant[None]] + [t.extremes() for t in self.terms]

    def peak(self) -> float:
        """A bound of the largest speed |u(t)| it reaches (m/s or rad/s)."""
        return float(sum(np.linalg.norm(e, axis=1).max() for e in self.extremes()))


def check_target(name: str, value):
    """A servo's target: a number, or a table [[t, value], …] of increasing times (s) — a
    float, or a tuple of (t, value) pairs (checking it again gives it back)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return number(name, value)
    arr = numbers(name, value, "a number or a table [[t, value], ...]")
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1 or not np.isfinite(arr).all():
        raise BadValue(name, value, "expected a number or a table [[t, value], ...]")
    if not np.all(np.diff(arr[:, 0]) > 0):
        raise BadValue(name, value, "its times must increase")
    return tuple((float(t), float(v)) for t, v in arr)


def target_at(target, time: float) -> float:
    """A target (:func:`check_target`) at ``time`` (s): linear between its times, held before
    the first and after the last."""
    if isinstance(target, float):
        return target
    return float(np.interp(time, [p[0] for p in target], [p[1] for p in target]))


#: a servo's fields: its target (a force, or a pressure over an area), gain, speed limit and
#: (a mesh's) direction
SERVO = ("force", "pressure", "area", "gain", "max_speed", "direction")
#: the wall types a servo drives: a plane along its normal, a mesh along its direction, a
#: cylinder's radius
SERVO_KINDS = ("plane", "mesh", "cylinder")


def check_servo(name: str, value) -> dict:
    """A servo (``[[walls]]`` ``servo``): ``force`` (N), or ``pressure`` (Pa) with ``area``
    (m²; a cylinder's is its own), either a number or a table of time
    (:func:`check_target`); ``gain`` (m/(s·N)) and ``max_speed`` (m/s), both > 0; a mesh's
    ``direction`` (3 numbers, not zero; kept as given, made a unit vector where used). Checked
    and normalised, whatever the wall (:func:`check_servo_kind` checks it against the wall);
    :class:`BadValue` naming ``name.<field>``."""
    if not isinstance(value, dict):
        raise BadValue(name, value, f"expected a table with {', '.join(SERVO)}")
    bad = sorted(set(value) - set(SERVO))
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"unknown key (known: "
                       f"{', '.join(SERVO)})")
    if ("force" in value) == ("pressure" in value):
        raise BadValue(f"{name}.force", value.get("force"), "give force or pressure (not both)")
    out = {}
    if "pressure" in value:
        out["pressure"] = check_target(f"{name}.pressure", value["pressure"])
        if "area" in value:
            out["area"] = number(f"{name}.area", value["area"], above=0)
    else:
        if "area" in value:
            raise BadValue(f"{name}.area", value["area"], "only with pressure")
        out["force"] = check_target(f"{name}.force", value["force"])
    for k in ("gain", "max_speed"):
        if k not in value:
            raise BadValue(f"{name}.{k}", None, "required in a servo")
        out[k] = number(f"{name}.{k}", value[k], above=0)
    if "direction" in value:
        d = vector(f"{name}.direction", value["direction"])
        if not math.hypot(*d) > 0.0:
            raise BadValue(f"{name}.direction", list(d), "must not be zero")
        out["direction"] = d
    return out


def check_servo_kind(name: str, kind: str, servo: dict, finite: bool = True,
                     direction: tuple | None = None) -> None:
    """A checked ``servo`` (:func:`check_servo`) fits a wall of type ``kind``: a plane's and
    a cylinder's take no direction, a mesh's needs one (a stage's may omit it: the mesh keeps
    ``direction``, its wall's, and may not give another); a pressure needs an ``area`` on a
    plane or a mesh, none on a cylinder (its own, 2πRL), which must be ``finite``.
    :class:`BadValue` naming ``name`` or ``name.<field>``."""
    if kind not in SERVO_KINDS:
        raise BadValue(name, servo, f"a servo drives a plane, a mesh or a cylinder's radius, "
                       f"not a {kind}")
    given = servo.get("direction")
    if kind == "mesh":
        if given is None and direction is None:
            raise BadValue(f"{name}.direction", None, "required for a mesh's servo (the "
                           "direction it moves along, toward the spheres)")
        if given is not None and direction is not None and given != tuple(direction):
            raise BadValue(f"{name}.direction", list(given), "a stage's servo keeps the "
                           f"mesh's direction {list(direction)} (omit it)")
    elif given is not None:
        raise BadValue(f"{name}.direction", list(given), f"only for a mesh (a {kind}'s servo "
                       + ("moves it along its normal)" if kind == "plane" else
                          "changes its radius)"))
    if "pressure" not in servo:
        return
    if kind == "cylinder":
        if "area" in servo:
            raise BadValue(f"{name}.area", servo["area"], "a cylinder's area is its own, "
                           "2πRL of its radius and length (give pressure alone)")
        if not finite:
            raise BadValue(f"{name}.pressure", _shown(servo["pressure"]), "an infinite "
                           "cylinder has no area: give force, or the cylinder a length")
    elif "area" not in servo:
        raise BadValue(f"{name}.area", None, "required with pressure (m²)")


def _shown(target):
    """A checked target as the config gave it (a number, or a list of [t, value])."""
    return target if isinstance(target, float) else [list(p) for p in target]


def servo_target(servo: dict, time: float, area: float | None = None) -> float:
    """The load (N) a servo (:func:`check_servo`) holds at ``time`` (s): its force, or its
    pressure times its area (``area``, m², when given: a cylinder's now)."""
    if "force" in servo:
        return target_at(servo["force"], time)
    return target_at(servo["pressure"], time) * (servo["area"] if area is None else area)


def check_motion(kind: str, velocity, translation, rotation, servo,
                 finite: bool = True) -> None:
    """What a wall of type ``kind`` may combine: a mesh turns at a constant angular velocity
    only (its frame follows Ω t); a servo (:func:`check_servo_kind`; ``finite``: a
    cylinder's length is) with no translation besides. :class:`BadValue`, one line."""
    if kind == "mesh" and rotation:
        raise BadValue("walls.rotation", list(rotation), "a mesh turns at a constant "
                       "angular_velocity only")
    if servo is None:
        return
    check_servo_kind("walls.servo", kind, servo, finite)
    if translation or any(velocity):
        raise BadValue("walls.servo", servo, "a servo moves the wall (a cylinder's radius) "
                       "itself: give no velocity or translation with it")


__all__ = ["TERMS", "SERVO", "SERVO_KINDS", "Program", "check_program", "check_target",
           "target_at", "check_servo", "check_servo_kind", "servo_target", "check_motion"]
