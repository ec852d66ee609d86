"""HDF5 plumbing shared by snapshots and checkpoints: atomic, checksummed writes, one global
array from many ranks, write errors every rank agrees on, and opening a pdyn file with one-line
errors.

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

Every array is stored chunked with HDF5's Fletcher-32 checksum filter, so a damaged file is
reported when read (:func:`read_dataset`), not used. Versions: snapshots 3 and checkpoints 2
added the checksums; the versions before (2, 1) hold the same datasets without them and are
still read.

Crash safety: a file is built in memory (HDF5's ``core`` driver), written to ``<name>.tmp`` with
plain file I/O and renamed with :func:`os.replace` (atomic within a file system). HDF5 never
touches the disk, so a full disk or any other write failure is one :class:`OutputWriteError`
(the ``.tmp`` removed), never a half-flushed HDF5 file. Pieces are renamed before the master is
written, and the master is renamed last, so a run killed at any moment leaves every earlier
master and its pieces whole. On several ranks, every rank learns of a failure on any rank
(:func:`agree`) and raises the same error.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import h5py
import numpy as np

SNAPSHOT = "pdyn-snapshot"
CHECKPOINT = "pdyn-checkpoint"
#: format name -> version this pdyn writes (checkpoint 3: ``particles/build_pos``, which keeps
#: the neighbour lists' rebuild schedule; 4: rows sorted by index cell with the ``index/*``
#: table, so a rank reads only its share, and the ``drift`` and ``r_mean`` of the run;
#: checkpoint 5: rotation and contact history ``omega``, ``torque``, ``history_count``,
#: ``history_key``, ``history_spring``; checkpoint 6: those only when the run rotates (a
#: frictionless run has none); checkpoint 7: the contact history as records of any number
#: per particle (``records/*``, ``index/history_count``) instead of 16 slots, and the attribute
#: ``run_id`` (``pdyn.io.runid``), as snapshot 6; checkpoint 8: glued spheres' ``glued`` and
#: ``anchor`` when the run has any (``pdyn.dynamics.glued``), and the walls as triangles as
#: snapshot 7 (instead of quadrilaterals); checkpoint 9: every mesh wall's welded vertices and
#: triangles, ``meshes/*`` (a restart reads its meshes there, never their files); snapshot 4:
#: ``particles/angular_velocity``; snapshot 5: the contact network ``contacts/*``; snapshot 7:
#: every wall as triangles, ``walls/vertices``, ``walls/triangles``, ``walls/triangle_wall``,
#: instead of quadrilaterals)
VERSIONS = {SNAPSHOT: 8, CHECKPOINT: 10}
#: format name -> versions this pdyn reads (older checkpoints cannot be read by share or
#: continue the contact history)
READABLE = {SNAPSHOT: (2, 3, 4, 5, 6, 7, 8), CHECKPOINT: (5, 6, 7, 8, 9, 10)}


class OutputFileError(ValueError):
    """A file pdyn cannot read: missing, truncated, foreign, wrong version, damaged (one-line
    message)."""


class OutputWriteError(RuntimeError):
    """A file or folder pdyn cannot write (disk full, a folder where a file must go, ...); on
    several ranks raised on every rank with the same one-line message."""


def agree(comm, message: str | None) -> None:
    """Collective: raise :class:`OutputWriteError` on every rank if any rank has a
    ``message`` (the lowest such rank's, prefixed with its rank, on every rank)."""
    if comm.size == 1:
        if message:
            raise OutputWriteError(message)
        return
    found = [(r, m) for r, m in enumerate(comm.allgather(message)) if m]
    if found:
        r, m = found[0]
        raise OutputWriteError(f"rank {r}: {m}")


def attempt(action) -> str | None:
    """Run ``action()``; return the message of an :class:`OutputWriteError` instead of raising
    (for :func:`agree`)."""
    try:
        action()
    except OutputWriteError as exc:
        return str(exc)
    return None


def make_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) or raise :class:`OutputWriteError`."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(f"{folder}: cannot create the folder ({exc.strerror or exc})") \
            from None


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path.tmp`` and rename it to ``path``; on any failure remove the
    ``.tmp`` and raise :class:`OutputWriteError` naming ``path``."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        _test_delay()
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OutputWriteError(f"{path}: cannot write ({exc.strerror or exc})") from None


