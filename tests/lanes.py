"""The fast lane. ``python -m pytest -m "not slow"`` is the development loop (55-60 s,
about 105 CPU-s, on two idle cores once the kernels are compiled, on every core by
pytest-xdist); ``python -m pytest`` runs everything (the README's test command and CI). A
family of tests that differ only by a seed, a size, a structure or a parameter keeps its first
members (of each kind, where it has kinds) in the fast lane and marks the rest ``slow``; the
lane still runs every module and feature once, and one 2-rank session of ``tests/mpi`` (one
same-bits case per feature of the parallel code). On 4 ranks a case runs where no other
4-rank case has its feature (``tests/mpi/test_same_bits.py``: ``TWO_RANKS``)."""

from collections import Counter

import pytest


def fast_first(values, fast: int) -> list:
    """``values`` for ``pytest.mark.parametrize`` of one argument: the first ``fast`` of them
    in the fast lane, the rest marked ``slow``."""
    return [v if i < fast else pytest.param(v, marks=pytest.mark.slow)
            for i, v in enumerate(values)]


def fast_first_each(values, group, fast: int) -> list:
    """``values`` for ``pytest.mark.parametrize`` of several arguments (tuples): the first
    ``fast`` of each ``group(value)`` in the fast lane, the rest marked ``slow``."""
    seen = Counter()
    out = []
    for v in values:
        g = group(v)
        seen[g] += 1
        out.append(v if seen[g] <= fast else pytest.param(*v, marks=pytest.mark.slow))
    return out
