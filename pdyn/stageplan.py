"""Staged runs (``[[stages]]``): each stage's end and the changes it makes at its start,
checked and normalised, with errors naming ``stages[k].<field>`` (the run that follows them:
``pdyn.stages``; docs/stages.md).

A stage ends by one of

* ``duration`` (s): after round(duration / dt) steps (at least one, dt the stage's) from its
  start;
* ``time`` (s): at the first step whose time t (``pdyn.clock``: step · dt until a stage
  changes dt) reaches it;
* ``kinetic_energy`` (J): when the mean kinetic energy per sphere (translational plus
  rotational) is below it — at rest;
* ``wall_force = {wall = k, force = F}`` (N): when the load on ``[[walls]]`` number k (from 0)
  reaches F > 0 (a servo wall's own load, ``pdyn.dynamics.wallmotion``; another wall's the
  sum of its contacts' normal forces);
* ``mass_out`` (kg): when the mass that has left through the outlets since the run's start
  reaches it (a sum over the ranks rounded once per drain: the same on any rank count);
* ``strain = {z = ε}``: when the box's length along an axis the stage's own ``box`` strains
  at a fixed rate ε̇ has changed by L / L_s − 1 = (1 + ε̇ dt)^n − 1 = ε since its start (n
  from the step count: a duration in closed form);

a condition (the last three) is checked every ``check_every`` steps (default 100), and
``max_duration`` (s) ends the stage even if it never holds (said on rank 0). The last stage
may give no end: it runs as long as the run does.

At its start a stage may set ``gravity`` (m/s², 3 numbers); ``walls``, a list of tables
``{wall = k, ...}`` (k: the config's ``[[walls]]`` from 0; a named scene's own walls come
before them in the run) giving that wall a new motion from the stage's start — ``velocity``,
``angular_velocity``, ``translation``, ``rotation`` (``pdyn.programs``; the wall continues from
where it is, its program's time counted from the stage's start) or, for a servo wall (a
plane, a mesh, a cylinder), a new ``servo`` (its target table's times counted from the
stage's start; a mesh keeps its direction); and ``contact`` (one
material) or ``materials`` (``{name = ..., ...}``) with new ``friction``,
``rolling_friction`` or ``restitution``; and ``outlet = "open"`` or ``"closed"``: every
insertion outlet from the stage's start on, whatever its ``outlet_start``; ``dt`` (s), the
time step from the stage's start on (``pdyn.clock``: t = t_s + (n − s) · dt from then); and
``box``, a table ``{target_pressure = {...}, strain_rate = {...}, max_strain_rate = ...,
pressure_gain = ...}`` giving every periodic axis of a box whose lengths change its control
from the stage's start (``pdyn.dynamics.cell``: an axis named in neither table keeps its
length; the gain and largest rate default to those in force). The same changes, without an
end, are what ``Simulation.change`` makes between runs (:func:`check_change`).
Units: SI."""

from __future__ import annotations

from typing import NamedTuple

from .programs import check_program, check_servo
from .values import BadValue, axes, integer, number, text, vector

#: what ends a stage (one of them; none: the last stage runs to the run's end)
ENDS = ("duration", "time", "kinetic_energy", "wall_force", "mass_out", "strain")
#: the ends that are conditions, checked every ``check_every`` steps
CONDITIONS = ("kinetic_energy", "wall_force", "mass_out")
#: what a stage may set the outlets to
OUTLETS = ("open", "closed")
#: the contact values a stage may change (the time step and the spheres' rotation depend on
#: none of them)
CONTACT_CHANGES = ("friction", "rolling_friction", "restitution")
#: a wall's motion a stage may set
WALL_CHANGES = ("velocity", "angular_velocity", "translation", "rotation", "servo")
#: what a stage (or ``Simulation.change``) may change at its start
CHANGES = ("gravity", "walls", "contact", "materials", "outlet", "dt", "box")
#: a new control of the box's lengths (a stage's ``box``, ``Simulation.set_box``)
BOX_CHANGES = ("target_pressure", "strain_rate", "max_strain_rate", "pressure_gain")
FIELDS = ("name", *ENDS, "check_every", "max_duration", *CHANGES)


