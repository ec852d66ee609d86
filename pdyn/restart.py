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
count and index in it (``pdyn.io.schema``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import ConfigError, config_from_dict
from .dynamics.contact import ContactLaw
from .io.checkpoint import PREFIX, read_checkpoint_rows, run_folder_of
from .io.hdf5 import OutputFileError
from .io.runid import folder_run_id
from .lattice import Lattice
from .parallel import get_comm
from .parallel.startup import block_lattice, blocks_box
from .particles import GLUED, ROTATION
from .scenarios import Scene
from .simulation import RestartState, Simulation


class CheckpointSource:
    """The particles of a checkpoint, read by share (a particle source for
    ``BlockExchange.distribute``, as those of ``pdyn.parallel.startup``): block weights from
    the checkpoint's index (counts per index cell spread over the blocks), then each rank reads
    the rows it wrote (same rank count and block grid) or the segments of the index cells that
    overlap its blocks — HDF5 hyperslabs, never the whole file. With ``comm``, a file error
    on one rank is raised on every rank."""

    def __init__(self, path: str | Path, head: dict, index: dict, comm=None):
        self.path = Path(path)
        self.comm = comm  # None: :meth:`take` is not collective
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
        error, particles = None, None
        try:
            particles = read_checkpoint_rows(self.path, rows)[1]
        except OutputFileError as exc:
            error = str(exc)
        if self.comm is not None and self.comm.size > 1:
            error = next((e for e in self.comm.allgather(error) if e), None)
        if error:
            raise OutputFileError(error)
        return particles


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
    if ContactLaw.from_config(contact).rotating and ROTATION not in head["features"]:
        raise OutputFileError(
            f"{path}: a checkpoint of a run with friction = {contact.friction!r}, rolling "
            f"friction = {contact.rolling_friction!r} without its rotation and contact-history "
            "datasets (damaged file; only a frictionless run's checkpoint has none)")


def stored_config(path: str | Path, head: dict):
    """The run's configuration stored in the checkpoint at ``path`` (``head``: its header),
    validated with the scene's contact law and insertion it also stores (used where the config
    gives none); refused as :class:`OutputFileError` when this pdyn does not accept it. The
    one place a restart reads the stored configuration (``pdyn run --restart`` and
    :func:`from_checkpoint`)."""
    insertion = head.get("insertion")
    try:
        cfg = config_from_dict(head["config"], source=f"{path} (config)")
        config_from_dict({"contact": head["contact"]}, source=f"{path} (contact)")
        if insertion:
            config_from_dict({"insertion": insertion["params"]},
                             source=f"{path} (insertion.params)")
    except ConfigError as exc:
        raise OutputFileError(f"{path}: its stored config is invalid here ({exc})") from None
    return cfg


def from_checkpoint(path: str | Path, *, comm=None, **changes) -> Simulation:
    """A :class:`~pdyn.simulation.Simulation` continuing the checkpointed run at ``path`` on
    ``comm`` (any number of ranks). ``changes`` override configuration fields (``output``,
    ``progress``, ``steps``, ``broadphase``, ...)."""
    comm = comm if comm is not None else get_comm()
    head, _, rest = read_checkpoint_rows(path)
    insertion = head.get("insertion")  # {"params", "state"} of a pouring run, or None
    cfg = stored_config(path, head)
    check_identity(path, head, cfg)
    if changes:
        cfg = cfg.with_(**changes)
    scene = Scene(name=head["scene"], box_lo=head["box_lo"], box_hi=head["box_hi"],
                  boundary=head["boundary"], gravity=head["gravity"], contact=head["contact"],
                  dt=head["dt"], steps=head["steps_total"],
                  description=f"restarted from {Path(path).name} at step {head['step']}",
                  insertion=insertion["params"] if insertion else {})
    restart = RestartState(source=CheckpointSource(path, head, rest, comm),
                           exchange=rest["exchange"], step=head["step"], dt=head["dt"],
                           drift=head["drift"], r_mean=head["r_mean"],
                           insertion=insertion["state"] if insertion else None,
                           run_id=head.get("run_id"), path=str(path),
                           glued=GLUED in head["features"])
    sim = Simulation(cfg, comm=comm, scene=scene, restart=restart)
    kept = sim.store.gid[sim.store.owned]
    n = sim.comm.allreduce_sum(int(kept.size))
    twice = sim.comm.allreduce_sum(int(kept.size - np.unique(kept).size))
    if n != head["n_particles"] or twice:
        raise OutputFileError(f"{path}: restart kept {n} of {head['n_particles']} particles"
                              + (f" ({twice} twice)" if twice else ""))
    return sim
