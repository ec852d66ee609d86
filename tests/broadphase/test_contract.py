"""Contract tests every registered broad phase must pass, checked against ``brute``.

A new structure added to ``pdyn.broadphase.REGISTRY`` gets this whole suite for free.
"""

import numpy as np
import pytest

from pdyn.broadphase import REGISTRY, BroadPhaseError, find_contacts, make_broadphase
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping

from .scenes import FAMILIES, random_scene

METHODS = sorted(REGISTRY)
#: structures allowed to refuse a scene (clear BroadPhaseError) instead of answering
MAY_REJECT: set[str] = set()
N_SEEDS = 240


def oracle(pos, rad):
    return find_contacts(pos, rad, method="brute")


def answer(method, pos, rad):
    try:
        return find_contacts(pos, rad, method=method)
    except BroadPhaseError:
        if method in MAY_REJECT:
            pytest.skip(f"{method} rejects this scene")
        raise


def assert_each_pair_once(pairs):
    if pairs.shape[0] == 0:
        return
    assert np.all(pairs[:, 0] != pairs[:, 1]), "self pair"
    c = canonical_pairs(pairs)
    assert not np.any(np.all(c[1:] == c[:-1], axis=1)), "duplicate candidate pair"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_matches_brute_on_random_scenes(method, seed):
    family, pos, rad = random_scene(seed)
    expected = oracle(pos, rad)
    got = answer(method, pos, rad)
    assert got.dtype == np.int64 and got.shape[1:] == (2,)
    np.testing.assert_array_equal(got, expected, err_msg=f"{method} on {family} seed {seed}")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("family", FAMILIES)
def test_candidates_each_pair_once(method, family):
    _, pos, rad = random_scene(7, family)
    bp = make_broadphase(method).build(pos, rad)
    assert_each_pair_once(bp.candidate_pairs())
    st = bp.stats()
    assert st["candidates"] >= oracle(pos, rad).shape[0]
    assert st["memory_bytes"] >= 0


@pytest.mark.parametrize("method", METHODS)
def test_empty_and_single(method):
    for n in (0, 1):
        pos = np.zeros((n, 3)) + 3.0
        rad = np.ones(n)
        got = find_contacts(pos, rad, method=method)
        assert got.shape == (0, 2) and got.dtype == np.int64


@pytest.mark.parametrize("method", METHODS)
def test_two_touching_exactly(method):
    pos = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.5, 0, 0]])
    rad = np.array([0.5, 0.5, 0.5])
    np.testing.assert_array_equal(find_contacts(pos, rad, method=method), [[0, 1]])


