"""``auto``: what it picks from the statistics it documents, when it decides, and that it
delegates every call (its exactness against ``brute`` is in the contract suite, like every
registered structure's)."""

import numpy as np
import pytest

from pdyn.broadphase import canonical_pairs, filter_overlapping, find_contacts, make_broadphase
from pdyn.broadphase.auto import (MOTION_MAX, OCCUPIED_MIN, SPARSE_TABLE, SWEEP_N_MAX, choose,
                                  statistics)
from pdyn.scenarios import make_scene

from .harness import assert_each_pair_once, expected, random_operations
from .scenes import random_scene


@pytest.mark.parametrize("scene, scale, steps, once", [
    ("reference", 0.05, "index_sort", "index_sort"),
    ("gas", 0.1, "index_sort", "index_sort"),
    ("polydisperse", 0.05, "index_sort", "index_sort"),
    ("inhomogeneous", 0.05, "hash_grid", "zindex_sort"),
    ("very_inhomogeneous", 0.05, "hash_grid", "zindex_sort"),
    ("checkerboard", 0.01, "index_sort", "index_sort"),
    ("more_polydisperse", 0.05, "hash_grid", "hash_grid"),
    ("very_polydisperse", 0.05, "hash_grid", "giants_apart"),
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
    many = {**tiny, "n": SWEEP_N_MAX + 1}  # the sweep's gathers leave the cache (rule 3)
    assert tiny["occupied"] >= OCCUPIED_MIN and choose(many) == "index_sort"
    assert choose({**many, "occupied": OCCUPIED_MIN / 2}) == "hash_grid"


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
    pos = pos + rng.normal(0.0, 0.2, pos.shape)  # fast enough for index_sort (rule 2)
    bp.update(pos, rad2)  # an update keeps the structure ...
    assert bp.chosen == "index_sort" and bp.motion > 0.1
    got = find_contacts(pos, rad2, method="brute")
    assert np.array_equal(canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad2)),
                          got)
    bp.build(pos, rad2)  # ... a build decides again
    assert bp.chosen == "hash_grid" and bp.decisions == 2



def test_a_build_that_decides_again_runs_the_query_kernel_once(monkeypatch):
    """The structure a build decides on expects the pairs the one it replaces found: a dense
    scene's query (more pairs than the first guess, four per resident) runs its kernel once,
    not a second time with the exact size (a simulation's rebuild after each reordering)."""
    import pdyn.broadphase.index_sort as index_sort

    runs = []
    for name in ("_pairs_row_major", "_pairs_morton"):
        kernel = getattr(index_sort, name)
        monkeypatch.setattr(index_sort, name,
                            lambda *a, kernel=kernel: runs.append(1) or kernel(*a))
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 9, (3000, 3))  # dense: more pairs within reach than 4 per sphere
    rad = np.full(3000, 0.5)
    bp = make_broadphase("auto").build(pos, rad)
    first = bp.contacts()
    assert bp.chosen == "index_sort" and first.shape[0] > 4 * 3000 and len(runs) == 2
    bp.build(pos + 0.01, rad)  # decides again: a new structure
    assert np.array_equal(canonical_pairs(bp.contacts()),
                          find_contacts(pos + 0.01, rad, method="brute"))
    assert bp.decisions == 2 and len(runs) == 3


@pytest.mark.parametrize("sigma, pick", [(0.002, "hash_grid"), (0.1, "index_sort")])
def test_a_dense_scene_moving_slowly_switches_to_the_hash_grid(sigma, pick):
    """Rule 2 with motion: the first update after a build measures the median displacement;
    below ``MOTION_MAX`` diameters a dense equal-sphere scene switches to ``hash_grid`` (built
    from the residents at that moment, walls included), faster it keeps ``index_sort``; the
    pairs stay brute's throughout, and the next build decides with the motion it measured."""
    rng = np.random.default_rng(7)
    n = 3000
    pos = rng.uniform(0, 15, (n, 3))
    rad = np.full(n, 0.5)
    rad[[0, 1]] = np.inf  # walls
    handles = np.arange(100, n)
    bp = make_broadphase("auto").build(pos, rad, np.r_[0, 1, handles])
    assert bp.chosen == "index_sort" and bp.motion is None
    bp.remove(handles[:50])  # the residents change before the first update
    bp.insert(np.arange(2, 100))
    residents = np.r_[0, 1, np.arange(2, 100), handles[50:]]
    for _ in range(3):
        pos = pos + rng.normal(0.0, sigma, pos.shape)  # median |step| ~ 1.5 sigma diameters
        bp.update(pos)
        got = bp.candidate_pairs()
        assert_each_pair_once(got)
        np.testing.assert_array_equal(
            canonical_pairs(filter_overlapping(got, pos, rad)), expected(pos, rad, residents))
    assert bp.chosen == pick and bp.switches == int(pick == "hash_grid")
    assert (bp.motion < MOTION_MAX) == (pick == "hash_grid")
    np.testing.assert_array_equal(np.sort(bp.members), np.sort(residents[2:]))
    bp.build(pos, rad)
    assert bp.chosen == pick and bp.decisions == 2


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
    once = make_broadphase("auto", usage="once").build(pos, rad)
    once.contacts()
    assert once.chosen == "index_sort" and once.stats()["cells"] <= SPARSE_TABLE * 2000
    assert once.stats()["cells"] > 8 * 2000  # a larger table than the default's (sparse)
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


