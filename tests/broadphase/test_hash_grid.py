"""What is specific to ``hash_grid`` (the contract suite in test_contract.py runs for it too):
the shared adversarial scenes under seven parameter sets with a full structural invariant
check, grid growth, the <32 all-pairs threshold, parameter validation, stats keys, both update
strategies against each other and brute over random operation sequences.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdyn.broadphase import BroadPhaseError, find_contacts, make_broadphase
from pdyn.broadphase._hashed_grids import (C_CELL, FULL_STENCIL, O_CONT, axis_hash,
                                           cell_of_level, level, offset_table)
from pdyn.broadphase._kernels import canonical_pairs

from ..lanes import fast_first
from .harness import assert_each_pair_once, random_operations
from .scenes import FAMILIES, random_scene

N_SCENES = 560

PARAM_SETS = (
    {},
    {"hierarchy_factor": 1.5},
    {"hierarchy_factor": 4.0, "initial_cells_per_axis": 4},
    {"initial_cells_per_axis": 4, "max_cells_per_axis": 4},  # many hash collisions, no growth
    {"minimal_grid_density": 0.5, "activation_threshold": 0},
    {"update": "rebuild", "initial_cells_per_axis": 8},
    {"hierarchy_factor": 3.0, "cell_capacity": 1},
)


def exact(pos, rad):
    return find_contacts(pos, rad, method="brute")


# the fast lane: each family under each parameter set once
@pytest.mark.parametrize("seed", fast_first(range(N_SCENES),
                                            len(FAMILIES) * len(PARAM_SETS)))
def test_matches_brute_under_parameter_sets(seed):
    family, pos, rad = random_scene(seed)
    params = PARAM_SETS[(seed // len(FAMILIES)) % len(PARAM_SETS)]
    bp = make_broadphase("hash_grid", **params).build(pos, rad)
    cand = bp.candidate_pairs()
    assert_each_pair_once(cand)
    bp.check_invariants()
    msg = f"{family} seed {seed} params {params}"
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos, rad), err_msg=msg)
    # one step of motion (up to 20 % of the size, some objects jump far) through update()
    rng = np.random.default_rng(10_000 + seed)
    pos2 = pos + rng.uniform(-0.2, 0.2, pos.shape) * (2 * rad)[:, None]
    jump = rng.random(pos.shape[0]) < 0.05
    pos2[jump] += rng.normal(0, 50, (int(jump.sum()), 3))
    bp.update(pos2)
    bp.check_invariants()
    cand = bp.candidate_pairs()
    assert_each_pair_once(cand)
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos2, rad), err_msg=msg + " update")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    family=st.sampled_from(FAMILIES),
    f=st.sampled_from([1.25, 2.0, 2.5, 8.0]),
    cells=st.sampled_from([4, 8, 16]),
    density=st.sampled_from([0.25, 1.0, 8.0]),
    threshold=st.integers(0, 40),
)
def test_hypothesis_scenes_and_params(seed, family, f, cells, density, threshold):
    _, pos, rad = random_scene(seed, family)
    bp = make_broadphase("hash_grid", hierarchy_factor=f, initial_cells_per_axis=cells,
                         minimal_grid_density=density, activation_threshold=threshold)
    bp.build(pos, rad)
    bp.check_invariants()
    cand = bp.candidate_pairs()
    assert_each_pair_once(cand)
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos, rad))


# ------------------------------------------------------------------ hashing and stencils
def testaxis_hash_is_modulo_for_negative_coordinates():
    """Adjacent lattice cells map to adjacent hashes (mod n) across zero (Schornbaum Sec. 3.2)."""
    inv, mask = 1.0, 7
    xs = np.arange(-40, 40) + 0.5
    for fn in (axis_hash, getattr(axis_hash, "py_func", axis_hash)):
        h = np.array([fn(x, inv, mask) for x in xs])
        assert np.all((h[1:] - h[:-1]) % 8 == 1)
        assert fn(-0.5, inv, mask) == 7 and fn(0.5, inv, mask) == 0 and fn(-8.5, inv, mask) == 7


@pytest.mark.parametrize("n", [4, 8, 16])
def test_offset_table_matches_wrapped_neighbours(n):
    tab = offset_table(n)
    for cz in (0, 1, n - 1):
        for cy in (0, 2, n - 1):
            for cx in (0, n // 2, n - 1):
                c = cx + n * (cy + n * cz)
                pat = (0 if cx == 0 else 2 if cx == n - 1 else 1) + 3 * (
                    0 if cy == 0 else 2 if cy == n - 1 else 1) + 9 * (
                    0 if cz == 0 else 2 if cz == n - 1 else 1)
                got = c + tab[pat]
                want = [((cx + dx) % n) + n * (((cy + dy) % n) + n * ((cz + dz) % n))
                        for dx, dy, dz in FULL_STENCIL]
                assert got.tolist() == want
                assert len(set(want)) == 27


def test_levels_follow_schornbaum_eq_3_3_3():
    c0, f = math.sqrt(2.0), 2.0
    for s in (1e-6, 0.3, 1.0, math.sqrt(2.0), 2.0, 1e6):
        for fn in (level, getattr(level, "py_func", level)):
            k = fn(s, c0, f, math.log(f))
            assert cell_of_level(c0, f, k - 1) <= s < cell_of_level(c0, f, k)


# ------------------------------------------------------------------ hierarchy, growth, threshold
def test_first_grid_cell_is_first_size_times_sqrt_f_and_grids_sorted():
    rad = np.array([1.0, 0.01, 100.0, 0.3] + [1.0] * 40)
    pos = np.random.default_rng(0).uniform(0, 50, (rad.size, 3))
    for f in (2.0, 3.0):
        bp = make_broadphase("hash_grid", hierarchy_factor=f).build(pos, rad)
        st_ = bp.stats()
        sizes = st_["cell_sizes"]
        assert sizes == sorted(sizes) and st_["grids"] == 4
        assert any(math.isclose(c, 2.0 * math.sqrt(f)) for c in sizes)
        ratios = np.log(np.array(sizes) / (2.0 * math.sqrt(f))) / math.log(f)
        np.testing.assert_allclose(ratios, np.round(ratios), atol=1e-9)  # c0 * f^k


def test_grid_grows_when_density_drops_below_5_and_never_shrinks():
    rng = np.random.default_rng(1)
    n = 7000
    pos = rng.uniform(0, 40, (n, 3))
    rad = np.full(n, 0.4)
    bp = make_broadphase("hash_grid").build(pos, rad, np.arange(100))
    assert bp.stats()["cells_per_axis"] == [16]
    bp.insert(np.arange(100, n))
    st_ = bp.stats()
    assert st_["cells_per_axis"] == [64] and st_["grid_growths"] == 2  # 16 -> 32 -> 64
    assert st_["cells_per_grid"][0] >= 5 * n
    bp.check_invariants()
    np.testing.assert_array_equal(canonical_pairs(bp.candidate_pairs()), exact(pos, rad))
    bp.remove(np.arange(50, n))
    assert bp.stats()["cells_per_axis"] == [64]  # no shrinking (Sec. 3.5)
    bp.check_invariants()


def test_all_pairs_below_threshold_then_grids_for_good():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 5, (60, 3))
    rad = rng.uniform(0.2, 0.8, 60)
    bp = make_broadphase("hash_grid").build(pos, rad, np.arange(32))
    assert not bp.stats()["active"] and bp.stats()["grids"] == 0
    cand = bp.candidate_pairs()
    assert bp.stats()["candidates"] == 32 * 31 // 2
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos[:32], rad[:32]))
    bp.insert([32])  # 33 > 32: switch
    assert bp.stats()["active"] and bp.stats()["grids"] >= 1
    bp.check_invariants()
    bp.remove(np.arange(5, 33))  # back to 5 residents: stays on grids (Sec. 3.7)
    assert bp.stats()["active"]
    bp.check_invariants()
    np.testing.assert_array_equal(canonical_pairs(bp.candidate_pairs()), exact(pos[:5], rad[:5]))


def test_container_grows_past_16_and_is_freed_when_empty():
    pos = np.zeros((200, 3)) + 7.0
    rad = np.full(200, 0.5)
    bp = make_broadphase("hash_grid").build(pos, rad)
    assert bp.stats()["occupied_total"] == 1
    assert bp.candidate_pairs().shape[0] == 200 * 199 // 2
    bp.check_invariants()
    bp.remove(np.arange(200))
    assert bp.stats()["occupied_total"] == 0 and bp.candidate_pairs().shape[0] == 0
    bp.insert(np.arange(10))
    bp.check_invariants()


# ------------------------------------------------------------------ parameters and stats
@pytest.mark.parametrize("param,value", [
    ("hierarchy_factor", 1.0), ("hierarchy_factor", 0.5), ("hierarchy_factor", float("nan")),
    ("hierarchy_factor", float("inf")), ("hierarchy_factor", "2"),
    ("initial_cells_per_axis", 2), ("initial_cells_per_axis", 12), ("initial_cells_per_axis", 0),
    ("initial_cells_per_axis", 16.0), ("minimal_grid_density", 0), ("minimal_grid_density", -1.0),
    ("minimal_grid_density", float("nan")), ("update", "lazy"), ("activation_threshold", -1),
    ("cell_capacity", 0), ("max_cells_per_axis", 8), ("max_cells_per_axis", 100),
])
def test_bad_parameters_are_clear_errors(param, value):
    with pytest.raises(BroadPhaseError, match=param) as e:
        make_broadphase("hash_grid", **{param: value})
    assert repr(value) in str(e.value)


def test_stats_keys():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 10, (100, 3))
    rad = 10 ** rng.uniform(-2, 0, 100)
    bp = make_broadphase("hash_grid").build(pos, rad)
    bp.candidate_pairs()
    st_ = bp.stats()
    for key in ("grids", "cells_per_grid", "cells_per_axis", "occupied_cells", "candidates",
                "memory_bytes", "cell_sizes", "objects_per_grid", "update", "moved"):
        assert key in st_, key
    assert st_["grids"] == len(st_["cells_per_grid"]) == len(st_["occupied_cells"])
    assert sum(st_["objects_per_grid"]) == 100


# ------------------------------------------------------------------ update strategies, sequences
def test_incremental_moves_only_objects_whose_cell_changed():
    rng = np.random.default_rng(4)
    pos = rng.uniform(0, 30, (2000, 3))
    rad = np.full(2000, 0.5)
    bp = make_broadphase("hash_grid").build(pos, rad)
    bp.update(pos.copy())
    assert bp.stats()["moved"] == 0
    pos2 = pos + rng.uniform(-0.05, 0.05, pos.shape)
    bp.update(pos2)
    moved = bp.stats()["moved"]
    ref = make_broadphase("hash_grid").build(pos, rad)._hg
    cell_before = ref.ct[ref.ob[:2000, O_CONT], C_CELL]
    ref2 = make_broadphase("hash_grid").build(pos2, rad)._hg
    cell_after = ref2.ct[ref2.ob[:2000, O_CONT], C_CELL]
    assert 0 < moved == int(np.count_nonzero(cell_before != cell_after)) < 2000
    bp.check_invariants()


@pytest.mark.parametrize("seed", range(16))
def test_strategies_agree_on_random_operation_sequences(seed):
    """Both update strategies through the same random operations (``harness``), the structural
    invariants after every operation, and the same objects per grid and occupied cells."""
    thr = int(np.random.default_rng(seed).integers(0, 60))

    def check(bps):
        for bp in bps:
            bp.check_invariants()
        s_inc, s_reb = bps[0].stats(), bps[1].stats()
        assert s_inc["objects_per_grid"] == s_reb["objects_per_grid"]
        assert s_inc["occupied_cells"] == s_reb["occupied_cells"]

    random_operations([("hash_grid", {"update": u, "activation_threshold": thr})
                       for u in ("incremental", "rebuild")], seed, steps=20, after=check)


def test_positions_array_can_grow_between_operations():
    rng = np.random.default_rng(6)
    pos = rng.uniform(0, 10, (50, 3))
    rad = rng.uniform(0.2, 0.6, 50)
    bp = make_broadphase("hash_grid", activation_threshold=0).build(pos, rad)
    pos2 = np.concatenate((pos, rng.uniform(0, 10, (150, 3))))
    rad2 = np.concatenate((rad, rng.uniform(0.2, 0.6, 150)))
    bp.update(pos2, rad2)
    bp.insert(np.arange(50, 200))
    bp.check_invariants()
    np.testing.assert_array_equal(canonical_pairs(bp.candidate_pairs()), exact(pos2, rad2))


