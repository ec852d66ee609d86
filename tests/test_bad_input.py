"""Every bad input gets one line on stderr naming the field and the value, exit code 2, and
nothing written: every config field with a wrong type, a non-finite and an out-of-range value,
every command-line option, every output-folder fault, and the initial states pdyn refuses.
In-process (``pdyn.cli.main``); corrupted files are in ``tests/io/test_bad_files.py``, the
multi-rank and fault cases in ``tests/mpi`` and ``tests/test_faults.py``."""

import json
import math

import numpy as np
import pytest

from pdyn.config import ConfigError, ContactConfig, SimulationConfig, config_from_dict

from . import fast_walls
from .conftest import assert_user_error, listing, tmpfs

NAN, INF = math.nan, math.inf


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def toml(doc: dict) -> str:
    """A TOML document: top-level values, then one [table] per dict of dicts."""
    top = [f"{k} = {toml_value(v)}" for k, v in doc.items()
           if not (isinstance(v, dict) and k in TABLES)]
    tables = [f"[{k}]\n" + "\n".join(f"{n} = {toml_value(x)}" for n, x in v.items())
              for k, v in doc.items() if isinstance(v, dict) and k in TABLES]
    return "\n".join(top + tables) + "\n"


TABLES = ("contact", "output", "box", "particles", "broadphase_params", "insertion")
POUR = {"region_lo": [0.5, 0.5, 3.0], "region_hi": [1.5, 1.5, 4.0], "rate": 100.0,
        "radius_min": 0.1, "radius_max": 0.2}
SPHERE = {"box": {"lo": [0.0, 0.0, 0.0], "hi": [1.0, 1.0, 1.0]},
          "particles": {"positions": [[0.5, 0.5, 0.5]], "radii": [0.1]}}

#: field -> (wrong type, non-finite, out of range); None where a kind does not exist
FIELDS = {
    "scene": (5, NAN, "moon"),
    "scale": ("big", NAN, -1.0),
    "seed": ("x", INF, -1),
    "steps": ("x", INF, 0),
    "dt": ("x", INF, -1e-3),
    "dt_safety": ("x", NAN, 0.5),
    "broadphase": (5, NAN, "kd_forest"),
    "broadphase_params": ("x", {"cell_size": NAN}, {"cell_size": -1.0}),
    "gravity": ("down", [0.0, 0.0, NAN], [0.0, 9.81]),
    "blocks": (5, [1, 1, INF], [0, 1, 1]),
    "reorder_every": ("x", INF, -1),
    "balance_every": (1.5, INF, -1),
    "balance_threshold": ("x", NAN, 0.9),
    "balance_curve": (5, NAN, "peano"),
    "initial_overlap": (5, NAN, "maybe"),
    "overlap_tolerance": ("x", NAN, 2.0),
    "progress": ("yes", NAN, None),
    "allow_deep_overlap": ("yes", NAN, None),
    "contact.law": (5, NAN, "quadratic"),
    "contact.youngs_modulus": ("x", NAN, -1.0),
    "contact.stiffness": ("x", INF, 0.0),
    "contact.restitution": ("x", NAN, 1.5),
    "contact.friction": ("x", INF, -0.1),
    "contact.poisson_ratio": ("x", NAN, 0.7),
    "contact.rolling_friction": (True, NAN, -1.0),
    "output.folder": (5, NAN, ""),
    "output.snapshot_every": ("x", INF, -1),
    "output.checkpoint_every": ("x", INF, -1),
    "output.overwrite": ("yes", NAN, None),
    "output.wall_forces": ("yes", NAN, None),
    "output.thermo_every": ("x", INF, -1),
    "box.lo": ("x", [0.0, NAN, 0.0], [2.0, 0.0, 0.0]),
    "box.hi": ("x", [1.0, INF, 1.0], [-1.0, 1.0, 1.0]),
    "box.boundary": (5, NAN, ["wall", "sticky", "wall"]),
    "particles.positions": ("x", [[0.5, NAN, 0.5]], [[5.0, 0.5, 0.5]]),
    "particles.radii": ("x", [INF], [-0.1]),
    "particles.velocities": ("x", [[0.0, INF, 0.0]], [[0.0, 0.0]]),
    "particles.masses": ("x", [NAN], [0.0]),
    "particles.density": ("x", NAN, -1.0),
    "insertion.region_lo": ("x", [0.5, NAN, 3.0], [-1.0, 0.5, 3.0]),
    "insertion.region_hi": ("x", [1.5, INF, 4.0], [1.5, 1.5, 99.0]),
    "insertion.rate": ("x", NAN, -1.0),
    "insertion.radius_min": ("x", INF, -0.1),
    "insertion.radius_max": ("x", NAN, 0.05),
    "insertion.density": ("x", NAN, 0.0),
    "insertion.velocity": ("x", [0.0, 0.0, NAN], [0.0, 1.0]),
    "insertion.total": ("x", INF, -1),
    "insertion.every": ("x", INF, 0),
    "insertion.seed": ("x", INF, -1),
    "insertion.outlet_lo": ("x", [0.0, NAN, 0.0], [0.0, 0.0, 0.0]),
    "insertion.outlet_hi": ("x", [1.0, INF, 1.0], [-1.0, 1.0, 1.0]),
    "insertion.outlet_start": ("x", INF, -1.0),
}
#: broad-phase parameters of the wrong type or value (the issue's cases among them)
BROADPHASE_PARAMS = [
    ("linked_cells", "cell_size", "abc"), ("linked_cells", "cell_size", True),
    ("linked_cells", "max_cells", "x"), ("linked_cells", "max_candidates", "x"),
    ("linked_cells", "max_cells", 2.5), ("linked_cells", "max_cells", 0),
    ("linked_cells", "cell_size", 0.01), ("linked_cells", "bogus", 3),
    ("hash_grid", "hierarchy_factor", False), ("hash_grid", "update", 3),
    ("hash_grid", "initial_cells_per_axis", 6), ("octree", "max_depth", "deep"),
    ("compact_hash", "table_factor", INF), ("spatial_hash", "table_size", -4),
    ("zindex_sort", "lookup", "guess"), ("brute", "cell_size", 1.0),
]


