"""Dynamic load balancing: when to rebalance, what a block weighs, how even the load was.

Blocks are the unit of balance ([EiblRude2019]; waLBerla's block forest, on which mesa_pd
runs, [EiblRude2019mesapd]): at a rebalance every rank adds up the work its owned particles
did per block, one reduction makes the per-block weights global, and every rank cuts the same
space-filling curve of blocks into runs of equal weight (``pdyn.domain.BlockGrid.assign``);
whole blocks then move with their particles to their new owner
(``pdyn.parallel.exchange.BlockExchange.rebalance``). The work of a particle is measured on
the neighbour lists of the interval that ends: 1 for the particle (integration, ghosts,
migration) plus ``CONTACT_COST`` per list entry (the contact kernel walks every entry) — a
wall within reach is an entry of the row too (``split[t]:start[t + 1]``), so spheres against
a drum or a floor weigh their wall contacts.

When ([EiblRude2019]; LAMMPS' ``fix balance Nfreq thresh``, [Thompson2022]): only at a
rebuild step of the one schedule (``pdyn.dynamics.neighbours``) — there are no ghosts then and
particles migrate anyway, so a rebalance adds no step of its own and the steps at which it can
happen do not depend on the rank count — and at least ``every`` steps after the last check; it
moves blocks only when the measured imbalance (max/mean of the ranks' work) exceeds
``threshold``. Rebalancing changes ownership only, never a trajectory (forces do not depend on
the decomposition).

The time-averaged imbalance of the load line is the mean over steps of max/mean of the owned
particle count, taken from the step's one reduction (``Simulation.step``): exact, since owned
counts change only at rebuild steps, and free; the mean follows the global count when
spheres are poured in or drained (``Inserter.present``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT

#: work of one neighbour-list entry relative to one particle: the contact pass takes ~6 ns an
#: entry, everything else a particle costs (integration, ghosts, migration, rebuilds) ~30 ns
#: (the 1-rank ``gas`` step, ~5 entries a particle)
CONTACT_COST = 0.2


@njit(**JIT)
def _block_work(blocks, start, contact_cost, out):
    """Add the work of each row's particle (1 + ``contact_cost`` × its list length) to its
    block ``blocks[t]``."""
    for t in range(blocks.shape[0]):
        out[blocks[t]] += 1.0 + contact_cost * (start[t + 1] - start[t])


def block_work(grid, pos, rows, start, contact_cost: float = CONTACT_COST) -> np.ndarray:
    """This rank's measured work per block (``grid.n_blocks`` floats): the neighbour-list
    ``rows`` (owned handles) with their ``start`` offsets, by the block of ``pos[row]``."""
    out = np.zeros(grid.n_blocks)
    _block_work(grid.block_of(pos, rows), np.ascontiguousarray(start, np.int64),
                float(contact_cost), out)
    return out


def imbalance(loads) -> float:
    """max / mean of per-rank ``loads`` (1 when there is no load)."""
    loads = np.asarray(loads, float)
    mean = loads.mean() if loads.size else 0.0
    return float(loads.max() / mean) if mean > 0 else 1.0


class Balancer:
    """The rebalancing schedule of a run on ``nranks`` ranks and its record.

    ``every`` (steps; 0 = never) is the least distance between two checks, ``threshold`` the
    work imbalance above which a check moves blocks, ``curve`` the block order
    (``pdyn.domain.CURVES``); ``n_particles`` (global) sets the mean owned count. ``last`` is
    the step of the last check (a checkpoint keeps it, so a restart continues the schedule).
    """

    def __init__(self, every: int, threshold: float, curve: str, nranks: int,
                 n_particles: int, last: int = 0):
        self.every, self.threshold, self.curve = int(every), float(threshold), curve
        self.nranks = int(nranks)
        self.mean_owned = n_particles / max(self.nranks, 1)
        self.last = int(last)
        self.checks = 0
        self.rebalances = 0
        self.moved = 0  # particles moved with their blocks (this rank sent)
        self._sum = 0.0
        self._steps = 0

    def due(self, step: int) -> bool:
        """Check the balance at this rebuild ``step``?"""
        return self.nranks > 1 and self.every > 0 and step - self.last >= self.every

    def checked(self, step: int, moved_blocks: bool, sent: int) -> None:
        self.last = int(step)
        self.checks += 1
        self.rebalances += int(moved_blocks)
        self.moved += int(sent)

    def observe(self, max_owned: float, n_particles: int | None = None) -> None:
        """One step's largest owned count over the ranks; ``n_particles``: the global count
        now, when it changes during the run (insertion, outlet)."""
        if n_particles is not None:
            self.mean_owned = n_particles / max(self.nranks, 1)
        self._sum += max_owned / self.mean_owned if self.mean_owned > 0 else 1.0
        self._steps += 1

    @property
    def mean_imbalance(self) -> float:
        """Owned max/mean averaged over the steps observed (1 before any)."""
        return self._sum / self._steps if self._steps else 1.0
