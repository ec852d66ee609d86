"""Regular lattices of cells over a box, and what one lattice says about another.

Built-in scenes are generated per lattice cell (``pdyn.scenarios``) and checkpoints are indexed
by lattice cell (``pdyn.io.checkpoint``), so a rank at start-up or restart reads or generates
only the cells that overlap its blocks (``pdyn.domain.BlockGrid``, itself a regular grid). Two
questions are answered here, both from per-axis interval overlaps (the grids are axis-aligned,
so the 3-d answer is a product of three 1-d ones): how many of a lattice's particles fall, about,
into each cell of another grid (:meth:`Lattice.spread`, the block weights of the start-up block
→ rank map), and which cells overlap a set of boxes (:meth:`Lattice.cells_overlapping`).
Cell ``c`` has grid coordinates ``(ix, iy, iz)`` with ``c = (iz * ny + iy) * nx + ix``, as blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: a box is taken to reach this fraction of a cell edge farther than its bounds, so that a
#: centre rounded across a cell face is still found in a cell that is read
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Lattice:
    """``dims`` cells of edge ``edge`` (m, per axis) from ``lo``."""

    lo: np.ndarray
    edge: np.ndarray
    dims: np.ndarray

    @classmethod
    def over(cls, lo, hi, dims) -> Lattice:
        """The lattice of ``dims`` cells filling the box ``lo``..``hi``."""
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        dims = np.asarray(dims, np.int64)
        return cls(lo, (hi - lo) / dims, dims)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.dims))

    def cell_of(self, pos) -> np.ndarray:
        """Cell of each centre, clamped into the lattice (as ``BlockGrid.block_of``)."""
        i = np.floor((np.asarray(pos, float).reshape(-1, 3) - self.lo) / self.edge)
        i = np.clip(i, 0, self.dims - 1).astype(np.int64)
        return (i[:, 2] * self.dims[1] + i[:, 1]) * self.dims[0] + i[:, 0]

    def _fractions(self, other: Lattice, a: int) -> np.ndarray:
        """(own cells, other cells) along axis ``a``: the fraction of each own cell's interval
        inside each other cell's interval (the other grid's end cells reach to ∓∞, as
        blocks)."""
        s = self.lo[a] + np.arange(self.dims[a] + 1) * self.edge[a]
        t = other.lo[a] + np.arange(other.dims[a] + 1) * other.edge[a]
        t[0], t[-1] = -np.inf, np.inf
        lo = np.maximum(s[:-1, None], t[None, :-1])
        hi = np.minimum(s[1:, None], t[None, 1:])
        return np.clip(hi - lo, 0.0, None) / self.edge[a]

    def spread(self, counts, other: Lattice) -> np.ndarray:
        """``counts`` per own cell spread over the cells of ``other`` in proportion to the
        volume they share (float, one value per cell of ``other``; the same bits on every
        rank)."""
        nx, ny, nz = (int(d) for d in self.dims)
        w = np.asarray(counts, float).reshape(nz, ny, nx)
        w = np.tensordot(w, self._fractions(other, 0), axes=([2], [0]))  # z, y, X
        w = np.tensordot(w, self._fractions(other, 1), axes=([1], [0]))  # z, X, Y
        w = np.tensordot(w, self._fractions(other, 2), axes=([0], [0]))  # X, Y, Z
        return np.ascontiguousarray(w.transpose(2, 1, 0)).reshape(-1)

    def cells_overlapping(self, lo, hi, inset: float = 0.0) -> np.ndarray:
        """Ascending ids of the cells that may hold a centre inside one of the boxes
        ``lo[k]``..``hi[k]`` (k, 3; infinite bounds reach the end cells) when every centre lies
        at least ``inset`` (m) inside its cell: the cells overlapping the boxes shrunk by
        ``inset`` and widened by ``TOLERANCE`` cell edges (a centre rounded across a face)."""
        lo = np.atleast_2d(np.asarray(lo, float))
        hi = np.atleast_2d(np.asarray(hi, float))
        nx, ny, nz = (int(d) for d in self.dims)
        mask = np.zeros((nz, ny, nx), bool)
        pad = TOLERANCE - inset / self.edge
        with np.errstate(invalid="ignore"):
            a = np.floor((lo - self.lo) / self.edge - pad)
            b = np.floor((hi - self.lo) / self.edge + pad)
        a = np.clip(np.nan_to_num(a, neginf=0, posinf=0), 0, self.dims - 1).astype(np.int64)
        b = np.clip(np.nan_to_num(b, neginf=-1, posinf=self.dims), -1,
                    self.dims - 1).astype(np.int64)
        for (x0, y0, z0), (x1, y1, z1) in zip(a, b):
            mask[z0:z1 + 1, y0:y1 + 1, x0:x1 + 1] = True
        return np.flatnonzero(mask.reshape(-1))


def lattice_dims(length, cells: int) -> np.ndarray:
    """Cells per axis for about ``cells`` near-cubic cells over a box of edge ``length`` (at
    least one per axis; the axis with the longest cell edge is split first)."""
    length = np.asarray(length, float)
    dims = np.ones(3, np.int64)
    while int(np.prod(dims)) < cells:
        dims[int(np.argmax(length / dims))] += 1
    return dims
