"""``pdyn bench --report``: every series runs end to end on tiny sizes and writes its JSON,
Markdown (tables with the published rankings beside ours) and plots; the measuring pieces
time what they claim to."""

import json

import numpy as np
import pytest

from pdyn.bench import markdown
from pdyn.bench.measure import from_scratch, simulations, trajectory
from pdyn.bench.report import FULL, SERIES, render, run
from pdyn.bench.timing import Stopwatch, isolated
from pdyn.broadphase import make_broadphase
from pdyn.scenarios import make_scene

TINY = {"koch_scale": 0.004, "koch_scale_checkerboard": 0.001, "koch_steps": 2,
        "koch_sizes": [1500, 3000], "scaling_steps": 1, "schornbaum_sizes": [300, 600],
        "schornbaum_steps": 2, "update_size": 500, "update_steps": 2, "gas_scale": 0.01,
        "gas_steps": 2, "headline_n": 3000, "headline_poly_scale": 0.02, "repeat": 1,
        "budget": 5.0, "peer_timeout": 5.0, "peers": ["scipy cKDTree"]}


@pytest.mark.slow  # every series and eight structures: ~8 s of CPU
def test_report_writes_json_markdown_and_plots(tmp_path):
    structures = ["linked_cells", "octree", "hash_grid", "index_sort", "zindex_sort",
                  "sweep_prune", "brute", "auto"]
    res = run(tmp_path, quick=True, structures=structures, progress=False, sizes=TINY,
              command="pdyn bench --report X --quick")
    data = json.loads((tmp_path / "report.json").read_text())
    assert set(SERIES) <= set(data) and data["machine_before"]["cores"] >= 1
    md = (tmp_path / "report.md").read_text()
    for heading in ("## Headline", "## `auto` against the fastest structure",
                    "### `reference` (Table 1)", "### `very_polydisperse` (Table 7)",
                    "## Koch's particle-count scaling", "### motion 1 %",
                    "## Update strategies", "## The full time step"):
        assert heading in md, heading
    assert md.count("- published (fastest first):") >= 7 + 1 + 3  # Koch, Ihmsen, Schornbaum
    assert "DIFFERENT CONTACTS" not in md
    assert {"koch_scaling.png", "schornbaum.png", "koch_scenes.png", "full_step.png",
            "scene_reference.png"} <= set(res["plots"])
    for name in res["plots"]:
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    koch = data["koch_scenes"]["more_polydisperse"]["rows"]
    assert next(r for r in koch if r["structure"] == "auto")["chosen"] == "hash_grid"
    # a run of one series into the folder keeps the others and says which run measured what
    again = run(tmp_path, quick=True, series=["update_strategies"], structures=structures,
                progress=False, sizes=TINY, command="pdyn bench --series update_strategies")
    merged = json.loads((tmp_path / "report.json").read_text())
    assert merged["koch_scenes"] == data["koch_scenes"] and merged["series"] == list(SERIES)
    assert merged["runs"]["update_strategies"]["command"] == again["command"]
    assert merged["runs"]["headline"]["command"] == "pdyn bench --report X --quick"
    assert merged["runs"]["headline"]["reduced"] == {
        k: {"used": v, "full": FULL[k]} for k, v in TINY.items() if v != FULL[k]}
    head = (tmp_path / "report.md").read_text().split("## Headline")[0]
    assert "measured in separate runs" in head and "`pdyn bench --series update_strategies`" in head
    # a run stopped after its first series still renders, saying what it lacks
    stopped = {k: v for k, v in data.items() if k not in SERIES[1:] + ("seconds",)}
    (tmp_path / "stopped").mkdir()
    (tmp_path / "stopped" / "report.json").write_text(json.dumps(stopped))
    render(tmp_path / "stopped")
    head = (tmp_path / "stopped" / "report.md").read_text().split("## Headline")[0]
    assert "stopped before its end. Series not measured: " + ", ".join(SERIES[1:]) in head


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
def test_report_of_two_series(tmp_path):
    """The fast lane's report: two of the series on three structures write their JSON, their
    Markdown sections and their plot (the whole report is the test above)."""
    series = ["update_strategies", "full_step"]
    res = run(tmp_path, quick=True, series=series, structures=["brute", "linked_cells", "auto"],
              progress=False, sizes=TINY, command="pdyn bench --series update_strategies full_step")
    data = json.loads((tmp_path / "report.json").read_text())
    assert set(series) <= set(data) and not {"headline", "koch_scenes"} & set(data)
    assert data["runs"]["full_step"]["command"] == res["command"]
    md = (tmp_path / "report.md").read_text()
    for heading in ("## Update strategies", "### motion 20 %", "## The full time step",
                    "### neighbour lists (default skin)"):
        assert heading in md, heading
    assert res["plots"] == ["full_step.png"]
    assert (tmp_path / "full_step.png").read_bytes()[:4] == b"\x89PNG"


