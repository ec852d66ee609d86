"""Building a run: :func:`build` turns a config (a scene, a checkpoint's :class:`RestartState`)
into :class:`Parts`, a frozen record of everything the driver (``pdyn.simulation``) runs —
its frame, particles, lists, contact pass, components, writers and schedule — with the first
lists and force pass done, ready for the first step. Units: SI (m, kg, s)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .broadphase import make_broadphase
from .checks import (InitialStateError, StepGuard, check_memory, mesh_bytes, node_memory,
                     share_state, watch_walls)
from .clock import Clock
from .components import (add_walls, enclosure, glued_motion, list_walls, make_inserter,
                         sphere_materials, wall_materials)
from .config import ConfigError, ContactConfig, SimulationConfig
from .domain import Box
from .dynamics.cell import CellControl, cell_control
from .dynamics.cohesion import HELD
from .dynamics.contact import ContactLaw, ContactPass
from .dynamics.glued import GluedMotion
from .dynamics.insertion import Inserter
from .dynamics.neighbours import SKIN_DIAMETERS, NeighbourList
from .dynamics.wallmotion import WallMotion
from .initial import has_glued, of_scene, overlap_rules, particle_source, scene_from_config
from .io import fields_writers, make_writers
from .io.hdf5 import OutputFileError
from .io.runid import new_run_id
from .io.wallforces import buffer_bytes
from .mesh.place import current_placement
from .parallel import make_exchange
from .parallel.balance import Balancer
from .particles import FIXED, GLUED, ROTATION, ParticleStore
from .reorder import reorder, wall_order
from .scenarios import Scene
from .schedule import Schedule
from .stages import Changes, Stages, check_laws, plan_changes
from .timers import PhaseTimers
from .timestep import bounding_spheres, changed_time_step, contact_time, time_step
from .walls import WallSet


@dataclass(frozen=True)
class RestartState:
    """Where a checkpointed run continues (built by ``pdyn.restart``): ``source`` hands each
    rank its checkpointed particles (a particle source, ``pdyn.parallel.startup``), the
    exchange's schedule (``exchange.state()``), the step, the run's own time step (s, before
    any change: ``pdyn.stages.Changes``), the largest
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
    servos: dict | None = None  # the servo walls' states by wall id (pdyn.dynamics.wallmotion.Servo)
    stages: dict | None = None  # where a staged run is (pdyn.stages.Stages.state)
    changes: dict | None = None  # what changed dt or was made from Python (Changes.state)


class Parts(NamedTuple):
    """The parts of a run as :func:`build` made them, ready for its first step."""

    config: SimulationConfig  # the run's, holding the scene's walls too
    comm: object  # pdyn.parallel.comm
    node: tuple  # ranks on the node, bytes available (pdyn.checks.node_memory)
    scene: Scene
    box: Box  # the box with its checked walls (pdyn.domain)
    wallset: WallSet  # box faces and walls (pdyn.walls)
    gravity: np.ndarray  # (3,) m/s²
    contact_config: ContactConfig  # the contact configuration the run uses, checkpointed whole
    contact: ContactPass  # the law and the state its passes keep
    steps: int  # steps a run() takes by default
    first_step: int  # the step the run starts at (a restart: the checkpoint's)
    run_id: str  # which run the files belong to (pdyn.io.runid), kept through restarts
    restarted_from: str | None  # the checkpoint file a restart continues
    setup_note: str | None  # what relaxing given particles did (pdyn.checks)
    r_mean: float  # mean radius of all particles (m)
    store: ParticleStore  # this rank's particles and the walls
    exchange: object  # migration, ghosts and balancing (pdyn.parallel)
    neighbours: NeighbourList  # with the contact pass and the glued motion hung on it
    broadphase: object  # pdyn.broadphase
    balancer: Balancer
    clock: Clock  # the time step and the time of a step (pdyn.clock)
    wall_motion: WallMotion
    changes: Changes  # the stages' and Python's changes (pdyn.stages)
    stages: Stages | None  # a staged run's stages (None: one stage)
    cell: CellControl | None  # a box that follows target pressures (pdyn.dynamics.cell)
    glued: GluedMotion
    inserter: Inserter | None
    writers: list  # pdyn.io.Writer
    guard: StepGuard
    schedule: Schedule
    walls: np.ndarray  # wall handles in the order their forces are summed
    timers: PhaseTimers
    n_contacts: int  # of the first force pass
    elastic_energy: float  # of the first force pass (J)


