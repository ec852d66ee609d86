"""Particles of a scene generated per lattice cell, and random non-overlapping placement.

A built-in scene (``pdyn.scenarios``) is generated per cell of a fixed lattice over its box
(``pdyn.lattice``; the lattice depends on the scene and its scale only), so that a run on many
ranks creates on each rank only the particles of its own blocks and the scene never depends on
the rank count. How many particles of each kind a cell holds is fixed first, from the scene's
densities alone (expected counts per cell, rounded along the cell order so that every total is
exact): a rank knows every cell's count — hence the block weights of the start-up block → rank
map and every particle's global id (the cell's prefix sum plus its index in the cell) — without
drawing a position. Then each cell draws its particles from its own random stream, seeded from
``(seed, cell)``; spheres are placed inside their cell (centre at least a radius from its
faces), so cells never overlap each other and any subset of cells can be drawn alone. A scene
may also hold a few *fixed* spheres placed beforehand (``very_polydisperse``'s huge one,
``more_polydisperse``'s 320 largest) that every cell avoids. Three ways to fill a cell: random non-overlapping placement in regions
(:func:`placed_cells`, Koch 2020 Sec. 4.1.1 [Koch2020]), the sites of a simple cubic lattice
(:func:`lattice_cells`) and uniform centres that may overlap (:func:`uniform_cells`,
[Schornbaum2009] Sec. 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numba import njit

from ._jit import JIT
from .cell_index import teschner_hash
from .lattice import Lattice, lattice_dims


class SceneError(ValueError):
    """A scene cannot be generated as asked (message names the parameter and value)."""


@dataclass(frozen=True)
class Cells:
    """A scene generated per lattice cell: ``counts[c]`` particles in cell ``c`` of
    ``lattice``, ids ``first[c]`` onwards (after the ``fixed_*`` spheres, ids 0..F-1), drawn by
    ``make(cells)`` -> (pos, vel, radius) of ``cells`` in that order, ``counts[cells]`` rows
    each. ``r_max`` and ``r_mean`` (m) are the largest radius and the mean of the radius
    distribution (the same on every rank: default skins derive from it); every centre lies at
    least ``inset`` (m) inside its cell."""

    lattice: Lattice
    counts: np.ndarray
    make: Callable
    r_max: float
    r_mean: float
    fixed_pos: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    fixed_radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fixed_vel: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    inset: float = 0.0

    @property
    def first(self) -> np.ndarray:
        """Global id of each cell's first particle."""
        return len(self.fixed_radius) + np.concatenate(([0], np.cumsum(self.counts)[:-1]))

    @property
    def n(self) -> int:
        return int(self.counts.sum()) + len(self.fixed_radius)

    def fill(self, cells=None) -> dict:
        """``gid``, ``pos``, ``vel``, ``radius`` of the particles of ``cells`` (ascending ids;
        None: every cell), the fixed spheres first (every call returns them)."""
        cells = (np.arange(self.lattice.n_cells) if cells is None
                 else np.asarray(cells, np.int64))
        pos, vel, rad = self.make(cells)
        k = self.counts[cells]
        start = np.repeat(self.first[cells] - np.concatenate(([0], np.cumsum(k)[:-1])), k)
        gid = np.arange(int(k.sum()), dtype=np.int64) + start
        f = len(self.fixed_radius)
        return {"gid": np.concatenate((np.arange(f, dtype=np.int64), gid)),
                "pos": np.concatenate((self.fixed_pos, pos)),
                "vel": np.concatenate((self.fixed_vel, vel)),
                "radius": np.concatenate((self.fixed_radius, rad))}


# ------------------------------------------------------------------ non-overlapping placement
@njit(**JIT)
def _hash3(ix, iy, iz, mask):
    return np.int64(teschner_hash(ix, iy, iz) & np.uint64(mask))


