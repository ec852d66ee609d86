"""Sums whose bits do not depend on the order of their terms (so not on the rank count):
exact expansions of float64 sums (Shewchuk's nonoverlapping partials, as ``math.fsum``;
[Shewchuk1997]) for a few totals, integer fixed point for grids of many cells, and a long
accumulator (every float64 as an integer multiple of 2⁻¹⁰⁷⁴ in 32-bit limbs, [Collange2015])
rounded once for many sums of many terms."""

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


def fixed_scale(bound):
    """The power of two s such that terms scaled by s and rounded to integers add up exactly
    in int64 as long as the sum of their magnitudes stays below ``bound`` (> 0; else s = 1):
    s = 2^⌊log2(2⁶² / bound)⌋ (a power of two: scaling is exact, only the rounding to an
    integer loses the bits below bound · 2⁻⁶²); an array of bounds: the array of theirs."""
    b = np.asarray(bound, float)
    ok = (b > 0.0) & np.isfinite(b)
    s = np.where(ok, np.ldexp(1.0, np.frexp(FIXED_LIMIT / np.where(ok, b, 1.0))[1] - 1), 1.0)
    return float(s) if s.ndim == 0 else s


#: bits per limb of a long accumulator; limb k weighs 2^(32 k − 1074), so every finite
#: float64 (a 53-bit integer times 2^e, e ≥ −1074) adds into three limbs exactly
LIMB_BITS = 32
#: limbs of a long accumulator: 2098 bits of doubles, carries' room, and one count of the
#: non-finite terms (:data:`SPECIALS`)
LIMBS = 68
SPECIALS = LIMBS - 1
_MASK = (1 << LIMB_BITS) - 1


@njit(inline="always", **JIT)
def limb_add(limbs, b):
    """Add the float64 whose bits are the int64 ``b`` (an array's ``.view(np.int64)``)
    exactly to the long accumulator ``limbs`` (int64, :data:`LIMBS`: each limb gains less than
    2³² in magnitude, so 2³¹ terms never overflow). An infinity or NaN is counted in
    ``limbs[SPECIALS]``."""
    field = (b >> 52) & 0x7FF
    m = b & 0xFFFFFFFFFFFFF
    if field == 0x7FF:
        limbs[SPECIALS] += (1 << 40) if m != 0 else ((1 << 20) if b < 0 else 1)
        return
    if field != 0:  # a normal number: (2⁵² + m) 2^(field − 1075) = m' 2^(field − 1 − 1074)
        m |= 1 << 52
        field -= 1
    k, shift = field >> 5, field & 31  # m's lowest bit is bit 32 k + shift (from 2⁻¹⁰⁷⁴)
    low = (m & ((1 << (32 - shift)) - 1)) << shift
    rest = m >> (32 - shift)
    if b < 0:
        limbs[k] -= low
        limbs[k + 1] -= rest & _MASK
        limbs[k + 2] -= rest >> 32
    else:
        limbs[k] += low
        limbs[k + 1] += rest & _MASK
        limbs[k + 2] += rest >> 32


@njit(**JIT)
def limbs_rounded(limbs):
    """The correctly rounded float64 of the long accumulator ``limbs`` (as ``math.fsum`` of
    its terms: a half-way case to even; a zero is +0; NaN when it holds a NaN or infinities
    of both signs, else an infinity it holds). Normalises ``limbs`` in place."""
    special = limbs[SPECIALS]
    if special:
        if special >= (1 << 40) or (special & 0xFFFFF and special >> 20):
            return np.nan
        return np.inf if special & 0xFFFFF else -np.inf
    lo = 0
    while lo < SPECIALS and limbs[lo] == 0:
        lo += 1
    if lo == SPECIALS:
        return 0.0
    sign = 1.0
    for _ in range(2):  # carries from the lowest nonzero limb, and again after a negation
        for k in range(lo, SPECIALS - 1):
            c = limbs[k] >> LIMB_BITS
            limbs[k] -= c << LIMB_BITS
            limbs[k + 1] += c
        if limbs[SPECIALS - 1] >= 0:
            break
        sign = -1.0
        for k in range(lo, SPECIALS):
            limbs[k] = -limbs[k]
    top = SPECIALS - 1
    while top >= lo and limbs[top] == 0:
        top -= 1
    if top < lo:
        return 0.0
    high = 0  # the highest set bit, from 2⁻¹⁰⁷⁴
    while limbs[top] >> (high + 1):
        high += 1
    high += LIMB_BITS * top
    if high < 53:  # an integer below 2⁵³ times 2⁻¹⁰⁷⁴: exact (a subnormal or the smallest)
        return sign * math.ldexp(float(_bits(limbs, 0, high + 1)), -1074)
    mant = _bits(limbs, high - 52, 53)
    cut = high - 53  # the half's bit; any set bit below it breaks a tie
    half = (limbs[cut >> 5] >> (cut & 31)) & 1
    rest = (limbs[cut >> 5] & ((1 << (cut & 31)) - 1)) != 0
    k = lo
    while not rest and k < cut >> 5:
        rest = limbs[k] != 0
        k += 1
    if half and (rest or mant & 1):
        mant += 1
    return sign * math.ldexp(float(mant), high - 52 - 1074)


