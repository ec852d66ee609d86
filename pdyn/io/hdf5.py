"""Minimal HDF5 snapshots: one file per snapshot, ``snapshots/snap_<step>.h5``, holding the
owned spheres (``id``, ``position`` m, ``velocity`` m/s, ``radius`` m, ``rank``) and the
attributes ``step``, ``time`` (s), ``format``, ``version``.

Files are written to a temporary name in the same folder and renamed, so a crash never leaves
a half-written snapshot under the final name.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

FORMAT = "pdyn-snapshot"
VERSION = 1


def write_atomic(path: Path, write) -> None:
    """Call ``write(h5file)`` on ``path.tmp`` then rename it to ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    with h5py.File(tmp, "w") as f:
        write(f)
    os.replace(tmp, path)


class SnapshotWriter:
    """Writes a snapshot every ``every`` steps into ``folder/snapshots``."""

    def __init__(self, folder: str | Path, every: int):
        self.folder = Path(folder) / "snapshots"
        self.every = int(every)
        self.written: list[Path] = []

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0

    def __call__(self, sim) -> None:
        store = sim.store
        h = store.owned
        h = h[np.argsort(store.gid[h], kind="stable")]
        path = self.folder / f"snap_{sim.step_index:08d}.h5"
        self.folder.mkdir(parents=True, exist_ok=True)

        def write(f):
            f.attrs.update(format=FORMAT, version=VERSION, step=sim.step_index, time=sim.time)
            f["id"] = store.gid[h]
            f["position"] = store.pos[h]
            f["velocity"] = store.vel[h]
            f["radius"] = store.radius[h]
            f["rank"] = np.full(h.size, sim.comm.rank, np.int32)

        write_atomic(path, write)
        self.written.append(path)


def read_snapshot(path: str | Path) -> dict:
    """Read a snapshot back into a dict of arrays plus ``step`` and ``time``."""
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") != FORMAT:
            raise ValueError(f"{path}: not a pdyn snapshot")
        out = {k: f[k][()] for k in f.keys()}
        out["step"] = int(f.attrs["step"])
        out["time"] = float(f.attrs["time"])
    return out
