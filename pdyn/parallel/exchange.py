"""Migration and ghost exchange: what moves between ranks each step, and when.

The simulation calls ``distribute`` once, then ``migrate`` and ``ghosts`` every step (DESIGN.md
"The time step"); ``stats()`` and ``load_summary()`` report per-rank load; ``state()`` and
``restore()`` carry the schedule (displacement sum, skin, block map) through a checkpoint, and
a restart distributes with ``wrap=False`` (centres stay where the checkpoint has them until
the next rebuild, exactly as in the uninterrupted run). Two exchanges:

* :class:`SerialExchange` — one rank, no periodic axis: nothing to do, costs nothing.
* :class:`BlockExchange` — the block decomposition (``pdyn.domain.BlockGrid``) on any number of
  ranks, and the periodic case on one rank (periodic images are ghosts the rank sends itself).

Verlet-skin scheme (Schornbaum 2009 §5; Windolph & Uschakov §5-6 for why there is no master):
every step ``migrate`` adds the global largest displacement of the step (``allreduce_max`` of
``sim.max_displacement``) to a running sum. While the sum stays ≤ skin/2 nothing is re-planned:
``ghosts`` only sends the positions and velocities of existing ghosts (plan/execute, as
Cabana's ``Halo``). When it exceeds skin/2 the step *rebuilds*: all ghosts are removed (store
and broad phase, O(1) each), owned centres are wrapped into the periodic box, particles that
left this rank's blocks migrate to the owners of their new blocks (``migration.py``), a new
ghost plan is made (``ghosts.py``) and the new ghosts are inserted. Every message goes to a
neighbour rank (an owner of a block within ``2 r_max + skin`` of this rank's blocks, periodic
wrap included), point to point; there is no master and no all-gather of particles.

Decomposition independence (bit-identical N-rank and 1-rank trajectories):

* the rebuild steps are the same on every decomposition (the running sum is the same sequence
  of global maxima), so periodic wrapping changes the same particles at the same steps;
* ghosts carry the owner's bits, periodic images are ``x + shift`` computed by one kernel;
* the contact rule (``pdyn.dynamics.contact``): the force on each owned particle is the sum,
  in ascending partner global id, of f(i←j) computed from i's side; a contact between an owned
  particle and a ghost is evaluated on both ranks and each applies only its own half, so each
  contact force is applied exactly once to each owned particle. A periodic axis at least two
  interaction ranges long guarantees at most one image of a partner is in reach.

Handles the exchange keeps between rebuilds (owned sources of ghosts, ghost slots) are
translated by :meth:`BlockExchange.remap` when the simulation permutes the store
(``Simulation.reorder``), so memory reordering never changes a result.

Failures are collective where the exchange detects them (every rank raises the same error
before anyone blocks in a message); any other exception is left to the CLI, which aborts the
job (``comm.abort``).
"""

from __future__ import annotations

import time

import numpy as np

from ..domain import (BlockGrid, DecompositionError, default_block_dims, wrap_periodic)
from ..particles import GHOST, INFINITE, OWNED
from .ghosts import CREATE_WIDTH, STATE_WIDTH, pack_create, pack_state, plan_ghosts, \
    _copy_state, _unpack_state
from .migration import MIGRATE_WIDTH, destinations, pack_migrants, unpack_migrants

TAG_MIGRATE_F, TAG_MIGRATE_I = 100, 110
TAG_CREATE_F, TAG_CREATE_I = 200, 210
TAG_STATE = 300

#: default Verlet skin as a fraction of the mean radius
SKIN_FRACTION = 0.5


def _outside_periodic(box, pos, margin: float) -> np.ndarray:
    """Mask of centres more than ``margin`` outside the box along a periodic axis."""
    out = (pos < np.asarray(box.lo) - margin) | (pos > np.asarray(box.hi) + margin)
    return (out & box.periodic).any(axis=1)


class ExchangeError(RuntimeError):
    """A configuration the decomposition cannot honour, or a particle that moved too far
    (message names the field / particle and value; raised on every rank)."""


