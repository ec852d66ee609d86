"""The one schedule of a run: from the step's drift, what each step does besides the work of
every step — rebuild, pour, balance, reorder, which writers are due and what they need. The
same decisions on every rank count ([Verlet1967]: the lists rebuild when the largest drift
since the last build exceeds half the skin)."""

from __future__ import annotations

from typing import NamedTuple

#: what a step whose writers are not due needs of it
NO_NEEDS = frozenset()


class Decisions(NamedTuple):
    """What step ``step`` does besides the work of every step: rebuild (migrate, ghost plan,
    broad phase, lists), pour (an insertion step), balance, reorder memory, rebuild the lists
    (``lists``: a rebuild, or every step with skin 0), the ``writers`` due at its end and
    what they ``needs`` (``pdyn.io.OutputView``), with what the collecting writers need of
    every step."""

    step: int
    rebuild: bool
    pour: bool
    balance: bool
    reorder: bool
    lists: bool
    writers: list
    needs: frozenset


class Schedule:
    """Decides each step from the step's drift: rebuild when the lists are due
    (``NeighbourList.due``) or spheres are poured in, balance and reorder at the first
    rebuild step ``every`` steps after the last, the writers due; with translating walls
    also at every multiple of ``wall_every`` steps (``WallSet.rebuild_every``: no wall moves
    more than half the skin between rebuilds) and after :attr:`rebuild_next` was set (walls
    given a new motion between runs, ``Simulation.change``). ``always``: what every step needs
    besides (a mesh servo's recorded wall forces, ``WallMotion.needs``). The same decisions on
    every rank count; ``clock``: the run's time (``pdyn.clock.Clock``)."""

    def __init__(self, lists, inserter, balancer, reorder_every: int, reordered_at: int,
                 writers: list, clock, wall_every: int = 0, always: frozenset = NO_NEEDS):
        self.lists, self.inserter, self.balancer = lists, inserter, balancer
        self.reorder_every, self.reordered_at = reorder_every, reordered_at
        self.writers, self.clock, self.wall_every = writers, clock, wall_every
        self.rebuild_next = False  # the next step rebuilds (walls replanned between runs)
        #: the writers that collect something of every step (``Writer.collect``), and what
        #: they (and ``always``) need of each
        self.collectors = [w for w in writers if w.collects]
        self.collecting = frozenset(always).union(
            *[w.collects for w in self.collectors]) or NO_NEEDS

    def decide(self, step: int, drift2: float, images2: float = 0.0,
               strain: float = 0.0) -> Decisions:
        """The decisions of step ``step`` (the index after it), given the largest squared
        drift since the last rebuild ``drift2`` (m²) and, in a sheared box, the largest
        squared drift of an image ``images2`` (m², ``BlockExchange.image_drift2``): a pair
        of spheres closes by at most 2 D, a sphere and an image by D + I, so the drift
        tested against half the skin is max(D, (D + I) / 2); a box that deforms adds
        ``strain`` (m, ``BlockExchange.strain_drift``: half the closing by its strain)."""
        if images2 > drift2:
            drift2 = (0.5 * (drift2 ** 0.5 + images2 ** 0.5)) ** 2
        if strain:
            drift2 = (drift2 ** 0.5 + strain) ** 2
        pour = self.inserter is not None and self.inserter.due(step, self.clock.time(step))
        rebuild = (pour or bool(self.lists.due(drift2)) or self.rebuild_next  # new spheres
                   # enter lists and plan
                   or (self.wall_every > 0 and step % self.wall_every == 0))  # moving walls
        reorder = (rebuild and self.reorder_every > 0
                   and step - 1 - self.reordered_at >= self.reorder_every)
        if reorder:
            self.reordered_at = step - 1
        self.rebuild_next = False
        writers = [w for w in self.writers if w.due(step)]
        needs = (frozenset().union(self.collecting, *[w.needs for w in writers]) if writers
                 else self.collecting)
        return Decisions(step, rebuild, pour, rebuild and self.balancer.due(step), reorder,
                         rebuild or self.lists.every_step, writers, needs)
