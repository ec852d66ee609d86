"""Contract tests every registered broad phase must pass. The oracle is ``brute``; every other
structure is checked against it, and ``brute`` itself against the numpy definition.

A new structure added to ``pdyn.broadphase.REGISTRY`` gets this whole suite for free.
"""

import functools
import inspect

import numpy as np
import pytest

import pdyn.broadphase as bpmod
from pdyn.broadphase import REGISTRY, BroadPhaseError, find_contacts, make_broadphase
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping

from ..lanes import fast_first
from .harness import assert_each_pair_once, random_operations
from .scenes import FAMILIES, naive_pairs, random_scene

METHODS = sorted(REGISTRY)
#: every structure but the oracle
OTHERS = [m for m in METHODS if m != "brute"]
N_SEEDS = 240
#: bytes every structure holds per row of the bound arrays (capacity), beyond the base class's
#: one resident flag: per-handle records of the incremental structures, handle-indexed scratch
PER_ROW_BYTES = {"hash_grid": 32, "compact_hash": 32, "octree": 16, "zindex_sort": 8,
                 "sweep_prune": 8}


@functools.lru_cache(maxsize=None)
def oracle(seed: int, family: str | None = None) -> np.ndarray:
    _, pos, rad = random_scene(seed, family)
    return find_contacts(pos, rad, method="brute")


# ------------------------------------------------------------------ the oracle itself
@pytest.mark.parametrize("family", FAMILIES)
def test_brute_is_the_definition(family):
    """``brute`` against the numpy O(N²) definition, bit for bit (faces, 1e9 coordinates,
    ulp-sized radii), on four scenes of each family, and its candidates = all pairs tested."""
    for seed in range(4):
        _, pos, rad = random_scene(seed, family)
        np.testing.assert_array_equal(oracle(seed, family), naive_pairs(pos, rad))
        bp = make_broadphase("brute").build(pos, rad)
        bp.candidate_pairs()
        n = pos.shape[0]
        assert bp.stats()["candidates"] == n * (n - 1) // 2


def test_brute_pairs_walls_with_every_finite_particle():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 10, (50, 3))
    rad = rng.uniform(0.1, 0.5, 50)
    rad[[4, 17]] = np.inf
    np.testing.assert_array_equal(find_contacts(pos, rad, method="brute"), naive_pairs(pos, rad))


# ------------------------------------------------------------------ every other structure
@pytest.mark.parametrize("method", OTHERS)
# the fast lane: each family once (the seed picks the family)
@pytest.mark.parametrize("seed", fast_first(range(N_SEEDS), len(FAMILIES)))
def test_matches_brute_on_adversarial_scenes(method, seed):
    family, pos, rad = random_scene(seed)
    got = find_contacts(pos, rad, method=method)
    assert got.dtype == np.int32 and got.shape[1:] == (2,)
    np.testing.assert_array_equal(got, oracle(seed), err_msg=f"{method} on {family} seed {seed}")


@pytest.mark.parametrize("method", OTHERS)
@pytest.mark.parametrize("seed", fast_first(range(12), 4))
def test_random_operations_match_brute(method, seed):
    """Random insert / remove / re-insert / move / jump / resize sequences (``harness``)."""
    random_operations([method], seed)


@pytest.mark.parametrize("method", OTHERS)
def test_infinite_particles_pair_with_every_finite_one_never_each_other(method):
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 10, (50, 3))
    rad = rng.uniform(0.1, 0.5, 50)
    rad[[4, 17]] = np.inf
    got = find_contacts(pos, rad, method=method)
    np.testing.assert_array_equal(got, find_contacts(pos, rad, method="brute"))
    assert not np.any((got[:, 0] == 4) & (got[:, 1] == 17))
    assert np.sum((got == 4).any(axis=1)) == 48  # every finite particle


