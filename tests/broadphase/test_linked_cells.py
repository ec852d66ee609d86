"""Linked-cells specifics: cell size rules, bounded memory, candidate ceiling."""

import numpy as np
import pytest

from pdyn.broadphase import BroadPhaseError, find_contacts, make_broadphase


def scene(n=500, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 20, (n, 3)), rng.uniform(0.1, 0.5, n)


def test_cell_size_defaults_to_largest_diameter():
    pos, rad = scene(5000)  # enough particles that 21^3 cells fit the 8-per-particle budget
    bp = make_broadphase("linked_cells").build(pos, rad)
    bp.candidate_pairs()
    assert bp.stats()["cell_size"] == pytest.approx(2 * rad.max(), rel=1e-6)


def test_cell_size_smaller_than_largest_diameter_is_rejected():
    pos, rad = scene()
    with pytest.raises(BroadPhaseError, match=r"cell_size = 0\.5: smaller than the largest"):
        find_contacts(pos, rad, method="linked_cells", cell_size=0.5)


def test_larger_cell_size_is_honoured_and_exact():
    pos, rad = scene()
    bp = make_broadphase("linked_cells", cell_size=3.0).build(pos, rad)
    bp.candidate_pairs()
    assert bp.stats()["cell_size"] == pytest.approx(3.0, rel=1e-6)
    np.testing.assert_array_equal(find_contacts(pos, rad, method="linked_cells", cell_size=3.0),
                                  find_contacts(pos, rad, method="brute"))


def test_memory_is_bounded_for_sparse_huge_domains():
    pos, rad = scene(200)
    pos[0] = [1e7, -1e7, 1e7]
    bp = make_broadphase("linked_cells").build(pos, rad)
    bp.candidate_pairs()
    assert bp.stats()["cells"] <= max(4096, 8 * 200)
    np.testing.assert_array_equal(find_contacts(pos, rad, method="linked_cells"),
                                  find_contacts(pos, rad, method="brute"))


def test_too_many_candidates_is_a_clear_error_not_an_allocation():
    pos, rad = scene(3000)
    pos[:2000] = np.random.default_rng(1).uniform(0, 1, (2000, 3))  # one dense clump
    pos[0] = [1e4, 1e4, 1e4]
    with pytest.raises(BroadPhaseError, match="max_candidates = 1000: linked_cells would yield"):
        make_broadphase("linked_cells", max_candidates=1000).build(pos, rad).candidate_pairs()
    with pytest.raises(BroadPhaseError, match="max_candidates"):
        make_broadphase("linked_cells", max_candidates=0)
