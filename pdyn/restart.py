"""Continue a checkpointed run: a :class:`~pdyn.simulation.Simulation` built from a checkpoint
file (``pdyn run --restart FILE``).

Sits above the driver: it reads the file through ``pdyn.io.checkpoint`` (which only reads and
writes files) and hands the driver a :class:`~pdyn.simulation.RestartState` — a particle source
that gives each rank only its share of the checkpoint (:class:`CheckpointSource`), the
exchange's schedule, the step, dt, the drift since the last rebuild and the run's mean radius.
The broad phase and the ghosts are rebuilt (forces are summed by partner id, so their order does
not matter). On the same rank count the continued run is bit-identical to the uninterrupted one,
and on a different rank count it continues with the same ids and count (and is bit-identical
too wherever the N-rank run matches the 1-rank run). Centres are restored unwrapped
(``distribute(..., wrap=False)``): one that drifted past a periodic face since the last rebuild
stays there, as in the uninterrupted run, and is wrapped at the next rebuild. On the same rank
count every rank reads back the rows it wrote, under the checkpointed block → rank map, so each
rank continues with what it held.

A checkpoint is checked for what it is before it is used (:func:`check_identity`): the step
it holds against its name, its run id against its folder's, and a rotating run's checkpoint
for its rotation and contact-history datasets; the strict reader has range-checked every
count and index in it (``pdyn.io.schema``). Then against the run it continues, each check a
class of values, not an instance (:func:`check_walls`, :func:`check_particles`,
:func:`absent_partner`): the walls its stored config builds against the walls it holds, its
meshes against the config's mesh walls, every sphere against the walled box, every history
key against the meshes' triangles and the spheres it holds. Every rank takes part in every
check and raises the same error (:func:`agreed`); ``pdyn info`` and ``pdyn render`` run the
same checks (:func:`refusal`).

The meshes come from the checkpoint (format 9, ``meshes/*``): the stored config's mesh walls
get the checkpoint's vertices and triangles (:func:`stored_config`), so a restart never reads
an STL file again. A checkpoint of formats 5-8 holds none: its mesh walls are read again from
their files (:func:`old_meshes_note` says so).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .checks import wider_than_box
from .config import ConfigError, config_from_dict
from .domain import Box
from .dynamics.contact import ContactLaw
from .io.checkpoint import MESH_ARRAYS, PREFIX, read_checkpoint_rows, run_folder_of
from .io.hdf5 import CHECKPOINT, OutputFileError
from .io.runid import folder_run_id
from .io.schema import MESHES_SINCE, read_header
from .lattice import Lattice
from .parallel import get_comm
from .parallel.startup import block_lattice, blocks_box
from .particles import GLUED, MESH_KEY_BASE, ROTATION, WALL_KEY_BASE
from .scenarios import Scene
from .simulation import RestartState, Simulation
from .stageplan import check_change
from .values import integer, number


class CheckpointSource:
    """The particles of a checkpoint, read by share (a particle source for
    ``BlockExchange.distribute``, as those of ``pdyn.parallel.startup``): block weights from
    the checkpoint's index (counts per index cell spread over the blocks), then each rank reads
    the rows it wrote (same rank count and block grid) or the segments of the index cells that
    overlap its blocks — HDF5 hyperslabs, never the whole file. With ``comm``, a file error
    on one rank is raised on every rank."""

    def __init__(self, path: str | Path, head: dict, index: dict, comm=None, check=None):
        self.path = Path(path)
        self.comm = comm  # None: :meth:`take` is not collective
        self.check = check  # check(particles): raises OutputFileError for rows a run refuses
        self.head = head
        self.n = int(head["n_particles"])
        self.r_mean = float(head["r_mean"])
        self.lattice = Lattice.over(head["box_lo"], head["box_hi"], head["index_dims"])
        self.rows_per_rank = head["rows_per_rank"]
        self.cell, self.start, self.count = index["cell"], index["start"], index["count"]

    def block_weights(self, grid) -> np.ndarray:
        counts = np.bincount(self.cell, weights=self.count, minlength=self.lattice.n_cells)
        return self.lattice.spread(counts, block_lattice(grid))

    def take(self, grid, rank: int, same: bool = False) -> dict:
        """The rows for ``rank``: all (``grid`` None), the ones it wrote (``same``), or those of
        the index cells overlapping its blocks."""
        if grid is None:
            rows = [(0, self.n)]
        elif same:
            ends = np.concatenate(([0], np.cumsum(self.rows_per_rank)))
            rows = [(int(ends[rank]), int(ends[rank + 1]))]
        else:
            cells = self.lattice.cells_overlapping(*blocks_box(grid, rank))
            pick = np.isin(self.cell, cells) & (self.count > 0)
            rows = _runs(self.start[pick], self.start[pick] + self.count[pick])
        # collective: a damaged row one rank reads stops every rank (none waits for it)
        def read():
            particles = read_checkpoint_rows(self.path, rows)[1]
            if self.check is not None:
                self.check(particles)
            return particles

        particles = agreed(self.comm, read)
        found = absent_partner(self.path, self.head, particles, self.comm)
        if found:
            raise OutputFileError(found)
        return particles


def agreed(comm, action):
    """``action()`` on every rank of ``comm`` (None: this process alone); an
    :class:`OutputFileError` on any rank is raised on every rank (the lowest rank's message),
    so no rank goes on to a collective the others have left. Returns this rank's value."""
    error = value = None
    try:
        value = action()
    except OutputFileError as exc:
        error = str(exc)
    if comm is not None and comm.size > 1:
        error = next((e for e in comm.allgather(error) if e), None)
    if error:
        raise OutputFileError(error)
    return value


def _runs(starts, stops) -> list[tuple[int, int]]:
    """Ascending row ranges merged where one ends where the next starts."""
    out: list[list[int]] = []
    for a, b in zip(starts.tolist(), stops.tolist()):
        if out and out[-1][1] == a:
            out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def check_identity(path: str | Path, head: dict, config) -> None:
    """Refuse (:class:`OutputFileError`) a checkpoint that is not what its name and place say:
    named ``ckpt_<step>.h5`` but holding another step; holding another run's id than its run
    folder records (``pdyn.io.runid``; a file copied from another run); of a run whose stored
    ``config`` rotates (friction or rolling friction) but without the rotation and
    contact-history datasets (only a frictionless run's checkpoint starts them at zero)."""
    path = Path(path)
    stem = path.name.removesuffix(".h5")
    digits = stem[len(PREFIX) + 1:]
    if stem.startswith(f"{PREFIX}_") and digits.isdigit() and int(digits) != head["step"]:
        raise OutputFileError(f"{path}: holds step {head['step']}, not the step {int(digits)} "
                              "its name says (renamed or copied over?)")
    home = run_folder_of(path)
    ours = folder_run_id(home)
    theirs = head.get("run_id")
    if ours is not None and theirs is not None and ours != theirs:
        raise OutputFileError(f"{path}: belongs to run {theirs} (scene {head['scene']!r}), not "
                              f"to run {ours} of its folder {home} (copied from another run?)")
    contact = config.contact or config_from_dict({"contact": head["contact"]}).contact
    if (ContactLaw.from_config(contact, **config.material_pairs(contact)).rotating
            and ROTATION not in head["features"]):
        raise OutputFileError(
            f"{path}: a checkpoint of a run with friction = {contact.friction!r}, rolling "
            f"friction = {contact.rolling_friction!r} without its rotation and contact-history "
            "datasets (damaged file; only a frictionless run's checkpoint has none)")


def _with_meshes(path, head: dict, config: dict, meshes: dict) -> dict:
    """The stored ``config`` (JSON table) with each mesh wall's source replaced by the
    checkpoint's ``meshes`` (wall id -> vertices, triangles; scale 1: they are in m): refused
    unless they are exactly the config's mesh walls."""
    walls = config.get("walls")
    if not isinstance(walls, list):
        return config  # (refused by the config's own check)
    n_box = head["shapes"]["walls/id"][0] - len(walls)
    mesh_walls = [k for k, w in enumerate(walls) if isinstance(w, dict)
                  and w.get("type") == "mesh"]
    if sorted(-1 - w - n_box for w in meshes) != mesh_walls:
        raise OutputFileError(
            f"{path}: meshes/wall = {sorted(meshes, reverse=True)}: expected the ids of its "
            f"stored config's mesh walls, {[-1 - n_box - k for k in mesh_walls]} (damaged file)")
    walls = list(walls)
    for w, (vertices, triangles) in meshes.items():
        k = -1 - w - n_box
        walls[k] = {**{f: v for f, v in walls[k].items() if f not in ("file", *MESH_ARRAYS)},
                    "vertices": vertices, "triangles": triangles, "scale": 1.0}
    return {**config, "walls": walls}


def old_meshes_note(path: str | Path, head: dict) -> str | None:
    """A note for a checkpoint before format 9 whose config has mesh walls read from files:
    the restart reads those files again (a later checkpoint holds its meshes)."""
    files = [w.get("file") for w in head["config"].get("walls") or ()
             if isinstance(w, dict) and w.get("type") == "mesh" and w.get("file")]
    if head["version"] >= MESHES_SINCE or not files:
        return None
    return (f"pdyn: note: {path}: checkpoint format {head['version']} holds no meshes, so its "
            f"mesh walls are read again from {', '.join(map(repr, files))} (the continued "
            "run's checkpoints hold them)")


def stored_config(path: str | Path, head: dict, meshes: dict | None = None):
    """The run's configuration stored in the checkpoint at ``path`` (``head``: its header),
    validated with the scene's contact law and insertion it also stores (used where the config
    gives none); its mesh walls built from the checkpoint's ``meshes`` (format 9,
    :func:`pdyn.io.checkpoint.stored_meshes`; None: from the config's files); refused as
    :class:`OutputFileError` when this pdyn does not accept it. The one place a restart reads
    the stored configuration (``pdyn run --restart`` and :func:`from_checkpoint`)."""
    insertion = head.get("insertion")
    config = head["config"]
    if meshes is not None:
        config = _with_meshes(path, head, config, meshes)
    try:
        cfg = config_from_dict(config, source=f"{path} (config)")
        config_from_dict({"contact": head["contact"]}, source=f"{path} (contact)")
        if insertion:
            config_from_dict({"insertion": insertion["params"],  # naming its materials
                              "materials": config.get("materials") or ()},
                             source=f"{path} (insertion.params)")
    except ConfigError as exc:
        raise OutputFileError(f"{path}: its stored config is invalid here ({exc})") from None
    return cfg


def _box(head: dict, cfg) -> Box:
    """The box a restart runs in (the stored config's, else the checkpoint's)."""
    b = cfg.box
    return Box(*(b.lo, b.hi, tuple(b.boundary)) if b else (head["box_lo"], head["box_hi"],
                                                          tuple(head["boundary"])))


def check_walls(path, head: dict, cfg) -> None:
    """The walls the stored config builds (the box faces, then its ``[[walls]]``) are the
    walls the checkpoint holds: as many (every wall key of the history names one of them)."""
    faces = len(_box(head, cfg).walls()[0])
    held = head["shapes"]["walls/id"][0]
    if faces + len(cfg.walls) != held:
        raise OutputFileError(f"{path}: walls/id holds {held} walls, its stored config builds "
                              f"{faces} box faces and {len(cfg.walls)} [[walls]] (damaged file)")


def check_servos(path, head: dict, cfg) -> None:
    """The checkpoint's servo states (``servos``: wall id -> [offset (m), speed (m/s)],
    ``pdyn.dynamics.wallmotion.Servo``) are those of the stored config's servo walls, each
    two finite numbers; a checkpoint without them continues no servo wall."""
    faces = len(_box(head, cfg).walls()[0])
    want = sorted(str(-1 - faces - k) for k, w in enumerate(cfg.walls) if w.servo is not None)
    held = head.get("servos") or {}
    if sorted(held) != want:
        raise OutputFileError(f"{path}: attribute servos holds walls {sorted(held)}, its stored "
                              f"config has servo walls {want} (damaged file)")
    for wall, state in held.items():
        if not (isinstance(state, list) and len(state) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in state)):
            raise OutputFileError(f"{path}: attribute servos: wall {wall}: {str(state)[:60]}: "
                                  "expected [offset, speed], two finite numbers (damaged file)")


