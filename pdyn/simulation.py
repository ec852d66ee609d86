"""The driver: one time step on one rank, reading top to bottom.

integrate (kick–drift) → reduction with the ghost update → migrate → [balance] → [reorder] →
[ghosts] → [broad phase → neighbour lists] → contacts → integrate (kick) → writers. Velocity
Verlet ([Verlet1967]) with the first half-kick and the drift opening the step, so the forces
held at the end of a step belong to its positions
(what a snapshot or checkpoint needs); between the steps of one ``run()``, where nothing reads
the velocities, a step's closing half-kick is done in the next step's kick–drift walk
(``pdyn.dynamics.integrate``: the same bits), unless writers are due or the run stops or ends.
One schedule paces the expensive work: the drift reports
each particle's displacement since the last rebuild, one reduction takes the largest (while
the ghosts' state travels: one wait for the slower rank a step), and when
it exceeds half the skin (``NeighbourList.due``) the step *rebuilds* — the exchange migrates
and re-plans its ghosts, blocks are rebalanced over the ranks when due (``pdyn.parallel.balance``),
memory is reordered when due, the broad phase finds the pairs within
the skin and the neighbour lists are rebuilt; every other step only refreshes ghost positions
and walks the lists. Components return what they changed and the driver applies it where the
step shows it: the exchange (``pdyn.parallel``) reports the handles it removed from and added
to the store, and the broad-phase phase of a rebuild removes and inserts them. No component
holds a reference to the simulation. Python orchestrates; every per-particle loop is a numba
kernel. The parts driven are built apart (``pdyn.assembly.build``, a frozen ``Parts`` record
the simulation unpacks); what can be read of a run is in ``pdyn.observables``, what can be
changed between its steps in ``pdyn.changing``.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from .assembly import Parts, RestartState, build
from .capture import NOTHING, capture
from .changing import Changing
from .components import list_walls
from .config import SimulationConfig
from .dynamics.integrate import kick, kick_drift
from .fields.once import fixed_ids
from .heap import Scratch
from .interrupt import StopRequest, Stopped, signal_name
from .io import CONTACT_FORCES, WALL_FORCES, checkpoint_now
from .observables import Observables
from .parallel import StoreChanges, get_comm
from .parallel.balance import block_work
from .reorder import reorder, wall_order
from .scenarios import Scene
from .schedule import NO_NEEDS, Decisions

#: the needs that make the force pass record every pair's tangential force
PAIR_FORCES = CONTACT_FORCES - WALL_FORCES


class Reduction(NamedTuple):
    """The step's one ``allreduce_max``: the largest squared move of the step (m², the
    guard), the largest squared drift since the last rebuild (m², the schedule), the largest
    owned count (the load record), the signal a rank received to stop (pdyn.interrupt) and,
    in a sheared box, the largest squared drift of an image (m², the schedule)."""

    move2: float
    drift2: float
    owned: float
    stop: float
    images2: float


class Simulation(Observables, Changing):
    """An elastic/damped sphere simulation of one scene on this rank.

    ``Simulation(config)`` builds the scene, the walls, the broad phase and the initial forces
    (``pdyn.assembly.build``); ``run()`` advances ``config.steps`` steps (or the scene's
    suggestion) with a progress bar; ``step()`` advances one. The particle store is
    ``sim.store`` (owned spheres, ghosts and walls by stable handle); ``sim.contact_pairs()``
    lists current contacts by global id. ``scene`` replaces the config's scene; ``restart``
    continues a checkpointed run (use :func:`pdyn.restart.from_checkpoint`); ``parts``: a run
    already built (``build(...)``, parts replaced with ``Parts._replace``), instead of the rest.
    What can be read of it between steps (energies, contacts, :meth:`summary`) comes from
    :class:`pdyn.observables.Observables`.
    """

    def __init__(self, config: SimulationConfig | None = None, *, comm=None,
                 scene: Scene | None = None, restart: RestartState | None = None,
                 parts: Parts | None = None):
        if parts is not None and any(x is not None for x in (config, comm, scene, restart)):
            raise TypeError("Simulation(parts=...): give the parts alone (build took the rest)")
        p = parts if parts is not None else build(
            config or SimulationConfig(), comm if comm is not None else get_comm(), scene, restart)
        vars(self).update(p._asdict())  # each part an attribute of its name (Parts)
        self.step_index = p.first_step
        (self.network, self.wall_load, self.contact_stats, self.sphere_contacts,
         self.contacts_once) = NOTHING  # captured for output
        self._fixed, self._once = None, Scratch()  # fixed spheres' ids; contacts_once's arrays
        self.record_tangential = False  # True: every force pass records tangential forces
        self.rebuilds, self.wall_time, self.steps_run, self.load = 0, 0.0, 0, None
        self._stop = None  # the signals' flag while run() runs (pdyn.interrupt)
        self.stop_signal = 0  # the signal every rank agreed to stop on (0: none)
        self._kick_owed = False  # the last step left its closing half-kick to the next
        self._n_owned = int(self.store.owned.size)
        self._reduce_buffer = np.zeros(len(Reduction._fields))  # this rank's part of it

    # ------------------------------------------------------------------ the step
    def step(self, close: bool = True) -> None:
        """Advance one time step ``dt`` (ARCHITECTURE.md, "The step"). ``close=False`` may leave
        the closing half-kick to the next step's kick–drift (the same bits), as :meth:`run` does
        between its steps; not when a due writer reads the step's end (``Writer.velocities``), a
        stage's condition is checked or the run stops."""
        t = self.timers
        with t("integrate"):
            moved = self._kick_drift(0.5 * self.clock.dt)
        with t("ghosts"):  # the ghosts' state travels while the ranks agree on the reduction
            red = self._reduce(moved)
        do = self.schedule.decide(self.step_index + 1, red.drift2, red.images2,
                                  self.exchange.strain_drift())
        self.wall_motion.advance(self.store, self.walls, do.step)
        changes = self._exchange(do)
        with t("ghosts"):
            ghosts = self.exchange.ghosts()
        if do.lists:
            self.neighbours.rebuild(self.broadphase, self.store, None if changes is None else
                                    changes + [ghosts], relist=do.rebuild, walls=self.walls,
                                    timers=t, **list_walls(self.wallset))
        self._forces(do.needs if self.cell is None else do.needs | self.cell.needs(do.step))
        self.wall_motion.respond(self.contact, self.store, self.neighbours, self.comm, do.step)
        self._kick_owed = True
        self._end_of_step(do, close)

    def _end_of_step(self, do: Decisions, close: bool) -> None:
        """The step closed (its closing half-kick) where ``close`` asks or what acts at its end
        reads the full-step velocities (a stop, a stage's check, the cell's stress, a due
        writer's ``velocities``); then the cell's new strain rates (``pdyn.dynamics.cell``),
        the step counted, the stage's check (``pdyn.stages``) and the due writers."""
        cell = self.cell is not None and self.cell.due(do.step)
        staged = self.stages is not None and self.stages.due(do.step)
        if (close or self.stop_signal or staged or cell
                or any(w.velocities for w in do.writers)):
            with self.timers("integrate"):
                self.close_step()
        if cell:  # the cell's stress at the step's end sets the box's strain rates
            with self.timers("contacts"):
                self.exchange.strain(self.cell.respond(self.store, self.sphere_contacts,
                                                       self.box, self.comm))
        self.step_index += 1
        if staged:  # the running stage ends here or goes on
            self.stages.check(self)
        self._write(do.writers, do.needs)

    def _kick_drift(self, half: float) -> np.ndarray:
        """The first half-kick (after the step before's closing one, if left to it), the drift
        and the moving components' places (the glued spheres): this rank's part of the
        step's reduction (:class:`Reduction`)."""
        store, lists = self.store, self.neighbours
        passed = self.guard.watch(self.step_index)  # inf: an overlap beyond its limit
        self.exchange.deform(self.clock.dt)  # a box that follows a target pressure
        mine = self._reduce_buffer
        kick_drift(store.pos, store.vel, store.force, store.mass, store.build_pos, lists.rows,
                   half, self.clock.dt, *self.contact.spins(store, lists),
                   2 if self._kick_owed else 1, mine)  # mine[:2]: the move, the drift
        self._kick_owed = False
        placed = self.glued.place(store, self.step_index + 1)
        if placed is not None:
            np.maximum(mine[:2], placed, out=mine[:2])
        mine[0] = max(mine[0], passed)
        mine[2] = self._n_owned
        mine[3] = self._stop.signum if self._stop is not None else 0.0
        self.exchange.advance(self.step_index + 1, self.clock.dt)  # a sheared box's images
        mine[4] = self.exchange.image_drift2(lists.rows)
        return mine

    def _reduce(self, mine: np.ndarray) -> Reduction:
        """The step's one reduction, with the ghosts' state (``exchange.reduce_max``); the
        step guard (``pdyn.checks``), the load record and the stop signal take their
        parts."""
        red = Reduction(*self.exchange.reduce_max(mine).tolist())
        self.guard.check(math.sqrt(red.move2), self.neighbours.rows, self.step_index + 1)
        if self.comm.size > 1:
            self.balancer.observe(red.owned, self.inserter and self.inserter.present)
        self.stop_signal = int(red.stop)
        return red

    def _exchange(self, do: Decisions) -> list[StoreChanges] | None:
        """Migrate (at a rebuild: wrap, send leavers, drop ghosts), balance, pour and
        reorder as ``do`` says; the store's changes, one after the other (None: memory was
        reordered, the broad phase is built afresh). Before the spheres move, what hangs on
        the lists (the contact history) goes into the store when they are rebuilt."""
        t, store, lists = self.timers, self.store, self.neighbours
        if do.lists:
            with t("contacts"):
                lists.before_rebuild(store)
        if do.balance:
            with t("balance"):  # the work of the interval that ends, on its lists
                work = block_work(self.exchange.grid, store.pos, lists.rows, lists.start)
        with t("migrate"):
            changes = [self.exchange.migrate(do.rebuild, self.clock.dt)]
        if do.balance:
            with t("balance"):
                changes[0], moved, sent = self.exchange.rebalance(
                    changes[0], work, self.balancer.threshold, self.balancer.curve, do.step)
                self.balancer.checked(do.step, moved, sent)
        if do.rebuild and self.inserter is not None:
            with t("migrate"):
                changes.append(self.inserter.pour(store, self.comm, self.clock.time(do.step),
                                                  self.exchange.owner_of, do.pour))
        if do.rebuild:
            self._n_owned = int(store.owned.size)
            self.rebuilds += 1
        if do.reorder:
            with t("reorder"):
                reorder(store, self.exchange)
                self.walls = wall_order(store)
            return None
        return changes

    def _forces(self, needs: frozenset = NO_NEEDS) -> None:
        """Contact forces (plus gravity) on the integrated particles, from the lists (timed as
        contacts); with rotation also torques and the contact history, and each entry's
        tangential force when ``needs`` (of the due writers and the cell) asks for contact
        forces; then what those need of the step's contacts (``pdyn.capture``) and what the
        collecting writers keep of it (``Writer.collect``), timed as output."""
        pairs = bool(needs & PAIR_FORCES) or self.record_tangential
        with self.timers("contacts"):
            self.n_contacts, self.elastic_energy = self.contact.forces(
                self.store, self.neighbours, self.gravity, self.clock.dt,
                record=pairs or bool(needs & WALL_FORCES), walls_only=not pairs)
        collecting = self.schedule.collecting
        wanted = NO_NEEDS if needs is collecting else needs - collecting
        if not (wanted or self.schedule.collectors):  # most steps: nothing to capture
            (self.network, self.wall_load, self.contact_stats, self.sphere_contacts,
             self.contacts_once) = NOTHING
            return
        with self.timers("output"):
            if "contacts_once" in needs and self._fixed is None:  # (collective: every rank)
                self._fixed = fixed_ids(self.comm, self.store)
            (self.network, self.wall_load, self.contact_stats, self.sphere_contacts,
             self.contacts_once) = capture(self.contact, self.store, self.neighbours,
                                           self.clock.dt, wanted, self._fixed, self._once)
            step = self.step_index + 1
            for w in self.schedule.collectors:
                w.collect(self.contact, self.store, self.neighbours, self.clock.dt, step,
                          self.clock.time(step))

    def close_step(self) -> None:
        """The closing half-kick of the last step, if it left it to the next (:meth:`step`):
        the velocities, the ghosts' too, are then the full-step ones. Collective."""
        if self._kick_owed:
            store = self.store
            kick(store.vel, store.force, store.mass, self.neighbours.rows, 0.5 * self.clock.dt,
                 *self.contact.spins(store, self.neighbours))
            self._kick_owed = False
            self.exchange.refresh_ghosts()  # their velocities too (read between steps)

    def _write(self, writers: list, needs: frozenset) -> None:
        """Call the due ``writers`` (if any) with the view of what they ``needs``; for
        ``state`` the store holds the whole state (what hangs on the lists saved into it)."""
        if not writers:
            return
        with self.timers("output"):
            if "state" in needs:  # else the history stays on the lists (no save, no reload)
                self.neighbours.save(self.store)
            view = self.view(needs)
            for w in writers:
                w(view)

    # ------------------------------------------------------------------ the run
    def run(self, steps: int | None = None, progress: bool | None = None, *,
            until=None, every: int = 1, callback=None) -> dict:
        """Advance ``steps`` (default: the configured number; with ``until``, no bound); return
        :meth:`summary`. Every ``every`` steps the step is closed (full-step velocities: the
        same bits as not closing it), ``callback(sim)`` is called and the run stops where
        ``until`` holds: a time (s, the first check at or past it) or ``until(sim) -> bool``
        (called on every rank; the ranks stop together when it holds on any). A staged run
        (``[[stages]]``) given neither ``steps`` nor ``until`` (nor ``steps`` in its config)
        runs until its last stage ends. Each call ends by saving the whole state into the
        store (as long as one to a few steps): to look at a run often, give ``every`` and
        ``callback`` rather than calling this in a loop of short runs."""
        steps, every, staged = _run_length(self, steps, until, every)
        checks = until is not None or callback is not None
        progress = self.config.progress if progress is None else progress
        bar = _bar(steps, self.scene.name) if progress and self.comm.rank == 0 else None
        t0 = time.perf_counter()
        done = False
        k = 0
        try:
            with StopRequest() as self._stop:  # a signal stops at the end of a step
                while steps is None or k < steps:
                    check = checks and (k + 1) % every == 0
                    self.step(close=check or (steps is not None and k == steps - 1))
                    k += 1
                    if bar is not None:
                        bar.update(1)
                    if self.stop_signal:
                        raise self._stopped()
                    if check and _check(self, until, callback):
                        break
                    if staged and self.stages.finished:
                        break
            done = True
        finally:
            self.close_step()  # (a step that raised left none)
            self._stop = None
            if bar is not None:
                bar.leave = done  # after an error the bar is erased: the error is the last line
                bar.close()
        _finish(self)
        self.wall_time, self.steps_run = time.perf_counter() - t0, k
        self.load = self.exchange.load_summary(  # collective; a line on rank 0 (the CLI prints it)
            self.balancer.mean_imbalance, self.balancer.rebalances)
        return self.summary()

    def _stopped(self) -> Stopped:
        """Every rank agreed to stop on a signal at the end of this step: write a checkpoint
        here (``pdyn.io.checkpoint_now``) and say where to continue from."""
        self.neighbours.save(self.store)
        path = checkpoint_now(self.writers, self.view({"state"}))
        where = (f"checkpoint {path}; continue with: pdyn run --restart {path}" if path else
                 "no checkpoint: the run writes no output (give --checkpoint-every); "
                 + self.last_good())
        return Stopped(f"stopped by {signal_name(self.stop_signal)} at the end of step "
                       f"{self.step_index}; {where}", self.stop_signal)


