"""Output: snapshots (HDF5 + XDMF 2 sidecar for ParaView), checkpoint files, the wall-force
and thermo series (CSV), coarse-grained fields (HDF5 + XDMF, CSV profiles), inspection
(``pdyn info``) and pictures (``pdyn render``, needs the optional ``vtk`` package). Files only:
continuing a run from a checkpoint is ``pdyn.restart``, above the driver."""

from pathlib import Path

from .checkpoint import CheckpointWriter, latest_checkpoint, read_checkpoint, write_checkpoint
from .fields import FieldsWriter, read_fields
from .hdf5 import OutputFileError, OutputWriteError
from .snapshot import SnapshotWriter, read_snapshot
from .thermo import ThermoWriter, read_thermo
from .view import CONTACT_FORCES, WALL_FORCES, OutputView
from .wallforces import WallForceWriter, read_wall_forces
from .wallpressure import WallPressureSampler
from .writer import Writer


def make_writers(output, materials: tuple = ()) -> list:
    """The writers an :class:`~pdyn.config.OutputConfig` asks for, in the order they run
    (the wall-force series first: it appends its rows when a snapshot or checkpoint is due;
    the thermo output last, with mixing columns for two or more ``materials``, their
    names)."""
    writers = []
    if output.snapshot_every:
        pressure = WallPressureSampler(output.wall_patches) if output.wall_pressure else None
        if pressure is not None:  # samples every step, before the snapshot that reads it
            writers.append(pressure)
        writers.append(SnapshotWriter(output.folder, output.snapshot_every,
                                      sphere_stress=output.sphere_stress, pressure=pressure))
    if output.checkpoint_every:
        writers.append(CheckpointWriter(output.folder, output.checkpoint_every))
    if output.thermo_every:
        writers.append(ThermoWriter(output.folder, output.thermo_every,
                                    materials=materials))
    if output.wall_forces:
        files = [w for w in writers if not isinstance(w, (ThermoWriter, WallPressureSampler))]
        writers.insert(0, WallForceWriter(output.folder,
                                          lambda step: any(w.due(step) for w in files)))
    return writers


def fields_writers(output, fields: tuple) -> list:
    """A :class:`FieldsWriter` into ``output.folder`` per ``[[fields]]`` table (``fields``:
    :class:`~pdyn.config.FieldsConfig`), run after :func:`make_writers`' writers."""
    return [FieldsWriter(output.folder, f) for f in fields]


def checkpoint_now(writers: list, view) -> Path | None:
    """Write a checkpoint of the run at ``view`` (an ``OutputView`` with ``state``) into its
    output folder (a run stopped between two scheduled checkpoints), unless its checkpoint
    writer (in ``writers``, added there if missing) wrote this step's; flush the buffered
    wall-force rows first. Returns its path; None when the run writes no output at all
    (nothing was asked to be written). Collective."""
    out = view.config.output
    if not view.config.writes_files:
        return None
    writer = next((w for w in writers if isinstance(w, CheckpointWriter)), None)
    if writer is None:
        writer = CheckpointWriter(out.folder, 0)  # never due by itself
        writers.append(writer)
    path = writer.folder / f"ckpt_{view.step:08d}.h5"
    if writer.written and writer.written[-1] == path:
        return path
    for w in writers:
        w.finish(view)
    return writer(view)


__all__ = ["CONTACT_FORCES", "WALL_FORCES", "CheckpointWriter", "FieldsWriter", "read_fields", "OutputView", "OutputFileError", "OutputWriteError", "SnapshotWriter",
           "ThermoWriter", "WallForceWriter", "WallPressureSampler", "Writer", "checkpoint_now", "fields_writers", "latest_checkpoint", "make_writers", "read_checkpoint",
           "read_snapshot", "read_thermo", "read_wall_forces", "write_checkpoint"]
