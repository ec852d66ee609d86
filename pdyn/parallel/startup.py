"""Where the particles of a fresh start come from, rank by rank: each rank holds only its share.

``BlockExchange.distribute`` asks a *particle source* for two things: the particle count per
block (the weights of the block → rank map, the same on every rank) and then this rank's
particles (at least those whose centres lie in its blocks; the exchange keeps exactly those).
A source also knows the global count ``n`` and the mean radius ``r_mean`` (the same on every
rank: default skins derive from it). Two sources live here; a checkpoint is the third
(``pdyn.restart``).

* :class:`GeneratedSource` — a built-in scene generated per lattice cell
  (``pdyn.scenarios.Cells``): block weights from the cells' counts spread over the blocks by
  shared volume (``pdyn.lattice``), no position drawn; a rank then draws only the cells that
  overlap its blocks, so start-up time and memory follow the rank's share.
* :class:`ScatteredSource` — particles given as arrays (a config's ``[particles]``, a scene of
  arrays): held by rank 0 only, which computes the blocks and sends every rank its rows
  (``comm.scatter``).
"""

from __future__ import annotations

import numpy as np

from ..domain import wrap_periodic
from ..lattice import Lattice


def block_lattice(grid) -> Lattice:
    """The block grid ``grid`` (``pdyn.domain.BlockGrid``) as a lattice."""
    return Lattice(grid.lo, grid.edge, grid.dims)


def blocks_box(grid, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) (k, 3) of the blocks of ``rank`` (edge blocks reach ∓∞ where not periodic)."""
    blo, bhi = grid.bounds()
    mine = grid.owner == rank
    return blo[mine], bhi[mine]


class GeneratedSource:
    """The particles of a scene generated per lattice cell (``scene.cells``), each rank drawing
    the cells that overlap its blocks."""

    def __init__(self, scene):
        self.scene, self.cells = scene, scene.cells
        self.n = self.cells.n
        self.r_mean = self.cells.r_mean

    def block_weights(self, grid) -> np.ndarray:
        return self.cells.lattice.spread(self.cells.counts, block_lattice(grid))

    def take(self, grid, rank: int, same: bool = False) -> dict:
        """The particles of the cells overlapping ``rank``'s blocks (every cell when ``grid``
        is None)."""
        cells = None if grid is None else self.cells.lattice.cells_overlapping(
            *blocks_box(grid, rank), inset=self.cells.inset)
        p = self.cells.fill(cells)
        return dict(p, mass=self.scene.masses_of(p["radius"]))


class ScatteredSource:
    """Particles given as global arrays (store fields) on rank 0 of ``comm`` (None elsewhere),
    sent to their owners by rank 0."""

    def __init__(self, particles: dict | None, comm, box):
        self.comm, self.box = comm, box
        self.particles = particles if comm.rank == 0 else None
        self._pos = None  # wrapped centres (rank 0, once the grid is known)
        if self.particles is not None:
            r = np.asarray(self.particles["radius"], float)
            n = len(self.particles["pos"])
            facts = (n, float(np.mean(np.broadcast_to(r, (n,)))) if n else 0.0)
        else:
            facts = None
        self.n, self.r_mean = comm.bcast(facts)

    def _wrapped(self) -> np.ndarray:
        pos = np.array(self.particles["pos"], float).reshape(-1, 3)
        wrap_periodic(self.box, pos, np.arange(len(pos), dtype=np.int64))
        return pos

    def block_weights(self, grid) -> np.ndarray:
        counts = None
        if self.particles is not None:
            self._pos = self._wrapped()
            counts = np.bincount(grid.block_of(self._pos), minlength=grid.n_blocks)
        return self.comm.bcast(counts)

    def take(self, grid, rank: int, same: bool = False) -> dict:
        if grid is None or self.comm.size == 1:
            return self.particles
        parts = None
        if self.particles is not None:
            owner = grid.rank_of(self._pos)
            n = len(owner)
            parts = [{k: _rows(v, n, owner == r) for k, v in self.particles.items()}
                     for r in range(self.comm.size)]
        return self.comm.scatter(parts)


def _rows(values, n: int, mask) -> np.ndarray:
    """The rows ``mask`` of a per-particle array (a scalar stands for ``n`` equal rows)."""
    a = np.asarray(values)
    return np.broadcast_to(a, (n,) + a.shape[1:] if a.ndim else (n,))[mask]
