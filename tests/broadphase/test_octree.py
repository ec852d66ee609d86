"""Octree-specific tests: splitting, depth and leaf-size limits, collapse, both update strategies,
stored adjacency and exact subtree counts (the contract suite covers agreement with brute)."""

import numpy as np
import pytest

from pdyn.broadphase import BroadPhaseError, make_broadphase
from pdyn.broadphase import octree as O
from pdyn.broadphase._arena import TOP
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping

from ..lanes import fast_first
from .harness import assert_each_pair_once, contacts, expected, random_operations
from .scenes import FAMILIES, random_scene


# ------------------------------------------------------------------ helpers
def tree_arrays(bp):
    node = bp._t.node
    ntop = int(bp._t.node_st[TOP])
    alive = np.flatnonzero(node[:ntop, O.DEPTH] >= 0)
    leaves = alive[node[alive, O.CHILD] < 0]
    return node, alive, leaves


def check_tree(bp):
    """Full structural check: items/handles, exact counts, canonical split/collapse state,
    adjacency = exactly the touching leaves (numpy brute force), twins consistent."""
    node, alive, leaves = tree_arrays(bp)
    items, adj, hinfo = bp._t.items, bp._t.adj, bp._t.hinfo
    D, maxids = bp._D, bp.max_ids
    side = np.int64(1) << (D - node[:, O.DEPTH].clip(0, D))
    stored = []
    for lf in leaves:
        b, n = node[lf, O.IBEG], node[lf, O.ILEN]
        assert n <= node[lf, O.ICAP]
        if node[lf, O.DEPTH] < D:
            assert n <= maxids, f"leaf {lf} at depth {node[lf, O.DEPTH]} holds {n} > max_ids"
        for k in range(n):
            h = int(items[b + k])
            stored.append(h)
            assert tuple(hinfo[h]) == (lf, k), "handle does not know its leaf and slot"
            key = np.array(getattr(O._key, "py_func", O._key)(bp._pos, h, bp._geo))
            c = node[lf, O.CX:O.CZ + 1]
            assert np.all(c <= key) and np.all(key < c + side[lf]), "centre outside its leaf"
    assert sorted(stored) == sorted(bp.members.tolist()), "each resident in exactly one leaf"

    def count(a):
        if node[a, O.CHILD] < 0:
            return node[a, O.ILEN]
        return sum(count(node[a, O.CHILD] + i) for i in range(8))

    for a in alive:
        assert node[a, O.COUNT] == count(a), f"subtree count of node {a}"
        if node[a, O.CHILD] >= 0:
            assert node[a, O.COUNT] > maxids, f"internal node {a} should have collapsed"
            assert node[a, O.DEPTH] < D
            assert np.all(node[node[a, O.CHILD] + np.arange(8), O.PARENT] == a)
    # adjacency
    c = node[leaves, O.CX:O.CZ + 1]
    s = side[leaves]
    lo_ok = (c[:, None, :] <= c[None, :, :] + s[None, :, None]).all(-1)
    hi_ok = (c[None, :, :] <= c[:, None, :] + s[:, None, None]).all(-1)
    touch = lo_ok & hi_ok
    np.fill_diagonal(touch, False)
    for i, a in enumerate(leaves):
        ab, n = node[a, O.ABEG], node[a, O.ALEN]
        nb = adj[ab:ab + n, 0] if n else np.zeros(0, np.int64)
        assert len(set(nb.tolist())) == n, "duplicate adjacency entry"
        assert set(nb.tolist()) == set(leaves[touch[i]].tolist()), f"adjacency of leaf {a}"
        for e in range(n):
            b, t = adj[ab + e]
            assert adj[node[b, O.ABEG] + t, 0] == a and adj[node[b, O.ABEG] + t, 1] == e


def oracle(pos, rad):
    return expected(pos, rad, np.arange(pos.shape[0]))


# ------------------------------------------------------------------ splitting and limits
def test_split_when_max_ids_exceeded():
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 100, (12, 3))
    rad = np.full(12, 0.5)
    bp = make_broadphase("octree", max_ids=11).build(pos, rad, np.arange(11))
    assert bp.stats()["nodes"] == 1 and bp.stats()["leaves"] == 1
    bp.insert(np.array([11]))
    st = bp.stats()
    assert st["nodes"] >= 9 and st["depth"] >= 1
    check_tree(bp)
    bp.remove(np.array([3]))  # back to max_ids: collapses to the root leaf
    assert bp.stats()["nodes"] == 1
    check_tree(bp)


