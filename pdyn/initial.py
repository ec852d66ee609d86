"""The initial state of a fresh run: the scene a config asks for (its ``[particles]`` or a
named scene, ``pdyn.scenarios``), its particles as store fields, where each rank's particles
come from (``pdyn.parallel.startup``), checked before the run (``pdyn.checks``). Units as the
scene's (SI in the built-in ones: m, kg, s)."""

from __future__ import annotations

import numpy as np

from .checks import InitialStateError, initial_state
from .config import SimulationConfig
from .dynamics.contact import ContactLaw
from .dynamics.glued import glued_walls
from .parallel.startup import GeneratedSource, ScatteredSource
from .particles import FIXED, OWNED
from .scenarios import Scene, make_scene


def scene_from_config(config: SimulationConfig, ranks: int = 1,
                      node: tuple = (1, None)) -> Scene:
    """The initial state a config asks for: its ``[particles]`` or a named scene (generated per
    cell scenes stay undrawn: each of ``ranks`` ranks draws its share; ``node``: the ranks on
    a node and the bytes it has available, ``pdyn.checks.node_memory``)."""
    if config.particles is None:
        rotating = config.contact is not None and ContactLaw.from_config(
            config.contact, **config.material_pairs(config.contact)).rotating
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


def overlap_rules(config: SimulationConfig, law: ContactLaw) -> dict:
    """How the initial-state checks (``pdyn.checks``) treat overlaps: whether contacts push
    (``law.stiff``), the config's ``initial_overlap`` and ``overlap_tolerance``."""
    return {"contact_forces": law.stiff, "overlap": config.initial_overlap,
            "tolerance": config.overlap_tolerance}


def particle_source(scene: Scene, comm, box, n_box: int, rules: dict,
                    material: np.ndarray | None = None) -> tuple:
    """Where a fresh start's particles come from, and what relaxing them did (a note or None):
    the scene's cells, drawn per rank, or its arrays (``n_box`` box faces before its walls,
    ``material`` each sphere's material index, None: 0), checked on rank 0 with the overlap
    ``rules`` (``pdyn.checks.initial_state``, relaxed there when asked) and scattered.
    Collective; an error is raised on every rank."""
    if scene.cells is not None:
        return GeneratedSource(scene), None
    found = particles = None
    if comm.rank == 0:
        try:
            given = scene_particles(scene, n_box)
            if material is not None:
                given["material"] = material
            particles, note = initial_state(given, box, **rules)
            found = (None, note)
        except InitialStateError as exc:
            found = (of_scene(str(exc), scene, box), None)
    error, note = comm.bcast(found)
    if error:
        raise InitialStateError(error)
    return ScatteredSource(particles, comm, box), note


def of_scene(message: str, scene: Scene, box) -> str:
    """An initial-state error of a named scene's spheres in a box of the config's own
    (``[box]`` without ``[particles]`` replaces the scene's box, not its spheres) said as
    theirs, with how to start empty; any other error as it is."""
    if scene.name == "custom" or (np.array_equal(box.lo, scene.box_lo)
                                  and np.array_equal(box.hi, scene.box_hi)):
        return message
    return (f"scene {scene.name!r}: {message} ([box] replaces the scene's box, not its "
            "spheres: give [particles], or positions = [] and radii = [] to start empty)")


def has_glued(scene: Scene, restart) -> bool:
    """Whether the run's store needs the glued spheres' fields: the checkpoint has them
    (``restart``, a ``RestartState``), or the scene glues spheres to a wall (refused for a
    scene generated per cell)."""
    if restart:
        return restart.glued
    if scene.glued is None or not (np.asarray(scene.glued) >= 0).any():
        return False
    if scene.cells is not None:
        raise InitialStateError("glued: only a scene of arrays glues spheres to a wall, not "
                                f"the {scene.name!r} scene generated per lattice cell")
    return True