def check_stages(path, head: dict, cfg) -> None:
    """The checkpoint's stage state (``stages``: ``starts``, the steps the stages began at,
    and ``finished``, ``pdyn.stages.Stages.state``) fits the stored config's ``[[stages]]``:
    from 0, increasing, at most its step, no more than the stages; absent exactly when the
    config has none."""
    held, n = head.get("stages"), len(cfg.stages)
    if held is None and n == 0:
        return
    starts = held.get("starts") if isinstance(held, dict) else None
    if (not n or not isinstance(starts, list) or not 1 <= len(starts) <= n
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in starts)
            or starts[0] != 0 or any(b < a for a, b in zip(starts, starts[1:]))
            or starts[-1] > head["step"] or not isinstance(held.get("finished"), bool)):
        raise OutputFileError(f"{path}: attribute stages = {str(held)[:80]}: its stored "
                              f"config has {n} stage(s); expected starts from 0, increasing, "
                              f"up to step {head['step']}, and finished (damaged file)")


def check_changes(path, head: dict, cfg) -> None:
    """The checkpoint's changes (``changes``: the run's own ``dt`` and the changes made from
    Python, ``made`` as [step, changes], ``pdyn.stages.Changes.state``): a positive dt, steps
    from 0 to the checkpoint's, increasing, each change one ``Simulation.change`` accepts for
    the stored config."""
    held = head.get("changes")
    if held is None:
        return
    try:
        if not isinstance(held, dict) or sorted(held) != ["dt", "made"]:
            raise ValueError("expected dt and made")
        number("changes.dt", held["dt"], above=0)
        made, last = held["made"], 0
        if not isinstance(made, list):
            raise ValueError("made: expected a list")
        for k, entry in enumerate(made):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)):
                raise ValueError(f"made[{k}]: expected [step, changes]")
            step = integer(f"changes.made[{k}]", entry[0], lo=last, hi=head["step"])
            cfg.fits(f"changes.made[{k}]", check_change(f"changes.made[{k}]", entry[1]))
            last = step
    except ValueError as exc:
        raise OutputFileError(f"{path}: attribute changes = {str(held)[:80]}: {exc} "
                              "(damaged file)") from None


