"""Simulation box geometry (no MPI): bounds, per-axis boundary kind, the walls it implies.

A walled axis contributes two half-space walls (infinite particles) at its faces with inward
normals; periodic axes wrap positions; open axes let particles go anywhere.

Blocks ([Schornbaum2009] §1, §5; [WindolphUschakov2023] §6):
the box is cut into a regular grid of ``dims`` blocks; block ``b`` has grid coordinates
``(ix, iy, iz)`` with ``b = (iz * ny + iy) * nx + ix``. A particle belongs to the block holding
its centre; along a walled or open axis the first and last blocks extend to ∓∞ (so a particle
that escapes the box still has an owner), along a periodic axis centres are wrapped into
[lo, hi) by :func:`wrap_periodic` before they are assigned.

Blocks go to ranks in contiguous runs along a space-filling curve of their grid coordinates
(Hilbert by default, or Morton / Z-order; [Skilling2004], [Morton1966]), each run carrying
about the same weight ([EiblRude2019]: at set-up the particle count, during a run the measured
work, ``pdyn.parallel.balance``; empty blocks weigh a little, so they spread too). Every rank
computes the same map from the same weights, so no message is needed to agree on it. The grid
is fine — ``DEFAULT_BLOCKS_PER_RANK`` blocks per rank — so that whole blocks can be moved to
balance a scene whose particles gather in a small part of the box (docs/parallel.md).
Nothing here talks MPI; ``pdyn.parallel`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ._jit import JIT
from .cell_index import clamped_cell
from .zorder import hilbert3, morton3

BOUNDARIES = ("wall", "periodic", "open")
#: block orders of :meth:`BlockGrid.assign` (the first is the default)
CURVES = ("hilbert", "morton")
#: a block grid may have at most max(BLOCKS_PER_RANK x ranks, min(particles, MAX_BLOCKS)) blocks:
#: blocks beyond one per particle stay empty, and every rebuild and rebalance walks the block
#: arrays (bounds, weights: O(blocks) per rank)
BLOCKS_PER_RANK = 64
MAX_BLOCKS = 32768
#: blocks per rank of the default grid (:func:`default_block_dims`)
DEFAULT_BLOCKS_PER_RANK = 32
#: weight of an empty block, as a fraction of the mean block weight (spreads empty blocks)
EMPTY_WEIGHT = 1e-3


@dataclass(frozen=True)
class Box:
    lo: np.ndarray
    hi: np.ndarray
    boundary: tuple  # per axis: "wall" | "periodic" | "open"
    #: walls beyond the faces (``pdyn.walls.WallSet`` specs at the start, with ``name``), for
    #: the initial checks
    shapes: tuple = ()
    #: Lees–Edwards simple shear ([LeesEdwards1972]; 1/s, 0: none): flow along x, gradient
    #: along z (both periodic); the image across the z faces moves at ±rate L_z along x
    shear_rate: float = 0.0
    #: start with the linear profile v_x = rate (z − z_mid) added to the scene's velocities
    shear_profile: bool = False
    #: per axis whether its length may change during the run (a target pressure or a strain
    #: rate, ``pdyn.dynamics.cell``, in any stage; the exchange resizes ``hi`` in place)
    deforming: tuple = (False, False, False)

    @property
    def deforms(self) -> np.ndarray:
        """Mask of the axes whose length may change."""
        return np.array(self.deforming, bool)

    def resize(self, factors: np.ndarray) -> None:
        """Scale the box's lengths by ``factors`` (3,) about ``lo`` in place (``hi`` an
        array): hi = lo + (hi − lo) f, the same bits on every rank."""
        np.copyto(self.hi, self.lo + (self.hi - self.lo) * factors)

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

    def shifts(self, offset: float = 0.0) -> np.ndarray:
        """Periodic image shifts (S, 3): row 0 is zero, then ±L along periodic axes and their
        combinations (S = 3^p for p periodic axes). A ghost's ``image`` is a row of it.
        Sheared (:attr:`shear_rate`): (S, 6), the rows across the z faces (z shift ±L_z) also
        shifted ±``offset`` along x (:meth:`shear_offset`) and, in columns 3–5, the image's
        velocity offset ±rate L_z along x."""
        opts = [(0.0, -self.length[a], self.length[a]) if self.periodic[a] else (0.0,)
                for a in range(3)]
        rows = [(x, y, z) for z in opts[2] for y in opts[1] for x in opts[0]]
        rows.sort(key=lambda r: (r != (0.0, 0.0, 0.0)))
        out = np.array(rows, float).reshape(-1, 3)
        if not self.shear_rate:
            return out
        side = np.sign(out[:, 2:3])  # +1: the image above the top face, -1: below the bottom
        speed = self.shear_rate * float(self.length[2])
        out = np.hstack((out, np.zeros_like(out)))
        out[:, 0:1] += side * offset
        out[:, 3:4] = side * speed
        return out

    def shear_offset(self, step: int, dt: float) -> float:
        """The x offset Δ (m) of the image above the top face at step ``step``: rate L_z t
        with t = step dt, reduced into [−L_x/2, L_x/2) (closed form from the step count, so
        every rank and a restart agree bit for bit; 0 without shear)."""
        if not self.shear_rate:
            return 0.0
        length = self.length
        return shear_offset(step, dt, self.shear_rate, float(length[2]), float(length[0]))

    def outside(self, pos: np.ndarray, kinds=("wall", "periodic"),
                margin: float = 0.0) -> np.ndarray:
        """Mask of centres more than ``margin`` (m) outside the box along an axis whose
        boundary is one of ``kinds`` (default: the walled and periodic ones). The one
        box-containment test: initial-state checks, a restart's unwrapped centres."""
        axes = np.array([b in kinds for b in self.boundary])
        out = ((pos < np.asarray(self.lo) - margin) | (pos > np.asarray(self.hi) + margin))
        return (out & axes).any(axis=1)