def _case(field: str, value) -> dict:
    doc = {"steps": 5}
    if field.startswith(("box.", "particles.")):
        doc = {"steps": 5, "box": dict(SPHERE["box"]), "particles": dict(SPHERE["particles"])}
    if field.startswith("insertion."):
        doc["insertion"] = dict(POUR)
        if field == "insertion.outlet_hi":
            doc["insertion"]["outlet_lo"] = [0.0, 0.0, 0.0]
    if "." in field:
        table, key = field.split(".")
        doc.setdefault(table, {})[key] = value
    else:
        doc[field] = value
    return doc


CASES = [(f, kind, v) for f, values in FIELDS.items()
         for kind, v in zip(("wrong type", "non-finite", "out of range"), values)
         if v is not None] + [
    ("insertion.rate", "huge", 1e300),  # a count owed beyond 64-bit integers (a traceback)
]


@pytest.mark.parametrize("field,kind,value", CASES, ids=[f"{f}-{k}" for f, k, _ in CASES])
def test_config_field(tmp_path, cli, field, kind, value):
    (tmp_path / "run.toml").write_text(toml(_case(field, value)))
    before = listing(tmp_path)
    code, out, err = cli(["run", "run.toml", "--no-progress", "--snapshot-every", "1",
                          "--output", "out"])
    assert_user_error(code, err, field)
    assert listing(tmp_path) == before  # nothing written


GLASS = '[[materials]]\nname = "glass"\n'
STEEL = '[[materials]]\nname = "steel"\nyoungs_modulus = 2e8\n'
SPHERE_TOML = ("steps = 5\n[box]\nlo = [0.0, 0.0, 0.0]\nhi = [1.0, 1.0, 1.0]\n"
               "[particles]\npositions = [[0.5, 0.5, 0.5]]\nradii = [0.1]\n")
#: several materials (pdyn.dynamics.materials): (the TOML after the sphere, the needles)
MATERIAL_CASES = {
    "unknown sphere material": ('material = "wood"\n' + GLASS,
                                ("particles.material", "'wood'", "unknown material")),
    "one name per sphere": ('material = ["glass", "glass"]\n' + GLASS,
                            ("particles.material", "one per sphere")),
    "no materials": ('material = "glass"\n', ("particles.material", "no [[materials]]")),
    "duplicate name": (GLASS + GLASS, ("materials[1].name", "'glass'", "duplicate")),
    "unknown box material": (GLASS, ("box.material", "'wood'")),
    "unknown wall material": (GLASS + '[[walls]]\ntype = "plane"\npoint = [0, 0, 0.2]\n'
                              'normal = [0, 0, 1]\nmaterial = "wood"\n',
                              ("walls[0].material", "'wood'")),
    "unknown feed material": (GLASS + '[[insertion]]\nregion_lo = [0.1, 0.1, 0.6]\n'
                              'region_hi = [0.9, 0.9, 0.9]\nrate = 10.0\nradius_min = 0.05\n'
                              'radius_max = 0.05\nmaterial = "wood"\n',
                              ("insertion[0].material", "'wood'")),
    "interaction names unknown": (GLASS + '[[interactions]]\nmaterials = ["glass", "wood"]\n',
                                  ("interactions[0].materials", "'wood'")),
    "interaction of one name": (GLASS + '[[interactions]]\nmaterials = ["glass"]\n',
                                ("interactions[0].materials", "two material names")),
    "pair set twice": (GLASS + STEEL + '[[interactions]]\nmaterials = ["glass", "steel"]\n'
                       '[[interactions]]\nmaterials = ["steel", "glass"]\n',
                       ("interactions[1].materials", "twice")),
    "bad material value": (GLASS + 'restitution = 2.0\n', ("materials[0].restitution", "2.0")),
    "bad pair value": (GLASS + '[[interactions]]\nmaterials = ["glass", "glass"]\n'
                       'friction = -1.0\n', ("interactions[0].friction", "-1.0")),
    "bad density": (GLASS + 'density = 0\n', ("materials[0].density", "0")),
    "unknown material field": (GLASS + 'colour = "red"\n', ("materials[0].colour",)),
    "name missing": ('[[materials]]\nfriction = 0.5\n', ("materials[0].name", "required")),
    "stiffness for some": ('[contact]\nlaw = "linear"\n' + GLASS + "stiffness = 1e4\n" + STEEL,
                           ("materials[1].stiffness",)),
    "too many": ("".join(f'[[materials]]\nname = "m{k}"\n' for k in range(256)),
                 ("materials", "256", "at most 255")),
}


@pytest.mark.parametrize("case", MATERIAL_CASES)
def test_material_config(tmp_path, cli, case):
    """A bad ``[[materials]]``, ``[[interactions]]`` or ``material`` name: one line naming
    the field and the value, nothing written."""
    after, needles = MATERIAL_CASES[case]
    sphere = SPHERE_TOML
    if case == "unknown box material":
        sphere = sphere.replace("[box]\n", '[box]\nmaterial = "wood"\n')
    (tmp_path / "run.toml").write_text(sphere + after)
    before = listing(tmp_path)
    code, _, err = cli(["run", "run.toml", "--no-progress", "--output", "out"])
    assert_user_error(code, err, *needles)
    assert listing(tmp_path) == before


@pytest.mark.parametrize("structure,key,value", BROADPHASE_PARAMS,
                         ids=[f"{s}-{k}-{v!r}" for s, k, v in BROADPHASE_PARAMS])
def test_broadphase_params(tmp_path, cli, structure, key, value):
    doc = {"steps": 5, "broadphase": structure, "broadphase_params": {key: value}}
    (tmp_path / "run.toml").write_text(toml(doc))
    code, _, err = cli(["run", "run.toml", "--no-progress", "--output", "out"])
    assert_user_error(code, err, key)
    assert not (tmp_path / "out").exists()


def test_bool_is_never_a_number():
    with pytest.raises(ConfigError, match="cell_size = True: expected a number"):
        SimulationConfig(broadphase="linked_cells", broadphase_params={"cell_size": True})
    with pytest.raises(ConfigError, match="particles.radii"):
        config_from_dict({"box": {}, "particles": {"positions": [[0.5, 0.5, 0.5]],
                                                   "radii": [True]}})
    # well-typed values pass
    cfg = SimulationConfig(broadphase="linked_cells", broadphase_params={"cell_size": 2,
                                                                         "max_cells": 10**6})
    assert cfg.broadphase_params["cell_size"] == 2


