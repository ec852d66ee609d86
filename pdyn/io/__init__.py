"""Output: snapshots (HDF5 + XDMF 2 sidecar for ParaView), checkpoint files, inspection
(``pdyn info``) and pictures (``pdyn render``, needs the optional ``vtk`` package). Files only:
continuing a run from a checkpoint is ``pdyn.restart``, above the driver."""

from .checkpoint import CheckpointWriter, latest_checkpoint, read_checkpoint, write_checkpoint
from .hdf5 import OutputFileError, OutputWriteError
from .snapshot import SnapshotWriter, read_snapshot


def make_writers(output) -> list:
    """The writers an :class:`~pdyn.config.OutputConfig` asks for, in the order they run."""
    writers = []
    if output.snapshot_every:
        writers.append(SnapshotWriter(output.folder, output.snapshot_every))
    if output.checkpoint_every:
        writers.append(CheckpointWriter(output.folder, output.checkpoint_every))
    return writers


__all__ = ["CheckpointWriter", "OutputFileError", "OutputWriteError", "SnapshotWriter",
           "latest_checkpoint", "make_writers", "read_checkpoint", "read_snapshot",
           "write_checkpoint"]
