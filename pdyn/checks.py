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
open axis), and spheres wider than the box as it reads them (:func:`wider_than_box`,
``pdyn.restart``).

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
from numba import njit

from . import scenarios
from ._jit import JIT
from .broadphase import find_contacts
from .domain import check_block_count, default_block_dims
from .particles import GHOST, INFINITE, OWNED
from .scenarios import BYTES_PER_PARTICLE, ROTATION_BYTES_PER_PARTICLE, SceneError
from .mesh import contact_geometry
from .wallkinds import kind_of, table_row
from .walls import entry_contact, mesh_arrays, mesh_entry, overlap_limit

#: relaxation sweeps before giving up (each moves every overlapping pair apart)
RELAX_SWEEPS = 1000


class InitialStateError(ValueError):
    """The initial state cannot be run as given (one line naming the particles and values)."""


class RunawayError(RuntimeError):
    """A particle moved more than its radius in one step or stopped being finite (one line;
    raised on every rank in the same step)."""


class FastWallError(InitialStateError):
    """A wall moves faster than its contacts can be found or stopped (one line naming the
    wall, its speed and the limit; every rank)."""


class OverlapError(RunawayError):
    """A sphere went through a wall or another sphere: an overlap beyond the limit (one line
    naming both; every rank in the same step)."""


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


def mesh_bytes(meshes, bundle, shared: bool) -> tuple[int, int]:
    """(bytes a node holds once, bytes each rank holds) of a run's ``meshes``
    (``pdyn.mesh.Mesh``: their arrays, ``Mesh.arrays``; once per node when ``shared``,
    ``pdyn.mesh.place``) and their ``bundle`` (its arrays that are not the meshes' own: each
    rank's), each buffer counted once."""
    seen, once, each = set(), 0, 0
    for a in [a for m in meshes for a in m.arrays().values()]:
        if a.ctypes.data not in seen:
            seen.add(a.ctypes.data)
            once += a.nbytes
    for a in (bundle or ()):
        if isinstance(a, np.ndarray) and a.ctypes.data not in seen:
            seen.add(a.ctypes.data)
            each += a.nbytes
    return (once, each) if shared else (0, once + each)