@pytest.mark.parametrize("content,needle", [
    (b"\xff\xfe\x00\x01garbage", "not a UTF-8 text file"),
    (bytes(range(256)) * 4, "not a UTF-8 text file"),
    ("steps = 5\nscene = 'caf\u00e9'\n".encode("latin-1"), "byte 0xe9"),
    (b"steps = 5\x00\n", "invalid TOML"),
    (b"[contact\nrestitution = 0.5\n", "invalid TOML"),
    (b"[box]\nlo = [0, 0, 0]\n[particles]\nradii = [0.1]\n", "particles.positions"),
    (b"contact = 5\n", "contact = 5"),
])
def test_unreadable_config_file(tmp_path, cli, content, needle):
    (tmp_path / "run.toml").write_bytes(content)
    code, _, err = cli(["run", "run.toml", "--no-progress"])
    assert_user_error(code, err, needle)
    assert not (tmp_path / "pdyn-output").exists()


def test_config_that_is_a_folder(tmp_path, cli):
    (tmp_path / "conf.toml").mkdir()
    code, _, err = cli(["run", "conf.toml"])
    assert_user_error(code, err, "config = 'conf.toml'", "cannot read")


# ------------------------------------------------------------------ command-line options
RUN_OPTIONS = [
    (["--scale", "abc"], "--scale"), (["--scale", "0"], "scale = 0"),
    (["--scale", "nan"], "scale = nan"), (["--scale", "1e12"], "scale = 1000000000000.0"),
    (["--steps", "1.5"], "--steps"), (["--steps", "0"], "steps = 0"),
    (["--dt", "x"], "--dt"), (["--dt", "-1"], "dt = -1"), (["--dt", "inf"], "dt = inf"),
    (["--seed", "-2"], "seed = -2"), (["--seed", "x"], "--seed"),
    (["--broadphase", "octopus"], "broadphase = 'octopus'"),
    (["--scene", "moon"], "scene = 'moon'"),
    (["--blocks", "1", "1"], "--blocks"), (["--blocks", "0", "1", "1"], "blocks[0] = 0"),
    (["--blocks", "-2", "1", "1"], "blocks[0] = -2"),
    (["--blocks", "128", "128", "128", "--scene", "gas", "--scale", "0.01"],
     "blocks = [128, 128, 128]"),
    (["--blocks", "100000", "100000", "100000"], "blocks = [100000, 100000, 100000]"),
    # the cap applies on every rank count, before the grid is allocated (also where one rank
    # would not use it: 2 ranks were killed with 12.6 GB)
    (["--blocks", "1000", "1000", "1000"], "blocks = [1000, 1000, 1000]: 1000000000 blocks "
     "for 1000 particles on 1 rank(s); at most 1000 make sense"),
    (["--blocks", "1290", "1290", "1290"], "blocks = [1290, 1290, 1290]: 2146689000 blocks"),
    (["--balance-every", "-1"], "balance_every = -1"), (["--balance-every", "x"], "--balance-every"),
    (["--snapshot-every", "-1"], "output.snapshot_every = -1"),
    (["--checkpoint-every", "-2"], "output.checkpoint_every = -2"),
    (["--output", ""], "output.folder = ''"),
    (["--allow-overlap", "--relax-overlap"], "--relax-overlap"),
    (["--restart", "nowhere.h5"], "nowhere.h5"),
    (["--wibble"], "--wibble"),
    (["--scene", "schornbaum", "--dt", "100"], "step 1: particle"),
]


@pytest.mark.parametrize("args,needle", RUN_OPTIONS, ids=[" ".join(a) for a, _ in RUN_OPTIONS])
def test_run_option(tmp_path, cli, args, needle):
    code, out, err = cli(["run", "--no-progress", "--steps", "3", *args])
    assert_user_error(code, err, needle)
    assert listing(tmp_path) == {}


@pytest.mark.parametrize("args,needle", [
    (["render", "x.h5", "--size", "-10", "-10"], "--size = -10 -10"),
    (["render", "x.h5", "--size", "0", "900"], "--size = 0 900"),
    (["render", "x.h5", "--size", "100000", "100"], "--size = 100000 100"),
    (["render", "x.h5", "--size", "10"], "--size"),
    (["render", "x.h5", "--color", "mauve"], "--color"),
    (["render", "nowhere.h5"], "nowhere.h5: no such file"),
    (["render", "."], "no snapshot in this folder"),
    (["info", "nowhere.h5"], "nowhere.h5: no such file"),
    (["info", "."], "is a folder"),
    (["info"], "file"),
    (["bench", "--steps", "0"], "steps = 0"),
    (["bench", "--scale", "-1"], "scale = -1"),
    (["bench", "--scale", "1e12"], "scale = 1000000000000.0"),
    (["bench", "--scene", "moon"], "scene = 'moon'"),
    (["bench", "--structures", "nope"], "structures = 'nope'"),
    (["scenes", "--extra"], "--extra"),
    ([], "command"),
    (["explode"], "explode"),
])
def test_other_option(tmp_path, cli, args, needle):
    code, _, err = cli(args)
    assert_user_error(code, err, needle)
    assert listing(tmp_path) == {}


def test_debug_adds_the_traceback(tmp_path, cli):
    code, _, err = cli(["run", "--debug", "--steps", "0"])
    assert code == 2 and "Traceback" in err and err.strip().endswith("must be >= 1")
    code, _, err = cli(["--debug", "run", "--steps", "0"])
    assert code == 2 and "Traceback" in err


def test_blocks_on_one_rank_are_explained(tmp_path, cli):
    code, out, err = cli(["run", "--no-progress", "--steps", "2", "--scale", "0.05",
                          "--blocks", "2", "2", "2"])
    assert code == 0 and err == ""
    assert "blocks = [2, 2, 2] has no effect on one rank without a periodic axis" in out
    code, out, err = cli(["run", "--no-progress", "--steps", "2", "--scene", "gas",
                          "--scale", "0.01", "--blocks", "2", "2", "2"])
    assert code == 0 and "has no effect" not in out  # periodic: the blocks are used