def triangles_of(cfg) -> int:
    """The triangles of the config's mesh walls (the meshes a restart builds)."""
    return sum(len(w.mesh()) for w in cfg.walls if w.type == "mesh")


def check_particles(path, head: dict, cfg, particles: dict) -> None:
    """The particle rows read (``particles``, fields as read) against the run they continue:
    no sphere wider than the box along a walled axis; every mesh key of the contact history
    a triangle of the config's meshes."""
    gid = particles["gid"]
    found = wider_than_box(particles["radius"], _box(head, cfg), gid)
    if found:
        raise OutputFileError(f"{path}: {found} (damaged file)")
    keys = particles.get("history_key")
    if keys is None or not keys.size:
        return
    n = triangles_of(cfg)
    beyond = keys > MESH_KEY_BASE + n
    if beyond.any():
        k = int(np.flatnonzero(beyond)[0])
        owner = np.repeat(gid, particles["history_count"])[k]
        raise OutputFileError(f"{path}: records/history_key = {int(keys[k])} of particle "
                              f"{int(owner)}: triangle {int(keys[k]) - MESH_KEY_BASE - 1} of "
                              f"meshes of {n} triangles (damaged file)")


def absent_partner(path, head: dict, particles: dict, comm=None) -> str | None:
    """The message naming the first history record (lowest particle id, then key) whose
    partner sphere the checkpoint does not hold, over the rows every rank of ``comm`` read
    (None: this process read them all); None when there is none. Only a pouring run's
    checkpoint can miss ids (spheres removed); collective."""
    ins = head.get("insertion")
    if ins is None or ins["state"]["next_gid"] == head["n_particles"]:
        return None  # the ids are 0 ... n - 1, each held (range-checked, unique)
    gid = particles["gid"]
    keys = particles.get("history_key", np.zeros(0, np.int64))
    owner = np.repeat(gid, particles.get("history_count", np.zeros(len(gid), np.int64)))
    sphere = (keys >= 1) & (keys < WALL_KEY_BASE)
    keys, owner = keys[sphere], owner[sphere]
    here = np.isin(keys - 1, gid)
    ask = np.unique(keys[~here] - 1)
    if comm is not None and comm.size > 1:  # which rank holds the others?
        asked = np.concatenate(comm.allgather(ask))
        held = np.logical_or.reduce(comm.allgather(np.isin(asked, gid)))
        ask = ask[~np.isin(ask, asked[held])]
    bad = np.isin(keys - 1, ask)
    first = None
    if bad.any():
        k = np.lexsort((keys[bad], owner[bad]))[0]
        first = (int(owner[bad][k]), int(keys[bad][k]))
    if comm is not None and comm.size > 1:
        first = min((f for f in comm.allgather(first) if f), default=None)
    if first is None:
        return None
    return (f"{path}: records/history_key = {first[1]} of particle {first[0]}: sphere "
            f"{first[1] - 1} is not in this checkpoint (damaged file)")


