"""Seconds spent per phase of the step (``with timers("contacts"): ...``; wall-clock, s)."""

from __future__ import annotations

import time


class _Timing:
    """One timed stretch of a phase: ``__exit__`` adds its seconds to the phase's entry. A
    plain class, not a generator (``contextlib.contextmanager``): a step opens several and the
    generator's machinery cost about 1 µs each, a visible share of a small scene's step."""

    __slots__ = ("timers", "phase", "t0")

    def __init__(self, timers: dict, phase: str):
        self.timers, self.phase = timers, phase

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        t = self.timers
        t[self.phase] = t.get(self.phase, 0.0) + time.perf_counter() - self.t0


class PhaseTimers(dict):
    """Seconds spent per phase (``with timers("contacts"): ...``)."""

    def __call__(self, phase: str) -> _Timing:
        return _Timing(self, phase)
