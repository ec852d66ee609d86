"""The long accumulator (``pdyn.fields.exact.limb_add``, ``limbs_rounded``) against
``math.fsum``: the correctly rounded sum of any finite float64s — huge, tiny, subnormal,
cancelling, half-way cases — the same bits in any order; infinities and NaN as IEEE sums."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from pdyn.fields.exact import LIMBS, limb_add, limbs_rounded


@njit(cache=True)
def _total(xs):
    limbs = np.zeros(LIMBS, np.int64)
    bits = xs.view(np.int64)
    for q in range(bits.shape[0]):
        limb_add(limbs, bits[q])
    return limbs_rounded(limbs)


def _fsum(xs) -> float:
    return math.fsum(list(xs)) + 0.0  # a zero is +0 (its sign would depend on the order)


@pytest.mark.parametrize("xs", [
    [], [-0.0], [0.0, -0.0], [2.0**53, 1.0], [2.0**53, 1.0, 2.0**-60], [2.0**53, 3.0],
    [1e16, 1.0, -1e-30], [5e-324, 5e-324], [1.7e308, -1.7e308, 1e-300], [-1.0, 2.0**-53],
    [1.0, -2.0**-54], [2.2250738585072014e-308, -5e-324], [1.7976931348623157e308, -1e292],
    [-3.5, -2.0**-1074], [0.1] * 10])
def test_hand_picked_sums_are_fsums(xs):
    got = _total(np.array(xs, float))
    assert got == _fsum(xs) and math.copysign(1.0, got) == math.copysign(1.0, _fsum(xs))


def test_random_sums_are_fsums_in_any_order():
    rng = np.random.default_rng(11)
    for trial in range(3000):
        n = int(rng.integers(1, 60))
        spread = 300 if trial % 2 else 20
        xs = rng.normal(size=n) * 10.0 ** rng.integers(-spread, spread, n)
        if trial % 3 == 0:
            xs[-1] = -xs[:-1].sum()  # cancels to about the rounding error
        if trial % 7 == 0:
            xs = np.concatenate((xs, rng.integers(-5, 5, 4) * 5e-324))
        want = _fsum(xs.tolist())
        assert _total(xs) == want
        assert _total(rng.permutation(xs)) == want


def test_infinities_and_nan():
    assert _total(np.array([np.inf, 1.0])) == np.inf
    assert _total(np.array([-np.inf, 1.0, -np.inf])) == -np.inf
    assert np.isnan(_total(np.array([np.inf, -np.inf])))
    assert np.isnan(_total(np.array([1.0, np.nan])))