def shear_offset(step: int, dt: float, rate: float, lz: float, lx: float) -> float:
    """:meth:`Box.shear_offset` of a box ``lx`` × ``lz`` (m) sheared at ``rate`` (1/s)."""
    return _reduced(float(step) * float(dt) * rate * lz, lx)


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


@njit(inline="always", **JIT)
def _wrapped(x, lo, hi, length):
    """(x wrapped into [lo, hi), whether it moved). One rule for every decomposition (so
    1-rank and N-rank runs wrap the same bits): x < lo → x + L, x ≥ hi → x − L, and a result
    that rounds onto hi becomes lo."""
    moved = False
    if x < lo:
        x = x + length
        moved = True
    elif x >= hi:
        x = x - length
        moved = True
    if x >= hi or x < lo:  # more than one period, or rounding onto hi
        x = lo + ((x - lo) % length)
        if x >= hi:
            x = lo
    return x, moved


@njit(**JIT)
def _wrap(pos, handles, lo, hi, length, periodic):
    """Wrap centres into [lo, hi) along periodic axes (:func:`_wrapped`); returns how many
    were moved."""
    moved = 0
    for t in range(handles.shape[0]):
        h = handles[t]
        m = False
        for a in range(3):
            if periodic[a]:
                pos[h, a], ma = _wrapped(pos[h, a], lo[a], hi[a], length[a])
                m = m or ma
        if m:
            moved += 1
    return moved


@njit(**JIT)
def _wrap_sheared(pos, vel, handles, lo, hi, length, periodic, offset, speed):
    """:func:`_wrap` in a Lees–Edwards box: a centre wrapped across the z faces k periods
    (z → z − k L_z) also moves −k ``offset`` along x and its x velocity changes by −k
    ``speed`` (rate L_z); then x and y wrap (z first: the x shift may take the centre through
    an x face). Returns how many crossed the z faces."""
    crossed = 0
    for t in range(handles.shape[0]):
        h = handles[t]
        z, m = _wrapped(pos[h, 2], lo[2], hi[2], length[2])
        if m:
            k = round((pos[h, 2] - z) / length[2])
            pos[h, 2] = z
            pos[h, 0] = pos[h, 0] - k * offset
            vel[h, 0] = vel[h, 0] - k * speed
            crossed += 1
        for a in range(2):
            if periodic[a]:
                pos[h, a], _ = _wrapped(pos[h, a], lo[a], hi[a], length[a])
    return crossed