class Stage(NamedTuple):
    """One checked stage: its ``name``; ``end`` (kind, value) or None; ``check_every``
    (steps); ``max_duration`` (s or None); the changes at its start: ``gravity`` (or None),
    ``walls`` (dicts with ``wall`` and the new motion), ``contact`` (a dict or None),
    ``materials`` (dicts with ``name``), ``outlet`` (``"open"``, ``"closed"`` or None),
    ``dt`` (s or None), ``box`` (a dict of :data:`BOX_CHANGES`, per-axis values as 3-tuples,
    or None)."""

    name: str
    end: tuple | None
    check_every: int
    max_duration: float | None
    gravity: tuple | None
    walls: tuple
    contact: dict | None
    materials: tuple
    outlet: str | None = None
    dt: float | None = None
    box: dict | None = None

    def table(self) -> dict:
        """The stage as a ``[[stages]]`` table (what :func:`check_stages` reads back to it)."""
        out = {"name": self.name, "check_every": self.check_every, "walls": list(self.walls),
               "materials": list(self.materials)}
        if self.end is not None:
            out[self.end[0]] = self.end[1]
        for k in ("max_duration", "gravity", "contact", "outlet", "dt", "box"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out

    def changes(self) -> dict:
        """The changes it makes, as a table (what :func:`check_change` reads back to them)."""
        out = {k: getattr(self, k) for k in CHANGES if getattr(self, k) not in (None, ())}
        for k in ("walls", "materials"):
            if k in out:
                out[k] = list(out[k])
        return out


def _contact(name: str, value: dict, named: bool) -> dict:
    """A stage's new contact values (``contact`` or one of ``materials``)."""
    if not isinstance(value, dict):
        raise BadValue(name, value, "expected a table")
    known = (("name",) if named else ()) + CONTACT_CHANGES
    bad = sorted(set(value) - set(known))
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"a stage changes only "
                       f"{', '.join(known)}")
    out = {k: number(f"{name}.{k}", value[k], lo=0) for k in CONTACT_CHANGES if k in value}
    if "restitution" in out and not 0.0 < out["restitution"] <= 1.0:
        raise BadValue(f"{name}.restitution", value["restitution"], "must be in (0, 1]")
    if named:
        if "name" not in value:
            raise BadValue(f"{name}.name", None, "required (the material's name)")
        out["name"] = text(f"{name}.name", value["name"])
    return out


def _wall(name: str, value: dict) -> dict:
    """A stage's new motion of one wall."""
    if not isinstance(value, dict):
        raise BadValue(name, value, "expected a table {wall = k, ...}")
    bad = sorted(set(value) - {"wall", *WALL_CHANGES})
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"unknown key (known: wall, "
                       f"{', '.join(WALL_CHANGES)})")
    if "wall" not in value:
        raise BadValue(f"{name}.wall", None, "required: which [[walls]] (from 0)")
    out = {"wall": integer(f"{name}.wall", value["wall"], lo=0)}
    if "servo" in value:
        if len(value) > 2:
            raise BadValue(f"{name}.servo", value["servo"], "give a servo alone (it moves the "
                           "wall itself)")
        out["servo"] = check_servo(f"{name}.servo", value["servo"])
        return out
    if len(value) == 1:
        raise BadValue(name, value, f"give one of {', '.join(WALL_CHANGES)}")
    out["velocity"] = vector(f"{name}.velocity", value.get("velocity", (0.0, 0.0, 0.0)))
    out["angular_velocity"] = number(f"{name}.angular_velocity",
                                     value.get("angular_velocity", 0.0))
    out["translation"] = check_program(f"{name}.translation", value.get("translation", ()), 3)
    out["rotation"] = check_program(f"{name}.rotation", value.get("rotation", ()), 1)
    return out