def neighbour_skin(skin: float | None, r_mean: float) -> float:
    """The neighbour lists' skin (m): ``skin``, or ``SKIN_DIAMETERS`` mean diameters (``r_mean``
    the mean radius of all particles, the same on every rank)."""
    if skin is not None:
        return float(skin)
    return SKIN_DIAMETERS * 2.0 * float(r_mean)


def build(config: SimulationConfig, comm, scene: Scene | None = None,
          restart: RestartState | None = None) -> Parts:
    """The parts of a run of ``config`` on ``comm``: its frame (``scene``, default the config's;
    box, walls, gravity, contact law, ids), its particles (store, walls, exchange), its
    schedule (lists, balancer, dt, guard, writers) and the first lists and force pass;
    ``restart`` continues a checkpoint (its schedule, and its forces kept). Collective."""
    frame = _frame(config, comm, scene, restart)
    share, n, skin, drift = _share(frame, restart)
    plan = _plan(frame, share, n, skin, restart)
    first = _first_pass(frame, share, plan, drift, restart)
    return Parts(**frame._asdict(), **share._asdict(), **plan._asdict(), **first._asdict())


class _Frame(NamedTuple):
    """What the run is, before any particle: the first fields of :class:`Parts`."""

    config: SimulationConfig
    comm: object
    node: tuple
    scene: Scene
    box: Box
    wallset: WallSet
    gravity: np.ndarray
    contact_config: ContactConfig
    contact: ContactPass
    steps: int
    first_step: int
    run_id: str
    restarted_from: str | None


def _frame(config: SimulationConfig, comm, scene: Scene | None,
           restart: RestartState | None) -> _Frame:
    """The run's scene, enclosure (box, walls), gravity, contact pass and ids. Collective."""
    node = node_memory(comm)  # the same on every rank: the same memory verdicts
    scene = scene if scene is not None else scene_from_config(config, comm.size, node)
    config, box, wallset = enclosure(config, scene)
    gravity = np.array(config.gravity if config.gravity is not None else scene.gravity, float)
    contact_config = config.contact or ContactConfig(**scene.contact)
    contact = ContactPass(ContactLaw.from_config(contact_config, **config.material_pairs(
        contact_config, None if scene.material is None else set(np.unique(scene.material)))),
                          wallset.table, wallset.bundle)
    run_id = restart.run_id if restart and restart.run_id else comm.bcast(
        new_run_id() if comm.rank == 0 else None)
    return _Frame(config, comm, node, scene, box, wallset, gravity, contact_config, contact,
                  steps=config.steps or scene.steps, first_step=restart.step if restart else 0,
                  run_id=run_id, restarted_from=restart.path if restart else None)


class _Share(NamedTuple):
    """This rank's particles, and what made them (fields of :class:`Parts`)."""

    setup_note: str | None
    r_mean: float
    store: ParticleStore
    exchange: object
    inserter: Inserter | None


