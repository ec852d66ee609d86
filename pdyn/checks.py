"""Checks of the state a run starts from and of every step, with errors that every rank raises
alike (so the outcome never depends on the rank count).

**Initial state.** Particles given as arrays (a config's ``[particles]``) are checked whole by
:func:`initial_state` on the rank that reads them, before they are scattered; its verdict is
broadcast, so every rank raises alike. A generated scene and a restart are checked where they
land, by :func:`share_state`: each rank checks its own particles (and their contacts with its
ghosts, which reach every sphere that could touch one of them) and one ``allgather`` per check
names the same first offender, by id, on every rank. The checks:

* every centre inside the box along every axis (walled, periodic and open);
* no sphere wider than the box along a walled axis;
* with contact forces on (a stiffness or Young's modulus > 0): no two spheres, and no sphere and
  a wall, overlapping by more than ``overlap_tolerance`` × the smaller radius (periodic images
  included). Overlaps store elastic energy that the first steps release at once (two coincident
  centres fly apart with arbitrary energy), so they are refused with the first offending ids,
  unless the config's ``initial_overlap`` says ``"allow"`` (run anyway) or ``"relax"`` (push
  the spheres apart first, :func:`relax_overlaps`, on given particles; the relaxation DEM
  packing generators use). Without contact forces (Schornbaum's broad-phase scene) overlaps
  are harmless and allowed.

A restart continues a checked run: only centres outside a walled face are refused there (a
restart's unwrapped centres may lie past a periodic face, and spheres may have left along an
open axis).

**Every step** (:class:`StepGuard`): a particle that moves more than its radius in one step, or
whose velocity or position is no longer finite, stops the run in that step on every rank with
the step, the particle, the likely cause (dt against the contact time) and the last good
snapshot and checkpoint. It reuses the step's largest displacement the integrator computes
(NaN if any displacement is NaN), reduced over the ranks together with the rebuild
schedule's drift (one ``allreduce_max`` a step): one comparison per step; the particles are only
looked at when the largest displacement exceeds the smallest radius.
"""

from __future__ import annotations

import math

import numpy as np

from . import scenarios
from .broadphase import find_contacts
from .domain import check_block_count, default_block_dims
from .particles import GHOST, INFINITE, OWNED
from .scenarios import BYTES_PER_PARTICLE, ROTATION_BYTES_PER_PARTICLE, SceneError
from .wallkinds import kind_of, table_row

#: relaxation sweeps before giving up (each moves every overlapping pair apart)
RELAX_SWEEPS = 1000


class InitialStateError(ValueError):
    """The initial state cannot be run as given (one line naming the particles and values)."""


class RunawayError(RuntimeError):
    """A particle moved more than its radius in one step or stopped being finite (one line;
    raised on every rank in the same step)."""


class MemoryEstimateError(SceneError):
    """The run would need more memory than its node has available (one line, every rank)."""


# ------------------------------------------------------------------ memory
#: bytes of the block grid per block, on every rank (block -> rank map, bounds, curve keys and
#: order, weights): 120-290 B measured with tracemalloc at 10^6 and 1.25·10^5 blocks
BYTES_PER_BLOCK = 300
#: bytes per candidate of an insertion step, on every rank (every rank draws them all: centre,
#: radius, the draws, the verdicts and their reduction)
BYTES_PER_CANDIDATE = 160


def node_memory(comm) -> tuple[int, float | None]:
    """(ranks on a node, bytes available on it) for the memory estimates, agreed by every rank
    (the most ranks any node has, the least memory any rank sees; None: unknown), so every
    rank reaches the same verdict. Collective."""
    have = scenarios.available_memory()
    if comm.size == 1:
        return 1, have
    node = int(comm.allreduce_max(int(comm.node_size)))
    least = comm.allreduce_min(math.inf if have is None else float(have))
    return node, None if math.isinf(least) else least


def array_bytes(record) -> int:
    """Bytes of the numpy arrays a record (a tuple of arrays, e.g. a ``MeshBundle``) holds;
    0 for None."""
    return sum(a.nbytes for a in (record or ()) if isinstance(a, np.ndarray))