@njit(**JIT)
def _stream_seed(seed, cell):
    """A 32-bit seed for cell ``cell``'s random stream: the SplitMix64 finaliser
    ([Steele2014]) of the pair."""
    z = np.uint64(seed) ^ (np.uint64(cell + 1) * np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.uint32(z & np.uint64(0xFFFFFFFF))


@njit(**JIT)
def _place(radii, centre_lo, centre_hi, fixed_pos, fixed_r, max_tries):
    """Random non-overlapping placement, largest first (Koch 2020, Sec. 4.1.1: each new sphere
    is tested against all placed ones; here small ones through a hashed grid, large ones and
    the ``fixed`` spheres directly), centre ``i`` uniform in ``centre_lo[i]..centre_hi[i]``,
    from numba's random stream as seeded by the caller. Returns positions and the number placed
    (< N means a region was too full)."""
    n = radii.shape[0]
    order = np.argsort(-radii, kind="mergesort")
    pos = np.zeros((n, 3))
    # spheres up to r_cut go into the hashed grid with cell 2*r_cut; larger ones are listed
    r_cut = np.median(radii) if n > 0 else 1.0
    cell = 2.0 * r_cut
    inv = 1.0 / cell
    size = 1
    while size < 4 * n:
        size *= 2
    mask = size - 1
    head = np.full(size, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    big = np.empty(n, np.int64)
    n_big = 0
    for t in range(n):
        i = order[t]
        r = radii[i]
        ok = False
        for _ in range(max_tries):
            x = np.empty(3)
            for a in range(3):
                x[a] = centre_lo[i, a] + (centre_hi[i, a] - centre_lo[i, a]) * np.random.random()
            free = True
            for b in range(fixed_r.shape[0]):
                d = ((x[0] - fixed_pos[b, 0]) ** 2 + (x[1] - fixed_pos[b, 1]) ** 2
                     + (x[2] - fixed_pos[b, 2]) ** 2)
                if d < (r + fixed_r[b]) ** 2:
                    free = False
                    break
            for b in range(n_big):
                if not free:
                    break
                j = big[b]
                d = (x[0] - pos[j, 0]) ** 2 + (x[1] - pos[j, 1]) ** 2 + (x[2] - pos[j, 2]) ** 2
                if d < (r + radii[j]) ** 2:
                    free = False
            if free:
                # small placed spheres: search cells within reach r + r_cut
                reach = int(np.ceil((r + r_cut) * inv))
                cx = int(np.floor(x[0] * inv))
                cy = int(np.floor(x[1] * inv))
                cz = int(np.floor(x[2] * inv))
                for dz in range(-reach, reach + 1):
                    for dy in range(-reach, reach + 1):
                        for dx in range(-reach, reach + 1):
                            j = head[_hash3(cx + dx, cy + dy, cz + dz, mask)]
                            while j >= 0 and free:
                                d = ((x[0] - pos[j, 0]) ** 2 + (x[1] - pos[j, 1]) ** 2
                                     + (x[2] - pos[j, 2]) ** 2)
                                if d < (r + radii[j]) ** 2:
                                    free = False
                                j = nxt[j]
                            if not free:
                                break
                        if not free:
                            break
                    if not free:
                        break
            if free:
                pos[i] = x
                if r > r_cut:
                    big[n_big] = i
                    n_big += 1
                else:
                    c = _hash3(int(np.floor(x[0] * inv)), int(np.floor(x[1] * inv)),
                               int(np.floor(x[2] * inv)), mask)
                    nxt[i] = head[c]
                    head[c] = i
                ok = True
                break
        if not ok:
            return pos, t
    return pos, n


def _centre_bounds(radii, lo, hi):
    """Where centres may go so that spheres stay inside ``lo``..``hi`` (the middle where a
    sphere is wider)."""
    r = radii[:, None]
    clo, chi = lo + r, hi - r
    wide = chi < clo
    mid = 0.5 * (lo + hi)
    return np.where(wide, mid, clo), np.where(wide, mid, chi)


def place_spheres(radii, region_lo, region_hi, seed: int, max_tries: int = 2000) -> np.ndarray:
    """Non-overlapping random centres for ``radii``, each sphere inside its own region box."""
    radii = np.ascontiguousarray(radii, float)
    n = radii.shape[0]
    clo, chi = _centre_bounds(radii, np.broadcast_to(np.asarray(region_lo, float), (n, 3)),
                              np.broadcast_to(np.asarray(region_hi, float), (n, 3)))
    pos, placed = _seeded_place(radii, np.ascontiguousarray(clo), np.ascontiguousarray(chi),
                                int(seed) % (2**32), int(max_tries))
    if placed < n:
        raise SceneError(
            f"could only place {placed} of {n} non-overlapping spheres (region too full)"
        )
    return pos


@njit(**JIT)
def _seeded_place(radii, centre_lo, centre_hi, seed, max_tries):
    np.random.seed(seed)
    return _place(radii, centre_lo, centre_hi, np.zeros((0, 3)), np.zeros(0), max_tries)


# ------------------------------------------------------------------ per-cell generation
@njit(**JIT)
def _draw_velocity(vel, i, mode, scale):
    """Velocity of one particle: 0 at rest, 1 uniform in ±scale, 2 normal with σ = scale."""
    for a in range(3):
        if mode == 1:
            vel[i, a] = scale * (2.0 * np.random.random() - 1.0)
        elif mode == 2:
            vel[i, a] = np.random.normal(0.0, scale)
        else:
            vel[i, a] = 0.0


@njit(**JIT)
def _fill_placed(cells, counts, kind_lo, kind_hi, reg_lo, reg_hi, reg_w, lat_lo, edge, dims,
                 fixed_pos, fixed_r, seed, vmode, vscale, max_tries, out_pos, out_vel, out_rad):
    """Draw the particles of ``cells`` (``counts[t, g]`` of kind ``g`` in ``cells[t]``), each
    cell from its own stream: radii uniform in ``kind_lo[g]..kind_hi[g]``, a region per sphere
    with probability ∝ ``reg_w[k]`` × the volume it shares with the cell, the sphere placed
    inside the part of that region inside the cell (so spheres of different cells never
    overlap; where that part is thinner than the sphere, its centre goes to the part's middle,
    kept a radius inside the cell), then a velocity. Rows go to ``out_*`` cell after cell.
    Returns -1, or the index into ``cells`` of a cell too full to place its spheres."""
    row = 0
    n_reg = reg_w.shape[0]
    share = np.empty(n_reg)
    for t in range(cells.shape[0]):
        c = cells[t]
        np.random.seed(_stream_seed(seed, c))
        co = np.array((c % dims[0], (c // dims[0]) % dims[1], c // (dims[0] * dims[1])))
        clo = lat_lo + co * edge
        chi = lat_lo + (co + 1) * edge
        k = 0
        for g in range(counts.shape[1]):
            k += counts[t, g]
        radii = np.empty(k)
        i = 0
        for g in range(counts.shape[1]):
            for _ in range(counts[t, g]):
                radii[i] = kind_lo[g] + (kind_hi[g] - kind_lo[g]) * np.random.random()
                i += 1
        total = 0.0
        for q in range(n_reg):
            v = reg_w[q]
            for a in range(3):
                v *= max(0.0, min(reg_hi[q, a], chi[a]) - max(reg_lo[q, a], clo[a]))
            total += v
            share[q] = total
        lo = np.empty((k, 3))
        hi = np.empty((k, 3))
        for i in range(k):
            u = total * np.random.random()
            q = 0
            while q < n_reg - 1 and share[q] <= u:
                q += 1
            r = radii[i]
            for a in range(3):
                a0 = max(reg_lo[q, a], clo[a]) + r
                a1 = min(reg_hi[q, a], chi[a]) - r
                if a1 < a0:  # the region's part is thinner than the sphere: stay in the cell
                    m = 0.5 * (a0 + a1)
                    a0 = min(max(m, clo[a] + r), chi[a] - r)
                    if chi[a] - r < clo[a] + r:
                        a0 = 0.5 * (clo[a] + chi[a])
                    a1 = a0
                lo[i, a] = a0
                hi[i, a] = a1
        pos, placed = _place(radii, lo, hi, fixed_pos, fixed_r, max_tries)
        if placed < k:
            return t
        for i in range(k):
            out_pos[row + i] = pos[i]
            out_rad[row + i] = radii[i]
            _draw_velocity(out_vel, row + i, vmode, vscale)
        row += k
    return -1


@njit(**JIT)
def _free_fraction(lat_lo, edge, dims, fixed_pos, fixed_r, margin):
    """Fraction of each cell's volume (a 4 x 4 x 4 sample) farther than ``margin`` from every
    fixed sphere."""
    n = dims[0] * dims[1] * dims[2]
    out = np.empty(n)
    for c in range(n):
        co = (c % dims[0], (c // dims[0]) % dims[1], c // (dims[0] * dims[1]))
        free = 0
        for s in range(64):
            x = np.empty(3)
            sub = (s % 4, (s // 4) % 4, s // 16)
            for a in range(3):
                x[a] = lat_lo[a] + (co[a] + (sub[a] + 0.5) / 4.0) * edge[a]
            ok = True
            for b in range(fixed_r.shape[0]):
                d = ((x[0] - fixed_pos[b, 0]) ** 2 + (x[1] - fixed_pos[b, 1]) ** 2
                     + (x[2] - fixed_pos[b, 2]) ** 2)
                if d < (fixed_r[b] + margin) ** 2:
                    ok = False
            free += ok
        out[c] = free / 64.0
    return out


def _rounded_counts(expected, total: int) -> np.ndarray:
    """Integer counts per cell from ``expected`` (summing to ``total``): the running sum
    rounded, so each count is within one of its expectation and the total is exact."""
    run = np.floor(np.cumsum(expected) + 0.5)
    if run.size:
        run[-1] = total
    return np.clip(np.diff(np.concatenate(([0.0], run))), 0, None).astype(np.int64)


#: cells are at least this many largest diameters wide (a cell's spheres keep a radius from
#: its faces: at 8 diameters the usable volume is (7/8)^3 of the cell) ...
CELL_DIAMETERS = 8.0
#: ... and hold about this many particles
CELL_PARTICLES = 64


def _lattice(lo, hi, n: int, r_max: float) -> Lattice:
    """The scene's lattice: about ``n / CELL_PARTICLES`` cells, none narrower than
    ``CELL_DIAMETERS`` diameters of ``r_max``."""
    length = np.asarray(hi, float) - np.asarray(lo, float)
    dims = lattice_dims(length, max(1, n // CELL_PARTICLES))
    widest = np.maximum(1, np.floor(length / (CELL_DIAMETERS * 2.0 * r_max))).astype(np.int64)
    return Lattice.over(lo, hi, np.minimum(dims, widest))


def _axis_overlap(lat: Lattice, a: int, lo: float, hi: float) -> np.ndarray:
    s = lat.lo[a] + np.arange(lat.dims[a] + 1) * lat.edge[a]
    return np.clip(np.minimum(s[1:], hi) - np.maximum(s[:-1], lo), 0.0, None)


def placed_cells(box_lo, box_hi, kinds, regions, seed: int, velocity=(0, 0.0), fixed=None,
                 max_tries: int = 2000) -> Cells:
    """Non-overlapping spheres generated per cell: ``kinds`` = [(count, r_lo, r_hi)] (radii
    uniform in r_lo..r_hi), ``regions`` = [(fraction, lo, hi)] (a sphere lies in region k with
    probability ∝ fraction, uniformly there), ``velocity`` = (mode, scale) as
    ``_draw_velocity``; ``fixed`` = (pos, vel, radius) of spheres placed beforehand, which every
    cell avoids (cells are sized for the ``kinds`` only)."""
    fixed_pos, fixed_vel, fixed_radius = ((np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
                                          if fixed is None else
                                          (np.asarray(a, float) for a in fixed))
    n = sum(k[0] for k in kinds)
    r_max = max(k[2] for k in kinds)
    lat = _lattice(box_lo, box_hi, n, r_max)
    free = (_free_fraction(lat.lo, lat.edge, lat.dims, fixed_pos, fixed_radius, r_max)
            if len(fixed_radius) else np.ones(lat.n_cells))
    reg_lo = np.array([r[1] for r in regions], float).reshape(-1, 3)
    reg_hi = np.array([r[2] for r in regions], float).reshape(-1, 3)
    frac = np.array([r[0] for r in regions], float)
    frac = frac / frac.sum()
    density = np.zeros(lat.n_cells)
    weights = np.zeros(len(regions))
    for q in range(len(regions)):
        ox, oy, oz = (_axis_overlap(lat, a, reg_lo[q, a], reg_hi[q, a]) for a in range(3))
        vol = (oz[:, None, None] * oy[None, :, None] * ox[None, None, :]).reshape(-1) * free
        if vol.sum() > 0:
            weights[q] = frac[q] / vol.sum()
            density += weights[q] * vol
    per_kind = np.stack([_rounded_counts(c * density, c) for c, _, _ in kinds], axis=1)
    kind_lo = np.array([k[1] for k in kinds], float)
    kind_hi = np.array([k[2] for k in kinds], float)
    mode, vscale = velocity
    seed = int(seed) % (2**63)

    def make(cells):
        counts = np.ascontiguousarray(per_kind[cells])
        m = int(counts.sum())
        pos, vel, rad = np.empty((m, 3)), np.empty((m, 3)), np.empty(m)
        bad = _fill_placed(cells, counts, kind_lo, kind_hi, reg_lo, reg_hi, weights, lat.lo,
                           lat.edge, lat.dims, fixed_pos, fixed_radius, seed, int(mode),
                           float(vscale), int(max_tries), pos, vel, rad)
        if bad >= 0:
            raise SceneError(f"cell {int(cells[bad])} of the scene's lattice "
                             f"{lat.dims.tolist()} is too full for its "
                             f"{int(counts[bad].sum())} non-overlapping spheres")
        return pos, vel, rad

    mean = float(np.dot([k[0] for k in kinds], 0.5 * (kind_lo + kind_hi)) / max(n, 1))
    if len(fixed_radius):
        mean = (mean * n + float(fixed_radius.sum())) / (n + len(fixed_radius))
    return Cells(lattice=lat, counts=per_kind.sum(axis=1), make=make,
                 r_max=float(max(r_max, fixed_radius.max(initial=0.0))), r_mean=mean,
                 fixed_pos=fixed_pos, fixed_radius=fixed_radius, fixed_vel=fixed_vel,
                 inset=0.5 * float(kind_lo.min()))


@njit(**JIT)
def _fill_lattice(cells, dims, starts, spacing, seed, out_pos, out_vel):
    """The sites of a simple cubic lattice (``spacing`` m, site ``j`` centred at (j + 0.5) ·
    spacing) in ``cells``: cell ``i`` along an axis holds sites ``starts[a][i]`` up to
    ``starts[a][i + 1]``. Velocities normal with σ = 1 m/s per component from the cell's stream,
    each cell's mean removed and the spread restored (× √(k/(k−1)) for k sites), so the total
    momentum is zero."""
    row = 0
    for t in range(cells.shape[0]):
        c = cells[t]
        np.random.seed(_stream_seed(seed, c))
        co = (c % dims[0], (c // dims[0]) % dims[1], c // (dims[0] * dims[1]))
        first = row
        for iz in range(starts[2][co[2]], starts[2][co[2] + 1]):
            for iy in range(starts[1][co[1]], starts[1][co[1] + 1]):
                for ix in range(starts[0][co[0]], starts[0][co[0] + 1]):
                    out_pos[row, 0] = (ix + 0.5) * spacing
                    out_pos[row, 1] = (iy + 0.5) * spacing
                    out_pos[row, 2] = (iz + 0.5) * spacing
                    _draw_velocity(out_vel, row, 2, 1.0)
                    row += 1
        k = row - first
        for a in range(3):
            mean = 0.0
            for i in range(first, row):
                mean += out_vel[i, a]
            mean /= max(k, 1)
            spread = np.sqrt(k / (k - 1.0)) if k > 1 else 0.0
            for i in range(first, row):
                out_vel[i, a] = (out_vel[i, a] - mean) * spread


def lattice_cells(m: int, spacing: float, seed: int, radius: float) -> Cells:
    """``m``³ sites of a simple cubic lattice (``_fill_lattice``) in cells of about
    ``CELL_PARTICLES`` sites."""
    q = max(1, int(round(m / CELL_PARTICLES ** (1 / 3))))
    lat = Lattice.over(np.zeros(3), np.full(3, m * spacing), (q, q, q))
    j = np.arange(m)
    starts = np.searchsorted(((2 * j + 1) * q) // (2 * m), np.arange(q + 1)).astype(np.int64)
    per_axis = np.diff(starts)
    counts = (per_axis[None, None, :] * per_axis[None, :, None]
              * per_axis[:, None, None]).reshape(-1)
    seed = int(seed) % (2**63)
    trio = (starts, starts, starts)

    def make(cells):
        m_rows = int(counts[cells].sum())
        pos, vel = np.empty((m_rows, 3)), np.empty((m_rows, 3))
        _fill_lattice(cells, lat.dims, trio, float(spacing), seed, pos, vel)
        return pos, vel, np.full(m_rows, radius)

    return Cells(lattice=lat, counts=counts.astype(np.int64), make=make, r_max=radius,
                 r_mean=radius)


@njit(**JIT)
def _fill_uniform(cells, counts, lat_lo, edge, dims, radius, seed, out_pos, out_vel):
    """``counts[t]`` centres uniform in each cell (overlaps allowed), each moving in a random
    direction at up to 20 % of its diameter per unit time, from the cell's stream."""
    row = 0
    for t in range(cells.shape[0]):
        c = cells[t]
        np.random.seed(_stream_seed(seed, c))
        co = (c % dims[0], (c // dims[0]) % dims[1], c // (dims[0] * dims[1]))
        for _ in range(counts[t]):
            for a in range(3):
                out_pos[row, a] = lat_lo[a] + (co[a] + np.random.random()) * edge[a]
            norm = 0.0
            for a in range(3):
                out_vel[row, a] = np.random.normal(0.0, 1.0)
                norm += out_vel[row, a] ** 2
            speed = np.random.random() * 0.2 * 2.0 * radius / max(np.sqrt(norm), 1e-300)
            for a in range(3):
                out_vel[row, a] *= speed
            row += 1


def uniform_cells(length, n: int, radius: float, seed: int) -> Cells:
    """``n`` spheres of ``radius`` with centres uniform in the box 0..``length`` (overlaps
    allowed; as many per cell as the cell's share rounds to), moving as ``_fill_uniform``."""
    lat = _lattice(np.zeros(3), length, n, radius)
    counts = _rounded_counts(np.full(lat.n_cells, n / lat.n_cells), n)
    seed = int(seed) % (2**63)

    def make(cells):
        k = np.ascontiguousarray(counts[cells])
        pos, vel = np.empty((int(k.sum()), 3)), np.empty((int(k.sum()), 3))
        _fill_uniform(cells, k, lat.lo, lat.edge, lat.dims, radius, seed, pos, vel)
        return pos, vel, np.full(len(pos), radius)

    return Cells(lattice=lat, counts=counts, make=make, r_max=radius, r_mean=radius)


# ------------------------------------------------------------------ fills of a region
#: candidate centres per sphere of a fill
FILL_TRIES = 256


@njit(**JIT)
def first_free(cand, cand_r, blocked, quota, group):
    """Indices of the candidates taken, in order: not ``blocked``, not touching one taken
    before, at most ``quota``, at most one of each run of ``group`` candidates (a sphere's
    tries)."""
    taken = np.empty(min(quota, cand.shape[0]), np.int64)
    k = 0
    for c in range(cand.shape[0]):
        if k == quota:
            break
        if blocked[c] > 0.0 or (k > 0 and taken[k - 1] // group == c // group):
            continue
        free = True
        for q in range(k):
            d = taken[q]
            dx = cand[c, 0] - cand[d, 0]
            dy = cand[c, 1] - cand[d, 1]
            dz = cand[c, 2] - cand[d, 2]
            s = cand_r[c] + cand_r[d]
            if dx * dx + dy * dy + dz * dz <= s * s:
                free = False
                break
        if free:
            taken[k] = c
            k += 1
    return taken[:k]


def fill_radii(sizes, rng, volume: float) -> np.ndarray:
    """Radii (m) drawn in order from ``sizes`` (``pdyn.sizes.Sizes``) with ``rng`` until their
    volume is nearest ``volume`` (m³): the spheres of a fill, largest first (placed in that
    order a random fill packs denser; the sample is the one drawn)."""
    drawn, total = [], 0.0
    while total < volume:
        r = sizes.draw(rng, 1024)
        drawn.append(r)
        total += float(np.sum(4.0 / 3.0 * np.pi * r**3))
    r = np.concatenate(drawn)
    vol = np.cumsum(4.0 / 3.0 * np.pi * r**3)
    k = min(int(np.searchsorted(vol, volume)), vol.size - 1)  # vol[k-1] < volume <= vol[k]
    if k == 0 or vol[k] - volume < volume - vol[k - 1]:
        k += 1
    return -np.sort(-r[:k])


def fill_region(region, sizes, fraction: float, rng, tries: int) -> tuple:
    """A region (``pdyn.regions.Region``) filled at random to the solid ``fraction``: radii
    from :func:`fill_radii`, ``tries`` centres each drawn in the region
    (``Region.sample``), each sphere at its first centre inside the region and free of those
    placed before it (random sequential addition, [Feder1980] in 3D). Returns (centres (m),
    radii (m), how many were drawn); spheres that found no place are left out."""
    radii = fill_radii(sizes, rng, fraction * region.volume)
    r = np.repeat(radii, tries)
    pos = region.sample(rng, r)
    taken = first_free(pos, r, (~region.inside(pos, r)).astype(float), radii.size, tries)
    return pos[taken], r[taken], radii.size


# ------------------------------------------------------------------ a rough floor
def random_layer(lx: float, ly: float, diameter: float, seed: int,
                 attempts_per_area: float = 200.0) -> np.ndarray:
    """Centres (k, 2) of a random monolayer of discs of ``diameter`` in the periodic rectangle
    ``[0, lx) × [0, ly)``: random sequential adsorption ([Feder1980]) — uniform candidates, one
    after the other, each kept if it lies at least ``diameter`` from every kept centre (minimum
    image) —, ``attempts_per_area`` candidates per d², which brings the covered fraction close
    to the jamming limit (≈ 0.547: no gap is left that a further disc would fit)."""
    d = float(diameter)
    if not (lx >= 2.0 * d and ly >= 2.0 * d):
        raise SceneError(f"random_layer: the rectangle {float(lx)!r} × {float(ly)!r} is "
                         f"narrower than two diameters ({2.0 * d!r})")
    m = int(np.ceil(attempts_per_area * lx * ly / d**2))
    cand = np.random.default_rng([int(seed), 7]).random((m, 2)) * np.array([lx, ly])
    return _adsorb(cand, float(lx), float(ly), d)


@njit(**JIT)
def _adsorb(cand, lx, ly, d):
    """Keep each candidate in turn that is at least ``d`` (minimum image) from every kept one;
    kept centres are found through a periodic grid of cells at least ``d`` wide."""
    nx, ny = max(int(lx // d), 1), max(int(ly // d), 1)
    cap = 8  # a cell at most 2 d wide holds fewer than 8 centres d apart
    grid = np.full((nx, ny, cap), -1, np.int64)
    fill = np.zeros((nx, ny), np.int64)
    out = np.empty_like(cand)
    n = 0
    d2 = d * d
    for t in range(cand.shape[0]):
        x, y = cand[t, 0], cand[t, 1]
        cx, cy = min(int(x / lx * nx), nx - 1), min(int(y / ly * ny), ny - 1)
        free = True
        for ox in range(-1, 2):
            for oy in range(-1, 2):
                gx, gy = (cx + ox) % nx, (cy + oy) % ny
                for s in range(fill[gx, gy]):
                    j = grid[gx, gy, s]
                    dx = x - out[j, 0]
                    dy = y - out[j, 1]
                    dx -= lx * np.round(dx / lx)
                    dy -= ly * np.round(dy / ly)
                    if dx * dx + dy * dy < d2:
                        free = False
                        break
                if not free:
                    break
            if not free:
                break
        if free and fill[cx, cy] < cap:
            out[n, 0], out[n, 1] = x, y
            grid[cx, cy, fill[cx, cy]] = n
            fill[cx, cy] += 1
            n += 1
    return out[:n].copy()
