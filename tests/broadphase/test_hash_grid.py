"""What is specific to ``hash_grid`` (the contract suite in test_contract.py runs for it too):
>= 500 seeded adversarial scenes against ``brute``, grid growth, the <32 all-pairs threshold,
parameter validation, stats keys, both update strategies, insert/remove/update sequences with
a full structural invariant check after every operation.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdyn.broadphase import BroadPhaseError, find_contacts, make_broadphase
from pdyn.broadphase._kernels import FULL_STENCIL, canonical_pairs, filter_overlapping
from pdyn.broadphase.hash_grid import HashGrid, _axis_hash, _cell_of_level, _level, offset_table

FAMILIES = (
    "poly_1e3", "poly_1e5", "huge_among_small", "negative", "coords_1e9", "tiny_at_1e9",
    "faces", "faces_negative", "clustered", "growth", "coincident", "collisions",
)
N_SCENES = 528

PARAM_SETS = (
    {},
    {"hierarchy_factor": 1.5},
    {"hierarchy_factor": 4.0, "initial_cells_per_axis": 4},
    {"initial_cells_per_axis": 4, "max_cells_per_axis": 4},  # many hash collisions, no growth
    {"minimal_grid_density": 0.5, "activation_threshold": 0},
    {"update": "rebuild", "initial_cells_per_axis": 8},
    {"hierarchy_factor": 3.0, "cell_capacity": 1},
)


def _cell(r0, f=2.0, level=0):
    """Cell edge of ``level`` for a structure whose first particle has radius r0."""
    return float(_cell_of_level(2.0 * r0 * math.sqrt(f), f, level))


def scene(seed, family=None):
    rng = np.random.default_rng(seed)
    family = family or FAMILIES[seed % len(FAMILIES)]
    n = int(rng.integers(2, 260))
    if family == "poly_1e3":
        pos = rng.uniform(-20, 20, (n, 3))
        rad = 10 ** rng.uniform(-3, 0, n) * 3.0
    elif family == "poly_1e5":
        pos = rng.uniform(-40, 40, (n, 3))
        rad = 10 ** rng.uniform(-5, 0, n) * 25.0
        rad[rng.integers(n)] = 25.0  # the full 1:1e5 span
    elif family == "huge_among_small":
        pos = rng.uniform(0, 40, (n, 3))
        rad = np.full(n, 0.5)
        rad[rng.integers(n)] = rng.uniform(10, 30)
    elif family == "negative":
        pos = rng.uniform(-1e4 - 15, -1e4, (n, 3))
        rad = rng.uniform(0.1, 1.5, n)
    elif family == "coords_1e9":
        pos = rng.uniform(-1e9, 1e9, (n, 3))
        k = n // 2
        corner = rng.choice([-1.0, 1.0], 3) * 1e9 * rng.uniform(0.5, 1.0)
        pos[:k] = corner + rng.uniform(0, 20, (k, 3))
        rad = rng.uniform(0.5, 4.0, n)
    elif family == "tiny_at_1e9":
        # radii close to the spacing of doubles at 1e9 (1.2e-7): round-off decides overlaps
        corner = rng.choice([-1.0, 1.0], 3) * 1e9
        ulp = 1.1920928955078125e-07
        pos = corner + rng.integers(-6, 6, (n, 3)) * ulp * rng.choice([1, 2, 3])
        rad = rng.choice([0.6, 1.0, 1.5, 2.0, 5.0, 40.0], n) * ulp
    elif family in ("faces", "faces_negative"):
        # centres exactly on cell faces of the hierarchy's grids, neighbours exactly touching
        r0 = rng.choice([0.5, 0.3, 1.0])
        c = _cell(r0)
        k = int(round(n ** (1 / 3))) + 1
        g = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3)
        g = g[rng.permutation(g.shape[0])[: n - 1]]
        sign = -1.0 if family == "faces_negative" else 1.0
        step = rng.choice([0.5 * c, 0.25 * c, c])
        pos = np.concatenate(([[sign * 1e3, 0, 0]], sign * g * step))
        rad = np.concatenate(([r0], rng.choice([0.5 * step, 0.25 * step, 0.75 * step], g.shape[0])))
    elif family == "clustered":
        centres = rng.uniform(-300, 300, (4, 3))
        pos = centres[rng.integers(0, 4, n)] + rng.normal(0, 1.0, (n, 3))
        rad = rng.uniform(0.05, 0.6, n) * rng.choice([1.0, 10.0], n, p=[0.95, 0.05])
    elif family == "growth":
        n = int(rng.integers(600, 1400))
        box = (n / 0.3) ** (1 / 3)
        pos = rng.uniform(-box / 2, box / 2, (n, 3))
        rad = rng.uniform(0.45, 0.55, n)
    elif family == "coincident":
        base = rng.uniform(0, 5, (max(n // 8, 1), 3))
        pos = base[rng.integers(0, base.shape[0], n)]
        rad = rng.uniform(0.05, 0.5, n)
    elif family == "collisions":
        # far apart copies of the same small cluster: identical hashes, no overlaps across copies
        m = max(n // 4, 2)
        local = rng.uniform(0, 3, (m, 3))
        shifts = rng.integers(-5, 5, (4, 3)) * 2.0**rng.integers(5, 12)
        pos = np.concatenate([local + s for s in shifts])
        rad = np.tile(rng.uniform(0.2, 0.6, m), 4)
    else:
        raise ValueError(family)
    return family, np.ascontiguousarray(pos, float), np.ascontiguousarray(rad, float)


def exact(pos, rad):
    return find_contacts(pos, rad, method="brute")


def assert_once(cand):
    c = canonical_pairs(cand)
    assert not np.any(np.all(c[1:] == c[:-1], axis=1)), "pair reported twice"
    if cand.shape[0]:
        assert np.all(cand[:, 0] != cand[:, 1])


@pytest.mark.parametrize("seed", range(N_SCENES))
def test_matches_brute_on_adversarial_scenes(seed):
    family, pos, rad = scene(seed)
    params = PARAM_SETS[(seed // len(FAMILIES)) % len(PARAM_SETS)]
    bp = make_broadphase("hash_grid", **params).build(pos, rad)
    cand = bp.candidate_pairs()
    assert_once(cand)
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
    assert_once(cand)
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos2, rad), err_msg=msg + " update")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 120),
    span=st.sampled_from([1.0, 10.0, 1e3, 1e5]),
    offset=st.sampled_from([0.0, -1e6, 1e9, -1e9]),
    f=st.sampled_from([1.25, 2.0, 2.5, 8.0]),
    cells=st.sampled_from([4, 8, 16]),
    density=st.sampled_from([0.25, 1.0, 8.0]),
)
def test_hypothesis_random_scenes_and_params(seed, n, span, offset, f, cells, density):
    rng = np.random.default_rng(seed)
    rad = 10 ** rng.uniform(-math.log10(span), 0, n)
    pos = offset + rng.uniform(-3, 3, (n, 3)) * rng.choice([1.0, 0.1], (n, 1))
    bp = make_broadphase("hash_grid", hierarchy_factor=f, initial_cells_per_axis=cells,
                         minimal_grid_density=density,
                         activation_threshold=int(rng.integers(0, 40)))
    bp.build(pos, rad)
    bp.check_invariants()
    cand = bp.candidate_pairs()
    assert_once(cand)
    np.testing.assert_array_equal(canonical_pairs(cand), exact(pos, rad))


# ------------------------------------------------------------------ hashing and stencils
def test_axis_hash_is_modulo_for_negative_coordinates():
    """Adjacent lattice cells map to adjacent hashes (mod n) across zero (Schornbaum Sec. 3.2)."""
    inv, mask = 1.0, 7
    xs = np.arange(-40, 40) + 0.5
    for fn in (_axis_hash, getattr(_axis_hash, "py_func", _axis_hash)):
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
        for fn in (_level, getattr(_level, "py_func", _level)):
            k = fn(s, c0, f, math.log(f))
            assert _cell_of_level(c0, f, k - 1) <= s < _cell_of_level(c0, f, k)


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


def test_grid_grows_when_density_drops_below_8_and_never_shrinks():
    rng = np.random.default_rng(1)
    n = 5000
    pos = rng.uniform(0, 40, (n, 3))
    rad = np.full(n, 0.4)
    bp = make_broadphase("hash_grid").build(pos, rad, np.arange(100))
    assert bp.stats()["cells_per_axis"] == [16]
    bp.insert(np.arange(100, n))
    st_ = bp.stats()
    assert st_["cells_per_axis"] == [64] and st_["grid_growths"] == 2  # 16 -> 32 -> 64
    assert st_["cells_per_grid"][0] >= 8 * n
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
    assert bp.stats()["tests"] == 32 * 31 // 2
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
                "memory_bytes", "tests", "cell_sizes", "objects_per_grid", "update", "moved"):
        assert key in st_, key
    assert st_["grids"] == len(st_["cells_per_grid"]) == len(st_["occupied_cells"])
    assert sum(st_["objects_per_grid"]) == 100
    assert st_["tests"] >= st_["candidates"] and st_["memory_bytes"] > 0


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
    ref = make_broadphase("hash_grid").build(pos, rad)
    cell_before = ref._ct[ref._ob[:2000, 1], 3]
    ref2 = make_broadphase("hash_grid").build(pos2, rad)
    cell_after = ref2._ct[ref2._ob[:2000, 1], 3]
    assert 0 < moved == int(np.count_nonzero(cell_before != cell_after)) < 2000
    bp.check_invariants()


@pytest.mark.parametrize("seed", range(16))
def test_strategies_agree_on_random_operation_sequences(seed):
    """Random insert/remove/move/resize operations; both strategies checked against brute and
    the structural invariants after every operation, and against each other."""
    rng = np.random.default_rng(500 + seed)
    family, pos0, rad0 = scene(seed, FAMILIES[seed % len(FAMILIES)])
    cap = max(400, pos0.shape[0] + 50)
    n0 = pos0.shape[0]
    lo, hi = pos0.min(axis=0), pos0.max(axis=0)
    span = max(float(np.max(hi - lo)), 1.0)
    pos = np.zeros((cap, 3))
    rad = np.ones(cap)
    pos[:n0], rad[:n0] = pos0, rad0
    pos[n0:] = lo + rng.uniform(0, 1, (cap - n0, 3)) * (hi - lo)
    rad[n0:] = rng.choice(rad0, cap - n0)
    resident = set(range(n0 // 2))
    thr = int(rng.integers(0, 60))
    start = np.array(sorted(resident), np.int64)
    bps = [make_broadphase("hash_grid", update=u, activation_threshold=thr).build(pos, rad, start)
           for u in ("incremental", "rebuild")]
    for step in range(20):
        op = int(rng.integers(4))
        if op == 0:
            free = np.array(sorted(set(range(cap)) - resident), np.int64)
            new = rng.choice(free, size=min(len(free), int(rng.integers(1, 60))), replace=False)
            for bp in bps:
                bp.insert(new)
            resident |= set(new.tolist())
        elif op == 1 and resident:
            res = np.array(sorted(resident), np.int64)
            gone = rng.choice(res, size=min(len(res), int(rng.integers(1, 60))), replace=False)
            for bp in bps:
                bp.remove(gone)
            resident -= set(gone.tolist())
        elif op == 2:
            pos = pos + rng.uniform(-0.2, 0.2, pos.shape) * (2 * rad)[:, None]
            far = rng.random(cap) < 0.03
            pos[far] = -pos[far] * rng.uniform(1, 3)  # big jumps, across zero
            for bp in bps:
                bp.update(pos)
        else:  # radii change: objects change grids (Alg. 2, else branch)
            rad = rad * np.exp(rng.normal(0, 1.0, cap) * (rng.random(cap) < 0.2))
            for bp in bps:
                bp.update(pos, rad)
        res = np.array(sorted(resident), np.int64)
        exp = exact(pos[res], rad[res])
        exp = canonical_pairs(res[exp]) if exp.size else exp
        got = []
        for bp in bps:
            bp.check_invariants()
            cand = bp.candidate_pairs()
            assert_once(cand)
            assert np.isin(cand, res).all()
            got.append(canonical_pairs(filter_overlapping(cand, pos, rad)))
            np.testing.assert_array_equal(got[-1], exp, err_msg=f"{family} step {step} op {op}")
        s_inc, s_reb = bps[0].stats(), bps[1].stats()
        assert s_inc["objects_per_grid"] == s_reb["objects_per_grid"]
        assert s_inc["occupied_cells"] == s_reb["occupied_cells"]


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


def test_is_the_default_of_find_contacts():
    rng = np.random.default_rng(7)
    pos = rng.uniform(0, 10, (80, 3))
    rad = rng.uniform(0.1, 1.0, 80)
    assert isinstance(make_broadphase("hash_grid"), HashGrid)
    np.testing.assert_array_equal(find_contacts(pos, rad), exact(pos, rad))
