"""What can be changed of a run between its steps: gravity, walls' motion, the contact law's
friction and restitution, the outlets, the time step and a deforming box's control, from
Python (``Simulation.change`` and its setters), through the path a stage's changes take
(``pdyn.stages.Changes``).
:class:`Changing` is the simulation's steering side, as ``pdyn.observables`` is its reading
side. Units: SI."""

from __future__ import annotations

from .assembly import fits_run
from .checks import refuse_fast_walls, wall_names
from .config import ConfigError
from .stageplan import check_change
from .stages import plan_changes
from .timestep import bounding_spheres, changed_time_step
from .values import BadValue


class Changing:
    """Changes of a run made between its steps, from the attributes
    ``pdyn.simulation.Simulation`` keeps (its config, store, inserter, contact, wallset,
    clock, changes, schedule, guard, wall motion, exchange and cell) and its ``close_step``."""

    def change(self, **changes) -> None:
        """Change the run from the next step on (between runs, or in a ``run`` callback):
        what a stage changes at its start (docs/stages.md), through the same path
        (``pdyn.stages.Changes``) — ``gravity`` (m/s²), ``walls`` (a list of ``{"wall": k,
        ...}``, k indexing ``config.walls``: a new ``velocity``, ``angular_velocity``,
        ``translation`` or ``rotation`` continuing from where the wall is, or a servo's new
        ``servo``), ``contact`` or ``materials`` (``friction``, ``rolling_friction``,
        ``restitution``), ``outlet``, ``dt`` (s), ``box`` (a deforming box's new control,
        :meth:`set_box`) — checked alike (``ConfigError``, one line naming
        ``change.<field>``). Call it on every rank alike; checkpoints keep it (a restart
        makes it again at its step). Collective with ``walls`` or ``dt``."""
        try:
            made = check_change("change", changes)
            self.config.fits("change", made)
        except BadValue as exc:
            raise ConfigError(str(exc)) from None
        fits_run("change", made, self.store, self.inserter)
        if made.contact or made.materials:  # refused before anything changes
            self.changes.law_after(made, "change")
        if made.box is not None:
            self.changes.box_after(made, "change")
        self.close_step()  # (the half-kick of the step made belongs to its dt)
        if made.walls or made.dt is not None:
            self._replan(made)
        self.changes.make(made, self.step_index)
        if made.box is not None:  # its fixed strain rates from the next step on
            self.exchange.strain(self.cell.switched(self.exchange.rate))

    def _replan(self, made) -> None:
        """A change's new time step held to the time-step limit, its wall motions and time
        step planned for (the lists' reach and forced rebuilds, the overlap watch) and held to
        the fast-wall rule, as a stage's are at the start; the next step rebuilds the lists.
        Collective."""
        spheres, skin = bounding_spheres(self.store, self.inserter), self.neighbours.skin
        if made.dt is not None:
            changed_time_step("change.dt", made.dt, self.contact.law, spheres, self.config,
                              self.comm, self.wallset, self.box, skin)
        plan_changes((made,), self.wallset, self.clock)
        refuse_fast_walls(self.wallset, wall_names(self.box), skin, self.clock.largest,
                          self.contact.law, *spheres, self.comm)
        self.wallset.set_reach(skin)
        self.schedule.wall_every = self.wall_motion.every(skin)
        if self.guard.overlaps is not None:
            self.guard.overlaps.plan(self.wallset, self.clock.largest)
        self.schedule.rebuild_next = True

    def set_gravity(self, gravity) -> None:
        """Gravity (m/s², 3 numbers) from the next step on (:meth:`change`)."""
        self.change(gravity=gravity)

    def set_wall(self, wall: int, **motion) -> None:
        """Wall ``config.walls[wall]``'s new motion from the next step on, continuing from
        where it is: ``velocity``, ``angular_velocity``, ``translation``, ``rotation`` (as a
        ``[[walls]]`` table's) or a servo's ``servo`` (:meth:`change`)."""
        self.change(walls=[{"wall": wall, **motion}])

    def set_material(self, name: str | None = None, **values) -> None:
        """New ``friction``, ``rolling_friction`` or ``restitution`` from the next step on, of
        the run's contact (``name`` None) or of material ``name`` (:meth:`change`)."""
        self.change(**({"contact": values} if name is None else
                       {"materials": [{"name": name, **values}]}))

    def set_box(self, **control) -> None:
        """The periodic box's new control from the next step on, as a stage's ``box``
        (docs/stages.md): ``target_pressure`` (Pa) and ``strain_rate`` (1/s) per axis (a
        table ``{"z": -0.01}`` or 3 values with None; an axis named in neither keeps its
        length from then on), ``max_strain_rate`` and ``pressure_gain`` (1/s; default: those
        in force). Only axes the run's box may change (:meth:`change`)."""
        self.change(box=control)

    def set_dt(self, dt: float) -> None:
        """The time step (s) from the next step on (:meth:`change`)."""
        self.change(dt=dt)
