"""Staged runs as a component of the step: which stage runs, when it ends, and the changes the
next one makes (the plan: ``pdyn.stageplan``; docs/stages.md).

A stage's end is decided at the end of a step, after its force pass and before its writers: a
``duration`` or a ``time`` from the step count alone; a condition (``kinetic_energy`` per
sphere below a value, a wall's load reaching a force, the mass out of the outlets reaching a
value) every ``check_every`` steps from the stage's start, from sums that are exact (Shewchuk
expansions, ``math.fsum``, long accumulators: the same bits on any rank count, so every rank
ends the stage at the same step). The next stage's changes then apply from the next step on:
gravity; the outlets opened or closed; a wall's new motion, continuing from where it is
(``WallSet.reprogram``: p(t) = p(t_s) + x(t − t_s), t_s the stage's start) or a servo's new
target (``Servo.retarget``, its table's times from t_s); a new contact law with the changed
friction, rolling friction or restitution (the time step depends on none of them); a new time
step (``pdyn.clock.Clock.switch``: the step's time piecewise, t_s + (n − s) dt); the box's
new control (``CellControl.set``, its gain and largest rate by default those in force: its
fixed strain rates from the next step on). A ``strain`` end is a duration in closed form: n =
⌈ln(1 + ε) / ln(1 + ε̇ dt)⌉ steps. The same changes made from Python between runs
(``Simulation.change``) go through the same path (:class:`Changes`). Everything a stage did
follows from the steps the stages started at: a checkpoint keeps them (the optional attribute
``stages``; the changes made from Python and the run's own dt in ``changes``) and a restart
applies the same changes at the same steps (the same bits as the run that went on). Units:
SI."""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import numpy as np

from .config import ConfigError, SimulationConfig
from .dynamics.contact import ContactLaw
from .dynamics.wallmotion import wall_loads
from .fields.exact import exact_total
from .io.thermo import energy_partials
from .programs import Program
from .stageplan import CONDITIONS, check_change
from .values import BadValue