def check_memory(node: tuple, ranks: int, box, config, *, particles: int, rotating: bool,
                 inserter=None, restart: bool = False, meshes: int = 0, node_meshes: int = 0,
                 series: int = 0) -> None:
    """One estimate, before set-up, of the large allocations a run on ``ranks`` ranks
    implies — each rank's share of the ``particles`` (``scenarios.BYTES_PER_PARTICLE``, more
    with ``rotating``) and of the spheres the insertion may pour, and on every rank the whole
    block grid (``BYTES_PER_BLOCK``) and an insertion step's candidates
    (``BYTES_PER_CANDIDATE``), the ``meshes`` (bytes every rank holds) and ``node_meshes``
    (bytes a node holds once: meshes its ranks share, :func:`mesh_bytes`) and the
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
                      else f"insertion.region_hi = {list(ins['region_hi'])!r}"
                      if ins.get("region_hi") else f"insertion.region = {ins.get('region')!r}"),
        "meshes": (meshes + node_meshes / on_node, "walls (meshes)"),
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


def wider_than_box(rad, box, ids=None) -> str | None:
    """The message naming the first sphere (lowest id) wider than ``box`` along a walled axis,
    else None (a restart's rows, ``pdyn.restart``)."""
    found = _fits(np.asarray(rad, float), box, ids)
    return None if found is None else found[2]


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


def wall_names(box) -> list[str]:
    """The walls' names, in wall-table order: the walled faces (``x = 0``, ``Box.walls()``
    order), then the configured walls (``walls[k] (type)``, ``Box.shapes``)."""
    names = []
    for a, kind in enumerate(box.boundary):
        if kind == "wall":
            names += [f"{'xyz'[a]} = {float(box.lo[a]):g}", f"{'xyz'[a]} = {float(box.hi[a]):g}"]
    return names + [w["name"] for w in box.shapes]


def _shape_gaps(pos, w) -> np.ndarray:
    """Distance (m) of each centre from the configured wall ``w`` (a ``Box.shapes`` spec),
    positive on the spheres' side (``WallKind.gaps``)."""
    row, axis = table_row(w)
    return kind_of(w["kind"]).gaps(pos, w.get("point"), axis, row, w.get("mesh"))


def _wall_overlaps(pos, rad, box):
    """Overlap (m) of each sphere with each walled face, (N, W) in the order of
    ``Box.walls()``, then with each configured wall (``Box.shapes``), and the walls' names."""
    cols = []
    for a, kind in enumerate(box.boundary):
        if kind == "wall":
            cols += [rad - (pos[:, a] - box.lo[a]), rad - (box.hi[a] - pos[:, a])]
    cols += [rad - _shape_gaps(pos, w) for w in box.shapes]  # each by its kind
    return (np.column_stack(cols) if cols else np.zeros((pos.shape[0], 0))), wall_names(box)


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
    puts every sphere that overlaps a walled face just inside it, moves every sphere that
    overlaps a configured wall (``Box.shapes``, every kind) out along the wall's normal until
    it just touches it (:func:`_out_of_walls`), moves both spheres of every overlapping pair
    half their overlap apart along the line of centres (coincident centres along a direction
    fixed by their ids) and wraps periodic axes. Deterministic: every rank gets the same bits.
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
        stuck = _out_of_walls(pos, rad, box, tolerance, last=sweep == sweeps)
        bad = np.zeros(0, bool)
        if pos.shape[0] >= 2:
            pairs, overlap, normal = _overlapping(pos, rad, box)
            bad = overlap > 0.5 * tolerance * np.minimum(rad[pairs[:, 0]], rad[pairs[:, 1]])
        if not bad.any() and stuck is None:
            break
        if sweep == sweeps:
            if not bad.any():
                raise InitialStateError(f"initial_overlap = 'relax': {stuck} after {sweeps} "
                                        "relaxation sweeps (too dense to pull apart)")
            k = int(np.flatnonzero(bad)[0])
            raise InitialStateError(
                f"initial_overlap = 'relax': particles {int(pairs[k, 0])} and "
                f"{int(pairs[k, 1])} still overlap by {overlap[k]:.4g} m after {sweeps} "
                "relaxation sweeps (too dense to pull apart)")
        n_pairs = max(n_pairs, int(bad.sum()))
        if bad.any():
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


#: the step of the central differences that give a configured wall's normal at a centre, as
#: a fraction of the sphere's radius (:func:`_out_of_walls`)
NORMAL_STEP = 1e-6


def _out_of_walls(pos, rad, box, tolerance: float, last: bool = False) -> str | None:
    """Move (in place) every sphere overlapping a configured wall (``Box.shapes``) by more
    than half the ``tolerance`` × its radius out along the wall's normal at its centre — the
    gradient of the distance ``WallKind.gaps`` (central differences, :data:`NORMAL_STEP`;
    on a shell's surface, where it has none, a direction fixed by the sphere's row) — by
    its overlap, so that it just touches the wall. Returns None when none overlapped, else
    what overlapped (with ``last``: the first such sphere and wall, by row, for the
    message)."""
    found = None
    names = wall_names(box)[-len(box.shapes):] if box.shapes else []
    for w, name in zip(box.shapes, names):
        gap = _shape_gaps(pos, w)
        over = rad - gap
        bad = np.flatnonzero(over > 0.5 * tolerance * rad)
        if not bad.size:
            continue
        if found is None:
            k = int(bad[0])
            found = (f"particle {k} still overlaps the wall {name} by {over[k]:.4g} m"
                     if last else "a wall overlap")
        p, h = pos[bad], NORMAL_STEP * rad[bad]
        grad = np.empty_like(p)
        for a in range(3):
            e = np.zeros(3)
            e[a] = 1.0
            grad[:, a] = (_shape_gaps(p + h[:, None] * e, w)
                          - _shape_gaps(p - h[:, None] * e, w)) / (2.0 * h)
        norm = np.sqrt(np.einsum("ij,ij->i", grad, grad))
        flat = ~(norm > 0.5)  # on a shell's surface: no gradient
        grad[flat] = _directions(bad[flat], bad[flat] + 1)
        norm[flat] = 1.0
        pos[bad] = p + (over[bad] / norm)[:, None] * grad
    return found


# ------------------------------------------------------------------ every step
class StepGuard:
    """Stops a run whose particles move more than their radius in one step or stop being
    finite, on every rank in the same step (see the module docstring).

    ``store`` the particle store, ``comm`` the communicator, ``clock`` the run's time
    (``pdyn.clock.Clock``: its time step), ``contact_time`` the
    shortest contact time t_c (s, inf without contact forces), ``dt_safety`` pdyn's default
    t_c/dt, ``writers`` the run's writers (for the last good files), ``overlaps`` the
    :class:`OverlapWatch` (None: none). Collective to build."""

    def __init__(self, store, comm, clock, contact_time: float, dt_safety: float,
                 writers=(), overlaps: "OverlapWatch | None" = None):
        self.store, self.comm = store, comm
        self.clock, self.t_c, self.dt_safety = clock, float(contact_time), float(dt_safety)
        self.writers = writers
        self.overlaps = overlaps
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
            if self.overlaps is not None:
                self.overlaps.moved(d)
            return
        self._inspect(moving, step)
        if self.overlaps is not None:
            self.overlaps.moved(d)

    def watch(self, step: int) -> float:
        """Before the drift of the step after ``step``: inf if an overlap of this rank's
        lists exceeds its limit now (:class:`OverlapWatch`), else 0 — for the driver to fold
        into the step's reduction (the largest move), so that every rank inspects."""
        if self.overlaps is None:
            return 0.0
        return self.overlaps.look(self.store, step)

    def _inspect(self, moving, step) -> None:
        if self.overlaps is not None:
            self._passed()
        store = self.store
        dt = self.clock.dt
        dx = dt * store.vel[moving]  # the drift of this step (velocity Verlet)
        moved = np.sqrt(np.einsum("ij,ij->i", dx, dx))
        bad = ~(moved <= store.radius[moving]) | ~np.isfinite(store.pos[moving]).all(axis=1)
        local = None
        if bad.any():
            h = moving[bad]
            h = int(h[np.argmin(store.gid[h])])
            with np.errstate(over="ignore", invalid="ignore"):  # the message says inf
                moved = float(np.sqrt(np.sum((dt * store.vel[h]) ** 2)))
            local = (int(store.gid[h]), moved, float(store.radius[h]), store.vel[h].tolist(),
                     store.pos[h].tolist())
        found = [x for x in self.comm.allgather(local) if x is not None]
        if not found:
            return  # a large sphere moved more than the smallest radius, not more than its own
        gid, moved, radius, vel, pos = min(found)
        if math.isfinite(moved) and all(math.isfinite(x) for x in pos):
            what = (f"particle {gid} moved {moved:.4g} m in one step, more than its radius "
                    f"{radius:.4g} m (speed {moved / dt:.4g} m/s)")
        else:
            what = f"particle {gid} is no longer finite (velocity {vel}, position {pos})"
        raise RunawayError(f"step {step}: {what}; {self._cause()}; {self._last_good()}")

    def _cause(self) -> str:
        dt, t_c = self.clock.dt, self.t_c
        if not math.isfinite(t_c):
            return (f"likely cause: dt = {dt:.4g} s is too large for the speeds (no contact "
                    "forces limit it); lower dt or the velocities")
        if dt > t_c / 4:
            return (f"likely cause: dt = {dt:.4g} s is {dt / t_c:.3g} times the shortest "
                    f"contact time {t_c:.4g} s, so contacts are not resolved (the default dt is "
                    f"t_c/{self.dt_safety:g} = {t_c / self.dt_safety:.4g} s); lower dt")
        return (f"likely cause: a speed or force too large for dt = {dt:.4g} s (the shortest "
                f"contact time is {t_c:.4g} s); lower dt, the velocities or gravity")

    def _passed(self) -> None:
        """Collective: raise :class:`OverlapError` for the deepest excess any rank's
        :class:`OverlapWatch` found (the same on every rank count), or, found at the first
        look of a run that allows initial overlaps, turn the watch off."""
        found = [f for f in self.comm.allgather(self.overlaps.found) if f is not None]
        if not found:
            return
        key, step, text, first = min(found)
        if first:
            self.overlaps.on = False  # the initial state overlaps so (initial_overlap "allow")
            return
        raise OverlapError(f"step {step}: {text}; likely cause: an approach faster than the "
                           "contacts stop (an overlap of about V √(m*/k)): lower the speeds "
                           "or dt, or stiffen the contacts (docs/walls.md, \"Fast walls\"); "
                           f"{self._last_good()}")

    def _last_good(self) -> str:
        last = {w.name: w.written[-1] for w in self.writers if getattr(w, "written", None)}
        if not last:
            return "no snapshot or checkpoint written by this run"
        return "last good " + ", ".join(f"{name}: {path}" for name, path in last.items())


# ------------------------------------------------------------------ fast walls, deep overlaps
#: a wall's approach must be stopped within this fraction of the softest sphere's radius
STOP_WITHIN = 0.1


def refuse_fast_walls(wallset, names, skin: float, dt: float, law, radius, mass, comm) -> None:
    """Refuse at start-up (:class:`FastWallError`, one line naming the first such wall) a
    configured wall, unless its ``allow_fast``, whose surface approaches the spheres
    (``WallSet.approach``, V m/s)

    * more than ``skin``/2 a step (V dt > skin/2): the lists are rebuilt every step then and
      still miss spheres it reaches within the step (skin 0: rebuilt every step, not
      refused), or
    * faster than the softest sphere can stop within :data:`STOP_WITHIN` of its radius: the
      largest overlap of an undamped sphere–wall contact at approach speed V, where the
      contact's elastic energy equals m V²/2 — linear law δ = V √(m/k), k the stiffness or
      E r; Hertz δ = (15 m V² / (16 E* √r))^(2/5) ([CundallStrack1979]) — over ``radius``
      and ``mass`` of this rank's spheres (and those the insertion adds).

    ``wallset``: ``pdyn.walls.WallSet``; ``names`` the walls' names (:func:`wall_names`);
    ``law`` the ``ContactLaw`` (none stiff: nothing refused). Collective (one
    ``allgather``)."""
    if not law.stiff:
        return
    speeds = wallset.approach()
    worst = _softest(law, np.asarray(radius, float), np.asarray(mass, float))
    worst = max((w for w in comm.allgather(worst) if w is not None), default=None)
    for k in range(wallset.n_box, len(wallset)):
        v = float(speeds[k])
        if v == 0.0 or wallset.allow_fast[k]:
            continue
        override = f"set allow_fast = true in {names[k].split()[0]} to run it anyway"
        if skin > 0.0 and v * dt > 0.5 * skin:
            raise FastWallError(
                f"{names[k]}: its surface approaches the spheres by {v * dt:.4g} m a step "
                f"({v:.4g} m/s at dt = {dt:.4g} s), more than half the neighbour skin "
                f"{0.5 * skin:.4g} m: the lists would miss spheres it reaches; lower its "
                f"speed or dt, or raise neighbour_skin ({override})")
        if worst is None:
            continue
        per_speed, exponent, r = worst  # overlap / radius at 1 m/s, its power of V
        depth = per_speed * v ** exponent
        if depth > STOP_WITHIN:
            limit = (STOP_WITHIN / per_speed) ** (1.0 / exponent)
            raise FastWallError(
                f"{names[k]}: its surface approaches the spheres at {v:.4g} m/s; the softest "
                f"sphere (radius {r:.4g} m) stops it only after an overlap of about "
                f"{depth:.3g} of its radius, more than {STOP_WITHIN:g} (the limit is "
                f"{limit:.4g} m/s); lower its speed or stiffen the contacts ({override})")


def _softest(law, radius, mass):
    """(overlap over radius of a sphere–wall contact stopping an approach of 1 m/s, the power
    of the speed it grows with, that sphere's radius) of the sphere that overlaps most, of
    spheres of ``radius`` and ``mass``; None without spheres (:func:`refuse_fast_walls`).
    With several materials the softest of the pairs that can occur (``ContactLaw.pairs``;
    every sphere taken of each pair's materials: a bound)."""
    if law.pairs is not None:
        found = [_softest(p, radius, mass) for p in law.pairs.values() if p.stiff]
        return max((f for f in found if f is not None), default=None)
    keep = np.isfinite(radius) & np.isfinite(mass)
    radius, mass = radius[keep], mass[keep]
    if not radius.size:
        return None
    p = law.parameters  # a Normal: the elastic law and its damping (pdyn.dynamics.laws)
    if law.name == "hertz":
        exponent = 0.8
        depth = (15.0 * mass / (16.0 * p.law.E * np.sqrt(radius))) ** 0.4 / radius
    else:
        exponent = 1.0
        depth = np.sqrt(mass / p.stiffness(radius, radius)) / radius
    k = int(np.argmax(depth))
    return float(depth[k]), exponent, float(radius[k])


#: an exact look is due when the bound on the smallest slack falls to this fraction of the
#: slack last measured (rounding of the measured overlaps)
SLACK_ROUNDING = 1e-6


@njit(**JIT)
def _deepest(rows, start, split, partner, pos, rad, gid, normal, table, mesh):
    """Over every entry of the lists: the smallest slack, limit − overlap (m; the limit the
    smaller radius of a sphere pair, ``pdyn.walls.overlap_limit`` of a wall), and the row and
    entry of the largest excess, overlap − limit. A mesh entry apart counts as touching
    (overlap 0): its geometry bounds its distance only from below."""
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    slack = np.inf
    at_t, at_u = -1, -1
    for t in range(rows.shape[0]):
        i = rows[t]
        xi, yi, zi, ri = pos[i, 0], pos[i, 1], pos[i, 2], rad[i]
        for u in range(start[t], split[t]):
            j = partner[u]
            dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
            room = min(ri, rad[j]) - (ri + rad[j] - math.sqrt(dx * dx + dy * dy + dz * dz))
            if room < slack:
                slack, at_t, at_u = room, t, u
        for u in range(split[t], start[t + 1]):
            w = partner[u]
            g = -1 - gid[w]
            entry = mesh_entry(mesh, slot, geo, u)
            delta = entry_contact(xi, yi, zi, ri, pos, normal, table, w, g, entry)[3]
            if entry[0] >= 0:
                delta = max(delta, 0.0)
            room = overlap_limit(table, g, ri) - delta
            if room < slack:
                slack, at_t, at_u = room, t, u
    return slack, at_t, at_u


class OverlapWatch:
    """Stops a run the moment a sphere has gone through a wall or another sphere: an overlap
    beyond the smaller radius of a sphere pair, a sphere's radius for a half-space wall,
    half of it for a shell (``pdyn.walls.overlap_limit``).

    Looked at before each step's drift, on the lists' entries (every pair that could
    overlap): exactly (:func:`_deepest`, one pass over the lists, the meshes' geometry
    recomputed into its own buffers) only when the slack could have run out. The smallest
    slack it measured falls each step by at most d + max(d, w) — d the step's largest move
    of any sphere (the step guard's reduction), w the largest step of a wall's surface along
    its normal (``WallSet.approach`` · dt) — and every rebuild of the lists measures again,
    so a look is skipped only where no overlap can exceed its limit: the verdict is the
    exact one, on any rank count. ``lists`` the neighbour lists, ``wallset`` the walls,
    ``names`` their names (:func:`wall_names`), ``dt`` (s: the largest the run plans,
    :meth:`plan`); ``allow`` (initial_overlap
    "allow"): an excess in the first look turns the watch off (the run was allowed to start
    so)."""

    def __init__(self, lists, wallset, names, dt: float, allow: bool = False):
        self.lists, self.table, self.bundle, self.names = lists, wallset.table, \
            wallset.bundle, names
        self.plan(wallset, dt)
        self.slack = -math.inf  # a lower bound of the smallest slack now (m)
        self.builds = -1  # the build of the lists it was measured on
        self.first, self.on = bool(allow), True
        self.found = None  # (key, step, message, first look) of this rank's excess
        self._geo, self._home, self._border = np.zeros((0, 4)), np.zeros((0, 4)), \
            np.zeros(0, np.int64)

    def plan(self, wallset, dt: float) -> None:
        """The walls' largest step along their normals, w (m), at time step ``dt`` (s)."""
        self.wall_step = float(np.max(wallset.approach(), initial=0.0)) * float(dt)

    def moved(self, d: float) -> None:
        """A step moved spheres by up to ``d`` (m): the slack falls by up to d + max(d, w)."""
        self.slack -= d + max(d, self.wall_step)

    def look(self, store, step: int) -> float:
        """inf if an overlap of ``store``'s rows exceeds its limit at ``step`` (kept in
        :attr:`found`), else 0."""
        lists = self.lists
        if not self.on:
            return 0.0
        if lists.builds != self.builds:
            self.slack, self.builds = -math.inf, lists.builds
        if self.slack > 0.0:
            return 0.0
        slack, t, u = _deepest(lists.rows, lists.start, lists.split, lists.partner, store.pos,
                               store.radius, store.gid, store.normal, self.table,
                               self._mesh(store))
        first, self.first = self.first, False
        self.slack = slack * (1.0 - SLACK_ROUNDING) if slack < math.inf else math.inf
        if not slack < 0.0:
            return 0.0
        self.found = self._offender(store, step, int(t), int(u), -slack, first)
        return math.inf

    def _mesh(self, store):
        """The meshes' contact geometry of the lists now, in buffers of its own (the lists'
        homes copied: the force pass's are left as they are), or None without meshes."""
        lists = self.lists
        if self.bundle is None:
            return None
        n = lists.mesh_sphere.shape[0]
        if self._geo.shape[0] < n:
            self._geo, self._home = np.empty((n, 4)), np.empty((n, 4))
            self._border = np.empty(n, np.int64)
        home = self._home[:n]
        home[:] = lists.mesh_home[:n]
        contact_geometry(lists.mesh_sphere, lists.mesh_facet, lists.mesh_wall, store.pos,
                         store.radius, self.bundle, home, self._geo[:n], self._border[:n])
        return lists.slot, self._geo[:n]

    def _offender(self, store, step, t, u, excess, first) -> tuple:
        """(key, step, message, first) of entry ``u`` of row ``t``, overlapping ``excess``
        (m) beyond its limit; the key orders offenders alike on every rank count: the deepest
        first, then by ids."""
        lists = self.lists
        i, j = lists.rows[t], lists.partner[u]
        gi, gj, ri = int(store.gid[i]), int(store.gid[j]), float(store.radius[i])
        if u < lists.split[t]:
            small = min(ri, float(store.radius[j]))
            a, b = min(gi, gj), max(gi, gj)
            return ((-excess, a, b, -1), step, f"particles {a} and {b} overlap by "
                    f"{small + excess:.4g} m, more than the smaller radius {small:.4g} m "
                    "(one is passing through the other)", first)
        g = -1 - gj
        facet = int(lists.facet[u]) if lists.facet.shape[0] else -1
        limit = float(overlap_limit(self.table, g, ri))
        what = f"the wall {self.names[g]}" + (f" (triangle {facet})" if facet >= 0 else "")
        rule = ("its radius (its centre is behind the wall)" if limit == ri else
                "half its radius (its centre is passing through the wall)")
        return ((-excess, gi, gj, facet), step, f"particle {gi} (radius {ri:.4g} m) overlaps "
                f"{what} by {limit + excess:.4g} m, more than {rule}", first)


def watch_walls(lists, wallset, box, law, spheres, dt: float, comm,
                config) -> "OverlapWatch | None":
    """The start-up refusal of fast walls (:func:`refuse_fast_walls`; ``spheres`` the radii
    and masses that bound it) and the run's :class:`OverlapWatch` — None without contact
    forces (spheres pass through each other by design) or with the config's
    ``allow_deep_overlap``. Collective."""
    names = wall_names(box)
    refuse_fast_walls(wallset, names, lists.skin, dt, law, *spheres, comm)
    if not law.stiff or config.allow_deep_overlap:
        return None
    return OverlapWatch(lists, wallset, names, dt, allow=config.initial_overlap == "allow")
