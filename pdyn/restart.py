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
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import ConfigError, config_from_dict
from .io.checkpoint import read_checkpoint_rows
from .io.hdf5 import OutputFileError
from .lattice import Lattice
from .parallel import get_comm
from .parallel.startup import block_lattice, blocks_box
from .scenarios import Scene
from .simulation import RestartState, Simulation


class CheckpointSource:
    """The particles of a checkpoint, read by share (a particle source for
    ``BlockExchange.distribute``, as those of ``pdyn.parallel.startup``): block weights from
    the checkpoint's index (counts per index cell spread over the blocks), then each rank reads
    the rows it wrote (same rank count and block grid) or the segments of the index cells that
    overlap its blocks — HDF5 hyperslabs, never the whole file."""

    def __init__(self, path: str | Path, head: dict, index: dict):
        self.path = Path(path)
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
        return read_checkpoint_rows(self.path, rows)[1]


def _runs(starts, stops) -> list[tuple[int, int]]:
    """Ascending row ranges merged where one ends where the next starts."""
    out: list[list[int]] = []
    for a, b in zip(starts.tolist(), stops.tolist()):
        if out and out[-1][1] == a:
            out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def from_checkpoint(path: str | Path, *, comm=None, **changes) -> Simulation:
    """A :class:`~pdyn.simulation.Simulation` continuing the checkpointed run at ``path`` on
    ``comm`` (any number of ranks). ``changes`` override configuration fields (``output``,
    ``progress``, ``steps``, ``broadphase``, ...)."""
    comm = comm if comm is not None else get_comm()
    head, _, rest = read_checkpoint_rows(path)
    try:
        cfg = config_from_dict(head["config"], source=f"{path} (config)")
    except ConfigError as exc:
        raise OutputFileError(f"{path}: its stored config is invalid here ({exc})") from None
    if changes:
        cfg = cfg.with_(**changes)
    insertion = head.get("insertion")  # {"params", "state"} of a pouring run, or None
    scene = Scene(name=head["scene"], box_lo=head["box_lo"], box_hi=head["box_hi"],
                  boundary=head["boundary"], gravity=head["gravity"], contact=head["contact"],
                  dt=head["dt"], steps=head["steps_total"],
                  description=f"restarted from {Path(path).name} at step {head['step']}",
                  insertion=insertion["params"] if insertion else {})
    restart = RestartState(source=CheckpointSource(path, head, rest), exchange=rest["exchange"],
                           step=head["step"], dt=head["dt"], drift=head["drift"],
                           r_mean=head["r_mean"],
                           insertion=insertion["state"] if insertion else None)
    sim = Simulation(cfg, comm=comm, scene=scene, restart=restart)
    kept = sim.store.gid[sim.store.owned]
    n = sim.comm.allreduce_sum(int(kept.size))
    twice = sim.comm.allreduce_sum(int(kept.size - np.unique(kept).size))
    if n != head["n_particles"] or twice:
        raise OutputFileError(f"{path}: restart kept {n} of {head['n_particles']} particles"
                              + (f" ({twice} twice)" if twice else ""))
    return sim