def test_stopwatch_splits_update_and_query():
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 10, (500, 3))
    sw = Stopwatch(make_broadphase("zindex_sort"))
    sw.build(pos, np.full(500, 0.5))
    assert sw.seconds["update"] > 0 and sw.seconds["query"] == 0
    sw.candidate_pairs()
    assert sw.seconds["query"] > 0 and sw.name == "zindex_sort"


def test_simulations_run_the_same_trajectory_for_every_structure():
    sc = make_scene("box", scale=0.2)
    rows = simulations(sc, ["brute", "linked_cells", "auto"], steps=4, rounds=2)
    assert [r["structure"] for r in rows] == ["brute", "linked_cells", "auto"]
    assert all(r["exact"] and r["steps"] == 4 for r in rows)
    assert len({r["contacts"] for r in rows}) == 1 and rows[0]["contacts"] > 0
    assert all(r["total_ms"] > r["detect_ms"] >= r["update_ms"] > 0 for r in rows)
    assert rows[2]["chosen"] == "index_sort"


def test_trajectory_and_from_scratch_agree_on_the_pairs():
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, 12, (1500, 3))
    rad = rng.uniform(0.2, 0.6, 1500)
    specs = [("a", "linked_cells", {}), ("b", "hash_grid", {"update": "rebuild"})]
    rows = trajectory(pos, rad, specs, lambda p: p + 0.01, steps=3)
    assert [r["structure"] for r in rows] == ["a", "b"] and all(r["exact"] for r in rows)
    rows = from_scratch(pos, rad, specs, {"kd": lambda p, r: _kd(p, r)}, repeat=1)
    assert all(r["exact"] for r in rows) and rows[-1]["kind"] == "peer"


def test_short_steps_and_calls_are_repeated_until_they_took_min_seconds():
    """Sub-millisecond steps: more steps than asked (at most ``MORE_STEPS`` times as many),
    the motion continued, and the pairs after the last step still agree; the same for calls
    from scratch. Without ``min_seconds``, exactly the steps asked."""
    from pdyn.bench.measure import MORE_STEPS

    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 6, (200, 3))  # 1.7 dense cells per sphere: auto may switch (rule 2)
    rad = np.full(200, 0.5)
    specs = [("a", "index_sort", {}), ("b", "auto", {}), ("c", "sweep_prune", {})]
    rows = trajectory(pos, rad, specs, lambda p: p + 0.003, steps=2, min_seconds=1.0)
    assert all(r["steps"] == 2 * MORE_STEPS and r["exact"] for r in rows)
    assert rows[1]["chosen"] == "hash_grid"  # dense, slow: auto switched at its first update
    rows = trajectory(pos, rad, specs, lambda p: p + 0.003, steps=2)
    assert all(r["steps"] == 2 for r in rows)
    calls = []

    def count(p, r):
        calls.append(1)
        return _kd(p, r)

    from pdyn.bench.measure import _time_calls

    _time_calls(lambda: count(pos, rad), 1, min_seconds=1e9)
    assert len(calls) == 1 + MORE_STEPS


def _kd(pos, rad):
    from pdyn.bench.peers import kdtree

    return kdtree(pos, rad)


def _allocate(n):
    return {"size": len(bytearray(n))}


def test_isolated_reports_an_explosion_instead_of_dying():
    assert isolated(_allocate, 1000, mem_gib=0.5) == {"size": 1000}
    assert "out of memory" in isolated(_allocate, 4 << 30, mem_gib=0.5)["error"]


def test_ranking_comparison_says_agrees_or_differs():
    rows = [{"structure": "hash_grid", "total_ms": 1.0}, {"structure": "octree", "total_ms": 3.0},
            {"structure": "linked_cells", "total_ms": 2.0}, {"structure": "x", "error": "no"},
            {"structure": "brute", "error": "skipped (N > 3000)"}]
    assert markdown.ranking(rows, "total_ms") == ["hash_grid", "linked_cells", "octree", "x"]
    ours = markdown.ranking(rows, "total_ms", among={"hash_grid", "octree", "linked_cells"})
    assert ours == ["hash_grid", "linked_cells", "octree"]
    assert "**agrees**" in "\n".join(markdown._compare(ours, ours, ""))
    assert "**differs**" in "\n".join(markdown._compare(ours, ours[::-1], "because"))


def test_sizes_option_takes_known_keys_only():
    from pdyn.cli import bench_sizes
    from pdyn.config import ConfigError

    assert bench_sizes('{"schornbaum_sizes": [1000]}') == {"schornbaum_sizes": [1000]}
    assert bench_sizes(None) == {}
    for bad, match in (('{"nope": 1}', "unknown key 'nope'"), ("[1]", "JSON object"),
                       ("{", "not JSON")):
        with pytest.raises(ConfigError, match=match):
            bench_sizes(bad)
