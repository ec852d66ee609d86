"""Reading is as strict as writing: every kind of damaged, foreign or incomplete file given to
``pdyn info``, ``pdyn render`` and ``pdyn run --restart`` is one line on stderr naming the file
and what is wrong with it, exit code 2, nothing written. Damaged data are caught by the
Fletcher-32 checksums every dataset carries."""

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from pdyn.config import (BoxConfig, ContactConfig, InsertionConfig, OutputConfig,
                         ParticlesConfig, SimulationConfig)
from pdyn.io import read_checkpoint, read_snapshot
from pdyn.io.hdf5 import CHECKPOINT, SNAPSHOT, VERSIONS, OutputFileError
from pdyn.io.schema import ATTRIBUTES, FEATURE_DATASETS, expected
from pdyn.mesh import grid_surface
from pdyn.particles import GLUED as GLUED_FEATURE
from pdyn.particles import MESH_KEY_BASE
from pdyn.restart import absent_partner, refusal
from pdyn.scenarios import drum
from pdyn.simulation import Simulation
from pdyn.stl import write_stl

from ..conftest import assert_user_error, listing
from ..lanes import fast_first, fast_first_each

KINDS = {SNAPSHOT: 0, CHECKPOINT: 1}
COMMANDS = {SNAPSHOT: ("info", "render"), CHECKPOINT: ("info", "render", "restart")}
ROTATING = "rotating"  # the checkpoint of a run with friction (rotation datasets present)
BLOCKS = "blocks"  # a periodic run's checkpoint: a block exchange with its block -> rank map
POURING = "pouring"  # a checkpoint of a run pouring spheres in (the insertion state)
GLUED = "glued"  # a checkpoint of the rough drum (spheres glued to its wall)
MESH = "mesh"  # a checkpoint of spheres resting on an STL plate, with friction


