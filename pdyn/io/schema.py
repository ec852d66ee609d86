"""What a pdyn snapshot and checkpoint must hold, and the strict reader that checks a file
against it before anything uses it (``pdyn info``, ``pdyn render``, restart, the XDMF index).

Checked, each problem one :class:`~pdyn.io.hdf5.OutputFileError` naming the file, the item and
its value: the kind and version (:func:`~pdyn.io.hdf5.open_pdyn`); every required attribute,
its type and range (``ATTRIBUTES``); every dataset, its type and shape, rows agreeing with
``n_particles`` (``DATASETS``); and, when the data are read, the checksums
(:func:`~pdyn.io.hdf5.read_dataset`) and the values: finite centres, velocities and forces,
radii and masses > 0, unique ids, ranks within ``ranks``, finite walls.

Every count and index a file holds is range-checked before anything uses it (a file with a
valid checksum can still be forged, and Fletcher-32 does not see a 16-bit word turn from 0 to
0xFFFF): ids within the run's ids, wall ids -1, -2, ...; row indices within the dataset they
index (``ROW_INDICES``); counts of used slots within the slots, the unused slots zero
(``COUNTED``, from the fields' ``counted_by``); keys valid (``KEYS``: the contact history's
partner keys, the one format-specific rule); the checkpoint's index covering the rows once,
per writing rank, on the lattice its size implies, each row in its cell; the exchange's block
→ rank map within the ranks; the insertion state's counts consistent with the ids.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import h5py
import numpy as np

from ..domain import BLOCKS_PER_RANK, BOUNDARIES, MAX_BLOCKS
from ..lattice import Lattice, lattice_dims
from ..particles import (FIELDS, FIXED, MAX_TRIANGLES, MESH_KEY_BASE, OWNED, WALL_KEY_BASE,
                         ragged_groups)
from ..values import (BadValue, choices, integer, integers, number, short, text,
                      vector)
from .hdf5 import CHECKPOINT, SNAPSHOT, OutputFileError, open_pdyn, read_dataset
from .runid import is_run_id

#: a checkpoint's index lattice: about one cell per ``INDEX_PARTICLES`` particles, at least
#: ``INDEX_CELLS`` (:func:`index_lattice`)
INDEX_PARTICLES = 512
INDEX_CELLS = 64


def _table(name, v) -> dict:
    try:
        out = json.loads(text(name, v))
    except json.JSONDecodeError as exc:
        raise BadValue(name, v, f"not JSON ({exc.msg})") from None
    if not isinstance(out, dict):
        raise BadValue(name, v, "expected a JSON object")
    return out


def _run_id(name, v) -> str:
    v = text(name, v)
    if not is_run_id(v):
        raise BadValue(name, v, "expected 32 hexadecimal digits")
    return v


def _count(name, v) -> int:
    return integer(name, v, lo=0)


def _amount(name, v) -> float:
    return number(name, v, lo=0)


_COMMON = {"run_id": _run_id, "step": _count, "time": _amount,
           "dt": lambda k, v: number(k, v, above=0), "ranks": lambda k, v: integer(k, v, lo=1),
           "n_particles": _count, "box_lo": lambda k, v: np.array(vector(k, v)),
           "box_hi": lambda k, v: np.array(vector(k, v)),
           "boundary": lambda k, v: choices(k, v, BOUNDARIES), "scene": text,
           "rows_per_rank": lambda k, v: integers(k, v, lo=0)}
#: format -> attribute -> check(name, value): the plain value, or raises ``BadValue``
ATTRIBUTES = {
    SNAPSHOT: _COMMON,
    CHECKPOINT: dict(_COMMON, config=_table, contact=_table,
                     gravity=lambda k, v: np.array(vector(k, v)), seed=_count,
                     steps_total=_count, exchange=_table, drift=_amount, r_mean=_amount,
                     index_dims=lambda k, v: integers(k, v, 3, lo=1)),
}
#: attributes read when present
OPTIONAL = {"pdyn_version": text, "insertion": _table, "servos": _table, "stages": _table,
            "changes": _table,
            "pressure_samples": _count}
#: attributes a format holds from a version on: name -> {format: first version}
ATTRIBUTES_SINCE = {"run_id": {SNAPSHOT: 6, CHECKPOINT: 7}}

_WALLS = {"walls/id": ("i", ()), "walls/point": ("f", (3,)), "walls/normal": ("f", (3,)),
          "walls/quad_points": ("f", (3,)), "walls/quads": ("i", (4,)),
          # every wall as triangles (pdyn.io.wallmesh): snapshots from version 7, checkpoints
          # from 8; before them a quadrilateral a wall
          "walls/vertices": ("f", (3,)), "walls/triangles": ("i", (3,)),
          "walls/triangle_wall": ("i", ())}
#: a checkpoint's meshes (from format 9, ``pdyn.io.checkpoint``): per mesh its wall id and
#: counts, then every mesh's vertices and its triangles (rows of its own vertices)
_MESHES = {"meshes/wall": ("i", ()), "meshes/vertex_count": ("i", ()),
           "meshes/triangle_count": ("i", ()), "meshes/vertices": ("f", (3,)),
           "meshes/triangles": ("i", (3,))}
MESHES_SINCE = 9
#: format -> dataset -> (dtype kinds, shape after the row count)
DATASETS = {
    SNAPSHOT: dict({"particles/id": ("i", ()), "particles/position": ("f", (3,)),
                    "particles/velocity": ("f", (3,)), "particles/radius": ("f", ()),
                    "particles/rank": ("i", ()), "particles/angular_velocity": ("f", (3,)),
                    "particles/material": ("u", ()),
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
                        if FIELDS[names[0]].checkpoint}, **_MESHES),
}
#: datasets a file may hold (read and checked when present): the per-sphere stress of
#: snapshots (``[output] sphere_stress``, ``pdyn.fields.sphere``)
OPTIONAL_DATASETS = {SNAPSHOT: {"particles/stress": ("f", (6,)),
                                "particles/coordination": ("i", ()),
                                "particles/contact_force": ("f", ()),
                                # wall pressure maps (``[output] wall_pressure``,
                                # pdyn.io.wallpressure): rows the patch vertices, or triangles
                                "walls/pressure/vertices": ("f", (3,)),
                                "walls/pressure/triangles": ("i", (3,)),
                                "walls/pressure/wall": ("i", ()),
                                "walls/pressure/patch": ("i", ()),
                                "walls/pressure/area": ("f", ()),
                                "walls/pressure/normal_stress": ("f", ()),
                                "walls/pressure/shear_stress": ("f", (3,))}}
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
          "particles/force", "particles/build_pos", "particles/angular_velocity",
          "particles/omega", "particles/torque", "particles/history_spring",
          "records/history_spring", "walls/point", "walls/normal", "walls/quad_points",
          "walls/vertices", "meshes/vertices", "particles/anchor",
          "contacts/points", "contacts/force", "contacts/normal_force",
          "contacts/tangential_force", "particles/stress", "particles/contact_force",
          "walls/pressure/vertices", "walls/pressure/area", "walls/pressure/normal_stress",
          "walls/pressure/shear_stress")
POSITIVE = ("particles/radius", "particles/mass")
IDS = ("particles/id", "particles/gid")
#: datasets a format holds from a version on: name -> {format: first version}
SINCE = {"particles/angular_velocity": {SNAPSHOT: 4},
         **{k: {SNAPSHOT: 5} for k in DATASETS[SNAPSHOT] if k.startswith("contacts/")},
         **{f"walls/{k}": {SNAPSHOT: 7, CHECKPOINT: 8}
            for k in ("vertices", "triangles", "triangle_wall")},
         **{f"particles/{k}": {CHECKPOINT: 8} for k in ("glued", "anchor")},
         # each sphere's material index (pdyn.dynamics.materials): older files, all 0
         "particles/material": {SNAPSHOT: 8, CHECKPOINT: 10},
         **{k: {CHECKPOINT: MESHES_SINCE} for k in _MESHES}}
#: datasets a format holds before a version: name -> {format: the first version without it}
UNTIL = {f"walls/{k}": {SNAPSHOT: 7, CHECKPOINT: 8} for k in ("quad_points", "quads")}
#: checkpoint datasets of a feature of the store (``pdyn.particles.FIELDS``): from checkpoint
#: version 6 on present only when the run had the feature, all of a feature or none
FEATURE_DATASETS = {k: FIELDS[k.rsplit("/", 1)[1]].feature for k in DATASETS[CHECKPOINT]
                    if k.split("/")[0] in ("particles", "records", "index")
                    and k.rsplit("/", 1)[1] in FIELDS
                    and FIELDS[k.rsplit("/", 1)[1]].feature}
FEATURES_OPTIONAL_SINCE = 6

#: datasets of row indices into another dataset: every value within that dataset's rows
ROW_INDICES = {"contacts/lines": "contacts/points", "walls/quads": "walls/quad_points",
               "walls/triangles": "walls/vertices",
               "walls/pressure/triangles": "walls/pressure/vertices"}
#: datasets of slots -> the dataset counting the used ones (``Field.counted_by``): every
#: count within [0, slots], the slots from the count on zero
COUNTED = {f"particles/{k}": f"particles/{f.counted_by}" for k, f in FIELDS.items()
           if f.counted_by}
#: the contact history's partner key of a wall with id g < 0 is ``HISTORY_WALL_KEY_BASE - g``,
#: of a sphere with id g >= 0 ``g + 1`` (``pdyn.particles.partner_key``), of triangle f of a
#: mesh wall ``MESH_KEY_BASE + 1 + f`` (``pdyn.particles.entry_key``)
HISTORY_WALL_KEY_BASE = WALL_KEY_BASE


def index_lattice(box_lo, box_hi, n: int) -> Lattice:
    """The index lattice of a checkpoint of ``n`` particles in the box (about one cell per
    ``INDEX_PARTICLES`` particles, at least ``INDEX_CELLS``)."""
    length = np.asarray(box_hi, float) - np.asarray(box_lo, float)
    return Lattice.over(box_lo, box_hi,
                        lattice_dims(length, max(INDEX_CELLS, n // INDEX_PARTICLES)))


def expected(fmt: str, version: int, features=None) -> dict:
    """The datasets (as :data:`DATASETS`) a ``fmt`` file of ``version`` holds; of a checkpoint
    from version 6 on only the feature datasets of ``features`` (None: all)."""
    optional = fmt == CHECKPOINT and version >= FEATURES_OPTIONAL_SINCE and features is not None
    out = {k: v for k, v in DATASETS[fmt].items()
           if version >= SINCE.get(k, {}).get(fmt, 0)
           and version < UNTIL.get(k, {}).get(fmt, version + 1)
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
    known = expected(fmt, version)  # a feature's datasets from the version that has them
    held = {x for k, x in FEATURE_DATASETS.items() if k in known and (
        version < FEATURES_OPTIONAL_SINCE or isinstance(f.get(k), h5py.Dataset))}
    return tuple(sorted(held))


def _rows(key: str, n: int, walls: int, segments: int, contacts: int, records: int,
          mesh: tuple = (0, 0), meshes: tuple = (0, 0, 0), pressure: tuple = (0, 0)) -> int:
    if key.startswith("walls/pressure/"):  # (vertices, triangles) as the file holds them
        return pressure[key != "walls/pressure/vertices"]
    if key in ("walls/vertices", "walls/triangles", "walls/triangle_wall"):
        return mesh[key != "walls/vertices"]  # (vertices, triangles) as the file holds them
    if key.startswith("meshes/"):  # (meshes, vertices, triangles) as the file holds them
        return meshes[1] if key == "meshes/vertices" else meshes[2] \
            if key == "meshes/triangles" else meshes[0]
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
            if name in OPTIONAL or head["version"] < ATTRIBUTES_SINCE.get(name, {}).get(fmt, 0):
                continue
            raise OutputFileError(f"{path}: attribute {name!r} missing (not a complete "
                                  f"{fmt} file)")
        try:
            head[name] = check(name, f.attrs[name])
        except BadValue as exc:
            raise OutputFileError(f"{path}: attribute {exc} (damaged file)") from None
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
    datasets.update({k: v for k, v in OPTIONAL_DATASETS.get(fmt, {}).items()
                     if isinstance(f.get(k), h5py.Dataset)})
    if "contacts/id" in datasets:
        try:
            head["n_contacts"] = _count("n_contacts", f.attrs.get("n_contacts"))
        except BadValue as exc:
            raise OutputFileError(f"{path}: attribute {exc} (damaged file)") from None
    head["shapes"] = {}
    records = next((f[k].shape[0] for k in datasets if k.startswith("records/")
                    and isinstance(f.get(k), h5py.Dataset) and f[k].ndim), 0)
    mesh, meshes, pressure = (
        tuple(f[k].shape[0] if isinstance(f.get(k), h5py.Dataset) and f[k].ndim else 0
              for k in keys)
        for keys in (("walls/vertices", "walls/triangles"),
                     ("meshes/wall", "meshes/vertices", "meshes/triangles"),
                     ("walls/pressure/vertices", "walls/pressure/triangles")))
    for key, (kinds, tail) in datasets.items():
        ds = f.get(key)
        if not isinstance(ds, h5py.Dataset):
            raise OutputFileError(f"{path}: dataset {key!r} missing (not a complete {fmt} "
                                  "file)")
        want = (_rows(key, head["n_particles"], walls, segments, head.get("n_contacts", 0),
                      records, mesh, meshes, pressure),) + tail
        if ds.dtype.kind not in kinds or ds.shape != want:
            raise OutputFileError(f"{path}: dataset {key} is {ds.dtype} {ds.shape}, expected "
                                  f"{'integers' if kinds == 'i' else 'numbers'} of shape "
                                  f"{want} (damaged file)")
        head["shapes"][key] = ds.shape
    return head


#: format -> the first version whose datasets carry Fletcher-32 checksums
CHECKSUMS_SINCE = {SNAPSHOT: 3, CHECKPOINT: 2}


def unchecked(path, kind: str | tuple | None = None) -> list[str]:
    """The datasets of the pdyn file ``path`` that carry no Fletcher-32 checksum although
    their version writes one, so their data cannot be verified (a file rewritten by another
    tool, say); a virtual dataset is looked at in its per-rank pieces (each opened once).
    Checked as :func:`read_header`."""
    path = Path(path)
    with open_pdyn(path, kind) as f:
        head = _check_structure(path, f)
        if head["version"] < CHECKSUMS_SINCE[head["format"]]:
            return []
        pieces: dict = {}
        out = []
        try:
            for key in head["shapes"]:
                ds = f[key]
                if not ds.is_virtual:
                    ok = bool(ds.fletcher32)
                else:
                    ok = True
                    for s in ds.virtual_sources():
                        if s.file_name not in pieces:
                            pieces[s.file_name] = h5py.File(path.parent / s.file_name, "r")
                        ok &= bool(pieces[s.file_name][s.dset_name].fletcher32)
                if not ok:
                    out.append(key)
        except (OSError, KeyError) as exc:
            raise OutputFileError(f"{path}: cannot read its per-rank pieces ({exc})") from None
        finally:
            for piece in pieces.values():
                piece.close()
    return out


def unchecked_note(path, kind: str | tuple | None = None) -> str | None:
    """A note naming the datasets of ``path`` read without a checksum (:func:`unchecked`),
    or None."""
    keys = unchecked(path, kind)
    if not keys:
        return None
    return (f"pdyn: note: {path}: {len(keys)} dataset(s) without a Fletcher-32 checksum, so "
            f"their data cannot be verified: {', '.join(keys)}")


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
    # messages name a particle's row in the file, also when only some rows were read
    at = None if rows is None else _row_ids(rows, head["n_particles"])
    for key in FINITE:
        _values(path, key, data.get(key), np.isfinite, "not finite", _at(key, at))
    for key in POSITIVE:
        _values(path, key, data.get(key), lambda a: np.isfinite(a) & (a > 0), "must be > 0",
                _at(key, at))
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
    _check_indices(path, head, data, rows, at)
    return head, data


def _record_ranges(path, f, head: dict, index: dict, rows) -> dict:
    """{count field: the record ranges of the particle ``rows``} of a checkpoint's ragged
    fields (None: all): from the records per index segment where the rows are whole segments
    (what a restart reads), else from the counts of every particle."""
    out = {}
    for c, names in ragged_groups(FIELDS).items():
        if f"index/{c}" not in index:
            out[c] = None
            continue
        held = f[f"records/{names[0]}"].shape[0]
        if int(index[f"index/{c}"].sum()) != held:
            raise OutputFileError(f"{path}: index/{c} does not match the {held} records of "
                                  f"records/{names[0]} (damaged file)")
        if rows is None:
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


def _at(key: str, at):
    """The file rows of the particle rows read (``at``), for a ``particles/*`` dataset."""
    return at if key.startswith("particles/") else None


def _values(path, key, values, good, why, at=None) -> None:
    """Raise naming the first row of ``values`` (its row in the file: ``at[k]``) where
    ``good`` is not True."""
    if values is None or values.size == 0:
        return
    ok = good(values)
    if ok.ndim > 1:
        ok = ok.all(axis=tuple(range(1, ok.ndim)))
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        row = k if at is None else int(at[k])
        raise OutputFileError(f"{path}: {key}[{row}] = {short(values[k].tolist())}: {why} "
                              "(damaged file)")


def _check_index(path, head: dict, data: dict) -> None:
    """A checkpoint's index: segments of rows (``start``, ``count``) in cells of its
    ``index_dims`` lattice — the lattice :func:`index_lattice` gives for its box and particle
    count —, covering the rows exactly once in order, no segment across two writing ranks."""
    cell, start, count = (data[f"index/{k}"] for k in ("cell", "start", "count"))
    want = index_lattice(head["box_lo"], head["box_hi"], head["n_particles"]).dims
    if not np.array_equal(head["index_dims"], want):
        raise OutputFileError(f"{path}: attribute index_dims = {head['index_dims'].tolist()}: "
                              f"a checkpoint of {head['n_particles']} particles in its box has "
                              f"an index of {want.tolist()} cells (damaged file)")
    ends = np.concatenate(([0], np.cumsum(count)))
    rank_ends = np.cumsum(head["rows_per_rank"])[:-1]
    if ((count < 0).any() or ends[-1] != head["n_particles"] or not np.array_equal(start, ends[:-1])
            or (cell < 0).any() or (cell >= np.prod(head["index_dims"])).any()
            or not np.isin(rank_ends[rank_ends < ends[-1]], start).all()):
        raise OutputFileError(f"{path}: index/cell, index/start, index/count do not cover the "
                              f"{head['n_particles']} particles in order (damaged file)")


def _row_ids(rows, n: int) -> np.ndarray:
    """The row numbers read: all ``n`` (``rows`` None) or the ranges ``rows``."""
    if rows is None:
        return np.arange(n, dtype=np.int64)
    parts = [np.arange(a, b, dtype=np.int64) for a, b in rows]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _check_indices(path, head: dict, data: dict, rows, at) -> None:
    """Every count and index read (module docstring), before anything uses them; ``rows``:
    the particle rows read (None: all), ``at`` their rows in the file (None: the same)."""
    n_walls = head["shapes"].get("walls/id", (0,))[0]
    walls = data.get("walls/id")
    if walls is not None and not np.array_equal(walls, -1 - np.arange(n_walls)):
        raise OutputFileError(f"{path}: walls/id = {short(walls)}: expected the wall ids -1, "
                              "-2, ... in order (damaged file)")
    for key, target in ROW_INDICES.items():
        if key in data:
            n = head["shapes"][target][0]
            _values(path, key, data[key], lambda a: (a >= 0) & (a < n),
                    f"not a row of {target} (0 to {n - 1})")
    for key in ("walls/triangle_wall", "walls/pressure/wall"):
        if key in data:
            _values(path, key, data[key], lambda a: (a < 0) & (a >= -n_walls),
                    f"not one of the {n_walls} walls")
    if "walls/pressure/patch" in data:
        _values(path, "walls/pressure/patch", data["walls/pressure/patch"], lambda a: a >= 0,
                "patch numbers are >= 0")
    if head["format"] == SNAPSHOT:
        _values(path, "particles/id", data["particles/id"], lambda a: a >= 0, "ids are >= 0")
        if "contacts/id" in data:
            _values(path, "contacts/id", data["contacts/id"],
                    lambda a: (a[:, :1] >= 0) & (a[:, 1:] >= -n_walls) & (a[:, 1:] != a[:, :1]),
                    f"not a sphere and a sphere or one of the {n_walls} walls")
        return
    bound = _id_bound(path, head)
    _values(path, "particles/gid", data["particles/gid"], lambda a: (a >= 0) & (a < bound),
            f"not an id of this run (0 to {bound - 1})", at)
    _values(path, "particles/flags", data["particles/flags"],
            lambda a: ((a & OWNED) != 0) & ((a & ~np.uint8(OWNED | FIXED)) == 0),
            "not the flags of an owned sphere", at)
    if "particles/glued" in data:  # a glued sphere: fixed, moving with one of the walls
        fixed = (data["particles/flags"] & FIXED) != 0
        _values(path, "particles/glued", data["particles/glued"],
                lambda a: (a == 0) | ((a >= -n_walls) & (a < 0) & fixed),
                f"not 0 or the id of one of the {n_walls} walls (of a fixed sphere)", at)
    for key, counter in COUNTED.items():
        if key in data:
            _check_counted(path, key, data[key], counter, data[counter], at)
    n_triangles = _check_meshes(path, data, n_walls)
    for key, check in KEYS.items():
        if key in data:
            check(path, key, data, (bound, n_walls, n_triangles), at)
    if len(data["particles/pos"]):
        d = data["particles/pos"] - data["particles/build_pos"]
        moved = float(np.sqrt((d * d).sum(axis=1).max()))
        if moved > head["drift"]:
            raise OutputFileError(f"{path}: attribute drift = {head['drift']!r}: a particle "
                                  f"moved {moved!r} m since the last rebuild (damaged file)")
        lattice = Lattice.over(head["box_lo"], head["box_hi"], head["index_dims"])
        seg = np.searchsorted(data["index/start"], _row_ids(rows, head["n_particles"]),
                              side="right") - 1
        _values(path, "particles/pos", data["particles/pos"],
                lambda a: lattice.cell_of(a) == data["index/cell"][seg],
                "not in the index cell of its row", at)
    _check_exchange(path, head, data)


def _id_bound(path, head: dict) -> int:
    """One more than the largest id a checkpoint may hold: the next id the insertion gives
    (its state checked here), else the particle count (ids are 0 … n − 1 without
    insertion)."""
    ins = head.get("insertion")
    if ins is None:
        return head["n_particles"]

    def bad(what, why):
        raise OutputFileError(f"{path}: attribute insertion: {what}: {why} (damaged file)")

    if set(ins) != {"params", "state"} or not isinstance(ins["state"], dict) \
            or not isinstance(ins["params"], (dict, list)):  # a list: [[insertion]]
        bad(short(json.dumps(ins)), "expected the tables params and state")
    state = ins["state"]
    counts = {}
    for key in ("inserted", "removed", "next_gid"):
        try:
            counts[key] = _count(f"state.{key}", state.get(key))
        except BadValue as exc:
            bad(f"state.{key} = {short(exc.value)}", exc.why)
    _check_stream(bad, "state.rng", state.get("rng"))
    mass = state.get("removed_mass", 0.0)  # (optional: older files lack it)
    if isinstance(mass, bool) or not isinstance(mass, (int, float)) \
            or not (math.isfinite(mass) and mass >= 0):
        bad(f"state.removed_mass = {short(mass)}", "expected a finite mass >= 0 (kg)")
    feeds = state.get("feeds")
    if feeds is not None:  # several [[insertion]] tables, or one with sizes: one state each
        tables = ins["params"] if isinstance(ins["params"], list) else [ins["params"]]
        if not isinstance(feeds, list) or len(feeds) != len(tables) \
                or not all(isinstance(f, dict) for f in feeds):
            bad(f"state.feeds = {short(feeds)}", f"expected {len(tables)} tables")
        for k, feed in enumerate(feeds):
            _check_stream(bad, f"state.feeds[{k}].rng", feed.get("rng"))
            try:
                _count(f"state.feeds[{k}].inserted", feed.get("inserted"))
            except BadValue as exc:
                bad(f"state.feeds[{k}].inserted = {short(exc.value)}", exc.why)
            pending = feed.get("pending", [])
            if not isinstance(pending, list) or not all(
                    isinstance(r, (int, float)) and math.isfinite(r) and r > 0 for r in pending):
                bad(f"state.feeds[{k}].pending = {short(pending)}",
                    "expected a list of finite positive radii")
    if counts["next_gid"] - counts["removed"] != head["n_particles"] \
            or counts["inserted"] > counts["next_gid"]:
        bad(f"state.next_gid = {counts['next_gid']}, state.removed = {counts['removed']}",
            f"the ids given less those removed must be the {head['n_particles']} particles held")
    return counts["next_gid"]


def _check_stream(bad, what: str, value) -> None:
    """``value`` must be the state of a PCG64 random stream (``bad(what, why)`` else)."""
    try:
        np.random.PCG64().state = value
    except (TypeError, ValueError, KeyError, AttributeError):
        bad(f"{what} = {short(value)}", "not the state of a PCG64 random stream")


def _check_counted(path, key: str, values, counter: str, counts, at=None) -> None:
    """``counts`` of used slots within [0, slots of ``values``]; the slots from the count on
    are zero (nothing reads them, and bit-identical runs compare them)."""
    slots = values.shape[1]
    _values(path, counter, counts, lambda a: (a >= 0) & (a <= slots),
            f"not a count of 0 to {slots} slots", at)
    used = np.arange(slots) < counts[:, None]
    width = int(np.prod(values.shape[2:], dtype=np.int64))
    empty = (values.reshape(len(values), slots, width) == 0).all(axis=2)
    _slots(path, key, values, used | empty,
           lambda i, k: f"slot {k} is not empty, but {counter} = {counts[i]}", at)


def _slots(path, key: str, values, ok, why, at=None) -> None:
    """Raise naming the first slot (row i — in the file ``at[i]`` —, slot k) of ``values``
    where ``ok`` is False and ``why(i, k)``."""
    if not ok.all():
        i, k = (int(x) for x in np.argwhere(~ok)[0])
        row = i if at is None else int(at[i])
        raise OutputFileError(f"{path}: {key}[{row}, {k}] = {short(values[i, k].tolist())}: "
                              f"{why(i, k)} (damaged file)")


def _check_meshes(path, data: dict, n_walls: int) -> int | None:
    """A checkpoint's meshes (format 9): each a wall's, in wall order, its counts adding up
    to the vertices and triangles held, each triangle three rows of its own mesh's vertices.
    Returns the triangles of all meshes (None: a checkpoint before format 9)."""
    if "meshes/wall" not in data:
        return None
    wall, nv, nt = (data[f"meshes/{k}"] for k in ("wall", "vertex_count", "triangle_count"))
    _values(path, "meshes/wall", wall, lambda a: (a < 0) & (a >= -n_walls),
            f"not one of the {n_walls} walls")
    if (np.diff(wall) >= 0).any():
        raise OutputFileError(f"{path}: meshes/wall = {short(wall.tolist())}: not in wall "
                              "order -1, -2, ... (damaged file)")
    for count, counts, key in (("vertex_count", nv, "vertices"),
                               ("triangle_count", nt, "triangles")):
        _values(path, f"meshes/{count}", counts, lambda a: a > 0, "must be > 0")
        held = data[f"meshes/{key}"].shape[0]
        if int(counts.sum()) != held:
            raise OutputFileError(f"{path}: meshes/{count} adds up to {int(counts.sum())}, "
                                  f"meshes/{key} holds {held} (damaged file)")
    per_row = np.repeat(nv, nt)[:, None]
    _values(path, "meshes/triangles", data["meshes/triangles"],
            lambda a: (a >= 0) & (a < per_row), "not a row of its own mesh's vertices")
    return int(nt.sum())


def _valid_keys(keys, own, limits: tuple) -> np.ndarray:
    """Which contact-history ``keys`` are another sphere's (not ``own``, the particle's
    key) of this run, a wall's or a mesh triangle's; ``limits``: (one more than the largest
    id, walls, triangles of the meshes — None: any up to ``MAX_TRIANGLES``)."""
    bound, n_walls, n_triangles = limits
    triangles = MAX_TRIANGLES if n_triangles is None else n_triangles
    return (((keys >= 1) & (keys <= bound) & (keys != own))
            | ((keys > HISTORY_WALL_KEY_BASE) & (keys <= HISTORY_WALL_KEY_BASE + n_walls))
            | ((keys > MESH_KEY_BASE) & (keys <= MESH_KEY_BASE + triangles)))


def _key_why(limits: tuple) -> str:
    return ("not a key of another sphere of this run or of a wall"
            + ("" if limits[2] is None else f" or of the {limits[2]} mesh triangles"))


def _history_keys(path, key: str, data: dict, limits: tuple, at=None) -> None:
    """The contact history's keys (``HISTORY_WALL_KEY_BASE``): in the used slots a sphere of
    this run (not the particle itself) or one of the walls, strictly ascending."""
    keys = data[key]
    used = np.arange(keys.shape[1]) < data[COUNTED[key]][:, None]
    valid = _valid_keys(keys, (data["particles/gid"] + 1)[:, None], limits)
    rising = np.ones_like(used)
    rising[:, 1:] = keys[:, 1:] > keys[:, :-1]
    _slots(path, key, keys, ~used | (valid & rising),
           lambda i, k: _key_why(limits) if not valid[i, k] else "keys must ascend", at)


def _record_keys(path, key: str, data: dict, limits: tuple, at=None) -> None:
    """The contact history's records (format 7): each key a sphere of this run (not the
    particle itself), one of the walls or a triangle of the meshes (format 9: of the meshes
    the file holds), strictly ascending within a particle's records."""
    keys = data[key]
    counts = data["particles/history_count"]
    valid = _valid_keys(keys, np.repeat(data["particles/gid"] + 1, counts), limits)
    first = np.zeros(keys.shape[0], bool)
    first[(np.cumsum(counts) - counts)[counts > 0]] = True
    rising = np.ones(keys.shape[0], bool)
    rising[1:] = keys[1:] > keys[:-1]
    _values(path, key, keys, lambda a: valid, _key_why(limits))
    _values(path, key, keys, lambda a: rising | first, "keys must ascend within a particle")


#: datasets of keys -> their check (path, key, data, (id bound, walls, mesh triangles), file
#: rows): the contact
#: history's (slots before format 7, records from it)
KEYS = {"particles/history_key": _history_keys, "records/history_key": _record_keys}


def _deformed(head: dict, ex: dict) -> None:
    """A deforming box's state (``BlockExchange.state``): its ``hi`` the file's ``box_hi``,
    finite strain ``rate``s, positive ``built_length``s and ``reach``, finite offsets."""
    hi = np.array(vector("hi", ex["hi"]))
    if not np.array_equal(hi, head["box_hi"]):
        raise BadValue("hi", ex["hi"], f"not the file's box_hi = {head['box_hi'].tolist()}")
    vector("rate", ex.get("rate"))
    if not (np.array(vector("built_length", ex.get("built_length"))) > 0).all():
        raise BadValue("built_length", ex.get("built_length"), "must be > 0")
    number("reach", ex.get("reach"), above=0)
    for name in ("offset", "built_offset"):
        if name in ex:
            number(name, ex[name])


def _check_exchange(path, head: dict, data: dict) -> None:
    """The exchange's state: its kind, ranks (the file's), skin, block grid (at most as many
    blocks as any run may have) and block → rank map (every block a rank's, every rank at
    least one block), the steps of its last balance check and (a sheared box) its last
    rebuild, not after the file's step."""
    ex = head["exchange"]
    try:
        kind = ex.get("kind")
        if kind not in ("serial", "block"):
            raise BadValue("kind", kind, "expected 'serial' or 'block'")
        ranks = integer("ranks", ex.get("ranks"), lo=1)
        if ranks != head["ranks"]:
            raise BadValue("ranks", ranks, f"not the file's ranks = {head['ranks']}")
        # the lists are rebuilt when a particle has moved half the skin since the last build
        skin = _amount("skin", ex.get("skin"))
        if head["drift"] > 0.5 * skin * (1.0 + 1e-9):
            raise BadValue("skin", ex.get("skin"),
                           f"less than twice the attribute drift = {head['drift']!r}")
        if kind == "serial":
            if ranks != 1:
                raise BadValue("ranks", ranks, "a serial exchange has one rank")
            return
        dims = integers("dims", ex.get("dims"), 3, lo=1)
        blocks = int(np.prod(dims))
        if not ranks <= blocks <= max(BLOCKS_PER_RANK * ranks, MAX_BLOCKS):
            raise BadValue("dims", ex.get("dims"), f"{blocks} blocks for {ranks} ranks")
        for name in ("balanced_at", "built_at"):  # (built_at: a sheared box's last rebuild)
            if _count(name, ex.get(name, 0)) > head["step"]:
                raise BadValue(name, ex.get(name), f"after the step {head['step']}")
        if "hi" in ex:  # a box that follows a target pressure
            _deformed(head, ex)
    except BadValue as exc:
        raise OutputFileError(f"{path}: attribute exchange: {exc} (damaged file)") from None
    owner = data.get("exchange/owner")
    if (owner is None or owner.dtype.kind not in "iu" or owner.shape != (blocks,)
            or (owner < 0).any() or (owner >= ranks).any()
            or len(np.unique(owner)) != ranks):
        raise OutputFileError(f"{path}: exchange/owner is not a map of the {blocks} blocks to "
                              f"the {ranks} ranks (damaged file)")
