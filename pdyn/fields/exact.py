"""Sums whose bits do not depend on the order of their terms (so not on the rank count):
exact expansions of float64 sums (Shewchuk's nonoverlapping partials, as ``math.fsum``;
[Shewchuk1997]) for a few totals, and integer fixed point for grids of many cells."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._jit import JIT

#: room for the partials of a float64 sum (nonoverlapping: at most ~40 over the exponent range)
MAX_PARTIALS = 128
#: the fixed-point total a grid may reach: 2⁶² (int64 holds it and any partial sum below it)
FIXED_LIMIT = 2.0 ** 62


@njit(**JIT)
def grow(partials, n, x):
    """Add ``x`` to the exact expansion ``partials[:n]`` (Shewchuk); returns its new length."""
    i = 0
    for k in range(n):
        y = partials[k]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    partials[i] = x
    return i + 1


def exact_total(expansions) -> float:
    """The correctly rounded sum of several exact expansions (arrays of partials, one a rank):
    the same bits whatever their order."""
    return math.fsum(np.concatenate([np.asarray(e, float).ravel() for e in expansions]).tolist())


def fixed_scale(bound: float) -> float:
    """The power of two s such that terms scaled by s and rounded to integers add up exactly
    in int64 as long as the sum of their magnitudes stays below ``bound`` (> 0): s =
    2^⌊log2(2⁶² / bound)⌋ (a power of two: scaling is exact, only the rounding to an integer
    loses the bits below bound · 2⁻⁶²)."""
    if not bound > 0.0 or not math.isfinite(bound):
        return 1.0
    return math.ldexp(1.0, math.frexp(FIXED_LIMIT / bound)[1] - 1)