def plate_on_stl(folder: Path) -> SimulationConfig:
    """20 spheres (r 4 mm) resting on a plate of 32 triangles from an STL file in mm (written
    into ``folder``), with friction: each has a mesh triangle in its contact history."""
    v, t = grid_surface(4, 40.0)
    write_stl(folder / "plate.stl", v[t].astype(np.float32))
    x, y = np.meshgrid(np.linspace(-0.02, 0.02, 5), np.linspace(-0.015, 0.015, 4))
    pos = np.column_stack((x.ravel(), y.ravel(), np.full(x.size, 0.004 * 0.998)))
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=np.zeros_like(pos),
                                  radii=np.full(len(pos), 0.004), density=2500.0),
        box=BoxConfig(lo=(-0.05, -0.05, -0.01), hi=(0.05, 0.05, 0.05),
                      boundary=("wall", "wall", "open")),
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.5, friction=0.5),
        walls=[{"type": "mesh", "file": str(folder / "plate.stl"), "scale": 0.001}],
        gravity=(0.0, 0.0, -9.81), progress=False)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A snapshot and a checkpoint of a short run (50 spheres), and checkpoints of the same
    run with friction (in contact: the snapshot has contacts, the checkpoint contact
    history), of a periodic run, of a pouring run, of the rough drum (glued spheres) and of
    spheres on an STL plate (its file deleted after the run: nothing reads it again)."""
    out = {}
    pour = InsertionConfig(region_lo=(0.3, 0.3, 0.5), region_hi=(2.2, 2.2, 1.5), rate=1000.0,
                           radius_min=0.08, radius_max=0.12, total=60, every=10,
                           velocity=(0.0, 0.0, -3.0), outlet_lo=(0, 0, 0),
                           outlet_hi=(2.4, 2.4, 0.3))
    for name, cfg, steps in (
            (CHECKPOINT, SimulationConfig(scale=0.05), 10),
            (ROTATING, SimulationConfig(scale=0.05, contact=ContactConfig(friction=0.5)), 250),
            (BLOCKS, SimulationConfig(scene="gas", scale=0.001), 10),
            (POURING, SimulationConfig(scene="heap", scale=0.03, insertion=pour), 300),
            (GLUED, SimulationConfig(scene="drum"), 4)):
        folder = tmp_path_factory.mktemp("good")
        cfg = cfg.with_(progress=False, output=OutputConfig(
            folder=str(folder), snapshot_every=steps if name == ROTATING else 0,
            checkpoint_every=steps))
        Simulation(cfg, scene=drum(scale=1 / 3, rough=True) if name == GLUED else None).run(steps)
        out[name] = folder / "checkpoints" / f"ckpt_{steps:08d}.h5"
        if name == ROTATING:
            out[SNAPSHOT] = folder / "snapshots" / f"snap_{steps:08d}.h5"
    folder = tmp_path_factory.mktemp("good")
    cfg = plate_on_stl(folder).with_(output=OutputConfig(folder=str(folder),
                                                         checkpoint_every=10))
    Simulation(cfg).run(10)
    (folder / "plate.stl").unlink()
    out[MESH] = folder / "checkpoints" / "ckpt_00000010.h5"
    return out


def _edit(path, change):
    with h5py.File(path, "r+") as f:
        change(f)


def _set_attr(name, value):
    return lambda f: f.attrs.__setitem__(name, value)


def _del_attr(name):
    return lambda f: f.attrs.__delitem__(name)


def _replace(key, value):
    def change(f):
        del f[key]
        f[key] = value
    return change


def _flip_bit(path, key="particles/position"):
    with h5py.File(path, "r") as f:
        key = key if key in f else "particles/pos"
        info = f[key].id.get_chunk_info(0)
    at = info.byte_offset + info.size // 2
    with open(path, "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)[0]
        fh.seek(at)
        fh.write(bytes([byte ^ 0x10]))


def _make(tmp_path, good, kind, damage):
    """A copy of the good file of ``kind`` (or the ``ROTATING`` checkpoint) damaged by
    ``damage(path)``."""
    path = tmp_path / good[kind].name
    shutil.copy(good[kind], path)
    damage(path)
    return path


def _args(command, path):
    return {"info": ["info", path], "render": ["render", path, "-o", "pic.png"],
            "restart": ["run", "--restart", path, "--steps", "1", "--no-progress"]}[command]


def _check(cli, tmp_path, command, path, *needles):
    before = listing(tmp_path)
    code, _, err = cli(_args(command, path.name))
    assert_user_error(code, err, path.name, *needles)
    assert listing(tmp_path) == before


def _position(kind):
    return "particles/position" if kind == SNAPSHOT else "particles/pos"


def _shape_cases(kind):
    pos = _position(kind)
    ident = "particles/id" if kind == SNAPSHOT else "particles/gid"
    return {
        "truncated": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
                      "truncated"),
        "text": (lambda p: p.write_text("not hdf5 at all\n"), "cannot open as HDF5"),
        "empty": (lambda p: p.write_bytes(b""), "cannot open as HDF5"),
        "foreign HDF5": (lambda p: p.write_bytes(_foreign(p)), "not a pdyn"),
        "version 99": (lambda p: _edit(p, _set_attr("version", 99)), "version 99"),
        "version text": (lambda p: _edit(p, _set_attr("version", "three")), "version 'three'"),
        "per-rank piece": (lambda p: _edit(p, lambda f: (f.attrs.__delitem__("format"),
                                                         f.attrs.__setitem__("master", "x.h5"))),
                           "per-rank piece"),
        "missing piece": (lambda p: _edit(p, _set_attr("pieces", ["gone.r0001.h5"])),
                          "gone.r0001.h5 is missing"),
        "flipped bits": (_flip_bit, "damaged (checksum"),
        "wrong shape": (lambda p: _edit(p, _replace(pos, np.zeros((50, 2)))), pos),
        "wrong type": (lambda p: _edit(p, _replace(ident, np.zeros(50))), ident),
        "too few rows": (lambda p: _edit(p, _replace(pos, np.zeros((49, 3)))), pos),
        "NaN position": (lambda p: _edit(p, lambda f: f[pos].__setitem__((7, 1), np.nan)),
                         f"{pos}[7]"),
        "negative radius": (lambda p: _edit(p, lambda f: f["particles/radius"].__setitem__(
            3, -0.2)), "particles/radius[3]"),
        "repeated id": (lambda p: _edit(p, lambda f: f[ident].__setitem__(1, f[ident][0])),
                        "an id twice"),
        "group for dataset": (lambda p: _edit(p, lambda f: (f.__delitem__("walls/normal"),
                                                           f.create_group("walls/normal"))),
                              "walls/normal"),
        "box flipped": (lambda p: _edit(p, _set_attr("box_hi", [-1.0, -1.0, -1.0])), "box_hi"),
        "rows_per_rank": (lambda p: _edit(p, _set_attr("rows_per_rank", [7])), "rows_per_rank"),
        "boundary": (lambda p: _edit(p, _set_attr("boundary", ["wall", "wall"])), "boundary"),
        "step text": (lambda p: _edit(p, _set_attr("step", "ten")), "step = 'ten'"),
        "time NaN": (lambda p: _edit(p, _set_attr("time", np.nan)), "time = nan"),
    }


def _foreign(path):
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3)
    return path.read_bytes()


SHAPE_CASES = [(kind, command, case) for kind in KINDS for command in COMMANDS[kind]
               for case in _shape_cases(kind)]


# the fast lane: every damage through `info`, the first 3 through each other command
@pytest.mark.parametrize("kind,command,case",
                         fast_first_each(SHAPE_CASES, lambda v: v[:2] if v[1] != "info" else v, 3),
                         ids=[f"{k[5:]}-{c}-{x}" for k, c, x in SHAPE_CASES])
def test_damaged_file(tmp_path, cli, good, kind, command, case):
    damage, needle = _shape_cases(kind)[case]
    _check(cli, tmp_path, command, _make(tmp_path, good, kind, damage), needle)


ATTR_CASES = [(kind, name) for kind in KINDS for name in ATTRIBUTES[kind]]


@pytest.mark.parametrize("kind,name", ATTR_CASES, ids=[f"{k[5:]}-{n}" for k, n in ATTR_CASES])
def test_missing_attribute(tmp_path, cli, good, kind, name):
    path = _make(tmp_path, good, kind, lambda p: _edit(p, _del_attr(name)))
    for command in COMMANDS[kind]:
        _check(cli, tmp_path, command, path, f"attribute {name!r} missing")


DATASET_CASES = [(kind, key) for kind in KINDS for key in expected(kind, VERSIONS[kind])]


# the fast lane: the first 4 of each kind, and of each kind's feature datasets
@pytest.mark.parametrize("kind,key", fast_first_each(
    DATASET_CASES, lambda v: (v[0], v[1] in FEATURE_DATASETS), 4),
    ids=[f"{k[5:]}-{n}" for k, n in DATASET_CASES])
def test_missing_dataset(tmp_path, cli, good, kind, key):
    """Every dataset is required; the rotation datasets of a checkpoint all or none (a
    frictionless run writes none of them), the glued spheres' too: one of them missing is a
    damaged file."""
    source = kind
    if key in FEATURE_DATASETS:
        source = GLUED if FEATURE_DATASETS[key] == GLUED_FEATURE else ROTATING
    path = _make(tmp_path, good, source, lambda p: _edit(p, lambda f: f.__delitem__(key)))
    for command in COMMANDS[kind]:
        _check(cli, tmp_path, command, path, f"dataset {key!r} missing")


@pytest.mark.parametrize("name,value,needle", [
    ("config", "{not json", "attribute config = '{not json': not JSON"),
    ("config", "[1, 2]", "expected a JSON object"),
    ("contact", "", "attribute contact"),
    ("gravity", [0.0, np.nan, 0.0], "attribute gravity"),
    ("steps_total", -3, "attribute steps_total = -3"),
    ("exchange", "nope", "attribute exchange = 'nope'"),
])
def test_damaged_checkpoint_attribute(tmp_path, cli, good, name, value, needle):
    path = _make(tmp_path, good, CHECKPOINT, lambda p: _edit(p, _set_attr(name, value)))
    for command in COMMANDS[CHECKPOINT]:
        _check(cli, tmp_path, command, path, needle)


def test_stored_config_invalid_here(tmp_path, cli, good):
    path = _make(tmp_path, good, CHECKPOINT,
                 lambda p: _edit(p, _set_attr("config", '{"steps": -4}')))
    for command in COMMANDS[CHECKPOINT]:
        _check(cli, tmp_path, command, path, "its stored config is invalid here",
               "steps = -4")


def test_wrong_kind(tmp_path, cli, good):
    path = _make(tmp_path, good, SNAPSHOT, lambda p: None)
    _check(cli, tmp_path, "restart", path, "a pdyn snapshot, expected a pdyn checkpoint")


def test_snapshot_written_with_checksums(good):
    with h5py.File(good[SNAPSHOT]) as f:
        assert all(f[k].fletcher32 for k in expected(SNAPSHOT, VERSIONS[SNAPSHOT]))
    for name in (ROTATING, GLUED):
        with h5py.File(good[name]) as f:
            assert all(f[k].fletcher32 for k in expected(CHECKPOINT, VERSIONS[CHECKPOINT])
                       if k in f)
    with h5py.File(good[ROTATING]) as f:  # all but the glued spheres'
        assert {k for k in expected(CHECKPOINT, VERSIONS[CHECKPOINT]) if k not in f} == {
            k for k, x in FEATURE_DATASETS.items() if x == GLUED_FEATURE}
    with h5py.File(good[CHECKPOINT]) as f:  # frictionless: no rotation datasets
        assert "particles/pos" in f and not [k for k in FEATURE_DATASETS if k in f]


def as_slotted(src, dst, version=6, slots=16):
    """A copy of the current checkpoint ``src`` in the layout of ``version`` 5 or 6: the
    contact history in ``slots`` slots per particle, the walls as quadrilaterals."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        quads_for_triangles(f)
        gid, count = f["particles/gid"][()], f["particles/history_count"][()]
        keys, springs = f["records/history_key"][()], f["records/history_spring"][()]
        hkey = np.zeros((gid.size, slots), np.int64)
        hspring = np.zeros((gid.size, slots, 3))
        q = 0
        for row, c in enumerate(count):
            for r in range(c):
                hkey[row, r] = keys[q]
                hspring[row, r] = springs[q]
                q += 1
        for k in ("records/history_key", "records/history_spring", "index/history_count"):
            del f[k]
        f.create_dataset("particles/history_key", data=hkey, fletcher32=True)
        f.create_dataset("particles/history_spring", data=hspring, fletcher32=True)
        f.attrs["version"] = version
    return dst