def box_axes(name: str, value: dict) -> dict:
    """The ``target_pressure`` (Pa, > 0) and ``strain_rate`` (1/s) tables of ``value`` (the
    table ``name``; a missing one: none) per axis as 3-tuples (None: not given), one of them
    per axis at most (:class:`BadValue` otherwise)."""
    out = {}
    for key, above, note in (("target_pressure", 0.0, "Pa, compression positive"),
                             ("strain_rate", None, "1/s")):
        given = axes(f"{name}.{key}", value.get(key, (None,) * 3))
        out[key] = tuple(None if v is None else number(f"{name}.{key}.{'xyz'[a]}", v,
                                                       above=above, note=note)
                         for a, v in enumerate(given))
    for a, (p, r) in enumerate(zip(out["target_pressure"], out["strain_rate"])):
        if p is not None and r is not None:
            raise BadValue(f"{name}.strain_rate.{'xyz'[a]}", r, "the axis follows "
                           f"{name}.target_pressure.{'xyz'[a]} = {p!r} (an axis has one)")
    return out


def _box(name: str, value) -> dict:
    """A new control of the box's lengths: ``target_pressure`` (Pa, > 0) and
    ``strain_rate`` (1/s) per axis (3-tuples, None: not given; one per axis at most) and,
    if given, ``max_strain_rate`` and ``pressure_gain`` (1/s, > 0)."""
    if not isinstance(value, dict):
        raise BadValue(name, value, "expected a table {target_pressure = {...}, strain_rate "
                       "= {...}}")
    bad = sorted(set(value) - set(BOX_CHANGES))
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"unknown key (known: "
                       f"{', '.join(BOX_CHANGES)})")
    out = box_axes(name, value)
    for key in ("max_strain_rate", "pressure_gain"):
        if key in value:
            out[key] = number(f"{name}.{key}", value[key], above=0.0)
    return out


def _strain(name: str, value, box: dict | None) -> dict:
    """A ``strain`` end: one axis, a strain ε > −1 of the sign of the rate the stage's own
    ``box`` strains that axis at."""
    given = axes(name, value)
    named = [a for a, v in enumerate(given) if v is not None]
    if not isinstance(value, dict) or len(named) != 1:
        raise BadValue(name, value, "expected one axis, e.g. {z = -0.2}")
    a = named[0]
    eps = number(f"{name}.{'xyz'[a]}", given[a], above=-1.0)
    rate = None if box is None else box["strain_rate"][a]
    if rate is None or rate * eps <= 0.0:
        raise BadValue(f"{name}.{'xyz'[a]}", eps, "needs the stage's box to strain that axis "
                       "at a fixed rate of the same sign (box = {strain_rate = {...}})")
    return {"xyz"[a]: eps}


def _stage(name: str, value, last: bool) -> dict:
    if not isinstance(value, dict):
        raise BadValue(name, value, "expected a table [[stages]]")
    bad = sorted(set(value) - set(FIELDS))
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"unknown key (known: "
                       f"{', '.join(FIELDS)})")
    ends = [k for k in ENDS if k in value]
    if len(ends) > 1:
        raise BadValue(f"{name}.{ends[1]}", value[ends[1]], f"a stage has one end, it gives "
                       f"{ends[0]} too")
    if not ends and not last:
        raise BadValue(name, value, f"give its end: one of {', '.join(ENDS)} (only the last "
                       "stage may run to the run's end)")
    out = {"name": text(f"{name}.name", value.get("name", name)), "end": None,
           "check_every": integer(f"{name}.check_every", value.get("check_every", 100), lo=1),
           "max_duration": None, **_changes(name, value)}
    if ends:
        end = ends[0]
        v = value[end]
        if end == "wall_force":
            if not isinstance(v, dict) or sorted(v) != ["force", "wall"]:
                raise BadValue(f"{name}.wall_force", v, "expected {wall = k, force = F}")
            v = {"wall": integer(f"{name}.wall_force.wall", v["wall"], lo=0),
                 "force": number(f"{name}.wall_force.force", v["force"], above=0)}
        elif end == "time":
            v = number(f"{name}.time", v, lo=0)
        elif end == "strain":
            v = _strain(f"{name}.strain", v, out["box"])
        else:
            v = number(f"{name}.{end}", v, above=0)
        out["end"] = (end, v)
    if "max_duration" in value:
        if out["end"] is None or out["end"][0] not in CONDITIONS:
            raise BadValue(f"{name}.max_duration", value["max_duration"], "only with a "
                           f"condition ({', '.join(CONDITIONS)})")
        out["max_duration"] = number(f"{name}.max_duration", value["max_duration"], above=0)
    return Stage(**out)


