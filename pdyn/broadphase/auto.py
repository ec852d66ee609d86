"""``auto``: picks a broad-phase structure from cheap statistics of the residents and delegates
every call to it, so it is exactly as exact as the structure it picked.

Statistics (one O(N) pass over the finite residents plus strided samples; walls ignored):

* ``spread`` = largest radius / cubic mean radius. A single-level grid sizes its cells by the
  largest diameter, so it tests ~``spread³`` times the candidates of a hierarchy of grids
  ([Koch2020] §4.1.6-4.1.8; [Schornbaum2009] §2.3-2.4); a mean of r³ does not jump between
  size classes as a median does.
* ``cells_per_particle`` = cells of a dense grid (edge = largest diameter) over the residents'
  bounding box, per resident: dense tables are capped at ``8 N`` cells and enlarge their cells
  beyond that ([Ihmsen2011] §4.2: "memory scales with the domain").
* ``occupied`` = occupied fraction of a coarse grid of ~N / 8 cells: ~1 homogeneous, 0.5 for
  Koch's checkerboard, a few per cent for particles crowded into a corner.
* ``axis_overlaps`` = N · largest diameter / longest extent: what sweep and prune sweeps.
* ``giants`` = spheres larger than ``GIANT_FACTOR`` × the cubic mean radius of the others
  (0 if more than ``GIANTS_MAX``; ``giants.py``).
* ``motion`` (seen at the first update after a build) = median displacement since the build
  over a strided sample, in diameters; the median ignores the few that jumped (a wrap).

Rules (``usage`` is "steps" in a simulation, "once" in ``find_contacts``); the thresholds are
the constants below, each with its reason; ``pdyn bench --report`` and
``benchmarks/auto_motion.py`` / ``benchmarks/giant_among_small.py`` measure them:

0. ``once`` with giants: the giants are tested against every resident, the rest go to the
   structure rules 1-6 pick for them (``chosen`` = "<structure>+giants"): one giant among many
   small spheres would otherwise make every cell as wide as the giant.
1. ``spread > SPREAD_MAX``: ``hash_grid``, one grid per size class.
2. else ``cells_per_particle <= DENSE_CELLS`` (``STEPS_DENSE_CELLS`` for "steps"; any for
   "once") and ``occupied >= OCCUPIED_MIN``: ``index_sort``, the fastest dense grid. Except
   ("steps") a dense, nearly monodisperse scene that moves slowly (``cells_per_particle <=
   MOTION_CELLS``, ``spread <= MOTION_SPREAD``, ``motion < MOTION_MAX``): ``hash_grid``, whose
   incremental update then moves few objects where the index sort re-sorts every particle.
3. else ("steps") ``axis_overlaps < SWEEP_OVERLAPS``: ``sweep_prune`` up to ``SWEEP_N_MAX``
   residents, above it ``index_sort`` if ``occupied >= OCCUPIED_MIN`` (else rule 4).
4. else ("steps"): ``hash_grid`` (sparse or clustered: a dense table would be mostly empty or
   its cells enlarged).
5. "once" and ``occupied >= OCCUPIED_MIN`` however sparse: ``index_sort``, with
   ``SPARSE_TABLE`` cells per particle when a dense grid would need more than ``DENSE_CELLS``
   (smaller cells, fewer candidates).
6. else ("once", clustered): ``zindex_sort``: O(N) memory whatever the domain, where a capped
   dense table would make the clusters' cells huge.

When to decide: at every ``build``; ``insert``, ``remove`` and ``update`` go to the structure
chosen then, except the first ``update`` after a build whose pick depends on the motion
(rule 2): it measures ``motion`` and, if the pick changes, builds the new pick from the
residents of the moment (``switches`` counts it). The simulation builds at start and at every
reordering, so a scene whose character changes is re-judged then. Each MPI rank decides from
its own residents; the choice never changes results (every structure yields the same pairs).
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

#: largest / cubic mean radius above which the hierarchy of grids wins: at Koch's
#: ``polydisperse`` (1.5) ``index_sort`` is 2x faster than ``hash_grid``, at
#: ``more_polydisperse`` (6.2) the dense grids refuse (> 2²⁶ candidates)
SPREAD_MAX = 3.0
#: dense-grid cells (edge = largest diameter) per particle up to which a dense table pays
#: (Koch's ``reference``, 9.7: ``index_sort`` fastest; his sparse scenes, > 10³: ``hash_grid``)
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
#: a giant is larger than this many times the cubic mean radius of the others: below 2x,
#: taking it apart gains nothing over the plain pick
GIANT_FACTOR = 2.0
#: at most this many giants are tested apart: each costs one exact test per resident, and at
#: ~10³ giants those G·N tests cost more than the hash grid
GIANTS_MAX = 32
#: radii sampled (strided) for the cubic mean
SAMPLE = 4096
#: median displacement per update, in diameters, below which a dense monodisperse scene
#: simulated step by step goes to the hash grid (rule 2): its incremental update moves few
#: objects then; above it the hash grid's step grows past the index sort's
MOTION_MAX = 0.02
#: largest spread and cells per particle of a scene rule 2 hands to the hash grid when slow:
#: Schornbaum's scene (2.1-2.2 cells per particle) is faster with ``index_sort`` at any motion
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
        found = self._bp.found if self._bp is not None else 0  # the last query's pairs
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
        self._bp.expect(found)  # about as many pairs as before: one run of the query kernel
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

    def release(self) -> None:
        if self._bp is not None:
            self._bp.release()

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
