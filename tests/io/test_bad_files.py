"""Reading is as strict as writing: every kind of damaged, foreign or incomplete file given to
``pdyn info``, ``pdyn render`` and ``pdyn run --restart`` is one line on stderr naming the file
and what is wrong with it, exit code 2, nothing written. Damaged data are caught by the
Fletcher-32 checksums every dataset carries."""

import shutil

import h5py
import numpy as np
import pytest

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.io.hdf5 import CHECKPOINT, SNAPSHOT, OutputFileError
from pdyn.io.schema import ATTRIBUTES, DATASETS, FEATURE_DATASETS
from pdyn.simulation import Simulation
from tests.mpi.scenes import dense_polydisperse

from ..conftest import assert_user_error, listing

KINDS = {SNAPSHOT: 0, CHECKPOINT: 1}
COMMANDS = {SNAPSHOT: ("info", "render"), CHECKPOINT: ("info", "render", "restart")}
ROTATING = "rotating"  # the checkpoint of a run with friction (rotation datasets present)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A snapshot and a checkpoint of a short run (50 spheres), and a checkpoint of a dense
    run with friction (spheres touching: contact history)."""
    out = {}
    for name in (CHECKPOINT, ROTATING):
        folder = tmp_path_factory.mktemp("good")
        output = OutputConfig(folder=str(folder), snapshot_every=10, checkpoint_every=10)
        cfg = (SimulationConfig(scale=0.05, progress=False, output=output) if name == CHECKPOINT
               else dense_polydisperse(("wall",) * 3, n=60, friction=0.5, output=output))
        Simulation(cfg).run(10)
        out[name] = folder / "checkpoints" / "ckpt_00000010.h5"
        out.setdefault(SNAPSHOT, folder / "snapshots" / "snap_00000010.h5")
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
    path = tmp_path / ("snap_00000010.h5" if kind == SNAPSHOT else "ckpt_00000010.h5")
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


@pytest.mark.parametrize("kind,command,case", SHAPE_CASES,
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


DATASET_CASES = [(kind, key) for kind in KINDS for key in DATASETS[kind]]


@pytest.mark.parametrize("kind,key", DATASET_CASES, ids=[f"{k[5:]}-{n}" for k, n in DATASET_CASES])
def test_missing_dataset(tmp_path, cli, good, kind, key):
    """Every dataset is required; the rotation datasets of a checkpoint all or none (a
    frictionless run writes none of them): one of them missing is a damaged file."""
    source = ROTATING if key in FEATURE_DATASETS else kind
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
    _check(cli, tmp_path, "restart", path, "its stored config is invalid here",
           "steps = -4")


def test_wrong_kind(tmp_path, cli, good):
    path = _make(tmp_path, good, SNAPSHOT, lambda p: None)
    _check(cli, tmp_path, "restart", path, "a pdyn snapshot, expected a pdyn checkpoint")


def test_snapshot_written_with_checksums(good):
    with h5py.File(good[SNAPSHOT]) as f:
        assert all(f[k].fletcher32 for k in DATASETS[SNAPSHOT])
    with h5py.File(good[ROTATING]) as f:
        assert all(f[k].fletcher32 for k in DATASETS[CHECKPOINT])
    with h5py.File(good[CHECKPOINT]) as f:  # frictionless: no rotation datasets
        assert "particles/pos" in f and not [k for k in FEATURE_DATASETS if k in f]


def as_slotted(src, dst, version=6, slots=16):
    """A copy of the format-7 checkpoint ``src`` in the layout of ``version`` 5 or 6: the
    contact history in ``slots`` slots per particle, each sphere's spring as it saw the
    contact (a pair's two copies exact negatives)."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        gid, count = f["particles/gid"][()], f["particles/history_count"][()]
        keys, springs = f["records/history_key"][()], f["records/history_spring"][()]
        hkey = np.zeros((gid.size, slots), np.int64)
        hspring = np.zeros((gid.size, slots, 3))
        q = 0
        for row, c in enumerate(count):
            for r in range(c):
                hkey[row, r] = keys[q]
                lower = keys[q] < (1 << 62) and keys[q] - 1 < gid[row]
                hspring[row, r] = -springs[q] if lower else springs[q]
                q += 1
        for k in ("records/history_key", "records/history_spring", "index/history_count"):
            del f[k]
        f.create_dataset("particles/history_key", data=hkey, fletcher32=True)
        f.create_dataset("particles/history_spring", data=hspring, fletcher32=True)
        f.attrs["version"] = version
    return dst


def test_older_versions_still_read(tmp_path, good):
    """Snapshots of version 2 (no checksums) and 3 (no angular velocity) are still read;
    checkpoints before version 5 are refused by version (version 2 lacks ``build_pos``, so it
    cannot continue the neighbour lists' rebuild schedule; version 3 lacks the index by cell,
    so a rank cannot read only its share; version 4 lacks the rotation and contact history).
    Checkpoints of versions 5 and 6 (the history in 16 slots a sphere, each sphere's spring as
    it saw the contact; version 5 with the rotation datasets always there) still read, as the
    records of version 7 (one spring a contact, as its lower-id sphere sees it)."""
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
    for kind, old, read in ((SNAPSHOT, 2, read_snapshot), (SNAPSHOT, 3, read_snapshot)):
        src = good[kind]
        path = tmp_path / src.name
        with h5py.File(src) as f, h5py.File(path, "w") as g:
            for k, v in f.attrs.items():
                g.attrs[k] = v
            g.attrs["version"] = old

            def copy(name, obj):
                if isinstance(obj, h5py.Dataset):
                    g[name] = obj[()]  # contiguous, no checksum

            f.visititems(copy)
            if old < 4:
                del g["particles/angular_velocity"]
        assert np.array_equal(read(path)["radius"], read(src)["radius"])