@pytest.mark.parametrize("max_ids", [1, 2, 11, 40])
def test_max_ids_respected_above_depth_limit(max_ids):
    _, pos, rad = random_scene(3, "clustered")
    bp = make_broadphase("octree", max_ids=max_ids, max_depth=12).build(pos, rad)
    check_tree(bp)  # leaves above the depth limit hold <= max_ids
    np.testing.assert_array_equal(contacts(bp, pos, rad), oracle(pos, rad))


def test_max_depth_respected_with_coincident_centres():
    pos = np.zeros((200, 3))
    pos[100:] = 50.0
    rad = np.full(200, 0.01)
    for md in (0, 1, 3, 7):
        bp = make_broadphase("octree", max_depth=md).build(pos, rad)
        st = bp.stats()
        assert st["depth"] <= md and st["depth_limit"] <= md
        check_tree(bp)
        got = contacts(bp, pos, rad)
        assert got.shape[0] == 2 * (100 * 99 // 2)


@pytest.mark.parametrize("family", FAMILIES)
def test_leaf_size_never_below_largest_diameter(family):
    _, pos, rad = random_scene(11, family)
    bp = make_broadphase("octree", max_depth=30).build(pos, rad)
    if pos.shape[0] == 0:
        return
    st = bp.stats()
    assert st["leaf_min_size"] >= 2 * rad.max()
    node, _, leaves = tree_arrays(bp)
    sizes = st["leaf_min_size"] * 2.0 ** (bp._D - node[leaves, O.DEPTH])
    assert sizes.min() >= 2 * rad.max()
    check_tree(bp)


def test_huge_particle_limits_depth():
    rng = np.random.default_rng(5)
    pos = rng.uniform(0, 100, (300, 3))
    rad = np.full(300, 0.5)
    deep = make_broadphase("octree", max_depth=20).build(pos, rad).stats()["depth_limit"]
    rad[7] = 20.0
    bp = make_broadphase("octree", max_depth=20).build(pos, rad)
    assert bp.stats()["depth_limit"] < deep and bp.stats()["leaf_min_size"] >= 40.0
    np.testing.assert_array_equal(contacts(bp, pos, rad), oracle(pos, rad))
    # removing the huge one and updating allows finer leaves again
    bp.remove(np.array([7]))
    bp.update(pos)
    assert bp.stats()["depth_limit"] == deep
    res = np.setdiff1d(np.arange(300), [7])
    np.testing.assert_array_equal(contacts(bp, pos, rad), expected(pos, rad, res))


# ------------------------------------------------------------------ collapse and dynamic update
def test_collapse_after_removals():
    rng = np.random.default_rng(1)
    pos = np.concatenate([rng.normal(0, 0.5, (150, 3)), rng.uniform(-50, 50, (150, 3))])
    rad = np.full(300, 0.2)
    bp = make_broadphase("octree").build(pos, rad)
    full = bp.stats()["nodes"]
    assert full > 50
    order = rng.permutation(300)
    for k in range(0, 290, 37):
        bp.remove(order[k:k + 37])
        check_tree(bp)
        res = np.sort(order[k + 37:])
        np.testing.assert_array_equal(contacts(bp, pos, rad), expected(pos, rad, res))
    assert bp.stats()["collapses"] > 0
    bp.remove(order[296:])
    assert bp.stats()["nodes"] == 1  # everything gone: the root is a leaf again
    assert bp.candidate_pairs().shape == (0, 2)
    bp.insert(order[:40])  # and it grows again
    check_tree(bp)
    np.testing.assert_array_equal(
        contacts(bp, pos, rad), expected(pos, rad, np.sort(order[:40])))


def check_trees(bps):
    for bp in bps:
        check_tree(bp)


@pytest.mark.parametrize("seed", fast_first(range(6), 2))
def test_update_strategies_agree_with_brute_over_moves(seed):
    """Drifting clusters with inserts/removals (``harness``), both strategies, the full
    structural check after every operation."""
    inc, reb = random_operations(
        [("octree", {"update": "incremental"}), ("octree", {"update": "rebuild"})], seed,
        steps=30, family="clustered", ops=("insert", "remove", "move", "move", "move"),
        flow=(0.5, 0.2, 0.0), after=check_trees)
    st = inc.stats()
    assert st["moves"] > 0
    assert st["rebuilds"] < reb.stats()["rebuilds"]  # incremental did not clear every step


def test_incremental_tree_equals_fresh_tree_on_same_root():
    """Split at max_ids + 1 and collapse at max_ids: the tree is history independent."""
    rng = np.random.default_rng(4)
    pos = rng.normal(0, 5, (250, 3))
    rad = np.full(250, 0.3)
    bp = make_broadphase("octree").build(pos, rad)
    for _ in range(10):
        pos = pos + rng.normal(0, 0.4, pos.shape)
        pos = np.clip(pos, -14, 14)
        bp.update(pos)
    geo, D = bp._geo.copy(), bp._D
    fresh = make_broadphase("octree").build(pos, rad)
    # rebuild ``fresh`` on the incremental tree's root to compare structure
    fresh._reset_geometry(geo[:3], geo[4], D, bp._scale)
    fresh._t.hinfo[:] = -1
    fresh._run_insert(fresh.members.copy())

    def leafset(b):
        node, _, leaves = tree_arrays(b)
        out = {}
        for lf in leaves:
            key = (int(node[lf, O.DEPTH]),) + tuple(int(x) for x in node[lf, O.CX:O.CZ + 1])
            ib, n = node[lf, O.IBEG], node[lf, O.ILEN]
            out[key] = sorted(b._t.items[ib:ib + n].tolist())
        return out

    assert bp.stats()["rebuilds"] == 1
    assert leafset(bp) == leafset(fresh)


def test_no_double_counting_on_leaf_borders():
    """Particles exactly on leaf faces/edges/corners, moving back and forth across them
    ([WindolphUschakov2023] Sec. 5): counts stay exact, every pair reported once."""
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 64, (160, 3))
    rad = np.full(160, 0.5)
    bp = make_broadphase("octree", max_ids=4).build(pos, rad)
    lo, u = bp._geo[:3], bp._u
    # put a lattice of particles exactly on finest-grid planes (faces of leaves), touching
    k = np.arange(64)
    grid = np.stack(np.meshgrid(k % 4, (k // 4) % 4, k // 16, indexing="ij"), -1).reshape(-1, 3)
    pos[:64] = lo + (grid[:64] + 8) * u
    for step in range(12):
        shift = (1 if step % 2 else -1) * 1e-9 * u
        pos[:64] += shift  # straddle the faces: leave and re-enter leaves every step
        pos[64:] += rng.normal(0, 0.2, (96, 3))
        pos[64:] = np.clip(pos[64:], 1, 63)
        bp.update(pos)
        check_tree(bp)
        np.testing.assert_array_equal(contacts(bp, pos, rad), oracle(pos, rad))
    assert bp.stats()["moves"] > 0


def test_leaving_the_root_cube_rebuilds_and_keeps_everyone():
    rng = np.random.default_rng(6)
    pos = rng.uniform(0, 10, (100, 3))
    rad = np.full(100, 0.4)
    bp = make_broadphase("octree").build(pos, rad)
    pos[0] = [1e6, -1e6, 5.0]  # far outside
    pos[1] = pos[0] + [0.5, 0, 0]
    bp.update(pos)
    assert bp.stats()["rebuilds"] == 2
    check_tree(bp)
    got = contacts(bp, pos, rad)
    np.testing.assert_array_equal(got, oracle(pos, rad))
    assert [0, 1] in got.tolist()


def test_radius_growth_on_update_is_exact():
    rng = np.random.default_rng(7)
    pos = rng.uniform(0, 20, (200, 3))
    rad = np.full(200, 0.2)
    bp = make_broadphase("octree", max_depth=12).build(pos, rad)
    rad2 = rad.copy()
    rad2[5] = 6.0
    bp.update(pos, rad2)
    assert bp.stats()["leaf_min_size"] >= 12.0
    np.testing.assert_array_equal(contacts(bp, pos, rad2), oracle(pos, rad2))


def test_insert_with_larger_radius_and_infinite():
    rng = np.random.default_rng(8)
    pos = rng.uniform(0, 20, (120, 3))
    rad = np.full(120, 0.3)
    rad[100] = 4.0
    rad[101] = np.inf
    bp = make_broadphase("octree").build(pos, rad, np.arange(100))
    bp.insert(np.array([100, 101, 102]))
    check_tree(bp)
    res = np.arange(103)
    cand = bp.candidate_pairs()
    assert_each_pair_once(cand)
    assert np.sum((cand == 101).any(axis=1)) == 102
    got = canonical_pairs(filter_overlapping(cand, pos, rad))
    np.testing.assert_array_equal(got, expected(pos, rad, res))


def test_growth_of_storage_keeps_tree_valid():
    """Start from tiny arrays and insert many coincident + clustered particles one batch at a
    time: the kernels stop, the arrays grow, the kernels resume."""
    rng = np.random.default_rng(9)
    n = 3000
    pos = np.concatenate([np.zeros((500, 3)), rng.normal(0, 3, (n - 500, 3))])
    rad = np.full(n, 0.05)
    bp = make_broadphase("octree", max_ids=3, max_depth=16).build(pos, rad, np.arange(10))
    for k in range(10, n, 500):
        bp.insert(np.arange(k, min(k + 500, n)))
    st = bp.stats()
    assert st["nodes"] > 200
    np.testing.assert_array_equal(contacts(bp, pos, rad), oracle(pos, rad))


def _trim(bps):
    """Cut every arena to what is in use, so the next split/push/collapse runs out of room."""
    for bp in bps:
        t = bp._t
        bp._t = t._replace(node=t.node[: int(t.node_st[TOP])].copy(),
                           items=t.items[: int(t.items_st[TOP])].copy(),
                           adj=t.adj[: int(t.adj_st[TOP])].copy())


@pytest.mark.parametrize("seed", range(2))
def test_kernels_resume_after_running_out_of_room(seed, monkeypatch):
    """Insert, move (a particle taken out, then placed after the arenas grew) and collapse
    with arenas cut to size before every operation."""
    grows = []
    real = O.Octree._grow

    def counting_grow(self):
        grows.append(1)
        real(self)

    monkeypatch.setattr(O.Octree, "_grow", counting_grow)
    (bp,) = random_operations([("octree", {"max_ids": 3})], seed, steps=24, family="clustered",
                              ops=("insert", "remove", "move"), before=_trim, after=check_trees)
    assert bp.stats()["moves"] > 0 and bp.stats()["collapses"] > 0
    assert len(grows) > 10  # the kernels did stop and resume


# ------------------------------------------------------------------ stats and parameters
def test_stats_keys():
    _, pos, rad = random_scene(1, "uniform")
    bp = make_broadphase("octree").build(pos, rad)
    bp.candidate_pairs()
    st = bp.stats()
    for key in ("candidates", "memory_bytes", "nodes", "leaves", "depth", "depth_limit",
                "leaf_min_size", "update", "rebuilds", "splits", "collapses", "moves"):
        assert key in st
    assert st["candidates"] >= oracle(pos, rad).shape[0]
    assert st["memory_bytes"] > 0 and st["leaves"] <= st["nodes"]
    assert make_broadphase("octree", update="rebuild").stats()["update"] == "rebuild"


@pytest.mark.parametrize(
    "params, field",
    [
        ({"max_ids": 0}, "max_ids"),
        ({"max_ids": 2.5}, "max_ids"),
        ({"max_ids": True}, "max_ids"),
        ({"max_depth": -1}, "max_depth"),
        ({"max_depth": 99}, "max_depth"),
        ({"max_depth": "8"}, "max_depth"),
        ({"update": "lazy"}, "update"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_parameters_are_clear_errors(params, field):
    with pytest.raises(BroadPhaseError, match=field):
        make_broadphase("octree", **params)


def test_resident_errors_from_base():
    pos = np.zeros((4, 3))
    bp = make_broadphase("octree").build(pos, np.ones(4), np.arange(2))
    with pytest.raises(BroadPhaseError, match="already resident"):
        bp.insert(np.array([1]))
    with pytest.raises(BroadPhaseError, match="not resident"):
        bp.remove(np.array([3]))