def write_atomic(path: Path, write) -> None:
    """Call ``write(h5file)`` on an HDF5 file in memory, then write it to ``path`` atomically
    (:func:`write_bytes_atomic`)."""
    with h5py.File(Path(path).name, "w", driver="core", backing_store=False) as f:
        write(f)
        f.flush()
        image = f.id.get_file_image()
    write_bytes_atomic(path, image)


def put(f: h5py.File, key: str, value) -> None:
    """Store ``value`` at ``key``: arrays chunked with the Fletcher-32 checksum filter."""
    value = np.asarray(value)
    if value.ndim == 0:
        f[key] = value
    else:
        f.create_dataset(key, data=value, fletcher32=True)


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


def write_global(path: Path, comm, attrs: dict, arrays: dict, extra=None, then=None) -> None:
    """Write this rank's rows of ``arrays`` ({dataset path: array (n_local, ...)}) as global
    datasets of the file ``path`` (its folder created if needed), plus ``attrs`` and the small
    datasets ``extra`` (the same on every rank, written once); then call ``then()`` on rank 0
    (e.g. to update an index of the files). Arrays may differ in their row counts (particles,
    contacts); the attribute ``rows_per_rank`` holds the first array's. Collective over
    ``comm``; returns when the file is complete, or raises :class:`OutputWriteError` on every
    rank if any rank failed."""
    path = Path(path)
    extra = extra or {}
    rows = np.array(comm.allgather([int(len(v)) for v in arrays.values()]), np.int64)
    rows = rows.reshape(comm.size, len(arrays))  # rank x array
    starts = {key: np.concatenate(([0], np.cumsum(rows[:, a])))
              for a, key in enumerate(arrays)}
    counts = rows[:, 0]

    def put_common(f):
        f.attrs.update(attrs)
        f.attrs["rows_per_rank"] = counts
        for key, val in extra.items():
            put(f, key, val)

    if comm.size == 1:
        def write(f):
            put_common(f)
            for key, val in arrays.items():
                put(f, key, val)

        make_folder(path.parent)
        write_atomic(path, write)
        if then is not None:
            then()
        return
    if parallel_hdf5():  # pragma: no cover - needs h5py built against parallel HDF5
        agree(comm, attempt(lambda: make_folder(path.parent)))
        _write_collective(path, comm, arrays, starts, put_common)
        agree(comm, attempt(then) if then is not None and comm.rank == 0 else None)
        return
    piece = path.with_name(piece_name(path, comm.rank))

    def write_piece(f):
        f.attrs["rank"] = comm.rank
        f.attrs["master"] = path.name
        for key, val in arrays.items():
            put(f, key, val)

    def write_master(f):
        put_common(f)
        f.attrs["pieces"] = names
        for key, val in arrays.items():
            val = np.asarray(val)
            offsets = starts[key]
            layout = h5py.VirtualLayout((int(offsets[-1]),) + val.shape[1:], dtype=val.dtype)
            for r in range(comm.size):
                n = int(offsets[r + 1] - offsets[r])
                if n:
                    layout[offsets[r]:offsets[r] + n] = h5py.VirtualSource(
                        names[r], key, shape=(n,) + val.shape[1:])
            f.create_virtual_dataset(key, layout, fillvalue=0)

    def master():
        write_atomic(path, write_master)
        if then is not None:
            then()

    names = [piece_name(path, r) for r in range(comm.size)]
    mine = attempt(lambda: (make_folder(path.parent), write_atomic(piece, write_piece)))
    try:
        agree(comm, mine)
        agree(comm, attempt(master) if comm.rank == 0 else None)
    except OutputWriteError:
        if mine is None:  # this rank's piece is complete but the file is not: remove it
            with contextlib.suppress(OSError):
                piece.unlink()
        raise


def _write_collective(path, comm, arrays, starts, put_common):  # pragma: no cover
    """One file, each rank writing its slice (h5py with the mpio driver)."""
    tmp = path.with_name(path.name + ".tmp")
    with h5py.File(tmp, "w", driver="mpio", comm=comm.comm) as f:
        put_common(f)  # metadata operations are collective: same objects on every rank
        for key, val in arrays.items():
            val = np.asarray(val)
            offsets = starts[key]
            lo, hi = int(offsets[comm.rank]), int(offsets[comm.rank + 1])
            ds = f.create_dataset(key, (int(offsets[-1]),) + val.shape[1:], dtype=val.dtype)
            with ds.collective:
                ds[lo:hi] = val
    comm.barrier()
    if comm.rank == 0:
        _test_delay()
        os.replace(tmp, path)
    comm.barrier()


