"""Migration and ghost exchange: what moves between ranks each step, and when.

The driver (``pdyn.simulation``) calls ``distribute`` once, then every step ``reduce_max`` (the
step's one reduction, with the ghosts' state travelling meanwhile), ``migrate`` with the
schedule's decision (is this a rebuild step?) and ``ghosts``. The last two return a
:class:`StoreChanges`, the handles they removed from and added to the particle store (ghosts
dropped, emigrants, immigrants, new ghosts); the driver applies it
to the broad phase. An exchange knows the store, the box and the communicator, nothing else.
``stats()`` and ``load_summary()`` report per-rank load; ``state()`` and ``restore()`` carry
the skin and the block map through a checkpoint, and a restart distributes with ``wrap=False``
(centres stay where the checkpoint has them until the next rebuild, exactly as in the
uninterrupted run). Two exchanges:

* :class:`SerialExchange` — one rank, no periodic axis: nothing to do, costs nothing.
* :class:`BlockExchange` — the block decomposition (``pdyn.domain.BlockGrid``) on any number of
  ranks, and the periodic case on one rank (periodic images are ghosts the rank sends itself).

Verlet-skin scheme ([Verlet1967]; [Schornbaum2009] §5; [WindolphUschakov2023] §5-6 for why there
is no master), on the schedule of the neighbour lists (``pdyn.dynamics.neighbours``): the driver
rebuilds when any particle has moved more than skin/2 since the last rebuild (one
``allreduce_max``), and the exchange's skin is the lists' skin. Between rebuilds nothing is
re-planned: ``reduce_max`` only sends the fields of existing ghosts that travel on every
exchange, from and into buffers made with the plan (plan/execute, as Cabana's ``Halo``,
[Slattery2022]). At a rebuild step all ghosts are
removed (O(1) each), owned centres are wrapped into the periodic box, particles that left this
rank's blocks migrate to the owners of their new blocks (``BlockGrid.rank_of``), a new ghost plan is
made (``ghosts.py``) and the new ghosts are inserted. At some rebuild steps the driver then
asks for a rebalance (``balance.py``): between migration and the new ghost plan, so whole
blocks move with their particles to their new owners through the same O(1) remove/insert and
the ghost plan is made once, for the new map (:meth:`BlockExchange.rebalance`).
Every message goes to a neighbour rank (an owner of a block within ``2 r_max + skin`` of this
rank's blocks, periodic wrap included), point to point; there is no master and no all-gather of
particles. What a message carries comes from the store's fields (``pdyn.particles.FIELDS``
with the run's features: ``ParticleStore.selection``), packed by one
:class:`~pdyn.particles.Packing` per selection.

Decomposition independence (bit-identical N-rank and 1-rank trajectories):

* the rebuild steps are the same on every decomposition (the global largest displacement
  since the last rebuild is the same number), so periodic wrapping changes the same particles
  at the same steps;
* ghosts carry the owner's bits, periodic images are ``x + shift`` computed by one kernel;
* the contact rule (``pdyn.dynamics.contact``): the force on each owned particle is the sum,
  in ascending partner global id, of f(i←j) computed from i's side; a contact between an owned
  particle and a ghost is evaluated on both ranks and each applies only its own half, so each
  contact force is applied exactly once to each owned particle. A periodic axis at least two
  interaction ranges long guarantees at most one image of a partner is in reach.

Handles the exchange keeps between rebuilds (owned sources of ghosts, ghost slots) are
translated by :meth:`BlockExchange.remap` when the driver permutes the store
(``pdyn.reorder.reorder``), so memory reordering never changes a result.

Failures are collective where the exchange detects them (every rank raises the same error
before anyone blocks in a message); any other exception is left to the CLI, which aborts the
job (``comm.abort``).
"""

from __future__ import annotations

import time

import numpy as np

from ..domain import (CURVES, BlockGrid, DecompositionError, default_block_dims, image_drift2,
                      moved_offset, offset_images, scale_about, shear_offset, wrap_periodic)
from ..particles import (FIELDS, GHOST, GHOST_CREATE, GHOST_UPDATE, INFINITE, MIGRATE, OWNED,
                         Packing, StoreChanges, ragged_groups)
from .balance import imbalance
from .ghosts import plan_ghosts
from .update import GhostUpdate

TAG_MIGRATE = 100
TAG_CREATE = 200
TAG_UPDATE = 300
TAG_BALANCE = 400

#: default skin of the ghost plan, in mean particle radii, when the neighbour lists set none
#: (skin 0)
PLAN_SKIN_RADII = 0.5


def _none() -> np.ndarray:
    return np.zeros(0, np.int64)


#: nothing changed (what a step between rebuilds returns)
NO_CHANGES = StoreChanges()


def _default_skin(skin: float | None, r_mean: float) -> float:
    """``skin`` (m), or ``PLAN_SKIN_RADII`` × the mean radius ``r_mean`` of all particles."""
    return float(skin) if skin is not None else PLAN_SKIN_RADII * float(r_mean)


