"""Tests specific to ``spatial_hash`` and ``compact_hash`` (the contract suite covers the rest):
forced hash collisions, the compact list of used cells, incremental update bookkeeping,
cell sizes and parameter validation."""

import numpy as np
import pytest

from pdyn.broadphase import BroadPhaseError, make_broadphase
from pdyn.broadphase import compact_hash as ch
from pdyn.broadphase._arena import HEAD, TOP
from pdyn.broadphase.compact_hash import CompactHash
from pdyn.broadphase.spatial_hash import COORD_LIMIT, _hash, next_prime

from .harness import contacts, expected, random_operations
from .scenes import FAMILIES, random_scene

HASHES = ("spatial_hash", "compact_hash")


def exact(bp):
    """Overlapping pairs from the candidates, after checking each candidate appears once."""
    return contacts(bp, bp._pos, bp._rad)


def brute(pos, rad, res=None):
    return expected(pos, rad, np.arange(pos.shape[0]) if res is None else res)


def used_buckets(pos, members, st):
    """Distinct hash buckets of the occupied spatial cells (what the compact list must hold)."""
    cells = np.unique(np.floor(pos[members] * (1.0 / st["cell_size"])).astype(np.int64), axis=0)
    return len({_hash(*c, st["table_size"]) for c in cells})


def check_compact_invariants(bp):
    """Internal consistency of a CompactHash: table ↔ compact list ↔ pool ↔ slots ↔ members,
    segments disjoint and none of them on a free list."""
    c = bp._c
    table, used, pool, slot = c.table, c.used, c.pool, c.slot
    nused = int(c.used_st[TOP])
    m = table.shape[0]
    assert int((table >= 0).sum()) == nused
    seen = []
    spans = []
    inv = 1.0 / bp.stats()["cell_size"]
    for u in range(nused):
        s, cap, cnt, b, flag = used[u, :5]
        assert 0 < cnt <= cap and 0 <= s and s + cap <= c.pool_st[TOP]
        spans.append((s, s + cap))
        assert table[b] >> 32 == u
        ent = pool[s : s + cnt]
        cells = c.hcell[ent]
        for cell in cells:
            assert ch._bucket_tag(*cell, m)[0] == b
        if flag:
            assert table[b] & 0xFFFFFFFF == ch.ANY
        else:
            assert (cells == used[u, 5:8]).all()
            assert table[b] & 0xFFFFFFFF == ch._bucket_tag(*used[u, 5:8], m)[1]
        for e, h in enumerate(ent):
            assert slot[h] == s + e
            np.testing.assert_array_equal(np.floor(bp._pos[h] * inv).astype(np.int64), cells[e])
        seen.extend(ent.tolist())
    for cls in range(40):  # free blocks are not segments of used cells
        f = c.pool_st[HEAD + cls]
        while f >= 0:
            spans.append((f, f + (ch.K0 << cls)))
            f = pool[f]
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "overlapping blocks"
    assert sorted(seen) == sorted(bp.members.tolist())


# ---------------------------------------------------------------- hash function
def test_teschner_hash_matches_formula_with_wraparound():
    p = np.array([73856093, 19349663, 83492791], dtype=np.uint64)
    for k in [(0, 0, 0), (1, 2, 3), (-1, -5, 7), (2**40, -(2**41), 3), (-(2**59), 2**59, -1)]:
        u = np.array(k, np.int64).astype(np.uint64)
        with np.errstate(over="ignore"):
            h = (u[0] * p[0]) ^ (u[1] * p[1]) ^ (u[2] * p[2])
        for m in (1, 17, 1000003):
            assert _hash(*k, m) == int(h % np.uint64(m))
            ki = [np.int64(x) for x in k]  # as the kernels pass them without JIT
            with np.errstate(over="ignore"):
                assert _hash.py_func(*ki, np.int64(m)) == int(h % np.uint64(m))


def test_next_prime():
    assert [next_prime(n) for n in (0, 2, 3, 4, 17, 18, 100)] == [2, 2, 3, 5, 17, 19, 101]


# ---------------------------------------------------------------- forced collisions
@pytest.mark.parametrize("method", HASHES)
@pytest.mark.parametrize("table_size", [1, 2, 7])
def test_tiny_table_collisions_stay_exact(method, table_size):
    for seed in range(0, 48, 5):
        family, pos, rad = random_scene(seed)
        bp = make_broadphase(method, table_size=table_size).build(pos, rad)
        np.testing.assert_array_equal(exact(bp), brute(pos, rad), err_msg=f"{family} {seed}")
        if method == "compact_hash":
            check_compact_invariants(bp)
        st = bp.stats()
        assert st["table_size"] == table_size
        if pos.shape[0] > 20 and family not in ("coincident",):
            assert st["collision_skips"] > 0  # collisions really happened and were filtered


