"""Structure-of-arrays particle store with stable handles and O(1) insert/remove.

Design (DESIGN.md "The time step"; mesa_pd's ParticleStorage): every particle lives in a *slot*
of capacity-sized arrays and its handle **is** its slot, so a handle stays valid until that
particle is removed (or until an explicit :meth:`ParticleStore.permute`, which returns the
handle map). Removal pushes the slot on a free-list stack and swap-removes the handle from a dense
``live`` list (each handle remembers its position there), so both insert and remove are O(1);
capacity grows geometrically (×2). Kernels iterate over ``store.live`` and read the arrays by
handle. Walls are *infinite* particles in the same store (radius ``inf``, flags
``INFINITE|FIXED``, inward ``normal``), as mesa_pd's HalfSpace.

Each field declares how it travels to ghosts (``FIELDS[name].ghost``): ``"always"`` (sent on
every exchange), ``"create"`` (sent when a ghost is created), ``"never"``.
Units are whatever the scene uses consistently (SI in the built-in scenes: m, kg, s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ._jit import JIT

# particle flags (bit field, uint8)
OWNED = np.uint8(1)
GHOST = np.uint8(2)
INFINITE = np.uint8(4)  # half-space wall: radius inf, position = point on plane, normal inward
FIXED = np.uint8(8)  # not integrated


@dataclass(frozen=True)
class Field:
    """Schema of one per-particle array: dtype, trailing shape, ghost sync mode."""

    dtype: type
    shape: tuple
    ghost: str  # "always" | "create" | "never"


FIELDS: dict[str, Field] = {
    "gid": Field(np.int64, (), "create"),
    "pos": Field(np.float64, (3,), "always"),
    "vel": Field(np.float64, (3,), "always"),
    "force": Field(np.float64, (3,), "never"),
    "radius": Field(np.float64, (), "create"),
    "mass": Field(np.float64, (), "create"),
    "normal": Field(np.float64, (3,), "never"),
    "flags": Field(np.uint8, (), "never"),
}


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
    """Swap-remove ``handles`` from ``live`` and push them on the free stack; O(1) each."""
    for t in range(handles.shape[0]):
        h = handles[t]
        p = live_pos[h]
        if p < 0:
            return -1 - t, n_free, n_live  # not live: report which one
        last = live[n_live - 1]
        live[p] = last
        live_pos[last] = p
        n_live -= 1
        live_pos[h] = -1
        flags[h] = 0
        free[n_free] = h
        n_free += 1
    return 0, n_free, n_live


class ParticleStore:
    """Particles of one rank: owned spheres, ghosts and walls, addressed by stable handles.

    Arrays (``pos``, ``vel``, ``force``, ``radius``, ``mass``, ``gid``, ``flags``, ``normal``)
    have ``capacity`` rows; only rows listed in ``live`` hold particles. Growing the capacity
    reallocates the arrays, so re-read ``store.pos`` after :meth:`add` rather than keeping an
    old reference (``store.generation`` counts reallocations).
    """

    def __init__(self, capacity: int = 64):
        capacity = max(int(capacity), 1)
        self.capacity = 0
        self.generation = 0
        for name, f in FIELDS.items():
            setattr(self, name, np.zeros((0,) + f.shape, dtype=f.dtype))
        self._free = np.zeros(0, np.int64)
        self._live = np.zeros(0, np.int64)
        self._live_pos = np.zeros(0, np.int64)
        self._n_free = 0
        self._n_live = 0
        self._hwm = 0
        self._grow(capacity)

    # ------------------------------------------------------------------ capacity
    def _grow(self, needed: int) -> None:
        new = max(needed, 2 * self.capacity, 16)
        for name, f in FIELDS.items():
            old = getattr(self, name)
            arr = np.zeros((new,) + f.shape, dtype=f.dtype)
            arr[: self.capacity] = old
            setattr(self, name, arr)
        for name, fill in (("_free", 0), ("_live", 0), ("_live_pos", -1)):
            old = getattr(self, name)
            arr = np.full(new, fill, np.int64)
            arr[: self.capacity] = old
            setattr(self, name, arr)
        self.capacity = new
        self.generation += 1

    # ------------------------------------------------------------------ views
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

    def is_live(self, handles) -> np.ndarray:
        h = np.asarray(handles, np.int64)
        ok = (h >= 0) & (h < self.capacity)
        out = np.zeros(h.shape, bool)
        out[ok] = self._live_pos[h[ok]] >= 0
        return out

    # ------------------------------------------------------------------ insert / remove
    def add(self, n: int | None = None, **fields) -> np.ndarray:
        """Insert particles; return their handles (O(1) amortised each).

        ``fields`` are arrays (or scalars) for any of ``FIELDS``; ``flags`` defaults to OWNED,
        ``mass`` must be given for finite particles. ``gid`` is required: global ids come from
        the scene (unique across ranks) and are never reused within a run.
        """
        if n is None:
            n = len(np.atleast_1d(fields["gid"]))
        n = int(n)
        out = np.empty(n, np.int64)
        if n == 0:
            return out
        if self._hwm + max(0, n - self._n_free) > self.capacity:
            self._grow(self._hwm + n)
        self._n_free, self._hwm, self._n_live = _take_slots(
            n, self._free, self._n_free, self._hwm, self._live, self._n_live, self._live_pos, out
        )
        fields.setdefault("flags", OWNED)
        unknown = set(fields) - set(FIELDS)
        if unknown:
            raise KeyError(f"unknown particle field(s): {sorted(unknown)}")
        for name in FIELDS:
            arr = getattr(self, name)
            if name in fields:
                arr[out] = fields[name]
            else:
                arr[out] = 0
        return out

    def remove(self, handles) -> None:
        """Remove particles by handle, O(1) each; their slots are reused by later inserts."""
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
        slots) so callers can remap handles they keep (broad phases are rebuilt).
        """
        order = np.asarray(order, np.int64)
        n = order.size
        old_to_new = np.full(self.capacity, -1, np.int64)
        old_to_new[order] = np.arange(n)
        for name in FIELDS:
            arr = getattr(self, name)
            moved = arr[order].copy()
            arr[:n] = moved
            arr[n:] = 0
        self._live[:n] = np.arange(n)
        self._live_pos[:] = -1
        self._live_pos[:n] = np.arange(n)
        self._n_live = n
        self._hwm = n
        self._n_free = 0
        return old_to_new

    # ------------------------------------------------------------------ summaries
    def kinetic_energy(self) -> float:
        h = self.owned
        return 0.5 * float(np.sum(self.mass[h] * np.einsum("ij,ij->i", self.vel[h], self.vel[h])))

    def momentum(self) -> np.ndarray:
        h = self.owned
        return (self.mass[h, None] * self.vel[h]).sum(axis=0)