@njit(inline="always", **JIT)
def _bits(limbs, low, n):
    """The ``n`` ≤ 53 bits of the normalised ``limbs`` from bit ``low`` up, as an integer."""
    k, b = low >> 5, low & 31
    out = limbs[k] >> b
    got = LIMB_BITS - b
    while got < n:
        k += 1
        out |= limbs[k] << got
        got += LIMB_BITS
    return out & ((1 << n) - 1)


@njit(**JIT)
def limbs_of(values):
    """The long accumulator (:data:`LIMBS` int64) of the sum of ``values`` (float64, 1-D):
    accumulators of several ranks add as integers (exactly, in any order), and
    :func:`limbs_rounded` of the total is the correctly rounded sum of every term."""
    limbs = np.zeros(LIMBS, np.int64)
    bits = values.view(np.int64)
    for q in range(bits.shape[0]):
        limb_add(limbs, bits[q])
    return limbs


class GroupSums:
    """Exact sums of ``groups`` values per step, kept as rows: each step's terms are added
    into one long accumulator per group (:attr:`limbs`, :attr:`used`; a kernel may add into
    them itself with :func:`limb_add`), then :meth:`emit` keeps the nonzero limbs as rows
    (key, limb value), key = (step held · groups + group) · :data:`LIMBS` + limb, in arrays
    that double when full. Rows of several ranks, in any order, give each sum's correctly
    rounded total (:func:`group_totals`): the same bits on any rank count."""

    def __init__(self, groups: int, capacity: int = 1024):
        self.n = 0
        self.keys = np.empty(capacity, np.int64)
        self.values = np.empty(capacity, np.int64)
        self.limbs = np.zeros((groups, LIMBS), np.int64)
        self.used = np.zeros(groups, np.bool_)

    def add(self, held: int, group: np.ndarray, values: np.ndarray) -> None:
        """Add ``values`` (K,) to their ``group`` (K,) and keep the step held ``held``."""
        _add_groups(group, np.ascontiguousarray(values, np.float64), self.limbs, self.used)
        self.emit(held)

    def emit(self, held: int, n: int | None = None) -> None:
        """Keep the sums added since the last call as the step held ``held``'s rows (``n``: the
        row count a kernel's own :func:`emit_rows` returned)."""
        if n is None:
            n = emit_rows(held, self.limbs, self.used, self.keys, self.values, self.n)
        if n > len(self.keys):  # counted, not written: the limbs wait for the grown arrays
            grown = max(2 * len(self.keys), n)
            self.keys, self.values = np.resize(self.keys, grown), np.resize(self.values, grown)
            n = emit_rows(held, self.limbs, self.used, self.keys, self.values, self.n)
        self.n = n

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, limb values) of the rows held (copies), and empty the buffer."""
        out = self.keys[:self.n].copy(), self.values[:self.n].copy()
        self.n = 0
        return out


@njit(**JIT)
def _add_groups(group, values, limbs, used):
    """``values[k]`` into the long accumulator of ``group[k]``."""
    bits = values.view(np.int64)
    for k in range(group.shape[0]):
        limb_add(limbs[group[k]], bits[k])
        used[group[k]] = True


@njit(**JIT)
def emit_rows(held, limbs, used, keys, values, n):
    """The nonzero limbs of every used accumulator as rows from ``n`` (:class:`GroupSums`),
    each accumulator then cleared; returns the new row count. When they do not fit, only
    counted: nothing is written or cleared."""
    m = n
    for g in range(used.shape[0]):
        if used[g]:
            for q in range(LIMBS):
                if limbs[g, q] != 0:
                    m += 1
    if m > keys.shape[0]:
        return m
    for g in range(used.shape[0]):
        if used[g]:
            for q in range(LIMBS):
                if limbs[g, q] != 0:
                    keys[n] = (held * used.shape[0] + g) * LIMBS + q
                    values[n] = limbs[g, q]
                    limbs[g, q] = 0
                    n += 1
            used[g] = False
    return n


def group_totals(keys: np.ndarray, values: np.ndarray, sums: int) -> np.ndarray:
    """The ``sums`` totals (steps held × groups, flat) of the rows (key, limb value) of
    :class:`GroupSums` of any number of ranks, in any order: each sum's limbs added and
    rounded once (:func:`limbs_rounded`)."""
    out = np.zeros(sums)
    _round_sums(keys, values, out, np.zeros(LIMBS, np.int64))
    return out


@njit(**JIT)
def _round_sums(keys, values, out, limbs):
    """out[s] = the correctly rounded sum whose limbs are the rows of key // LIMBS = s: the
    rows counted into their sums, each sum's limbs added and rounded."""
    first = np.zeros(out.shape[0] + 1, np.int64)
    for k in range(keys.shape[0]):
        first[keys[k] // LIMBS + 1] += 1
    for s in range(out.shape[0]):
        first[s + 1] += first[s]
    order = np.empty(keys.shape[0], np.int64)
    fill = first[:-1].copy()
    for k in range(keys.shape[0]):
        s = keys[k] // LIMBS
        order[fill[s]] = k
        fill[s] += 1
    for s in range(out.shape[0]):
        if first[s] == first[s + 1]:
            continue
        limbs[:] = 0
        for q in range(first[s], first[s + 1]):
            limbs[keys[order[q]] % LIMBS] += values[order[q]]
        out[s] = limbs_rounded(limbs)