class SerialExchange:
    """One rank owns everything, no periodic axis: no ghosts, no migration, no messages."""

    def __init__(self, sim):
        self.sim = sim

    def distribute(self, gid, pos, vel, radius, mass, *, wrap: bool = True,
                   rank_of=None) -> np.ndarray:
        """Insert the particles this rank owns (all of them); return their handles.
        (``wrap``/``rank_of`` as :meth:`BlockExchange.distribute`; nothing to wrap here.)"""
        return self.sim.store.add(gid=gid, pos=pos, vel=vel, radius=radius, mass=mass,
                                  flags=OWNED)

    def state(self) -> dict:
        """The schedule state a checkpoint keeps (:meth:`BlockExchange.state`): none here."""
        return {"kind": "serial", "ranks": 1, "acc": 0.0}

    def restore(self, state: dict) -> None:
        """Accept any exchange's :meth:`state` (a restart on one rank without periodic axes
        has no schedule to continue: it has no rebuilds)."""

    def invalidate(self) -> None:
        pass

    def remap(self, old_to_new) -> None:
        pass

    def migrate(self) -> int:
        return 0

    def ghosts(self) -> int:
        return 0

    def stats(self) -> dict:
        return {"rank": 0, "owned": int(self.sim.store.owned.size), "ghosts": 0, "migrated": 0,
                "rebuilds": 0, "neighbours": [], "blocks": 1,
                "timers": dict(self.sim.timers)}

    def load_summary(self) -> str | None:
        return None


