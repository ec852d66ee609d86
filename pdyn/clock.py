"""The time of a step (s) in a run whose time step changes (``[[stages]] dt``,
``Simulation.change``): one owner of "the time of step n" for the whole run.

The step from n to n + 1 takes the time step in force after step n. A change at the end of
step s to dt_k makes the time piecewise linear in the step count,

    t(n) = t_s + (n − s) · dt_k   for n ≥ s (up to the next change),

t_s the time of step s by the previous piece: closed form in the change's step and the steps
since, never accumulated step by step, so every rank and a restart (which replays the changes
at their steps) get the same bits; without a change t(n) = n · dt exactly as before."""

from __future__ import annotations

from bisect import bisect_right


class Clock:
    """The run's time steps from step 0: ``dt`` (s) until :meth:`switch` changes it."""

    def __init__(self, dt: float):
        self.starts, self.times, self.dts = [0], [0.0], [float(dt)]
        #: the time step (s) of the next step
        self.dt = float(dt)
        #: the largest time step the run plans for (its stages', the setters' so far): the
        #: wall rebuild interval and the overlap watch's wall step are set from it
        self.largest = float(dt)

    def time(self, step: int) -> float:
        """The time (s) of ``step`` (the end of the step that made it)."""
        if len(self.starts) == 1:  # (0.0 + step · dt: the same bits, at every step's cost)
            return step * self.dt
        k = max(bisect_right(self.starts, step) - 1, 0)
        return self.times[k] + (step - self.starts[k]) * self.dts[k]

    def since(self, start: int, step: int) -> float:
        """The time (s) from ``start`` to ``step``: (step − start) · dt when no change lies
        between them (a program's or a target's time counted from a stage's start)."""
        k = bisect_right(self.starts, step) - 1
        if self.starts[k] <= start:
            return (step - start) * self.dts[k]
        return self.time(step) - self.time(start)

    def switch(self, step: int, dt: float) -> None:
        """The steps after ``step`` (the running one, or later) take ``dt`` (s)."""
        dt = float(dt)
        self.largest = max(self.largest, dt)
        if dt == self.dt:
            return
        if step == self.starts[-1]:  # (a second change at the same step)
            self.dts[-1] = self.dt = dt
            return
        self.times.append(self.time(step))
        self.starts.append(int(step))
        self.dts.append(dt)
        self.dt = dt


__all__ = ["Clock"]