def _changes(name: str, value: dict) -> dict:
    """The changes a stage (or a ``Simulation.change``) of table ``value`` makes, checked."""
    out = {"gravity": None, "walls": (), "contact": None, "materials": (), "outlet": None,
           "dt": None, "box": _box(f"{name}.box", value["box"]) if "box" in value else None}
    if "dt" in value:
        out["dt"] = number(f"{name}.dt", value["dt"], above=0)
    if "gravity" in value:
        out["gravity"] = vector(f"{name}.gravity", value["gravity"])
    if "outlet" in value:
        out["outlet"] = text(f"{name}.outlet", value["outlet"])
        if out["outlet"] not in OUTLETS:
            raise BadValue(f"{name}.outlet", value["outlet"], "expected \"open\" or "
                           "\"closed\"")
    walls = value.get("walls", ())
    if not isinstance(walls, (list, tuple)):
        raise BadValue(f"{name}.walls", walls, "expected a list of tables {wall = k, ...}")
    out["walls"] = tuple(_wall(f"{name}.walls[{i}]", w) for i, w in enumerate(walls))
    seen = [w["wall"] for w in out["walls"]]
    if len(set(seen)) < len(seen):
        raise BadValue(f"{name}.walls", walls, "a wall given twice")
    if "contact" in value:
        out["contact"] = _contact(f"{name}.contact", value["contact"], named=False)
    mats = value.get("materials", ())
    if not isinstance(mats, (list, tuple)):
        raise BadValue(f"{name}.materials", mats, "expected a list of tables {name = ...}")
    out["materials"] = tuple(_contact(f"{name}.materials[{i}]", m, named=True)
                             for i, m in enumerate(mats))
    return out


def check_change(name: str, value: dict) -> Stage:
    """A change made between runs (``Simulation.change``: the fields of :data:`CHANGES`, as a
    stage's) as a :class:`Stage` without an end; :class:`BadValue` naming ``<name>.<field>``."""
    bad = sorted(set(value) - set(CHANGES))
    if bad:
        raise BadValue(f"{name}.{bad[0]}", value[bad[0]], f"unknown change (known: "
                       f"{', '.join(CHANGES)})")
    return Stage(name=name, end=None, check_every=1, max_duration=None,
                 **_changes(name, value))


def shift_walls(plan: tuple, n: int) -> tuple:
    """``plan`` with every wall index moved by ``n`` (a scene's ``n`` walls put before the
    config's: ``pdyn.components.enclosure``)."""
    out = []
    for stage in plan:
        end = stage.end
        if end is not None and end[0] == "wall_force":
            end = (end[0], {**end[1], "wall": end[1]["wall"] + n})
        out.append(stage._replace(end=end, walls=tuple({**w, "wall": w["wall"] + n}
                                                       for w in stage.walls)))
    return tuple(out)


def check_stages(value) -> tuple:
    """``[[stages]]`` (a list of tables) as :class:`Stage` records; :class:`BadValue` naming
    ``stages[k].<field>``. Checking it again gives it back."""
    if not isinstance(value, (list, tuple)):
        raise BadValue("stages", value, "expected a list of tables [[stages]]")
    if all(isinstance(s, Stage) for s in value):
        return tuple(value)  # already checked
    return tuple(_stage(f"stages[{k}]", s, k == len(value) - 1) for k, s in enumerate(value))


__all__ = ["Stage", "BOX_CHANGES", "ENDS", "CONDITIONS", "CHANGES", "CONTACT_CHANGES",
           "OUTLETS", "WALL_CHANGES", "box_axes", "check_stages", "check_change", "shift_walls"]