class BlockExchange:
    """Block decomposition over ``sim.comm`` with Verlet-skin ghost and migration plans.

    ``dims`` (default ``sim.config.blocks`` or :func:`pdyn.domain.default_block_dims`) is the
    block grid; ``skin`` (default ``SKIN_FRACTION`` × mean radius) the Verlet skin (m).
    """

    def __init__(self, sim, dims=None, skin: float | None = None):
        self.sim = sim
        self.comm = sim.comm
        self.rank, self.size = self.comm.rank, self.comm.size
        dims = dims or getattr(sim.config, "blocks", None) or default_block_dims(sim.box,
                                                                                 self.size)
        try:
            self.grid = BlockGrid(sim.box, dims)
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
        self.recv_handles: dict[int, np.ndarray] = {}
        self.recv_counts: dict[int, int] = {}
        self._self_ghosts = np.zeros(0, np.int64)
        self._acc = 0.0
        self._rebuild = True
        self._restored: dict | None = None  # a checkpoint's state(), used by distribute
        self.n_migrated = 0
        self.n_rebuilds = 0
        self.comm_seconds = 0.0  # inside point-to-point messages
        self.sync_seconds = 0.0  # in the per-step allreduce (includes waiting for slow ranks)
        self.rebuild_seconds = 0.0  # ghost removal, wrap, migration, plan, ghost creation

    # ------------------------------------------------------------------ set-up
    def distribute(self, gid, pos, vel, radius, mass, *, wrap: bool = True,
                   rank_of=None) -> np.ndarray:
        """Keep the particles of the global scene that lie in this rank's blocks.

        Every rank passes the same global arrays, computes the same block weights and the same
        block → rank map, and checks the same conditions, so a configuration error is raised
        on every rank before any message is sent.

        A restart (after :meth:`restore`) passes ``wrap=False``: centres are kept as the
        checkpoint holds them (wrapping waits for the next rebuild, as in the uninterrupted
        run), and a centre may lie up to one skin outside the box along a periodic axis (it
        drifted through the face since the last rebuild); along other closed axes it must be
        inside. If the restored state comes from the same rank count and block grid, the
        block → rank map is the checkpointed one and ``rank_of`` (the rank that owned each
        particle when the checkpoint was written) decides ownership, so every rank holds what
        it held in the uninterrupted run; otherwise the map is made afresh and an unwrapped
        centre belongs to the block it is closest to (the edge block of its periodic face)."""
        sim, grid = self.sim, self.grid
        pos = np.array(pos, float, copy=True).reshape(-1, 3)
        radius = np.broadcast_to(np.asarray(radius, float), (pos.shape[0],))
        mass = np.broadcast_to(np.asarray(mass, float), (pos.shape[0],))
        restored = self._restored or {}
        if pos.shape[0]:
            out = sim.box.outside(pos, periodic=wrap)
            if out.any():
                k = int(np.flatnonzero(out)[0])
                raise ExchangeError(f"particles.positions[{k}] = {pos[k].tolist()}: outside the "
                                    f"box {list(sim.box.lo)}..{list(sim.box.hi)}")
            self.r_max = float(radius.max())
            r_mean = float(radius.mean())
        else:
            r_mean = 0.0
        if self._skin_arg is not None:
            self.skin = float(self._skin_arg)
        elif "skin" in restored:
            self.skin = float(restored["skin"])
        else:
            self.skin = SKIN_FRACTION * r_mean
        try:
            grid.check_periodic_length(2.0 * self.r_max + self.skin)
        except DecompositionError as exc:
            raise ExchangeError(str(exc)) from None
        everyone = np.arange(pos.shape[0], dtype=np.int64)
        if wrap:
            wrap_periodic(sim.box, pos, everyone)
        elif pos.shape[0]:
            far = _outside_periodic(sim.box, pos, self.skin)
            if far.any():
                k = int(np.flatnonzero(far)[0])
                raise ExchangeError(
                    f"particles.positions[{k}] = {pos[k].tolist()}: more than one skin "
                    f"({self.skin:.6g} m) outside the periodic box "
                    f"{list(sim.box.lo)}..{list(sim.box.hi)} (damaged checkpoint?)")
        blocks = grid.block_of(pos, everyone)
        same = (restored.get("ranks") == self.size and "owner" in restored
                and list(restored.get("dims", ())) == grid.dims.tolist()
                and len(restored["owner"]) == grid.n_blocks)
        if same:
            grid.owner = np.array(restored["owner"], np.int64)
        else:
            grid.assign(np.bincount(blocks, minlength=grid.n_blocks), self.size)
        if same and rank_of is not None:
            mine = np.asarray(rank_of) == self.rank
        else:
            mine = grid.owner[blocks] == self.rank
        self.peers = [int(p) for p in grid.neighbour_ranks(self.rank, self.reach, self.size)]
        self._rebuild = True
        return sim.store.add(gid=np.asarray(gid)[mine], pos=pos[mine],
                             vel=np.asarray(vel, float)[mine], radius=radius[mine],
                             mass=mass[mine], flags=OWNED)

    def state(self) -> dict:
        """The schedule state a checkpoint keeps so a restart rebuilds at the same steps and,
        on the same rank count, with the same ownership: ``acc`` the displacement sum since the
        last rebuild, ``skin``, ``ranks``, the block grid ``dims`` (plain values) and its
        block → rank map ``owner`` (an int64 array, one entry per block)."""
        return {"kind": "block", "ranks": int(self.size), "acc": float(self._acc),
                "skin": float(self.skin), "dims": self.grid.dims.tolist(),
                "owner": self.grid.owner.copy()}

    def restore(self, state: dict) -> None:
        """Continue the schedule of a checkpointed exchange (:meth:`state` of this or any other
        exchange, any rank count). Call it before :meth:`distribute` (which then uses the
        checkpointed skin and, on the same rank count and grid, block map); collective in
        effect: call it on every rank with the same ``state``."""
        self._restored = dict(state)
        self._acc = float(state.get("acc", 0.0))

    @property
    def reach(self) -> float:
        """Largest centre distance of two particles that may touch before the next rebuild."""
        return 2.0 * self.r_max + self.skin

    # ------------------------------------------------------------------ helpers
    def _bp(self):
        bp = getattr(self.sim, "broadphase", None)
        return bp if bp is not None and bp.calls.get("build", 0) > 0 else None

    def _owned(self) -> np.ndarray:
        return self.sim.store.handles_with(OWNED, INFINITE)

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

    def invalidate(self) -> None:
        """Force a rebuild (wrap, migrate, new ghost plan) at the next step, e.g. after
        positions were changed outside the step (a restored checkpoint). Collective in effect:
        call it on every rank."""
        self._acc = np.inf

    def remap(self, old_to_new) -> None:
        """The store was permuted (``ParticleStore.permute``, e.g. ``Simulation.reorder``):
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
        self._self_ghosts = self.recv_handles.get(self.rank, np.zeros(0, np.int64))

    # ------------------------------------------------------------------ migrate
    def migrate(self) -> int:
        """Decide whether this step rebuilds; if so remove ghosts, wrap and migrate."""
        t0 = time.perf_counter()
        d = self.comm.allreduce_max(float(self.sim.max_displacement))
        t1 = time.perf_counter()
        self.sync_seconds += t1 - t0
        self._acc += d
        if self._acc <= 0.5 * self.skin:
            self._rebuild = False
            return 0
        self._rebuild = True
        self._acc = 0.0
        self._remove_ghosts()
        store = self.sim.store
        owned = self._owned()
        wrap_periodic(self.sim.box, store.pos, owned)
        n = self._migrate_owned(owned)
        self.rebuild_seconds += time.perf_counter() - t1
        return n

    def _remove_ghosts(self) -> None:
        store = self.sim.store
        ghosts = store.ghosts
        if len(ghosts):
            bp = self._bp()
            if bp is not None:
                bp.remove(ghosts)
            store.remove(ghosts)
        self.recv_handles = {}
        self.recv_counts = {}
        self._self_ghosts = np.zeros(0, np.int64)
        self.plan = None

    def _migrate_owned(self, owned) -> int:
        store, grid = self.sim.store, self.grid
        if self.size == 1:
            return 0
        dest = destinations(store, owned, grid)
        leaving = dest != self.rank
        message = None
        bad = ~np.isfinite(store.pos[owned]).all(axis=1)
        if leaving.any() or bad.any():
            bad |= leaving & ~np.isin(dest, self.peers)
            if bad.any():
                h = int(owned[np.flatnonzero(bad)[0]])
                message = (
                    f"particle {int(store.gid[h])} at {store.pos[h].tolist()} moved farther "
                    f"than a neighbour rank's reach ({self.reach:.6g} m) since the last "
                    f"exchange plan: the time step dt = {self.sim.__dict__.get('dt')!r} is too "
                    "large (lower dt)")
        self._fail(message)
        go = np.ascontiguousarray(owned[leaving])
        go_dest = dest[leaving]
        order = np.argsort(go_dest, kind="stable")
        go, go_dest = go[order], go_dest[order]
        send_f, send_i = {}, {}
        bounds = np.searchsorted(go_dest, np.arange(self.size + 1))
        for p in self.peers:
            hs = go[bounds[p]:bounds[p + 1]]
            send_f[p], send_i[p] = pack_migrants(store, hs)
        t0 = time.perf_counter()
        recv_f = self.comm.neighbour_exchange(self.peers, send_f, (MIGRATE_WIDTH,), np.float64,
                                              TAG_MIGRATE_F)
        recv_i = self.comm.neighbour_exchange(self.peers, send_i, (2,), np.int64, TAG_MIGRATE_I,
                                              counts={p: len(recv_f[p]) for p in self.peers})
        self.comm_seconds += time.perf_counter() - t0
        bp = self._bp()
        if len(go):
            if bp is not None:
                bp.remove(go)
            store.remove(go)
        new = [unpack_migrants(store, recv_f[p], recv_i[p]) for p in self.peers
               if len(recv_f[p])]
        if new and bp is not None:
            bp.bind(store.pos, store.radius)
            bp.insert(np.concatenate(new))
        self.n_migrated += len(go)
        return len(go)

    # ------------------------------------------------------------------ ghosts
    def ghosts(self) -> int:
        """Create ghosts after a rebuild, else refresh their positions and velocities."""
        if self._rebuild:
            self._rebuild = False
            self.n_rebuilds += 1
            t0 = time.perf_counter()
            n = self._create_ghosts()
            self.rebuild_seconds += time.perf_counter() - t0
            return n
        return self._update_ghosts()

    def _create_ghosts(self) -> int:
        store = self.sim.store
        owned = self._owned()
        # Normally every owned centre lies in its owner's blocks here (acc = 0). Right after a
        # restart centres may be up to acc outside them (they move with their owner until the
        # next rebuild), but also move at most skin/2 - acc more: a reach of r_max + skin - acc
        # still finds every contact before the next rebuild and stays within the neighbours.
        acc = self._acc if 0.0 < self._acc <= 0.5 * self.skin else 0.0
        plan = plan_ghosts(store, owned, self.grid, self.rank, self.r_max + self.skin - acc,
                           self.size)
        self.plan = plan
        unknown = set(plan.slices) - set(self.peers) - {self.rank}
        if unknown:  # cannot happen while the neighbour relation covers the ghost reach
            raise ExchangeError(f"ghost plan names ranks {sorted(unknown)} that are not "
                                f"neighbours of rank {self.rank} (internal error)")
        send_f, send_i = {}, {}
        for p in self.peers:
            hs, sh = plan.part(p)
            send_f[p], send_i[p] = pack_create(store, hs, sh, plan.shifts)
        t0 = time.perf_counter()
        recv_f = self.comm.neighbour_exchange(self.peers, send_f, (CREATE_WIDTH,), np.float64,
                                              TAG_CREATE_F)
        self.recv_counts = {p: len(recv_f[p]) for p in self.peers}
        recv_i = self.comm.neighbour_exchange(self.peers, send_i, (), np.int64, TAG_CREATE_I,
                                              counts=self.recv_counts)
        self.comm_seconds += time.perf_counter() - t0
        hs, sh = plan.part(self.rank)
        recv_f[self.rank], recv_i[self.rank] = pack_create(store, hs, sh, plan.shifts)
        added = []
        for p in self.peers + [self.rank]:
            f, i = recv_f[p], recv_i[p]
            handles = store.add(gid=i, pos=f[:, 0:3], vel=f[:, 3:6], radius=f[:, 6],
                                mass=f[:, 7], flags=GHOST) if len(i) else np.zeros(0, np.int64)
            self.recv_handles[p] = handles
            added.append(handles)
        self._self_ghosts = self.recv_handles[self.rank]
        n = sum(len(a) for a in added)
        bp = self._bp()
        if bp is not None and n:
            bp.bind(store.pos, store.radius)
            bp.insert(np.concatenate(added))
        return n

    def _update_ghosts(self) -> int:
        store, plan = self.sim.store, self.plan
        send = {}
        for p in self.peers:
            hs, sh = plan.part(p)
            send[p] = pack_state(store, hs, sh, plan.shifts)
        t0 = time.perf_counter()
        recv = self.comm.neighbour_exchange(self.peers, send, (STATE_WIDTH,), np.float64,
                                            TAG_STATE, counts=self.recv_counts)
        self.comm_seconds += time.perf_counter() - t0
        n = 0
        for p in self.peers:
            if len(recv[p]):
                _unpack_state(self.recv_handles[p], recv[p], store.pos, store.vel)
                n += len(recv[p])
        if len(self._self_ghosts):
            hs, sh = plan.part(self.rank)
            _copy_state(hs, sh, plan.shifts, self._self_ghosts, store.pos, store.vel)
            n += len(hs)
        return n

    # ------------------------------------------------------------------ load
    def stats(self) -> dict:
        """This rank's load: owned and ghost counts, migrations, rebuilds, neighbour ranks,
        blocks, seconds in messages and in each phase of the step."""
        store = self.sim.store
        return {
            "rank": self.rank,
            "owned": int(store.owned.size),
            "ghosts": int(store.ghosts.size),
            "migrated": int(self.n_migrated),
            "rebuilds": int(self.n_rebuilds),
            "neighbours": list(self.peers),
            "blocks": int(np.count_nonzero(self.grid.owner == self.rank)),
            "skin": self.skin,
            "comm_seconds": self.comm_seconds,
            "sync_seconds": self.sync_seconds,
            "rebuild_seconds": self.rebuild_seconds,
            "timers": dict(self.sim.timers),
        }

    def load_summary(self) -> str | None:
        """Collective; rank 0 gets a one-line summary of owned particles and ghosts per rank."""
        s = self.stats()
        rows = self.comm.gather((s["owned"], s["ghosts"], s["migrated"]), root=0)
        if self.rank != 0:
            return None
        owned = np.array([r[0] for r in rows], float)
        ghosts = np.array([r[1] for r in rows], float)
        mean = owned.mean() if len(owned) else 0.0
        imb = owned.max() / mean if mean > 0 else 1.0
        return (f"pdyn: load over {self.size} rank(s), {self.grid.n_blocks} blocks "
                f"{self.grid.dims.tolist()}: owned max/mean = {owned.max():.0f}/{mean:.1f} "
                f"(imbalance {imb:.2f}), ghosts max {ghosts.max():.0f}, "
                f"migrated {int(sum(r[2] for r in rows))}, rebuilds {self.n_rebuilds}")


def make_exchange(sim, **params):
    """The exchange for ``sim``: :class:`SerialExchange` for one rank without periodic axes,
    else :class:`BlockExchange` (``params``: ``dims``, ``skin``)."""
    if sim.comm.size == 1 and not sim.box.periodic.any() and not params:
        return SerialExchange(sim)
    return BlockExchange(sim, **params)
