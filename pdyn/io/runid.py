"""Which run a file belongs to: a *run id* (32 hexadecimal digits, ``uuid4``) made when a run
starts (``Simulation``), kept through its restarts, stored in every snapshot and checkpoint
(attribute ``run_id``, snapshot format 6 and checkpoint format 7 on) and in the run folder
(the file ``run_id``, written with the folder's first file). A restart refuses a checkpoint
whose run id is not its folder's (``pdyn.restart``): a file copied in from another run is
not continued in this run's folder.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from .hdf5 import OutputFileError, agree, attempt, make_folder, write_bytes_atomic

#: the run folder's record of its run id
RUN_FILE = "run_id"
_PATTERN = re.compile(r"[0-9a-f]{32}")


def new_run_id() -> str:
    """A fresh run id."""
    return uuid.uuid4().hex


def is_run_id(value) -> bool:
    """Is ``value`` a run id (32 lowercase hexadecimal digits)?"""
    return isinstance(value, str) and _PATTERN.fullmatch(value) is not None


def folder_run_id(folder) -> str | None:
    """The run id recorded in the run folder ``folder`` (None: no record, e.g. a folder of a
    pdyn before run ids). Raises :class:`OutputFileError` for a record that is not one."""
    path = Path(folder) / RUN_FILE
    if not path.is_file():
        return None
    try:
        text = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputFileError(f"{path}: cannot read the run id ({exc})") from None
    if not is_run_id(text):
        raise OutputFileError(f"{path}: {text[:40]!r} is not a run id (damaged file)")
    return text


def claim_folder(folder, run_id: str | None, comm) -> None:
    """Record ``run_id`` as the run of ``folder`` unless it already is (rank 0 writes;
    collective: a failure raises :class:`~pdyn.io.hdf5.OutputWriteError` on every rank)."""
    if run_id is None:
        return
    path = Path(folder) / RUN_FILE

    def work():
        try:
            if path.is_file() and path.read_text().strip() == run_id:
                return
        except (OSError, UnicodeDecodeError):
            pass
        make_folder(path.parent)
        write_bytes_atomic(path, (run_id + "\n").encode())

    agree(comm, attempt(work) if comm.rank == 0 else None)