def test_compact_hash_collision_flag_set_and_cleared():
    # two particles in distinct far-apart cells forced into the one bucket
    pos = np.array([[0.6, 0.6, 0.6], [10.6, 0.6, 0.6], [0.9, 0.6, 0.6]])
    rad = np.full(3, 0.25)
    bp = CompactHash(table_size=1).build(pos, rad)
    exact(bp)
    st = bp.stats()
    assert st["used_cells"] == 1 and st["collided_cells"] == 1
    np.testing.assert_array_equal(exact(bp), [[0, 2]])
    bp.remove([1])  # only one spatial cell left: flag is cleared at the next query
    exact(bp)
    assert bp.stats()["collided_cells"] == 0
    np.testing.assert_array_equal(exact(bp), [[0, 2]])


# ---------------------------------------------------------------- compact list
def test_compact_list_holds_exactly_the_occupied_cells():
    rng = np.random.default_rng(5)
    cap = 3000
    pos = rng.uniform(0, 30, (cap, 3))
    rad = np.full(cap, 0.5)
    bp = CompactHash()
    bp.build(pos, rad, np.arange(0))
    assert bp.stats()["used_cells"] == 0
    res = np.zeros(0, np.int64)
    prev_mem = bp.stats()["memory_bytes"]
    for lo in range(0, cap, 500):
        new = np.arange(lo, lo + 500)
        bp.insert(new)
        res = np.concatenate((res, new))
        st = bp.stats()
        assert st["used_cells"] == used_buckets(pos, res, st)
        assert st["used_cells"] <= st["used_capacity"] <= 2 * st["used_cells"] + 16
        assert st["memory_bytes"] >= prev_mem
        prev_mem = st["memory_bytes"]
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))
    gone = rng.choice(cap, 2500, replace=False)
    bp.remove(gone)
    res = np.setdiff1d(np.arange(cap), gone)
    st = bp.stats()
    assert st["used_cells"] == used_buckets(pos, res, st)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad, res))
    bp.remove(res)
    assert bp.stats()["used_cells"] == 0
    assert exact(bp).shape == (0, 2)


def test_compact_list_is_sparse_in_a_huge_domain():
    """Memory scales with the particles, not with the domain (Ihmsen Sec. 4.5)."""
    rng = np.random.default_rng(2)
    pos = rng.uniform(-1e6, 1e6, (2000, 3))
    rad = np.full(2000, 0.5)
    bp = make_broadphase("compact_hash").build(pos, rad)
    exact(bp)
    st = bp.stats()
    assert st["used_cells"] == used_buckets(pos, np.arange(2000), st)
    assert st["memory_bytes"] < 2000 * 400


# ---------------------------------------------------------------- incremental update
def test_update_moves_only_particles_whose_cell_changed():
    rng = np.random.default_rng(11)
    n = 2000
    pos = rng.uniform(0, 20, (n, 3))
    rad = np.full(n, 0.5)
    bp = CompactHash().build(pos, rad)
    cell = bp.stats()["cell_size"]
    for step in range(5):
        old = np.floor(pos / cell).astype(np.int64)
        pos = pos + rng.normal(0, 0.05, pos.shape)
        changed = int(np.any(np.floor(pos / cell).astype(np.int64) != old, axis=1).sum())
        bp.update(pos)
        st = bp.stats()
        assert st["last_moved"] == changed
        assert 0 < changed < n // 4
        assert st["rebuilds"] == 1  # no rebuild: the structure was updated in place
        np.testing.assert_array_equal(exact(bp), brute(pos, rad), err_msg=f"step {step}")
        check_compact_invariants(bp)
    bp.update(pos)
    assert bp.stats()["last_moved"] == 0


def test_update_without_motion_keeps_structure():
    _, pos, rad = random_scene(0, "uniform")
    bp = CompactHash().build(pos, rad)
    before = exact(bp)
    bp.update(pos.copy())
    st = bp.stats()
    assert st["last_moved"] == 0 and st["moved"] == 0
    np.testing.assert_array_equal(exact(bp), before)


@pytest.mark.parametrize("method", HASHES)
def test_growing_radius_or_far_moves_trigger_rebuild(method):
    rng = np.random.default_rng(4)
    pos = rng.uniform(0, 10, (300, 3))
    rad = np.full(300, 0.3)
    bp = make_broadphase(method).build(pos, rad)
    exact(bp)
    c0 = bp.stats()["cell_size"]
    rad = rad.copy()
    rad[7] = 4.0  # larger than the cells
    bp.update(pos, rad)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))
    assert bp.stats()["cell_size"] >= 8.0 > c0
    rad[7] = 0.3  # and back: cells shrink again
    bp.update(pos, rad)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))
    assert bp.stats()["cell_size"] < 1.0
    pos = pos.copy()
    pos[:10] += 1e7  # far away: coordinate headroom exceeded
    bp.update(pos)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))


