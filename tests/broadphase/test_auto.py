"""``auto``: what it picks from the statistics it documents, when it decides, and that it
delegates every call (its exactness against ``brute`` is in the contract suite, like every
registered structure's)."""

import numpy as np
import pytest

from pdyn.broadphase import find_contacts, make_broadphase
from pdyn.broadphase.auto import choose, statistics
from pdyn.scenarios import make_scene

from .harness import expected, random_operations


@pytest.mark.parametrize("scene, scale, steps, once", [
    ("reference", 0.05, "index_sort", "index_sort"),
    ("gas", 0.1, "index_sort", "index_sort"),
    ("polydisperse", 0.05, "index_sort", "index_sort"),
    ("inhomogeneous", 0.05, "hash_grid", "zindex_sort"),
    ("very_inhomogeneous", 0.05, "hash_grid", "zindex_sort"),
    ("checkerboard", 0.01, "hash_grid", "index_sort"),
    ("more_polydisperse", 0.05, "hash_grid", "hash_grid"),
    ("very_polydisperse", 0.05, "hash_grid", "hash_grid"),
])
def test_picks_the_structure_the_report_measured_fastest(scene, scale, steps, once):
    sc = make_scene(scene, scale=scale)
    st = statistics(sc.positions, sc.radii)
    assert (choose(st), choose(st, "once")) == (steps, once)


def test_sweep_and_prune_when_nothing_overlaps_even_along_one_axis():
    sc = make_scene("schornbaum", scale=1.0)
    tiny = statistics(sc.positions, sc.radii * 1e-5)
    assert tiny["axis_overlaps"] < 0.01
    assert (choose(tiny), choose(tiny, "once")) == ("sweep_prune", "index_sort")
    assert choose(statistics(sc.positions, sc.radii)) == "index_sort"


def test_statistics_ignore_walls_and_see_spread_and_clustering():
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 20, (4000, 3))
    rad = np.full(4000, 0.5)
    st = statistics(pos, rad)
    assert st["n"] == 4000 and st["spread"] == 1.0 and st["occupied"] > 0.9
    rad[:2] = np.inf  # walls change nothing
    assert statistics(pos, rad)["spread"] == 1.0 and statistics(pos, rad)["n"] == 3998
    rad[2] = 50.0  # one large sphere: spread = 50 / cubic mean radius
    assert statistics(pos, rad)["spread"] == pytest.approx(50.0 / np.mean(rad[2:] ** 3) ** (1 / 3))
    pos[:3900] *= 0.05  # most particles crowd into a corner of the box
    assert statistics(pos, np.full(4000, 0.5))["occupied"] < 0.3


def test_decides_at_every_build_and_delegates():
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, 15, (3000, 3))
    rad = np.full(3000, 0.5)
    bp = make_broadphase("auto").build(pos, rad)
    assert bp.chosen == "index_sort" and bp.stats()["chosen"] == "index_sort"
    rad2 = rad.copy()
    rad2[::100] = 4.0  # polydisperse now
    bp.update(pos, rad2)  # an update keeps the structure ...
    assert bp.chosen == "index_sort"
    got = find_contacts(pos, rad2, method="brute")
    from pdyn.broadphase import canonical_pairs, filter_overlapping

    assert np.array_equal(canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad2)),
                          got)
    bp.build(pos, rad2)  # ... a build decides again
    assert bp.chosen == "hash_grid" and bp.decisions == 2


def test_first_insert_without_build_decides_from_the_inserted():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 10, (500, 3))
    rad = rng.choice([0.1, 3.0], 500, p=[0.98, 0.02])
    bp = make_broadphase("auto")
    bp.bind(pos, rad)
    h = np.arange(0, 500, 2)
    bp.insert(h)
    assert bp.chosen == "hash_grid"
    np.testing.assert_array_equal(
        np.sort(bp.members), h)
    from pdyn.broadphase import canonical_pairs, filter_overlapping

    got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad))
    np.testing.assert_array_equal(got, expected(pos, rad, h))


@pytest.mark.parametrize("family", ["uniform", "polydisperse_1e3", "huge_among_small", "clustered"])
def test_random_operations_on_each_kind_of_scene(family):
    random_operations(["auto"], seed=3, family=family)


def test_find_contacts_builds_for_one_query():
    rng = np.random.default_rng(4)
    pos = rng.uniform(0, 500, (2000, 3))  # sparse: hash_grid for steps, index_sort once
    rad = np.full(2000, 0.5)
    assert make_broadphase("auto").build(pos, rad).chosen == "hash_grid"
    assert make_broadphase("auto", usage="once").build(pos, rad).chosen == "index_sort"
    pos[:1900] *= 0.02  # clustered in a corner: zindex_sort once
    assert make_broadphase("auto", usage="once").build(pos, rad).chosen == "zindex_sort"
    np.testing.assert_array_equal(find_contacts(pos, rad), find_contacts(pos, rad, "brute"))


def test_parameters_are_checked():
    from pdyn.broadphase import BroadPhaseError

    with pytest.raises(BroadPhaseError, match="cell_size"):
        make_broadphase("auto", cell_size=1.0)
    with pytest.raises(BroadPhaseError, match="usage = 'often'"):
        make_broadphase("auto", usage="often")


@pytest.mark.parametrize("n", [10_000, 40_000])
def test_sparse_homogeneous_box_hash_grid_for_steps_index_sort_once(n):
    """Koch's static 1024³ box (scaling series): homogeneous but sparse; per step (update +
    query + exact test) the hash grid was as fast or faster, from scratch the index sort."""
    rng = np.random.default_rng(5)
    st = statistics(rng.uniform(0, 1024, (n, 3)), np.full(n, 0.5))
    assert st["occupied"] > 0.95 and st["cells_per_particle"] > 16 and st["axis_overlaps"] > 1
    assert (choose(st), choose(st, "once")) == ("hash_grid", "index_sort")
