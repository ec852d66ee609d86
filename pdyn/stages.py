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
friction, rolling friction or restitution (the time step depends on none of them); the box's
new control (``CellControl.stage``: its fixed strain rates from the next step on). A
``strain`` end is a duration in closed form: n = ⌈ln(1 + ε) / ln(1 + ε̇ dt)⌉ steps.
Everything a stage did follows from the steps the stages started at: a checkpoint keeps them
(the optional attribute ``stages``) and a restart applies the same changes at the same steps
(the same bits as the run that went on). Units: SI."""

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
from .stageplan import CONDITIONS


def _say(line: str) -> None:
    """A line on stdout that does not break a progress bar."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def plan_walls(plan: tuple, wallset) -> None:
    """Every stage's wall motions counted in ``wallset``'s speeds from the start
    (``WallSet.plan``): the lists' reach, their rebuild interval and the fast-wall refusal
    cover the fastest stage."""
    for stage in plan:
        for w in stage.walls:
            row = wallset.n_box + w["wall"]
            if "servo" in w:
                wallset.plan(row, Program(np.zeros(3), ()), w["servo"]["max_speed"])
            else:
                wallset.plan(row, Program(w["velocity"], w["translation"]))


def stage_laws(plan: tuple, config: SimulationConfig, contact_config, law: ContactLaw) -> list:
    """The contact law each stage runs with (the changes of the stages before it kept):
    ``law`` until a stage changes ``contact`` or ``materials``. A change that would switch
    the spheres' rotation on or off is refused (``ConfigError``): the run's fields are set."""
    laws, current = [], law
    cc, mats = contact_config, config.materials
    for k, stage in enumerate(plan):
        if stage.contact or stage.materials:
            if stage.contact:
                cc = replace(cc, **stage.contact)
            new = {m["name"]: {f: v for f, v in m.items() if f != "name"}
                   for m in stage.materials}
            mats = tuple(replace(m, **new[m.name]) if m.name in new else m for m in mats)
            current = ContactLaw.from_config(cc, **config.with_(materials=mats)
                                             .material_pairs(cc))
            if current.rotating != law.rotating:
                field = "materials" if stage.materials else "contact"
                raise ConfigError(f"stages[{k}].{field}: sets friction and rolling friction "
                                  f"{'to 0' if law.rotating else 'above 0'}, which switches the "
                                  "spheres' rotation " + ("off" if law.rotating else "on")
                                  + " (the run's fields are set at its start)")
        laws.append(current)
    return laws


class Stages:
    """The stages ``plan`` (``pdyn.stageplan.Stage`` records) of a run of time step ``dt`` (s),
    with the contact law of each (:func:`stage_laws`); ``state``: a checkpoint's
    (:meth:`state`; None: the run's start); ``cell`` the box's controller
    (``pdyn.dynamics.cell.CellControl``, None: the box keeps its size)."""

    def __init__(self, plan: tuple, laws: list, dt: float, state: dict | None = None,
                 say=_say, cell=None):
        self.plan, self.laws, self.dt, self.say = plan, laws, float(dt), say
        self.cell = cell
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

    def enter(self, gravity: np.ndarray, wallset, wall_motion, contact, inserter) -> None:
        """The changes of every stage begun so far, in order, each at its start (a run's first
        step or a restart's): ``gravity`` (m/s², changed in place), the walls of ``wallset``
        and the servos of ``wall_motion``, the law of ``contact``, the outlets of
        ``inserter``."""
        for k in range(self.index + 1):
            self._apply(k, gravity, wallset, wall_motion, contact, inserter)

    def _apply(self, k: int, gravity, wallset, wall_motion, contact, inserter) -> None:
        stage, start = self.plan[k], self.starts[k]
        if stage.gravity is not None:
            gravity[:] = stage.gravity
        if stage.outlet is not None:
            inserter.outlets_open = stage.outlet == "open"
        servos = {s.row: s for s in wall_motion.servos}
        for w in stage.walls:
            row = wallset.n_box + w["wall"]
            if "servo" in w:
                servos[row].retarget(w["servo"], start)
            else:
                wallset.reprogram(row, Program(w["velocity"], w["translation"]),
                                  Program(w["angular_velocity"], w["rotation"]),
                                  start * self.dt)
        contact.law = self.laws[k]
        if self.cell is not None:
            self.cell.stage(k)

    def _steps(self, seconds: float) -> int:
        return max(1, round(seconds / self.dt))

    def _strain_steps(self, stage) -> int:
        """Steps until the box's length along the ``strain`` end's axis has changed by ε at
        the stage's fixed rate ε̇: (1 + ε̇ dt)^n − 1 reaches ε."""
        (axis, eps), = stage.end[1].items()
        rate = stage.box["strain_rate"]["xyz".index(axis)]
        return max(1, math.ceil(math.log1p(eps) / math.log1p(rate * self.dt)))

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
            return step * self.dt >= value
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
                     f"(t = {step * self.dt:.6g} s){why}")
        if self.index == len(self.plan) - 1:
            self.finished = True
            return
        self.starts.append(step)
        self._apply(self.index, sim.gravity, sim.wallset, sim.wall_motion, sim.contact,
                    sim.inserter)
        if self.plan[self.index].box is not None:  # its fixed rates from the next step on
            sim.exchange.strain(self.cell.switched(sim.exchange.rate))

    def _condition(self, sim, kind: str, value) -> tuple[bool, float]:
        """Whether a condition holds now, on every rank alike, and what it read: the mean
        kinetic energy per sphere (J), the wall's load (N) or the mass out (kg). Collective."""
        if kind == "mass_out":  # (every rank holds the same sum)
            return sim.inserter.removed_mass >= value, sim.inserter.removed_mass
        if kind == "wall_force":
            gid = -1 - (sim.wallset.n_box + value["wall"])
            load = wall_loads(sim.contact, sim.store, sim.neighbours, sim.comm, sim.dt,
                              [gid])[0]
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


__all__ = ["Stages", "plan_walls", "stage_laws"]
