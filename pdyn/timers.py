"""Seconds spent per phase of the step (``with timers("contacts"): ...``; wall-clock, s)."""

from __future__ import annotations

import time
from contextlib import contextmanager


class PhaseTimers(dict):
    """Seconds spent per phase (``with timers("contacts"): ...``)."""

    @contextmanager
    def __call__(self, phase: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[phase] = self.get(phase, 0.0) + time.perf_counter() - t0
