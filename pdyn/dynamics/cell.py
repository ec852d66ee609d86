"""A periodic cell whose lengths follow a target pressure per axis ([box] target_pressure):
the controller, as a component of the step (units: Pa, 1/s).

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
"""

from __future__ import annotations

import numpy as np

from ..fields.once import each_once, fixed_ids
from ..fields.virial import cell_parts, cell_stress

#: the capture the controller reads at its steps (``pdyn.capture``)
NEEDS = frozenset({"sphere_contacts"})


class CellControl:
    """The strain rates of a box whose axes follow target pressures (``targets`` (3,) Pa,
    NaN: a fixed length) with ``gain`` (1/s) and ``max_rate`` (1/s), measured every
    ``every`` steps (the rates hold in between)."""

    def __init__(self, targets, gain: float, max_rate: float, every: int = 1):
        self.targets = np.asarray(targets, float)
        self.axes = np.isfinite(self.targets)
        self.gain, self.max_rate, self.every = float(gain), float(max_rate), int(every)
        self._fixed = None  # the fixed spheres' ids, found at the first measure
        self.stress = np.full((3, 3), np.nan)  # the last measured total stress (Pa)

    def due(self, step: int) -> bool:
        """Whether step ``step`` measures the stress and sets new rates."""
        return step % self.every == 0

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
        """The clamped rates (3,) of the controlled axes for normal ``pressures`` (3,) (Pa,
        compression positive); 0 along the others."""
        out = np.zeros(3)
        a = self.axes
        out[a] = np.clip(self.gain * (pressures[a] - self.targets[a]) / self.targets[a],
                         -self.max_rate, self.max_rate)
        return out


def cell_control(box_config) -> CellControl | None:
    """The controller of a ``[box]`` (``pdyn.config.BoxConfig``) with a target pressure,
    else None."""
    if box_config is None or not any(t is not None for t in box_config.target_pressure):
        return None
    targets = [np.nan if t is None else float(t) for t in box_config.target_pressure]
    return CellControl(targets, box_config.pressure_gain, box_config.max_strain_rate,
                       box_config.pressure_every)
