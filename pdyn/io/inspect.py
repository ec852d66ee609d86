"""``pdyn info FILE``: a short human description of a snapshot or checkpoint, read strictly
(``pdyn.io.schema``: a damaged or foreign file is a one-line error, not a description)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .hdf5 import CHECKPOINT
from .schema import read_pdyn


def _fmt(v) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=6, separator=", ") if v.size <= 8 else \
            f"array{v.shape}"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.10g}"
    return str(v)


def _meshes(a: dict, data: dict) -> list[str]:
    """A checkpoint's meshes, one line each: name (``walls[k]``, its STL file if the config
    names one), wall id, triangles, bounding box (m, in its own frame at t = 0)."""
    walls = a["config"].get("walls") or []
    n_box = len(data["walls/id"]) - len(walls)
    lines = ["  meshes (name, wall id, triangles, bounding box in m):"]
    ends = np.cumsum(data["meshes/vertex_count"])
    for w, nt, end, nv in zip(data["meshes/wall"], data["meshes/triangle_count"], ends,
                              data["meshes/vertex_count"]):
        k = int(-1 - w - n_box)
        source = walls[k].get("file") if 0 <= k < len(walls) and isinstance(walls[k], dict) \
            else None
        v = data["meshes/vertices"][end - nv:end]
        lines.append(f"    walls[{k}]" + (f" ({source})" if source else "")
                     + f"  id {int(w)}  {int(nt)} triangles  {_fmt(v.min(axis=0))} .. "
                     f"{_fmt(v.max(axis=0))}")
    return lines


def describe(path: str | Path) -> str:
    """Multi-line description: kind, version, step, time, counts, box, datasets with shapes and
    value ranges. Raises :class:`~pdyn.io.hdf5.OutputFileError` for unreadable files."""
    path = Path(path)
    a, data = read_pdyn(path)
    kind = a["format"]
    rows = a["rows_per_rank"]
    lines = [f"{path}: {kind} version {a['version']}"
             + (f", {len(rows)} per-rank pieces (virtual datasets)" if len(rows) > 1 else ""),
             f"  step {a['step']}, time {a['time']:.10g} s, dt {a['dt']:.6g} s, written by "
             f"{a['ranks']} rank(s)" + (f", run {a['run_id']}" if "run_id" in a else ""),
             f"  scene {a['scene']!r}, box {_fmt(a['box_lo'])} .. {_fmt(a['box_hi'])}, boundary "
             f"{', '.join(a['boundary'])}"]
    ids = data["particles/gid" if kind == CHECKPOINT else "particles/id"]
    lines.append(f"  {len(ids)} particles" + (f", ids {ids.min()}..{ids.max()}" if len(ids)
                                              else ""))
    if len(rows) > 1:
        lines.append(f"  particles per writing rank: {rows.tolist()}")
    for key in sorted(k for k in data if k.startswith("particles/")):
        values = data[key]
        rng = ""
        if values.size and values.dtype.kind in "fiu":
            if values.ndim == 2:
                mag = np.linalg.norm(values, axis=1)
                rng = f"  |.| {mag.min():.6g} .. {mag.max():.6g}"
            else:
                rng = f"  {values.min():.6g} .. {values.max():.6g}"
        lines.append(f"    {key:19s} {str(values.dtype):8s} {str(values.shape):12s}{rng}")
    nrm, pts = data["walls/normal"], data["walls/point"]
    lines.append(f"  {len(nrm)} walls (point, inward normal):")
    lines += [f"    {_fmt(p)}  {_fmt(n)}" for p, n in zip(pts, nrm)]
    if "contacts/id" in data:  # snapshots from version 5: the contact network
        ids, f = data["contacts/id"], data["contacts/force"]
        walls = int((ids[:, 1] < 0).sum())
        lines.append(f"  {len(ids)} contacts ({len(ids) - walls} sphere pairs, {walls} on walls)"
                     + (f", normal force {f.min():.6g} .. {f.max():.6g} N" if len(f) else ""))
    if "meshes/wall" in data:  # checkpoints from format 9
        lines += _meshes(a, data)
    if kind == CHECKPOINT:
        lines.append(f"  contact {json.dumps(a['contact'])}, gravity {_fmt(a['gravity'])}")
        lines.append(f"  config: {json.dumps(a['config'], sort_keys=True)}")
        lines.append(f"  restart: pdyn run --restart {path}")
    return "\n".join(lines)
