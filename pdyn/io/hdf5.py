"""HDF5 plumbing shared by snapshots and checkpoints: atomic writes, one global array from many
ranks, and opening a pdyn file with one-line errors.

Writing global arrays: every rank contributes rows; readers see one array per field,
rank-major (rank 0's rows, then rank 1's, ...).

* one rank: a single file;
* h5py built against parallel HDF5 (``h5py.get_config().mpi``): one file written collectively
  (``driver="mpio"``), each rank writing its slice;
* otherwise each rank writes ``<stem>.r<rank>.h5`` and rank 0 writes the master ``<stem>.h5``
  whose datasets are HDF5 *virtual datasets* over the pieces (source names relative to the
  master's folder, so the folder can be moved). The master lists its pieces in the attribute
  ``pieces`` and :func:`open_pdyn` checks that they exist (a virtual dataset with a missing
  source silently reads its fill value).

Crash safety: every file is written to ``<name>.tmp`` and renamed with :func:`os.replace`
(atomic within a file system). Pieces are renamed before the master is written, and the master
is renamed last, so a run killed at any moment leaves every earlier master and its pieces whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

SNAPSHOT = "pdyn-snapshot"
CHECKPOINT = "pdyn-checkpoint"
#: format name -> version this pdyn writes and reads
VERSIONS = {SNAPSHOT: 2, CHECKPOINT: 1}


class OutputFileError(ValueError):
    """A file pdyn cannot read: missing, truncated, foreign, wrong version (one-line message)."""


def write_atomic(path: Path, write) -> None:
    """Call ``write(h5file)`` on ``path.tmp``, then rename it to ``path``."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with h5py.File(tmp, "w") as f:
        write(f)
    _test_delay()
    os.replace(tmp, path)


def _test_delay() -> None:
    """Tests of crash safety widen the window between write and rename (seconds)."""
    delay = os.environ.get("PDYN_TEST_WRITE_DELAY")
    if delay:
        import time

        time.sleep(float(delay))


def piece_name(path: Path, rank: int) -> str:
    return f"{Path(path).stem}.r{rank:04d}.h5"


def parallel_hdf5() -> bool:
    """True when h5py can write one file collectively (built against parallel HDF5)."""
    return bool(h5py.get_config().mpi)


