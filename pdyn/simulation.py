"""The driver: one time step on one rank, reading top to bottom.

integrate (kick–drift) → migrate → [reorder] → ghosts → broad phase → contacts → integrate
(kick) → writers. Velocity Verlet ([Verlet1967]) with the first half-kick and the drift opening
the step, so the forces held at the end of a step belong to its positions (what a snapshot or
checkpoint needs). Components return what they changed and the driver applies it where the step
shows it: the exchange (``pdyn.parallel``) reports the handles it removed from and added to the
store, and the broad-phase phase of the step removes and inserts them. No component holds a
reference to the simulation. Python orchestrates; every per-particle loop is a numba kernel.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .broadphase import canonical_pairs, filter_overlapping, make_broadphase
from .checks import StepGuard, initial_state
from .config import ConfigError, ContactConfig, SimulationConfig
from .domain import Box
from .dynamics.contact import ContactModel
from .dynamics.integrate import kick, kick_drift
from .io import make_writers
from .parallel import StoreChanges, get_comm, make_exchange
from .particles import FIXED, GHOST, INFINITE, OWNED, ParticleStore
from .scenarios import Scene, make_scene
from .zorder import zorder


class PhaseTimers(dict):
    """Seconds spent per phase (``with timers("contacts"): ...``)."""

    @contextmanager
    def __call__(self, phase: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[phase] = self.get(phase, 0.0) + time.perf_counter() - t0


def scene_from_config(config: SimulationConfig) -> Scene:
    """The initial state a config asks for: its ``[particles]`` or a named scene."""
    if config.particles is None:
        return make_scene(config.scene, scale=config.scale, seed=config.seed)
    p = config.particles
    return Scene(
        name="custom", box_lo=np.array(config.box.lo), box_hi=np.array(config.box.hi),
        boundary=config.box.boundary, positions=np.array(p.positions),
        velocities=np.array(p.velocities), radii=np.array(p.radii), density=1.0,
        description="spheres given in the config", given_masses=np.array(p.masses),
    )


def scene_particles(scene: Scene) -> dict:
    """The scene's particles as store fields (global ids 0..N-1)."""
    return {"gid": np.arange(len(scene), dtype=np.int64), "pos": scene.positions,
            "vel": scene.velocities, "radius": scene.radii, "mass": scene.masses}


@dataclass(frozen=True)
class RestartState:
    """Where a checkpointed run continues (built by ``pdyn.restart``): the particles as store
    fields (global arrays, ``pdyn.particles.CHECKPOINT``), the rank that owned each, the
    exchange's schedule (``exchange.state()``), the step and the time step (s)."""

    particles: dict
    rank_of: np.ndarray
    exchange: dict
    step: int
    dt: float


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
        self.config = config = config or SimulationConfig()
        self.comm = comm if comm is not None else get_comm()
        scene = scene if scene is not None else scene_from_config(config)
        self.scene = scene
        box = config.box
        self.box = Box(
            np.array(box.lo if box else scene.box_lo, float),
            np.array(box.hi if box else scene.box_hi, float),
            tuple(box.boundary if box else scene.boundary),
        )
        self.gravity = np.array(config.gravity if config.gravity is not None else scene.gravity,
                                float)
        self.contact = ContactModel.from_config(config.contact or ContactConfig(**scene.contact))
        self.steps = config.steps or scene.steps
        self.step_index = restart.step if restart else 0
        self.timers = PhaseTimers()
        self.n_contacts = 0
        self.elastic_energy = 0.0

        self.store = ParticleStore(capacity=max(64, 2 * len(scene) // max(self.comm.size, 1)))
        self._add_walls()
        self.exchange = make_exchange(self.store, self.box, self.comm, dims=config.blocks)
        particles = restart.particles if restart else scene_particles(scene)
        # a restart continues the exchange's schedule and keeps centres unwrapped (distribute
        # checks them against the skin along periodic axes)
        if restart:
            self.exchange.restore(restart.exchange)
        particles, self.setup_note = initial_state(  # the same verdict on every rank
            particles, self.box, contact_forces=self.contact.E > 0 or self.contact.k > 0,
            overlap=config.initial_overlap, tolerance=config.overlap_tolerance,
            restart=restart is not None)
        self.exchange.distribute(particles, wrap=restart is None,
                                 rank_of=restart.rank_of if restart else None)
        self.dt = restart.dt if restart else self._time_step()
        self.time = self.step_index * self.dt
        self.broadphase = make_broadphase(config.broadphase, **config.broadphase_params)
        self.exchange.ghosts()
        self.broadphase.build(self.store.pos, self.store.radius, self.store.live)
        self.writers = make_writers(config.output)  # snapshots, checkpoints (pdyn.io)
        self.guard = StepGuard(self.store, self.comm, self.dt, self._contact_time(),
                               config.dt_safety, self.writers)
        self.reorder_every = config.reorder_every
        self._reordered_at = -self.reorder_every  # the first step reorders the scene
        # a restart keeps the checkpoint's forces (damping saw the half-step velocity, which
        # is gone); contacts and elastic energy are counted either way
        kept = self.store.force.copy() if restart else None
        with self.timers("contacts"):
            self._forces()
        if kept is not None:
            self.store.force[:] = kept

    # ------------------------------------------------------------------ setup helpers
    def _add_walls(self) -> None:
        pts, nrm = self.box.walls()
        if len(pts):
            self.store.add(
                gid=-1 - np.arange(len(pts), dtype=np.int64), pos=pts, normal=nrm,
                radius=np.inf, mass=np.inf, flags=INFINITE | FIXED,
            )

    def _time_step(self) -> float:
        if self.config.dt is not None:
            return float(self.config.dt)
        if self.scene.dt is not None:
            return float(self.scene.dt)
        t_c = self._contact_time()
        if not math.isfinite(t_c):
            raise ConfigError(f"contact.youngs_modulus = {self.contact.E!r}: no contact "
                              "stiffness, so no time step follows from the contact time; give "
                              "dt (or a stiffness)")
        return t_c / self.config.dt_safety

    def _contact_time(self) -> float:
        """The shortest contact time t_c of all spheres (s; inf without stiffness)."""
        h = self.store.owned
        return self.comm.allreduce_min(self.contact.contact_time(self.store.radius[h],
                                                                 self.store.mass[h]))

    # ------------------------------------------------------------------ the step
    def _forces(self, pairs=None) -> np.ndarray:
        """Contact forces (plus gravity) on the integrated particles; returns their handles."""
        if pairs is None:
            pairs = self.broadphase.candidate_pairs(include_infinite=False)
        moving = self._integrated()
        self.n_contacts, self.elastic_energy = self.contact.forces(
            self.store, pairs, self.broadphase.infinite, moving, self.gravity
        )
        return moving

    def reorder(self) -> None:
        """Z-curve reordering of particle memory ([Ihmsen2011] §4.5): walls first, then every
        other live particle along the Z-curve of cells one largest diameter wide. Handles
        change (the exchange remaps the ones it keeps, the broad phase is rebuilt); results do
        not."""
        store = self.store
        others = store.handles_with(OWNED | GHOST, INFINITE)
        if others.size:
            cell = 2.0 * float(store.radius[others].max())
            old_to_new = store.permute(np.concatenate((store.walls,
                                                       zorder(store.pos, others, cell))))
            self.exchange.remap(old_to_new)
            self.broadphase.build(store.pos, store.radius, store.live)
        self._reordered_at = self.step_index

    def _integrated(self) -> np.ndarray:
        return self.store.handles_with(OWNED, INFINITE | FIXED)  # owned, not walls, not fixed

    def _apply(self, changes: list[StoreChanges]) -> None:
        """Bring the broad phase up to date with what the exchange did to the store: first
        the removed handles (their slots may hold new particles already), then the added."""
        removed = np.concatenate([c.removed for c in changes])
        added = np.concatenate([c.added for c in changes])
        if removed.size:
            self.broadphase.remove(removed)
        if added.size:
            self.broadphase.bind(self.store.pos, self.store.radius)  # the store may have grown
            self.broadphase.insert(added)

    def step(self) -> None:
        """Advance one time step ``dt``."""
        store, t, half = self.store, self.timers, 0.5 * self.dt
        with t("integrate"):
            moving = self._integrated()
            displacement = kick_drift(store.pos, store.vel, store.force, store.mass, moving,
                                      half, self.dt)
            self.guard.check(displacement, moving, self.step_index + 1)  # pdyn.checks
        with t("migrate"):
            changes = [self.exchange.migrate(displacement, self.dt)]
        if self.reorder_every and self.step_index - self._reordered_at >= self.reorder_every:
            with t("reorder"):
                self.reorder()  # rebuilds the broad phase: the changes so far are in it
            changes = []
        with t("ghosts"):
            changes.append(self.exchange.ghosts())
        with t("broadphase"):
            self._apply(changes)
            self.broadphase.update(store.pos, store.radius)
            pairs = self.broadphase.candidate_pairs(include_infinite=False)
        with t("contacts"):
            moving = self._forces(pairs)
        with t("integrate"):
            kick(store.vel, store.force, store.mass, moving, half)
        self.step_index += 1
        self.time = self.step_index * self.dt
        for w in self.writers:
            if w.due(self.step_index):
                with t("output"):
                    w(self)

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
            for _ in range(steps):
                self.step()
                if bar is not None:
                    bar.update(1)
            done = True
        finally:
            if bar is not None:
                bar.leave = done  # after an error the bar is erased: the error is the last line
                bar.close()
        self.wall_time = time.perf_counter() - t0
        self.steps_run = steps
        self.load = self.exchange.load_summary()  # collective; a line on rank 0 (N > 1 only)
        if self.load and self.comm.rank == 0:
            print(self.load, flush=True)
        return self.summary()

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
        """Current sphere–sphere contacts on this rank as sorted global-id pairs (K, 2)."""
        s = self.store
        pairs = filter_overlapping(self.broadphase.candidate_pairs(False), s.pos, s.radius)
        return canonical_pairs(s.gid[pairs]) if pairs.size else np.zeros((0, 2), np.int64)

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
            "kinetic_energy": self.kinetic_energy(),
            "timers": dict(self.timers),
        }