def moved_offset(offset: float, dt: float, rate: float, lz: float, lx: float) -> float:
    """The image offset ``offset`` (m) one step ``dt`` (s) later in a box whose z length
    ``lz`` changes (a target pressure along z): offset + rate L_z dt, reduced into
    [−L_x/2, L_x/2) as :func:`shear_offset` (step by step, so kept in checkpoints)."""
    return _reduced(offset + float(dt) * rate * lz, lx)


def _reduced(d: float, lx: float) -> float:
    d = math.fmod(d, lx)
    if d >= 0.5 * lx:
        d -= lx
    elif d < -0.5 * lx:
        d += lx
    return d


@njit(**JIT)
def scale_about(pos, handles, lo, factors):
    """Scale the centres ``pos[handles]`` about ``lo`` by ``factors`` (3,) in place (the
    affine map of a box resized about ``lo``, :meth:`Box.resize`); axes of factor 1 are left
    as they are."""
    for t in range(handles.shape[0]):
        h = handles[t]
        for a in range(3):
            if factors[a] != 1.0:
                pos[h, a] = lo[a] + (pos[h, a] - lo[a]) * factors[a]


@njit(**JIT)
def offset_images(shifts, base_x, side, offset):
    """Set the x column of the image shifts (:meth:`Box.shifts`) to ``base_x + side ×
    offset`` in place (a sheared box's step: ``side`` +1 above the top, −1 below)."""
    for s in range(shifts.shape[0]):
        shifts[s, 0] = base_x[s] + side[s] * offset


@njit(**JIT)
def _image_drift2(pos, build_pos, handles, lo, hi, band, travel):
    """The largest squared displacement (m²) since the last build of a sheared image: of
    ``pos[h] ± (travel, 0, 0)`` from ``build_pos[h]`` for the spheres ``handles`` built within
    ``band`` of the bottom (+, the image above the top) or the top face (−)."""
    out = 0.0
    for t in range(handles.shape[0]):
        h = handles[t]
        z = build_pos[h, 2]
        for side in (1.0, -1.0):
            if (z < lo + band) if side > 0.0 else (z >= hi - band):
                dx = pos[h, 0] - build_pos[h, 0] + side * travel
                dy = pos[h, 1] - build_pos[h, 1]
                dz = pos[h, 2] - build_pos[h, 2]
                d2 = dx * dx + dy * dy + dz * dz
                if not d2 <= out:  # larger, or NaN
                    out = d2 if d2 == d2 else np.inf
    return out


def image_drift2(box: Box, pos, build_pos, handles, reach: float, travel: float) -> float:
    """In a sheared box, the largest squared displacement (m²) since the last build of an
    image across the z faces (:func:`_image_drift2`): of the spheres ``handles`` (int64)
    built within ``reach`` (m: the largest centre distance of a contact before the next
    build) of a z face, moved by their own displacement and the images' x ``travel`` (m, the
    offset's change since the build). Decided from the build positions, so the same on
    every decomposition and after a restart."""
    return _image_drift2(pos, build_pos, handles, box.lo[2], box.hi[2], reach, travel)