def test_insert_of_a_big_particle_rebuilds_compact_hash():
    rng = np.random.default_rng(9)
    pos = rng.uniform(0, 10, (200, 3))
    rad = np.full(200, 0.2)
    rad[199] = 3.0
    bp = CompactHash().build(pos, rad, np.arange(199))
    exact(bp)
    bp.insert([199])
    assert bp.stats()["rebuilds"] == 2
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))


@pytest.mark.parametrize("method", HASHES)
@pytest.mark.parametrize("table_size", [None, 3])
def test_long_random_sequences_recycle_the_pool(method, table_size):
    """Many insert/remove/move cycles (``harness``) piling particles into few cells: segments
    grow into larger blocks and emptied ones are reused, used cells are swap-removed."""
    after = None
    if method == "compact_hash":
        def after(bps):
            check_compact_invariants(bps[0])
    (bp,) = random_operations([(method, {"table_size": table_size})], 77, steps=60,
                              family="dense", ops=("insert", "remove", "move"), cap=600,
                              batch=80, drift=0.3, after=after)
    if method == "compact_hash":
        c = bp._c
        live = int(c.used[: int(c.used_st[TOP]), ch.CAP].sum())
        # freed segments were reused: without reuse every segment move (over 1000 here) would
        # leave its old block behind
        assert int(c.pool_st[TOP]) <= 2 * live + 1024
        assert bp.stats()["moved"] > 1000


def test_bind_to_grown_arrays_keeps_residents():
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, 5, (100, 3))
    rad = np.full(100, 0.3)
    bp = CompactHash().build(pos, rad)
    pos2 = np.concatenate((pos, rng.uniform(0, 5, (100, 3))))
    rad2 = np.full(200, 0.3)
    bp.update(pos2, rad2)
    bp.insert(np.arange(100, 200))
    np.testing.assert_array_equal(exact(bp), brute(pos2, rad2))


# ---------------------------------------------------------------- cell size and coordinates
@pytest.mark.parametrize("method", HASHES)
def test_cell_size_parameter(method):
    _, pos, rad = random_scene(3, "uniform")
    dmax = 2 * rad.max()
    bp = make_broadphase(method, cell_size=3 * dmax).build(pos, rad)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))
    assert bp.stats()["cell_size"] >= 3 * dmax
    with pytest.raises(BroadPhaseError, match=r"cell_size = 0\.1"):
        make_broadphase(method, cell_size=0.1).build(pos, rad)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(BroadPhaseError, match="cell_size"):
            make_broadphase(method, cell_size=bad)
    for bad in (0, -3, 2.5, "x", np.inf):
        with pytest.raises(BroadPhaseError, match="table_size"):
            make_broadphase(method, table_size=bad)
    if method == "compact_hash":
        for bad in (0.0, 1e9, np.nan, "x"):
            with pytest.raises(BroadPhaseError, match="table_factor"):
                make_broadphase(method, table_factor=bad)
        bp = make_broadphase(method, table_factor=1).build(pos, rad)
        np.testing.assert_array_equal(exact(bp), brute(pos, rad))
        assert bp.stats()["table_size"] == next_prime(pos.shape[0])


@pytest.mark.parametrize("method", HASHES)
def test_coordinates_beyond_int64_cells(method):
    """|x| / d would overflow int64: automatic cells are enlarged (still exact), a user
    cell_size is rejected with a clear error."""
    rng = np.random.default_rng(6)
    pos = rng.uniform(-1.0, 1.0, (60, 3))
    pos[:20] *= 1e300
    pos[20:40] += 1e22
    rad = np.full(60, 1e-4)
    rad[40:] = 0.3
    bp = make_broadphase(method).build(pos, rad)
    np.testing.assert_array_equal(exact(bp), brute(pos, rad))
    assert 1e300 / bp.stats()["cell_size"] <= COORD_LIMIT
    with pytest.raises(BroadPhaseError, match="cell_size = 1.0.*int64"):
        make_broadphase(method, cell_size=1.0).build(pos, rad)


@pytest.mark.parametrize("method", HASHES)
@pytest.mark.parametrize("family", FAMILIES)
def test_stats_report_candidates_and_memory(method, family):
    _, pos, rad = random_scene(21, family)
    bp = make_broadphase(method).build(pos, rad)
    cand = bp.candidate_pairs()
    st = bp.stats()
    assert st["candidates"] == cand.shape[0] >= brute(pos, rad).shape[0]
    assert st["memory_bytes"] > 0


@pytest.mark.parametrize("method", HASHES)
def test_update_to_non_finite_position_is_a_clear_error(method):
    _, pos, rad = random_scene(0, "uniform")
    bp = make_broadphase(method).build(pos, rad)
    for bad in (np.nan, np.inf):
        p = pos.copy()
        p[1, 1] = bad
        with pytest.raises(BroadPhaseError, match=r"positions\[1\]"):
            bp.update(p)
            bp.candidate_pairs()
