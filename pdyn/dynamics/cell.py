"""A periodic cell whose lengths follow a target pressure or a fixed strain rate per axis
([box] target_pressure, strain_rate; a stage's ``box``): the controller, as a component of
the step (units: Pa, 1/s).

Every ``every`` steps, at the step's end (after the closing half-kick, so with the full-step
velocities), the cell's stress σ is measured exactly (``pdyn.fields.virial``: kinetic plus
contact, every contact once, each rank's sums as exact expansions gathered on every rank and
summed correctly rounded — the same bits on any rank count). Each controlled axis a then
gets the strain rate the box deforms at from the next step on,

    ε̇_a = clamp(g (p_a − p*_a) / p*_a, −ε̇_max, ε̇_max),    p_a = −σ_aa,

p*_a the target (Pa, compression positive), g the gain (1/s) and ε̇_max the largest rate:
a limited proportional control of the strain rate by the relative stress error (a box
pressed harder than its target grows), as LAMMPS' Berendsen barostat (a dilation rate
proportional to the pressure error, [Berendsen1984]) and Yade's PeriTriaxController (a
strain rate per axis from the stress error, limited by a largest rate). Under a packing
of bulk stiffness K = dp/dε the error shrinks by 1 − g K dt / p* a step: with g K / p* ≪
1/dt the cell follows quasi-statically. The exchange (``pdyn.parallel.exchange``) applies
the rates: at each step's start the box grows by 1 + ε̇ dt per axis about its ``lo`` corner and
the centres with it (affinely; velocities are the spheres' own, about that affine field).

An axis given a ``strain_rate`` ε̇ (a triaxial test's axial strain) deforms at it from the
stage's start on: its length after n steps is L_s (1 + ε̇ dt)^n. The control (every axis's
target or rate, the gain, the largest rate: :class:`Control`) is ``[box]``'s until a stage's
``box`` or ``Simulation.set_box`` gives a new one (``pdyn.stages.Changes``); from then on the
axes it fixes take their rates, an axis it names in neither table stops, a
pressure-controlled one keeps its rate until the next reading. The axes whose length may
change are those some control of the config names (:func:`controls`), fixed at the start.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..fields.once import each_once, fixed_ids
from ..fields.virial import cell_parts, cell_stress
from ..values import BadValue

#: the capture the controller reads at its steps (``pdyn.capture``)
NEEDS = frozenset({"sphere_contacts"})


class Control(NamedTuple):
    """How the box's lengths move in a stage: per axis the target pressure ``targets`` (3,)
    Pa and the fixed strain rate ``fixed`` (3,) 1/s (NaN: not given; an axis with neither
    keeps its length), the ``gain`` and the largest rate ``max_rate`` (1/s) of the pressure
    control."""

    targets: np.ndarray
    fixed: np.ndarray
    gain: float
    max_rate: float

    @classmethod
    def of(cls, targets, fixed=(None,) * 3, gain=np.nan, max_rate=np.nan) -> Control:
        """From per-axis values with None (or NaN) for "not given"."""
        def axes(v):
            return np.array([np.nan if x is None else float(x) for x in v])
        return cls(axes(targets), axes(fixed), float(gain), float(max_rate))


class CellControl:
    """The strain rates of a box whose axes follow target pressures or fixed rates: the
    :class:`Control` in force (``control``: ``[box]``'s at the start, then each change's —
    a stage's ``box``, ``Simulation.set_box``: :meth:`after`, :meth:`set`), the stress
    measured every ``every`` steps while an axis follows a pressure (the rates hold in
    between); ``box_config`` (``pdyn.config.BoxConfig``) and ``deforming`` (per axis whether
    the run's box may change its length there) check a change."""

    def __init__(self, control: Control, every: int = 1, box_config=None,
                 deforming=(True, True, True)):
        self.every = int(every)
        self.box_config, self.deforming = box_config, tuple(deforming)
        self.set(control)
        self._fixed = None  # the fixed spheres' ids, found at the first measure
        self.stress = np.full((3, 3), np.nan)  # the last measured total stress (Pa)

    def set(self, c: Control) -> None:
        """Control ``c`` from now on (a stage's start, ``Simulation.set_box``)."""
        self.control = c
        self.targets, self.axes = c.targets, np.isfinite(c.targets)
        self.gain, self.max_rate = c.gain, c.max_rate

    def after(self, name: str, box: dict) -> Control:
        """The control a ``box`` table (``pdyn.stageplan``, named ``name``) sets over the one
        in force (its gain and largest rate by default): ``BadValue`` naming
        ``<name>.<field>`` for an axis the run's box keeps (not periodic, the flow of a
        sheared box, or fixed from the start) or a target pressure without a largest
        rate."""
        return _staged(name, box, self.control, self.box_config, self.deforming)

    def switched(self, current: np.ndarray) -> np.ndarray:
        """The rates (3,) at a stage's start, from those running (``current``): the fixed
        axes' rates, the pressure-controlled axes' ``current`` until their next reading, 0
        on the others."""
        fixed = self.control.fixed
        return np.where(np.isfinite(fixed), fixed, np.where(self.axes, current, 0.0))

    def due(self, step: int) -> bool:
        """Whether step ``step`` measures the stress and sets new rates (an axis follows a
        pressure)."""
        return step % self.every == 0 and bool(self.axes.any())

    def needs(self, step: int) -> frozenset:
        """What the step's capture must hold for :meth:`respond`."""
        return NEEDS if self.due(step) else frozenset()

    def respond(self, store, contacts: dict, box, comm) -> np.ndarray:
        """The strain rates (3,) for the next steps from the cell's stress now: ``contacts``
        every row's contacts of the step (``pdyn.capture``), the velocities the step's end.
        Collective (an allgather of exact expansions)."""
        if self._fixed is None:
            self._fixed = fixed_ids(comm, store)
        parts = comm.allgather(cell_parts(store, each_once(contacts, self._fixed), box))
        kinetic, contact = cell_stress(parts, float(np.prod(box.length)))
        self.stress = kinetic + contact
        return self.rates(-np.diag(self.stress))

    def rates(self, pressures: np.ndarray) -> np.ndarray:
        """The clamped rates (3,) of the pressure-controlled axes for normal ``pressures``
        (3,) (Pa, compression positive), the fixed rates of the others, 0 elsewhere."""
        out = self.switched(np.zeros(3))
        a = self.axes
        out[a] = np.clip(self.gain * (pressures[a] - self.targets[a]) / self.targets[a],
                         -self.max_rate, self.max_rate)
        return out


def _base(b) -> Control:
    """The control of ``[box]`` (``pdyn.config.BoxConfig``) before any stage."""
    return Control.of(b.target_pressure, b.strain_rate,
                      np.nan if b.pressure_gain is None else b.pressure_gain,
                      np.nan if b.max_strain_rate is None else b.max_strain_rate)


def controls(box_config, plan=()) -> list | None:
    """The :class:`Control` of each stage of ``plan`` (``pdyn.stageplan.Stage`` records; one
    for a run without stages) from ``[box]`` (``pdyn.config.BoxConfig``) and the stages'
    ``box`` tables, each holding until a later stage gives its own; None if no axis ever
    changes length. A stage's axis must be periodic (and not x, the flow, of a sheared box)
    and a stage with a target pressure needs a largest rate: ``BadValue`` naming
    ``stages[k].box.<field>``."""
    staged = [k for k, s in enumerate(plan) if s.box is not None]
    if box_config is None or not (box_config.deforms or staged):
        return None
    current = _base(box_config)
    out = []
    for k, stage in enumerate(plan or (None,)):
        if stage is not None and stage.box is not None:
            current = _staged(f"stages[{k}].box", stage.box, current, box_config)
        out.append(current)
    return out


def _staged(name: str, box: dict, before: Control, box_config,
            deforming=(True, True, True)) -> Control:
    """A ``box`` table (a stage's, ``Simulation.set_box``'s: ``pdyn.stageplan``) as a
    :class:`Control`, its gain and largest rate defaulting to ``before``'s; its axes those
    of ``deforming`` (per axis: the run's box may change its length there)."""
    for key in ("target_pressure", "strain_rate"):
        for a, v in enumerate(box[key]):
            if v is not None:
                box_config.check_axis(f"{name}.{key}.{'xyz'[a]}", v, a)
                if not deforming[a]:
                    raise BadValue(f"{name}.{key}.{'xyz'[a]}", v, "the run's box keeps its "
                                   f"length along {'xyz'[a]} (its axes that may change are "
                                   "set at its start: [box] target_pressure, strain_rate "
                                   "or a stage's box)")
    max_rate = box.get("max_strain_rate", before.max_rate)
    gain = box.get("pressure_gain", before.gain if np.isfinite(before.gain)
                   else 10.0 * max_rate)
    if any(p is not None for p in box["target_pressure"]) and not np.isfinite(max_rate):
        raise BadValue(f"{name}.max_strain_rate", None, "needed with target_pressure (the "
                       "largest strain rate of the box, 1/s)")
    return Control.of(box["target_pressure"], box["strain_rate"], gain, max_rate)


def changing_axes(found: list | None) -> tuple:
    """Per axis whether its length changes in any of the controls ``found``
    (:func:`controls`; None: none does)."""
    if found is None:
        return (False,) * 3
    return tuple(any(bool(np.isfinite(c.targets[a]) or np.isfinite(c.fixed[a])) for c in found)
                 for a in range(3))


def cell_control(box_config, plan=()) -> CellControl | None:
    """The controller of a ``[box]`` (``pdyn.config.BoxConfig``) and the ``[[stages]]``
    ``plan`` whose box lengths change (:func:`controls`), else None: ``[box]``'s control
    until the stages' (``pdyn.stages``) or Python's changes set theirs."""
    found = controls(box_config, plan)
    if found is None:
        return None
    return CellControl(_base(box_config), box_config.pressure_every, box_config,
                       changing_axes(found))