def _say(line: str) -> None:
    """A line on stdout that does not break a progress bar."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def plan_changes(changes, wallset, clock) -> None:
    """Every change's wall motions (stages', or one made from Python) counted in
    ``wallset``'s speeds from now (``WallSet.plan``) and its time step in ``clock``'s
    largest (``Clock.largest``): the lists' reach, their rebuild interval, the overlap watch
    and the fast-wall refusal cover the fastest."""
    for change in changes:
        for w in change.walls:
            row = wallset.n_box + w["wall"]
            if "servo" in w:
                wallset.plan(row, Program(np.zeros(3), ()), w["servo"]["max_speed"])
            else:
                wallset.plan(row, Program(w["velocity"], w["translation"]))
        if change.dt is not None:
            clock.largest = max(clock.largest, change.dt)


def changed_law(config: SimulationConfig, contact_config, materials: tuple, change,
                where: str, rotating: bool) -> tuple:
    """(contact config, materials, law) after ``change`` (a ``pdyn.stageplan.Stage``, named
    ``where``) sets ``contact`` or ``materials`` values over ``contact_config`` and
    ``materials`` (those in force before it). A change that would switch the spheres' rotation
    (``rotating``: the run's) on or off is refused (``ConfigError``): the run's fields are
    set."""
    if change.contact:
        contact_config = replace(contact_config, **change.contact)
    new = {m["name"]: {f: v for f, v in m.items() if f != "name"} for m in change.materials}
    materials = tuple(replace(m, **new[m.name]) if m.name in new else m for m in materials)
    law = ContactLaw.from_config(contact_config, **config.with_(materials=materials)
                                 .material_pairs(contact_config))
    if law.rotating != rotating:
        field = "materials" if change.materials else "contact"
        raise ConfigError(f"{where}.{field}: sets friction and rolling friction "
                          f"{'to 0' if rotating else 'above 0'}, which switches the spheres' "
                          "rotation " + ("off" if rotating else "on")
                          + " (the run's fields are set at its start)")
    return contact_config, materials, law


def check_laws(plan: tuple, config: SimulationConfig, contact_config, law: ContactLaw) -> None:
    """Refuse (``ConfigError``) a stage whose contact changes (with those of the stages before
    it) would switch the spheres' rotation on or off (:func:`changed_law`): before the run's
    first step."""
    materials = config.materials
    for k, stage in enumerate(plan):
        if stage.contact or stage.materials:
            contact_config, materials, _ = changed_law(config, contact_config, materials,
                                                       stage, f"stages[{k}]", law.rotating)


class Changes:
    """What changes a run after its start, through one path (:meth:`apply`): each stage's
    changes at its start (:class:`Stages`) and those made from Python between runs
    (``Simulation.change``, kept in :attr:`made` as (step, change)) — of ``gravity`` (m/s²,
    changed in place), the walls of ``wallset`` and the servos of ``wall_motion``, the law of
    ``contact`` (rebuilt from ``config``'s ``contact_config`` and materials with every change
    so far), the outlets of ``inserter``, the time step of ``clock`` (``pdyn.clock``) and the
    control of ``cell`` (``pdyn.dynamics.cell.CellControl``; None: the box keeps its size).
    ``state``: a checkpoint's (:meth:`state`; None: the run's start)."""

    def __init__(self, config: SimulationConfig, contact_config, clock, gravity: np.ndarray,
                 wallset, wall_motion, contact, inserter, state: dict | None = None,
                 cell=None):
        self.config, self.contact_config, self.materials = config, contact_config, \
            config.materials
        self.clock, self.gravity, self.wallset = clock, gravity, wallset
        self.wall_motion, self.contact, self.inserter = wall_motion, contact, inserter
        self.cell = cell
        self.dt = clock.dt  # the run's own time step (before any change)
        self.made = [] if state is None else [(int(step), check_change("change", table))
                                              for step, table in state["made"]]

    def enter(self, stages: "Stages | None") -> None:
        """The changes made so far (a run's first step, a restart's), in order, each at its
        step: the stages begun (``stages``; None: no ``[[stages]]``), then at a step those
        made from Python."""
        events = [] if stages is None else [(start, 0, k) for k, start in
                                            enumerate(stages.starts)]
        events += [(step, 1, change) for step, change in self.made]
        for step, made, what in sorted(events, key=lambda e: e[:2]):
            if made:
                self.apply(what, step, "change")
            else:
                stages.begin(what, step)

    def make(self, change, step: int) -> None:
        """Apply ``change`` (``pdyn.stageplan.check_change``) made from Python after ``step``,
        and keep it for checkpoints."""
        self.apply(change, step, "change")
        self.made.append((int(step), change))

    def law_after(self, change, where: str) -> tuple:
        """(contact config, materials, law) after ``change`` (named ``where``) over those in
        force now (:func:`changed_law`; ``ConfigError`` if refused)."""
        return changed_law(self.config, self.contact_config, self.materials, change, where,
                           self.contact.law.rotating)

    def box_after(self, change, where: str):
        """The box's control after ``change`` (named ``where``) sets its ``box`` over the one
        in force (``CellControl.after``; ``ConfigError`` if refused: a box that keeps its
        size, an axis it keeps, a target pressure without a largest rate)."""
        if self.cell is None:
            raise ConfigError(f"{where}.box: the run's box keeps its size "
                              "(a box that changes gives [box] target_pressure, strain_rate "
                              "or a stage's box)")
        try:
            return self.cell.after(f"{where}.box", change.box)
        except BadValue as exc:
            raise ConfigError(str(exc)) from None

    def apply(self, change, start: int, where: str) -> None:
        """The changes of ``change`` (a ``pdyn.stageplan.Stage``, named ``where``) from the
        step after ``start`` on: a wall's new motion continues from where it is at ``start``
        (``WallSet.reprogram``), a servo's target counts its time from ``start``
        (``Servo.retarget``), the time step switches there (``Clock.switch``), the box's
        control is the new one (its rates: the caller's ``exchange.strain``)."""
        if change.box is not None:  # (a refusal changes nothing)
            self.cell.set(self.box_after(change, where))
        if change.contact or change.materials:
            self.contact_config, self.materials, self.contact.law = self.law_after(change,
                                                                                   where)
        if change.gravity is not None:
            self.gravity[:] = change.gravity
        if change.outlet is not None:
            self.inserter.outlets_open = change.outlet == "open"
        servos = {s.row: s for s in self.wall_motion.servos}
        for w in change.walls:
            row = self.wallset.n_box + w["wall"]
            if "servo" in w:
                servos[row].retarget(w["servo"], start)
            else:
                self.wallset.reprogram(row, Program(w["velocity"], w["translation"]),
                                       Program(w["angular_velocity"], w["rotation"]),
                                       self.clock.time(start))
        if change.dt is not None:
            self.clock.switch(start, change.dt)

    def state(self) -> dict | None:
        """What a checkpoint keeps (None: nothing changed the time step or was made from
        Python): the run's own time step (s) and the changes made from Python at their
        steps."""
        if not self.made and self.clock.dts == [self.dt]:
            return None
        return {"dt": self.dt, "made": [[step, c.changes()] for step, c in self.made]}


class Stages:
    """The stages ``plan`` (``pdyn.stageplan.Stage`` records) of a run whose changes go
    through ``changes`` (:class:`Changes`, with the run's clock); ``state``: a checkpoint's
    (:meth:`state`; None: the run's start)."""

    def __init__(self, plan: tuple, changes: Changes, state: dict | None = None, say=_say):
        self.plan, self.changes, self.clock, self.say = plan, changes, changes.clock, say
        self.starts = [0] if state is None else [int(s) for s in state["starts"]]
        self.finished = bool(state and state.get("finished"))

    @property
    def index(self) -> int:
        """The stage running (from 0)."""
        return len(self.starts) - 1

    @property
    def drives(self) -> bool:
        """The stages decide the run's length: the last one has an end, not yet reached."""
        return self.plan[-1].end is not None and not self.finished

    def begin(self, k: int, start: int) -> None:
        """Stage ``k``'s changes from the step after ``start`` on (:meth:`Changes.apply`: its
        control of the box too)."""
        self.changes.apply(self.plan[k], start, f"stages[{k}]")

    def _steps(self, seconds: float) -> int:
        return max(1, round(seconds / self.clock.dt))  # (the stage's own dt)

    def _strain_steps(self, stage) -> int:
        """Steps until the box's length along the ``strain`` end's axis has changed by ε at
        the stage's fixed rate ε̇: (1 + ε̇ dt)^n − 1 reaches ε."""
        (axis, eps), = stage.end[1].items()
        rate = stage.box["strain_rate"]["xyz".index(axis)]
        return max(1, math.ceil(math.log1p(eps) / math.log1p(rate * self.clock.dt)))

    def due(self, step: int) -> bool:
        """Whether the end of ``step`` decides on the running stage's end (the step is then
        closed: full-step velocities)."""
        if self.finished or self.plan[self.index].end is None:
            return False
        stage, n = self.plan[self.index], step - self.starts[-1]
        kind, value = stage.end
        if kind == "duration":
            return n >= self._steps(value)
        if kind == "time":
            return self.clock.time(step) >= value
        if kind == "strain":
            return n >= self._strain_steps(stage)
        if stage.max_duration is not None and n >= self._steps(stage.max_duration):
            return True
        return n % stage.check_every == 0

    def check(self, sim) -> None:
        """At the end of step ``sim.step_index`` (:meth:`due`): end the running stage if its
        end is reached and begin the next (its changes from the next step on). Collective."""
        stage, step = self.plan[self.index], sim.step_index
        kind, value = stage.end
        why = ""
        if kind in CONDITIONS:
            reached, reading = self._condition(sim, kind, value)
            if not reached:
                if (stage.max_duration is None
                        or step - self.starts[-1] < self._steps(stage.max_duration)):
                    return
                why = (f"; its {kind} condition not reached ({reading:.6g}) within "
                       f"max_duration = {stage.max_duration!r} s")
        if sim.comm.rank == 0:
            self.say(f"pdyn: stage {self.index} {stage.name!r} ended at step {step} "
                     f"(t = {self.clock.time(step):.6g} s){why}")
        if self.index == len(self.plan) - 1:
            self.finished = True
            return
        self.starts.append(step)
        self.begin(self.index, step)
        if self.plan[self.index].box is not None:  # its fixed rates from the next step on
            sim.exchange.strain(sim.cell.switched(sim.exchange.rate))

    def _condition(self, sim, kind: str, value) -> tuple[bool, float]:
        """Whether a condition holds now, on every rank alike, and what it read: the mean
        kinetic energy per sphere (J), the wall's load (N) or the mass out (kg). Collective."""
        if kind == "mass_out":  # (every rank holds the same sum)
            return sim.inserter.removed_mass >= value, sim.inserter.removed_mass
        if kind == "wall_force":  # a servo's own load of the step (a mesh's along its
            # direction), else the normal forces' sum
            row = sim.wallset.n_box + value["wall"]
            servo = [s for s in sim.wall_motion.servos if s.row == row]
            load = servo[0].load if servo else wall_loads(
                sim.contact, sim.store, sim.neighbours, sim.comm, self.clock.dt, [-1 - row])[0]
            return load >= value["force"], load
        store = sim.store
        spin = "omega" in store.fields
        parts = sim.comm.allgather(energy_partials(
            store.owned, store.vel, store.mass, store.omega if spin else np.zeros((1, 3)),
            store.radius, spin) + (int(store.owned.size),))
        n = sum(p[2] for p in parts)
        energy = exact_total([p[0] for p in parts] + [p[1] for p in parts]) / max(n, 1)
        return energy < value, energy

    def state(self) -> dict:
        """What a checkpoint keeps: the steps the stages began at, and whether the last ended."""
        return {"starts": list(self.starts), "finished": self.finished}


__all__ = ["Changes", "Stages", "changed_law", "check_laws", "plan_changes"]