def check_memory(node: tuple, ranks: int, box, config, *, particles: int, rotating: bool,
                 inserter=None, restart: bool = False, meshes: int = 0,
                 series: int = 0) -> None:
    """One estimate, before set-up, of the large allocations a run on ``ranks`` ranks
    implies — each rank's share of the ``particles`` (``scenarios.BYTES_PER_PARTICLE``, more
    with ``rotating``) and of the spheres the insertion may pour, and on every rank the whole
    block grid (``BYTES_PER_BLOCK``) and an insertion step's candidates
    (``BYTES_PER_CANDIDATE``), the ``meshes`` (bytes; every rank holds every mesh) and the
    wall-force series' buffers (``series`` bytes, rank 0's) — against the memory of a node
    shared by its ranks (``node``:
    :func:`node_memory`). A block grid over the cap (``domain.check_block_count``) is refused
    first, on any rank count. Deterministic given ``node``: every rank raises the same
    :class:`MemoryEstimateError` (or ``DecompositionError``)."""
    on_node, have = node
    grid = ranks > 1 or bool(np.any(box.periodic))  # a block decomposition (else none)
    if config.blocks is not None:
        check_block_count(config.blocks, particles, ranks)
    dims = config.blocks or default_block_dims(box, ranks, n_particles=particles)
    blocks = math.prod(dims) if grid else 0
    poured, candidates = inserter.most(box.lo, box.hi) if inserter is not None else (0, 0)
    each = BYTES_PER_PARTICLE + (ROTATION_BYTES_PER_PARTICLE if rotating else 0)
    ins = getattr(inserter, "p", {})
    parts = {  # bytes on one rank, and what sets them
        "particles": (particles * each / ranks,
                      f"particles = {particles}" if restart or config.particles is not None
                      else f"scale = {config.scale!r}"),
        "block grid": (blocks * BYTES_PER_BLOCK, f"blocks = {list(dims)!r}"),
        "insertion": (poured * each / ranks + candidates * BYTES_PER_CANDIDATE,
                      f"insertion.total = {ins.get('total')!r}"
                      if poured * each / ranks > candidates * BYTES_PER_CANDIDATE
                      else f"insertion.region_hi = {list(ins.get('region_hi', ()))!r}"),
        "meshes": (meshes, "walls (meshes)"),
        "wall-force buffers": (series, "output.wall_forces = true"),
    }
    need = on_node * sum(b for b, _ in parts.values())
    if have is None or need <= have:
        return
    field = max(parts.values())[1]
    what = ", ".join(f"{k} {on_node * b / 2**30:.3g}" for k, (b, _) in parts.items() if b)
    raise MemoryEstimateError(
        f"{field}: the run would need about {need / 2**30:.3g} GiB on a node ({what} GiB: "
        f"{particles} particles at {each} B each"
        + (f", up to {poured} poured" if poured else "")
        + (f", {blocks} blocks" if blocks else "")
        + (f", {candidates} insertion candidates a step" if candidates else "")
        + f"; {on_node} of the {ranks} rank(s) on a node), more than the "
        f"{have / 2**30:.3g} GiB available")


# ------------------------------------------------------------------ initial state
def initial_state(particles: dict, box, *, contact_forces: bool, overlap: str = "refuse",
                  tolerance: float = 0.01) -> tuple[dict, str | None]:
    """Check (and with ``overlap="relax"`` repair) the global initial ``particles`` (store
    fields, ``pos`` and ``radius`` used; given as arrays, on the rank that holds them) in
    ``box`` (:class:`pdyn.domain.Box`). Returns the particles (new positions when relaxed) and
    a one-line note of what relaxation did (None otherwise); raises
    :class:`InitialStateError`."""
    pos = np.asarray(particles["pos"], float).reshape(-1, 3)
    rad = np.broadcast_to(np.asarray(particles["radius"], float), (pos.shape[0],))
    _raise(_inside(pos, box, ("wall", "periodic", "open")))
    if pos.shape[0] == 0:
        return particles, None
    _raise(_fits(rad, box))
    if not contact_forces or overlap == "allow":
        return particles, None
    note = None
    if overlap == "relax":
        pos, note = relax_overlaps(pos, rad, box, tolerance)
        particles = dict(particles, pos=pos)
    _no_overlaps(pos, rad, box, tolerance)
    return particles, note