def test_older_slots_are_range_checked(tmp_path, good):
    """A format-6 checkpoint's slots: a count beyond the 16 slots, or a key left in an unused
    slot, is one error naming the row, not a crash."""
    old = as_slotted(good[ROTATING], tmp_path / "v6.h5")
    with h5py.File(old, "r+") as f:
        row = int(np.flatnonzero(f["particles/history_count"][()] == 0)[0])
        _rewrite("particles/history_count", _at(row, 17))(f)
    with pytest.raises(OutputFileError, match=r"history_count\[\d+\] = 17: not a count of 0 to "
                       "16 slots"):
        read_checkpoint(old)
    old = as_slotted(good[ROTATING], tmp_path / "v6b.h5")
    with h5py.File(old, "r+") as f:
        row = int(np.flatnonzero(f["particles/history_count"][()] == 0)[0])
        _rewrite("particles/history_key", _at((row, 3), 7))(f)
    with pytest.raises(OutputFileError, match="slot 3 is not empty"):
        read_checkpoint(old)


def wall_quads(points: np.ndarray, normals: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Each wall (point, normal) as a quadrilateral, as snapshots before format 7 and checkpoints
    before format 8 held them: the box face for axis-aligned walls, else a
    square of the box diagonal centred on the box centre's projection. Returns (4W, 3) corner
    points and (W, 4) int64 connectivity."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    pts = np.zeros((4 * len(points), 3))
    for w in range(len(points)):  # a handful of walls, not a particle loop
        n = np.asarray(normals[w], float)
        a = int(np.argmax(np.abs(n)))
        if np.count_nonzero(n) == 1:
            b, c = (a + 1) % 3, (a + 2) % 3
            corners = np.zeros((4, 3))
            corners[:, a] = points[w][a]
            corners[:, b] = [lo[b], hi[b], hi[b], lo[b]]
            corners[:, c] = [lo[c], lo[c], hi[c], hi[c]]
        else:
            n = n / np.linalg.norm(n)
            u = np.cross(n, np.eye(3)[(a + 1) % 3])
            u /= np.linalg.norm(u)
            v = np.cross(n, u)
            centre = 0.5 * (lo + hi)
            centre = centre - np.dot(centre - points[w], n) * n
            h = 0.5 * np.linalg.norm(hi - lo)
            corners = centre + h * np.array([-u - v, u - v, u + v, -u + v])
        pts[4 * w:4 * w + 4] = corners
    return pts, np.arange(4 * len(points), dtype=np.int64).reshape(-1, 4)


def quads_for_triangles(f) -> None:
    """In the open file ``f``: the walls as a quadrilateral each (formats before snapshot 7
    and checkpoint 8) instead of triangles."""
    qp, q = wall_quads(f["walls/point"][()], f["walls/normal"][()], f.attrs["box_lo"],
                       f.attrs["box_hi"])
    for k in ("vertices", "triangles", "triangle_wall"):
        del f[f"walls/{k}"]
    f.create_dataset("walls/quad_points", data=qp, fletcher32=True)
    f.create_dataset("walls/quads", data=q, fletcher32=True)


def older_snapshot(src: Path, path: Path, version: int) -> Path:
    """A copy of the snapshot ``src`` at ``path`` in the layout of an older ``version``: no
    checksums (2), no angular velocity (before 4), the walls as quadrilaterals (before 7)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(src) as f, h5py.File(path, "w") as g:
        for k, v in f.attrs.items():
            g.attrs[k] = v
        g.attrs["version"] = version

        def copy(name, obj):
            if isinstance(obj, h5py.Dataset) and not name.startswith("walls/"):
                g.create_dataset(name, data=obj[()], fletcher32=version > 2)

        f.visititems(copy)
        if version < 4:
            del g["particles/angular_velocity"]
        qp, q = wall_quads(f["walls/point"][()], f["walls/normal"][()], f.attrs["box_lo"],
                           f.attrs["box_hi"])
        for k, v in (("id", f["walls/id"][()]), ("point", f["walls/point"][()]),
                     ("normal", f["walls/normal"][()]), ("quad_points", qp), ("quads", q)):
            g.create_dataset(f"walls/{k}", data=v, fletcher32=version > 2)
    return path


def test_older_versions_still_read(tmp_path, good):
    """Snapshots of version 2 (no checksums), 3 (no angular velocity) and 6 (the walls as
    quadrilaterals) are still read;
    checkpoints before version 5 are refused by version (version 2 lacks ``build_pos``, so it
    cannot continue the neighbour lists' rebuild schedule; version 3 lacks the index by cell,
    so a rank cannot read only its share; version 4 lacks the rotation and contact history).
    Checkpoints of versions 5 and 6 (the history in 16 slots a sphere; version 5 with the
    rotation datasets always there) still read, as the records of version 7."""
    from pdyn.io import read_checkpoint, read_snapshot

    new = read_checkpoint(good[ROTATING])
    assert new["history_count"].sum() > 20
    for version in (5, 6):
        old = read_checkpoint(as_slotted(good[ROTATING], tmp_path / f"v{version}.h5", version))
        for k in ("history_count", "history_key", "history_spring", "gid", "pos"):
            np.testing.assert_array_equal(old[k], new[k], k)
    five = tmp_path / "five.h5"
    shutil.copy(good[CHECKPOINT], five)
    with h5py.File(five, "r+") as f:
        f.attrs["version"] = 5
    with pytest.raises(OutputFileError, match="dataset 'particles/omega' missing"):
        read_checkpoint(five)

    older = tmp_path / "older.h5"
    shutil.copy(good[CHECKPOINT], older)
    for version in (2, 3, 4):
        with h5py.File(older, "r+") as f:
            f.attrs["version"] = version
        with pytest.raises(OutputFileError, match=f"version {version}; this pdyn reads versions 5"):
            read_checkpoint(older)
    for old in (2, 3, 6):
        src = good[SNAPSHOT]
        path = older_snapshot(src, tmp_path / f"v{old}" / src.name, old)
        assert np.array_equal(read_snapshot(path)["radius"], read_snapshot(src)["radius"])


# ------------------------------------------------------------------ forged files
# A file can hold any values under a valid checksum (edited, or a 16-bit word turned from 0
# to 0xFFFF, which Fletcher-32 does not see): every count and index is range-checked before
# anything uses it — one line, exit 2, nothing written, never a crash.

def _rewrite(key, change):
    """Replace the dataset ``key`` by ``change(values)`` (copied), with a valid checksum."""
    def edit(f):
        values = change(f[key][()].copy())
        del f[key]
        f.create_dataset(key, data=values, fletcher32=True)
    return edit


def _at(index, value):
    def change(a):
        a[index] = value
        return a
    return change


def _json(name, change):
    """Edit the JSON attribute ``name`` in place (``change(table)``)."""
    def edit(f):
        table = json.loads(f.attrs[name])
        change(table)
        f.attrs[name] = json.dumps(table)
    return edit


def _record_of(f, at_least=1):
    """(row, gid, first record) of the first sphere of the rotating checkpoint holding at
    least ``at_least`` contact-history records."""
    count = f["particles/history_count"][()]
    row = int(np.flatnonzero(count >= at_least)[0])
    return row, int(f["particles/gid"][row]), int(count[:row].sum())


def _history_count(value):
    """Set the history count of the first sphere with records to ``value``."""
    def edit(f):
        _rewrite("particles/history_count", _at(_record_of(f)[0], value))(f)
    return edit


def _key(*keys):
    """Replace the first keys of the first sphere with as many records by ``keys`` (functions
    of its id)."""
    def edit(f):
        _, gid, first = _record_of(f, len(keys))
        _rewrite("records/history_key",
                 _at(slice(first, first + len(keys)), [k(gid) for k in keys]))(f)
    return edit


def _blind_word(path):
    """Turn the three zero 16-bit words of a small history key into 0xFFFF (a negative key) in
    the file's bytes: the Fletcher-32 sum does not change."""
    with h5py.File(path, "r") as f:
        first = _record_of(f)[2]
        ds = f["records/history_key"]
        assert ds.chunks[0] > first and 0 < ds[first] < 1 << 16
        at = ds.id.get_chunk_info(0).byte_offset + first * 8 + 2
    with open(path, "r+b") as fh:
        fh.seek(at)
        assert fh.read(6) == bytes(6)
        fh.seek(at)
        fh.write(b"\xff" * 6)


def _swap_cells(f):
    """Swap two spheres of different index cells (with their build positions)."""
    cell, count = f["index/cell"][()], f["index/count"][()]
    a, b = 0, int(count[0])  # the first rows of the first two segments
    for key in ("particles/pos", "particles/build_pos"):
        _rewrite(key, lambda v: v[np.r_[b, 1:b, a, b + 1:len(v)]])(f)
    assert cell[0] != cell[1]


def _rename_ids(f):
    _rewrite("particles/gid", lambda a: a + len(a))(f)


SNAP_FORGED = {
    "contact line beyond its points": (_rewrite("contacts/lines", _at((0, 1), 10**6)),
                                       "contacts/lines[0] = [0, 1000000]: not a row of "
                                       "contacts/points"),
    "wall triangle beyond its vertices": (_rewrite("walls/triangles", _at((2, 0), -1)),
                                          "walls/triangles[2]"),
    "triangle of no wall": (_rewrite("walls/triangle_wall", _at(3, -99)),
                            "walls/triangle_wall[3] = -99: not one of the 6 walls"),
    "wall ids": (_rewrite("walls/id", _at(0, 5)), "walls/id = [5, -2"),
    "contact with no wall": (_rewrite("contacts/id", _at((0, 1), -99)), "contacts/id[0]"),
    "negative id": (_rewrite("particles/id", _at(4, -8)), "particles/id[4] = -8"),
}
CKPT_FORGED = {
    # the contact history's records: counts, their sums, keys
    "history count -3": (ROTATING, _history_count(-3), "history_count[", "= -3: must be >= 0"),
    "history count 99": (ROTATING, _history_count(99), "particles/history_count adds up to"),
    "records per segment": (ROTATING, _rewrite("index/history_count",
                                               lambda a: a + np.arange(len(a))),
                            "index/history_count does not match"),
    "key negative under a valid checksum": (ROTATING, _blind_word,
                                            "not a key of another sphere"),
    "key of no sphere of the run": (ROTATING, _key(lambda g: 10**6),
                                    "= 1000000: not a key of another sphere"),
    "key of the sphere itself": (ROTATING, _key(lambda g: g + 1), "not a key of another sphere"),
    "key of no wall": (ROTATING, _key(lambda g: (1 << 62) + 7),
                       "not a key of another sphere of this run or of a wall"),
    "keys descending": (ROTATING, _key(lambda g: 3 if g != 2 else 4,
                                       lambda g: 1 if g != 0 else 2), "keys must ascend"),
    # ids and flags
    "id beyond the run's": (CHECKPOINT, _rename_ids, "particles/gid[0] = ",
                            "not an id of this run (0 to 49)"),
    "negative id": (CHECKPOINT, _rewrite("particles/gid", _at(3, -4)), "particles/gid[3] = -4"),
    "ghost flags": (CHECKPOINT, _rewrite("particles/flags", _at(5, 2)),
                    "particles/flags[5] = 2: not the flags of an owned sphere"),
    "wall flags": (CHECKPOINT, _rewrite("particles/flags", _at(5, 5)), "particles/flags[5]"),
    # the index: rows within the dataset, each in its cell, on the lattice of its size
    "row in another cell": (CHECKPOINT, _swap_cells, "not in the index cell of its row"),
    "index lattice": (CHECKPOINT, _set_attr("index_dims", [64, 64, 64]),
                      "attribute index_dims = [64, 64, 64]: a checkpoint of 50 particles"),
    "index beyond the rows": (CHECKPOINT, _rewrite("index/count", _at(0, 10**9)),
                              "do not cover the 50 particles"),
    # the rebuild schedule
    "build position NaN": (CHECKPOINT, _rewrite("particles/build_pos", _at((2, 1), np.nan)),
                           "particles/build_pos[2]", "not finite"),
    "moved more than the drift": (CHECKPOINT, _rewrite("particles/build_pos",
                                                       _at((2, 1), -40.0)),
                                  "attribute drift = ", "since the last rebuild"),
    "drift beyond half the skin": (CHECKPOINT, _set_attr("drift", 5.0),
                                   "attribute exchange: skin = ", "twice the attribute drift"),
    # the exchange's state and block -> rank map
    "exchange kind": (CHECKPOINT, _json("exchange", lambda t: t.update(kind="x")),
                      "attribute exchange: kind = 'x'"),
    "exchange ranks": (CHECKPOINT, _json("exchange", lambda t: t.update(ranks=3)),
                       "attribute exchange: ranks = 3: not the file's ranks = 1"),
    "block owner beyond the ranks": (BLOCKS, _rewrite("exchange/owner", _at(0, 1)),
                                     "exchange/owner is not a map of the"),
    "block owner missing blocks": (BLOCKS, _rewrite("exchange/owner", lambda a: a[:-1]),
                                   "exchange/owner is not a map of the"),
    "block grid": (BLOCKS, _json("exchange", lambda t: t.update(dims=[1000, 1000, 1000])),
                   "attribute exchange: dims = [1000, 1000, 1000]: 1000000000 blocks"),
    "balance after the step": (BLOCKS, _json("exchange", lambda t: t.update(balanced_at=11)),
                               "attribute exchange: balanced_at = 11: after the step 10"),
    # the insertion's state
    "insertion ids": (POURING, _json("insertion", lambda t: t["state"].update(next_gid=3)),
                      "attribute insertion: state.next_gid = 3", "the ids given less those"),
    "insertion stream": (POURING, _json("insertion", lambda t: t["state"].update(rng=[1])),
                         "attribute insertion: state.rng = [1]: not the state of a PCG64"),
    "insertion count": (POURING, _json("insertion", lambda t: t["state"].update(inserted=-2)),
                        "attribute insertion: state.inserted = -2: must be >= 0"),
    "insertion mass out": (POURING, _json("insertion",
                                          lambda t: t["state"].update(removed_mass=-0.5)),
                           "attribute insertion: state.removed_mass = -0.5: expected a finite"),
    "insertion tables": (POURING, _json("insertion", lambda t: t.pop("state")),
                         "expected the tables params and state"),
    "insertion feed stream": (POURING, _json("insertion", lambda t: t["state"].update(
        feeds=[{"inserted": 0, "rng": [1]}])),
        "attribute insertion: state.feeds[0].rng = [1]: not the state of a PCG64"),
    "insertion feeds": (POURING, _json("insertion", lambda t: t["state"].update(feeds=[{}, {}])),
                        "attribute insertion: state.feeds = ", "expected 1 tables"),
    "insertion pending radius": (POURING, _json("insertion", lambda t: t["state"].update(
        feeds=[{"inserted": 0, "rng": t["state"]["rng"], "pending": [-1.0]}])),
        "state.feeds[0].pending = [-1.0]: expected a list of finite positive radii"),
    # the meshes: each a wall's, counts adding up, triangles of their own vertices; the history
    # keys within their triangles
    "key of a triangle beyond the meshes": (MESH, _key(lambda g: MESH_KEY_BASE + 1 + 32),
                                            "or of the 32 mesh triangles"),
    "mesh triangle beyond its vertices": (MESH, _rewrite("meshes/triangles", _at((3, 1), 10**6)),
                                          "meshes/triangles[3] = ",
                                          "not a row of its own mesh's vertices"),
    "mesh triangle counts": (MESH, _rewrite("meshes/triangle_count", _at(0, 5)),
                             "meshes/triangle_count adds up to 5, meshes/triangles holds 32"),
    "mesh vertex counts": (MESH, _rewrite("meshes/vertex_count", _at(0, 0)),
                           "meshes/vertex_count[0] = 0: must be > 0"),
    "mesh of no wall": (MESH, _rewrite("meshes/wall", _at(0, -99)),
                        "meshes/wall[0] = -99: not one of the 5 walls"),
    "mesh vertex NaN": (MESH, _rewrite("meshes/vertices", _at((2, 0), np.nan)),
                        "meshes/vertices[2]", "not finite"),
}
#: forged values only a restart uses (the tables and the run it builds from them): ``pdyn
#: info`` and ``pdyn render`` make the same checks and say the restart would refuse them
RESTART_FORGED = {
    "contact table": (CHECKPOINT, _json("contact", lambda t: t.update(law="glue")),
                      "its stored config is invalid here", "contact.law = 'glue'"),
    "contact table key": (CHECKPOINT, _json("contact", lambda t: t.update(glue=1)),
                          "its stored config is invalid here", "contact.glue = 1: unknown key"),
    "insertion parameters": (POURING, _json("insertion", lambda t: t["params"].update(rate=-1)),
                             "its stored config is invalid here", "insertion.rate = -1"),
    "sphere wider than the box": (CHECKPOINT, _rewrite("particles/radius", _at(4, 50.0)),
                                  "particles.radii[", "= 50.0: the sphere is wider than the box"),
    "walls the config builds": (CHECKPOINT, _json("config", lambda t: t.update(walls=[{
        "type": "plane", "point": [0.0, 0.0, 0.5], "normal": [0.0, 0.0, 1.0]}])),
        "walls/id holds 6 walls, its stored config builds 6 box faces and 1 [[walls]]"),
    "mesh of another wall": (MESH, _rewrite("meshes/wall", _at(0, -2)),
                             "meshes/wall = [-2]: expected the ids of its stored config's mesh "
                             "walls, [-5]"),
}


@pytest.mark.parametrize("case", SNAP_FORGED)
def test_forged_snapshot(tmp_path, cli, good, case):
    forge, needle = SNAP_FORGED[case]
    path = _make(tmp_path, good, SNAPSHOT, lambda p: _edit(p, forge))
    for command in COMMANDS[SNAPSHOT]:
        _check(cli, tmp_path, command, path, needle)


@pytest.mark.parametrize("case", fast_first(list(CKPT_FORGED), 12))
def test_forged_checkpoint(tmp_path, cli, good, case):
    kind, forge, *needles = CKPT_FORGED[case]
    path = _make(tmp_path, good, kind,
                 forge if forge is _blind_word else lambda p: _edit(p, forge))
    for command in COMMANDS[CHECKPOINT]:
        _check(cli, tmp_path, command, path, *needles)


@pytest.mark.parametrize("case", RESTART_FORGED)
def test_forged_restart_table(tmp_path, cli, good, case):
    kind, forge, *needles = RESTART_FORGED[case]
    path = _make(tmp_path, good, kind, lambda p: _edit(p, forge))
    for command in COMMANDS[CHECKPOINT]:
        more = () if command == "restart" else ("pdyn: error: would be refused by --restart: ",)
        _check(cli, tmp_path, command, path, *needles, *more)


def test_forged_files_start_from_good_ones(good):
    """The forged cases change files that read: each forged file's fault is its own."""
    for kind, path in good.items():
        (read_snapshot if kind == SNAPSHOT else read_checkpoint)(path)
    with h5py.File(good[ROTATING]) as f:
        assert (f["particles/history_count"][()] > 1).any()  # contacts with history
    with h5py.File(good[SNAPSHOT]) as f:
        assert f.attrs["n_contacts"] > 0
    with h5py.File(good[BLOCKS]) as f:
        assert "exchange/owner" in f
    assert 0 < read_checkpoint(good[POURING])["insertion"]["state"]["removed"]
    for kind, path in good.items():  # and pass every check of a restart
        assert kind == SNAPSHOT or refusal(path) is None, kind
    with h5py.File(good[MESH]) as f:  # every sphere on a triangle, the STL file gone
        assert (f["records/history_key"][()] > MESH_KEY_BASE).sum() == 20
        assert f["meshes/triangle_count"][()].tolist() == [32]
        assert not Path(json.loads(f.attrs["config"])["walls"][0]["file"]).exists()


# ------------------------------------------------------------------ what a checkpoint is
def _run(folder, steps, **cfg):
    """A short run into ``folder`` with a checkpoint every 10 steps."""
    base = SimulationConfig(scale=0.05, progress=False,
                            output=OutputConfig(folder=str(folder), checkpoint_every=10))
    Simulation(base.with_(**cfg)).run(steps)
    return Path(folder)


def test_restart_refuses_another_runs_checkpoint(tmp_path, cli):
    """A ``drop`` run's checkpoint copied into a ``heap`` run's folder as the newest: the run
    id it holds is not the folder's, so ``--restart RUN`` refuses it (before, the heap run's
    later files moved aside and the drop run continued in the heap run's folder)."""
    heap = _run(tmp_path / "heap", 20, scene="heap", scale=0.03)  # empty: pouring from step 50
    drop = _run(tmp_path / "drop", 30)
    shutil.copy(drop / "checkpoints" / "ckpt_00000030.h5", heap / "checkpoints")
    theirs = (drop / "run_id").read_text().strip()
    ours = (heap / "run_id").read_text().strip()
    assert theirs != ours
    before = listing(tmp_path)
    code, _, err = cli(["run", "--restart", "heap", "--steps", "5", "--no-progress"])
    assert_user_error(code, err, "ckpt_00000030.h5: belongs to run", theirs, "(scene 'drop')",
                      f"not to run {ours} of its folder")
    assert listing(tmp_path) == before
    # its own checkpoints still continue it
    code, out, err = cli(["run", "--restart", "heap/checkpoints/ckpt_00000020.h5", "--steps",
                          "5", "--no-progress"])
    assert code == 0, err
    assert "restarted from heap/checkpoints/ckpt_00000020.h5 at step 20" in out


def test_restart_takes_the_step_a_checkpoint_holds(tmp_path, cli):
    """``ckpt_00000050.h5`` holding step 10: named alone it is refused; ``--restart RUN``
    continues from the newest step held (30), not from the newest name."""
    run = _run(tmp_path / "run", 30)
    shutil.copy(run / "checkpoints" / "ckpt_00000010.h5", run / "checkpoints" / "ckpt_00000050.h5")
    before = listing(tmp_path)
    code, _, err = cli(["run", "--restart", "run/checkpoints/ckpt_00000050.h5", "--steps", "5",
                        "--no-progress"])
    assert_user_error(code, err, "ckpt_00000050.h5: holds step 10, not the step 50 its name "
                      "says")
    assert listing(tmp_path) == before
    code, out, err = cli(["run", "--restart", "run", "--steps", "5", "--no-progress"])
    assert code == 0, err
    assert "restarted from run/checkpoints/ckpt_00000030.h5 at step 30" in out


def test_restart_refuses_a_rotating_checkpoint_without_its_history(tmp_path, cli, good):
    """A checkpoint whose stored config has friction but which lacks the rotation and
    contact-history datasets is refused (it used to restart with spins and springs silently
    zero); a frictionless run's checkpoint has none and starts them at zero (test_io)."""
    def strip(p):
        _edit(p, lambda f: [f.__delitem__(k) for k in FEATURE_DATASETS if k in f])

    path = _make(tmp_path, good, ROTATING, strip)
    _check(cli, tmp_path, "restart", path, "a checkpoint of a run with friction = 0.5",
           "without its rotation and contact-history datasets")


def test_checkpoint_before_run_ids_still_restarts(tmp_path, cli, good):
    """Format 6 (no run id) is read: it restarts in a folder with a run id, and the continued
    run gets an id of its own."""
    run = _run(tmp_path / "run", 10)
    path = run / "checkpoints" / "ckpt_00000010.h5"
    with h5py.File(path, "r+") as f:
        f.attrs["version"] = 6
        del f.attrs["run_id"]
        quads_for_triangles(f)
    code, out, err = cli(["run", "--restart", str(path), "--steps", "10", "--no-progress"])
    assert code == 0, err
    assert read_checkpoint(run / "checkpoints" / "ckpt_00000020.h5")["step"] == 20
    with h5py.File(path, "r+") as f:
        f.attrs["version"] = 7  # a format-7 file must hold its run id
    code, _, err = cli(["info", path])
    assert_user_error(code, err, "attribute 'run_id' missing")


# ------------------------------------------------------------------ meshes
def _checkpoint_arrays(path) -> dict:
    with h5py.File(path) as f:
        return {k: f[k][()] for k in ("particles/gid", "particles/pos", "particles/vel",
                                      "particles/omega", "records/history_key",
                                      "records/history_spring")}


def test_restart_never_reads_the_stl_again(tmp_path, cli):
    """A run of a config whose mesh is an STL file (a relative path); its folder moved
    elsewhere and the STL file edited, then deleted: the restart from the moved folder, run
    from another directory, gives the uninterrupted run's checkpoint bit for bit; ``pdyn
    info`` names the mesh with its triangles and bounding box."""
    cfg = plate_on_stl(tmp_path)
    pos = json.dumps(np.asarray(cfg.particles.positions).tolist())
    (tmp_path / "run.toml").write_text(f"""gravity = [0.0, 0.0, -9.81]
[particles]
positions = {pos}
velocities = {json.dumps(np.zeros((20, 3)).tolist())}
radii = {json.dumps([0.004] * 20)}
density = 2500.0
[box]
lo = [-0.05, -0.05, -0.01]
hi = [0.05, 0.05, 0.05]
boundary = ["wall", "wall", "open"]
[contact]
youngs_modulus = 1e6
restitution = 0.5
friction = 0.5
[[walls]]
type = "mesh"
file = "plate.stl"
scale = 0.001
""")
    for folder, steps in (("whole", 40), ("part", 20)):
        code, _, err = cli(["run", "run.toml", "--steps", steps, "--output", folder,
                            "--checkpoint-every", 20, "--snapshot-every", 0, "--no-progress"])
        assert code == 0, err
    v, t = grid_surface(4, 40.0, lift=lambda x, y: 2.0 + 0 * x)  # a plate 2 mm higher
    write_stl(tmp_path / "plate.stl", v[t].astype(np.float32))
    (tmp_path / "elsewhere").mkdir()
    shutil.move(tmp_path / "part", tmp_path / "elsewhere" / "moved")
    code, out, err = cli(["info", "elsewhere/moved/checkpoints/ckpt_00000020.h5"])
    assert code == 0, err
    assert "  meshes (name, wall id, triangles, bounding box in m):" in out
    assert "walls[0] (plate.stl)  id -5  32 triangles  [-0.04, -0.04,  0.  ] .. [0.04, 0.04, " \
        "0.  ]" in out
    for edit in ("edited", "deleted"):
        if edit == "deleted":
            (tmp_path / "plate.stl").unlink()
        code, out, err = cli(["run", "--restart", "moved/checkpoints/ckpt_00000020.h5",
                              "--steps", 20, "--no-progress", "--output", f"../{edit}"],
                             cwd=tmp_path / "elsewhere")
        assert code == 0, err
        assert "holds no meshes" not in out
        a = _checkpoint_arrays(tmp_path / "whole" / "checkpoints" / "ckpt_00000040.h5")
        b = _checkpoint_arrays(tmp_path / edit / "checkpoints" / "ckpt_00000040.h5")
        for k in a:
            assert np.array_equal(a[k], b[k]), (edit, k)
    at = _checkpoint_arrays(tmp_path / "whole" / "checkpoints" / "ckpt_00000020.h5")
    assert (at["particles/pos"][:, 2] < 0.004 + 0.002).all()  # the edited plate cuts them


def test_checkpoint_before_meshes_reads_the_stl_again(tmp_path, cli, good):
    """A format-8 checkpoint (no ``meshes/*``) of a run with an STL mesh restarts from the
    file, with a note saying so; without the file it is refused in one line."""
    folder = tmp_path / "run"
    cfg = plate_on_stl(tmp_path).with_(output=OutputConfig(folder=str(folder),
                                                           checkpoint_every=10))
    Simulation(cfg).run(10)
    path = folder / "checkpoints" / "ckpt_00000010.h5"
    with h5py.File(path, "r+") as f:
        f.attrs["version"] = 8
        del f["meshes"]
    code, out, err = cli(["run", "--restart", path, "--steps", 5, "--no-progress"])
    assert code == 0, err
    assert (f"pdyn: note: {path}: checkpoint format 8 holds no meshes, so its mesh walls are "
            f"read again from {str(tmp_path / 'plate.stl')!r}") in out
    (tmp_path / "plate.stl").unlink()
    for command in COMMANDS[CHECKPOINT]:
        code, _, err = cli(_args(command, path))
        assert_user_error(code, err, "walls[0].file = ", "cannot read (No such file")


def test_history_partner_not_in_the_checkpoint_is_refused():
    """A pouring run's ids have gaps (spheres removed): a history key naming an id within
    the ids given but not held is refused, naming the record; one naming a held sphere is
    not."""
    head = {"n_particles": 3, "insertion": {"state": {"next_gid": 5}}}
    rows = {"gid": np.array([0, 2, 4]), "history_count": np.array([1, 1, 0]),
            "history_key": np.array([3, 4])}  # partners 2 (held) and 3 (removed)
    assert absent_partner("ckpt.h5", head, rows) == (
        "ckpt.h5: records/history_key = 4 of particle 2: sphere 3 is not in this checkpoint "
        "(damaged file)")
    rows["history_key"] = np.array([3, 5])
    assert absent_partner("ckpt.h5", head, rows) is None


# ------------------------------------------------------------------ the restart's own lines
def test_restart_summary_counts_its_own_steps(tmp_path, cli):
    """After ``--steps 5`` from step 20 the summary says 5 steps (from 20 to 25), not 25."""
    _run(tmp_path / "run", 20)
    code, out, err = cli(["run", "--restart", "run", "--steps", 5, "--no-progress"])
    assert code == 0, err
    assert "  5 steps (step 20 to 25) of dt = " in out


def test_restart_names_another_runs_files_it_moves_aside(tmp_path, cli):
    """A checkpoint of another run copied into a run folder, after the restart's step, is
    moved aside with the run's own later files, and a line of its own says it is another
    run's."""
    run = _run(tmp_path / "run", 20)
    other = _run(tmp_path / "other", 30)
    shutil.copy(other / "checkpoints" / "ckpt_00000030.h5", run / "checkpoints")
    theirs = (other / "run_id").read_text().strip()
    ours = (run / "run_id").read_text().strip()
    code, out, err = cli(["run", "--restart", "run/checkpoints/ckpt_00000010.h5", "--steps", 5,
                          "--no-progress"])
    assert code == 0, err
    assert (f"pdyn: note: 1 of the files moved aside belong to another run, not to run {ours}:"
            f" checkpoints/ckpt_00000030.h5 (run {theirs})") in out.splitlines()
    assert (run / "superseded" / "after_00000010" / "checkpoints" / "ckpt_00000030.h5").exists()
    code, out, err = cli(["run", "--restart", "run/checkpoints/ckpt_00000010.h5", "--steps", 5,
                          "--no-progress"])
    assert code == 0 and "another run" not in out, err


# ------------------------------------------------------------------ notes
@pytest.mark.parametrize("kind,key", [(SNAPSHOT, "particles/velocity"),
                                      (CHECKPOINT, "particles/vel")])
def test_dataset_without_checksum_is_read_with_a_note(tmp_path, cli, good, kind, key):
    """A dataset rewritten without its Fletcher-32 filter (by another tool, say) still reads,
    but not without a word: a note on stdout names it (info, restart, render)."""
    def plain(f):
        values = f[key][()]
        del f[key]
        f[key] = values  # contiguous, no checksum

    path = _make(tmp_path, good, kind, lambda p: _edit(p, plain))
    note = f"pdyn: note: {path.name}: 1 dataset(s) without a Fletcher-32 checksum, so their " \
           f"data cannot be verified: {key}"
    for command in COMMANDS[kind]:
        if command == "render":
            pytest.importorskip("vtkmodules.vtkRenderingOpenGL2")
        code, out, err = cli(_args(command, path.name))
        if command == "render" and code != 0 and "render window" in err.lower():
            continue  # pragma: no cover - no offscreen OpenGL here
        assert code == 0 and err == "", err
        assert note in out.splitlines(), out
    code, out, _ = cli(["info", good[kind]])
    assert code == 0 and "Fletcher-32" not in out


# ------------------------------------------------------------------ pdyn plot
def _series(folder: Path, thermo_rows=3, wall=True) -> None:
    """A run folder with a ``thermo.csv`` of ``thermo_rows`` rows and a ``wall_forces.csv``."""
    from pdyn.io.thermo import COLUMNS

    folder.mkdir()
    rows = [",".join(str(k * 0.5 + c) for c in range(len(COLUMNS))) for k in range(thermo_rows)]
    (folder / "thermo.csv").write_text("\n".join([",".join(COLUMNS), *rows]) + "\n")
    if wall:
        (folder / "wall_forces.csv").write_text(
            "step,time,z_lo_fx,z_lo_fy,z_lo_fz\n1,0.001,0,0,-3.5\n2,0.002,0,0,-3.25\n")


class TestPlotBadSeries:
    """``pdyn plot`` on series a stopped run cut or that are not pdyn's: a cut last line is
    left out with a note and the pictures are drawn; missing columns, a damaged line
    inside, a header alone and a PNG that cannot be written are one line, exit 2, and no
    PNG (it used to be a numpy message or a traceback)."""

    @pytest.mark.parametrize("series,cut", fast_first_each([
        ("thermo.csv", "1.0,0.5,2"), ("thermo.csv", "1.0,0.5,2.5,3.5,4.5,5.5,6.2e"),
        ("thermo.csv", "1.0,0.5,2.5,3.5,4.5,5.5,6.2"), ("wall_forces.csv", "3,0.003,0,0,-")],
        lambda v: None, 1), ids=["thermo-few", "thermo-cut-number", "thermo-no-eol", "wall-forces"])
    def test_cut_last_line_is_left_out(self, tmp_path, cli, series, cut):
        pytest.importorskip("matplotlib")
        _series(tmp_path / "run")
        with open(tmp_path / "run" / series, "a") as f:
            f.write(cut)  # no newline: the append was cut
        code, out, err = cli(["plot", "run"])
        assert code == 0 and not err, err
        assert f"pdyn: note: run/{series}: its last line" in out and "left out" in out
        assert len(list((tmp_path / "run").glob("*.png"))) == 4

    @pytest.mark.parametrize("case,needles", [
        ("no energy column", ("thermo.csv", "no column 'kinetic_energy'")),
        ("no time in wall forces", ("wall_forces.csv", "no column 'time'")),
        ("bad line inside", ("thermo.csv", "line 2 does not read")),
        ("empty", ("thermo.csv", "empty")),
        ("png is a folder", ("thermo_energy.png", "cannot write")),
    ])
    def test_bad_series_is_one_line(self, tmp_path, cli, case, needles):
        pytest.importorskip("matplotlib")
        run = tmp_path / "run"
        _series(run)
        thermo, wall = run / "thermo.csv", run / "wall_forces.csv"
        if case == "no energy column":
            thermo.write_text(thermo.read_text().replace("kinetic_energy", "kinetic"))
        elif case == "no time in wall forces":
            wall.write_text(wall.read_text().replace("time", "t"))
        elif case == "bad line inside":
            lines = thermo.read_text().splitlines()
            lines[1] = lines[1].replace(",", ";", 2)
            thermo.write_text("\n".join(lines) + "\n")
        elif case == "empty":
            thermo.write_text("")
        else:
            (run / "thermo_energy.png").mkdir()
        code, _, err = cli(["plot", "run"])
        assert_user_error(code, err, *needles)
        assert not list(run.glob("*.png")) or case == "png is a folder"
