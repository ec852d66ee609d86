"""``auto``: picks a broad-phase structure from cheap statistics of the residents and delegates
every call to it, so it is exactly as exact as the structure it picked.

Statistics (one O(N) pass over the finite residents, plus strided samples of at most
``SAMPLE`` radii for the cubic mean and ``OCCUPANCY_SAMPLE`` centres for the occupancy; walls
are ignored; 0.08 ms for 10⁴ residents, 0.6 ms for 10⁵, best of 50 on the development
machine, where ``find_contacts`` takes 0.8 and 6 ms on Koch's sparse box):

* ``spread`` = largest radius / cubic mean radius (mean of r³, cube root). A single-level grid
  sizes its cells by the largest diameter, so it tests ~``spread³`` times more candidates than
  a hierarchy whose grids fit each size ([Koch2020] Sec. 4.1.6-4.1.8; [Schornbaum2009] Sec.
  2.3-2.4). A mean of r³ is stable where a median of a few size classes jumps between them
  (Koch's ``polydisperse``: 1.5; ``more_polydisperse``: 6.2; ``very_polydisperse``: 13-16).
* ``cells_per_particle`` = cells a dense grid of edge = largest diameter needs over the
  residents' bounding box, per resident. Dense grids (``linked_cells``, ``index_sort``) cap
  their table at ``8 N`` cells and enlarge cells beyond that (candidates grow as the cube of
  the enlargement), and ``linked_cells`` visits every cell ([Ihmsen2011] Sec. 4.2: "memory
  scales with the domain").
* ``occupied`` = fraction of occupied cells of a coarse grid of about N / 8 cells over the
  bounding box: ~1 for a homogeneous scene, 0.5 for Koch's checkerboard, a few per cent when
  the particles crowd into a corner of an empty box.
* ``axis_overlaps`` = N · largest diameter / longest extent: how many particles' extents
  overlap one particle's along the longest axis (what sweep and prune sweeps).
* ``giants`` = how many spheres are larger than ``GIANT_FACTOR`` × the cubic mean radius of
  the others (``giant_threshold``: the radius above which they are), 0 if more than
  ``GIANTS_MAX`` (a few O(N) passes over the radii; ``giants.py``).
* ``motion`` (not a build's: seen at the first update after it) = median over a strided
  sample of at most ``MOTION_SAMPLE`` residents of the displacement since the build, in
  diameters; the median ignores the few that jumped (a periodic wrap, a slot reused).

Choice (thresholds from ``pdyn bench --report`` runs on the 2-core development machine on
2026-11-23, wall-clock ms per step unless said otherwise; ``usage`` is "steps" for a
simulation, "once" for ``find_contacts``):

0. ``usage="once"`` and ``giants`` > 0: giants apart (``giants.py``), ``chosen`` =
   "<structure>+giants": each giant tested against every resident (~1.6 ns per test), the
   others in the structure rules 1-6 pick from their own statistics. CPU ms from scratch
   (``find_contacts``, 2026-11-23): Koch's ``very_polydisperse`` (one r = 180 among 39 999
   of r = 0.5; ``benchmarks/giant_among_small.py``, medians): 5.8-7.9 < ``hash_grid`` 55-76
   < ``linked_cells`` 771-1267; at 3.2·10⁵ spheres 46 < 928 < 63 700. Best of 3-5 below:
   10⁵ spheres r = 0.5 in 100³ with G giants of r
   5-20: G = 1-16 16-19 < ``hash_grid`` 131-140; 64: 27 < 144; 256: 58 < 168; 1024: 348 >
   312 (the G·N tests dominate), hence ``GIANTS_MAX`` = 32 (at most 32 tests per sphere, a
   third of an index sort's build or less). One or eight spheres q times the others' radius
   among 10⁵, against the plain pick: q = 1.5 0.90-1.04x (no gain), 2 1.04-1.19x, 2.5-3
   1.11-1.33x (``index_sort`` with cells q times wider), 4 6.5-7.9x (``hash_grid``), hence
   ``GIANT_FACTOR`` = 2. No other scene of Koch's has giants: ``more_polydisperse``'s 320 of
   r = 20 (and, at factor 2, the 2880 of r = 2.5) are more than 32; taken apart anyway they
   cost 427 ms against ``hash_grid``'s 122. A simulation (``usage="steps"``) keeps rules 1-4:
   giants apart rebuilds both parts at the first query after any change (not incremental).
1. ``spread > SPREAD_MAX`` (= 3): ``hash_grid``, one grid per size class. Koch's
   ``polydisperse`` (spread 1.5, 5·10⁴ spheres): ``index_sort`` 16.8 < ``linked_cells`` 20.9
   < ``hash_grid`` 36.1; ``more_polydisperse`` (6.2, 8·10⁴): ``hash_grid`` 71 < ``zindex_sort``
   580, the dense grids refuse (> 2²⁶ candidates); ``very_polydisperse`` (16, 4·10⁴):
   ``hash_grid`` 9.5, every single-level grid refuses or runs out of memory.
2. else ``cells_per_particle <= DENSE_CELLS`` (= 16; for ``usage="steps"``
   ``STEPS_DENSE_CELLS`` = 64; for ``usage="once"`` any, rule 5) and ``occupied >=
   OCCUPIED_MIN`` (= 0.4): ``index_sort`` (both usages). Koch's ``reference`` (9.7 cells per particle, 10⁵ spheres):
   ``index_sort`` 25.0 < ``hash_grid`` 26.8 < ``zindex_sort`` 35.7 < ``linked_cells`` 37.3;
   10⁶ equal spheres at solid fraction 0.3 (1.8), from scratch: ``index_sort`` 319 ms <
   ``zindex_sort`` 389 < ``linked_cells`` 513 < ``hash_grid`` 2552; Schornbaum's scene (2.2,
   objects moving 20 % of their size per step), 10⁵ objects, the whole step (``pdyn bench
   --scene schornbaum --scale 10``, CPU ms): ``index_sort`` 40 < ``hash_grid`` 64.
   Except (``usage="steps"``) a dense, nearly monodisperse scene that moves slowly:
   ``cells_per_particle <= MOTION_CELLS`` (= 2), ``spread <= MOTION_SPREAD`` (= 1.2) and
   ``motion < MOTION_MAX`` (= 0.02 diameters per update): ``hash_grid``, whose incremental
   update then moves few objects and which hands only touching pairs to the contact kernel,
   where the index sort re-sorts every particle and hands on all its candidates. The whole
   step without neighbour lists, ~10⁵ spheres, velocities scaled so the median motion per
   step is 0.15 / 0.46 / 1.5 / 2.3 / 3.1 / 4.6 % of a diameter, ``hash_grid`` / ``index_sort``
   (``benchmarks/auto_motion.py``, CPU ms per step, 2026-11-23): ``gas`` (1.7 cells per
   particle, few contacts) 0.57 0.58 0.67 1.04 1.11 1.36; ``packed`` (the gas's lattice at
   0.998 diameters, ~6 contacts per sphere) 0.65 0.61 0.73 0.92 0.98 1.01; Schornbaum's
   scene (2.2 cells per particle, 2 overlaps per object) at 0.25 / 0.5 / 1 / 2.5 / 5 / 10 %
   1.18 1.11 1.15 1.26 1.40 1.58, hence 2 % (Schornbaum's objects, overlapping deeply, pay
   1.1-1.2x below it; the structures alone, ``docs/report``'s 1 % series, median 0.5 %:
   auto's hash grid at 1.02-1.18x of the fastest). Spread: the gas with radii 0.5·U(1 - w,
   1 + w), motion 0.15 %: spread 1.10 0.46, 1.19 0.47, 1.26 0.92; Koch's ``polydisperse``
   (1.5) above. Since ``index_sort``'s pair query walks stencil rows as ranges (about 0.4x its
   earlier time), the same benchmark (21:35 UTC, idle) reads ``gas`` 1.04 1.04 1.17 1.46 1.51
   1.62, ``packed`` 0.93 0.85 1.07 1.19 1.21 1.24, Schornbaum's scene at 0.25-10 % 1.28 1.28
   1.32 1.44 1.57 1.79, and the report's 1 % series had the hash grid at 1.15-1.43x
   ``index_sort``: Schornbaum's scene (2.1-2.2 cells per particle) now goes to
   ``index_sort`` at any motion, hence ``MOTION_CELLS`` = 2 (was 4); the gas (1.7) and the
   packed lattice (0.94) keep the switch below 2 % (the gas at 1.04x, within noise).
   With the default neighbour lists the structure runs only at list rebuilds, the motion
   per update is that since the last rebuild, and every structure's step was within 10 %
   of the others'.
3. else, ``usage="steps"`` and ``axis_overlaps < SWEEP_OVERLAPS`` (= 1): ``sweep_prune`` up
   to ``SWEEP_N_MAX`` (= 2.5·10⁵) residents, above it ``index_sort`` if ``occupied >=
   OCCUPIED_MIN`` (else rule 4). Schornbaum's scene with 10⁵x smaller objects (0.0075
   overlaps): ``sweep_prune`` 2.8-5.6x faster than ``zindex_sort`` at 10³-3·10⁴ objects;
   Koch's 1024³ box (10-80 overlaps): 1-6x slower. The bound is a crossover with N, not
   noise: ``sweep_prune`` / ``index_sort`` on the small objects, CPU ms per step (``trajectory``,
   0.3-0.5 s per structure, one or two runs, 2026-11-23): 10⁵ 5.3-5.8 / 11.1-11.7, 2·10⁵
   13.6-13.9 / 23.5-24.1, 2.5·10⁵ 18.4 / 30.6, 3·10⁵ 47.3-48.3 / 37.6-40.3, 4·10⁵ 64.9 / 51.8,
   6·10⁵ 101 / 88, 10⁶ 182 / 104: the sweep's 52-74 ns per object jump to 158-182 between
   2.5·10⁵ and 3·10⁵, where its gathers of centres and radii in end order (2N random reads per
   step) leave the cache; ``index_sort`` stays at 104-147 ns. ``hash_grid``, rule 4's pick, took
   76-312 ms there.
4. else ``usage="steps"``: ``hash_grid`` (sparse or clustered: the dense table would be mostly
   empty or its cells enlarged). ``inhomogeneous`` 10⁵ (1240 cells per particle):
   ``hash_grid`` 14.8 < ``zindex_sort`` 16.8 < ``index_sort`` 146; ``very_inhomogeneous``
   8·10⁴: 11.6 < 13.8. Koch's ``checkerboard`` (63 cells per particle, occupied 0.5) went
   here until ``index_sort``'s pair query walked stencil rows as ranges (2.5·10⁵: ``hash_grid``
   34.9 < ``zindex_sort`` 45.1 < ``index_sort`` 47.0); since then, at 10⁶ (``docs/report``,
   21:22 UTC, CPU ms per step) ``index_sort`` 167 total / 91 detection / 74 MB against
   ``hash_grid`` 159 / 117 / 466 MB — within 1.05x in total and the fastest detection —, hence
   rule 2's ``STEPS_DENSE_CELLS`` = 64 (was 16). Also
   sparse and homogeneous: Koch's static 1024³ box (occupied ≥ 0.99, 1.7·10³-10⁵ cells per
   particle), update + query + exact test per step, CPU ms: 10⁴ spheres ``hash_grid`` 1.75 <
   ``index_sort`` 3.2; 4·10⁴ 8.4 ~ 8.0; 1.6·10⁵ 22.6 < 29.8; 6.4·10⁵ 84 < 178 (an earlier
   report timed the index sorts' query without the exact test their candidates still need,
   and saw ``index_sort`` ahead; ``docs/report`` now times both with it). With the hash
   grid's old ``minimal_grid_density`` of 8, its table doubled to 128³ cells at 32 768
   spheres and it took 1.26-1.35x ``zindex_sort``'s time there; at the default of 5
   (``hash_grid.py``) ``hash_grid`` / the fastest other at 2, 3, 4, 5, 6, 8, 16, 32·10⁴
   (``trajectory``, 0.3 s per structure, two runs): 0.86-0.87, 0.81-0.85, 1.00-1.01,
   0.95-0.97, 0.77-0.81, 0.79-0.88, 0.71-0.93, 0.82-0.87.
5. ``usage="once"`` and ``occupied >= OCCUPIED_MIN`` however sparse: ``index_sort``. Its
   capped table enlarges the cells of a sparse homogeneous scene, but they stay nearly empty;
   Koch's 1024³ box from scratch at 1.6-6.4·10⁵ spheres: ``index_sort`` 18-80 ms <
   ``zindex_sort`` 95-395 (a hash lookup per neighbour cell, mostly empty) < ``hash_grid``
   190-1040; at 10⁴-8·10⁴ ``index_sort`` and ``zindex_sort`` are within 1.2x. Where a dense
   grid would need more than ``DENSE_CELLS`` cells per particle, its table gets
   ``SPARSE_TABLE`` (= 32) cells per particle instead of the default 8 (smaller cells, fewer
   candidates; 128 bytes per particle): the same box from scratch, 10⁴ / 4·10⁴ / 1.6·10⁵ /
   6.4·10⁵ spheres, CPU ms at 8, 16, 32, 64 cells per particle: 2.0 1.4 1.2 1.2 / 8.9 8.3 7.8
   5.8 / 35.9 24.0 22.4 21.0 / 116 108 96 123; the small spheres of ``very_polydisperse``
   (4·10⁴): 7.8 6.1 5.1 3.8.
6. else (``usage="once"``, clustered): ``zindex_sort``, cells of the largest diameter and
   O(N) memory whatever the domain, where a capped dense table would make the clusters' cells
   huge (``inhomogeneous`` with ``index_sort``: 3·10⁷ candidates, ``zindex_sort`` 10⁵).

When to decide: at every ``build`` (from that build's residents and the last ``motion``
measured, if any); ``insert``, ``remove`` and ``update`` go to the structure chosen at the
last build (a first ``insert`` without a build decides from the inserted residents; giants
apart keeps its threshold and rebuilds both parts at the next query), except the first
``update`` after a build whose pick depends on the motion (rule 2): it measures ``motion``
(O(``MOTION_SAMPLE``): the build kept the sample's positions, as the bound array is
overwritten in place) and, if the pick changes, builds the new pick from the residents of the
moment instead of updating (``switches`` counts it). The simulation builds at start and at
every Z-curve reordering (every ``reorder_every`` steps), so a scene whose character changes
is re-judged then. Each MPI rank decides from its own residents; the choice never changes
results (every structure yields the same pairs and the contact kernel orders them by global
id).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import JIT
from ._kernels import BroadPhaseError
from .giants import GiantsApart, giant_radius
from .hash_grid import HashGrid
from .index_sort import IndexSort, ZIndexSort
from .sweep_prune import SweepPrune
from .params import Param, settings

#: largest / cubic mean radius above which the hierarchy of grids wins
SPREAD_MAX = 3.0
#: dense-grid cells (edge = largest diameter) per particle up to which a dense table pays
DENSE_CELLS = 16.0
#: the same bound for a simulation (``usage="steps"``, rule 2): a capped table's wider cells
#: still beat the hash grid there (Koch's checkerboard, 63 cells per particle)
STEPS_DENSE_CELLS = 64.0
#: occupied fraction of the coarse grid (~8 particles per cell) a dense grid needs
OCCUPIED_MIN = 0.4
#: particles whose extents overlap along the longest axis, per particle, below which a
#: persistent sweep and prune wins (almost nothing overlaps even in one dimension)
SWEEP_OVERLAPS = 1.0
#: residents up to which that sweep and prune wins; above, its gathers in end order leave the
#: cache and a homogeneous scene goes to ``index_sort`` (rule 3)
SWEEP_N_MAX = 250_000
#: cells per particle of the ``index_sort`` table for a sparse scene built once (rule 5)
SPARSE_TABLE = 32
#: particles per cell of the coarse occupancy grid
COARSE_PER_CELL = 8
#: a giant is larger than this many times the cubic mean radius of the others
GIANT_FACTOR = 2.0
#: at most this many giants are tested apart (each costs one exact test per resident)
GIANTS_MAX = 32
#: radii sampled (strided) for the cubic mean
SAMPLE = 4096
#: median displacement per update, in diameters, below which a dense monodisperse scene
#: simulated step by step goes to the hash grid (rule 2)
MOTION_MAX = 0.02
#: largest spread and cells per particle of a scene rule 2 hands to the hash grid when slow
MOTION_SPREAD = 1.2
MOTION_CELLS = 2.0
#: residents sampled (strided) at a build to measure the motion at the first update
MOTION_SAMPLE = 1024
#: particles sampled (strided) for the occupied fraction
OCCUPANCY_SAMPLE = 1 << 16

CHOICES = {"hash_grid": HashGrid, "index_sort": IndexSort, "zindex_sort": ZIndexSort,
           "sweep_prune": SweepPrune}
USAGES = ("steps", "once")


@njit(**JIT)
def _radii_and_box(pos, rad, handles, stride):
    """One pass over the finite radii among ``handles``: (how many, the largest, the mean r³
    of every ``stride``-th handle's, bounding box lo, hi of their centres)."""
    x0 = y0 = z0 = np.inf
    x1 = y1 = z1 = -np.inf
    rmax, cubes, k, n, nxt = 0.0, 0.0, 0, 0, 0
    for t in range(handles.shape[0]):
        h = handles[t]
        r = rad[h]
        if t == nxt:
            nxt += stride
            if r < np.inf:
                cubes += r * r * r
                k += 1
        if not r < np.inf:
            continue
        rmax = max(rmax, r)
        n += 1
        x, y, z = pos[h, 0], pos[h, 1], pos[h, 2]
        x0, x1 = min(x0, x), max(x1, x)
        y0, y1 = min(y0, y), max(y1, y)
        z0, z1 = min(z0, z), max(z1, z)
    return n, rmax, cubes / max(k, 1), np.array([x0, y0, z0]), np.array([x1, y1, z1])


@njit(**JIT)
def _occupied_cells(pos, handles, lo, inv, dims):
    """Occupied cells of a coarse grid over the bounding box."""
    nx, ny, nz = dims[0], dims[1], dims[2]
    seen = np.zeros(nx * ny * nz, np.uint8)
    for t in range(handles.shape[0]):
        h = handles[t]
        i = min(max(int((pos[h, 0] - lo[0]) * inv[0]), 0), nx - 1)
        j = min(max(int((pos[h, 1] - lo[1]) * inv[1]), 0), ny - 1)
        m = min(max(int((pos[h, 2] - lo[2]) * inv[2]), 0), nz - 1)
        seen[(m * ny + j) * nx + i] = 1
    return int(seen.sum())


def _checked(positions, radii, handles):
    """(positions, radii, handles) as the statistics kernel needs them, or None if their
    shapes or the handles' range are wrong (then the chosen structure reports the error)."""
    try:
        pos = np.ascontiguousarray(positions, np.float64)
        rad = np.ascontiguousarray(radii, np.float64).reshape(-1)
        h = (np.arange(rad.shape[0], dtype=np.int64) if handles is None
             else np.ascontiguousarray(np.atleast_1d(handles), np.int64))
    except (TypeError, ValueError):
        return None
    if pos.ndim != 2 or pos.shape != (rad.shape[0], 3) or h.ndim != 1:
        return None
    if h.size and (h.min() < 0 or h.max() >= rad.shape[0]):
        return None
    return pos, rad, h


def statistics(positions, radii, handles=None) -> dict:
    """The statistics ``auto`` decides on (see the module docstring), for ``handles`` (default:
    every row) of ``positions`` (N, 3) and ``radii`` (N,); infinite radii are ignored."""
    checked = _checked(positions, radii, handles)
    if checked is None:
        raise BroadPhaseError("auto.statistics: positions (N, 3), radii (N,) and handles in "
                              "[0, N) expected")
    pos, rad, h = checked
    n, rmax, cube, lo, hi = _radii_and_box(pos, rad, h, max(1, h.shape[0] // SAMPLE))
    if n < h.shape[0]:  # walls (infinite radii) among the handles: leave them out
        h = h[np.isfinite(rad[h])]
        n, rmax, cube, lo, hi = _radii_and_box(pos, rad, h, max(1, n // SAMPLE))
    out = {"n": int(n), "spread": 1.0, "cells_per_particle": 0.0, "occupied": 1.0,
           "axis_overlaps": 0.0, "giants": 0, "giant_threshold": np.inf}
    if n < 2:
        return out
    out["giant_threshold"], out["giants"] = giant_radius(rad, h, GIANT_FACTOR, GIANTS_MAX)
    out["spread"] = rmax / cube ** (1.0 / 3.0)
    ext = np.maximum(hi - lo, 0.0)
    out["axis_overlaps"] = n * 2.0 * rmax / max(float(ext.max()), 1e-300)
    out["cells_per_particle"] = float(np.prod(np.floor(ext / (2.0 * rmax)) + 1.0)) / n
    # coarse grid of ~m / COARSE_PER_CELL cells shaped like the box (flat axes get one cell),
    # filled with a strided sample of m <= OCCUPANCY_SAMPLE particles
    hs = h[:: max(1, n // OCCUPANCY_SAMPLE)]
    target = max(hs.shape[0] / COARSE_PER_CELL, 1.0)
    live = ext > 1e-12 * max(float(ext.max()), 1e-300)
    edge = (float(np.prod(ext[live])) / target) ** (1.0 / max(int(live.sum()), 1)) \
        if live.any() else 1.0
    dims = np.where(live, np.clip(np.ceil(ext / max(edge, 1e-300)), 1, 1 << 20), 1).astype(
        np.int64)
    while float(np.prod(dims)) > 4 * target:  # guard against extreme aspect ratios
        dims = np.maximum(dims // 2, 1)
    inv = np.where(live, dims / np.where(live, ext, 1.0), 0.0)
    occ = _occupied_cells(pos, hs, lo, inv, dims)
    out["occupied"] = occ / float(np.prod(dims))
    return out


def choose(stats: dict, usage: str = "steps", motion: float | None = None) -> str:
    """The structure ``auto`` picks for the given :func:`statistics` and ``usage`` ("steps":
    built once, updated and queried many times; "once": built and queried once); ``motion``:
    median displacement per update in diameters (:func:`motion`; None: not yet seen)."""
    if usage == "once" and stats.get("giants", 0) > 0:
        return GiantsApart.name
    if stats["spread"] > SPREAD_MAX:
        return "hash_grid"
    homogeneous = stats["occupied"] >= OCCUPIED_MIN
    if homogeneous and (stats["cells_per_particle"] <= STEPS_DENSE_CELLS or usage == "once"):
        return "hash_grid" if _slow_and_dense(stats, usage, motion) else "index_sort"
    if usage == "steps" and stats["axis_overlaps"] < SWEEP_OVERLAPS:
        if stats["n"] <= SWEEP_N_MAX:
            return "sweep_prune"
        if homogeneous:
            return "index_sort"
    return "hash_grid" if usage == "steps" else "zindex_sort"


def _slow_and_dense(stats: dict, usage: str, motion: float | None) -> bool:
    """Rule 2's exception: a dense, nearly monodisperse scene stepped with little motion."""
    return (usage == "steps" and motion is not None and motion < MOTION_MAX
            and stats["spread"] <= MOTION_SPREAD and stats["cells_per_particle"] <= MOTION_CELLS)


def motion_matters(stats: dict, usage: str) -> bool:
    """Whether the motion per update can change :func:`choose`'s pick for ``stats``."""
    return choose(stats, usage, 0.0) != choose(stats, usage, np.inf)


def motion(sample: np.ndarray, before: np.ndarray, positions, diameters: np.ndarray) -> float:
    """Median over the residents ``sample`` of the displacement from ``before`` (their positions
    at the build) to ``positions``, in diameters. The median ignores the few that jumped (a
    periodic wrap, a removed handle's slot reused)."""
    if sample.size == 0:
        return np.inf
    d = np.asarray(positions)[sample] - before
    return float(np.median(np.sqrt(np.einsum("ij,ij->i", d, d)) / diameters))


def structure(name: str, stats: dict, usage: str = "steps"):
    """A new structure ``name`` (a :func:`choose` result other than giants apart) with the
    parameters the statistics call for: a sparse ``index_sort`` built once gets a table of
    ``SPARSE_TABLE`` cells per particle (rule 5)."""
    if name == "index_sort" and usage == "once" and stats["cells_per_particle"] > DENSE_CELLS:
        return IndexSort(max_cells=max(4096, SPARSE_TABLE * stats["n"]))
    return CHOICES[name]()


class Auto:
    """The structure :func:`choose` picks, decided at every ``build`` and, where the motion
    decides (rule 2), again at the first ``update`` after it (module docstring); the
    broad-phase protocol of ``base.BroadPhase`` delegated to it. ``chosen`` names it,
    ``statistics`` and ``motion`` hold what the decision saw; ``stats()`` adds them. Parameter
    ``usage``:
    "steps" (default: a simulation, built once and updated every step) or "once"
    (``find_contacts``: one build, one query, so the build's cost decides)."""

    name = "auto"

    params = {"usage": Param("choice", "steps", "steps: a simulation (built once, updated "
                             "every step); once: one build and one query", choices=USAGES)}

    def __init__(self, **given):
        self.settings = settings(type(self), given)
        self.usage = self.settings["usage"]
        self._bp = None
        self._bound = None
        self.chosen: str | None = None
        self.statistics: dict = {}
        self.decisions = 0
        #: median displacement per update in diameters, measured at the first update after a
        #: build whose pick depends on it (None: not measured yet); kept for the next build
        self.motion: float | None = None
        self.switches = 0
        self._probe = None  # (sampled handles, their positions, diameters) at the last build

    def _decide(self, positions, radii, handles) -> None:
        self.statistics = statistics(positions, radii, handles)
        self.chosen = choose(self.statistics, self.usage, self.motion)
        self._probe = None
        if motion_matters(self.statistics, self.usage):
            sample = handles[:: max(1, handles.shape[0] // MOTION_SAMPLE)]
            sample = sample[np.isfinite(radii[sample])]
            self._probe = (sample, positions[sample], 2.0 * radii[sample])
        if self.chosen == GiantsApart.name:  # the others' structure from their statistics
            t = self.statistics["giant_threshold"]
            others = statistics(positions, radii, handles[radii[handles] <= t])
            inner = choose({**others, "giants": 0}, self.usage)
            self._bp = GiantsApart(t, structure(inner, others, self.usage))
            self.chosen = f"{inner}+giants"
        else:
            self._bp = structure(self.chosen, self.statistics, self.usage)
        self.decisions += 1

    def _delegate(self, handles=None):
        """The current structure; before any build, decided from the bound arrays and
        ``handles`` (a first ``insert``) or from nothing."""
        if self._bp is None:
            if self._bound is None:
                self._bound = (np.zeros((0, 3)), np.zeros(0))
            pos, rad = self._bound
            checked = _checked(pos, rad, np.zeros(0, np.int64) if handles is None else handles)
            self._decide(*(checked or (np.zeros((0, 3)), np.zeros(0), np.zeros(0, np.int64))))
            self._bp.bind(pos, rad)
        return self._bp

    # ------------------------------------------------------------------ the protocol
    def bind(self, positions, radii) -> None:
        if self._bp is not None:
            self._bp.bind(positions, radii)
        self._bound = (positions, radii)

    def build(self, positions, radii, handles=None) -> "Auto":
        checked = _checked(positions, radii, handles)
        if checked is None:  # bad input: the structure's build names it
            self.chosen, self._bp, self._probe = "zindex_sort", ZIndexSort(), None
        else:
            self._decide(*checked)
        self._bp.build(positions, radii, handles)
        self._bound = (positions, radii)
        return self

    def insert(self, handles) -> None:
        self._delegate(handles).insert(handles)

    def remove(self, handles) -> None:
        self._delegate().remove(handles)

    def update(self, positions, radii=None) -> None:
        if radii is None and self._bound is not None:
            radii = self._bound[1]
        if self._probe is None or not self._switched(positions, radii):
            self._delegate().update(positions, radii)
        self._bound = (positions, radii)

    def _switched(self, positions, radii) -> bool:
        """At the first update after a build whose pick depends on the motion: measure it
        (:func:`motion`) and, if the pick changes, build the new pick from the current
        residents instead of updating the old one (the same pairs either way)."""
        sample, before, diameters = self._probe
        self._probe = None
        try:
            self.motion = motion(sample, before, positions, diameters)
        except (IndexError, ValueError, TypeError):  # bad positions: the update names them
            return False
        pick = choose(self.statistics, self.usage, self.motion)
        if pick == self.chosen:
            return False
        old = self._bp
        handles = np.concatenate((old.members, old.infinite))
        self._bp = structure(pick, self.statistics, self.usage)
        self._bp.build(positions, radii, handles)
        self.chosen = pick
        self.switches += 1
        return True

    def candidate_pairs(self, include_infinite: bool = True) -> np.ndarray:
        return self._delegate().candidate_pairs(include_infinite)

    def contacts(self, include_infinite: bool = True) -> np.ndarray:
        return self._delegate().contacts(include_infinite)

    def stats(self) -> dict:
        st = self._delegate().stats()
        return {**st, "name": self.name, "chosen": self.chosen, "auto_motion": self.motion, **{
            f"auto_{k}": v for k, v in self.statistics.items()}}

    @property
    def members(self) -> np.ndarray:
        return self._delegate().members

    @property
    def infinite(self) -> np.ndarray:
        return self._delegate().infinite

    @property
    def filters(self) -> bool:
        return self._delegate().filters

    @property
    def calls(self) -> dict:
        return self._delegate().calls