@njit(**JIT)
def _neighbour_mask(mine, owner, dims, edge, periodic, reach, nranks):
    """Ranks owning a block within ``reach`` of one of ``mine`` (any periodic image).

    Only the blocks up to ``reach`` away are visited (O(blocks of the rank × blocks in reach),
    not O(blocks²)): the gap between blocks ``k`` apart along an axis is (k − 1) edges,
    whether or not an edge block reaches to infinity (it only extends away from the others);
    along a periodic axis both ways round count."""
    out = np.zeros(nranks, np.bool_)
    span = np.empty(3, np.int64)
    for a in range(3):
        span[a] = min(math.floor(reach / edge[a]) + 1.0, float(dims[a]))
    c = np.empty(3, np.int64)
    r2 = reach * reach * (1.0 + 1e-9)  # never miss a block at exactly ``reach``
    for t in range(mine.shape[0]):
        b = mine[t]
        c[0] = b % dims[0]
        c[1] = (b // dims[0]) % dims[1]
        c[2] = b // (dims[0] * dims[1])
        for oz in range(-span[2], span[2] + 1):
            z = _offset_block(c[2], oz, dims[2], periodic[2])
            if z < 0:
                continue
            gz = max(abs(oz) - 1, 0) * edge[2]
            for oy in range(-span[1], span[1] + 1):
                y = _offset_block(c[1], oy, dims[1], periodic[1])
                if y < 0:
                    continue
                gy = max(abs(oy) - 1, 0) * edge[1]
                for ox in range(-span[0], span[0] + 1):
                    x = _offset_block(c[0], ox, dims[0], periodic[0])
                    if x < 0:
                        continue
                    gx = max(abs(ox) - 1, 0) * edge[0]
                    if gx * gx + gy * gy + gz * gz <= r2:
                        out[owner[(z * dims[1] + y) * dims[0] + x]] = True
    return out


@njit(**JIT)
def _offset_block(i, o, n, periodic):
    """Grid index ``o`` blocks from ``i`` along an axis of ``n`` blocks (-1: outside)."""
    j = i + o
    if periodic:
        return j % n
    return j if 0 <= j < n else -1


@njit(**JIT)
def _curve_keys(dims, hilbert):
    """Key of every block along the Hilbert or Morton curve of its grid coordinates."""
    nb = dims[0] * dims[1] * dims[2]
    bits = 0
    while (1 << bits) < max(dims[0], dims[1], dims[2]):
        bits += 1
    out = np.empty(nb, np.int64)
    for iz in range(dims[2]):
        for iy in range(dims[1]):
            for ix in range(dims[0]):
                b = (iz * dims[1] + iy) * dims[0] + ix
                out[b] = hilbert3(ix, iy, iz, bits) if hilbert else morton3(ix, iy, iz)
    return out


def default_block_dims(box: Box, nranks: int, per_rank: int = DEFAULT_BLOCKS_PER_RANK,
                       n_particles: int | None = None) -> tuple:
    """A grid of near-cubic blocks, about ``per_rank * nranks`` of them and never more than
    :meth:`BlockGrid.check_size` allows for ``n_particles`` (1 block for one rank)."""
    target = 1 if nranks <= 1 else per_rank * nranks
    if n_particles is not None and nranks > 1:
        target = max(nranks, min(target, _block_limit(n_particles, nranks)))
    length = box.length.copy()
    if box.shear_rate:  # Lees–Edwards: blocks span the box along x (the flow)
        length[0] = 0.0
    dims = np.ones(3, np.int64)
    while True:
        a = int(np.argmax(length / dims))  # split the axis with the longest block edge
        grown = dims.copy()
        grown[a] += 1
        if int(np.prod(dims)) >= nranks and int(np.prod(grown)) > target:
            break
        dims = grown
    return tuple(int(d) for d in dims)


def _block_limit(n_particles: int, nranks: int) -> int:
    return max(BLOCKS_PER_RANK * nranks, min(int(n_particles), MAX_BLOCKS))


def check_block_count(dims, n_particles: int, nranks: int) -> None:
    """Refuse (:class:`DecompositionError`) a block grid ``dims`` with fewer blocks than
    ranks, or more than max(``BLOCKS_PER_RANK`` × ranks, min(particles, ``MAX_BLOCKS``)):
    before any array of the grid is allocated (``BlockGrid.check_size``, and the set-up's
    check on every rank count)."""
    dims = [int(d) for d in dims]
    nb = math.prod(dims)
    if nranks > nb:
        raise DecompositionError(
            f"blocks = {dims!r}: {nb} blocks for {nranks} ranks; every rank "
            "needs at least one block (use more blocks or fewer ranks)")
    limit = _block_limit(n_particles, nranks)
    if nb > limit:
        raise DecompositionError(
            f"blocks = {dims!r}: {nb} blocks for {int(n_particles)} particles "
            f"on {nranks} rank(s); at most {limit} make sense (max({BLOCKS_PER_RANK} per "
            f"rank, one per particle up to {MAX_BLOCKS}); more blocks stay empty and cost "
            "memory and time at every rebuild)")


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
        if box.shear_rate and dims[0] != 1:
            raise DecompositionError(f"blocks = {list(dims)!r}: a sheared box (box.shear_rate) "
                                     "is not split along x, the flow (give blocks = [1, ny, nz])")
        self.box = box
        self.dims = np.array(dims, np.int64)
        self.periodic = box.periodic
        self.owner = np.zeros(self.n_blocks, np.int64)
        self._orders: dict[str, np.ndarray] = {}
        self.resize()

    def resize(self) -> None:
        """Take the box's lengths as they are now (a box that follows a target pressure is
        resized in place): the blocks keep their count and scale with it."""
        self.lo = np.asarray(self.box.lo, float)
        self.hi = np.asarray(self.box.hi, float).copy()
        self.edge = (self.hi - self.lo) / self.dims
        self.inv_edge = 1.0 / self.edge
        self._bounds = None

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

    def rank_of(self, pos, handles=None) -> np.ndarray:
        """The rank owning each centre (``pos[handles]``; all rows when ``handles`` is None):
        the owner of its block. The one place a sphere's rank is computed."""
        return self.owner[self.block_of(pos, handles)]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of every block (nb, 3); edge blocks of non-periodic axes reach ∓∞.
        Computed once per size of the box (the ghost plan asks at every rebuild)."""
        if self._bounds is None:
            self._bounds = self._make_bounds()
        return self._bounds

    def _make_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.coords(np.arange(self.n_blocks))
        blo = self.lo + c * self.edge
        bhi = self.lo + (c + 1) * self.edge
        for a in range(3):
            if not self.periodic[a]:
                blo[c[:, a] == 0, a] = -np.inf
                bhi[c[:, a] == self.dims[a] - 1, a] = np.inf
        return blo, bhi

    def shifts(self, offset: float = 0.0) -> np.ndarray:
        """The box's periodic image shifts (:meth:`Box.shifts`)."""
        return self.box.shifts(offset)

    def curve_order(self, curve: str = CURVES[0]) -> np.ndarray:
        """Block ids in the order of the space-filling ``curve`` (one of ``CURVES``)."""
        if curve not in CURVES:
            raise DecompositionError(f"balance_curve = {curve!r}: choose from "
                                     f"{', '.join(CURVES)}")
        if curve not in self._orders:  # once per curve: a rebalance needs it again
            self._orders[curve] = np.argsort(_curve_keys(self.dims, curve == "hilbert"),
                                             kind="stable")
        return self._orders[curve]

    def check_size(self, n_particles: int, nranks: int) -> None:
        """Refuse a grid with fewer blocks than ranks, or more than
        max(``BLOCKS_PER_RANK`` × ranks, min(particles, ``MAX_BLOCKS``)) blocks."""
        check_block_count(self.dims.tolist(), n_particles, nranks)

    def assign(self, weights, nranks: int, curve: str = CURVES[0]) -> np.ndarray:
        """Cut the blocks, ordered along ``curve`` (``CURVES``), into ``nranks`` contiguous
        runs of about equal weight (each rank at least one block); sets and returns ``owner``.
        ``weights`` are per block: particle counts at set-up, measured work when rebalancing
        (:meth:`check_size` refuses absurd grids first). A run ends at the block whose middle
        is nearest the ideal cut; empty blocks weigh ``EMPTY_WEIGHT`` of the mean block."""
        nb = self.n_blocks
        w = np.asarray(weights, float)
        self.check_size(int(round(float(np.sum(w)))), nranks)
        order = self.curve_order(curve)
        w = w[order] + EMPTY_WEIGHT * max(float(w.sum()), 1.0) / nb
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
        mask = _neighbour_mask(self.blocks_of_rank(rank), self.owner, self.dims, self.edge,
                               self.periodic, float(reach), int(nranks))
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


def wrap_periodic(box: Box, pos: np.ndarray, handles: np.ndarray, vel=None,
                  offset: float = 0.0) -> int:
    """Wrap ``pos[handles]`` into [lo, hi) along periodic axes in place; returns the count.
    In a sheared box (``box.shear_rate``) a centre wrapped across the z faces also moves by
    the image offset ``offset`` (m, :meth:`Box.shear_offset`) along x and its velocity
    ``vel[handles]`` by rate L_z (:func:`_wrap_sheared`); the count is then of those."""
    if not box.periodic.any() or len(handles) == 0:
        return 0
    handles = np.ascontiguousarray(handles, np.int64)
    lo, hi = np.asarray(box.lo, float), np.asarray(box.hi, float)
    if box.shear_rate:
        vel = np.zeros_like(pos) if vel is None else vel  # (a block count: centres only)
        return int(_wrap_sheared(pos, vel, handles, lo, hi, box.length, box.periodic,
                                 float(offset), box.shear_rate * float(box.length[2])))
    return int(_wrap(pos, handles, lo, hi, box.length, box.periodic))