def _checked_config(path, head: dict, rest: dict):
    """The stored config of a checkpoint read (``head``, ``rest``), checked for what the
    checkpoint is and against the walls the config builds."""
    cfg = stored_config(path, head, rest["meshes"])
    check_identity(path, head, cfg)
    check_walls(path, head, cfg)
    check_servos(path, head, cfg)
    check_stages(path, head, cfg)
    check_changes(path, head, cfg)
    return cfg


def prepare(path: str | Path, comm=None) -> tuple[dict, dict, object]:
    """(header, rest as :func:`~pdyn.io.checkpoint.read_checkpoint_rows` gives it, stored
    config) of the checkpoint at ``path``, checked for what it is and against the walls its
    config builds; on every rank of ``comm`` (an error on one is raised on all)."""
    def work():
        head, _, rest = read_checkpoint_rows(path)
        return head, rest, _checked_config(path, head, rest)

    return agreed(comm, work)


def refusal(path: str | Path) -> str | None:
    """Why ``pdyn run --restart`` would refuse the checkpoint at ``path`` that reads cleanly
    (every check it makes beyond the reader's, on all the rows at once), or None (``pdyn
    info``, ``pdyn render``). A file the strict reader refuses raises
    :class:`OutputFileError` (its own message)."""
    n = read_header(path, CHECKPOINT)["n_particles"]
    head, particles, rest = read_checkpoint_rows(path, [(0, n)])
    try:
        cfg = _checked_config(path, head, rest)
        check_particles(path, head, cfg, particles)
        return absent_partner(path, head, particles)
    except OutputFileError as exc:
        return str(exc)