def _run_length(sim, steps: int | None, until, every: int) -> tuple:
    """(steps, every, staged) of ``sim.run``: ``steps`` as given, else the configured number
    unless ``until`` bounds the run (None: no bound); ``every`` ≥ 1. A staged run
    (``[[stages]]``) given neither ``steps`` nor ``until`` nor configured steps is ``staged``:
    unbounded, it runs until its last stage ends."""
    staged = (steps is None and until is None and sim.config.steps is None
              and sim.stages is not None and sim.stages.drives)
    default = None if staged else sim.steps
    if until is None and default is not None:
        steps = default if steps is None else int(steps)
    elif steps is not None:
        steps = int(steps)
    every = int(every)
    if every < 1:
        raise ValueError(f"run(every={every}): must be >= 1")
    return steps, every, staged


def _finish(sim) -> None:
    """The end of ``sim.run``: the store holds the whole state between runs, buffered output
    (the wall-force series) is written."""
    sim.neighbours.save(sim.store)
    with sim.timers("output"):
        view = sim.view()
        for w in sim.writers:
            w.finish(view)


def _bar(steps: int | None, scene: str):
    """The progress bar of a run of ``steps`` (None: unbounded) of ``scene``: steps/s."""
    from tqdm import tqdm

    return tqdm(total=steps, unit="step", desc=f"pdyn {scene}", dynamic_ncols=True,
                mininterval=0.5)


def _check(sim: Simulation, until, callback) -> bool:
    """A check of ``Simulation.run``: ``callback(sim)`` called, then whether ``until`` holds
    (on every rank alike)."""
    if callback is not None:
        callback(sim)
    if until is None:
        return False
    if callable(until):
        return bool(sim.comm.allreduce_max(float(bool(until(sim)))))
    return sim.time >= float(until)