def write_global(path: Path, comm, attrs: dict, arrays: dict, extra=None) -> None:
    """Write this rank's rows of ``arrays`` ({dataset path: array (n_local, ...)}) as global
    datasets of the file ``path``, plus ``attrs`` and the small datasets ``extra`` (the same
    on every rank, written once). Collective over ``comm``; returns when the file is complete."""
    path = Path(path)
    extra = extra or {}
    counts = np.array(comm.allgather(int(len(next(iter(arrays.values()))))), np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    total = int(offsets[-1])

    def put_common(f):
        f.attrs.update(attrs)
        f.attrs["rows_per_rank"] = counts
        for key, val in extra.items():
            f[key] = val

    if comm.size == 1:
        def write(f):
            put_common(f)
            for key, val in arrays.items():
                f[key] = val

        write_atomic(path, write)
        return
    if parallel_hdf5():  # pragma: no cover - needs h5py built against parallel HDF5
        _write_collective(path, comm, arrays, offsets, put_common)
        return
    piece = path.with_name(piece_name(path, comm.rank))

    def write_piece(f):
        f.attrs["rank"] = comm.rank
        f.attrs["master"] = path.name
        for key, val in arrays.items():
            f[key] = val

    write_atomic(piece, write_piece)
    comm.barrier()
    if comm.rank == 0:
        names = [piece_name(path, r) for r in range(comm.size)]

        def write_master(f):
            put_common(f)
            f.attrs["pieces"] = names
            for key, val in arrays.items():
                val = np.asarray(val)
                layout = h5py.VirtualLayout((total,) + val.shape[1:], dtype=val.dtype)
                for r in range(comm.size):
                    n = int(counts[r])
                    if n:
                        layout[offsets[r]:offsets[r] + n] = h5py.VirtualSource(
                            names[r], key, shape=(n,) + val.shape[1:])
                f.create_virtual_dataset(key, layout, fillvalue=0)

        write_atomic(path, write_master)
    comm.barrier()


def _write_collective(path, comm, arrays, offsets, put_common):  # pragma: no cover
    """One file, each rank writing its slice (h5py with the mpio driver)."""
    tmp = path.with_name(path.name + ".tmp")
    total = int(offsets[-1])
    lo, hi = int(offsets[comm.rank]), int(offsets[comm.rank + 1])
    with h5py.File(tmp, "w", driver="mpio", comm=comm.comm) as f:
        put_common(f)  # metadata operations are collective: same objects on every rank
        for key, val in arrays.items():
            val = np.asarray(val)
            ds = f.create_dataset(key, (total,) + val.shape[1:], dtype=val.dtype)
            with ds.collective:
                ds[lo:hi] = val
    comm.barrier()
    if comm.rank == 0:
        _test_delay()
        os.replace(tmp, path)
    comm.barrier()


def open_pdyn(path, kind: str | tuple | None = None) -> h5py.File:
    """Open a pdyn snapshot or checkpoint for reading, checking format, version and pieces.

    ``kind``: a format name (or tuple of names) the caller accepts; None accepts both.
    Raises :class:`OutputFileError` with a one-line message otherwise."""
    path = Path(path)
    kinds = (SNAPSHOT, CHECKPOINT) if kind is None else ((kind,) if isinstance(kind, str)
                                                         else tuple(kind))
    what = " or ".join(k.replace("pdyn-", "pdyn ") for k in kinds)
    if not path.exists():
        raise OutputFileError(f"{path}: no such file")
    if path.is_dir():
        raise OutputFileError(f"{path}: is a folder, expected a {what} file")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        detail = str(exc).split("(", 1)[-1].rstrip(")") if "(" in str(exc) else str(exc)
        hint = "truncated" if "truncated" in detail else "not an HDF5 file, or damaged"
        raise OutputFileError(f"{path}: cannot open as HDF5 ({hint}: {detail})") from None
    try:
        fmt = f.attrs.get("format")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt not in kinds:
            if fmt in VERSIONS:
                raise OutputFileError(f"{path}: a {fmt.replace('pdyn-', 'pdyn ')}, expected a "
                                      f"{what}")
            if "master" in f.attrs:
                raise OutputFileError(f"{path}: a per-rank piece of {f.attrs['master']!s}; "
                                      "open that file instead")
            raise OutputFileError(f"{path}: an HDF5 file but not a {what} (no pdyn format "
                                  "attribute)")
        version = int(f.attrs.get("version", -1))
        if version != VERSIONS[fmt]:
            raise OutputFileError(f"{path}: {fmt} version {version}; this pdyn reads version "
                                  f"{VERSIONS[fmt]}")
        for name in f.attrs.get("pieces", []):
            name = name.decode() if isinstance(name, bytes) else str(name)
            if not (path.parent / name).exists():
                raise OutputFileError(f"{path}: its per-rank piece {name} is missing (files of a "
                                      "multi-rank run must stay together in one folder)")
        return f
    except Exception:
        f.close()
        raise


def read_dataset(f: h5py.File, key: str) -> np.ndarray:
    """Read a whole dataset, turning HDF5 read failures (damaged data) into OutputFileError."""
    try:
        return f[key][()]
    except KeyError:
        raise OutputFileError(f"{f.filename}: dataset {key!r} missing (incomplete file)") from None
    except OSError as exc:
        raise OutputFileError(f"{f.filename}: cannot read {key!r} ({exc})") from None


def step_files(folder: Path, prefix: str) -> list[tuple[int, Path]]:
    """(step, path) of the complete master files ``<prefix>_<step>.h5`` in ``folder``, sorted."""
    out = []
    folder = Path(folder)
    if not folder.is_dir():
        return out
    for p in folder.glob(f"{prefix}_*.h5"):
        tail = p.stem[len(prefix) + 1:]
        if tail.isdigit():
            out.append((int(tail), p))
    return sorted(out)


def remove_after(folder: Path, prefix: str, step: int) -> list[Path]:
    """Delete masters and pieces of ``prefix`` with a step after ``step`` (and stray .tmp)."""
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for p in list(folder.glob(f"{prefix}_*")):
        digits = p.name[len(prefix) + 1:].split(".", 1)[0]
        if p.name.endswith(".tmp") or (digits.isdigit() and int(digits) > step):
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed
