"""The regular grid of coarse-grained fields: a region [lo, hi] (m) cut into ``cells`` per
axis; an axis of one cell is averaged out (a 1D profile across a chute's depth: cells
(1, 1, n)). A resolved axis that spans a periodic box axis wraps (distances by minimum
image)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Grid:
    """``lo``, ``hi`` (3,) m; ``cells`` (3,) per axis; ``periodic`` (3,) whether the axis
    wraps (it spans a periodic axis of the box)."""

    lo: np.ndarray
    hi: np.ndarray
    cells: np.ndarray
    periodic: np.ndarray

    @classmethod
    def over(cls, box, cells, lo=None, hi=None) -> "Grid":
        """The grid of ``cells`` over ``[lo, hi]`` (default: the box ``box``, a
        ``pdyn.domain.Box``); an axis wraps when the box is periodic along it and the region
        spans it."""
        blo, bhi = np.asarray(box.lo, float), np.asarray(box.hi, float)
        glo = blo if lo is None else np.asarray(lo, float)
        ghi = bhi if hi is None else np.asarray(hi, float)
        wraps = np.array([b == "periodic" for b in box.boundary]) & (glo == blo) & (ghi == bhi)
        return cls(glo, ghi, np.asarray(cells, np.int64), wraps)

    @property
    def spacing(self) -> np.ndarray:
        """Cell edge per axis (m; an averaged axis: the region's length)."""
        return (self.hi - self.lo) / self.cells

    @property
    def cell_volume(self) -> float:
        """m³."""
        return float(np.prod(self.spacing))

    def centres(self, axis: int) -> np.ndarray:
        """The cell centres along ``axis`` (m)."""
        return self.lo[axis] + (np.arange(self.cells[axis]) + 0.5) * self.spacing[axis]