# ------------------------------------------------------------------ giants apart ("once")
def giant_scene(seed: int, kind: str):
    """(positions, radii, giants expected) for the giant scenes of the tests below: small
    spheres with one or several giants (``kind``), up to 2000x their radii."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 1500))
    box = (n / 0.2) ** (1 / 3)
    pos = rng.uniform(0, box, (n, 3))
    rad = rng.uniform(0.3, 0.6, n)
    g = {"one": 1, "several": int(rng.integers(2, 12)), "touching": 6, "alone": 3,
         "huge": 4, "far": 2, "faces": 2}[kind]
    big = rng.choice(n, g, replace=False)
    rad[big] = rng.uniform(0.2, 0.5, g) * box
    if kind == "touching":  # giants in a row, each touching the next exactly (exact floats)
        rad[big] = 8.0
        pos[big] = np.floor(pos[big[0]]) + np.arange(g)[:, None] * np.array([16.0, 0.0, 0.0])
    elif kind == "alone":  # giants far outside the cloud, nothing near
        pos[big] = box * np.array([[-10.0, 0, 0], [0, 20.0, 0], [0, 0, -30.0]])
    elif kind == "huge":  # giants 1000-2000x the others, each covering the whole cloud
        rad[big] = 600.0 * rng.uniform(1.0, 2.0, g)
    elif kind == "far":  # negative and very large coordinates
        pos = pos - 1e9 + rng.uniform(-1, 1, 3) * 1e7
    elif kind == "faces":  # centres on an integer lattice, neighbours touching exactly
        k = int(round(n ** (1 / 3))) + 1
        pos = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
        pos = pos * 1.0 - 2.0
        rad = np.full(n, 0.5)
        rad[big] = 0.5 + np.array([3.0, 4.0])  # touching lattice points exactly
    return np.ascontiguousarray(pos, float), rad, np.sort(big)


@pytest.mark.parametrize("kind", ["one", "several", "touching", "alone", "huge", "far",
                                  "faces"])
@pytest.mark.parametrize("seed", range(6))
def test_giants_apart_finds_exactly_brute_pairs(kind, seed):
    """``find_contacts``' default takes the giants apart (the rule fires: the test would
    fail if it did not) and finds exactly ``brute``'s pairs; candidates = the others'
    tested pairs + every giant against every resident + each pair of giants."""
    pos, rad, big = giant_scene(seed, kind)
    bp = make_broadphase("auto", usage="once").build(pos, rad)
    assert bp.chosen.endswith("+giants"), bp.chosen
    got = bp.contacts()
    assert_each_pair_once(got)
    want = find_contacts(pos, rad, method="brute")
    np.testing.assert_array_equal(canonical_pairs(got), want)
    np.testing.assert_array_equal(find_contacts(pos, rad), want)
    st = bp.stats()
    g, n = big.size, pos.shape[0]
    assert st["giants"] == g and np.array_equal(np.sort(bp._bp._giants), big)
    assert st["candidates"] == bp._bp.inner.stats()["candidates"] + g * (n - g) + g * (g - 1) // 2
    if kind == "touching":  # the exact-touch pairs are there
        row = np.sort(np.stack((big_row := bp._bp._giants[np.argsort(pos[bp._bp._giants, 0])],
                                np.roll(big_row, -1)), axis=1)[:-1], axis=1)
        assert {tuple(p) for p in row} <= {tuple(p) for p in want}


def test_giants_apart_with_walls_and_a_subset_of_handles():
    """Walls pair with every finite resident (giants included), never each other; only the
    built handles are residents."""
    pos, rad, big = giant_scene(1, "several")
    rad = rad.copy()
    rad[[3, 5]] = np.inf
    half = np.setdiff1d(np.arange(0, pos.shape[0], 2), big[1:])  # keeps at most one giant
    handles = np.union1d(np.union1d(half, big[:1]), [3, 5])
    bp = make_broadphase("auto", usage="once").build(pos, rad, handles)
    got = canonical_pairs(bp.contacts())
    np.testing.assert_array_equal(got, expected(pos, rad, handles))
    assert bp.chosen.endswith("+giants") or big[0] in (3, 5)
    fin = canonical_pairs(bp.contacts(include_infinite=False))
    assert not np.isin(fin, [3, 5]).any() and fin.shape[0] < got.shape[0]


@pytest.mark.parametrize("threshold", [0.0, 0.55, np.inf])
@pytest.mark.parametrize("inner", ["index_sort", "zindex_sort", "hash_grid"])
def test_giants_apart_is_exact_for_any_threshold(threshold, inner):
    """All giants (threshold 0), none (inf), or a split: every pair once, brute's pairs, via
    ``contacts`` and ``candidate_pairs``; empty and single too."""
    from pdyn.broadphase.auto import CHOICES
    from pdyn.broadphase.giants import GiantsApart

    for seed in range(4):
        _, pos, rad = random_scene(seed, "polydisperse_1e3")
        bp = GiantsApart(threshold, CHOICES[inner]()).build(pos, rad)
        want = find_contacts(pos, rad, method="brute")
        np.testing.assert_array_equal(canonical_pairs(bp.contacts()), want)
        cand = bp.candidate_pairs()
        assert_each_pair_once(cand)
        np.testing.assert_array_equal(canonical_pairs(cand), want)
    for n in (0, 1):
        bp = GiantsApart(threshold, CHOICES[inner]()).build(np.zeros((n, 3)), np.ones(n))
        assert bp.contacts().shape == (0, 2)


def test_giants_apart_stays_exact_under_insert_remove_update():
    """``usage="once"`` is made for one build and one query, but a structure it returns still
    follows the whole protocol (rebuilt at the next query)."""
    for seed in (2, 3):  # seeds whose giant is resident at the build
        bps = random_operations([("auto", {"usage": "once"})], seed=seed, steps=40,
                                family="huge_among_small")
        assert bps[0].chosen.endswith("+giants")


def test_giant_radius_finds_the_few_far_larger():
    from pdyn.broadphase.auto import GIANT_FACTOR, GIANTS_MAX
    from pdyn.broadphase.giants import giant_radius

    rng = np.random.default_rng(6)
    rad = rng.uniform(0.4, 0.6, 10_000)
    h = np.arange(rad.size)
    assert giant_radius(rad, h, GIANT_FACTOR, GIANTS_MAX) == (np.inf, 0)  # equal-ish sizes
    rad[[10, 20, 30]] = [3.0, 40.0, 500.0]  # one giant hides the next: the fixed point finds all
    t, g = giant_radius(rad, h, GIANT_FACTOR, GIANTS_MAX)
    assert g == 3 and 0.6 < t < 3.0
    assert giant_radius(rad, h[:25], GIANT_FACTOR, GIANTS_MAX)[1] == 2  # only the handles
    rad[:GIANTS_MAX + 1] = 100.0  # too many to test apart
    assert giant_radius(rad, h, GIANT_FACTOR, GIANTS_MAX) == (np.inf, 0)
    spread = 10 ** rng.uniform(-3, 0, 10_000)  # a spread of sizes, not a few giants
    assert giant_radius(spread, h, GIANT_FACTOR, GIANTS_MAX) == (np.inf, 0)


@pytest.mark.parametrize("scene", ["reference", "polydisperse", "more_polydisperse", "gas",
                                   "checkerboard", "inhomogeneous", "very_inhomogeneous",
                                   "schornbaum", "drop", "box"])
def test_no_giants_in_the_other_scenes(scene):
    """The rule fires on ``very_polydisperse`` only: Koch's ``more_polydisperse`` has 320
    spheres of r = 20 (6.2x the cubic mean), more than ``GIANTS_MAX``."""
    sc = make_scene(scene, scale=0.05 if scene == "checkerboard" else 0.5)
    assert statistics(sc.positions, sc.radii)["giants"] == 0
    vp = make_scene("very_polydisperse", scale=0.5)
    assert statistics(vp.positions, vp.radii)["giants"] == 1


def test_a_simulation_that_switches_keeps_every_bit():
    """The periodic gas without neighbour lists moves ~0.15 % of a diameter per step: ``auto``
    switches to ``hash_grid`` at the first step (and keeps it at the reordering builds), and
    the trajectory is ``index_sort``'s bit for bit."""
    from pdyn import Simulation, SimulationConfig

    cfg = SimulationConfig(scene="gas", scale=0.03, steps=30, progress=False, neighbour_skin=0.0,
                           reorder_every=10)
    runs = {}
    for name in ("auto", "index_sort"):
        sim = Simulation(cfg.with_(broadphase=name))
        sim.run()
        h = sim.store.owned[np.argsort(sim.store.gid[sim.store.owned])]
        runs[name] = (sim.store.pos[h].copy(), sim.store.vel[h].copy(), sim.broadphase)
    bp = runs["auto"][2]
    assert bp.chosen == "hash_grid" and bp.switches == 1 and bp.decisions > 1
    assert bp.motion < MOTION_MAX
    for x, y in zip(runs["auto"][:2], runs["index_sort"][:2]):
        np.testing.assert_array_equal(x, y)
