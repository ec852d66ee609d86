"""Thermo output on one rank: the columns against a direct computation, the stdout table,
``thermo.csv`` kept bit for bit across a restart, bad ``thermo_every`` refused. Multi-rank:
tests/mpi/test_thermo_mpi.py."""

import math
from dataclasses import replace

import numpy as np
import pytest

from pdyn.config import OutputConfig
from pdyn.dynamics.contact import touching_pairs
from pdyn.io import read_thermo
from pdyn.io.thermo import COLUMNS, MAX_PARTIALS, energy_partials
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from ..conftest import assert_user_error
from ..mpi.scenes import walled_pile


def pile(folder, **out):
    cfg = walled_pile(n=80, output=OutputConfig(folder=str(folder), **out))
    return cfg.with_(contact=replace(cfg.contact, friction=0.5))


def test_columns_match_a_direct_computation(tmp_path):
    lines = []
    sim = Simulation(pile(tmp_path, thermo_every=100))
    sim.writers[-1].say = lines.append
    sim.run(600)
    names, rows = read_thermo(tmp_path / "thermo.csv")
    assert tuple(names) == COLUMNS
    assert np.array_equal(rows[:, 0], np.arange(100, 601, 100))
    assert np.array_equal(rows[:, 1], rows[:, 0] * sim.dt)
    s, h = sim.store, sim.store.owned
    ke = math.fsum((0.5 * s.mass[h] * (s.vel[h] ** 2).sum(axis=1)).tolist())
    w = s.omega[h]
    w2 = w[:, 0] * w[:, 0] + w[:, 1] * w[:, 1] + w[:, 2] * w[:, 2]
    re = math.fsum((0.2 * s.mass[h] * s.radius[h] * s.radius[h] * w2).tolist())
    pairs = touching_pairs(s, sim.neighbours)
    last = rows[-1]
    assert last[2] == ke and last[3] == re and re > 0
    assert last[4] == sim.n_contacts and len(pairs) > 20
    assert last[5] == 2 * len(pairs) / len(h)
    gap = np.linalg.norm(s.pos[pairs_h(sim, pairs[:, 0])] - s.pos[pairs_h(sim, pairs[:, 1])],
                         axis=1)
    r_i, r_j = s.radius[pairs_h(sim, pairs[:, 0])], s.radius[pairs_h(sim, pairs[:, 1])]
    assert last[6] >= ((r_i + r_j - gap) / np.minimum(r_i, r_j)).max() > 0
    text = (tmp_path / "thermo.csv").read_text().splitlines()
    assert all(repr(float(x)) == x for x in text[-1].split(",")[1:4])  # exact digits
    assert lines[0].split() == ["Step", "Time", "KinEng", "RotEng", "Contacts", "Coord",
                                "MaxOverlap", "Press", "Steps/s"]
    assert len(lines) == 7 and lines[-1].split()[0] == "600"


def pairs_h(sim, gids):
    """Handles of the owned spheres with global ids ``gids``."""
    h = sim.store.owned
    order = np.argsort(sim.store.gid[h])
    return h[order][np.searchsorted(sim.store.gid[h][order], gids)]


def test_exact_partials_sum_in_any_order():
    """The energy's expansion gives the correctly rounded sum whatever the order."""
    rng = np.random.default_rng(1)
    vel = rng.normal(size=(500, 3)) * 10.0 ** rng.integers(-8, 8, (500, 1))
    mass = rng.uniform(0.1, 3.0, 500)
    h = np.arange(500)
    want = math.fsum((0.5 * mass * (vel ** 2).sum(axis=1)).tolist())
    for perm in (h, h[::-1], rng.permutation(500)):
        parts = [energy_partials(p, vel, mass, np.zeros((1, 3)), mass, False)[0]
                 for p in np.array_split(perm, 3)]
        assert max(len(p) for p in parts) < MAX_PARTIALS
        assert math.fsum(np.concatenate(parts).tolist()) == want


def test_restart_keeps_the_series_bit_for_bit(tmp_path):
    ref = Simulation(pile(tmp_path / "a", thermo_every=50, checkpoint_every=300))
    ref.run(600)
    full = (tmp_path / "a" / "thermo.csv").read_bytes()
    assert len(full.splitlines()) == 13
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000300.h5",
                           output=OutputConfig(folder=str(tmp_path / "a"), thermo_every=50,
                                               checkpoint_every=300))
    cont.run(300)
    assert (tmp_path / "a" / "thermo.csv").read_bytes() == full


def test_cli_thermo_and_restart(tmp_path, cli):
    """``--thermo-every`` prints the table on stdout; a CLI restart continues thermo.csv and
    sets the old file aside."""
    code, out, _ = cli(["run", "--scene", "box", "--scale", "0.1", "--steps", "60",
                        "--no-progress", "--snapshot-every", "0", "--checkpoint-every", "30",
                        "--thermo-every", "10"])
    assert code == 0
    full = (tmp_path / "pdyn-output" / "thermo.csv").read_bytes()
    ckpt = "pdyn-output/checkpoints/ckpt_00000030.h5"
    assert cli(["run", "--restart", ckpt, "--no-progress", "--thermo-every", "10"])[0] == 0
    table = [ln.split() for ln in out.splitlines() if len(ln.split()) == 9 and
             (ln.split()[0] == "Step" or ln.split()[0].isdigit())]
    assert table[0][0] == "Step" and [r[0] for r in table[1:]] == [str(k) for k in
                                                                    range(10, 61, 10)]
    assert (tmp_path / "pdyn-output" / "thermo.csv").read_bytes() == full
    assert list((tmp_path / "pdyn-output" / "superseded").rglob("thermo.csv"))


@pytest.mark.parametrize("value", ["-3", "x", "1.5"])
def test_bad_thermo_every_is_refused(tmp_path, cli, value):
    code, _, err = cli(["run", "--scene", "box", "--scale", "0.1", "--steps", "5",
                        "--thermo-every", value])
    assert_user_error(code, err, "thermo", value)
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------ pdyn plot
def test_plot_draws_the_series(tmp_path, cli):
    pytest.importorskip("matplotlib")
    Simulation(pile(tmp_path / "run", thermo_every=20, wall_forces=True)).run(200)
    code, out, _ = cli(["plot", "run"])
    assert code == 0
    names = ("thermo_energy.png", "thermo_contacts.png", "thermo_overlap.png",
             "wall_forces.png")
    for name in names:
        data = (tmp_path / "run" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
        assert name in out
    code, out, _ = cli(["plot", "run", "-o", "pics"])
    assert code == 0 and sorted(p.name for p in (tmp_path / "pics").iterdir()) == sorted(names)


def test_plot_refuses_a_folder_without_thermo(tmp_path, cli):
    (tmp_path / "run").mkdir()
    code, _, err = cli(["plot", "run"])
    assert_user_error(code, err, "thermo.csv", "run")


def test_plot_without_matplotlib(tmp_path, cli, monkeypatch):
    import builtins

    Simulation(pile(tmp_path / "run", thermo_every=50)).run(100)
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    code, _, err = cli(["plot", "run"])
    assert_user_error(code, err, "matplotlib", "pdyn[plot]")
    assert not list((tmp_path / "run").glob("*.png"))