def test_allow_large_dt_without_dt_is_explained(tmp_path, cli):
    """--allow-large-dt only allows a given dt above the limit: without one it has no effect,
    and a note says so (it was accepted silently)."""
    code, out, err = cli(["run", "--no-progress", "--steps", "2", "--scale", "0.05",
                          "--allow-large-dt", "--snapshot-every", "0"])
    assert code == 0 and err == ""
    assert "pdyn: note: allow_large_dt = true has no effect without a dt (the default dt = " \
           "0.0002478 s is the time-step limit itself)" in out
    code, out, _ = cli(["run", "--no-progress", "--steps", "2", "--scale", "0.05",
                        "--allow-large-dt", "--dt", "1e-4", "--snapshot-every", "0"])
    assert code == 0 and "allow_large_dt" not in out


def test_youngs_modulus_zero_names_the_field(tmp_path, cli):
    (tmp_path / "run.toml").write_text("steps = 5\n[contact]\nyoungs_modulus = 0\n")
    code, _, err = cli(["run", "run.toml", "--no-progress"])
    assert_user_error(code, err, "contact.youngs_modulus = 0.0", "give dt")


# ------------------------------------------------------------------ output folders
def _snapshots_is_a_file(d):
    (d / "out").mkdir()
    (d / "out" / "snapshots").write_text("x")


def _checkpoints_is_a_file(d):
    (d / "out").mkdir()
    (d / "out" / "checkpoints").write_text("x")


def _xmf_is_a_folder(d):
    (d / "out" / "snapshots.xmf").mkdir(parents=True)


def _folder_is_a_file(d):
    (d / "out").write_text("x")


def _below_a_file(d):
    (d / "file").write_text("x")
    return "file/out"


def _broken_link(d):
    (d / "out").symlink_to(d / "missing")


def _snapshots_broken_link(d):
    (d / "out").mkdir()
    (d / "out" / "snapshots").symlink_to(d / "missing")


def _earlier_run(d):
    (d / "out" / "snapshots").mkdir(parents=True)
    (d / "out" / "snapshots" / "snap_00000010.h5").write_text("x")


FOLDER_FAULTS = {
    "snapshots is a file": (_snapshots_is_a_file, "its 'snapshots' is a file"),
    "checkpoints is a file": (_checkpoints_is_a_file, "its 'checkpoints' is a file"),
    "snapshots.xmf is a folder": (_xmf_is_a_folder, "its 'snapshots.xmf' is a folder"),
    "folder is a file": (_folder_is_a_file, "not a folder"),
    "below a file": (_below_a_file, "is a file"),
    "broken symbolic link": (_broken_link, "broken symbolic link"),
    "snapshots a broken link": (_snapshots_broken_link, "broken symbolic link"),
    "earlier run": (_earlier_run, "--overwrite"),
    # tracebacks of the file system calls, before they were checked
    "a NUL character": (lambda d: "out\0x", "holds a NUL character"),
    "a name of 300 characters": (lambda d: "runs/" + "a" * 300, "longer than 255 bytes"),
}


@pytest.mark.parametrize("fault", FOLDER_FAULTS)
def test_output_folder_fault(tmp_path, cli, fault):
    make, needle = FOLDER_FAULTS[fault]
    folder = make(tmp_path) or "out"
    before = listing(tmp_path)
    code, _, err = cli(["run", "--no-progress", "--steps", "2", "--scale", "0.05",
                        "--snapshot-every", "1", "--checkpoint-every", "1", "--output", folder])
    assert_user_error(code, err, "output.folder", needle)
    assert listing(tmp_path) == before


@pytest.mark.parametrize("command,option", [("bench", "--json"), ("render", "--out")])
@pytest.mark.parametrize("fault", ["a folder", "below a file"])
def test_output_file_fault(tmp_path, cli, command, option, fault):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    target = "folder" if fault == "a folder" else "file/x.out"
    args = (["bench", "--scale", "0.01", "--steps", "1", "--structures", "brute"]
            if command == "bench" else ["render", "nowhere.h5"])
    before = listing(tmp_path)
    code, out, err = cli([*args, option, target])
    assert_user_error(code, err, option, target)
    assert listing(tmp_path) == before


def test_bench_json_into_a_new_folder(tmp_path, cli):
    code, _, err = cli(["bench", "--scale", "0.01", "--steps", "1", "--structures", "brute",
                        "--json", "new/rows.json"])
    assert code == 0, err
    assert json.loads((tmp_path / "new" / "rows.json").read_text())[0]["structure"] == "brute"


@pytest.fixture
def readonly_mount(tmp_path):
    with tmpfs(tmp_path / "ro", "ro,size=1m") as where:
        yield where


def test_read_only_output_folder(tmp_path, cli, readonly_mount):
    code, _, err = cli(["run", "--no-progress", "--steps", "2", "--scale", "0.05",
                        "--output", readonly_mount / "out"])
    assert_user_error(code, err, "output.folder", "not writable")
    assert listing(readonly_mount) == {}


# ------------------------------------------------------------------ initial state
def _spheres(positions, radii, boundary=("wall",) * 3, hi=(4.0, 4.0, 4.0)):
    return {"steps": 20, "dt": 1e-4, "gravity": [0.0, 0.0, 0.0],
            "box": {"lo": [0.0, 0.0, 0.0], "hi": list(hi), "boundary": list(boundary)},
            "particles": {"positions": positions, "radii": radii, "density": 1000.0},
            "contact": {"youngs_modulus": 1e6}}


