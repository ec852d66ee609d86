"""The fast lane. ``python -m pytest -m "not slow"`` is the development loop (about 100 s on
two idle cores once the kernels are compiled, on every core by pytest-xdist);
``python -m pytest`` runs everything (the README's test command and CI). A family of tests
that differ only by a seed or a size keeps its first members in the fast lane and marks the
rest ``slow``."""

import pytest


def fast_first(values, fast: int) -> list:
    """``values`` for ``pytest.mark.parametrize`` of one argument: the first ``fast`` of them
    in the fast lane, the rest marked ``slow``."""
    return [v if i < fast else pytest.param(v, marks=pytest.mark.slow)
            for i, v in enumerate(values)]