def _inside(pos, box, kinds, ids=None):
    """(id, None, message) of the first centre (lowest id; ``ids`` default the row numbers)
    outside the box along an axis of ``kinds``, else None."""
    lo, hi = np.asarray(box.lo, float), np.asarray(box.hi, float)
    out = box.outside(pos, kinds)
    if not out.any():
        return None
    k, gid = _first(out, ids)
    return gid, None, (f"particles.positions[{gid}] = {pos[k].tolist()}: outside the box "
                       f"{lo.tolist()}..{hi.tolist()}")


def _fits(rad, box, ids=None):
    """(id, None, message) of the first sphere wider than the box along a walled axis, else
    None."""
    for a, kind in enumerate(box.boundary):
        length = float(box.hi[a] - box.lo[a])
        if kind == "wall":
            big = 2.0 * rad > length
            if big.any():
                k, gid = _first(big, ids)
                return gid, None, (f"particles.radii[{gid}] = {float(rad[k])!r}: the sphere is "
                                   f"wider than the box along {'xyz'[a]} ({length:.6g} m "
                                   "between walls)")
    return None


def _first(mask, ids) -> tuple[int, int]:
    """(row, id) of the lowest id among the rows ``mask``."""
    rows = np.flatnonzero(mask)
    if ids is None:
        return int(rows[0]), int(rows[0])
    k = int(rows[np.argmin(ids[rows])])
    return k, int(ids[k])


def _raise(found) -> None:
    if found is not None:
        raise InitialStateError(_message(found, found[1]))