@pytest.mark.parametrize("method", METHODS)
def test_release_changes_no_result(method):
    """``release`` (what the driver calls after a rebuild's query) drops only what another
    query can make again: the next query, with or without a move in between, and a removal
    after it give the oracle's pairs."""
    _, pos, rad = random_scene(5, FAMILIES[0])
    n = pos.shape[0]
    bp = make_broadphase(method).build(pos, rad, np.arange(n))
    first = canonical_pairs(bp.contacts(include_infinite=False))
    bp.release()
    np.testing.assert_array_equal(canonical_pairs(bp.contacts(include_infinite=False)), first)
    bp.release()
    moved = pos + 0.01
    bp.update(moved, rad)
    np.testing.assert_array_equal(canonical_pairs(bp.contacts(include_infinite=False)),
                                  naive_pairs(moved, rad))
    bp.release()
    bp.remove(np.arange(0, n, 3))
    keep = np.setdiff1d(np.arange(n), np.arange(0, n, 3))
    want = naive_pairs(moved[keep], rad[keep])
    got = canonical_pairs(bp.contacts(include_infinite=False))
    np.testing.assert_array_equal(got, canonical_pairs(keep[want]) if want.size else want)


# ------------------------------------------------------------------ stats
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("family", FAMILIES)
def test_candidates_and_memory(method, family):
    """``candidates`` = pairs handed to the exact test (base.py): the length of the candidate
    list, or for the structures that test themselves at least that; never fewer than the
    contacts. ``memory_bytes`` at least what the capacity and the residents need."""
    _, pos, rad = random_scene(7, family)
    n = pos.shape[0]
    cap = n + 40  # bound to larger arrays, as to the particle store
    pos = np.concatenate((pos, np.zeros((40, 3))))
    rad = np.concatenate((rad, np.ones(40)))
    bp = make_broadphase(method).build(pos, rad, np.arange(n))
    cand = bp.candidate_pairs(include_infinite=False)
    assert_each_pair_once(cand)
    st = bp.stats()
    n_contacts = filter_overlapping(cand, pos, rad).shape[0]
    assert n_contacts == oracle(7, family).shape[0]
    if bp.filters:
        assert cand.shape[0] == n_contacts
        assert st["candidates"] >= n_contacts
    else:
        assert st["candidates"] == cand.shape[0] >= n_contacts
    own = 0 if method == "brute" else 8 * n  # every structure holds each resident at least once
    per_row = PER_ROW_BYTES.get(method, 0) if n else 0  # allocated with the first resident
    floor = cap * (1 + per_row) + 8 * n + own
    assert st["memory_bytes"] >= floor, (st["memory_bytes"], floor)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("family", ["uniform", "dense", "polydisperse_1e3", "clustered"])
def test_contacts_are_the_filtered_candidates(method, family):
    """``contacts()`` (what ``find_contacts`` sorts; index sorts test while they emit) holds
    exactly the candidates that pass the exact test, walls included, and counts as candidates
    at least the pairs it returns."""
    _, pos, rad = random_scene(11, family)
    rad = rad.copy()
    rad[:1] = np.inf
    bp = make_broadphase(method).build(pos, rad)
    got = bp.contacts()
    assert got.dtype == np.int32 and bp.candidate_pairs().dtype == np.int32
    assert_each_pair_once(got)
    assert bp.stats()["candidates"] >= int(np.sum(np.isfinite(rad[got]).all(axis=1)))
    want = filter_overlapping(bp.candidate_pairs(), pos, rad)
    np.testing.assert_array_equal(canonical_pairs(got), canonical_pairs(want))


@pytest.mark.parametrize("method", METHODS)
def test_candidates_count_finite_pairs_only(method):
    """With walls, the finite × wall pairs are appended to the list but not counted."""
    rng = np.random.default_rng(5)
    pos = rng.uniform(0, 5, (80, 3))
    rad = rng.uniform(0.2, 0.5, 80)
    rad[:2] = np.inf
    bp = make_broadphase(method).build(pos, rad)
    finite = bp.candidate_pairs(include_infinite=False).shape[0]
    c0 = bp.stats()["candidates"]
    assert bp.candidate_pairs().shape[0] == finite + 2 * 78
    assert bp.stats()["candidates"] == c0 >= finite


