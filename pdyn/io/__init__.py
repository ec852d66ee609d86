"""Output: snapshots (HDF5 + XDMF 2 sidecar for ParaView), checkpoint files, the wall-force
series (CSV), inspection
(``pdyn info``) and pictures (``pdyn render``, needs the optional ``vtk`` package). Files only:
continuing a run from a checkpoint is ``pdyn.restart``, above the driver."""

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


__all__ = ["CheckpointWriter", "OutputFileError", "OutputWriteError", "SnapshotWriter",
           "WallForceWriter", "latest_checkpoint", "make_writers", "read_checkpoint",
           "read_snapshot", "read_wall_forces", "write_checkpoint"]