def _select(store, particles: dict, n: int, mine) -> dict:
    """The rows ``mine`` of each global per-particle array (scalars broadcast to ``n`` rows)
    that ``store`` holds, a ragged field's records with their rows: a checkpoint's rotation
    fields are dropped in a run without rotation (a run with rotation and a checkpoint without
    starts them at zero)."""
    out = {}
    for name, values in particles.items():
        f = store.fields.get(name)
        if f is not None and f.counted_by is None:
            out[name] = np.broadcast_to(np.asarray(values, f.dtype), (n,) + f.shape)[mine]
    for count, names in ragged_groups(k for k in particles if k in store.fields).items():
        if count not in particles:
            continue
        keep = np.zeros(n, bool)
        keep[mine] = True
        keep = np.repeat(keep, np.broadcast_to(np.asarray(particles[count], np.int64), (n,)))
        for name in names:
            out[name] = np.asarray(particles[name], FIELDS[name].dtype)[keep]
    return out


class ExchangeError(RuntimeError):
    """A configuration the decomposition cannot honour, or a particle that moved too far
    (message names the field / particle and value; raised on every rank)."""


class SerialExchange:
    """One rank owns everything, no periodic axis: no ghosts, no migration, no messages.
    ``skin`` (m, default ``PLAN_SKIN_RADII`` × mean radius) still paces the schedule the driver
    keeps (memory reordering happens at rebuild steps)."""

    def __init__(self, store, skin: float | None = None):
        self.store = store
        self._skin_arg = skin
        self.skin = 0.0

    def distribute(self, source, *, wrap: bool = True) -> np.ndarray:
        """Insert every particle of ``source`` (as :meth:`BlockExchange.distribute`; nothing
        to wrap here); return their handles."""
        self.skin = _default_skin(self._skin_arg, source.r_mean)
        particles = source.take(None, 0)
        n = len(np.asarray(particles["gid"]).reshape(-1))
        return self.store.add(**_select(self.store, particles, n, slice(None)))

    def state(self) -> dict:
        """The state a checkpoint keeps (:meth:`BlockExchange.state`): the skin."""
        return {"kind": "serial", "ranks": 1, "skin": float(self.skin)}

    def restore(self, state: dict, drift: float = 0.0, step: int = 0,
                dt: float = 0.0) -> float:
        """Accept any exchange's :meth:`state` (one rank without periodic axes has no plan
        to continue); returns ``drift``."""
        return drift

    def remap(self, old_to_new) -> None:
        """Nothing kept by handle."""

    def advance(self, step: int, dt: float) -> None:
        """No images to move (:meth:`BlockExchange.advance`)."""

    def image_drift2(self, rows) -> float:
        """No images (:meth:`BlockExchange.image_drift2`)."""
        return 0.0

    def deform(self, dt: float) -> None:
        """No periodic axis to resize (:meth:`BlockExchange.deform`)."""

    def strain_drift(self) -> float:
        """The box keeps its size (:meth:`BlockExchange.strain_drift`)."""
        return 0.0

    def owner_of(self, pos) -> np.ndarray:
        """The rank owning each centre ``pos`` (N, 3): this one."""
        return np.zeros(len(pos), np.int64)

    def admit(self, radius: float) -> None:
        """Nothing to widen (:meth:`BlockExchange.admit`)."""

    def migrate(self, rebuild: bool, dt: float) -> StoreChanges:
        return NO_CHANGES

    def reduce_max(self, values: np.ndarray) -> np.ndarray:
        """The step's reduction on one rank: ``values`` themselves."""
        return values

    def refresh_ghosts(self) -> None:
        """No ghosts (:meth:`BlockExchange.refresh_ghosts`)."""

    def ghosts(self) -> StoreChanges:
        return NO_CHANGES

    def stats(self) -> dict:
        return {"rank": 0, "owned": int(self.store.owned.size), "ghosts": 0, "migrated": 0,
                "rebuilds": 0, "crossed": 0, "neighbours": [], "blocks": 1}

    def load_summary(self, mean_imbalance: float = 1.0, rebalances: int = 0) -> str | None:
        return None