def test_default_method_is_auto(monkeypatch):
    """The documented default, by name: what ``find_contacts`` builds when not told."""
    assert inspect.signature(find_contacts).parameters["method"].default == "auto"
    want = oracle(0, "uniform")
    built = []
    real = bpmod.make_broadphase

    def spy(name, **params):
        built.append(name)
        return real(name, **params)

    monkeypatch.setattr(bpmod, "make_broadphase", spy)
    _, pos, rad = random_scene(0, "uniform")
    np.testing.assert_array_equal(find_contacts(pos, rad), want)
    assert built == ["auto"]


# ------------------------------------------------------------------ small cases and errors
@pytest.mark.parametrize("method", METHODS)
def test_empty_and_single(method):
    for n in (0, 1):
        pos = np.zeros((n, 3)) + 3.0
        rad = np.ones(n)
        got = find_contacts(pos, rad, method=method)
        assert got.shape == (0, 2) and got.dtype == np.int32


@pytest.mark.parametrize("method", METHODS)
def test_two_touching_exactly(method):
    pos = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.5, 0, 0]])
    rad = np.array([0.5, 0.5, 0.5])
    np.testing.assert_array_equal(find_contacts(pos, rad, method=method), [[0, 1]])


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
    got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), pos, rad))
    np.testing.assert_array_equal(got, naive_pairs_of(pos, rad, res))


def naive_pairs_of(pos, rad, handles):
    e = naive_pairs(pos[handles], rad[handles])
    return canonical_pairs(handles[e]) if e.size else e


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


@pytest.mark.parametrize("method", METHODS)
def test_more_rows_than_int32_pairs_hold_is_a_clear_error(method, monkeypatch):
    """Pairs are int32: a structure refuses arrays of more than ``MAX_ROWS`` rows (here
    lowered to 4) and ``canonical_pairs`` rows beyond it."""
    monkeypatch.setattr(bpmod.base, "MAX_ROWS", 4)
    with pytest.raises(BroadPhaseError, match="positions: 5 rows, more than 4"):
        make_broadphase(method).build(np.zeros((5, 3)), np.ones(5))
    with pytest.raises(BroadPhaseError, match="pairs: rows from 0 to 2147483648"):
        canonical_pairs(np.array([[0, 2**31]]))


def test_unknown_structure_is_a_clear_error():
    with pytest.raises(BroadPhaseError, match="nope"):
        make_broadphase("nope")


def test_each_parameter_is_declared_once():
    """One ``Param`` per parameter name over all structures, and no constructor names or
    defaults a parameter itself: the structures' ``params`` tables are the one declaration."""
    seen = {}
    for cls in REGISTRY.values():
        for key, param in cls.params.items():
            assert seen.setdefault(key, param) is param, f"{key} declared twice"
        for klass in cls.__mro__[:-1]:
            init = vars(klass).get("__init__")
            if init is not None:
                named = [q.name for q in inspect.signature(init).parameters.values()
                         if q.name != "self" and q.kind != inspect.Parameter.VAR_KEYWORD]
                assert named == [], f"{klass.__name__}.__init__ declares {named}"


@pytest.mark.parametrize("method", [m for m in METHODS if REGISTRY[m].params])
def test_config_and_constructor_check_parameters_alike(method):
    from pdyn.config import ConfigError, SimulationConfig

    for key in REGISTRY[method].params:
        with pytest.raises(BroadPhaseError) as direct:
            make_broadphase(method, **{key: "x"})
        with pytest.raises(ConfigError) as config:
            SimulationConfig(broadphase=method, broadphase_params={key: "x"})
        assert str(config.value) == f"broadphase_params.{direct.value}"
        assert f"{key} = 'x': " in str(direct.value)