def _overlapping(pos, rad, box):
    """Every overlapping sphere pair (i < j, periodic images included) with its overlap (m) and
    unit normal from i to j: (pairs (K, 2), overlap (K,), normal (K, 3))."""
    n = pos.shape[0]
    src = np.arange(n)
    ext_pos, ext_src = [pos], [src]
    lo, hi = np.asarray(box.lo, float), np.asarray(box.hi, float)
    length = hi - lo
    reach = 2.0 * float(rad.max())
    periodic = [a for a, b in enumerate(box.boundary) if b == "periodic"]
    for code in range(1, 3 ** len(periodic)):  # every non-zero combination of image shifts
        shift = np.zeros(3)
        for t, a in enumerate(periodic):
            shift[a] = ((code // 3 ** t) % 3 - 1) * length[a]
        moved = pos + shift
        near = ((moved >= lo - reach) & (moved <= hi + reach)).all(axis=1)
        ext_pos.append(moved[near])
        ext_src.append(src[near])
    ext_pos, ext_src = np.concatenate(ext_pos), np.concatenate(ext_src)
    ext_rad = rad[ext_src]
    pairs = find_contacts(ext_pos, ext_rad)
    pairs = pairs[(pairs[:, 0] < n) | (pairs[:, 1] < n)]
    i, j = ext_src[pairs[:, 0]], ext_src[pairs[:, 1]]
    d = ext_pos[pairs[:, 1]] - ext_pos[pairs[:, 0]]
    keep = i != j
    i, j, d = i[keep], j[keep], d[keep]
    flip = i > j
    i, j = np.where(flip, j, i), np.where(flip, i, j)
    d[flip] = -d[flip]
    dist = np.sqrt(np.einsum("ij,ij->i", d, d))
    overlap = rad[i] + rad[j] - dist
    order = np.lexsort((-overlap, j, i))  # by pair, the deepest image first
    i, j, overlap, d, dist = i[order], j[order], overlap[order], d[order], dist[order]
    first = np.ones(len(i), bool)
    first[1:] = (i[1:] != i[:-1]) | (j[1:] != j[:-1])
    i, j, overlap, d, dist = i[first], j[first], overlap[first], d[first], dist[first]
    normal = np.empty_like(d)
    apart = dist > 0
    normal[apart] = d[apart] / dist[apart, None]
    normal[~apart] = _directions(i[~apart], j[~apart])  # coincident centres
    return np.column_stack((i, j)), overlap, normal


def _directions(i, j) -> np.ndarray:
    """A unit vector per pair, fixed by the pair's ids (for coincident centres)."""
    t = (i * 0.6180339887498949 + j * 0.7548776662466927) % 1.0
    u = (i * 0.5698402909980532 + j * 0.3247179572447460) % 1.0
    z = 2.0 * t - 1.0
    phi = 2.0 * np.pi * u
    s = np.sqrt(1.0 - z * z)
    return np.column_stack((s * np.cos(phi), s * np.sin(phi), z))


def _wall_overlaps(pos, rad, box):
    """Overlap (m) of each sphere with each walled face, (N, W) in the order of
    ``Box.walls()``, then with each configured wall (``Box.shapes``), and the walls' names."""
    cols, names = [], []
    for a, kind in enumerate(box.boundary):
        if kind == "wall":
            cols += [rad - (pos[:, a] - box.lo[a]), rad - (box.hi[a] - pos[:, a])]
            names += [f"{'xyz'[a]} = {float(box.lo[a]):g}", f"{'xyz'[a]} = {float(box.hi[a]):g}"]
    for w in box.shapes:  # configured walls, each by its kind (pdyn.wallkinds)
        row, axis = table_row(w)
        cols.append(rad - kind_of(w["kind"]).gaps(pos, w.get("point"), axis, row,
                                                  w.get("mesh")))
        names.append(w["name"])
    return (np.column_stack(cols) if cols else np.zeros((pos.shape[0], 0))), names


HINT = "(set initial_overlap = \"allow\" or \"relax\", or --allow-overlap / --relax-overlap)"


def _wall_offender(pos, rad, box, tolerance, ids=None):
    """(key, count, message head) of the first sphere-wall overlap beyond ``tolerance`` (lowest
    id, then wall), else None."""
    walls, names = _wall_overlaps(pos, rad, box)
    bad = walls > tolerance * rad[:, None]
    if not bad.any():
        return None
    k, gid = _first(bad.any(axis=1), ids)
    w = int(np.flatnonzero(bad[k])[0])
    return ((gid, w), int(bad.sum()),
            f"particle {gid} overlaps the wall {names[w]} by {walls[k, w]:.4g} m "
            f"({walls[k, w] / rad[k]:.3g} of its radius {rad[k]:.4g} m; tolerance "
            f"{tolerance:g}) at the start; {{}} sphere-wall overlap(s) in all")


def _pair_offender(i, j, overlap, small, tolerance):
    """(key, count, message head) of the first pair (i < j, lowest) overlapping beyond
    ``tolerance`` × the smaller radius ``small``, else None."""
    bad = overlap > tolerance * small
    if not bad.any():
        return None
    rows = np.flatnonzero(bad)
    k = int(rows[np.lexsort((j[rows], i[rows]))[0]])
    return ((int(i[k]), int(j[k])), int(bad.sum()),
            f"particles {int(i[k])} and {int(j[k])} overlap by {overlap[k]:.4g} m "
            f"({overlap[k] / small[k]:.3g} of the smaller radius {small[k]:.4g} m; tolerance "
            f"{tolerance:g}) at the start; {{}} overlapping pair(s) in all")


def _message(found, total, hint: str = HINT) -> str:
    """The message of an offender (key, count, head): ``head`` alone without a count, else
    with the ``total`` count filled in and the ``hint``."""
    return found[2] if found[1] is None else f"{found[2].format(total)} {hint}"


def _no_overlaps(pos, rad, box, tolerance) -> None:
    _raise(_wall_offender(pos, rad, box, tolerance))
    if pos.shape[0] < 2:
        return
    pairs, overlap, _ = _overlapping(pos, rad, box)
    _raise(_pair_offender(pairs[:, 0], pairs[:, 1], overlap,
                          np.minimum(rad[pairs[:, 0]], rad[pairs[:, 1]]), tolerance))


def share_state(store, box, comm, *, contact_forces: bool, overlap: str = "refuse",
                tolerance: float = 0.01, restart: bool = False) -> None:
    """:func:`initial_state`'s checks on the particles already distributed: this rank's owned
    spheres in ``store`` and their contacts with its ghosts (which reach every sphere that
    could touch an owned one). Collective (one ``allgather`` per check); every rank raises
    the same :class:`InitialStateError`, naming the lowest offending ids. Relaxing is for
    given particles (:func:`initial_state`): here ``overlap="relax"`` refuses too."""
    owned = store.handles_with(OWNED, INFINITE)
    pos, rad, gid = store.pos[owned], store.radius[owned], store.gid[owned]
    kinds = ("wall",) if restart else ("wall", "periodic", "open")
    _agree(comm, _inside(pos, box, kinds, gid))
    if restart:
        return
    _agree(comm, _fits(rad, box, gid))
    if not contact_forces or overlap == "allow":
        return
    hint = HINT if overlap == "refuse" else ("(initial_overlap = \"relax\" relaxes given "
                                             "[particles] only; set \"allow\" to run anyway)")
    _agree(comm, _wall_offender(pos, rad, box, tolerance, gid), hint)
    both = store.handles_with(OWNED | GHOST, INFINITE)
    seen = store.pos[both]
    pairs = find_contacts(seen, store.radius[both])
    ia, ib = pairs[:, 0], pairs[:, 1]
    a, b = both[ia], both[ib]
    ga, gb = store.gid[a], store.gid[b]
    lo = np.where(ga < gb, a, b)
    keep = (ga != gb) & ((store.flags[lo] & OWNED) != 0)  # each pair on its lower id's owner
    a, b = a[keep], b[keep]
    d = seen[ib[keep]] - seen[ia[keep]]
    depth = store.radius[a] + store.radius[b] - np.sqrt(np.einsum("ij,ij->i", d, d))
    found = _pair_offender(np.minimum(ga[keep], gb[keep]), np.maximum(ga[keep], gb[keep]), depth,
                           np.minimum(store.radius[a], store.radius[b]), tolerance)
    _agree(comm, found, hint)


def _agree(comm, found, hint: str = HINT) -> None:
    """Collective: raise the offender with the lowest key over all ranks (the counts summed)."""
    every = [f for f in comm.allgather(found) if f is not None]
    if not every:
        return
    first = min(every, key=lambda f: f[0])
    raise InitialStateError(_message(first, sum(f[1] or 0 for f in every), hint))


def relax_overlaps(pos, rad, box, tolerance: float, sweeps: int = RELAX_SWEEPS):
    """Push overlapping spheres apart until no overlap exceeds half the tolerance: each sweep
    moves both spheres of every such pair half their overlap apart along the line of centres
    (coincident centres along a direction fixed by their ids), puts every sphere that overlaps
    a wall just inside it and wraps periodic axes. Deterministic: every rank gets the same bits.
    Returns (positions, note); raises :class:`InitialStateError` after ``sweeps`` sweeps."""
    pos = np.array(pos, float)
    lo, hi = np.asarray(box.lo, float), np.asarray(box.hi, float)
    walled = np.array([b == "wall" for b in box.boundary])
    periodic = np.array([b == "periodic" for b in box.boundary])
    start = pos.copy()
    n_pairs = 0
    for sweep in range(sweeps + 1):
        pos[:, walled] = np.clip(pos[:, walled], (lo + rad[:, None])[:, walled],
                                 (hi - rad[:, None])[:, walled])
        if pos.shape[0] < 2:
            break
        pairs, overlap, normal = _overlapping(pos, rad, box)
        bad = overlap > 0.5 * tolerance * np.minimum(rad[pairs[:, 0]], rad[pairs[:, 1]])
        if not bad.any():
            break
        if sweep == sweeps:
            k = int(np.flatnonzero(bad)[0])
            raise InitialStateError(
                f"initial_overlap = 'relax': particles {int(pairs[k, 0])} and "
                f"{int(pairs[k, 1])} still overlap by {overlap[k]:.4g} m after {sweeps} "
                "relaxation sweeps (too dense to pull apart)")
        n_pairs = max(n_pairs, int(bad.sum()))
        push = 0.5 * overlap[bad, None] * normal[bad]
        move = np.zeros_like(pos)
        np.add.at(move, pairs[bad, 0], -push)
        np.add.at(move, pairs[bad, 1], push)
        pos += move
        pos[:, periodic] = lo[periodic] + np.mod(pos[:, periodic] - lo[periodic],
                                                 (hi - lo)[periodic])
    shift = np.sqrt(((pos - start) ** 2).sum(axis=1))
    note = (f"relaxed the initial overlaps in {sweep} sweep(s) (up to {n_pairs} pair(s) per "
            f"sweep; largest move {float(shift.max()) if len(shift) else 0.0:.4g} m)")
    return pos, note


# ------------------------------------------------------------------ every step
class StepGuard:
    """Stops a run whose particles move more than their radius in one step or stop being
    finite, on every rank in the same step (see the module docstring).

    ``store`` the particle store, ``comm`` the communicator, ``dt`` (s), ``contact_time`` the
    shortest contact time t_c (s, inf without contact forces), ``dt_safety`` pdyn's default
    t_c/dt, ``writers`` the run's writers (for the last good files). Collective to build."""

    def __init__(self, store, comm, dt: float, contact_time: float, dt_safety: float,
                 writers=()):
        self.store, self.comm = store, comm
        self.dt, self.t_c, self.dt_safety = float(dt), float(contact_time), float(dt_safety)
        self.writers = writers
        h = store.owned
        finite = h[np.isfinite(store.radius[h])]
        local = float(store.radius[finite].min()) if finite.size else math.inf
        self.r_min = comm.allreduce_min(local)

    def check(self, displacement: float, moving: np.ndarray, step: int) -> None:
        """After the drift of ``step``: ``displacement`` is the largest of all ranks'
        ``moving`` particles (m; NaN if any is NaN; the driver reduces it together with the
        rebuild schedule's drift, one reduction per step). Collective; raises
        :class:`RunawayError` on every rank if any particle moved more than its radius or is
        not finite."""
        d = displacement if displacement == displacement else math.inf
        if d <= self.r_min:
            return
        self._inspect(moving, step)

    def _inspect(self, moving, step) -> None:
        store = self.store
        dx = self.dt * store.vel[moving]  # the drift of this step (velocity Verlet)
        moved = np.sqrt(np.einsum("ij,ij->i", dx, dx))
        bad = ~(moved <= store.radius[moving]) | ~np.isfinite(store.pos[moving]).all(axis=1)
        local = None
        if bad.any():
            h = moving[bad]
            h = int(h[np.argmin(store.gid[h])])
            with np.errstate(over="ignore", invalid="ignore"):  # the message says inf
                moved = float(np.sqrt(np.sum((self.dt * store.vel[h]) ** 2)))
            local = (int(store.gid[h]), moved, float(store.radius[h]), store.vel[h].tolist(),
                     store.pos[h].tolist())
        found = [x for x in self.comm.allgather(local) if x is not None]
        if not found:
            return  # a large sphere moved more than the smallest radius, not more than its own
        gid, moved, radius, vel, pos = min(found)
        if math.isfinite(moved) and all(math.isfinite(x) for x in pos):
            what = (f"particle {gid} moved {moved:.4g} m in one step, more than its radius "
                    f"{radius:.4g} m (speed {moved / self.dt:.4g} m/s)")
        else:
            what = f"particle {gid} is no longer finite (velocity {vel}, position {pos})"
        raise RunawayError(f"step {step}: {what}; {self._cause()}; {self._last_good()}")

    def _cause(self) -> str:
        dt, t_c = self.dt, self.t_c
        if not math.isfinite(t_c):
            return (f"likely cause: dt = {dt:.4g} s is too large for the speeds (no contact "
                    "forces limit it); lower dt or the velocities")
        if dt > t_c / 4:
            return (f"likely cause: dt = {dt:.4g} s is {dt / t_c:.3g} times the shortest "
                    f"contact time {t_c:.4g} s, so contacts are not resolved (the default dt is "
                    f"t_c/{self.dt_safety:g} = {t_c / self.dt_safety:.4g} s); lower dt")
        return (f"likely cause: a speed or force too large for dt = {dt:.4g} s (the shortest "
                f"contact time is {t_c:.4g} s); lower dt, the velocities or gravity")

    def _last_good(self) -> str:
        last = {w.name: w.written[-1] for w in self.writers if getattr(w, "written", None)}
        if not last:
            return "no snapshot or checkpoint written by this run"
        return "last good " + ", ".join(f"{name}: {path}" for name, path in last.items())
