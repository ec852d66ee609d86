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
kernel.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from .broadphase import make_broadphase
from .checks import (InitialStateError, StepGuard, array_bytes, check_memory, initial_state,
                     node_memory, share_state)
from .config import (ConfigError, ContactConfig, InsertionConfig, SimulationConfig,
                     wall_configs)
from .domain import Box
from .dynamics.contact import ContactLaw, ContactPass, contact_stats, touching_pairs
from .dynamics.glued import GluedMotion, glued_walls
from .dynamics.insertion import Inserter
from .dynamics.integrate import kick, kick_drift
from .dynamics.neighbours import SKIN_DIAMETERS, NeighbourList, integrated
from .dynamics.wallmotion import WallMotion
from .interrupt import StopRequest, Stopped, signal_name
from .io import CONTACT_FORCES, OutputView, checkpoint_now, make_writers
from .io.runid import new_run_id
from .io.wallforces import buffer_bytes
from .parallel import StoreChanges, get_comm, make_exchange
from .parallel.balance import Balancer, block_work
from .parallel.startup import GeneratedSource, ScatteredSource
from .particles import FIXED, GHOST, GLUED, INFINITE, OWNED, ROTATION, ParticleStore
from .scenarios import Scene, make_scene
from .walls import KIND, WallSet
from .zorder import zorder


NO_ROWS = np.zeros(0, np.int64)
NO_NEEDS = frozenset()


