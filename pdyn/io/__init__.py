"""Output: snapshots (HDF5 + XDMF 2 sidecar for ParaView), checkpoint files, the wall-force
series (CSV), inspection
(``pdyn info``) and pictures (``pdyn render``, needs the optional ``vtk`` package). Files only:
continuing a run from a checkpoint is ``pdyn.restart``, above the driver."""

from pathlib import Path

from .checkpoint import CheckpointWriter, latest_checkpoint, read_checkpoint, write_checkpoint
from .hdf5 import OutputFileError, OutputWriteError
from .snapshot import SnapshotWriter, read_snapshot
from .wallforces import WallForceWriter, read_wall_forces


def make_writers(output) -> list:
    """The writers an :class:`~pdyn.config.OutputConfig` asks for, in the order they run
    (the wall-force series first: it appends its rows when a snapshot or checkpoint is due)."""
    writers = []
    if output.snapshot_every:
        writers.append(SnapshotWriter(output.folder, output.snapshot_every))
    if output.checkpoint_every:
        writers.append(CheckpointWriter(output.folder, output.checkpoint_every))
    if output.wall_forces:
        files = list(writers)
        writers.insert(0, WallForceWriter(output.folder,
                                          lambda step: any(w.due(step) for w in files)))
    return writers


def checkpoint_now(sim) -> Path | None:
    """Write a checkpoint of ``sim`` at its current step into its output folder (a run
    stopped between two scheduled checkpoints), unless its checkpoint writer wrote this
    step's; flush the buffered wall-force rows first. Returns its path; None when the run
    writes no output at all (nothing was asked to be written). Collective."""
    out = sim.config.output
    if not (out.snapshot_every or out.checkpoint_every or out.wall_forces):
        return None
    writer = next((w for w in sim.writers if isinstance(w, CheckpointWriter)), None)
    if writer is None:
        writer = CheckpointWriter(sim.config.output.folder, 0)  # never due by itself
        sim.writers.append(writer)
    path = writer.folder / f"ckpt_{sim.step_index:08d}.h5"
    if writer.written and writer.written[-1] == path:
        return path
    for w in sim.writers:
        if hasattr(w, "finish"):
            w.finish(sim)
    sim.sync_history()
    return writer(sim)


__all__ = ["CheckpointWriter", "OutputFileError", "OutputWriteError", "SnapshotWriter",
           "WallForceWriter", "checkpoint_now", "latest_checkpoint", "make_writers", "read_checkpoint",
           "read_snapshot", "read_wall_forces", "write_checkpoint"]