INITIAL_STATES = {
    "coincident centres": (_spheres([[1, 1, 1], [1, 1, 1], [3, 3, 3]], [0.5, 0.5, 0.5]),
                           "particles 0 and 1 overlap by 1 m"),
    "overlapping pair": (_spheres([[3, 3, 3], [1, 1, 1], [1.8, 1, 1]], [0.5, 0.5, 0.5]),
                         "particles 1 and 2 overlap by 0.2 m"),
    "across a periodic face": (_spheres([[0.1, 2, 2], [3.8, 2, 2]], [0.4, 0.4],
                                        boundary=("periodic", "wall", "wall")),
                               "particles 0 and 1 overlap by 0.5 m"),
    "overlapping a wall": (_spheres([[2, 2, 2], [0.3, 2, 2]], [0.5, 0.5]),
                           "particle 1 overlaps the wall x = 0 by 0.2 m"),
    "wider than the box": (_spheres([[2, 2, 2]], [2.5]), "particles.radii[0] = 2.5"),
    "outside the box": (_spheres([[2, 2, 2], [5, 2, 2]], [0.5, 0.5]),
                        "particles.positions[1] = [5.0, 2.0, 2.0]: outside the box"),
    "outside on an open axis": (_spheres([[2, 2, 2], [2, 2, -3]], [0.5, 0.5],
                                         boundary=("wall", "wall", "open")),
                                "particles.positions[1]"),
}


@pytest.mark.parametrize("case", INITIAL_STATES)
def test_initial_state_refused(tmp_path, cli, case):
    doc, needle = INITIAL_STATES[case]
    (tmp_path / "run.toml").write_text(toml(doc))
    before = listing(tmp_path)
    code, _, err = cli(["run", "run.toml", "--no-progress", "--snapshot-every", "1",
                        "--output", "out"])
    assert_user_error(code, err, needle)
    assert listing(tmp_path) == before


@pytest.mark.parametrize("scene", ["drop", "drum"])  # generated per cell, and of arrays
def test_a_scene_in_a_box_of_ones_own_is_named(tmp_path, cli, scene):
    """A ``[box]`` without ``[particles]`` replaces a named scene's box, not its spheres: the
    error says whose spheres lie outside and how to start empty."""
    doc = {"scene": scene, "scale": 0.05, "box": {"lo": [0, 0, 0], "hi": [0.01, 0.01, 0.01]}}
    (tmp_path / "run.toml").write_text(toml(doc))
    code, _, err = cli(["run", "run.toml", "--no-progress", "--output", "out"])
    assert_user_error(code, err, f"scene {scene!r}: particles.positions[",
                      "[box] replaces the scene's box, not its spheres", "positions = []")
    assert not (tmp_path / "out").exists()


def test_overlap_within_tolerance_is_accepted(tmp_path, cli):
    doc = _spheres([[1, 1, 1], [1.999, 1, 1]], [0.5, 0.5])  # 0.2 % of the radius
    (tmp_path / "run.toml").write_text(toml(doc))
    assert cli(["run", "run.toml", "--no-progress"])[0] == 0
    doc["overlap_tolerance"] = 0.001
    (tmp_path / "run.toml").write_text(toml(doc))
    code, _, err = cli(["run", "run.toml", "--no-progress"])
    assert_user_error(code, err, "particles 0 and 1 overlap", "tolerance 0.001")


def test_allow_overlap_runs_anyway(tmp_path, cli):
    doc, _ = INITIAL_STATES["coincident centres"]
    (tmp_path / "run.toml").write_text(toml(doc))
    code, out, err = cli(["run", "run.toml", "--no-progress", "--allow-overlap"])
    assert code == 0, err
    doc["initial_overlap"] = "allow"
    (tmp_path / "run.toml").write_text(toml(doc))
    assert cli(["run", "run.toml", "--no-progress"])[0] == 0


@pytest.mark.parametrize("case", ["coincident centres", "overlapping pair",
                                  "across a periodic face", "overlapping a wall"])
def test_relax_overlap_pushes_spheres_apart(case):
    from pdyn.simulation import Simulation

    doc, _ = INITIAL_STATES[case]
    sim = Simulation(config_from_dict(dict(doc, initial_overlap="relax", progress=False)))
    assert "relaxed the initial overlaps" in sim.setup_note
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    pos, rad = s.pos[h], s.radius[h]
    for i, j in sim.contact_pairs():  # what touches overlaps by at most half the tolerance
        gap = np.linalg.norm(pos[i] - pos[j]) if case != "across a periodic face" else \
            np.linalg.norm(pos[i] - pos[j] - np.array([sim.box.length[0], 0, 0]))
        assert rad[i] + rad[j] - gap <= 0.005 * min(rad[i], rad[j]) + 1e-12
    lo, hi = sim.box.lo, sim.box.hi
    for a, kind in enumerate(sim.box.boundary):
        if kind == "wall":
            assert (pos[:, a] - rad >= lo[a] - 1e-12).all() and (pos[:, a] + rad <= hi[a]).all()
    assert np.allclose(s.vel[h], 0.0)  # velocities untouched


def test_relax_gives_up_when_too_dense():
    from pdyn.checks import InitialStateError
    from pdyn.simulation import Simulation

    rng = np.random.default_rng(1)
    doc = _spheres(rng.uniform(0.5, 1.5, (40, 3)).tolist(), [0.5] * 40, hi=(2.0, 2.0, 2.0))
    with pytest.raises(InitialStateError, match="still overlap .* relaxation sweeps"):
        Simulation(config_from_dict(dict(doc, initial_overlap="relax", progress=False)))


def test_relax_on_the_command_line(tmp_path, cli):
    doc, _ = INITIAL_STATES["overlapping pair"]
    (tmp_path / "run.toml").write_text(toml(doc))
    code, out, err = cli(["run", "run.toml", "--no-progress", "--relax-overlap"])
    assert code == 0, err
    assert "pdyn: relaxed the initial overlaps" in out


def test_builtin_scenes_pass_the_initial_checks():
    """The Koch scenes, box, drop and gas are placed without overlaps; schornbaum overlaps on
    purpose and runs because it has no contact forces."""
    from pdyn.checks import initial_state
    from pdyn.domain import Box
    from pdyn.scenarios import SCENES, make_scene
    from pdyn.initial import scene_particles

    for name in SCENES:
        scene = make_scene(name, scale=0.002 if name == "checkerboard" else 0.02)
        box = Box(scene.box_lo, scene.box_hi, scene.boundary)
        c = ContactConfig(**scene.contact)
        forces = c.youngs_modulus > 0 or bool(c.stiffness)
        if name == "schornbaum":
            assert not forces
            with pytest.raises(ValueError, match="overlap"):
                initial_state(scene_particles(scene), box, contact_forces=True)
        initial_state(scene_particles(scene), box, contact_forces=forces)