def _text(value):
    """An HDF5 string attribute as str (None for anything else)."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value if isinstance(value, str) else None


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
    ok = False
    try:
        _check_kind(path, f, kinds, what)
        ok = True
        return f
    finally:
        if not ok:
            f.close()


def _check_kind(path: Path, f: h5py.File, kinds: tuple, what: str) -> None:
    fmt = _text(f.attrs.get("format"))
    if fmt not in kinds:
        if fmt in VERSIONS:
            raise OutputFileError(f"{path}: a {fmt.replace('pdyn-', 'pdyn ')}, expected a {what}")
        if "master" in f.attrs:
            raise OutputFileError(f"{path}: a per-rank piece of {_text(f.attrs['master'])}; "
                                  "open that file instead")
        raise OutputFileError(f"{path}: an HDF5 file but not a {what} (no pdyn format "
                              "attribute)")
    version = f.attrs.get("version")
    if not isinstance(version, (int, np.integer)) or int(version) not in READABLE[fmt]:
        shown = int(version) if isinstance(version, (int, np.integer)) else repr(version)
        readable = " and ".join(map(str, READABLE[fmt]))
        raise OutputFileError(f"{path}: {fmt} version {shown}; this pdyn reads versions "
                              f"{readable}")
    pieces = f.attrs.get("pieces", [])
    for name in np.atleast_1d(pieces):
        name = _text(name)
        if name is None or Path(name).name != name:
            raise OutputFileError(f"{path}: attribute 'pieces' = {pieces!r} is damaged")
        if not (path.parent / name).exists():
            raise OutputFileError(f"{path}: its per-rank piece {name} is missing (files of a "
                                  "multi-rank run must stay together in one folder)")


def read_dataset(f: h5py.File, key: str, rows=None) -> np.ndarray:
    """Read a whole dataset, or the row ranges ``rows`` ([(start, stop)], concatenated; HDF5
    hyperslabs), verifying the checksums of what is read and turning HDF5 read failures into
    OutputFileError."""
    try:
        ds = f[key]
    except KeyError:
        raise OutputFileError(f"{f.filename}: dataset {key!r} missing (incomplete file)") from None
    if not isinstance(ds, h5py.Dataset):
        raise OutputFileError(f"{f.filename}: {key!r} is a group, expected a dataset")
    if rows is not None and any(not 0 <= a <= b <= ds.shape[0] for a, b in rows):
        raise OutputFileError(f"{f.filename}: rows {rows} asked of {key!r}, which has "
                              f"{ds.shape[0]} (damaged index)")
    try:
        if rows is None:
            return ds[()]
        out = np.empty((sum(b - a for a, b in rows),) + ds.shape[1:], ds.dtype)
        at = 0
        for a, b in rows:
            if b == a:
                continue
            ds.read_direct(out, np.s_[a:b], np.s_[at:at + b - a])
            at += b - a
        return out
    except OSError as exc:
        detail = " ".join(str(exc).split())
        raise OutputFileError(f"{f.filename}: cannot read {key!r}: the data is damaged "
                              f"(checksum or storage error: {detail})") from None


def step_files(folder: Path, prefix: str) -> list[tuple[int, Path]]:
    """(step, path) of the master files ``<prefix>_<step>.h5`` in ``folder``, sorted."""
    out = []
    folder = Path(folder)
    if not folder.is_dir():
        return out
    for p in folder.glob(f"{prefix}_*.h5"):
        tail = p.stem[len(prefix) + 1:]
        if tail.isdigit() and p.is_file():
            out.append((int(tail), p))
    return sorted(out)


def move_after(folder: Path, prefix: str, step: int, dest: Path) -> list[Path]:
    """Move the masters and pieces of ``prefix`` in ``folder`` with a step after ``step`` into
    the folder ``dest`` (created when needed) and delete stray ``.tmp`` files (incomplete
    writes); return the moved files' new paths. Raises :class:`OutputWriteError`."""
    moved = []
    folder = Path(folder)
    if not folder.is_dir():
        return moved
    try:
        for p in sorted(folder.glob(f"{prefix}_*")):
            digits = p.name[len(prefix) + 1:].split(".", 1)[0]
            if p.name.endswith(".tmp"):
                p.unlink()
            elif digits.isdigit() and int(digits) > step:
                dest.mkdir(parents=True, exist_ok=True)
                os.replace(p, dest / p.name)
                moved.append(dest / p.name)
    except OSError as exc:
        raise OutputWriteError(f"{folder}: cannot move the files after step {step} aside "
                               f"({exc.strerror or exc})") from None
    return moved