class PhaseTimers(dict):
    """Seconds spent per phase (``with timers("contacts"): ...``)."""

    @contextmanager
    def __call__(self, phase: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[phase] = self.get(phase, 0.0) + time.perf_counter() - t0


def scene_from_config(config: SimulationConfig, ranks: int = 1,
                      node: tuple = (1, None)) -> Scene:
    """The initial state a config asks for: its ``[particles]`` or a named scene (generated per
    cell scenes stay undrawn: each of ``ranks`` ranks draws its share; ``node``: the ranks on
    a node and the bytes it has available, ``pdyn.checks.node_memory``)."""
    if config.particles is None:
        rotating = config.contact is not None and ContactLaw.from_config(config.contact).rotating
        return make_scene(config.scene, scale=config.scale, seed=config.seed,
                          materialise=False, ranks=ranks, rotating=rotating,
                          node_ranks=node[0], available=node[1],
                          options=config.scene_options)
    p = config.particles
    return Scene(
        name="custom", box_lo=np.array(config.box.lo), box_hi=np.array(config.box.hi),
        boundary=config.box.boundary, positions=np.asarray(p.positions),
        velocities=np.asarray(p.velocities), radii=np.asarray(p.radii), density=1.0,
        description="spheres given in the config", given_masses=np.asarray(p.masses),
    )


def neighbour_skin(skin: float | None, r_mean: float) -> float:
    """The neighbour lists' skin (m): ``skin``, or ``SKIN_DIAMETERS`` mean diameters (``r_mean``
    the mean radius of all particles, the same on every rank)."""
    if skin is not None:
        return float(skin)
    return SKIN_DIAMETERS * 2.0 * float(r_mean)


def scene_particles(scene: Scene, n_box: int = 0) -> dict:
    """The particles of a scene of arrays as store fields (global ids 0..N-1); the scene's
    fixed spheres (``Scene.fixed``) flagged ``FIXED`` (never integrated) and at rest, its
    glued ones (``Scene.glued``; ``n_box`` box faces precede the scene's walls) fixed too,
    with the wall they move with and their centre at t = 0 (``pdyn.dynamics.glued``)."""
    out = {"gid": np.arange(len(scene), dtype=np.int64), "pos": scene.positions,
           "vel": scene.velocities, "radius": scene.radii, "mass": scene.masses}
    glued = glued_walls(scene.glued, len(scene), scene.walls, n_box)
    fixed = None if scene.fixed is None else np.broadcast_to(np.asarray(scene.fixed, bool),
                                                             (len(scene),))
    if glued is not None:
        fixed = (glued != 0) if fixed is None else fixed | (glued != 0)
        out["glued"], out["anchor"] = glued, scene.positions
    if fixed is not None:
        out["flags"] = np.where(fixed, OWNED | FIXED, OWNED).astype(np.uint8)
        out["vel"] = np.where(fixed[:, None], 0.0, np.asarray(scene.velocities, float))
    return out


@dataclass(frozen=True)
class RestartState:
    """Where a checkpointed run continues (built by ``pdyn.restart``): ``source`` hands each
    rank its checkpointed particles (a particle source, ``pdyn.parallel.startup``), the
    exchange's schedule (``exchange.state()``), the step, the time step (s), the largest
    displacement since the last rebuild ``drift`` (m), the run's mean radius ``r_mean`` (m,
    the neighbour lists' default skin derives from it), the inserter's state
    (``Inserter.state()``, None without insertion) and the run id (``pdyn.io.runid``; None:
    a checkpoint from before run ids, the continued run gets a new one)."""

    source: object
    exchange: dict
    step: int
    dt: float
    drift: float
    r_mean: float
    insertion: dict | None = None
    run_id: str | None = None
    glued: bool = False  # the checkpoint holds glued spheres (pdyn.dynamics.glued)
    path: str | None = None  # the checkpoint file (the last good one until the run writes)


class Reduction(NamedTuple):
    """The step's one ``allreduce_max``: the largest squared move of the step (m², the
    guard), the largest squared drift since the last rebuild (m², the schedule), the largest
    owned count (the load record) and the signal a rank received to stop (pdyn.interrupt)."""

    move2: float
    drift2: float
    owned: float
    stop: float


class Decisions(NamedTuple):
    """What step ``step`` does besides the work of every step: rebuild (migrate, ghost plan,
    broad phase, lists), pour (an insertion step), balance, reorder memory, rebuild the lists
    (``lists``: a rebuild, or every step with skin 0), the ``writers`` due at its end and
    what they ``needs`` (``pdyn.io.OutputView``)."""

    step: int
    rebuild: bool
    pour: bool
    balance: bool
    reorder: bool
    lists: bool
    writers: list
    needs: frozenset


class Schedule:
    """Decides each step from the step's drift: rebuild when the lists are due
    (``NeighbourList.due``) or spheres are poured in, balance and reorder at the first
    rebuild step ``every`` steps after the last, the writers due; with translating walls
    also at every multiple of ``wall_every`` steps (``WallSet.rebuild_every``: no wall moves
    more than half the skin between rebuilds). The same decisions on every rank count."""

    def __init__(self, lists, inserter, balancer, reorder_every: int, reordered_at: int,
                 writers: list, dt: float, wall_every: int = 0):
        self.lists, self.inserter, self.balancer = lists, inserter, balancer
        self.reorder_every, self.reordered_at = reorder_every, reordered_at
        self.writers, self.dt, self.wall_every = writers, dt, wall_every

    def decide(self, step: int, drift2: float) -> Decisions:
        """The decisions of step ``step`` (the index after it), given the largest squared
        drift since the last rebuild ``drift2`` (m²)."""
        pour = self.inserter is not None and self.inserter.due(step, step * self.dt)
        rebuild = (pour or bool(self.lists.due(drift2))  # new spheres enter lists and plan
                   or (self.wall_every > 0 and step % self.wall_every == 0))  # moving walls
        reorder = (rebuild and self.reorder_every > 0
                   and step - 1 - self.reordered_at >= self.reorder_every)
        if reorder:
            self.reordered_at = step - 1
        writers = [w for w in self.writers if w.due(step)]
        needs = frozenset().union(*[w.needs for w in writers]) if writers else NO_NEEDS
        return Decisions(step, rebuild, pour, rebuild and self.balancer.due(step), reorder,
                         rebuild or self.lists.every_step, writers, needs)


class Simulation:
    """An elastic/damped sphere simulation of one scene on this rank.

    ``Simulation(config)`` builds the scene, the walls, the broad phase and the initial forces;
    ``run()`` advances ``config.steps`` steps (or the scene's suggestion) with a progress bar;
    ``step()`` advances one. The particle store is ``sim.store`` (owned spheres, ghosts and
    walls by stable handle); ``sim.contact_pairs()`` lists current contacts by global id.
    ``scene`` replaces the config's scene; ``restart`` continues a checkpointed run (use
    :func:`pdyn.restart.from_checkpoint`).
    """

    def __init__(self, config: SimulationConfig | None = None, *, comm=None,
                 scene: Scene | None = None, restart: RestartState | None = None):
        build(self, config or SimulationConfig(), comm if comm is not None else get_comm(),
              scene, restart)

    # ------------------------------------------------------------------ setup helpers
    def _overlap_rules(self) -> dict:
        c = self.config
        return {"contact_forces": self.contact.law.stiff,
                "overlap": c.initial_overlap, "tolerance": c.overlap_tolerance}

    def _source(self, scene: Scene):
        """Where a fresh start's particles come from: the scene's cells, drawn per rank, or
        its arrays, checked on rank 0 (``pdyn.checks.initial_state``, relaxed there when asked)
        and scattered."""
        if scene.cells is not None:
            return GeneratedSource(scene)
        found = particles = None
        if self.comm.rank == 0:
            try:
                particles, note = initial_state(scene_particles(scene, self.wallset.n_box),
                                                self.box, **self._overlap_rules())
                found = (None, note)
            except InitialStateError as exc:
                found = (str(exc), None)
        error, self.setup_note = self.comm.bcast(found)
        if error:
            raise InitialStateError(error)
        return ScatteredSource(particles, self.comm, self.box)

    def _add_walls(self) -> None:
        """The box faces and the configured walls (``self.wallset``) as infinite particles."""
        ws = self.wallset
        if len(ws):
            self.store.add(gid=ws.gid, pos=ws.points(0.0), normal=ws.normals, radius=np.inf,
                           mass=np.inf, flags=INFINITE | FIXED)

    def _inserter(self, n_particles: int, restart: RestartState | None) -> Inserter | None:
        """The run's insertion (config's ``[insertion]``, else the scene's), continuing a
        checkpoint's state; None without one. New spheres get global ids from
        ``n_particles`` on (the set-up's ids are 0 … n − 1)."""
        cfg = self.config.insertion
        if cfg is None and self.scene.insertion:
            cfg = InsertionConfig(**self.scene.insertion)
        if cfg is None:
            return None
        cfg.check_box(self.box.lo, self.box.hi)
        return Inserter(asdict(cfg), int(n_particles), restart.insertion if restart else None)

    def _time_step(self) -> float:
        """The configured (or the scene's) dt, or the law's limit (``ContactLaw.time_step``)."""
        given = self.config.dt if self.config.dt is not None else self.scene.dt
        try:
            return self.contact.law.time_step(given, *self._spheres(), self.config.dt_safety,
                                              self.config.allow_large_dt,
                                              self.comm.allreduce_min)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def _spheres(self) -> tuple[np.ndarray, np.ndarray]:
        """Radii and masses of this rank's spheres, plus the smallest and largest the
        insertion will add: the spheres that bound the time step."""
        h = self.store.owned
        radius, mass = self.store.radius[h], self.store.mass[h]
        if self.inserter is not None:
            radius = np.concatenate((radius, self.inserter.radii))
            mass = np.concatenate((mass, self.inserter.mass(self.inserter.radii)))
        return radius, mass

    def _wall_order(self) -> np.ndarray:
        """Wall handles in the order their forces are summed: by id −1, −2, ..."""
        walls = self.store.walls
        return np.ascontiguousarray(walls[np.argsort(-self.store.gid[walls], kind="stable")])

    # ------------------------------------------------------------------ the step
    def _forces(self, needs: frozenset = NO_NEEDS) -> None:
        """Contact forces (plus gravity) on the integrated particles, from the lists (timed as
        contacts); with rotation also torques and the contact history, and each entry's
        tangential force when the due writers' ``needs`` ask for contact forces; then what
        those writers need of the step's contacts (:meth:`_capture`, timed as output)."""
        with self.timers("contacts"):
            self.n_contacts, self.elastic_energy = self.contact.forces(
                self.store, self.neighbours, self.gravity, self.dt,
                record=bool(needs & CONTACT_FORCES) or self.record_tangential)
        with self.timers("output"):
            self._capture(needs)

    def _reorder(self) -> None:
        """Z-curve reordering of particle memory ([Ihmsen2011] §4.5): walls first, then every
        other live particle along the Z-curve of cells one largest diameter wide. Done at
        rebuild steps (between migrate and ghosts: no ghosts then, so the owned particles end
        up contiguous); handles change (the exchange remaps the ones it keeps, the broad phase
        is rebuilt), results do not."""
        store = self.store
        others = store.handles_with(OWNED | GHOST, INFINITE)
        if others.size:
            cell = 2.0 * float(store.radius[others].max())
            old_to_new = store.permute(np.concatenate((store.walls,
                                                       zorder(store.pos, others, cell))))
            self.exchange.remap(old_to_new)

    def _rebuild(self, changes: list[StoreChanges] | None, relist: bool,
                 drift: float = 0.0) -> None:
        """The neighbour lists rebuilt (``NeighbourList.rebuild``) from the store's
        ``changes`` (None: the broad phase built afresh); ``relist``: a schedule rebuild."""
        self.neighbours.rebuild(self.broadphase, self.store, changes, relist=relist,
                                walls=self._walls, table=self.wallset.table,
                                mesh=self.wallset.bundle, drift=drift, timers=self.timers)

    def _spin(self) -> tuple:
        """The spin arrays the kicks integrate (``omega``, ``torque``, ``radius`` and the rows
        that touched something in the last force pass), None without rotation."""
        s = self.store
        if not self.contact.rotating:
            return None, None, None, NO_ROWS
        return s.omega, s.torque, s.radius, self.contact.spinning_rows(self.neighbours)

    def _integrated(self) -> np.ndarray:
        """Handles of the owned, finite, not fixed particles, ascending."""
        return integrated(self.store.flags)

    def step(self, close: bool = True) -> None:
        """Advance one time step ``dt`` (ARCHITECTURE.md, "The step"). ``close=False`` may leave
        the closing half-kick to the next step's kick–drift (the same bits), as :meth:`run` does
        between its steps; not when writers are due or the run stops."""
        t = self.timers
        with t("integrate"):
            moved = self._kick_drift(0.5 * self.dt)
        with t("ghosts"):  # the ghosts' state travels while the ranks agree on the reduction
            red = self._reduce(moved)
        do = self.schedule.decide(self.step_index + 1, red.drift2)
        self.wall_motion.advance(self.store, self._walls, do.step)
        if do.lists:
            with t("contacts"):  # what hangs on the lists (the contact history) into the
                self.neighbours.before_rebuild(self.store)  # store: before particles move
        changes = self._exchange(do)
        with t("ghosts"):
            ghosts = self.exchange.ghosts()
        if do.lists:
            self._rebuild(None if changes is None else changes + [ghosts], do.rebuild)
        self._forces(do.needs)
        self._kick_owed = True
        if close or do.writers or self.stop_signal:
            with t("integrate"):
                self.close_step()
        self.step_index += 1
        if do.writers:
            self._write(do.writers, do.needs)

    def _write(self, writers: list, needs: frozenset) -> None:
        """Call the due ``writers`` with the view of what they ``needs``; for a writer that
        needs the ``state`` the store holds the whole state (what hangs on the lists saved
        into it)."""
        with self.timers("output"):
            if "state" in needs:  # else the history stays on the lists (no save, no reload)
                self.neighbours.save(self.store)
            view = self.view(needs)
            for w in writers:
                w(view)

    @property
    def time(self) -> float:
        """The simulated time (s): step · dt."""
        return self.step_index * self.dt

    def close_step(self) -> None:
        """The closing half-kick of the last step, if it left it to the next (:meth:`step`):
        the velocities are then the full-step ones."""
        if self._kick_owed:
            store = self.store
            kick(store.vel, store.force, store.mass, self.neighbours.rows, 0.5 * self.dt,
                 *self._spin())
            self._kick_owed = False

    def _kick_drift(self, half: float) -> np.ndarray:
        """The first half-kick (after the step before's closing one, if left to it) and the
        drift: this rank's part of the step's reduction (:class:`Reduction`)."""
        store, lists = self.store, self.neighbours
        moved = kick_drift(store.pos, store.vel, store.force, store.mass, store.build_pos,
                           lists.rows, half, self.dt, *self._spin(), 2 if self._kick_owed else 1)
        self._kick_owed = False
        glued = self.glued.place(store, self.step_index + 1)
        if glued is not None:
            moved = np.maximum(moved, glued)
        mine = self._reduce_buffer
        mine[:2] = moved
        mine[2] = self._n_owned
        mine[3] = self._stop.signum if self._stop is not None else 0.0
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
        reordered, the broad phase is built afresh)."""
        t, store, lists = self.timers, self.store, self.neighbours
        if do.balance:
            with t("balance"):  # the work of the interval that ends, on its lists
                work = block_work(self.exchange.grid, store.pos, lists.rows, lists.start)
        with t("migrate"):
            changes = [self.exchange.migrate(do.rebuild, self.dt)]
        if do.balance:
            with t("balance"):
                changes[0], moved, sent = self.exchange.rebalance(
                    changes[0], work, self.balancer.threshold, self.balancer.curve, do.step)
                self.balancer.checked(do.step, moved, sent)
        if do.rebuild and self.inserter is not None:
            with t("migrate"):
                gone, new = self.inserter.pour(store, self.comm, do.step * self.dt,
                                               self.exchange.owner_of, do.pour)
                changes.append(StoreChanges(emigrated=gone, immigrated=new))
        if do.rebuild:
            self._n_owned = int(store.owned.size)
            self.rebuilds += 1
        if do.reorder:
            with t("reorder"):
                self._reorder()
                self._walls = self._wall_order()
            return None
        return changes

    def view(self, needs=frozenset()) -> OutputView:
        """What a writer may read now (``pdyn.io.OutputView``), with what ``needs`` asks
        for: ``state`` the exchange's and the inserter's state, ``network``, ``walls`` and
        ``thermo`` what :meth:`_capture` kept of the step."""
        state = "state" in needs
        ins = self.inserter
        return OutputView(
            step=self.step_index, time=self.time, dt=self.dt, comm=self.comm,
            store=self.store, box=self.box, scene=self.scene.name, run_id=self.run_id,
            first_step=self.first_step, config=self.config, contact=self.contact_config,
            gravity=self.gravity, steps_total=self.steps, r_mean=self.r_mean,
            network=self.network, wall_load=self.wall_load, contacts=self.contact_stats,
            exchange=self.exchange.state() if state else None,
            insertion=({"params": ins.p, "state": ins.state()} if state and ins else None),
            wall_kinds=self.wallset.table[:, KIND], n_box=self.wallset.n_box,
            wall_table=self.wallset.table, wall_meshes=self.wallset.mesh_of or None)

    def run(self, steps: int | None = None, progress: bool | None = None) -> dict:
        """Advance ``steps`` (default: the configured number); return :meth:`summary`."""
        steps = self.steps if steps is None else int(steps)
        progress = self.config.progress if progress is None else progress
        bar = None
        if progress and self.comm.rank == 0:
            from tqdm import tqdm

            bar = tqdm(total=steps, unit="step", desc=f"pdyn {self.scene.name}",
                       dynamic_ncols=True, mininterval=0.5)
        t0 = time.perf_counter()
        done = False
        try:
            with StopRequest() as self._stop:  # a signal stops at the end of a step
                for k in range(steps):
                    self.step(close=k == steps - 1)
                    if bar is not None:
                        bar.update(1)
                    if self.stop_signal:
                        raise self._stopped()
            done = True
        finally:
            self.close_step()  # (a step that raised left none)
            self._stop = None
            if bar is not None:
                bar.leave = done  # after an error the bar is erased: the error is the last line
                bar.close()
        self.neighbours.save(self.store)  # the store holds the whole state between runs
        with self.timers("output"):  # buffered output (the wall-force series)
            view = self.view()
            for w in self.writers:
                w.finish(view)
        self.wall_time = time.perf_counter() - t0
        self.steps_run = steps
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

    def last_good(self) -> str:
        """Where the run can continue from now: its newest checkpoint, else the checkpoint it
        was restarted from (for every stop's message)."""
        written = [w.written[-1] for w in self.writers if w.name == "checkpoint" and w.written]
        last = written[-1] if written else self.restarted_from
        return (f"last good checkpoint: {last}" if last else
                "no checkpoint written by this run")

    # ------------------------------------------------------------------ observers
    def kinetic_energy(self) -> float:
        return self.comm.allreduce_sum(self.store.kinetic_energy())

    def potential_energy(self) -> float:
        """Elastic energy stored in contacts plus gravitational energy (J)."""
        h = self._integrated()
        grav = -float(np.sum(self.store.mass[h] * (self.store.pos[h] @ self.gravity)))
        return self.comm.allreduce_sum(self.elastic_energy + grav)

    def momentum(self) -> np.ndarray:
        return self.comm.allreduce_sum(self.store.momentum())

    def contact_pairs(self) -> np.ndarray:
        """Current contacts of this rank's integrated spheres with other spheres, as sorted
        global-id pairs (K, 2), each once."""
        return touching_pairs(self.store, self.neighbours)

    def _capture(self, needs: frozenset) -> None:
        """Keep the contact network (``sim.network``), the wall contacts (``sim.wall_load``)
        or the contact statistics (``sim.contact_stats``) when a writer due at the end of this
        step asks for them (``needs``, their ``needs`` attributes): evaluated right after the
        contact kernel, with the velocities it saw, so they are the forces applied — after
        the closing half-kick, damping would see other velocities (and on several ranks
        ghosts keep the half-step ones)."""
        self.contact_stats = (contact_stats(self.store, self.neighbours,
                                            self.contact.wall_table(self.store),
                                            self.contact.mesh)
                              if "thermo" in needs else None)
        self.network = self.contact_network() if "network" in needs else None
        if "walls" in needs:
            n = self.network
            if n is None:
                self.wall_load = self.wall_contacts()
            else:
                w = n["id"][:, 1] < 0
                self.wall_load = {k: v[w] for k, v in n.items() if k != "ends"}
                self.wall_load["ends"] = n["ends"].reshape(-1, 2, 3)[w].reshape(-1, 3)

    def contact_network(self) -> dict:
        """This rank's share of the touching contacts with their forces now (each contact on
        the rank that owns its lower-id sphere; :meth:`ContactPass.contact_list`). Snapshots
        write the one captured in the step (``sim.network``), which damping evaluated with
        the kernel's velocities."""
        return self.contact.contact_list(self.store, self.neighbours, self.dt,
                                         tangential=self._tangential())

    def wall_contacts(self) -> dict:
        """This rank's sphere–wall contacts with their forces now (the wall-force series
        uses the ones captured in the step, ``sim.wall_load``)."""
        return self.contact.contact_list(self.store, self.neighbours, self.dt, spheres=False,
                                         tangential=self._tangential())

    def _tangential(self):
        """The tangential force per neighbour-list entry the last force pass recorded (in a
        step whose writers need contacts, or every step with ``sim.record_tangential``)."""
        return self.contact.recorded_tangential(self.neighbours)

    def summary(self) -> dict:
        n = self.comm.allreduce_sum(int(self.store.owned.size))
        contacts = self.comm.allreduce_sum(int(self.n_contacts))
        wall = getattr(self, "wall_time", 0.0)
        steps = getattr(self, "steps_run", 0)
        return {
            "scene": self.scene.name,
            "particles": n,
            "ranks": self.comm.size,
            "broadphase": self.config.broadphase,
            "steps": self.step_index,
            "dt": self.dt,
            "time": self.time,
            "wall_seconds": wall,
            "steps_per_second": steps / wall if wall > 0 else float("nan"),
            "contacts": contacts,
            "rebuilds": self.rebuilds,
            "rebalances": self.balancer.rebalances,
            "mean_imbalance": self.balancer.mean_imbalance,
            "neighbour_skin": self.neighbours.skin,
            "kinetic_energy": self.kinetic_energy(),
            "timers": dict(self.timers),
        }


def build(sim: Simulation, config: SimulationConfig, comm, scene: Scene | None,
          restart: RestartState | None) -> None:
    """Set up ``sim``: its frame (scene, box, gravity, contact law, ids), its particles (store,
    walls, exchange), its schedule (lists, balancer, dt, guard, writers) and the first force
    pass (a restart keeps the checkpoint's forces)."""
    _frame(sim, config, comm, scene, restart)
    source, drift = _particles(sim, restart)
    _schedule(sim, source.n, restart)
    _first_pass(sim, restart, drift)


def _frame(sim, config, comm, scene, restart) -> None:
    """Scene, box and walls (``sim.wallset``, ``pdyn.walls``), gravity, contact model, step
    count, run id, timers and counters."""
    sim.config, sim.comm = config, comm
    sim.node = node_memory(comm)  # the same on every rank: the same memory verdicts
    sim.scene = scene = scene if scene is not None else scene_from_config(config, comm.size,
                                                                          sim.node)
    box = config.box
    lo = np.array(box.lo if box else scene.box_lo, float)
    hi = np.array(box.hi if box else scene.box_hi, float)
    boundary = tuple(box.boundary if box else scene.boundary)
    # the box faces, then the scene's walls and the config's (pdyn.walls); the config keeps
    # them all, so checkpoints hold them (once: a config that holds them already, a run's
    # own, is kept as it is)
    own = wall_configs(scene.walls)
    if own and config.walls[:len(own)] != own:
        sim.config = config = config.with_(walls=own + config.walls)
    sim.wallset = WallSet(*Box(lo, hi, boundary).walls(), [w.spec() for w in config.walls])
    sim.box = Box(lo, hi, boundary, tuple(
        {**w.spec(), "name": f"walls[{k}] ({w.type})"} for k, w in enumerate(config.walls)))
    sim.gravity = np.array(config.gravity if config.gravity is not None else scene.gravity,
                           float)
    # the contact configuration the run uses (its config's, else the scene's), checkpointed whole
    sim.contact_config = config.contact or ContactConfig(**scene.contact)
    sim.contact = ContactPass(ContactLaw.from_config(sim.contact_config), sim.wallset.table,
                              sim.wallset.bundle)
    sim.record_tangential = False  # True: every force pass records tangential forces
    sim.steps = config.steps or scene.steps
    sim.step_index = sim.first_step = restart.step if restart else 0
    # which run the files belong to (pdyn.io.runid): made once, kept through restarts
    sim.run_id = restart.run_id if restart and restart.run_id else comm.bcast(
        new_run_id() if comm.rank == 0 else None)
    sim.restarted_from = restart.path if restart else None
    sim._stop = None  # the signals' flag while run() runs (pdyn.interrupt)
    sim.stop_signal = 0  # the signal every rank agreed to stop on (0: none)
    sim._kick_owed = False  # the last step left its closing half-kick to the next
    sim.timers = PhaseTimers()
    sim.n_contacts = 0
    sim.elastic_energy = 0.0
    sim.network = sim.wall_load = sim.contact_stats = None  # captured for output (_capture)
    sim.rebuilds = 0
    sim.setup_note = None  # what relaxing given particles did (pdyn.checks)


def _particles(sim, restart):
    """The particle source, the store with its walls, the exchange holding this rank's share;
    returns (source, drift since the last rebuild)."""
    config, comm = sim.config, sim.comm
    source = restart.source if restart else sim._source(sim.scene)
    sim.r_mean = restart.r_mean if restart else source.r_mean
    sim.inserter = sim._inserter(source.n, restart)
    # one memory estimate of what the config implies, before the large allocations
    check_memory(sim.node, comm.size, sim.box, config, particles=source.n,
                 inserter=sim.inserter, rotating=sim.contact.rotating,
                 restart=restart is not None, meshes=array_bytes(sim.wallset.bundle),
                 series=buffer_bytes(comm.size) if config.output.wall_forces else 0)
    # the rotation fields exist only when the contact model rotates; room for the rank's
    # share and a quarter more for its ghosts (the store grows by half when that is short:
    # every slot is a few hundred bytes, resident once the pages around it are touched)
    sim.store = ParticleStore(capacity=max(64, 5 * source.n // (4 * max(comm.size, 1))),
                              features=(ROTATION,) * sim.contact.rotating
                              + (GLUED,) * _has_glued(sim.scene, restart))
    sim._add_walls()
    if sim.inserter is not None and source.n == 0 and not restart:  # an empty box to pour into
        sim.r_mean = float(np.mean(sim.inserter.radii))
    sim.skin = neighbour_skin(config.neighbour_skin, sim.r_mean)
    sim.exchange = make_exchange(sim.store, sim.box, comm, dims=config.blocks,
                                 skin=sim.skin or None, n_particles=source.n,
                                 curve=config.balance_curve)
    # a restart continues the exchange's plan and keeps centres unwrapped (distribute
    # checks them against the skin along periodic axes); particles may have moved up to
    # ``drift`` since the last rebuild, so the first plan and lists reach that much farther
    drift = restart.drift if restart else 0.0
    if restart:
        sim.exchange.restore(restart.exchange, drift=drift)
    sim.exchange.distribute(source, wrap=restart is None)
    if sim.inserter is not None:
        sim.exchange.admit(float(sim.inserter.radii.max()))
    sim._n_owned = int(sim.store.owned.size)
    sim._reduce_buffer = np.zeros(len(Reduction._fields))  # this rank's part of the reduction
    return source, drift


def _has_glued(scene: Scene, restart) -> bool:
    """Whether the run's store needs the glued spheres' fields: the checkpoint has them, or
    the scene glues spheres to a wall (refused for a scene generated per cell)."""
    if restart:
        return restart.glued
    if scene.glued is None or not (np.asarray(scene.glued) >= 0).any():
        return False
    if scene.cells is not None:
        raise InitialStateError("glued: only a scene of arrays glues spheres to a wall, not "
                                f"the {scene.name!r} scene generated per lattice cell")
    return True


def _schedule(sim, n_particles: int, restart) -> None:
    """Neighbour lists, balancer, time step, broad phase, writers, step guard and the
    schedule that paces them."""
    config, comm = sim.config, sim.comm
    sim.neighbours = NeighbourList(sim.skin, rebuild_skin=sim.exchange.skin)
    # the schedule continues a checkpoint's; one rank has nothing to balance
    sim.balancer = Balancer(
        config.balance_every if comm.size > 1 else 0,
        config.balance_threshold, config.balance_curve, comm.size, n_particles,
        last=getattr(sim.exchange, "balanced_at", 0) if restart else sim.step_index)
    if sim.balancer.every:
        sim.timers["balance"] = 0.0  # a row of the phase table even if never due
    sim.dt = restart.dt if restart else sim._time_step()
    sim.wall_motion = WallMotion(sim.wallset, sim.dt)
    sim.broadphase = make_broadphase(config.broadphase, **config.broadphase_params)
    sim.writers = make_writers(config.output)  # snapshots, checkpoints, series (pdyn.io)
    t_c = comm.allreduce_min(sim.contact.law.contact_time(*sim._spheres()))
    sim.guard = StepGuard(sim.store, comm, sim.dt, t_c, config.dt_safety,
                          sim.writers)
    if sim.inserter is not None:  # the smallest sphere may be one still to come
        sim.guard.r_min = min(sim.guard.r_min, float(sim.inserter.radii.min()))
    sim.reorder_every = config.reorder_every
    # translating walls and turning meshes: the lists reach half the skin farther for them,
    # and a rebuild comes before one has moved that far (relative to the largest sphere)
    sim.wallset.set_reach(sim.neighbours.skin)
    r_max = 0.0
    if sim.wallset.turning:  # (the same on every rank: every rank has the walls)
        own = sim.store.radius[sim.store.owned]
        r_max = comm.allreduce_max(float(own.max()) if own.size else 0.0)
        if sim.inserter is not None:
            r_max = max(r_max, float(sim.inserter.radii.max()))
    sim.schedule = Schedule(sim.neighbours, sim.inserter, sim.balancer, sim.reorder_every,
                            sim.step_index, sim.writers, sim.dt,
                            sim.wall_motion.every(sim.neighbours.skin, r_max))


def _first_pass(sim, restart, drift: float) -> None:
    """Reorder, ghosts, the initial-state checks of a rank's share, the first lists and
    force pass."""
    if sim.reorder_every:
        sim._reorder()
    sim._walls = sim._wall_order()
    sim.wall_motion.advance(sim.store, sim._walls, sim.step_index)
    sim.glued = GluedMotion(sim.store, sim.wallset.table, sim.wallset.normals, sim.dt,
                            np.where(sim.box.periodic, sim.box.length, 0.0))
    sim.neighbours.hang(*sim.contact.hangers, sim.glued)
    # velocities and spins of the motion (a restart: the same bits)
    sim.glued.place(sim.store, sim.step_index)
    sim.exchange.ghosts()
    if restart or sim.scene.cells is not None:  # this rank's share plus its ghosts
        share_state(sim.store, sim.box, sim.comm, restart=restart is not None,
                    **sim._overlap_rules())
    # a restart keeps the checkpoint's build positions (its schedule continues) and its
    # forces and history (``ContactPass.resume``); contacts and elastic energy are counted
    # either way
    sim._rebuild(None, relist=restart is None, drift=drift)
    if restart:
        with sim.timers("contacts"):
            sim.n_contacts, sim.elastic_energy = sim.contact.resume(
                sim.store, sim.neighbours, sim.gravity, sim.dt)
    else:
        sim._forces()
