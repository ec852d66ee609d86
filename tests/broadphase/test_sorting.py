"""Specific tests of ``index_sort``, ``zindex_sort`` and ``sweep_prune`` (the contract suite in
test_contract.py checks them against ``brute``): Z-curve keys, sort kernels, the persistent
orders kept between steps, the sweep axis, parameter validation, long random histories."""

import numpy as np
import pytest

from pdyn.broadphase import BroadPhaseError, find_contacts, make_broadphase
from pdyn.broadphase import _sort
from pdyn.broadphase import index_sort as isort
from pdyn.broadphase import sweep_prune as sap
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping
from pdyn.zorder import LEVELS, morton3, spread_bits

from .harness import contacts, expected, random_operations

SORTED = ("index_sort", "zindex_sort", "sweep_prune")


def interleave(x, y, z, bits=21):
    """Plain-Python Z-curve key: bit b of x, y, z -> bits 3b, 3b+1, 3b+2."""
    key = 0
    for b in range(bits):
        key |= ((x >> b) & 1) << (3 * b)
        key |= ((y >> b) & 1) << (3 * b + 1)
        key |= ((z >> b) & 1) << (3 * b + 2)
    return key


# ------------------------------------------------------------------ Z-curve keys
def test_morton_key_matches_plain_bit_interleave():
    rng = np.random.default_rng(0)
    top = (1 << 21) - 1
    cases = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (top, top, top), (top, 0, 5)]
    cases += [tuple(int(v) for v in rng.integers(0, 1 << 21, 3)) for _ in range(300)]
    for x, y, z in cases:
        key = morton3(x, y, z)
        assert key == interleave(x, y, z)
        assert 0 <= key < (1 << 63)
        assert isort._coords_of(key, np.ones(3, np.int64), True) == (x, y, z)


def test_morton_order_of_a_2x2x2_block_is_the_z_curve():
    keys = [morton3(x, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)]
    assert keys == list(range(8))


def test_dilated_steps_match_decoded_neighbours():
    rng = np.random.default_rng(1)
    dims = np.array([37, 1000, 5], np.int64)
    lims = [spread_bits(d - 1) << a for a, d in enumerate(dims)]
    masks = [isort._XM, isort._YM, isort._ZM]
    for _ in range(300):
        c = [int(rng.integers(0, d)) for d in dims]
        key = morton3(*c)
        for a in range(3):
            for step in (-1, 0, 1):
                got = isort._dilated_step(key & masks[a], masks[a], step, lims[a])
                n = c[a] + step
                if 0 <= n < dims[a]:
                    assert got == spread_bits(n) << a
                else:
                    assert got == -1


