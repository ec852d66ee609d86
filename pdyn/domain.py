"""Simulation box geometry (no MPI): bounds, per-axis boundary kind, the walls it implies.

A walled axis contributes two half-space walls (infinite particles) at its faces with inward
normals; periodic axes wrap positions; open axes let particles go anywhere.

Blocks ([Schornbaum2009] §1, §5; [WindolphUschakov2023] §6):
the box is cut into a regular grid of ``dims`` blocks; block ``b`` has grid coordinates
``(ix, iy, iz)`` with ``b = (iz * ny + iy) * nx + ix``. A particle belongs to the block holding
its centre; along a walled or open axis the first and last blocks extend to ∓∞ (so a particle
that escapes the box still has an owner), along a periodic axis centres are wrapped into
[lo, hi) by :func:`wrap_periodic` before they are assigned.

Blocks go to ranks in contiguous runs along the Morton (Z-order) curve of their grid
coordinates, each run carrying about the same weight (particle count + 1 per block, so empty
blocks spread too). Every rank computes the same map from the same global scene, so no
message is needed to agree on it. Nothing here talks MPI; ``pdyn.parallel`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ._jit import JIT
from .cell_index import clamped_cell
from .zorder import morton3

BOUNDARIES = ("wall", "periodic", "open")
#: a block grid may have at most max(BLOCKS_PER_RANK x ranks, min(particles, MAX_BLOCKS)) blocks:
#: blocks beyond one per particle stay empty, and set-up time grows with the square of the
#: block count (each rank tests its blocks against every block for its neighbour ranks)
BLOCKS_PER_RANK = 64
MAX_BLOCKS = 32768


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

    def outside(self, pos: np.ndarray, periodic: bool = True) -> np.ndarray:
        """Mask of centres outside the box along a non-open axis (with ``periodic=False``
        only along walled axes: a restart's unwrapped centres may lie past a periodic face)."""
        closed = np.array([b == "wall" or (periodic and b == "periodic")
                           for b in self.boundary])
        out = (pos < np.asarray(self.lo)) | (pos > np.asarray(self.hi))
        return (out & closed).any(axis=1)


# ------------------------------------------------------------------ block decomposition
class DecompositionError(ValueError):
    """A block decomposition the configuration asks for cannot be built (field and value)."""


@njit(**JIT)
def _block_ids(pos, handles, lo, inv_edge, dims, out):
    """Block id of each ``pos[handles[t]]`` (coordinates clamped into the grid)."""
    for t in range(handles.shape[0]):
        h = handles[t]
        b = 0
        for a in (2, 1, 0):
            b = b * dims[a] + clamped_cell(pos[h, a], lo[a], inv_edge[a], dims[a])
        out[t] = b


@njit(**JIT)
def _wrap(pos, handles, lo, hi, length, periodic):
    """Wrap centres into [lo, hi) along periodic axes; returns how many were moved.

    One rule for every decomposition (so 1-rank and N-rank runs wrap the same bits):
    x < lo → x + L, x ≥ hi → x − L, and a result that rounds onto hi becomes lo."""
    moved = 0
    for t in range(handles.shape[0]):
        h = handles[t]
        m = False
        for a in range(3):
            if not periodic[a]:
                continue
            x = pos[h, a]
            if x < lo[a]:
                x = x + length[a]
                m = True
            elif x >= hi[a]:
                x = x - length[a]
                m = True
            if x >= hi[a] or x < lo[a]:  # more than one period, or rounding onto hi
                x = lo[a] + ((x - lo[a]) % length[a])
                if x >= hi[a]:
                    x = lo[a]
            pos[h, a] = x
        if m:
            moved += 1
    return moved


@njit(**JIT)
def _morton_codes(dims):
    nb = dims[0] * dims[1] * dims[2]
    out = np.empty(nb, np.int64)
    for iz in range(dims[2]):
        for iy in range(dims[1]):
            for ix in range(dims[0]):
                out[(iz * dims[1] + iy) * dims[0] + ix] = morton3(ix, iy, iz)
    return out


@njit(**JIT)
def _box_dist2(y, lo, hi):
    d2 = 0.0
    for a in range(3):
        if y[a] < lo[a]:
            d = lo[a] - y[a]
            d2 += d * d
        elif y[a] > hi[a]:
            d = y[a] - hi[a]
            d2 += d * d
    return d2


@njit(**JIT)
def _neighbour_mask(mine, owner, blo, bhi, shifts, reach, nranks):
    """Ranks owning a block within ``reach`` of one of ``mine`` (any periodic shift)."""
    out = np.zeros(nranks, np.bool_)
    nb = owner.shape[0]
    y = np.empty(3)
    for t in range(mine.shape[0]):
        b = mine[t]
        for c in range(nb):
            r = owner[c]
            if out[r]:
                continue
            for s in range(shifts.shape[0]):
                # distance between box b and box c shifted by shifts[s]
                d2 = 0.0
                for a in range(3):
                    clo = blo[c, a] + shifts[s, a]
                    chi = bhi[c, a] + shifts[s, a]
                    if chi < blo[b, a]:
                        d = blo[b, a] - chi
                        d2 += d * d
                    elif clo > bhi[b, a]:
                        d = clo - bhi[b, a]
                        d2 += d * d
                if d2 <= reach * reach:
                    out[r] = True
                    break
    return out


def default_block_dims(box: Box, nranks: int, per_rank: int = 4) -> tuple:
    """A grid of at least ``per_rank * nranks`` near-cubic blocks (1 block for one rank)."""
    target = 1 if nranks <= 1 else per_rank * nranks
    length = box.length
    dims = np.ones(3, np.int64)
    while int(np.prod(dims)) < target:
        a = int(np.argmax(length / dims))  # split the axis with the longest block edge
        dims[a] += 1
    return tuple(int(d) for d in dims)


class BlockGrid:
    """A regular grid of blocks over ``box`` and its block → rank map (no MPI).

    ``owner[b]`` is the rank of block ``b`` (set by :meth:`assign`); :meth:`block_of` maps
    centres to blocks, :meth:`neighbour_ranks` lists ranks whose blocks lie within a distance
    of a rank's blocks, periodic images included.
    """

    def __init__(self, box: Box, dims):
        dims = tuple(int(d) for d in dims)
        if len(dims) != 3 or min(dims) < 1:
            raise DecompositionError(f"blocks = {list(dims)!r}: expected 3 integers >= 1")
        self.box = box
        self.dims = np.array(dims, np.int64)
        self.lo = np.asarray(box.lo, float)
        self.hi = np.asarray(box.hi, float)
        self.edge = box.length / self.dims
        self.inv_edge = 1.0 / self.edge
        self.periodic = box.periodic
        self.owner = np.zeros(self.n_blocks, np.int64)

    @property
    def n_blocks(self) -> int:
        return int(np.prod(self.dims))

    def coords(self, blocks) -> np.ndarray:
        b = np.asarray(blocks, np.int64)
        nx, ny = self.dims[0], self.dims[1]
        return np.stack((b % nx, (b // nx) % ny, b // (nx * ny)), axis=-1)

    def block_of(self, pos, handles=None) -> np.ndarray:
        """Block id of each centre (``pos[handles]``; all rows when ``handles`` is None)."""
        pos = np.ascontiguousarray(pos, float).reshape(-1, 3)
        if handles is None:
            handles = np.arange(pos.shape[0], dtype=np.int64)
        out = np.empty(len(handles), np.int64)
        _block_ids(pos, np.ascontiguousarray(handles, np.int64), self.lo, self.inv_edge,
                   self.dims, out)
        return out

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of every block (nb, 3); edge blocks of non-periodic axes reach ∓∞."""
        c = self.coords(np.arange(self.n_blocks))
        blo = self.lo + c * self.edge
        bhi = self.lo + (c + 1) * self.edge
        for a in range(3):
            if not self.periodic[a]:
                blo[c[:, a] == 0, a] = -np.inf
                bhi[c[:, a] == self.dims[a] - 1, a] = np.inf
        return blo, bhi

    def shifts(self) -> np.ndarray:
        """Periodic image shifts (S, 3): row 0 is zero, then ±L along periodic axes and their
        combinations (S = 3^p for p periodic axes)."""
        opts = [(0.0, -self.box.length[a], self.box.length[a]) if self.periodic[a] else (0.0,)
                for a in range(3)]
        rows = [(x, y, z) for z in opts[2] for y in opts[1] for x in opts[0]]
        rows.sort(key=lambda r: (r != (0.0, 0.0, 0.0)))
        return np.array(rows, float).reshape(-1, 3)

    def morton_order(self) -> np.ndarray:
        """Block ids in Morton (Z-curve) order."""
        return np.argsort(_morton_codes(self.dims), kind="stable")

    def check_size(self, n_particles: int, nranks: int) -> None:
        """Refuse a grid with fewer blocks than ranks, or more than
        max(``BLOCKS_PER_RANK`` × ranks, min(particles, ``MAX_BLOCKS``)) blocks."""
        nb = self.n_blocks
        if nranks > nb:
            raise DecompositionError(
                f"blocks = {self.dims.tolist()!r}: {nb} blocks for {nranks} ranks; every rank "
                "needs at least one block (use more blocks or fewer ranks)")
        limit = max(BLOCKS_PER_RANK * nranks, min(int(n_particles), MAX_BLOCKS))
        if nb > limit:
            raise DecompositionError(
                f"blocks = {self.dims.tolist()!r}: {nb} blocks for {int(n_particles)} particles "
                f"on {nranks} rank(s); at most {limit} make sense (max({BLOCKS_PER_RANK} per "
                f"rank, one per particle up to {MAX_BLOCKS}); set-up time grows with the square "
                "of the block count)")

    def assign(self, weights, nranks: int) -> np.ndarray:
        """Cut the Morton-ordered blocks into ``nranks`` contiguous runs of about equal weight
        (each rank at least one block); sets and returns ``owner``. ``weights`` are the
        particle counts per block (:meth:`check_size` refuses absurd grids first)."""
        nb = self.n_blocks
        self.check_size(int(np.sum(weights)), nranks)
        order = self.morton_order()
        w = np.asarray(weights, float)[order] + 1.0
        cum = np.cumsum(w)
        mid = cum - 0.5 * w
        starts = np.zeros(nranks + 1, np.int64)
        starts[nranks] = nb
        for r in range(1, nranks):
            s = int(np.searchsorted(mid, r * cum[-1] / nranks))
            starts[r] = min(max(s, starts[r - 1] + 1), nb - (nranks - r))
        owner = np.empty(nb, np.int64)
        owner[order] = np.repeat(np.arange(nranks), np.diff(starts))
        self.owner = owner
        return owner

    def blocks_of_rank(self, rank: int) -> np.ndarray:
        return np.flatnonzero(self.owner == rank)

    def neighbour_ranks(self, rank: int, reach: float, nranks: int) -> np.ndarray:
        """Ranks (other than ``rank``) owning a block within ``reach`` of ``rank``'s blocks,
        periodic images included; the relation is symmetric."""
        blo, bhi = self.bounds()
        mask = _neighbour_mask(self.blocks_of_rank(rank), self.owner, blo, bhi, self.shifts(),
                               float(reach), int(nranks))
        mask[rank] = False
        return np.flatnonzero(mask)

    def check_periodic_length(self, interaction_range: float) -> None:
        """A periodic axis must be at least two interaction ranges long."""
        for a in range(3):
            if self.periodic[a] and self.box.length[a] < 2.0 * interaction_range:
                raise DecompositionError(
                    f"box.boundary[{a}] = 'periodic': the box is {self.box.length[a]:.6g} long "
                    f"along {'xyz'[a]}, shorter than two interaction ranges "
                    f"(2 x {interaction_range:.6g}: largest diameter + skin); enlarge the box")


def wrap_periodic(box: Box, pos: np.ndarray, handles: np.ndarray) -> int:
    """Wrap ``pos[handles]`` into [lo, hi) along periodic axes in place; returns the count."""
    if not box.periodic.any() or len(handles) == 0:
        return 0
    return int(_wrap(pos, np.ascontiguousarray(handles, np.int64), np.asarray(box.lo, float),
                     np.asarray(box.hi, float), box.length, box.periodic))