def test_scene_sizes_match_the_memory_table():
    from pdyn.scenarios import SIZES, make_scene

    for name, n in SIZES.items():
        scale = 0.002 if name == "checkerboard" else 0.05
        scene = make_scene(name, scale=scale)
        count = len(scene) + scene.insertion.get("total", 0)  # heap: the spheres poured
        assert abs(count - n * scale) <= 0.03 * n * scale + 1


def test_memory_estimate_refuses_before_allocating(monkeypatch):
    from pdyn import scenarios

    monkeypatch.setattr(scenarios, "available_memory", lambda: 10 * 2**20)  # 10 MiB
    with pytest.raises(scenarios.SceneError, match=r"about 2e\+04 particles .* 0.00977 GiB"):
        scenarios.make_scene("drop", scale=20)
    scenarios.make_scene("drop", scale=0.01)  # 10 spheres fit


def test_memory_estimate_counts_friction(monkeypatch):
    """A run with friction holds spin, torque and contact history: the estimate is larger, and
    a config with friction reaches the check through the simulation's scene."""
    from pdyn import scenarios
    from pdyn.config import ContactConfig, SimulationConfig
    from pdyn.initial import scene_from_config

    n = scenarios.SIZES["drop"] * 10  # 10 000 spheres: 6.0 MB, 14.5 MB with friction
    monkeypatch.setattr(scenarios, "available_memory", lambda: 10 * 2**20)  # 10 MiB
    scenarios.make_scene("drop", scale=10)
    with pytest.raises(scenarios.SceneError, match=r"\(1450 B each\)"):
        scenarios.make_scene("drop", scale=10, rotating=True)
    scene_from_config(SimulationConfig(scene="drop", scale=10))
    for contact in (ContactConfig(friction=0.5), ContactConfig(rolling_friction=0.1)):
        with pytest.raises(scenarios.SceneError, match="1450 B each"):
            scene_from_config(SimulationConfig(scene="drop", scale=10, contact=contact))
    assert n * scenarios.BYTES_PER_PARTICLE < 10 * 2**20 < n * 1450


def test_blocks_sized_against_particles():
    from pdyn.domain import Box, BlockGrid, DecompositionError

    box = Box(np.zeros(3), np.ones(3), ("periodic",) * 3)
    g = BlockGrid(box, (8, 8, 8))  # 512 blocks
    g.assign(np.full(512, 1.0), 1)  # one particle per block: fine
    with pytest.raises(DecompositionError, match="512 blocks for 50 particles on 1 rank"):
        g.assign(np.r_[np.full(50, 1.0), np.zeros(462)], 1)
    g.assign(np.zeros(512), 8)  # 64 per rank are always allowed


# ------------------------------------------------------------------ memory and pouring limits
class _Node:
    """A communicator stand-in: ``size`` ranks, ``node_size`` of them on each node."""

    def __init__(self, size, node_size):
        self.size, self.node_size = size, node_size


def test_memory_estimate_is_the_nodes(monkeypatch):
    """Each of 4 ranks holds a quarter of the particles, but a node with all 4 holds all of
    them: the estimate compares what the node's ranks need together with its memory (it used
    to compare one rank's share, so 4 ranks accepted 4 times what fits)."""
    from pdyn import scenarios
    from pdyn.checks import MemoryEstimateError, check_memory, node_memory
    from pdyn.config import SimulationConfig
    from pdyn.domain import Box

    box = Box(np.zeros(3), np.full(3, 10.0), ("wall",) * 3)
    cfg = SimulationConfig(scale=1000.0)  # 10^6 particles: 572 MiB
    need = 10**6 * scenarios.BYTES_PER_PARTICLE
    for ranks, on_node in ((1, 1), (4, 1), (4, 4), (64, 4)):
        check_memory((on_node, 1.2 * need * on_node / ranks), ranks, box, cfg,
                     particles=10**6, rotating=False)
        with pytest.raises(MemoryEstimateError, match=r"scale = 1000.0: the run would need "
                           rf"about 0.\d+ GiB on a node .*; {on_node} of the {ranks} rank"):
            check_memory((on_node, 0.8 * need * on_node / ranks), ranks, box, cfg,
                         particles=10**6, rotating=False)
    monkeypatch.setattr(scenarios, "available_memory", lambda: 12345.0)
    assert node_memory(_Node(1, 1)) == (1, 12345.0)


def test_memory_estimate_counts_the_block_grid_and_the_pour():
    """The block grid (on every rank) and an insertion (the spheres it may pour, the
    candidates of a step) are in the one estimate, each named when it dominates."""
    from dataclasses import replace

    from pdyn.checks import MemoryEstimateError, check_memory
    from pdyn.config import InsertionConfig, SimulationConfig
    from pdyn.domain import Box
    from pdyn.dynamics.insertion import Inserter

    box = Box(np.zeros(3), np.full(3, 10.0), ("periodic",) * 3)
    cfg = SimulationConfig(scale=1.0, blocks=(32, 32, 32))  # on 512 ranks: 64 a rank
    with pytest.raises(MemoryEstimateError, match=r"^blocks = \[32, 32, 32\]: .*32768 blocks"):
        check_memory((1, 5e6), 512, box, cfg, particles=32768, rotating=False)
    check_memory((1, 50e6), 512, box, cfg, particles=32768, rotating=False)
    pour = InsertionConfig(region_lo=(0, 0, 0), region_hi=(1, 1, 1), rate=1e12,
                           radius_min=0.01, radius_max=0.02)  # without a total, into 10^3 m^3
    inserter = Inserter(vars(pour), 0)
    cfg = SimulationConfig(scale=1.0, insertion=pour)
    with pytest.raises(MemoryEstimateError, match=r"^insertion.total = 0: .* up to "
                       r"176776695 poured"):
        check_memory((1, 1e9), 1, box, cfg, particles=0, rotating=False, inserter=inserter)
    inserter = Inserter(vars(replace(pour, region_hi=(10, 10, 10), total=1000)), 0)
    with pytest.raises(MemoryEstimateError, match=r"^insertion.region_hi = \[10.0, 10.0, "
                       r"10.0\]: .* 707106780 insertion candidates a step"):
        check_memory((1, 1e9), 1, box, cfg, particles=0, rotating=False, inserter=inserter)