# ------------------------------------------------------------------ sort kernels
def test_radix_sort_is_a_stable_sort():
    rng = np.random.default_rng(2)
    for hi in (2, 1000, 1 << 40, (1 << 63) - 1):
        keys = rng.integers(0, hi, 5000, dtype=np.int64)
        items = np.arange(5000, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        k, it = keys.copy(), items.copy()
        _sort.radix_sort(k, it, 0, 5000)
        np.testing.assert_array_equal(k, keys[order])
        np.testing.assert_array_equal(it, items[order])
    k = np.array([5, 9, 3, 1, 0], np.int64)
    it = np.arange(5, dtype=np.int64)
    _sort.radix_sort(k, it, 1, 4)  # a sub-range only
    np.testing.assert_array_equal(k, [5, 1, 3, 9, 0])
    np.testing.assert_array_equal(it, [0, 3, 2, 1, 4])


def test_insertion_sort_and_merge_and_budget():
    rng = np.random.default_rng(3)
    keys = np.sort(rng.integers(0, 10**6, 2000)).astype(np.int64)
    keys[rng.choice(2000, 40, replace=False)] += rng.integers(-500, 500, 40)  # nearly sorted
    items = np.arange(2000, dtype=np.int64)
    ref = np.argsort(keys, kind="stable")
    k, it = keys.copy(), items.copy()
    moves = _sort.insertion_sort(k, it, 2000, 10**9, _sort.key_before)
    assert moves >= 0
    np.testing.assert_array_equal(k, keys[ref])
    np.testing.assert_array_equal(it, items[ref])
    k, it = keys[::-1].copy(), items.copy()
    assert _sort.insertion_sort(k, it, 2000, 1000, _sort.key_before) == -1  # reversed: over budget
    assert sorted(it.tolist()) == items.tolist()  # still a permutation
    # merge of a sorted tail into a sorted prefix
    a = np.sort(rng.integers(0, 100, 50)).astype(np.int64)
    b = np.sort(rng.integers(0, 100, 20)).astype(np.int64)
    k = np.concatenate((a, b))
    it = np.arange(70, dtype=np.int64)
    _sort.merge_tail(k, it, 50, 70, _sort.key_before)
    np.testing.assert_array_equal(k, np.sort(np.concatenate((a, b))))
    np.testing.assert_array_equal(k, np.concatenate((a, b))[it])


# ------------------------------------------------------------------ persistent orders
def _scene(n=1500, seed=4, box=20.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, box, (n, 3)), rng.uniform(0.2, 0.5, n)


@pytest.mark.parametrize("resort", ["insertion", "merge"])
def test_zindex_keeps_sorted_morton_order_after_moves(resort):
    pos, rad = _scene()
    bp = make_broadphase("zindex_sort", resort=resort).build(pos, rad)
    bp.candidate_pairs()
    assert bp.stats()["full_sorts"] == 1
    rng = np.random.default_rng(5)
    for _ in range(6):
        pos += rng.normal(0, 0.05, pos.shape)
        bp.update(pos)
        got = contacts(bp, pos, rad)
        n = bp._n_items
        keys, items = bp._keys[:n], bp._items[:n]
        assert np.all(np.diff(keys) >= 0)
        assert sorted(items.tolist()) == sorted(bp.members.tolist())
        expect = np.empty(n, np.int64)  # keys are the Morton keys of the current cells
        isort._compute_keys(pos, items, 0, n, bp._lo, 1.0 / bp._cell, bp._dims, True, expect)
        np.testing.assert_array_equal(keys, expect)
        np.testing.assert_array_equal(got, expected(pos, rad, np.arange(len(rad))))
    st = bp.stats()
    assert st["full_sorts"] == 1 and st["insertion_sorts"] == 6 and st["regrids"] == 1
    assert st["swaps"] > 0


def test_zindex_regrids_when_particles_leave_the_grid_or_grow():
    pos, rad = _scene(400)
    bp = make_broadphase("zindex_sort").build(pos, rad)
    bp.candidate_pairs()
    pos[7] = [500.0, -300.0, 40.0]  # far outside the padded grid
    bp.update(pos)
    np.testing.assert_array_equal(contacts(bp, pos, rad),
                                  expected(pos, rad, np.arange(400)))
    assert bp.stats()["regrids"] == 2
    rad2 = rad.copy()
    rad2[3] = 6.0  # larger than the cell: must regrid to stay exact
    bp.update(pos, rad2)
    np.testing.assert_array_equal(contacts(bp, pos, rad2),
                                  expected(pos, rad2, np.arange(400)))
    assert bp.stats()["regrids"] == 3 and bp.stats()["cell_size"] >= 12.0


def test_zindex_big_jumps_fall_back_to_a_full_sort():
    pos, rad = _scene(2000)
    bp = make_broadphase("zindex_sort").build(pos, rad)
    bp.candidate_pairs()
    rng = np.random.default_rng(6)
    pos[:] = pos[rng.permutation(2000)]  # every particle somewhere else in the same box
    bp.update(pos)
    np.testing.assert_array_equal(contacts(bp, pos, rad),
                                  expected(pos, rad, np.arange(2000)))
    assert bp.stats()["full_sorts"] == 2


def test_sweep_prune_keeps_sorted_ends_after_moves():
    pos, rad = _scene()
    bp = make_broadphase("sweep_prune").build(pos, rad)
    bp.candidate_pairs()
    rng = np.random.default_rng(7)
    for _ in range(5):
        pos += rng.normal(0, 0.05, pos.shape)
        bp.update(pos)
        got = contacts(bp, pos, rad)
        n = bp._n_ends
        v, c = bp._vals[:n], bp._codes[:n]
        order = np.lexsort((c & 1, v))
        np.testing.assert_array_equal(order, np.arange(n))
        h, ismax = c >> 1, c & 1
        x = pos[h, bp._axis]
        np.testing.assert_allclose(v, np.where(ismax == 1, x + rad[h], x - rad[h]), rtol=0,
                                   atol=1e-9)
        np.testing.assert_array_equal(got, expected(pos, rad, np.arange(len(rad))))
    st = bp.stats()
    assert st["full_sorts"] == 1 and st["insertion_sorts"] == 5 and st["swaps"] > 0


def test_sweep_axis_is_the_axis_of_largest_spread_and_kept_on_update():
    rng = np.random.default_rng(8)
    for axis in range(3):
        pos = rng.uniform(0, 5, (500, 3))
        pos[:, axis] *= 20.0
        rad = np.full(500, 0.3)
        bp = make_broadphase("sweep_prune").build(pos, rad)
        bp.candidate_pairs()
        assert bp.stats()["axis"] == "xyz"[axis]
        other = (axis + 1) % 3
        pos2 = pos.copy()
        pos2[:, other] *= 1.5  # still less spread: moderate change, order kept
        pos2[:, axis] += rng.normal(0, 0.01, 500)
        bp.update(pos2)
        np.testing.assert_array_equal(contacts(bp, pos2, rad),
                                      expected(pos2, rad, np.arange(500)))
        assert bp.stats()["axis"] == "xyz"[axis]  # not re-chosen on a plain update
        pos3 = pos.copy()
        pos3[:, [axis, other]] = pos3[:, [other, axis]]
        bp.build(pos3, rad)
        bp.candidate_pairs()
        assert bp.stats()["axis"] == "xyz"[other]  # re-chosen on rebuild


def test_touching_on_the_sweep_axis_counts():
    pos = np.array([[0.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0], [0, 0, 2.0]])
    rad = np.full(4, 0.5)
    got = find_contacts(pos, rad, method="sweep_prune")
    np.testing.assert_array_equal(got, [[0, 1], [0, 2]])


# ------------------------------------------------------------------ index_sort's stencil runs
def test_row_runs_and_the_next_cell_cover_the_half_stencil_once():
    runs = isort.ROW_RUNS
    got = sorted((dx, dy, dz) for dy, dz, lo, hi in runs.tolist() for dx in range(lo, hi + 1))
    assert sorted(got + [(1, 0, 0)]) == sorted(map(tuple, isort.HALF_STENCIL.tolist()))
    assert len(runs) == 4 and np.all(runs[:, 3] - runs[:, 2] == 2)


@pytest.mark.parametrize("seed", range(3))
def test_index_sort_candidates_are_the_pairs_of_adjacent_cells(seed):
    """Every pair in the same or adjacent cells exactly once, none else: sparse scenes (most
    cells empty, runs clipped at the grid's faces), and the exact query tests exactly those."""
    rng = np.random.default_rng(seed)
    n = 400
    pos = rng.uniform(0.0, [12.0, 7.0, 9.0], (n, 3))
    pos[:40, 0] = rng.choice([0.0, 12.0], 40)  # on the x faces: first and last cell of a row
    rad = rng.uniform(0.1, 0.5, n)
    bp = make_broadphase("index_sort").build(pos, rad)
    cand = bp.candidate_pairs()
    cells = np.minimum(np.floor((pos - bp._lo) / bp._cell).astype(np.int64), bp._dims - 1)
    near = np.abs(cells[:, None, :] - cells[None, :, :]).max(axis=2) <= 1
    i, j = np.nonzero(np.triu(near, 1))
    np.testing.assert_array_equal(canonical_pairs(cand), np.stack((i, j), axis=1))
    assert cand.shape[0] == i.size  # each once
    np.testing.assert_array_equal(canonical_pairs(bp.contacts()),
                                  find_contacts(pos, rad, method="brute"))
    assert bp.stats()["candidates"] == i.size


# ------------------------------------------------------------------ parameters and limits
@pytest.mark.parametrize("method", ["index_sort", "zindex_sort"])
def test_cell_size_validation(method):
    pos, rad = _scene(50)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(BroadPhaseError, match="cell_size"):
            make_broadphase(method, cell_size=bad)
    with pytest.raises(BroadPhaseError, match=r"cell_size = 0\.3"):
        find_contacts(pos, rad, method=method, cell_size=0.3)  # largest diameter ~1
    got = find_contacts(pos, rad, method=method, cell_size=2.5)
    np.testing.assert_array_equal(got, find_contacts(pos, rad, method="brute"))


def test_other_parameter_validation():
    with pytest.raises(BroadPhaseError, match="max_cells"):
        make_broadphase("index_sort", max_cells=0)
    with pytest.raises(BroadPhaseError, match="lookup"):
        make_broadphase("zindex_sort", lookup="dense")
    with pytest.raises(BroadPhaseError, match="resort"):
        make_broadphase("zindex_sort", resort="bubble")
    with pytest.raises(BroadPhaseError, match="axis"):
        make_broadphase("sweep_prune", axis=0)
    pos = np.array([[0.0, 0, 0], [1e9, 0, 0]])
    with pytest.raises(BroadPhaseError, match="cell_size"):  # user cell -> too many cells
        find_contacts(pos, np.ones(2), method="index_sort", cell_size=2.0)


def test_index_sort_cell_budget_stays_exact():
    pos, rad = _scene(800, box=60.0)
    for budget in (1, 8, 1000):
        bp = make_broadphase("index_sort", max_cells=budget).build(pos, rad)
        got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad))
        np.testing.assert_array_equal(got, find_contacts(pos, rad, method="brute"))
        assert bp.stats()["cells"] <= max(budget, 1) * 1.01 + 1


