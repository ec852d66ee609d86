"""The feature components a run's config and scene ask for, set up for the driver: the box
and its walls (``pdyn.walls.WallSet``; the walls as infinite particles of the store), the
inserter (``pdyn.dynamics.insertion``), the glued spheres' motion (``pdyn.dynamics.glued``),
and what the output reads of them (``pdyn.io.OutputView``). Units: m, s."""

from __future__ import annotations

import numpy as np

from .config import BoxConfig, ConfigError, SimulationConfig, insertion_params, wall_configs
from .domain import Box
from .dynamics.cell import changing_axes, controls
from .dynamics.glued import GluedMotion
from .dynamics.insertion import Inserter
from .particles import FIXED, INFINITE
from .scenarios import Scene
from .stageplan import check_stages, shift_walls
from .values import BadValue
from .walls import KIND, WallSet


def enclosure(config: SimulationConfig, scene: Scene) -> tuple:
    """(config, box, wallset): the box (the config's, else the scene's) with its faces and the
    walls — the scene's, then the config's — as ``pdyn.walls.WallSet`` and as the box's
    checked walls (``pdyn.domain.Box``). The config returned holds them all, so checkpoints
    hold them (once: a config that holds them already, a run's own, is kept as it is), and
    the scene's materials (``Scene.materials``) where it names none of its own."""
    box = config.box
    lo = np.array(box.lo if box else scene.box_lo, float)
    hi = np.array(box.hi if box else scene.box_hi, float)
    boundary = tuple(box.boundary if box else scene.boundary)
    changes = {}
    if scene.materials and not config.materials:  # the scene's materials, unless the config's
        changes = {"materials": scene.materials, "interactions": scene.interactions}
    own = wall_configs(scene.walls)
    if own and config.walls[:len(own)] != own:  # the stages' wall indices move with them
        changes["walls"] = own + config.walls
        changes["stages"] = shift_walls(config.stages, len(own))
    if scene.stages and not config.stages:  # the scene's protocol, unless the config's
        changes["stages"] = check_stages(scene.stages)
    staged = any(s.box is not None for s in changes.get("stages", config.stages))
    if box is None and (scene.shear_rate or scene.pressure or staged):  # checkpoints keep it
        changes["box"] = BoxConfig(lo=tuple(lo), hi=tuple(hi), boundary=boundary,
                                   shear_rate=scene.shear_rate,
                                   shear_profile=scene.shear_profile, **scene.pressure)
        box = changes["box"]
    if changes:
        config = config.with_(**changes)
    try:  # the axes whose lengths change in any stage
        deforming = changing_axes(controls(config.box, config.stages))
    except BadValue as exc:
        raise ConfigError(str(exc)) from None
    wallset = WallSet(*Box(lo, hi, boundary).walls(), [w.spec() for w in config.walls])
    box = Box(lo, hi, boundary, tuple(
        {**w.spec(), "name": f"walls[{k}] ({w.type})"} for k, w in enumerate(config.walls)),
        shear_rate=box.shear_rate if box else 0.0,
        shear_profile=box.shear_profile if box else False,
        deforming=deforming)
    return config, box, wallset


def add_walls(store, wallset: WallSet, material=0) -> None:
    """The box faces and the configured walls (``wallset``) as infinite particles of
    ``store``, of ``material`` (each wall's index, :func:`wall_materials`)."""
    if len(wallset):
        store.add(gid=wallset.gid, pos=wallset.points(0.0), normal=wallset.normals,
                  radius=np.inf, mass=np.inf, flags=INFINITE | FIXED, material=material)


def wall_materials(config: SimulationConfig, wallset: WallSet) -> np.ndarray:
    """Each wall's material index (uint8; ``config`` as :func:`enclosure` returns it): the
    box faces' ``box.material``, then each ``[[walls]]`` table's ``material`` (None: 0)."""
    box = config.material_index("box.material", config.box.material if config.box else None)
    walls = [config.material_index(f"walls[{k}].material", w.material)
             for k, w in enumerate(config.walls)]
    return np.array([box] * wallset.n_box + walls, np.uint8)


def sphere_materials(config: SimulationConfig, scene: Scene) -> np.ndarray | None:
    """The material index of each sphere of ``[particles]``, or of a named scene's arrays
    (``Scene.material``; None: all 0)."""
    if config.particles is None:
        return scene.material
    return config.material_indices("particles.material", config.particles.material,
                                   len(scene))


def make_inserter(config: SimulationConfig, scene: Scene, box: Box, n_particles: int,
                  state: dict | None) -> Inserter | None:
    """The run's insertion (the config's ``[insertion]``, else the scene's), continuing a
    checkpoint's ``state`` (None: a fresh one); None without insertion. New spheres get global
    ids from ``n_particles`` on (the set-up's ids are 0 … n − 1)."""
    params = insertion_params(config.insertion or scene.insertion, box.lo, box.hi)
    materials = [config.material_index(f"insertion[{k}].material", p.get("material"))
                 for k, p in enumerate(params)]  # each feed's (pdyn.dynamics.materials)
    return Inserter(params, int(n_particles), state, materials) if params else None


def glued_motion(store, wallset: WallSet, box: Box, clock) -> GluedMotion:
    """The motion of the spheres glued to ``wallset``'s walls in ``store`` (in the time of
    ``clock``, ``pdyn.clock.Clock``; periodic images across ``box``)."""
    return GluedMotion(store, wallset.table, wallset.normals, clock,
                       np.where(box.periodic, box.length, 0.0))


def list_walls(wallset: WallSet) -> dict:
    """What the neighbour lists read of the walls at a rebuild (``NeighbourList.rebuild``):
    the wall table and the meshes' bundle."""
    return {"table": wallset.table, "mesh": wallset.bundle}


def wall_view(wallset: WallSet) -> dict:
    """What the output reads of the walls: each wall's kind, the number of box faces, the
    wall table and the meshes (``pdyn.io.OutputView`` fields)."""
    return {"wall_kinds": wallset.table[:, KIND], "n_box": wallset.n_box,
            "wall_table": wallset.table, "wall_meshes": wallset.mesh_of or None}


def insertion_view(inserter: Inserter | None) -> dict | None:
    """What a checkpoint keeps of the insertion: its parameters and state (None without)."""
    return None if inserter is None else {"params": inserter.params, "state": inserter.state()}