class BlockExchange:
    """Block decomposition of ``box`` over ``comm`` with Verlet-skin ghost and migration plans
    for the particles of ``store``.

    ``dims`` (default :func:`pdyn.domain.default_block_dims` for ``n_particles``) is the block
    grid; ``skin``
    (default ``PLAN_SKIN_RADII`` × mean radius) the Verlet skin (m): the neighbour lists' skin,
    since the two share one rebuild schedule.
    """

    def __init__(self, store, box, comm, dims=None, skin: float | None = None,
                 n_particles: int | None = None, curve: str = CURVES[0]):
        self.store, self.box, self.comm = store, box, comm
        # message formats, from the store's fields (its run's features)
        self.migrant = Packing(store.selection(MIGRATE))
        self.new_ghost = Packing(store.selection(GHOST_CREATE))
        self.ghost_state = Packing(store.selection(GHOST_UPDATE))
        self.curve = curve  # block order of the set-up map (rebalancing names its own)
        self.rank, self.size = comm.rank, comm.size
        try:
            self.grid = BlockGrid(box, dims or default_block_dims(box, self.size,
                                                                  n_particles=n_particles))
        except DecompositionError as exc:
            raise ExchangeError(str(exc)) from None
        if self.grid.n_blocks < self.size:
            raise ExchangeError(
                f"blocks = {list(self.grid.dims.tolist())!r}: {self.grid.n_blocks} blocks for "
                f"{self.size} ranks; every rank needs at least one block")
        self._skin_arg = skin
        self.skin = 0.0
        self.r_max = 0.0
        self.peers: list[int] = []
        self.plan = None
        self._targets = 0  # the last ghost plan's (a guess for the next)
        self.recv_handles: dict[int, np.ndarray] = {}
        self._update = None  # the plan's GhostUpdate (reduce_max), made at its first step
        self._drift = 0.0  # a restart's displacement since the last rebuild (m)
        self._rebuild = True
        self._restored: dict | None = None  # a checkpoint's state(), used by distribute
        self.n_migrated = 0
        self.n_rebuilds = 0
        self.balanced_at = 0  # step of the last balance check (a checkpoint keeps it)
        # image shifts (Box.shifts): a sheared box's move every step (advance) in place, so
        # the plan and its ghost update read this step's
        self.shifts = self.grid.shifts()
        self._side = np.sign(self.shifts[:, 2])  # +1 the images above the top face, -1 below
        self._base_x = self.shifts[:, 0].copy()
        self._signs = np.sign(self.shifts[:, :3])  # each image's −1, 0, +1 lengths per axis
        length = box.length
        self._shear = (float(box.shear_rate), float(length[2]), float(length[0]))
        self._band = None  # the rows built near a z face (image_drift2), until a rebuild
        self.offset = 0.0  # the sheared images' x offset at this step (m)
        self.built_at = None  # step of the last rebuild (sheared: its offset counts)
        self._built_offset = None
        self.step = 0  # the step advance() last set
        # a box that follows a target pressure (pdyn.dynamics.cell): the strain rates it
        # deforms at (1/s, set by strain()), its lengths at the last rebuild; sheared with a
        # changing L_z, the images' offset moves step by step (kept in checkpoints)
        self.rate = np.zeros(3)
        self._built_length = box.length.copy()
        self._stepwise = bool(box.shear_rate) and bool(box.deforms[2])
        self._deforms = bool(box.deforms.any())
        self.n_crossed = 0  # centres wrapped across the z faces of a sheared box
        self.comm_seconds = 0.0  # inside point-to-point messages
        self.bytes_sent = 0  # payload of point-to-point messages (B; without the counts)
        self.messages_sent = 0  # point-to-point payload messages (one per peer and array)
        self.rebuild_seconds = 0.0  # ghost removal, wrap, migration, plan, ghost creation

    # ------------------------------------------------------------------ set-up
    def distribute(self, source, *, wrap: bool = True) -> np.ndarray:
        """Insert this rank's particles from ``source`` (``pdyn.parallel.startup``: a generated
        scene, scattered arrays, a checkpoint); return their handles. The block → rank map
        comes from the source's block weights, the same on every rank; the source then hands
        this rank its particles (at least those in its blocks) and the exchange keeps those
        whose centres lie in its blocks. Errors are raised on every rank before any particle
        message is sent.

        A restart (after :meth:`restore`) passes ``wrap=False``: centres are kept as the
        checkpoint holds them (wrapping waits for the next rebuild, as in the uninterrupted
        run), and a centre may lie up to one skin outside the box along a periodic axis (it
        drifted through the face since the last rebuild). If the restored state comes from the
        same rank count and block grid, the block → rank map is the checkpointed one and the
        source hands every rank what it held when the checkpoint was written (``same``), so
        every rank continues with what it held in the uninterrupted run; otherwise the map is
        made afresh and an unwrapped centre belongs to the block it is closest to (the edge
        block of its periodic face)."""
        box, grid = self.box, self.grid
        restored = self._restored or {}
        same = (restored.get("ranks") == self.size and "owner" in restored
                and list(restored.get("dims", ())) == grid.dims.tolist()
                and len(restored["owner"]) == grid.n_blocks)
        if same:
            grid.owner = np.array(restored["owner"], np.int64)
        else:
            grid.assign(source.block_weights(grid), self.size, curve=self.curve)
        particles = source.take(grid, self.rank, same=same)
        pos = np.array(particles["pos"], float, copy=True).reshape(-1, 3)
        n = pos.shape[0]
        radius = np.broadcast_to(np.asarray(particles["radius"], float), (n,))
        self.r_max = float(self.comm.allreduce_max(float(radius.max()) if n else 0.0))
        if self._skin_arg is None and "skin" in restored:
            self.skin = float(restored["skin"])
        else:
            self.skin = _default_skin(self._skin_arg, source.r_mean)
        try:
            grid.check_periodic_length(2.0 * self.r_max + self.skin)
        except DecompositionError as exc:
            raise ExchangeError(str(exc)) from None
        everyone = np.arange(n, dtype=np.int64)
        message = None
        if wrap and box.shear_rate:  # a fresh start, at step 0: the image offset is 0
            vel = np.array(particles["vel"], float, copy=True).reshape(-1, 3)
            wrap_periodic(box, pos, everyone, vel)
            particles = dict(particles, vel=vel)
        elif wrap:
            wrap_periodic(box, pos, everyone)
        elif n:
            far = box.outside(pos, ("periodic",), self.skin)
            if far.any():
                k = int(np.flatnonzero(far)[0])
                message = (f"particle {int(particles['gid'][k])} at {pos[k].tolist()}: more "
                           f"than one skin ({self.skin:.6g} m) outside the periodic box "
                           f"{list(box.lo)}..{list(box.hi)} (damaged checkpoint?)")
        self._fail(message)
        mine = np.ones(n, bool) if same else grid.rank_of(pos) == self.rank
        self.peers = self._neighbours()
        self._rebuild = True
        return self.store.add(**_select(self.store, dict(particles, pos=pos), n, mine))

    def state(self) -> dict:
        """The state a checkpoint keeps so a restart continues with the same plan reach and,
        on the same rank count, the same ownership: ``skin``, ``ranks``, the block grid
        ``dims`` (plain values) and its block → rank map ``owner`` (an int64 array, one entry
        per block). (When to rebuild follows from the particles' ``build_pos``.)"""
        state = {"kind": "block", "ranks": int(self.size), "skin": float(self.skin),
                 "dims": self.grid.dims.tolist(), "owner": self.grid.owner.copy(),
                 "balanced_at": int(self.balanced_at)}
        if self.box.shear_rate:  # the sheared images' offset at the last rebuild counts
            state["built_at"] = int(self.built_at)
        if self._deforms:  # the box's size, its rates, what the rebuild test needs
            state.update(hi=self.box.hi.tolist(), rate=self.rate.tolist(),
                         built_length=self._built_length.tolist(), reach=float(self.reach))
            if self._stepwise:
                state.update(offset=float(self.offset), built_offset=float(self._built_offset))
        return state

    def restore(self, state: dict, drift: float = 0.0, step: int = 0,
                dt: float = 0.0) -> float:
        """Continue a checkpointed exchange (:meth:`state` of this or any other exchange, any
        rank count) at ``step`` (time step ``dt``, s). ``drift`` (m) is the largest
        displacement of any particle since the last rebuild: the first ghost plan reaches
        that much farther, twice (in a sheared box plus the images' x travel since then, a
        bound of their displacement beyond the spheres'; the sum is returned). Call it before
        :meth:`distribute` (which then uses the checkpointed skin and, on the same rank count
        and grid, block map); collective in effect: call it on every rank with the same
        arguments."""
        self._restored = dict(state)
        self.balanced_at = int(state.get("balanced_at", 0))
        self.built_at = int(state.get("built_at", step))
        self._drift = float(drift)
        if self._deforms:  # the box as it was, the rates it deforms at
            np.copyto(self.box.hi, np.asarray(state["hi"], float))
            self._resized()
            self.rate = np.array(state["rate"], float)
            self._built_length = np.array(state["built_length"], float)
            self._drift += self._strained(float(state["reach"]))
            if self._stepwise:
                self.step, self.offset = int(step), float(state["offset"])
                self._built_offset = float(state["built_offset"])
        if self.box.shear_rate:  # the images moved at most that much more
            self.advance(step, dt)
            self._drift += abs(self.offset - self._built_offset)
        return self._drift

    def advance(self, step: int, dt: float) -> None:
        """Set the image shifts to step ``step`` (time step ``dt``, s): in a sheared box
        (Lees–Edwards) the x offset of the images across the z faces,
        ``Box.shear_offset``, the same bits on every rank; else nothing. The first call
        (set-up) takes ``step`` as the last rebuild's unless a checkpoint named it."""
        if not self.box.shear_rate:
            return
        if self.built_at is None:
            self.built_at = int(step)
        if self._built_offset is None:
            self._built_offset = shear_offset(self.built_at, dt, *self._shear)
        if self._stepwise:  # L_z changes: the offset moves by rate L_z dt a step
            while self.step < step:
                self.offset = moved_offset(self.offset, dt, *self._shear)
                self.step += 1
        else:
            self.step = int(step)
            self.offset = shear_offset(step, dt, *self._shear)
        offset_images(self.shifts, self._base_x, self._side, self.offset)

    def strain(self, rates) -> None:
        """The strain rates (3,) (1/s) the box deforms at from the next step on (the cell's
        controller's, ``pdyn.dynamics.cell``; the same on every rank)."""
        self.rate = np.asarray(rates, float)

    def deform(self, dt: float) -> None:
        """At a step's start, grow the box by 1 + rate dt along each axis (about its ``lo``
        corner: ``Box.resize``) and scale the owned centres and their build positions with
        it (``pdyn.domain.scale_about``: the rebuild test measures the motion beyond the
        affine one, :meth:`strain_drift` adds that); the blocks and the image shifts follow.
        Nothing without a rate."""
        if not (self._deforms and self.rate.any()):
            return
        factors = 1.0 + self.rate * float(dt)
        lo = np.asarray(self.box.lo, float)
        owned = self._owned()
        scale_about(self.store.pos, owned, lo, factors)
        scale_about(self.store.build_pos, owned, lo, factors)
        self.box.resize(factors)
        self._resized()

    def _resized(self) -> None:
        """The blocks, the image shifts (in place: the plan and its ghost update read them)
        and the shear's lengths after the box was resized."""
        self.grid.resize()
        length = self.box.length
        np.multiply(self._signs, length, out=self.shifts[:, :3])  # as Box.shifts() rows
        self._base_x[:] = self.shifts[:, 0]
        self._shear = (float(self.box.shear_rate), float(length[2]), float(length[0]))
        if self.box.shear_rate:  # the images' velocity offsets ±rate L_z, x offsets ±Δ
            self.shifts[:, 3] = self._side * (self.box.shear_rate * float(length[2]))
            offset_images(self.shifts, self._base_x, self._side, self.offset)

    def _strained(self, reach: float) -> float:
        """Half the largest closing (m) of two centres up to ``reach`` apart (or farther)
        by the box's deformation since the last rebuild: (1 − the smallest length ratio)
        ``reach`` / 2 (a length that grew closes nothing)."""
        ratio = float(np.min(self.box.length / self._built_length))
        return 0.5 * max(0.0, 1.0 - ratio) * reach

    def strain_drift(self) -> float:
        """What the box's deformation since the last rebuild adds to the drift the rebuild
        test takes (m, ``Schedule.decide``): two centres of a pair not listed, more than
        ``reach`` apart at the rebuild, close by at most their two drifts plus (1 − the
        smallest length ratio) × ``reach``, so the test is of D + that half against half the
        skin. 0 while the box keeps its size."""
        return self._strained(self.reach) if self._deforms else 0.0

    def image_drift2(self, rows) -> float:
        """The largest squared displacement (m²) of a sheared image since the last rebuild
        (``pdyn.domain.image_drift2`` over the integrated ``rows``: a sphere's own and the
        images' travel; 0 unsheared). A pair of a sphere and an image closes by at most the
        sum of their displacements, so the schedule rebuilds when that sum passes the skin
        (``Schedule.decide``), as it does for two spheres."""
        if not self.box.shear_rate:
            return 0.0
        s = self.store
        if self._band is None:  # the first step after a rebuild (or a restart, a remap)
            z, reach = s.build_pos[rows, 2], self.reach
            self._band = rows[(z < self.box.lo[2] + reach) | (z >= self.box.hi[2] - reach)]
        return image_drift2(self.box, s.pos, s.build_pos, self._band, reach=self.reach,
                            travel=self.offset - self._built_offset)

    def owner_of(self, pos) -> np.ndarray:
        """The rank owning each centre ``pos`` (N, 3; inside the box): the owner of its block
        (where a sphere inserted there belongs)."""
        return self.grid.rank_of(pos)

    def admit(self, radius: float) -> None:
        """Spheres up to ``radius`` (m) will be inserted during the run: widen the plan's
        reach (2 r_max + skin) to them now. Collective in effect: the same on every rank."""
        if radius > self.r_max:
            self.r_max = float(radius)
            try:
                self.grid.check_periodic_length(2.0 * self.r_max + self.skin)
            except DecompositionError as exc:
                raise ExchangeError(str(exc)) from None
            self.peers = self._neighbours()

    @property
    def reach(self) -> float:
        """Largest centre distance of two particles that may touch before the next rebuild."""
        return 2.0 * self.r_max + self.skin

    def _neighbours(self) -> list[int]:
        """The ranks owning a block within reach of this rank's blocks (the same relation on
        every rank). After a restart the first ghost plan reaches 2 drift farther, from
        centres up to one drift outside their blocks."""
        far = self.reach + 3.0 * self._drift
        return [int(p) for p in self.grid.neighbour_ranks(self.rank, far, self.size)]

    # ------------------------------------------------------------------ helpers
    def _owned(self) -> np.ndarray:
        return self.store.handles_with(OWNED, INFINITE)

    def _fail(self, message: str | None) -> None:
        """Collective error check: every rank raises if any rank has a message."""
        if self.size == 1:
            if message:
                raise ExchangeError(message)
            return
        bad = self.comm.allreduce_max(1 if message else 0)
        if bad:
            msgs = [m for m in self.comm.allgather(message) if m]
            raise ExchangeError(message or f"on another rank: {msgs[0]}")

    def _trade(self, packing: Packing, send: dict, tag: int,
               peers: list[int] | None = None) -> dict:
        """Send ``send[p]`` (a packed message: floats, ints, record floats, record ints;
        :meth:`Packing.pack`) to every peer ``p`` (the neighbour ranks unless ``peers`` is
        given); returns the messages received. Two rounds: the counts (particles, records),
        then every matrix at once."""
        t0 = time.perf_counter()
        peers = self.peers if peers is None else peers
        widths = (packing.width_f, packing.width_i, packing.rwidth_f, packing.rwidth_i)
        dtypes = (np.float64, np.int64, np.float64, np.int64)
        counts = {p: np.zeros(2, np.int64) for p in peers}
        self.comm.wait(self.comm.post(
            peers, {p: np.array([len(send[p][0]), len(send[p][2])], np.int64) for p in peers},
            counts, tag))
        recv = {p: tuple(np.empty((int(counts[p][a // 2]), widths[a]), dtypes[a])
                         for a in range(4)) for p in peers}
        requests = []
        for a in range(4):
            if widths[a]:
                out = {p: np.ascontiguousarray(send[p][a], dtypes[a]) for p in peers}
                requests += self.comm.post(peers, out, {p: recv[p][a] for p in peers},
                                           tag + 1 + a)
                self.bytes_sent += sum(m.nbytes for m in out.values())
                self.messages_sent += len(peers)
        self.comm.wait(requests)
        self.comm_seconds += time.perf_counter() - t0
        return recv

    def remap(self, old_to_new) -> None:
        """The store was permuted (``ParticleStore.permute``, e.g. ``pdyn.reorder.reorder``):
        translate the handles the plan keeps (owned handles to send, ghost handles to fill)."""
        old_to_new = np.asarray(old_to_new, np.int64)
        if self.plan is not None and len(self.plan.handles):
            new = old_to_new[self.plan.handles]
            if (new < 0).any():
                raise ExchangeError("remap: a planned ghost source is no longer live "
                                    "(internal error)")
            self.plan.handles = new
        for p, h in self.recv_handles.items():
            if len(h):
                self.recv_handles[p] = old_to_new[h]
        self._drop_update()  # it keeps handles
        self._band = None

    # ------------------------------------------------------------------ migrate
    def migrate(self, rebuild: bool, dt: float) -> StoreChanges:
        """At a ``rebuild`` step (the schedule's collective decision, the same on every rank)
        remove the ghosts, wrap the owned centres and migrate the leavers; else nothing.
        ``dt`` (s) only names the time step in the error for a particle that moved too far."""
        self._rebuild = bool(rebuild)
        if not rebuild:
            return NO_CHANGES
        t1 = time.perf_counter()
        ghosts = self._remove_ghosts()
        owned = self._owned()
        if self._deforms:  # the blocks within reach change with the box's size
            self._built_length = self.box.length.copy()
            try:
                self.grid.check_periodic_length(self.reach)
            except DecompositionError as exc:
                raise ExchangeError(str(exc)) from None
            self.peers = self._neighbours()
        crossed = wrap_periodic(self.box, self.store.pos, owned, self.store.vel, self.offset)
        if self.box.shear_rate:
            self.built_at, self._built_offset = self.step, self.offset
            self.n_crossed += crossed
            self._band = None
        out, into = self._migrate_owned(owned, dt)
        if self._drift:  # the plan made at a restart is gone: back to the usual neighbours
            self._drift = 0.0
            self.peers = self._neighbours()
        self.rebuild_seconds += time.perf_counter() - t1
        return StoreChanges(ghosts_removed=ghosts, emigrated=out, immigrated=into)

    def _remove_ghosts(self) -> np.ndarray:
        ghosts = self.store.ghosts
        self.store.remove(ghosts)
        self.recv_handles = {}
        self.plan = None
        self._drop_update()
        return ghosts

    def _drop_update(self) -> None:
        """Release the plan's ghost update (made again from the plan when next needed)."""
        if self._update is not None:
            self._update.free()
            self._update = None

    def _migrate_owned(self, owned, dt) -> tuple[np.ndarray, np.ndarray]:
        """Send the owned particles whose block belongs to another rank there; returns the
        handles (emigrants removed, immigrants added)."""
        store, grid = self.store, self.grid
        if self.size == 1:
            return _none(), _none()
        dest = grid.rank_of(store.pos, owned)
        leaving = dest != self.rank
        message = None
        # lost: leaving for a rank that is not a neighbour, or not finite (row by row only
        # when the whole is not: numpy's row-wise all() is slow)
        lost = np.flatnonzero(leaving)[~np.isin(dest[leaving], self.peers)]
        pos = store.pos[owned]
        if not np.isfinite(pos).all():
            lost = np.union1d(lost, np.flatnonzero(~np.isfinite(pos).all(axis=1)))
        if lost.size:
            h = int(owned[lost[0]])
            message = (
                f"particle {int(store.gid[h])} at {store.pos[h].tolist()} moved farther "
                f"than a neighbour rank's reach ({self.reach:.6g} m) since the last "
                f"exchange plan: the time step dt = {dt!r} is too large (lower dt)")
        self._fail(message)
        go, came = self._send_owned(owned[leaving], dest[leaving], self.peers, TAG_MIGRATE)
        self.n_migrated += len(go)
        return go, came

    def _send_owned(self, go, dest, peers, tag) -> tuple[np.ndarray, np.ndarray]:
        """Move the owned handles ``go`` to the ranks ``dest`` (all among ``peers``, which must
        name this rank exactly when this rank names them); returns (removed, added) handles."""
        store = self.store
        order = np.argsort(dest, kind="stable")
        go, dest = np.ascontiguousarray(go[order]), dest[order]
        bounds = np.searchsorted(dest, np.arange(self.size + 1))
        packing = self.migrant
        recv = self._trade(packing, {p: packing.pack(store, go[bounds[p]:bounds[p + 1]])
                                     for p in peers}, tag, peers=peers)
        store.remove(go)
        came = [store.add(**packing.fields(*recv[p])) for p in peers if len(recv[p][0])]
        return go, np.concatenate(came) if came else _none()

    # ------------------------------------------------------------------ rebalance
    def rebalance(self, changes: StoreChanges, work, threshold: float, curve: str,
                  step: int) -> tuple[StoreChanges, bool, int]:
        """Collective, at a rebuild step right after :meth:`migrate` (whose ``changes`` it
        extends): make ``work`` (this rank's measured work per block,
        ``balance.block_work``) global in one reduction; if the ranks' loads under the current
        map are more uneven than ``threshold`` (max/mean), cut the blocks along ``curve``
        afresh (``BlockGrid.assign``) and send every particle of a block that changed owner
        to its new owner. Each pair of ranks that trade a block knows it from the old and the
        new map, so only they exchange messages. Returns the combined changes (a handle that
        arrived in the migration and left again here is in neither list), whether blocks
        moved, and how many particles this rank sent."""
        grid, rank = self.grid, self.rank
        self.balanced_at = int(step)
        weights = self.comm.allreduce_sum(np.asarray(work, float))
        loads = np.bincount(grid.owner, weights=weights, minlength=self.size)
        if imbalance(loads) <= threshold:
            return changes, False, 0
        old = grid.owner.copy()
        new = grid.assign(weights, self.size, curve=curve)
        peers = sorted(set(new[(old == rank) & (new != rank)].tolist())
                       | set(old[(new == rank) & (old != rank)].tolist()))
        owned = self._owned()
        dest = grid.rank_of(self.store.pos, owned)  # the new map
        leaving = dest != rank
        go, came = self._send_owned(owned[leaving], dest[leaving], peers, TAG_BALANCE)
        self.peers = self._neighbours()
        # a particle that arrived in this step's migration and leaves again was never in
        # the broad phase: in neither list
        return (changes.then(StoreChanges(emigrated=go, immigrated=came)), True,
                len(go))

    # ------------------------------------------------------------------ ghosts
    def reduce_max(self, values: np.ndarray) -> np.ndarray:
        """The step's reduction (``allreduce_max`` of the float64 array ``values``, the same
        on every rank) with the ghosts' state travelling meanwhile: between rebuilds the
        fields that travel every step (``GHOST_UPDATE``) are posted to the neighbour ranks
        into buffers made with the plan, this rank's images of its own particles are copied,
        the reduction is taken and the received state written into the ghosts. So a step
        waits once for the slower rank, not twice (before the reduction and before the
        ghosts' state), and an imbalance of one phase can make up for another's. Call it
        after the drift; at a step the reduction makes a rebuild the state sent is in vain
        (its ghosts are replaced), which costs one ghost update per rebuild."""
        if self._rebuild or self.plan is None:
            return self.comm.allreduce_max(values)
        return self._update_ghosts(lambda: self.comm.allreduce_max(values))

    def refresh_ghosts(self) -> None:
        """Bring the ghosts' state (``GHOST_UPDATE``) to their owners' now, between steps
        (after the closing half-kick: full-step velocities, so a contact with a ghost read
        from Python is the 1-rank run's); nothing at a rebuild step or without a plan. The
        next step's :meth:`reduce_max` sends the state again. Collective."""
        if not self._rebuild and self.plan is not None:
            self._update_ghosts(lambda: None)

    def _update_ghosts(self, meanwhile):
        """The ghost update of the plan around ``meanwhile()`` (its result returned)."""
        t0 = time.perf_counter()
        update = self._update
        if update is None:  # the first step of a plan (or after a remap)
            update = self._update = GhostUpdate(self.comm, self.plan, self.recv_handles,
                                                self.peers, self.ghost_state, TAG_UPDATE)
        update.start(self.store)  # the periodic images of this rank's own particles meanwhile
        out = meanwhile()
        update.finish(self.store)
        self.bytes_sent += update.bytes
        self.messages_sent += update.messages
        self.comm_seconds += time.perf_counter() - t0
        return out

    def ghosts(self) -> StoreChanges:
        """Create ghosts after a rebuild (between rebuilds :meth:`reduce_max` brought their
        state up to date: nothing to do)."""
        if not self._rebuild:
            return NO_CHANGES
        self._rebuild = False
        self.n_rebuilds += 1
        t0 = time.perf_counter()
        added = self._create_ghosts()
        self.rebuild_seconds += time.perf_counter() - t0
        return StoreChanges(ghosts_added=added)

    def _create_ghosts(self) -> np.ndarray:
        store = self.store
        owned = self._owned()
        # Normally every owned centre lies in its owner's blocks here. Right after a restart a
        # centre may be up to drift D from where it was at the last rebuild (and from its
        # owner's blocks), and may still move skin/2 + D from where it is now: a reach of
        # r_max + skin + 2 D finds every contact before the next rebuild.
        plan = plan_ghosts(store, owned, self.grid, self.rank,
                           self.r_max + self.skin + 2.0 * self._drift, self.size, self._targets,
                           self.shifts)
        self.plan, self._targets = plan, len(plan)
        unknown = set(plan.slices) - set(self.peers) - {self.rank}
        if unknown:  # cannot happen while the neighbour relation covers the ghost reach
            raise ExchangeError(f"ghost plan names ranks {sorted(unknown)} that are not "
                                f"neighbours of rank {self.rank} (internal error)")
        packing = self.new_ghost
        recv = self._trade(packing, {p: packing.pack(store, *plan.part(p), plan.shifts)
                                     for p in self.peers}, TAG_CREATE)
        recv[self.rank] = packing.pack(store, *plan.part(self.rank), plan.shifts)
        for p in self.peers + [self.rank]:
            self.recv_handles[p] = (store.add(**packing.fields(*recv[p]), flags=GHOST)
                                    if len(recv[p][0]) else _none())
        return np.concatenate([self.recv_handles[p] for p in self.peers + [self.rank]])

    # ------------------------------------------------------------------ load
    def stats(self) -> dict:
        """This rank's load: owned and ghost counts, migrations, rebuilds, centres wrapped
        across a sheared box's z faces (``crossed``), neighbour ranks,
        blocks, seconds in messages and in rebuilds, bytes and messages sent point to point."""
        store = self.store
        return {
            "rank": self.rank,
            "owned": int(store.owned.size),
            "ghosts": int(store.ghosts.size),
            "migrated": int(self.n_migrated),
            "rebuilds": int(self.n_rebuilds),
            "crossed": int(self.n_crossed),
            "neighbours": list(self.peers),
            "blocks": int(np.count_nonzero(self.grid.owner == self.rank)),
            "skin": self.skin,
            "comm_seconds": self.comm_seconds,
            "rebuild_seconds": self.rebuild_seconds,
            "bytes_sent": int(self.bytes_sent),
            "messages_sent": int(self.messages_sent),
        }

    def load_summary(self, mean_imbalance: float = 1.0, rebalances: int = 0) -> str | None:
        """Collective; rank 0 gets a one-line summary of owned particles and ghosts per rank,
        with the run's time-averaged imbalance and number of rebalances (``balance.Balancer``).
        """
        s = self.stats()
        rows = self.comm.gather((s["owned"], s["ghosts"], s["migrated"]), root=0)
        if self.rank != 0:
            return None
        owned = np.array([r[0] for r in rows], float)
        ghosts = np.array([r[1] for r in rows], float)
        mean = owned.mean() if len(owned) else 0.0
        return (f"pdyn: load over {self.size} rank(s), {self.grid.n_blocks} blocks "
                f"{self.grid.dims.tolist()}: owned max/mean = {owned.max():.0f}/{mean:.1f} "
                f"(imbalance {imbalance(owned):.2f}; time-averaged {mean_imbalance:.2f}, "
                f"rebalances {rebalances}), ghosts max {ghosts.max():.0f}, "
                f"migrated {int(sum(r[2] for r in rows))}, rebuilds {self.n_rebuilds}")


def make_exchange(store, box, comm, *, dims=None, skin: float | None = None,
                  n_particles: int | None = None, curve: str = CURVES[0]):
    """The exchange for ``store`` in ``box`` over ``comm`` with Verlet ``skin`` (m; default
    ``PLAN_SKIN_RADII`` × mean radius): :class:`SerialExchange` for one rank without periodic
    axes, else :class:`BlockExchange` (default grid sized for ``n_particles``, blocks ordered
    along ``curve``)."""
    if comm.size == 1 and not box.periodic.any():
        return SerialExchange(store, skin=skin)
    return BlockExchange(store, box, comm, dims=dims, skin=skin, n_particles=n_particles,
                         curve=curve)