def _share(f: _Frame, restart: RestartState | None) -> tuple[_Share, int, float, float]:
    """This rank's share of the particles (the scene's or the checkpoint's) in its store with
    the walls, distributed by the exchange, after one memory estimate of what the config
    implies; with the particles' count in the run, the lists' skin (m) and the drift (m)
    since a checkpoint's last rebuild. Collective."""
    config, comm, scene, box, wallset, contact = (f.config, f.comm, f.scene, f.box, f.wallset,
                                                  f.contact)
    source, note = (restart.source, None) if restart else particle_source(
        scene, comm, box, wallset.n_box, overlap_rules(config, contact.law),
        sphere_materials(config, scene))
    r_mean = restart.r_mean if restart else source.r_mean
    inserter = make_inserter(config, scene, box, source.n,
                             restart.insertion if restart else None)
    # one memory estimate of what the config implies, before the large allocations
    check_memory(f.node, comm.size, box, config, particles=source.n, inserter=inserter,
                 rotating=contact.rotating, restart=restart is not None,
                 **dict(zip(("node_meshes", "meshes"), mesh_bytes(
                     wallset.meshes, wallset.bundle, current_placement().shared))),
                 series=buffer_bytes(comm.size) if config.output.wall_forces else 0)
    # the rotation fields exist only when the contact model rotates; room for the rank's
    # share and a quarter more for its ghosts (the store grows by half when that is short:
    # every slot is a few hundred bytes, resident once the pages around it are touched)
    store = ParticleStore(capacity=max(64, 5 * source.n // (4 * max(comm.size, 1))),
                          features=(ROTATION,) * contact.rotating
                          + (GLUED,) * has_glued(scene, restart))
    add_walls(store, wallset, wall_materials(config, wallset))
    if inserter is not None and source.n == 0 and not restart:  # an empty box to pour into
        r_mean = float(np.mean(inserter.radii))
    skin = neighbour_skin(config.neighbour_skin, r_mean)
    exchange = make_exchange(store, box, comm, dims=config.blocks, skin=skin or None,
                             n_particles=source.n, curve=config.balance_curve)
    # a restart continues the exchange's plan and keeps centres unwrapped (distribute
    # checks them against the skin along periodic axes); particles may have moved up to
    # ``drift`` since the last rebuild, so the first plan and lists reach that much farther
    drift = restart.drift if restart else 0.0
    if restart:  # (a sheared box's images travelled too: the drift returned counts them)
        drift = exchange.restore(restart.exchange, drift, restart.step, restart.dt)
    exchange.distribute(source, wrap=restart is None)
    if restart:
        _known_materials(store, config, comm, restart.path)
    elif box.shear_profile:  # Lees–Edwards: start on the linear profile
        own = store.owned[(store.flags[store.owned] & FIXED) == 0]
        mid = 0.5 * (float(box.lo[2]) + float(box.hi[2]))
        store.vel[own, 0] += box.shear_rate * (store.pos[own, 2] - mid)
    if inserter is not None:
        exchange.admit(float(inserter.radii.max()))
    return _Share(note, r_mean, store, exchange, inserter), source.n, skin, drift


class _Plan(NamedTuple):
    """The run's lists, time step, components and schedule (fields of :class:`Parts`)."""

    neighbours: NeighbourList
    broadphase: object
    balancer: Balancer
    clock: Clock
    wall_motion: WallMotion
    changes: Changes
    stages: Stages | None
    cell: CellControl | None
    writers: list
    guard: StepGuard
    schedule: Schedule
    timers: PhaseTimers


def _plan(f: _Frame, s: _Share, n: int, skin: float, restart: RestartState | None) -> _Plan:
    """The lists of ``skin`` (m), the balancer (for ``n`` particles), the time step, the wall
    motion, the stages, the writers, the step guard and the schedule; a restart continues
    the checkpoint's schedule. Collective."""
    config, comm, wallset, contact = f.config, f.comm, f.wallset, f.contact
    store, inserter = s.store, s.inserter
    if contact.law.cohesion in HELD:  # contacts held past zero overlap: the lists' skin
        _reaches(skin, contact.law.reach(_largest_radius(store, inserter, comm)),
                 contact.law.cohesion)
    neighbours = NeighbourList(skin, rebuild_skin=s.exchange.skin)
    # the schedule continues a checkpoint's; one rank has nothing to balance
    balancer = Balancer(config.balance_every if comm.size > 1 else 0, config.balance_threshold,
                        config.balance_curve, comm.size, n,
                        last=getattr(s.exchange, "balanced_at", 0) if restart else f.first_step)
    timers = PhaseTimers()
    if balancer.every:
        timers["balance"] = 0.0  # a row of the phase table even if never due
    clock = Clock(restart.dt if restart else time_step(
        contact.law, config.dt if config.dt is not None else f.scene.dt, store, inserter,
        config, comm))
    r_max = _largest_radius(store, inserter, comm) if wallset.turning else 0.0
    wall_motion = WallMotion(wallset, clock, f.first_step, restart.servos if restart else None,
                             r_max)
    cell = cell_control(config.box, config.stages)
    changes = Changes(config, f.contact_config, clock, f.gravity, wallset, wall_motion, contact,
                      inserter, restart.changes if restart else None, cell)
    # the stages' wall speeds and time steps (and those made from Python) count from the start
    plan_changes(config.stages + tuple(c for _, c in changes.made), wallset, clock)
    stages = _stages(config, f.contact_config, contact, store, changes, restart, inserter)
    changes.enter(stages)  # what the stages begun so far and Python changed
    if cell is not None:  # the fixed strain rates (a restart's rates are its checkpoint's)
        s.exchange.strain(cell.switched(s.exchange.rate))
    broadphase = make_broadphase(config.broadphase, **config.broadphase_params)
    # snapshots, checkpoints, series; coarse-grained fields (pdyn.io)
    writers = (make_writers(config.output, tuple(m.name for m in config.materials))
               + fields_writers(config.output, config.fields))
    spheres = bounding_spheres(store, inserter)
    for k, stage in enumerate(config.stages):  # a stage's time step within the same limits
        if stage.dt is not None:
            changed_time_step(f"stages[{k}].dt", stage.dt, contact.law, spheres, config, comm,
                              wallset, f.box, neighbours.skin)
    guard = StepGuard(store, comm, clock, contact_time(contact.law, store, inserter, comm),
                      config.dt_safety, writers,
                      watch_walls(neighbours, wallset, f.box, contact.law, spheres,
                                  clock.largest, comm, config))
    if inserter is not None:  # the smallest sphere may be one still to come
        guard.r_min = min(guard.r_min, float(inserter.radii.min()))
    # translating walls and turning meshes: the lists reach half the skin farther for them,
    # and a rebuild comes before one has moved that far (relative to the largest sphere)
    wallset.set_reach(neighbours.skin)
    schedule = Schedule(neighbours, inserter, balancer, config.reorder_every, f.first_step,
                        writers, clock, wall_motion.every(neighbours.skin),
                        wall_motion.needs)
    return _Plan(neighbours, broadphase, balancer, clock, wall_motion, changes, stages, cell,
                 writers, guard, schedule, timers)


class _First(NamedTuple):
    """The glued motion, the walls' order and the first force pass (fields of :class:`Parts`)."""

    glued: GluedMotion
    walls: np.ndarray
    n_contacts: int
    elastic_energy: float


def _first_pass(f: _Frame, s: _Share, p: _Plan, drift: float,
                restart: RestartState | None) -> _First:
    """The first lists and force pass, after the walls and glued spheres are placed at the
    first step; a restart keeps the checkpoint's build positions (its schedule continues)
    and its forces and history (``ContactPass.resume``); contacts and elastic energy are
    counted either way. Collective."""
    config, store, exchange, wallset = f.config, s.store, s.exchange, f.wallset
    if config.reorder_every:
        reorder(store, exchange)
    walls = wall_order(store)
    p.wall_motion.advance(store, walls, f.first_step)
    glued = glued_motion(store, wallset, f.box, p.clock)
    p.neighbours.hang(*f.contact.hangers, glued)
    glued.place(store, f.first_step)  # velocities and spins of the motion (a restart: the same)
    exchange.advance(f.first_step, p.clock.dt)  # a sheared box's images at the first step
    exchange.ghosts()
    if restart or f.scene.cells is not None:  # this rank's share plus its ghosts
        try:
            share_state(store, f.box, f.comm, restart=restart is not None,
                        **overlap_rules(config, f.contact.law))
        except InitialStateError as exc:
            if restart:
                raise
            raise InitialStateError(of_scene(str(exc), f.scene, f.box)) from None
    p.neighbours.rebuild(p.broadphase, store, None, relist=restart is None, walls=walls,
                         drift=drift, timers=p.timers, **list_walls(wallset))
    with p.timers("contacts"):
        n_contacts, elastic_energy = (
            f.contact.resume(store, p.neighbours, f.gravity, p.clock.dt) if restart else
            f.contact.forces(store, p.neighbours, f.gravity, p.clock.dt, record=False))
    return _First(glued, walls, n_contacts, elastic_energy)


def _stages(config: SimulationConfig, contact_config: ContactConfig, contact: ContactPass,
            store, changes: Changes, restart: RestartState | None, inserter) -> Stages | None:
    """The run's stages (``pdyn.stages``; None without ``[[stages]]``), where a restart left
    them, their changes made through ``changes``; their contact laws made now, so that a
    refused change stops the run before its first step."""
    if not config.stages:
        return None
    for k, stage in enumerate(config.stages):
        fits_run(f"stages[{k}]", stage, store, inserter)
    check_laws(config.stages, config, contact_config, contact.law)
    return Stages(config.stages, changes, restart.stages if restart else None)


def fits_run(where: str, change, store, inserter) -> None:
    """Refuse (``ConfigError``) a stage's or a ``Simulation.change``'s ``change`` (named
    ``where``) the run cannot make: the outlets or the mass out without an outlet, a wall's
    motion with glued spheres in the run (they ride only walls without a program)."""
    no_outlet = inserter is None or all(f.outlet is None for f in inserter.feeds)
    for what, used in (("mass_out", change.end is not None and change.end[0] == "mass_out"),
                       ("outlet", change.outlet is not None)):
        if used and no_outlet:
            raise ConfigError(f"{where}.{what}: the run has no outlet (give [insertion] "
                              "outlet_lo and outlet_hi)")
    if "glued" in store.fields and change.walls:
        raise ConfigError(f"{where}.walls: changes a wall's motion in a run with glued spheres "
                          "(they ride only walls without a program)")


def _known_materials(store, config: SimulationConfig, comm, path) -> None:
    """Refuse (``OutputFileError`` on every rank) a checkpoint's sphere whose material index
    is not one of the config's materials (a forged or foreign file: the pass would read
    outside its pair table). Collective."""
    own = store.material[store.owned]
    largest = comm.allreduce_max(float(own.max()) if own.size else 0.0)
    if largest >= max(1, len(config.materials)):
        raise OutputFileError(f"{path}: particles/material holds {int(largest)}, but the run "
                              f"has {max(1, len(config.materials))} material(s) (damaged file)")


def _reaches(skin: float, reach: float, model: str) -> None:
    """The contacts of cohesion ``model`` (JKR, liquid bridges) act down to the overlap
    −``reach`` (m): the lists of ``skin`` (m) hold them while each has moved at most skin/2
    if skin ≥ reach (a contact held at the build was within r_i + r_j + reach; one made
    since touched, within the lists' guarantee). ConfigError otherwise (the same on every
    rank: ``reach`` is agreed)."""
    if skin < reach:
        raise ConfigError(f"neighbour_skin = {skin!r}: below the reach {reach:.4g} m of "
                          f"cohesion {model!r} past touching (the largest spheres'); give "
                          "neighbour_skin at least that")


def _largest_radius(store, inserter, comm) -> float:
    """The largest radius (m) of any rank's owned spheres and those the insertion will add
    (the same on every rank). Collective."""
    own = store.radius[store.owned]
    r_max = comm.allreduce_max(float(own.max()) if own.size else 0.0)
    if inserter is not None:
        r_max = max(r_max, float(inserter.radii.max()))
    return r_max