def test_huge_block_grid_is_refused_before_it_is_allocated(monkeypatch):
    """``--blocks 400 400 400`` used to be refused only after 1.2 GB of block arrays."""
    from pdyn import domain
    from pdyn.config import SimulationConfig
    from pdyn.simulation import Simulation

    made = []
    real = domain.BlockGrid.__init__
    monkeypatch.setattr(domain.BlockGrid, "__init__",
                        lambda self, box, dims: (made.append(dims), real(self, box, dims)))
    cfg = SimulationConfig(scene="gas", scale=0.01, blocks=(400, 400, 400), progress=False)
    with pytest.raises(domain.DecompositionError, match=r"64000000 blocks for 1000 particles"):
        Simulation(cfg)
    assert made == []


@pytest.mark.parametrize("rate", [1e12, 1e6])
def test_a_rate_the_region_cannot_take(tmp_path, cli, rate):
    """rate = 1e12 used to allocate 1.18 TiB of candidates (a traceback), rate = 1e6 into a
    small region drew ever more candidates (the owed count grows): an insertion step draws
    candidates for at most the spheres the region can hold, and pours that many at most."""
    from pdyn.dynamics.insertion import TRIES, Inserter

    doc = {"scene": "heap", "scale": 0.05, "steps": 300,
           "insertion": dict(POUR, region_lo=[0.5, 0.5, 1.0], region_hi=[1.5, 1.5, 2.0],
                             rate=rate, every=10)}
    (tmp_path / "run.toml").write_text(toml(doc))
    code, out, err = cli(["run", "run.toml", "--no-progress", "--snapshot-every", "0"])
    assert code == 0 and err == "", err
    assert f"pdyn: note: insertion.rate = {rate!r}: " in out and "the region can hold" in out
    ins = Inserter(dict(doc["insertion"], density=2500.0, velocity=(0, 0, 0), total=0,
                        seed=0, outlet_lo=None), 0)
    assert 0 < ins.capacity < 1000
    pos, r, quota = ins.candidates(1.0)
    assert quota == int(rate) and len(r) == len(pos) == TRIES * ins.capacity


def test_outlet_outside_the_box(tmp_path, cli):
    """An outlet wholly outside the box would never remove a sphere: one line."""
    doc = {"scene": "heap", "scale": 0.05, "steps": 5,
           "insertion": dict(POUR, region_lo=[0.5, 0.5, 1.0], region_hi=[1.5, 1.5, 2.0],
                             outlet_lo=[0.0, 0.0, -3.0], outlet_hi=[8.0, 8.0, -1.0])}
    (tmp_path / "run.toml").write_text(toml(doc))
    code, _, err = cli(["run", "run.toml", "--no-progress", "--output", "out"])
    assert_user_error(code, err, "insertion.outlet_lo = [0.0, 0.0, -3.0]: the outlet ..[8.0, "
                      "8.0, -1.0] lies outside the box", "never remove a sphere")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ STL special files, scales
def _floor_stl(d):
    from pdyn.stl import write_stl

    tri = np.array([[[-5, -5, -1], [5, -5, -1], [5, 5, -1]], [[-5, -5, -1], [5, 5, -1],
                                                               [-5, 5, -1]]], float)
    write_stl(d / "floor.stl", tri)
    return "floor.stl"


def _fifo(d):
    import os

    os.mkfifo(d / "pipe.stl")
    return "pipe.stl"


def _folder(d):
    (d / "folder.stl").mkdir()
    return "folder.stl"


MESH_FAULTS = {
    # (the file, the wall's other fields, needles); a FIFO hung waiting for a writer,
    # /dev/zero read until memory ran out, an absurd scale printed numpy warnings
    "a FIFO": (_fifo, "", ("walls[0].file", "not a regular file (a FIFO)")),
    "/dev/zero": (lambda d: "/dev/zero", "", ("walls[0].file", "a character device")),
    "a folder": (_folder, "", ("walls[0].file", "a folder")),
    "scale 1e300": (_floor_stl, "scale = 1e300", ("walls[0].scale = 1e+300", "must be in")),
    "scale 1e-300": (_floor_stl, "scale = 1e-300", ("walls[0].scale = 1e-300", "must be in")),
}


class TestMeshFileFaults:
    """A mesh wall's ``file`` that is not a regular file is refused before it is read, and a
    scale no file's units need is refused: one line naming the field, exit 2, nothing written
    (the test's alarm turns a hang into a failure)."""

    @pytest.mark.parametrize("fault", MESH_FAULTS)
    def test_one_line(self, tmp_path, cli, fault):
        import signal

        make, extra, needles = MESH_FAULTS[fault]
        name = make(tmp_path)
        (tmp_path / "run.toml").write_text(
            f'scene = "drop"\nscale = 0.05\n[[walls]]\ntype = "mesh"\nfile = "{name}"\n{extra}\n')
        before = listing(tmp_path)

        def hang(*_):
            raise TimeoutError(f"{fault}: no answer within 60 s (a hang)")

        old = signal.signal(signal.SIGALRM, hang)
        signal.alarm(60)
        try:
            code, _, err = cli(["run", "run.toml", "--steps", "2", "--no-progress",
                                "--output", "out"])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        assert_user_error(code, err, *needles)
        assert listing(tmp_path) == before