@pytest.mark.parametrize("method", METHODS)
def test_infinite_particles_pair_with_every_finite_one_never_each_other(method):
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 10, (50, 3))
    rad = rng.uniform(0.1, 0.5, 50)
    rad[[4, 17]] = np.inf
    got = find_contacts(pos, rad, method=method)
    np.testing.assert_array_equal(got, oracle(pos, rad))
    assert not np.any((got[:, 0] == 4) & (got[:, 1] == 17))
    assert np.sum((got == 4).any(axis=1)) == 48  # every finite particle


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(12))
def test_insert_remove_update_sequence(method, seed):
    """Random insert/remove/move operations, checked against brute after every operation."""
    rng = np.random.default_rng(1000 + seed)
    cap = 400
    family, pos0, rad0 = random_scene(seed, FAMILIES[seed % len(FAMILIES)])
    pos = np.zeros((cap, 3))
    rad = np.ones(cap)
    n0 = pos0.shape[0]
    pos[:n0], rad[:n0] = pos0, rad0
    spread = max(float(np.ptp(pos0)) if n0 else 1.0, 1.0)
    pos[n0:] = rng.uniform(pos0.min() if n0 else 0, (pos0.min() if n0 else 0) + spread, (cap - n0, 3))
    rad[n0:] = rng.choice(rad0 if n0 else np.ones(1), cap - n0)
    resident = set(range(n0 // 2))
    bp = make_broadphase(method).build(pos, rad, np.array(sorted(resident), np.int64))
    for step in range(25):
        op = rng.integers(3)
        if op == 0:
            free = np.array(sorted(set(range(cap)) - resident), np.int64)
            new = rng.choice(free, size=min(len(free), int(rng.integers(1, 30))), replace=False)
            bp.insert(new)
            resident |= set(new.tolist())
        elif op == 1 and resident:
            res = np.array(sorted(resident), np.int64)
            gone = rng.choice(res, size=min(len(res), int(rng.integers(1, 30))), replace=False)
            bp.remove(gone)
            resident -= set(gone.tolist())
        else:
            pos += rng.normal(0, 0.05 * spread / 10, pos.shape)
            bp.update(pos)
        res = np.array(sorted(resident), np.int64)
        cand = bp.candidate_pairs()
        assert_each_pair_once(cand)
        assert np.isin(cand, res).all(), "pair with a non-resident handle"
        got = canonical_pairs(filter_overlapping(cand, pos, rad))
        exp = oracle(pos[res], rad[res])
        exp = canonical_pairs(res[exp]) if exp.size else exp
        np.testing.assert_array_equal(got, exp, err_msg=f"{method} step {step} op {op}")


@pytest.mark.parametrize("method", METHODS)
def test_rejected_insert_or_remove_changes_nothing(method):
    """A batch with one bad handle (already resident, not resident, repeated, out of range,
    bad radius or centre; finite or wall) raises a one-line error naming the handle and leaves
    the structure as it was."""
    rng = np.random.default_rng(11)
    pos = rng.uniform(0, 6, (120, 3))
    rad = rng.uniform(0.2, 0.6, 120)
    rad[[7, 8]] = np.inf
    rad[100], pos[101, 2] = np.nan, np.inf  # bad rows, never resident
    start = np.setdiff1d(np.arange(60), [8])
    bp = make_broadphase(method).build(pos, rad, start)  # wall 7 resident, 8 not
    before = canonical_pairs(bp.candidate_pairs())
    bad_batches = [
        ("insert", [70, 71, 5], "handle 5 is already resident"),
        ("insert", [70, 71, 70], "handle 70 is already resident"),
        ("insert", [70, 8, 7], "handle 7 is already resident"),
        ("insert", [70, 8, 8], "handle 8 is already resident"),
        ("remove", [1, 2, 90], "handle 90 is not resident"),
        ("remove", [1, 2, 1], "handle 1 is not resident"),
        ("remove", [1, 7, 8], "handle 8 is not resident"),
        ("insert", [70, 120], r"handle 120 out of range \[0, 120\)"),
        ("remove", [1, -1], r"handle -1 out of range"),
        ("insert", [70, 100], r"radii\[100\] = nan: must be > 0"),
        ("insert", [70, 101], r"positions\[101\] = .*: must be finite"),
    ]
    for op, batch, msg in bad_batches:
        with pytest.raises(BroadPhaseError, match=msg):
            getattr(bp, op)(np.array(batch, np.int64))
        assert bp.stats()["residents"] == 58 and bp.stats()["infinite"] == 1
        np.testing.assert_array_equal(canonical_pairs(bp.candidate_pairs()), before,
                                      err_msg=f"{op} {batch} changed the structure")
    bp.insert(np.array([70, 8]))  # the structure still works afterwards
    bp.remove(np.array([1, 7]))
    res = np.setdiff1d(np.r_[start, 70, 8], [1, 7])
    exp = oracle(pos[res], rad[res])
    got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad))
    np.testing.assert_array_equal(got, canonical_pairs(res[exp]))


@pytest.mark.parametrize("method", METHODS)
def test_bad_input_is_a_clear_error(method):
    pos = np.zeros((3, 3))
    with pytest.raises(BroadPhaseError, match="radii"):
        find_contacts(pos, np.array([1.0, -1.0, 1.0]), method=method)
    with pytest.raises(BroadPhaseError, match="radii"):
        find_contacts(pos, np.array([1.0, np.nan, 1.0]), method=method)
    bad = pos.copy()
    bad[1, 2] = np.nan
    with pytest.raises(BroadPhaseError, match="positions"):
        find_contacts(bad, np.ones(3), method=method)
    with pytest.raises(BroadPhaseError, match="positions"):
        find_contacts(np.zeros((3, 2)), np.ones(3), method=method)
    with pytest.raises(BroadPhaseError, match="no_such_param"):
        make_broadphase(method, no_such_param=1)


def test_unknown_structure_is_a_clear_error():
    with pytest.raises(BroadPhaseError, match="nope"):
        make_broadphase("nope")
