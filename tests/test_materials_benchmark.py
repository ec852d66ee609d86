"""``benchmarks/materials.py``: each scene's three variants set up from vs_lammps.py's scene
code (which it shares, so a change there must keep them running), and two materials of the
same values follow the one-material trajectory bit for bit, as the benchmark's table assumes."""

from types import SimpleNamespace

import numpy as np
import pytest

from pdyn.parallel import get_comm

from .conftest import benchmark_script


@pytest.fixture(scope="module")
def materials():
    return benchmark_script("materials")


def _state(sim):
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    return s.pos[h].copy(), s.vel[h].copy()


@pytest.mark.parametrize("name", ["gas-hertz", "chute"])
def test_variants_run_and_two_same_is_one(materials, name):
    _, scene, law, mu = next(s for s in materials.SCENES if s[0] == name)
    args = SimpleNamespace(gas_scale=0.1, bed_scale=0.05, chute_scale=1.0, chunks=1,
                           chunk_seconds=0.01, warmup=0)
    a = materials.scene_args(args, scene, law, mu)
    states, tables = {}, {}
    for v in materials.VARIANTS:
        sim = materials.simulation(a, v, get_comm(), tiny=True)
        sim.run(200)
        states[v], tables[v] = _state(sim), sim.contact.law.table
    for x, y in zip(states["one"], states["two_same"]):
        np.testing.assert_array_equal(x, y)
    assert tables["one"] is None  # one material: the law's own records
    assert tables["two_same"].shape == tables["two_diff"].shape  # a pair table each, and
    assert not np.array_equal(tables["two_same"], tables["two_diff"])  # two_diff's differs


def test_two_checkouts_against_each_other_are_named(materials):
    """``--now TREE --before TREE``: no one-vs-two table, and the table names both commits
    (a bisect's step), not "the commit before materials"."""
    from pathlib import Path

    root = Path(materials.__file__).resolve().parent.parent
    args = SimpleNamespace(rounds=3, now=root, before=root)
    text = materials.markdown([], [{"scene": "gas-hertz", "particles": 9261, "steps": 4000,
                                    "now_ns": 52.0, "before_ns": 54.0, "now_vs_before": 0.95}],
                              args)
    name = materials._name(root)
    assert name and f"`{name}` against the checkout of `{name}`:" in text
    assert "two_same" not in text and "before materials" not in text
    assert "| gas-hertz | 9261 | 4000 | 52 | 54 | 0.950 |" in text
