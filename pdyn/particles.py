"""Structure-of-arrays particle store with stable handles and O(1) insert/remove, the schema of
its fields, and the one packer every message and checkpoint uses.

The store follows mesa_pd's ParticleStorage ([EiblRude2019mesapd]): every particle lives in a *slot*
of capacity-sized arrays and its handle **is** its slot, so a handle stays valid until that
particle is removed (or until an explicit :meth:`ParticleStore.permute`, which returns the
handle map). Removal pushes the slot on a free-list stack and swap-removes the handle from a dense
``live`` list (each handle remembers its position there), so both insert and remove are O(1);
capacity grows geometrically (×1.5). Kernels iterate over ``store.live`` and read the arrays by
handle. Walls are *infinite* particles in the same store (radius ``inf``, flags
``INFINITE|FIXED``, inward ``normal``), as mesa_pd's HalfSpace.

``FIELDS`` declares every per-particle array and how it travels: to ghosts always / on creation /
never (mesa_pd's ghost sync modes), with migrating particles, into checkpoints. A field may
belong to a *feature* (``ROTATION``: spin, torque, contact history; ``GLUED``: the wall a
glued sphere moves with and its centre at t = 0): a store is built with the
features of its run and holds only the fields it needs, so a frictionless run allocates,
permutes, ghosts, migrates and checkpoints none of them. A field may be *ragged*
(``counted_by``): each particle holds a variable number of records of it — the contact
history, one record per touching partner, as LAMMPS' ``fix neigh/history`` keeps per-atom
partner lists for exchange and restart ([Thompson2022]) — kept in one pool per count field
(:meth:`ParticleStore.records`), so memory grows with the records, not with a fixed number of
slots per particle. Ghost creation, ghost update, migration and checkpoints take their columns
from the store's fields (:meth:`ParticleStore.selection`): :class:`Packing` packs any selection
of fields into a float64 and an int64 matrix per particle plus, for ragged fields, a float64
and an int64 matrix of records (the message format) and back.

Ghosts carry the owner's bits; a periodic image's position is the owner's plus the shift,
computed by the one packer, so every rank sees it with the same bits.
Units are whatever the scene uses consistently (SI in the built-in scenes: m, kg, s).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._jit import JIT

# particle flags (bit field, uint8)
OWNED = np.uint8(1)
GHOST = np.uint8(2)
INFINITE = np.uint8(4)  # half-space wall: radius inf, position = point on plane, normal inward
FIXED = np.uint8(8)  # not integrated


ALWAYS, CREATE, NEVER = "always", "create", "never"

#: key of a contact-history record for a wall partner with gid g < 0 (walls sort after
#: spheres, in wall order −1, −2, ...); a sphere partner with gid g ≥ 0 has key g + 1
WALL_KEY_BASE = 1 << 62
#: key of a record for triangle f of a mesh wall (``pdyn.mesh``; mesh entries follow the other
#: walls in a list, by triangle): ``MESH_KEY_BASE + 1 + f``
MESH_KEY_BASE = WALL_KEY_BASE + (1 << 40)
#: the most triangles the mesh keys address
MAX_TRIANGLES = 1 << 40

#: the most slots a store holds (its free stack and live positions are int32)
MAX_SLOTS = 2**31 - 1
#: the most records a ragged field's pool holds (each slot's offset into it is int32)
MAX_RECORDS = 2**31 - 1

#: the feature of the rotation fields (spin, torque, contact history): runs that rotate
#: (``ContactLaw.rotating``: friction or rolling friction > 0) build their store with it
ROTATION = "rotation"
#: the feature of glued spheres (fixed spheres that move with a wall, ``pdyn.dynamics.glued``):
#: runs whose scene glues spheres to a wall build their store with it
GLUED = "glued"
FEATURES = (ROTATION, GLUED)

@dataclass(frozen=True)
class Field:
    """Schema of one per-particle array and how it travels.

    ``ghost``: sent to a ghost on every exchange (``"always"``), only when the ghost is created
    (``"create"``), or ``"never"``; ``migrate``: moves with a particle that changes rank;
    ``checkpoint``: written to checkpoints and restored on restart; ``feature``: the field
    exists only in stores built with that feature (None: in every store); ``counted_by``: a
    *ragged* field — particle h holds ``count[h]`` records of ``shape`` (``count`` the integer
    field named here), kept in the store's pool for that count (:meth:`ParticleStore.records`);
    ``walls_only``: only infinite particles (walls) hold it, in an array as long as their
    largest handle + 1 rather than the capacity (walls are added first and reordering keeps
    them first, so that is a few rows: a wall's normal, not 24 bytes a sphere slot).
    """

    dtype: type
    shape: tuple
    ghost: str
    migrate: bool
    checkpoint: bool
    feature: str | None = None
    counted_by: str | None = None
    walls_only: bool = False

    @property
    def width(self) -> int:
        """Values per particle (columns in a message)."""
        return int(np.prod(self.shape, dtype=np.int64))


#: every per-particle array; adding one (and how it travels) is one line here
FIELDS: dict[str, Field] = {
    "gid":    Field(np.int64,   (),   ghost=CREATE, migrate=True,  checkpoint=True),
    "pos":    Field(np.float64, (3,), ghost=ALWAYS, migrate=True,  checkpoint=True),
    "vel":    Field(np.float64, (3,), ghost=ALWAYS, migrate=True,  checkpoint=True),
    "force":  Field(np.float64, (3,), ghost=NEVER,  migrate=True,  checkpoint=True),
    "radius": Field(np.float64, (),   ghost=CREATE, migrate=True,  checkpoint=True),
    "mass":   Field(np.float64, (),   ghost=CREATE, migrate=True,  checkpoint=True),
    "normal": Field(np.float64, (3,), ghost=NEVER,  migrate=False, checkpoint=False,
                    walls_only=True),
    "flags":  Field(np.uint8,   (),   ghost=NEVER,  migrate=True,  checkpoint=True),
    # position at the last neighbour-list rebuild (reset for every owned particle then)
    "build_pos": Field(np.float64, (3,), ghost=NEVER, migrate=False, checkpoint=True),
    # rotation (rad/s, N·m): ghosts need the spin for the contact-point velocity
    "omega":  Field(np.float64, (3,), ghost=ALWAYS, migrate=True,  checkpoint=True,
                    feature=ROTATION),
    "torque": Field(np.float64, (3,), ghost=NEVER,  migrate=True,  checkpoint=True,
                    feature=ROTATION),
    # tangential contact history of an owned particle (pdyn.dynamics.history): one record per
    # touching partner, ascending key (partner_key), with the particle's tangential spring (m)
    # of that contact
    "history_count":  Field(np.int64,   (),   ghost=NEVER, migrate=True, checkpoint=True,
                            feature=ROTATION),
    "history_key":    Field(np.int64,   (),   ghost=NEVER, migrate=True, checkpoint=True,
                            feature=ROTATION, counted_by="history_count"),
    "history_spring": Field(np.float64, (3,), ghost=NEVER, migrate=True, checkpoint=True,
                            feature=ROTATION, counted_by="history_count"),
    # a glued sphere (FIXED, moving with a wall: pdyn.dynamics.glued): the id (< 0) of the
    # wall it moves with (0: not glued) and its centre at t = 0 (m)
    "glued":  Field(np.int64,   (),   ghost=NEVER,  migrate=True,  checkpoint=True,
                    feature=GLUED),
    "anchor": Field(np.float64, (3,), ghost=NEVER,  migrate=True,  checkpoint=True,
                    feature=GLUED),
    # the material of a sphere (or a wall): its index in the run's [[materials]] (0 with one
    # material; pdyn.dynamics.materials): a byte, known to the ghost from its creation
    "material": Field(np.uint8, (), ghost=CREATE, migrate=True, checkpoint=True),
}
#: the field a periodic image shifts (ghost position = owner position + shift), and the one a
#: Lees–Edwards image offsets (its velocity; a shift table of six columns)
SHIFTED, OFFSET = "pos", "vel"

#: the selections of a store's fields, by what they travel with (:meth:`ParticleStore.selection`)
GHOST_CREATE, GHOST_UPDATE, MIGRATE, CHECKPOINT = (
    "ghost_create", "ghost_update", "migrate", "checkpoint")
_SELECT = {GHOST_CREATE: lambda f: f.ghost in (ALWAYS, CREATE),
           GHOST_UPDATE: lambda f: f.ghost == ALWAYS,
           MIGRATE: lambda f: f.migrate,
           CHECKPOINT: lambda f: f.checkpoint}


def fields_of(features=()) -> dict[str, Field]:
    """The fields of a store built with ``features`` (names from ``FEATURES``), in schema
    order."""
    features = frozenset(features)
    unknown = features - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown particle feature(s): {sorted(unknown)}")
    return {n: f for n, f in FIELDS.items() if f.feature is None or f.feature in features}


def ragged_groups(names) -> dict[str, tuple[str, ...]]:
    """The ragged fields among ``names``, grouped by their count field (schema order)."""
    groups: dict[str, tuple[str, ...]] = {}
    for n in names:
        c = FIELDS[n].counted_by
        if c is not None:
            groups[c] = groups.get(c, ()) + (n,)
    return groups


@njit(**JIT)
def partner_key(g):
    """Key of a contact-history record for a partner with global id ``g`` (ascending in
    neighbour-list order: spheres by id, then walls)."""
    return g + 1 if g >= 0 else WALL_KEY_BASE - g


@njit(inline="always", **JIT)
def entry_key(g, f):
    """Key of a record for a list entry: partner gid ``g``, or mesh triangle ``f`` ≥ 0."""
    return MESH_KEY_BASE + 1 + f if f >= 0 else partner_key(g)


@njit(**JIT)
def _take_slots(k, free, n_free, hwm, live, n_live, live_pos, out):
    """Pop ``k`` slots (free list first, then the high-water mark); append them to ``live``."""
    for t in range(k):
        if n_free > 0:
            n_free -= 1
            h = free[n_free]
        else:
            h = hwm
            hwm += 1
        out[t] = h
        live[n_live] = h
        live_pos[h] = n_live
        n_live += 1
    return n_free, hwm, n_live


@njit(**JIT)
def _release_slots(handles, free, n_free, live, n_live, live_pos, flags):
    """Swap-remove ``handles`` from ``live`` and push them on the free stack; O(1) each. All or
    nothing: returns ``-1 - t`` (and changes nothing) when ``handles[t]`` is not live or
    repeated, else 0."""
    bad = -1
    for t in range(handles.shape[0]):  # check, marking each handle seen (p -> -2 - p)
        if live_pos[handles[t]] < 0:
            bad = t
            break
        live_pos[handles[t]] = -2 - live_pos[handles[t]]
    for u in range(bad if bad >= 0 else handles.shape[0]):  # unmark
        live_pos[handles[u]] = -2 - live_pos[handles[u]]
    if bad >= 0:
        return -1 - bad, n_free, n_live
    for t in range(handles.shape[0]):
        h = handles[t]
        p = live_pos[h]
        last = live[n_live - 1]
        live[p] = last
        live_pos[last] = p
        n_live -= 1
        live_pos[h] = -1
        flags[h] = 0
        free[n_free] = h
        n_free += 1
    return 0, n_free, n_live


def _check_records(count_name: str, total: int) -> None:
    """A pool of ``total`` records fits the int32 offsets, or a clear error."""
    if total > MAX_RECORDS:
        raise MemoryError(f"particle store: {total} records of {count_name} on this rank, more "
                          f"than {MAX_RECORDS} (give it more ranks)")


@njit(**JIT)
def _gather_records(count, first, pool, handles, out):
    """The records of ``handles`` in handle order: ``pool[first[h]:first[h] + count[h]]``
    (rows of (records, width) arrays) into ``out``; returns how many."""
    q = 0
    for t in range(handles.shape[0]):
        h = handles[t]
        a = first[h]
        for r in range(count[h]):
            for c in range(pool.shape[1]):
                out[q, c] = pool[a + r, c]
            q += 1
    return q


class ParticleStore:
    """Particles of one rank: owned spheres, ghosts and walls, addressed by stable handles.

    Arrays (``pos``, ``vel``, ``force``, ``radius``, ``mass``, ``gid``, ``flags``, ``normal``,
    ...: :attr:`fields`, those of ``FIELDS`` without a feature plus those of ``features``) have
    ``capacity`` rows; only rows listed in ``live`` hold particles. Growing the capacity
    reallocates the arrays, so re-read ``store.pos`` after :meth:`add` rather than keeping an
    old reference. A ragged field (``counted_by``) is a pool of records instead: particle h
    owns rows ``first[h] : first[h] + count[h]`` of it (:meth:`records`, :meth:`set_records`).
    """

    def __init__(self, capacity: int = 64, features=()):
        capacity = max(int(capacity), 1)
        self.capacity = 0
        self.fields = fields_of(features)
        self._selections = {kind: tuple(n for n, f in self.fields.items() if keep(f))
                            for kind, keep in _SELECT.items()}
        self._ragged = ragged_groups(self.fields)  # count field -> its ragged fields
        # per slot, into a pool (int32: a pool holds at most MAX_RECORDS records)
        self._first = {c: np.zeros(0, np.int32) for c in self._ragged}
        self._pool_used = {c: 0 for c in self._ragged}  # pool rows in use (appended so far)
        for name, f in self.fields.items():
            rows = 0 if f.counted_by is None else 16
            setattr(self, name, np.zeros((rows,) + f.shape, dtype=f.dtype))
        # slot bookkeeping: the live handles (int64, what ``live`` hands out), the free stack
        # and each slot's place in ``live`` (int32: a rank holds fewer than 2³¹ slots)
        self._free = np.zeros(0, np.int32)
        self._live = np.zeros(0, np.int64)
        self._live_pos = np.zeros(0, np.int32)
        self._n_free = 0
        self._n_live = 0
        self._hwm = 0
        self._scratch = np.zeros(0, np.uint8)  # permute's buffer (bytes), while it runs
        self._grow(capacity)

    # ------------------------------------------------------------------ capacity
    def _per_slot(self):
        """(name, array) of every per-slot array: the fixed fields and the pools' offsets."""
        for name, f in self.fields.items():
            if f.counted_by is None and not f.walls_only:
                yield name, getattr(self, name)
        for c in self._ragged:
            yield ("_first", c), self._first[c]

    def _set_per_slot(self, name, arr) -> None:
        if isinstance(name, tuple):
            self._first[name[1]] = arr
        else:
            setattr(self, name, arr)

    def _grow(self, needed: int) -> None:
        new = max(needed, self.capacity + self.capacity // 2, 16)  # amortised O(1)
        if new > MAX_SLOTS:
            raise MemoryError(f"particle store: {new} slots on this rank, more than "
                              f"{MAX_SLOTS} (give it more ranks)")
        for name, old in list(self._per_slot()):
            arr = np.zeros((new,) + old.shape[1:], dtype=old.dtype)
            arr[: self.capacity] = old
            self._set_per_slot(name, arr)
        for name, fill in (("_free", 0), ("_live", 0), ("_live_pos", -1)):
            old = getattr(self, name)
            arr = (np.full(new, fill, old.dtype) if fill
                   else np.zeros(new, old.dtype))  # untouched pages
            arr[: self.capacity] = old
            setattr(self, name, arr)
        self.capacity = new

    # ------------------------------------------------------------------ views
    def selection(self, kind: str) -> tuple[str, ...]:
        """Names of this store's fields that travel by ``kind`` (``GHOST_CREATE``,
        ``GHOST_UPDATE``, ``MIGRATE``, ``CHECKPOINT``), in schema order."""
        return self._selections[kind]

    def values(self, name: str, handles) -> np.ndarray:
        """Rows ``handles`` of field ``name`` (of a ragged field: their records, in handle
        order); zeros of the field's shape when this store does not hold it
        (``angular_velocity`` of a run without rotation, for output)."""
        if name in self.fields:
            if self.fields[name].counted_by is not None:
                return self.records(name, handles)
            return getattr(self, name)[handles]
        f = FIELDS[name]
        return np.zeros((len(handles),) + f.shape, f.dtype)

    @property
    def live(self) -> np.ndarray:
        """Handles of all live particles (owned, ghosts, walls), in no particular order."""
        return self._live[: self._n_live]

    def __len__(self) -> int:
        return self._n_live

    def handles_with(self, flag: int, without: int = 0) -> np.ndarray:
        """Live handles whose flags contain ``flag`` and none of ``without``."""
        live = self.live
        fl = self.flags[live]
        return live[((fl & flag) != 0) & ((fl & without) == 0)]

    @property
    def owned(self) -> np.ndarray:
        """Handles of owned finite (sphere) particles."""
        return self.handles_with(OWNED, INFINITE)

    @property
    def ghosts(self) -> np.ndarray:
        return self.handles_with(GHOST)

    @property
    def walls(self) -> np.ndarray:
        return self.handles_with(INFINITE)

    # ------------------------------------------------------------------ ragged fields
    def ragged(self, count_name: str) -> tuple[np.ndarray, np.ndarray, dict]:
        """(``count`` per slot, ``first`` per slot, {ragged field: its pool}) of the ragged
        fields counted by ``count_name``: particle h's records are rows ``first[h] :
        first[h] + count[h]`` of each pool (for kernels)."""
        return (getattr(self, count_name), self._first[count_name],
                {n: getattr(self, n) for n in self._ragged[count_name]})

    def records(self, name: str, handles) -> np.ndarray:
        """The records of the ragged field ``name`` of ``handles``, concatenated in handle
        order (``count`` of each: the field's ``counted_by``)."""
        count_name = self.fields[name].counted_by
        handles = np.ascontiguousarray(handles, np.int64)
        count = getattr(self, count_name)
        pool = getattr(self, name)
        width = int(np.prod(pool.shape[1:], dtype=np.int64))
        out = np.empty((int(count[handles].sum()), width), pool.dtype)
        _gather_records(count, self._first[count_name], pool.reshape(pool.shape[0], width),
                        handles, out)
        return out.reshape((-1,) + pool.shape[1:])

    def set_records(self, count_name: str, handles, counts, records: dict, *,
                    replace: bool = False) -> None:
        """Give ``handles`` ``counts`` records each of the ragged fields counted by
        ``count_name``: ``records[name]`` holds them concatenated in handle order. With
        ``replace`` every other particle is left with none and the pool is rewritten (what a
        history save does), else the records are appended to the pool."""
        handles = np.ascontiguousarray(handles, np.int64)
        counts = np.ascontiguousarray(counts, np.int64)
        total = int(counts.sum())
        names = self._ragged[count_name]
        if set(records) != set(names) or any(len(records[n]) != total for n in names):
            raise ValueError(f"{count_name}: expected {total} records of {list(names)}, got "
                             f"{ {n: len(v) for n, v in records.items()} }")
        _check_records(count_name, total + (0 if replace else self._pool_used[count_name]))
        count = getattr(self, count_name)
        if replace:
            count[:] = 0
            self._pool_used[count_name] = 0
        used = self._pool_used[count_name]
        for n in names:
            pool = getattr(self, n)
            if used + total > pool.shape[0]:
                grown = np.zeros((max(2 * pool.shape[0], used + total),) + pool.shape[1:],
                                 pool.dtype)
                grown[:used] = pool[:used]
                setattr(self, n, pool := grown)
            pool[used:used + total] = records[n]
        first = self._first[count_name]
        first[handles] = used + np.cumsum(counts) - counts
        count[handles] = counts
        self._pool_used[count_name] = used + total

    def replace_records(self, count_name: str, handles, counts, given: dict | None = None
                        ) -> dict:
        """Leave ``handles`` ``counts`` records each of the ragged fields counted by
        ``count_name`` and every other particle none, in pools of exactly those rows (the old
        pools are dropped first); returns ``{name: pool}`` for the caller to fill, in handle
        order (what a history save does, without a copy of the records beside the pools).
        ``given``: pools that already hold their field's records in that order, taken as they
        are (not copied)."""
        handles = np.ascontiguousarray(handles, np.int64)
        counts = np.ascontiguousarray(counts, np.int64)
        total = int(counts.sum())
        _check_records(count_name, total)
        given = given or {}
        for n, pool in given.items():
            f = self.fields[n]
            if pool.shape != (total,) + f.shape or pool.dtype != f.dtype:
                raise ValueError(f"{n}: a pool of {(total,) + f.shape} {f.dtype} expected, got "
                                 f"{pool.shape} {pool.dtype}")
        self.clear_records(count_name)
        for n in self._ragged[count_name]:
            f = self.fields[n]
            pool = given.get(n)
            setattr(self, n, np.empty((total,) + f.shape, f.dtype) if pool is None else pool)
        self._first[count_name][handles] = np.cumsum(counts) - counts
        getattr(self, count_name)[handles] = counts
        self._pool_used[count_name] = total
        return {n: getattr(self, n) for n in self._ragged[count_name]}

    def clear_records(self, count_name: str) -> None:
        """No particle holds records of the ragged fields counted by ``count_name``; their
        pools are released."""
        getattr(self, count_name)[:] = 0
        self._pool_used[count_name] = 0
        for n in self._ragged[count_name]:
            f = self.fields[n]
            setattr(self, n, np.zeros((0,) + f.shape, f.dtype))

    # ------------------------------------------------------------------ insert / remove
    def add(self, n: int | None = None, **fields) -> np.ndarray:
        """Insert particles; return their handles (O(1) amortised each).

        ``fields`` are arrays (or scalars) for any of :attr:`fields`; ``flags`` defaults to OWNED,
        ``mass`` must be given for finite particles. ``gid`` is required: global ids come from
        the scene (unique across ranks) and are never reused within a run. A ragged field is
        given as its records concatenated in particle order, with its count field.
        """
        unknown = set(fields) - set(self.fields)
        if unknown:
            raise KeyError(f"particle field(s) not in this store: {sorted(unknown)}")
        if n is None:
            n = len(np.atleast_1d(fields["gid"]))
        n = int(n)
        fields.setdefault("flags", OWNED)
        ragged = {name: np.asarray(fields.pop(name), FIELDS[name].dtype)
                  for name in list(fields) if FIELDS[name].counted_by is not None}
        values = {name: np.broadcast_to(np.asarray(v, FIELDS[name].dtype),  # raises before
                                        (n,) + FIELDS[name].shape)          # any change
                  for name, v in fields.items()}
        for count_name, names in self._ragged.items():
            given = {m: ragged[m] for m in names if m in ragged}
            total = int(values[count_name].sum()) if count_name in values else 0
            if (given or total) and (set(given) != set(names)
                                     or any(len(v) != total for v in given.values())):
                raise ValueError(f"{count_name}: {total} records of {list(names)} expected, "
                                 f"got { {m: len(v) for m, v in given.items()} }")
        out = np.empty(n, np.int64)
        if n == 0:
            return out
        if self._hwm + max(0, n - self._n_free) > self.capacity:
            self._grow(self._hwm + n)
        self._n_free, self._hwm, self._n_live = _take_slots(
            n, self._free, self._n_free, self._hwm, self._live, self._n_live, self._live_pos, out
        )
        for name, f in self.fields.items():
            if f.walls_only:
                self._set_walls_only(name, out, values)
            elif f.counted_by is None:
                getattr(self, name)[out] = values.get(name, 0)
        for count_name, names in self._ragged.items():
            if names[0] in ragged:
                self.set_records(count_name, out, values[count_name],
                                 {m: ragged[m] for m in names})
        return out

    def _set_walls_only(self, name: str, handles: np.ndarray, values: dict) -> None:
        """Field ``name`` (``walls_only``) of the new particles ``handles``: the rows of the
        infinite ones, the array lengthened to reach them (zeros between)."""
        infinite = (values["flags"] & INFINITE) != 0
        if not infinite.any():
            return
        h = handles[infinite]
        self._lengthen(name, int(h.max()) + 1)
        getattr(self, name)[h] = values[name][infinite] if name in values else 0

    def _lengthen(self, name: str, rows: int) -> None:
        """A ``walls_only`` field holds at least ``rows`` rows (new ones zero)."""
        old = getattr(self, name)
        if old.shape[0] < rows:
            arr = np.zeros((rows,) + old.shape[1:], old.dtype)
            arr[:old.shape[0]] = old
            setattr(self, name, arr)

    def remove(self, handles) -> None:
        """Remove particles by handle, O(1) each; their slots are reused by later inserts.
        All or nothing: a handle that is not live (or repeated) raises KeyError and changes
        nothing."""
        h = np.ascontiguousarray(handles, dtype=np.int64).reshape(-1)
        if h.size == 0:
            return
        if h.min() < 0 or h.max() >= self.capacity:
            raise KeyError(f"handle out of range: {int(h.min())}..{int(h.max())}")
        status, self._n_free, self._n_live = _release_slots(
            h, self._free, self._n_free, self._live, self._n_live, self._live_pos, self.flags
        )
        if status < 0:
            raise KeyError(f"handle {int(h[-1 - status])} is not live (removed twice?)")

    # ------------------------------------------------------------------ reorder
    def permute(self, order: np.ndarray) -> np.ndarray:
        """Compact and reorder: live particle ``order[k]`` moves to slot ``k``.

        ``order`` must be a permutation of ``live``. Returns ``old_to_new`` (−1 for dead
        slots) so callers can remap handles they keep (broad phases are rebuilt). A ragged
        field's records stay where they are in its pool (their offsets move).
        """
        order = np.asarray(order, np.int64)
        n = order.size
        old_to_new = np.full(self.capacity, -1, np.int64)
        old_to_new[order] = np.arange(n)
        used = self._hwm  # slots at and above the high-water mark are still zero
        walls = np.flatnonzero((self.flags[order] & INFINITE) != 0)  # their new slots
        for name, f in self.fields.items():
            if f.walls_only:  # a few rows (walls come first): a fresh array
                old = getattr(self, name)
                arr = np.zeros((int(walls.max()) + 1 if walls.size else 0,) + f.shape, f.dtype)
                arr[walls] = old[order[walls]]
                setattr(self, name, arr)
        self._reserve_scratch(n * max(a[0].nbytes for _, a in self._per_slot()))
        for name, arr in self._per_slot():
            # one compiled gather into one buffer for all fields: numpy's arr[order] (a new
            # array per field) moved the 97 336-sphere gas's fields in 12.5 ms a reordering
            rows = arr.reshape(arr.shape[0], -1)
            buf = self._permute_scratch(rows.dtype, rows.shape[1], n)
            _move_rows(rows, order, 0, buf, None, 0, rows.shape[1])
            rows[:n] = buf[:n]
            rows[n:used] = 0
        self._scratch = np.zeros(0, np.uint8)  # needed again only at the next reordering
        self._live[:n] = np.arange(n)
        self._live_pos[:] = -1
        self._live_pos[:n] = np.arange(n)
        self._n_live = n
        self._hwm = n
        self._n_free = 0
        return old_to_new

    def _reserve_scratch(self, nbytes: int) -> None:
        """:meth:`permute`'s buffer holds at least ``nbytes`` (a quarter more when it
        grows); released when the permutation is done (reorderings are rebuild steps at least
        ``reorder_every`` apart: its fresh pages are not worth keeping it between them)."""
        if self._scratch.shape[0] < nbytes:
            self._scratch = np.zeros(0, np.uint8)
            self._scratch = np.empty(nbytes + nbytes // 4, np.uint8)

    def _permute_scratch(self, dtype, width: int, n: int) -> np.ndarray:
        """The buffer as an (n, width) array of ``dtype`` (one buffer for every field: they
        are moved one after the other)."""
        self._reserve_scratch(n * width * dtype.itemsize)
        return self._scratch[:n * width * dtype.itemsize].view(dtype).reshape(n, width)

    # ------------------------------------------------------------------ summaries
    def kinetic_energy(self) -> float:
        h = self.owned
        return 0.5 * float(np.sum(self.mass[h] * np.einsum("ij,ij->i", self.vel[h], self.vel[h])))

    def momentum(self) -> np.ndarray:
        h = self.owned
        return (self.mass[h, None] * self.vel[h]).sum(axis=0)


# ------------------------------------------------------------------ packing by schema
@njit(**JIT)
def _move_rows(src, src_rows, src_col, dst, dst_rows, dst_col, width):
    """``dst[dst_rows[t], dst_col:dst_col + width] = src[src_rows[t], src_col:src_col +
    width]`` for every t; rows None means row t. ``src`` and ``dst`` are (rows, columns)
    arrays: an integer field of the store or a message's integer matrix (the float fields move
    together, :func:`_move_fields`), or any field gathered by :meth:`ParticleStore.permute`.
    Whole matrices and a column offset, never a view of some columns: a view's layout depends
    on its row count (numpy calls a view of at most one row contiguous), and numba compiles a
    kernel for each layout it meets — in the middle of a run, the first time a message holds
    two rows."""
    for t in range(src.shape[0] if src_rows is None else src_rows.shape[0]):
        i = t if src_rows is None else src_rows[t]
        j = t if dst_rows is None else dst_rows[t]
        for c in range(width):
            dst[j, dst_col + c] = src[i, src_col + c]


@njit(**JIT)
def _move_fields(srcs, src_rows, src_cols, dsts, dst_rows, dst_cols, widths, shifted, vshifted,
                 sidx, shifts):
    """For every t and every float field f (tuples of (rows, columns) arrays: a store field,
    or a message's float matrix once per field; ``src_cols[f]``, ``dst_cols[f]`` its first
    column there; rows None means row t): move the field's ``widths[f]`` columns of row
    ``src_rows[t]`` of ``srcs[f]`` to row ``dst_rows[t]`` of ``dsts[f]``, with
    ``shifts[sidx[t], 0:3]`` added to field ``shifted`` (−1 or ``sidx`` None: none; a periodic
    image) and ``shifts[sidx[t], 3:6]`` to field ``vshifted`` (−1: none; a Lees–Edwards
    image's velocity): one walk over the rows instead of one per field. A rank's ghost images of its own
    particles (position, velocity, spin every step) took 0.28 ms this way against 0.55 field
    by field (the 97 336-sphere gas with friction, 13 306 images, caches cold). A field of
    three columns (every field that travels each step) is moved by three plain statements,
    which take less time than a loop over its columns."""
    for t in range(srcs[0].shape[0] if src_rows is None else src_rows.shape[0]):
        i = t if src_rows is None else src_rows[t]
        j = t if dst_rows is None else dst_rows[t]
        for f in range(len(srcs)):
            src = srcs[f]
            dst = dsts[f]
            a = src_cols[f]
            b = dst_cols[f]
            width = widths[f]
            if sidx is None or (f != shifted and f != vshifted):
                if width == 3:
                    x0, x1, x2 = src[i, a], src[i, a + 1], src[i, a + 2]
                    dst[j, b], dst[j, b + 1], dst[j, b + 2] = x0, x1, x2
                else:
                    for c in range(width):
                        dst[j, b + c] = src[i, a + c]
            else:  # the position (or velocity): three columns, as the shifts
                s = sidx[t]
                o = 0 if f == shifted else 3
                x0 = src[i, a] + shifts[s, o]
                x1 = src[i, a + 1] + shifts[s, o + 1]
                x2 = src[i, a + 2] + shifts[s, o + 2]
                dst[j, b], dst[j, b + 1], dst[j, b + 2] = x0, x1, x2


NO_SHIFT_INDEX, NO_SHIFTS = np.zeros(0, np.int64), np.zeros((0, 3))  # no field shifted


@njit(**JIT)
def _move_triples(srcs, src_rows, src_cols, dsts, dst_rows, dst_cols, n_fields, shifted,
                  vshifted, sidx, shifts):
    """:func:`_move_fields` for one to three float fields of three columns each (what travels
    every step: position, velocity, spin), ``srcs`` and ``dsts`` padded to three, ``sidx`` and
    ``shifts`` arrays even when no field is ``shifted`` or ``vshifted`` (−1): each field moved by its own
    statements, no tuple indexed and no array handed to a function at run time."""
    src0, src1, src2 = srcs
    dst0, dst1, dst2 = dsts
    # unsigned: numba then omits its negative-index wraparound from every access
    a0, b0 = np.uint64(src_cols[0]), np.uint64(dst_cols[0])
    a1, b1 = np.uint64(src_cols[1 % n_fields]), np.uint64(dst_cols[1 % n_fields])
    a2, b2 = np.uint64(src_cols[2 % n_fields]), np.uint64(dst_cols[2 % n_fields])
    one, two = np.uint64(1), np.uint64(2)
    for t in range(np.uint64(src0.shape[0] if src_rows is None else src_rows.shape[0])):
        i = t if src_rows is None else np.uint64(src_rows[t])
        j = t if dst_rows is None else np.uint64(dst_rows[t])
        x0, x1, x2 = src0[i, a0], src0[i, a0 + one], src0[i, a0 + two]
        if shifted == 0:
            s = np.uint64(sidx[t])
            x0, x1, x2 = x0 + shifts[s, 0], x1 + shifts[s, 1], x2 + shifts[s, 2]
        dst0[j, b0], dst0[j, b0 + one], dst0[j, b0 + two] = x0, x1, x2
        if n_fields > 1:
            x0, x1, x2 = src1[i, a1], src1[i, a1 + one], src1[i, a1 + two]
            if shifted == 1:
                s = np.uint64(sidx[t])
                x0, x1, x2 = x0 + shifts[s, 0], x1 + shifts[s, 1], x2 + shifts[s, 2]
            elif vshifted == 1:
                s = np.uint64(sidx[t])
                x0, x1, x2 = x0 + shifts[s, 3], x1 + shifts[s, 4], x2 + shifts[s, 5]
            dst1[j, b1], dst1[j, b1 + one], dst1[j, b1 + two] = x0, x1, x2
        if n_fields > 2:
            x0, x1, x2 = src2[i, a2], src2[i, a2 + one], src2[i, a2 + two]
            if shifted == 2:
                s = np.uint64(sidx[t])
                x0, x1, x2 = x0 + shifts[s, 0], x1 + shifts[s, 1], x2 + shifts[s, 2]
            elif vshifted == 2:
                s = np.uint64(sidx[t])
                x0, x1, x2 = x0 + shifts[s, 3], x1 + shifts[s, 4], x2 + shifts[s, 5]
            dst2[j, b2], dst2[j, b2 + one], dst2[j, b2 + two] = x0, x1, x2


class Packing:
    """The columns of a selection of ``FIELDS`` as one message: a float64 ``(n, width_f)`` and
    an int64 ``(n, width_i)`` matrix of the particles, and for ragged fields a float64
    ``(r, rwidth_f)`` and an int64 ``(r, rwidth_i)`` matrix of their records (``r`` the sum of
    their counts, which travel as an integer column): one format for ghosts and migrants.

    ``pack`` gathers rows of the store (adding a periodic shift to ``SHIFTED`` when asked),
    ``fields`` views received matrices as named arrays (for ``store.add``), ``write``
    scatters them into existing rows, ``copy`` moves rows within the store (a rank's images of
    its own particles: no message). Kernels move the particles' columns: :func:`_move_fields`
    the float fields together (:func:`_move_triples` when they are one to three fields of three
    columns: the ghost update), :func:`_move_rows` each integer field.
    """

    def __init__(self, names):
        self.names = tuple(names)
        self.columns: dict[str, tuple[bool, slice]] = {}  # name -> (integer?, its columns)
        self.record_columns: dict[str, tuple[bool, slice]] = {}  # the same for ragged fields
        width = {False: 0, True: 0}
        rwidth = {False: 0, True: 0}
        for name in self.names:
            f = FIELDS[name]
            integer = bool(np.issubdtype(f.dtype, np.integer))
            w = rwidth if f.counted_by else width
            cols = self.record_columns if f.counted_by else self.columns
            cols[name] = (integer, slice(w[integer], w[integer] + f.width))
            w[integer] += f.width
        self.width_f, self.width_i = width[False], width[True]
        self.rwidth_f, self.rwidth_i = rwidth[False], rwidth[True]
        self.ragged = ragged_groups(self.record_columns)
        for count_name in self.ragged:
            if count_name not in self.columns:
                raise ValueError(f"packing {self.names}: ragged fields without their count "
                                 f"{count_name!r}")
        # the float fields move together (one walk over the rows), the integer ones one by one
        self._floats = [(n, c) for n, (i, c) in self.columns.items() if not i]
        self._integers = [(n, c) for n, (i, c) in self.columns.items() if i]
        # the float fields' first columns in a message and in the store (0), and widths
        self._float_cols = np.array([c.start for _, c in self._floats], np.int64)
        self._store_cols = np.zeros(len(self._floats), np.int64)
        self._float_widths = np.array([c.stop - c.start for _, c in self._floats], np.int64)
        names = [name for name, _ in self._floats]
        self._shift_at = names.index(SHIFTED) if SHIFTED in names else -1
        self._offset_at = names.index(OFFSET) if OFFSET in names else -1
        # one to three float fields of three columns (those that travel every step):
        # :func:`_move_triples`
        self._triples = 0 < len(self._floats) <= 3 and all(self._float_widths == 3)

    def _store_floats(self, store) -> tuple:
        return tuple([_rows(store, name) for name, _ in self._floats])

    def _message(self, matrix) -> tuple:
        """A message's float matrix once per float field (what :func:`_move_fields` walks)."""
        return (np.ascontiguousarray(matrix),) * len(self._floats)

    def _shifted(self, sidx, shifts) -> tuple:
        """(index of ``SHIFTED`` among the float fields or −1, that of ``OFFSET`` when
        ``shifts`` has six columns (a Lees–Edwards box) or −1, ``sidx``, ``shifts``)."""
        if sidx is None or self._shift_at < 0:
            return -1, -1, None, None
        offset = self._offset_at if shifts.shape[1] == 6 else -1
        return (self._shift_at, offset, np.ascontiguousarray(sidx, np.int64),
                np.ascontiguousarray(shifts, float))

    def empty(self, n: int) -> tuple:
        """New (floats, ints) matrices for ``n`` particles."""
        return np.empty((n, self.width_f)), np.empty((n, self.width_i), np.int64)

    def pack(self, store, handles, sidx=None, shifts=None, out=None) -> tuple:
        """Rows ``handles`` of the selected fields as (floats, ints, record floats, record
        ints); with ``sidx`` the image ``pos + shifts[sidx]`` (periodic ghosts). ``out``:
        (floats, ints) matrices of :meth:`empty` to fill instead of new ones (a selection
        without ragged fields)."""
        handles = np.ascontiguousarray(handles, np.int64)
        floats, ints = self.empty(handles.shape[0]) if out is None else out
        for name, cols in self._integers:
            _move_rows(_rows(store, name), handles, 0, ints, None, cols.start,
                       cols.stop - cols.start)
        if self._floats:
            self._move(self._store_floats(store), handles, self._store_cols,
                       self._message(floats), None, self._float_cols, sidx, shifts)
        records = self._pack_records(store, handles)
        return floats, ints, records[False], records[True]

    def _pack_records(self, store, handles) -> dict:
        """The ragged fields' records of ``handles`` as a float and an int matrix."""
        if not self.ragged:
            return {False: np.empty((0, 0)), True: np.empty((0, 0), np.int64)}
        r = sum(int(getattr(store, c)[handles].sum()) for c in self.ragged)
        out = {False: np.empty((r, self.rwidth_f)), True: np.empty((r, self.rwidth_i), np.int64)}
        for name, (integer, cols) in self.record_columns.items():
            out[integer][:, cols] = store.records(name, handles).reshape(r, cols.stop - cols.start)
        return out

    def fields(self, fbuf, ibuf, rfbuf=None, ribuf=None) -> dict[str, np.ndarray]:
        """The received matrices as ``{name: array of the field's shape}`` (views; a ragged
        field: its records)."""
        out = {name: (ibuf if integer else fbuf)[:, cols].reshape((-1,) + FIELDS[name].shape)
               for name, (integer, cols) in self.columns.items()}
        for name, (integer, cols) in self.record_columns.items():
            out[name] = (ribuf if integer else rfbuf)[:, cols].reshape((-1,) + FIELDS[name].shape)
        return out

    def write(self, store, handles, fbuf, ibuf, *records) -> None:
        """Scatter the received matrices into the existing rows ``handles`` (no ragged
        fields: ghost updates)."""
        handles = np.ascontiguousarray(handles, np.int64)
        ibuf = np.ascontiguousarray(ibuf)
        for name, cols in self._integers:
            _move_rows(ibuf, None, cols.start, _rows(store, name), handles, 0,
                       cols.stop - cols.start)
        if self._floats:
            self._move(self._message(fbuf), None, self._float_cols, self._store_floats(store),
                       handles, self._store_cols)

    def copy(self, store, src, dst, sidx=None, shifts=None) -> None:
        """Rows ``src`` of the selected fields into rows ``dst`` of the same store (no ragged
        fields), with ``sidx`` shifted as in :meth:`pack`."""
        src = np.ascontiguousarray(src, np.int64)
        dst = np.ascontiguousarray(dst, np.int64)
        for name, cols in self._integers:
            field = _rows(store, name)
            _move_rows(field, src, 0, field, dst, 0, cols.stop - cols.start)
        if self._floats:
            fields = self._store_floats(store)
            self._move(fields, src, self._store_cols, fields, dst, self._store_cols, sidx,
                       shifts)

    def _move(self, srcs, src_rows, src_cols, dsts, dst_rows, dst_cols, sidx=None,
              shifts=None) -> None:
        """Move the float fields (:func:`_move_fields`, or :func:`_move_triples` where it
        applies), with ``sidx`` the image ``pos + shifts[sidx]``."""
        if not self._triples:
            _move_fields(srcs, src_rows, src_cols, dsts, dst_rows, dst_cols, self._float_widths,
                         *self._shifted(sidx, shifts))
            return
        shifted, offset, sidx, shifts = self._shifted(sidx, shifts)
        pad = 3 - len(srcs)
        _move_triples(srcs + srcs[:1] * pad, src_rows, src_cols, dsts + dsts[:1] * pad,
                      dst_rows, dst_cols, len(srcs), shifted, offset,
                      NO_SHIFT_INDEX if sidx is None else sidx,
                      NO_SHIFTS if shifts is None else shifts)


def _no_handles() -> np.ndarray:
    return np.zeros(0, np.int64)


@dataclass(frozen=True)
class StoreChanges:
    """What one call did to the particle store, by handle (an exchange's migration or ghosts,
    the inserter's pour), for the driver to apply to the broad phase: remove ``removed`` first
    (their slots may already hold new particles), then insert ``added``."""

    ghosts_removed: np.ndarray = field(default_factory=_no_handles)
    emigrated: np.ndarray = field(default_factory=_no_handles)  # now owned by another rank
    immigrated: np.ndarray = field(default_factory=_no_handles)  # now owned here
    ghosts_added: np.ndarray = field(default_factory=_no_handles)

    @property
    def removed(self) -> np.ndarray:
        return np.concatenate((self.ghosts_removed, self.emigrated))

    @property
    def added(self) -> np.ndarray:
        return np.concatenate((self.immigrated, self.ghosts_added))

    def then(self, later: "StoreChanges") -> "StoreChanges":
        """The net change of this one followed by ``later`` (both on one store), as one to
        apply to the broad phase as it was before this one: a handle this one added and
        ``later`` removed (an immigrant drained at the outlet, or sent on by a rebalance) was
        never inserted, so it is in neither list; a slot ``later`` refills is added again."""
        gone = later.removed
        fresh = self.added
        return StoreChanges(
            ghosts_removed=np.concatenate((self.ghosts_removed,
                                           later.ghosts_removed[~np.isin(later.ghosts_removed,
                                                                         fresh)])),
            emigrated=np.concatenate((self.emigrated,
                                      later.emigrated[~np.isin(later.emigrated, fresh)])),
            immigrated=np.concatenate((self.immigrated[~np.isin(self.immigrated, gone)],
                                       later.immigrated)),
            ghosts_added=np.concatenate((self.ghosts_added[~np.isin(self.ghosts_added, gone)],
                                         later.ghosts_added)))


def _rows(store, name) -> np.ndarray:
    """Field ``name`` of ``store`` as a (capacity, width) array: itself when it has that shape
    (no view made: the ghost update reads three every step), else a view."""
    arr = getattr(store, name)
    return arr if arr.ndim == 2 else arr.reshape(arr.shape[0], -1)
