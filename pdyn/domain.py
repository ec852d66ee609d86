"""Simulation box geometry (no MPI): bounds, per-axis boundary kind, the walls it implies.

A walled axis contributes two half-space walls (infinite particles) at its faces with inward
normals; periodic axes wrap positions; open axes let particles go anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Box:
    lo: np.ndarray
    hi: np.ndarray
    boundary: tuple  # per axis: "wall" | "periodic" | "open"

    @property
    def length(self) -> np.ndarray:
        return np.asarray(self.hi, float) - np.asarray(self.lo, float)

    @property
    def periodic(self) -> np.ndarray:
        return np.array([b == "periodic" for b in self.boundary])

    def walls(self) -> tuple[np.ndarray, np.ndarray]:
        """(points (W, 3), inward normals (W, 3)) of the walls, ordered by axis then lo/hi."""
        pts, nrm = [], []
        for a, kind in enumerate(self.boundary):
            if kind != "wall":
                continue
            for face, sign in ((self.lo, 1.0), (self.hi, -1.0)):
                p = np.zeros(3)
                p[a] = face[a]
                n = np.zeros(3)
                n[a] = sign
                pts.append(p)
                nrm.append(n)
        return np.array(pts).reshape(-1, 3), np.array(nrm).reshape(-1, 3)

    def outside(self, pos: np.ndarray) -> np.ndarray:
        """Mask of centres outside the box along a non-open axis."""
        closed = np.array([b != "open" for b in self.boundary])
        out = (pos < np.asarray(self.lo)) | (pos > np.asarray(self.hi))
        return (out & closed).any(axis=1)