def from_checkpoint(path: str | Path, *, comm=None, **changes) -> Simulation:
    """A :class:`~pdyn.simulation.Simulation` continuing the checkpointed run at ``path`` on
    ``comm`` (any number of ranks). ``changes`` override configuration fields (``output``,
    ``progress``, ``steps``, ``broadphase``, ...)."""
    comm = comm if comm is not None else get_comm()
    head, rest, cfg = prepare(path, comm)
    stored = cfg
    insertion = head.get("insertion")  # {"params", "state"} of a pouring run, or None
    if changes:
        cfg = cfg.with_(**changes)
    scene = Scene(name=head["scene"], box_lo=head["box_lo"], box_hi=head["box_hi"],
                  boundary=head["boundary"], gravity=head["gravity"], contact=head["contact"],
                  dt=head["dt"], steps=head["steps_total"],
                  description=f"restarted from {Path(path).name} at step {head['step']}",
                  insertion=insertion["params"] if insertion else {})
    source = CheckpointSource(path, head, rest, comm,
                              check=lambda rows: check_particles(path, head, stored, rows))
    restart = RestartState(source=source,
                           exchange=rest["exchange"], step=head["step"],
                           dt=(head.get("changes") or {}).get("dt", head["dt"]),
                           drift=head["drift"], r_mean=head["r_mean"],
                           insertion=insertion["state"] if insertion else None,
                           run_id=head.get("run_id"), path=str(path),
                           glued=GLUED in head["features"], servos=head.get("servos"),
                           stages=head.get("stages"), changes=head.get("changes"))
    sim = Simulation(cfg, comm=comm, scene=scene, restart=restart)
    kept = sim.store.gid[sim.store.owned]
    n = sim.comm.allreduce_sum(int(kept.size))
    twice = sim.comm.allreduce_sum(int(kept.size - np.unique(kept).size))
    if n != head["n_particles"] or twice:
        raise OutputFileError(f"{path}: restart kept {n} of {head['n_particles']} particles"
                              + (f" ({twice} twice)" if twice else ""))
    return sim