def test_zindex_key_fits_21_bits_at_huge_coordinates():
    rng = np.random.default_rng(9)
    pos = rng.uniform(-1e9, 1e9, (300, 3))
    pos[:100] = 3e8 + rng.uniform(0, 20, (100, 3))
    rad = rng.uniform(1.0, 3.0, 300)
    bp = make_broadphase("zindex_sort").build(pos, rad)
    got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad))
    np.testing.assert_array_equal(got, find_contacts(pos, rad, method="brute"))
    assert np.all(bp._dims <= LEVELS)
    assert bp._keys[: bp._n_items].max() < (1 << 63)


@pytest.mark.parametrize("method", ["zindex_sort", "sweep_prune"])
def test_search_and_merge_variants_agree(method):
    pos, rad = _scene(700)
    variants = ([{}, {"lookup": "search"}, {"resort": "merge"}] if method == "zindex_sort"
                else [{}])
    ref = find_contacts(pos, rad, method="brute")
    for kw in variants:
        np.testing.assert_array_equal(find_contacts(pos, rad, method=method, **kw), ref)


# ------------------------------------------------------------------ long random histories
@pytest.mark.parametrize("method", SORTED)
@pytest.mark.parametrize("seed", range(4))
def test_long_random_history_matches_brute(method, seed):
    """Long random histories (``harness``) on both re-sort variants, so the persistent orders
    go through many insertion sorts, merges and compactions."""
    kw = {"resort": "merge"} if (method == "zindex_sort" and seed % 2) else {}
    (bp,) = random_operations([(method, kw)], 100 + seed, steps=40, family="polydisperse_1e3",
                              ops=("insert", "remove", "move", "move", "jump", "resize"), cap=600)
    if method != "index_sort":
        assert bp.stats()["insertion_sorts"] > 0


