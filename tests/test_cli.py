"""The command line: default run, TOML configs, and one-line errors for every bad input."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pdyn.config import ConfigError, config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--scale", "0.05", "--steps", "20", "--no-progress"]


def write(tmp_path, text, name="run.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_default_run_writes_snapshots_and_summary(tmp_path, cli):
    code, out, err = cli(["run", *SMALL, "--snapshot-every", "10"])
    assert code == 0, err
    assert "scene 'drop'" in out and "steps/s" in out
    snaps = sorted((tmp_path / "pdyn-output" / "snapshots").glob("*.h5"))
    assert [p.name for p in snaps][-1].endswith("00000020.h5")


def test_short_run_says_nothing_was_written(tmp_path, cli):
    code, out, err = cli(["run", *SMALL])  # 20 steps < 500
    assert code == 0, err
    assert "nothing written" in out and "--snapshot-every" in out


def test_second_run_needs_overwrite(tmp_path, cli):
    args = ["run", *SMALL, "--snapshot-every", "10"]
    assert cli(args)[0] == 0
    code, _, err = cli(args)
    assert code == 2 and "output.folder" in err and "--overwrite" in err
    assert cli(args + ["--overwrite"])[0] == 0


@pytest.mark.parametrize("name", ["drop.toml", "heap.toml", "cohesive_heap.toml"])
def test_example_config_runs(tmp_path, cli, name):
    cfg = ROOT / "examples" / name
    code, out, err = cli(["run", str(cfg), "--steps", "10", "--no-progress",
                          "--output", str(tmp_path / "o")])
    assert code == 0, err


def test_scenes_lists_every_scene(tmp_path, cli):
    from pdyn.scenarios import SCENES

    code, out, _ = cli(["scenes"])
    assert code == 0 and all(name in out for name in SCENES)


BAD_TOML = [
    ("steps = 0", "steps = 0"),
    ("steps = -5", "steps = -5"),
    ("scale = nan", "scale = nan"),
    ("dt = inf", "dt = inf"),
    ("broadphase = 'kd_forest'", "broadphase = 'kd_forest'"),
    ("wibble = 1", "wibble = 1"),
    ("scene = 'nowhere'", "scene = 'nowhere'"),
    ("[contact]\nrestitution = 1.5", "contact.restitution = 1.5"),
    ("[contact]\nyoungs_modulus = -1.0", "contact.youngs_modulus = -1.0"),
    ("[contact]\nfoo = 1", "contact.foo = 1"),
    ("[output]\nsnapshot_every = -1", "output.snapshot_every = -1"),
    ("broadphase = 'linked_cells'\n[broadphase_params]\ncell_size = 0.01", "cell_size = 0.01"),
    ("broadphase = 'linked_cells'\n[broadphase_params]\nbogus = 3", "bogus"),
    ("this is = not toml [", "invalid TOML"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[0.5, 0.5, 0.5]]\n"
     "radii = [-0.1]", "particles.radii[0] = -0.1"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[0.5, 0.5, 0.5]]\n"
     "radii = [0.0]", "particles.radii[0] = 0.0"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[0.5, 0.5, 0.5]]\n"
     "radii = [0.1]\nmasses = [-2.0]", "particles.masses[0] = -2.0"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[0.5, nan, 0.5]]\n"
     "radii = [0.1]", "particles.positions[0] = nan"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[0.5, 0.5, 0.5]]\n"
     "radii = [0.1]\nvelocities = [[0, inf, 0]]", "particles.velocities[0] = inf"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[particles]\npositions = [[5.0, 0.5, 0.5]]\n"
     "radii = [0.1]", "particles.positions[0]"),
    ("[box]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\nboundary = ['wall', 'sticky', 'wall']\n"
     "[particles]\npositions = [[0.5, 0.5, 0.5]]\nradii = [0.1]", "box.boundary"),
]


@pytest.mark.parametrize("text,needle", BAD_TOML)
def test_bad_config_is_one_line_exit_2_nothing_written(tmp_path, cli, text, needle):
    cfg = write(tmp_path, text + "\nsteps = 5\n" if "steps" not in text and "[" not in text
                else text)
    code, out, err = cli(["run", cfg, "--no-progress", "--snapshot-every", "1",
                          "--output", "out"])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pdyn: error:"), err
    assert needle in lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,needle", [
    (["--steps", "0"], "steps = 0"),
    (["--steps", "-3"], "steps = -3"),
    (["--broadphase", "octopus"], "broadphase = 'octopus'"),
    (["--scene", "moon"], "scene = 'moon'"),
    (["--scale", "-1"], "scale = -1"),
    (["--dt", "nan"], "dt = nan"),
    (["--blocks", "0", "1", "1"], "blocks[0] = 0"),
])
def test_bad_options(tmp_path, cli, args, needle):
    code, _, err = cli(["run", "--no-progress", *args])
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "pdyn-output").exists()


def test_missing_config_file(tmp_path, cli):
    code, _, err = cli(["run", "nope.toml"])
    assert code == 2 and "nope.toml" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere; use a file instead")
def test_unwritable_output_folder(tmp_path, cli):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    code, _, err = cli(["run", *SMALL, "--output", str(ro / "x")])
    assert code == 2 and "output.folder" in err


def test_output_folder_that_is_a_file(tmp_path, cli):
    (tmp_path / "afile").write_text("x")
    code, _, err = cli(["run", *SMALL, "--output", str(tmp_path / "afile")])
    assert code == 2 and "output.folder" in err and "not a folder" in err


def test_output_folder_below_a_file(tmp_path, cli):
    (tmp_path / "afile").write_text("x")
    code, _, err = cli(["run", *SMALL, "--output", str(tmp_path / "afile" / "sub")])
    assert code == 2 and "output.folder" in err


def test_config_from_dict_roundtrip():
    cfg = config_from_dict({"scene": "box", "steps": 3, "contact": {"restitution": 0.9},
                            "gravity": [0, 0, -1.0]})
    assert cfg.contact.restitution == 0.9 and cfg.gravity == (0, 0, -1.0)
    with pytest.raises(ConfigError, match="gravity"):
        config_from_dict({"gravity": [0, 1]})


def test_console_script_entry_point(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pdyn", "run", "--steps", "0"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("pdyn: error: steps = 0")


def test_bench_prints_kochs_table(tmp_path, cli):
    code, out, err = cli(["bench", "--scene", "reference", "--scale", "0.01", "--steps", "2",
                          "--structures", "brute", "linked_cells", "auto", "--json",
                          "b.json"])
    assert code == 0, err
    assert "detect_ms" in out and "linked_cells" in out and "scipy cKDTree" in out
    assert "broad phase auto -> index_sort" in out
    import json

    rows = json.loads((tmp_path / "b.json").read_text())
    assert {r["structure"] for r in rows} >= {"brute", "linked_cells", "auto", "scipy cKDTree"}
    assert all(r["detect_ms"] > 0 for r in rows)
    assert all(r["total_ms"] > r["detect_ms"] for r in rows if "total_ms" in r)


def test_every_bench_option_has_help_text():
    """``pdyn bench --help`` explains every option (issue 15)."""
    from pdyn.cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "command")
    bench = sub.choices["bench"]
    assert bench.description
    for action in bench._actions:
        assert action.help, f"pdyn bench {action.option_strings}"


def test_run_summary_says_what_auto_chose(tmp_path, cli):
    code, out, err = cli(["run", *SMALL, "--broadphase", "auto"])
    assert code == 0, err
    assert "broad phase auto -> index_sort" in out


def test_bench_rejects_unknown_structure(tmp_path, cli):
    code, _, err = cli(["bench", "--structures", "nope"])
    assert code == 2 and "structures = 'nope'" in err


def test_output_closed_early_is_no_error(tmp_path):
    """``pdyn scenes | head -1``: the reader closes the pipe; pdyn ends quietly, no
    traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "pdyn", "scenes"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert proc.returncode == 0 and err == "", err