# ------------------------------------------------------------------ fast walls (issue 44)
class TestFastWalls:
    """A wall whose surface approaches the spheres more than half the skin a step, or faster
    than the softest sphere stops within a tenth of its radius, is refused at start-up: one
    line naming the wall, its speed and the limit, exit 2, nothing written (every kind that
    can approach: plate and paddle meshes, plane, tube, cone, infinite cylinder; the scenes
    of ``tests/fast_walls.py``). Below both limits, with ``allow_fast = true``, or moving
    within its own surface (a conveyor, a drum, a turning cone) at any speed, it runs."""

    @pytest.mark.parametrize("kind", fast_walls.APPROACHING)
    @pytest.mark.parametrize("per_step, needles", [
        (0.2, ("approaches the spheres at 12.5 m/s", "stops it only after an overlap of about",
               "more than 0.1 (the limit is 0.9772 m/s)")),
        (3.0, ("approaches the spheres by 0.15 m a step (187.5 m/s at dt = 0.0008 s), more "
               "than half the neighbour skin 0.015 m",))])
    def test_refused(self, tmp_path, cli, kind, per_step, needles):
        (tmp_path / "run.toml").write_text(toml(fast_walls.doc(kind, per_step)))
        before = listing(tmp_path)
        code, _, err = cli(["run", "run.toml", "--no-progress", "--output", "out",
                            "--snapshot-every", "1"])
        assert_user_error(code, err, "walls[0] (", *needles,
                          "set allow_fast = true in walls[0] to run it anyway")
        assert listing(tmp_path) == before

    @pytest.mark.parametrize("kind", ["plate", "plane", "tube", "cone"])
    def test_allow_fast_must_be_true_or_false(self, tmp_path, cli, kind):
        doc = fast_walls.doc(kind, 0.01)
        doc["walls"][0]["allow_fast"] = "yes"
        (tmp_path / "run.toml").write_text(toml(doc))
        code, _, err = cli(["run", "run.toml", "--no-progress"])
        assert_user_error(code, err, "walls[0].allow_fast")

    @pytest.mark.parametrize("kind", fast_walls.APPROACHING)
    def test_below_the_limits_or_allowed_it_runs(self, kind):
        from pdyn.simulation import Simulation

        Simulation(fast_walls.config(kind, 0.01))  # 0.625 m/s: below both limits
        Simulation(fast_walls.config(kind, 3.0, allow_fast=True))

    @pytest.mark.parametrize("kind", fast_walls.WITHIN)
    def test_motion_within_the_surface_is_never_refused(self, kind):
        from pdyn.simulation import Simulation

        Simulation(fast_walls.config(kind, 3.0)).run(20)  # 187.5 m/s along its surface

    def test_hertz_limit_is_its_closed_form(self, tmp_path, cli):
        """Hertz: the approach the softest sphere stops within 0.1 r, where the elastic
        energy 8/15 E* √r δ^(5/2) equals m V²/2, E* = E / (2 (1 − ν²))."""
        doc = fast_walls.doc("plane", 0.2)
        doc["contact"] = {"law": "hertz", "youngs_modulus": 1e7, "poisson_ratio": 0.3,
                          "restitution": 0.5}
        doc["dt"] = 1e-4
        (tmp_path / "run.toml").write_text(toml(doc))
        r = fast_walls.R
        e_star = 1e7 / (2.0 * (1.0 - 0.3**2))
        mass = 2500.0 * 4.0 / 3.0 * math.pi * r**3
        limit = math.sqrt(2.0 * 8.0 / 15.0 * e_star * math.sqrt(r) * (0.1 * r) ** 2.5 / mass)
        code, _, err = cli(["run", "run.toml", "--no-progress"])
        assert_user_error(code, err, "walls[0] (plane)", f"(the limit is {limit:.4g} m/s)")


class TestRelaxOutOfWalls:
    """A sphere started through a configured wall of any kind is refused with the hint to
    relax; ``initial_overlap = "relax"`` moves it out along the wall's normal until it just
    touches it (a half-space: onto the spheres' side), and the run starts."""

    BOX = {"lo": [0.0, 0.0, 0.0], "hi": [4.0, 4.0, 4.0]}
    WALLS = {  # (wall, centre of a sphere of radius 0.2 through it)
        "plane": ({"type": "plane", "point": [0, 0, 0.5], "normal": [0, 0, 1]},
                  [2.0, 2.0, 0.45]),
        "cylinder": ({"type": "cylinder", "point": [2, 2, 0], "axis": [0, 0, 1],
                      "radius": 1.0}, [2.9, 2.0, 2.0]),
        "tube": ({"type": "cylinder", "point": [2, 2, 2], "axis": [0, 0, 1], "radius": 1.0,
                  "length": 2.0}, [3.05, 2.0, 2.0]),
        "cone": ({"type": "cone", "point": [2, 2, 2], "axis": [0, 0, 1], "radius_lo": 0.5,
                  "radius_hi": 1.5, "lo": -1.0, "hi": 1.0}, [2.9, 2.0, 2.0]),
        "mesh": ({"type": "mesh", "vertices": [[0, 0, 1], [4, 0, 1], [4, 4, 1], [0, 4, 1]],
                  "triangles": [[0, 1, 2], [0, 2, 3]]}, [2.0, 2.0, 1.1]),
    }

    def _doc(self, kind):
        wall, centre = self.WALLS[kind]
        doc = _spheres([[2.0, 2.3, 3.6], centre], [0.2, 0.2])
        doc["walls"] = [wall]
        return doc

    @pytest.mark.parametrize("kind", WALLS)
    def test_refused_recommending_relax(self, tmp_path, cli, kind):
        (tmp_path / "run.toml").write_text(toml(self._doc(kind)))
        code, _, err = cli(["run", "run.toml", "--no-progress"])
        assert_user_error(code, err, "particle 1 overlaps the wall walls[0]", "--relax-overlap")

    @pytest.mark.parametrize("kind", WALLS)
    def test_relax_moves_it_out(self, tmp_path, cli, kind):
        from pdyn.checks import _wall_overlaps
        from pdyn.simulation import Simulation

        sim = Simulation(config_from_dict(dict(self._doc(kind), initial_overlap="relax")))
        assert "relaxed the initial overlaps" in sim.setup_note
        s = sim.store
        h = s.owned[np.argsort(s.gid[s.owned])]
        over, _ = _wall_overlaps(s.pos[h], s.radius[h], sim.box)
        assert over.max() <= 0.005 * 0.2
        assert over[1, -1] > -1e-9  # touching the wall it was in (moved its overlap, no more)
        if kind == "plane":
            assert s.pos[h[1], 2] == pytest.approx(0.7)  # onto the spheres' side
        (tmp_path / "run.toml").write_text(toml(self._doc(kind)))
        code, out, err = cli(["run", "run.toml", "--no-progress", "--relax-overlap"])
        assert code == 0, err