@pytest.mark.parametrize("method", SORTED)
def test_stats_report_candidates_and_memory(method):
    pos, rad = _scene(500)
    bp = make_broadphase(method).build(pos, rad)
    cand = bp.candidate_pairs()
    st = bp.stats()
    assert st["candidates"] == cand.shape[0] and st["memory_bytes"] > 0
    assert {"index_sort": "used_cells", "zindex_sort": "swaps",
            "sweep_prune": "axis"}[method] in st


def test_sweep_prune_candidates_are_exactly_the_aabb_overlaps():
    pos, rad = _scene(400)
    bp = make_broadphase("sweep_prune").build(pos, rad)
    got = canonical_pairs(bp.candidate_pairs())
    i, j = np.triu_indices(400, 1)
    box = np.all(np.abs(pos[i] - pos[j]) <= (rad[i] + rad[j])[:, None], axis=1)
    np.testing.assert_array_equal(got, np.stack((i[box], j[box]), axis=1))
    assert sap._PAD < 1e-12


def test_index_sort_refuses_a_candidate_explosion_with_a_clear_error():
    """A dense cluster in a huge, sparse box: the cell budget forces huge cells."""
    rng = np.random.default_rng(10)
    pos = rng.uniform(0, 10, (3000, 3))
    pos[:30] = rng.uniform(0, 1e5, (30, 3))
    rad = np.full(3000, 0.2)
    bp = make_broadphase("index_sort", max_candidates=100_000).build(pos, rad)
    with pytest.raises(BroadPhaseError, match="max_candidates = 100000"):
        bp.candidate_pairs()
    got = find_contacts(pos, rad, method="zindex_sort", max_candidates=100_000)  # no problem
    np.testing.assert_array_equal(got, find_contacts(pos, rad, method="brute"))
    with pytest.raises(BroadPhaseError, match="max_candidates"):
        make_broadphase("zindex_sort", max_candidates=0)
