"""What a pdyn snapshot and checkpoint must hold, and the strict reader that checks a file
against it before anything uses it (``pdyn info``, ``pdyn render``, restart, the XDMF index).

Checked, each problem one :class:`~pdyn.io.hdf5.OutputFileError` naming the file, the item and
its value: the kind and version (:func:`~pdyn.io.hdf5.open_pdyn`); every required attribute,
its type and range (``ATTRIBUTES``); every dataset, its type and shape, rows agreeing with
``n_particles`` (``DATASETS``); and, when the data are read, the checksums
(:func:`~pdyn.io.hdf5.read_dataset`) and the values: finite centres, velocities and forces,
radii and masses > 0, unique ids, ranks within ``ranks``, finite walls.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import h5py
import numpy as np

from ..domain import BOUNDARIES
from ..particles import FIELDS, ragged_groups
from .hdf5 import CHECKPOINT, SNAPSHOT, OutputFileError, open_pdyn, read_dataset


class _Bad(ValueError):
    """An attribute value that fails its check (the reason)."""


def _integer(v, minimum=0):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise _Bad("expected an integer")
    if v < minimum:
        raise _Bad(f"must be >= {minimum}")
    return int(v)


def _number(v, positive=False):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        raise _Bad("expected a number")
    v = float(v)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise _Bad("must be finite and > 0" if positive else "must be finite and >= 0")
    return v


def _text(v):
    if isinstance(v, bytes):
        v = v.decode(errors="replace")
    if not isinstance(v, str):
        raise _Bad("expected a string")
    return v


def _vector(v):
    a = np.asarray(v)
    if a.shape != (3,) or a.dtype.kind not in "iuf" or not np.isfinite(a).all():
        raise _Bad("expected 3 finite numbers")
    return a.astype(float)


def _table(v):
    try:
        out = json.loads(_text(v))
    except json.JSONDecodeError as exc:
        raise _Bad(f"not JSON ({exc.msg})") from None
    if not isinstance(out, dict):
        raise _Bad("expected a JSON object")
    return out


def _boundary(v):
    b = tuple(_text(x) for x in np.atleast_1d(v))
    if len(b) != 3 or any(x not in BOUNDARIES for x in b):
        raise _Bad(f"expected 3 of {', '.join(BOUNDARIES)}")
    return b


def _counts(v):
    a = np.atleast_1d(np.asarray(v))
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a < 0).any():
        raise _Bad("expected counts >= 0")
    return a.astype(np.int64)


def _dims(v):
    a = _counts(v)
    if a.shape != (3,) or (a < 1).any():
        raise _Bad("expected 3 integers >= 1")
    return a


_COMMON = {"step": _integer, "time": _number, "dt": lambda v: _number(v, positive=True),
           "ranks": lambda v: _integer(v, 1), "n_particles": _integer, "box_lo": _vector,
           "box_hi": _vector, "boundary": _boundary, "scene": _text, "rows_per_rank": _counts}
#: format -> attribute -> check (returns the plain value or raises _Bad)
ATTRIBUTES = {
    SNAPSHOT: _COMMON,
    CHECKPOINT: dict(_COMMON, config=_table, contact=_table, gravity=_vector, seed=_integer,
                     steps_total=_integer, exchange=_table, drift=_number, r_mean=_number,
                     index_dims=_dims),
}
#: attributes read when present
OPTIONAL = {"pdyn_version": _text, "insertion": _table}

_WALLS = {"walls/id": ("i", ()), "walls/point": ("f", (3,)), "walls/normal": ("f", (3,)),
          "walls/quad_points": ("f", (3,)), "walls/quads": ("i", (4,))}
#: format -> dataset -> (dtype kinds, shape after the row count)
DATASETS = {
    SNAPSHOT: dict({"particles/id": ("i", ()), "particles/position": ("f", (3,)),
                    "particles/velocity": ("f", (3,)), "particles/radius": ("f", ()),
                    "particles/rank": ("i", ()), "particles/angular_velocity": ("f", (3,)),
                    # the contact network, rows = the attribute ``n_contacts``
                    "contacts/id": ("i", (2,)), "contacts/points": ("f", (3,)),
                    "contacts/lines": ("i", (2,)), "contacts/force": ("f", ()),
                    "contacts/normal_force": ("f", (3,)),
                    "contacts/tangential_force": ("f", (3,))},
                   **_WALLS),
    CHECKPOINT: dict({(f"records/{k}" if f.counted_by else f"particles/{k}"):
                      (np.dtype(f.dtype).kind, f.shape)
                      for k, f in FIELDS.items() if f.checkpoint}, **_WALLS,
                     **{f"index/{k}": ("i", ()) for k in ("cell", "start", "count")},
                     **{f"index/{c}": ("i", ()) for c, names in ragged_groups(FIELDS).items()
                        if FIELDS[names[0]].checkpoint}),
}
#: checkpoint format 7 keeps a ragged field (``pdyn.particles.FIELDS``, ``counted_by``) as its
#: records, ``records/<field>`` (rows: the records of the particles in particle order), with
#: its count per particle ``particles/<count>`` and per index segment ``index/<count>``;
#: versions 5 and 6 kept the contact history in 16 slots per particle: (n, 16) and (n, 16, 3)
RAGGED_SINCE = 7
HISTORY_SLOTS_V6 = 16
_SLOTTED = {"particles/history_key": ("i", (HISTORY_SLOTS_V6,)),
            "particles/history_spring": ("f", (HISTORY_SLOTS_V6, 3))}
#: datasets whose values must be finite, and > 0
FINITE = ("particles/position", "particles/velocity", "particles/pos", "particles/vel",
          "particles/force", "particles/angular_velocity", "particles/omega",
          "particles/torque", "particles/history_spring", "records/history_spring",
          "walls/point", "walls/normal",
          "walls/quad_points", "contacts/points", "contacts/force", "contacts/normal_force",
          "contacts/tangential_force")
POSITIVE = ("particles/radius", "particles/mass")
IDS = ("particles/id", "particles/gid")
#: datasets a format holds from a version on (format, first version)
SINCE = {"particles/angular_velocity": (SNAPSHOT, 4),
         **{k: (SNAPSHOT, 5) for k in DATASETS[SNAPSHOT] if k.startswith("contacts/")}}
#: checkpoint datasets of a feature of the store (``pdyn.particles.FIELDS``): from checkpoint
#: version 6 on present only when the run had the feature, all of a feature or none
FEATURE_DATASETS = {k: FIELDS[k.rsplit("/", 1)[1]].feature for k in DATASETS[CHECKPOINT]
                    if k.split("/")[0] in ("particles", "records", "index")
                    and k.rsplit("/", 1)[1] in FIELDS
                    and FIELDS[k.rsplit("/", 1)[1]].feature}
FEATURES_OPTIONAL_SINCE = 6


def expected(fmt: str, version: int, features=None) -> dict:
    """The datasets (as :data:`DATASETS`) a ``fmt`` file of ``version`` holds; of a checkpoint
    from version 6 on only the feature datasets of ``features`` (None: all)."""
    optional = fmt == CHECKPOINT and version >= FEATURES_OPTIONAL_SINCE and features is not None
    out = {k: v for k, v in DATASETS[fmt].items()
           if (k not in SINCE or SINCE[k][0] != fmt or version >= SINCE[k][1])
           and not (optional and k in FEATURE_DATASETS and FEATURE_DATASETS[k] not in features)}
    if fmt == CHECKPOINT and version < RAGGED_SINCE:  # the history in slots
        slotted = "records/history_key" in out
        out = {k: v for k, v in out.items()
               if not k.startswith("records/") and k != "index/history_count"}
        if slotted:
            out.update(_SLOTTED)
    return out


def _features(f: h5py.File, fmt: str, version: int) -> tuple[str, ...]:
    """The store features whose datasets the open file ``f`` holds (a checkpoint of version
    6 on; older ones hold them all)."""
    if fmt != CHECKPOINT:
        return ()
    held = {x for k, x in FEATURE_DATASETS.items()
            if version < FEATURES_OPTIONAL_SINCE or isinstance(f.get(k), h5py.Dataset)}
    return tuple(sorted(held))


def _rows(key: str, n: int, walls: int, segments: int, contacts: int, records: int) -> int:
    if key.startswith("records/"):
        return records
    if key.startswith("index/"):
        return segments
    if key == "walls/quad_points":
        return 4 * walls
    if key == "contacts/points":
        return 2 * contacts
    if key.startswith("contacts/"):
        return contacts
    return walls if key.startswith("walls/") else n



def _check_structure(path: Path, f: h5py.File) -> dict:
    """The validated attributes of the open file ``f`` as plain values, plus ``format``,
    ``version`` and ``shapes`` (dataset -> shape); no data read."""
    fmt = f.attrs["format"]
    fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    head = {"format": fmt, "version": int(f.attrs["version"])}
    for name, check in list(ATTRIBUTES[fmt].items()) + list(OPTIONAL.items()):
        if name not in f.attrs:
            if name in OPTIONAL:
                continue
            raise OutputFileError(f"{path}: attribute {name!r} missing (not a complete "
                                  f"{fmt} file)")
        try:
            head[name] = check(f.attrs[name])
        except _Bad as why:
            raise OutputFileError(f"{path}: attribute {name} = {_short(f.attrs[name])}: {why} "
                                  "(damaged file)") from None
    if not (head["box_hi"] > head["box_lo"]).all():
        raise OutputFileError(f"{path}: attribute box_hi = {head['box_hi'].tolist()} does not "
                              f"exceed box_lo = {head['box_lo'].tolist()} (damaged file)")
    rows = head["rows_per_rank"]
    if len(rows) != head["ranks"] or rows.sum() != head["n_particles"]:
        raise OutputFileError(f"{path}: attribute rows_per_rank = {rows.tolist()} does not "
                              f"match ranks = {head['ranks']} and n_particles = "
                              f"{head['n_particles']} (damaged file)")
    walls = f["walls/id"].shape[0] if isinstance(f.get("walls/id"), h5py.Dataset) else 0
    segments = f["index/cell"].shape[0] if isinstance(f.get("index/cell"), h5py.Dataset) else 0
    head["features"] = _features(f, fmt, head["version"])
    datasets = expected(fmt, head["version"], head["features"])
    if "contacts/id" in datasets:
        try:
            head["n_contacts"] = _integer(f.attrs.get("n_contacts"))
        except _Bad as why:
            raise OutputFileError(f"{path}: attribute n_contacts = "
                                  f"{_short(f.attrs.get('n_contacts'))}: {why} (damaged file)"
                                  ) from None
    head["shapes"] = {}
    records = next((f[k].shape[0] for k in datasets if k.startswith("records/")
                    and isinstance(f.get(k), h5py.Dataset) and f[k].ndim), 0)
    for key, (kinds, tail) in datasets.items():
        ds = f.get(key)
        if not isinstance(ds, h5py.Dataset):
            raise OutputFileError(f"{path}: dataset {key!r} missing (not a complete {fmt} "
                                  "file)")
        want = (_rows(key, head["n_particles"], walls, segments, head.get("n_contacts", 0),
                      records),) + tail
        if ds.dtype.kind not in kinds or ds.shape != want:
            raise OutputFileError(f"{path}: dataset {key} is {ds.dtype} {ds.shape}, expected "
                                  f"{'integers' if kinds == 'i' else 'numbers'} of shape "
                                  f"{want} (damaged file)")
        head["shapes"][key] = ds.shape
    return head


def _short(value) -> str:
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def read_header(path, kind: str | tuple | None = None) -> dict:
    """The attributes of the pdyn file ``path`` as plain values, checked, with ``format``,
    ``version`` and ``shapes``; its datasets' presence, types and shapes are checked too but
    not read. ``kind`` as :func:`~pdyn.io.hdf5.open_pdyn`."""
    with open_pdyn(path, kind) as f:
        return _check_structure(Path(path), f)


def read_pdyn(path, kind: str | tuple | None = None, rows=None) -> tuple[dict, dict]:
    """(header, data) of the pdyn file ``path``: :func:`read_header` plus every dataset
    (``data["particles/position"]``, ...; ``exchange/*`` and ``index/*`` of checkpoints too),
    checksums and values checked. ``rows`` ([(start, stop)]) reads only those rows of the
    ``particles/*`` datasets (ids then unique among them)."""
    path = Path(path)
    with open_pdyn(path, kind) as f:
        head = _check_structure(path, f)
        keys = list(head["shapes"])
        if isinstance(f.get("exchange"), h5py.Group):
            keys += [f"exchange/{k}" for k in f["exchange"]]
        data = {k: read_dataset(f, k) for k in keys if k.startswith("index/")}
        ranges = _record_ranges(path, f, head, data, rows)
        for k in keys:
            if k.startswith("particles/"):
                data[k] = read_dataset(f, k, rows)
            elif k.startswith("records/"):
                data[k] = read_dataset(f, k, ranges[FIELDS[k.split("/", 1)[1]].counted_by])
            elif k not in data:
                data[k] = read_dataset(f, k)
    for key in FINITE:
        _values(path, key, data.get(key), np.isfinite, "not finite")
    for key in POSITIVE:
        _values(path, key, data.get(key), lambda a: np.isfinite(a) & (a > 0), "must be > 0")
    for key in IDS:
        ids = data.get(key)
        if ids is not None and len(np.unique(ids)) != len(ids):
            raise OutputFileError(f"{path}: {key} holds an id twice (damaged file)")
    if "index/cell" in data:
        _check_index(path, head, data)
    _check_records(path, head, data, rows)
    if "particles/rank" in data:
        _values(path, "particles/rank", data["particles/rank"],
                lambda a: (a >= 0) & (a < head["ranks"]), f"not a rank below {head['ranks']}")
    return head, data


def _record_ranges(path, f, head: dict, index: dict, rows) -> dict:
    """{count field: the record ranges of the particle ``rows``} of a checkpoint's ragged
    fields (None: all): from the records per index segment where the rows are whole segments
    (what a restart reads), else from the counts of every particle."""
    out = {}
    for c in ragged_groups(FIELDS):
        if f"index/{c}" not in index or rows is None:
            out[c] = None
            continue
        seg_start, seg_count = index["index/start"], index["index/count"]
        per_seg = index[f"index/{c}"]
        if per_seg.shape != seg_start.shape or (per_seg < 0).any():
            raise OutputFileError(f"{path}: index/{c} does not give a count >= 0 for each of "
                                  f"the {seg_start.size} index segments (damaged file)")
        rec_start = np.concatenate(([0], np.cumsum(per_seg)))
        ends = seg_start + seg_count
        cum = None
        ranges = []
        for a, b in rows:
            s0 = int(np.searchsorted(seg_start, a))
            s1 = int(np.searchsorted(ends, b))
            if (a < b and s0 < seg_start.size and s1 < ends.size and seg_start[s0] == a
                    and ends[s1] == b):
                ranges.append((int(rec_start[s0]), int(rec_start[s1 + 1])))
                continue
            if cum is None:  # rows that are not whole segments: from every particle's count
                counts = read_dataset(f, f"particles/{c}")
                if (counts < 0).any():
                    k = int(np.flatnonzero(counts < 0)[0])
                    raise OutputFileError(f"{path}: particles/{c}[{k}] = {int(counts[k])}: "
                                          "must be >= 0 (damaged file)")
                cum = np.concatenate(([0], np.cumsum(counts)))
            ranges.append((int(cum[a]), int(cum[b])))
        total = int(rec_start[-1])
        if any(not 0 <= x <= y <= total for x, y in ranges):
            raise OutputFileError(f"{path}: index/{c} does not match the records of the "
                                  "particles (damaged file)")
        out[c] = ranges
    return out


def _check_records(path, head: dict, data: dict, rows) -> None:
    """A ragged field's counts are >= 0 and add up to its records read (and, for the whole
    file, to the records per index segment)."""
    for c, names in ragged_groups(FIELDS).items():
        counts = data.get(f"particles/{c}")
        recs = data.get(f"records/{names[0]}")
        if counts is None or recs is None:
            continue
        _values(path, f"particles/{c}", counts, lambda a: a >= 0, "must be >= 0")
        if int(counts.sum()) != recs.shape[0]:
            raise OutputFileError(f"{path}: particles/{c} adds up to {int(counts.sum())} "
                                  f"records, records/{names[0]} holds {recs.shape[0]} "
                                  "(damaged file)")
        per_seg = data.get(f"index/{c}")
        if rows is None and per_seg is not None:
            start, count = data["index/start"], data["index/count"]
            sums = np.add.reduceat(counts, start) if count.all() and start.size else np.array(
                [counts[a:a + n].sum() for a, n in zip(start, count)], np.int64)
            if not np.array_equal(sums, per_seg):
                raise OutputFileError(f"{path}: index/{c} does not match particles/{c} "
                                      "(damaged file)")


def _values(path, key, values, good, why) -> None:
    if values is None or values.size == 0:
        return
    ok = good(values)
    if values.ndim > 1:
        ok = ok.all(axis=tuple(range(1, values.ndim)))
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        raise OutputFileError(f"{path}: {key}[{k}] = {_short(values[k].tolist())}: {why} "
                              "(damaged file)")


def _check_index(path, head: dict, data: dict) -> None:
    """A checkpoint's index: segments of rows (``start``, ``count``) in cells of its
    ``index_dims`` lattice, covering the rows exactly once in order."""
    cell, start, count = (data[f"index/{k}"] for k in ("cell", "start", "count"))
    ends = np.concatenate(([0], np.cumsum(count)))
    if ((count < 0).any() or ends[-1] != head["n_particles"] or not np.array_equal(start, ends[:-1])
            or (cell < 0).any() or (cell >= np.prod(head["index_dims"])).any()):
        raise OutputFileError(f"{path}: index/cell, index/start, index/count do not cover the "
                              f"{head['n_particles']} particles in order (damaged file)")
