"""``pdyn info FILE``: a short human description of a snapshot or checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .hdf5 import CHECKPOINT, open_pdyn, read_dataset


def _fmt(v) -> str:
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=6, separator=", ") if v.size <= 8 else \
            f"array{v.shape}"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.10g}"
    return str(v)


def describe(path: str | Path) -> str:
    """Multi-line description: kind, version, step, time, counts, box, datasets with shapes and
    value ranges. Raises :class:`~pdyn.io.hdf5.OutputFileError` for unreadable files."""
    path = Path(path)
    lines = []
    with open_pdyn(path) as f:
        a = f.attrs
        kind = str(a["format"])
        pieces = list(a.get("pieces", []))
        lines.append(f"{path}: {kind} version {int(a['version'])}"
                     + (f", {len(pieces)} per-rank pieces (virtual datasets)" if pieces else ""))
        lines.append(f"  step {int(a['step'])}, time {float(a['time']):.10g} s, "
                     f"dt {float(a['dt']):.6g} s, written by {int(a['ranks'])} rank(s)")
        lines.append(f"  scene {_fmt(a['scene'])!r}, box {_fmt(np.asarray(a['box_lo']))} .. "
                     f"{_fmt(np.asarray(a['box_hi']))}, boundary "
                     f"{', '.join(_fmt(b) for b in a['boundary'])}")
        grp = "particles"
        ids = read_dataset(f, f"{grp}/{'gid' if kind == CHECKPOINT else 'id'}")
        lines.append(f"  {len(ids)} particles" + (f", ids {ids.min()}..{ids.max()}"
                                                  if len(ids) else ""))
        if "rows_per_rank" in a and len(a["rows_per_rank"]) > 1:
            lines.append(f"  particles per writing rank: {list(map(int, a['rows_per_rank']))}")
        for key in sorted(f[grp].keys()):
            ds = f[grp][key]
            data = read_dataset(f, f"{grp}/{key}")
            rng = ""
            if data.size and data.dtype.kind in "fiu":
                if data.ndim == 2:
                    mag = np.linalg.norm(data, axis=1)
                    rng = f"  |.| {mag.min():.6g} .. {mag.max():.6g}"
                else:
                    rng = f"  {data.min():.6g} .. {data.max():.6g}"
            lines.append(f"    {grp}/{key:10s} {str(ds.dtype):8s} {str(ds.shape):12s}{rng}")
        if "walls" in f:
            nrm = read_dataset(f, "walls/normal")
            pts = read_dataset(f, "walls/point")
            lines.append(f"  {len(nrm)} walls (point, inward normal):")
            for p, n in zip(pts, nrm):
                lines.append(f"    {_fmt(p)}  {_fmt(n)}")
        if kind == CHECKPOINT:
            lines.append(f"  contact {_fmt(a['contact'])}, gravity {_fmt(np.asarray(a['gravity']))}")
            cfg = json.loads(a["config"])
            lines.append(f"  config: {json.dumps(cfg, sort_keys=True)}")
            lines.append(f"  restart: pdyn run --restart {path}")
    return "\n".join(lines)
