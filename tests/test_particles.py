"""The particle store (stable handles, O(1) insert/remove with a free list, growth,
permutation) and the field schema that drives every packer."""

import numpy as np
import pytest

from pdyn import particles
from pdyn.particles import (ALWAYS, CHECKPOINT, FIELDS, GHOST, GHOST_CREATE, GHOST_UPDATE,
                            HISTORY_SLOTS, INFINITE, MIGRATE, OWNED, ROTATION, Field, Packing,
                            ParticleStore)


def _store(n=6, capacity=16, features=(ROTATION,)):
    s = ParticleStore(capacity, features=features)
    rng = np.random.default_rng(n)
    h = s.add(gid=np.arange(n) * 10, pos=rng.normal(size=(n, 3)), vel=rng.normal(size=(n, 3)),
              radius=rng.uniform(0.1, 1, n), mass=rng.uniform(1, 2, n))
    return s, h


def _rows(s, h):
    return {name: getattr(s, name)[h].copy() for name in s.fields}


def test_handles_are_stable_across_removals():
    s, h = _store()
    before = _rows(s, h)
    s.remove(h[[1, 4]])
    keep = [0, 2, 3, 5]
    for name in s.fields:
        np.testing.assert_array_equal(getattr(s, name)[h[keep]], before[name][keep], name)
    assert sorted(s.live.tolist()) == sorted(h[keep].tolist())
    assert len(s) == 4


def test_free_slots_are_reused_last_freed_first():
    s, h = _store()
    cap = s.capacity
    s.remove(h[[1, 4]])
    new = s.add(gid=[100, 101], radius=1.0, mass=1.0)
    assert new.tolist() == [h[4], h[1]]  # a stack: last freed, first reused
    assert s.capacity == cap
    assert s.gid[new].tolist() == [100, 101]
    np.testing.assert_array_equal(s.vel[new], 0.0)  # unset fields start at zero


def test_double_remove_raises_and_changes_nothing():
    s, h = _store()
    s.remove(h[[2]])
    live, flags = s.live.copy(), s.flags.copy()
    with pytest.raises(KeyError, match=f"handle {h[2]} is not live"):
        s.remove(h[[0, 2]])
    with pytest.raises(KeyError, match=f"handle {h[3]} is not live"):
        s.remove(h[[3, 3]])  # repeated within one batch
    with pytest.raises(KeyError, match="out of range"):
        s.remove([s.capacity])
    np.testing.assert_array_equal(s.live, live)
    np.testing.assert_array_equal(s.flags, flags)
    s.remove(h[[0, 3]])  # still removable
    assert len(s) == 3


def test_bad_add_changes_nothing():
    s, h = _store()
    with pytest.raises(KeyError, match="not in this store"):
        s.add(gid=[7], colour=[1])
    with pytest.raises(ValueError):
        s.add(gid=[7, 8], pos=np.zeros((3, 3)))
    assert len(s) == len(h) and sorted(s.live.tolist()) == sorted(h.tolist())


def test_growth_keeps_data_and_handles():
    s, h = _store(n=10, capacity=10)
    before = _rows(s, h)
    cap = s.capacity
    more = s.add(gid=np.arange(50) + 1000, radius=1.0, mass=1.0)
    assert s.capacity > cap
    for name in s.fields:
        np.testing.assert_array_equal(getattr(s, name)[h], before[name], name)
    assert len(set(more.tolist()) | set(h.tolist())) == 60 and len(s) == 60


def test_permute_compacts_and_maps_old_to_new():
    s, h = _store(n=8)
    rng = np.random.default_rng(1)
    for k, c in zip(h, rng.integers(0, HISTORY_SLOTS + 1, h.size)):  # used slots only
        s.history_count[k] = c
        s.history_key[k, :c] = rng.integers(1, 99, c)
        s.history_spring[k, :c] = rng.normal(size=(c, 3))
    s.remove(h[[0, 5]])
    live = s.live.copy()
    before = _rows(s, live)
    order = live[::-1].copy()
    old_to_new = s.permute(order)
    n = len(order)
    np.testing.assert_array_equal(old_to_new[order], np.arange(n))
    assert (old_to_new[h[[0, 5]]] == -1).all()
    np.testing.assert_array_equal(np.sort(s.live), np.arange(n))
    assert set(s.fields) == set(FIELDS)
    for name in s.fields:  # every particle moved with all its fields; freed slots are zero
        np.testing.assert_array_equal(getattr(s, name)[old_to_new[live]], before[name], name)
        assert not getattr(s, name)[n:].any(), name
    assert s.add(gid=[99], radius=1.0, mass=1.0).tolist() == [n]  # free list was reset
    s.history_count[s.live] = HISTORY_SLOTS  # a second permute clears what the first left
    s.history_spring[s.live] = 1.0
    s.remove(s.live[:3])
    s.permute(s.live.copy())
    assert not s.history_spring[s.live.size:].any()


def test_handles_with_selects_by_flags():
    s, h = _store(n=4)
    s.flags[h[1]] = GHOST
    w = s.add(gid=[-1], pos=[[0, 0, 0]], normal=[[0, 0, 1]], radius=np.inf, mass=np.inf,
              flags=INFINITE)
    assert sorted(s.owned.tolist()) == sorted(h[[0, 2, 3]].tolist())
    assert s.ghosts.tolist() == [h[1]] and s.walls.tolist() == w.tolist()


# ------------------------------------------------------------------ schema and packing
def test_selections_follow_the_schema():
    s, _ = _store()
    assert s.selection(GHOST_UPDATE) == tuple(n for n, f in FIELDS.items() if f.ghost == ALWAYS)
    assert set(s.selection(GHOST_UPDATE)) < set(s.selection(GHOST_CREATE))
    assert "force" not in s.selection(GHOST_CREATE) and "flags" in s.selection(MIGRATE)
    assert "normal" not in s.selection(CHECKPOINT)
    p = Packing(s.selection(MIGRATE))
    migrate = s.selection(MIGRATE)
    assert p.width_f == sum(FIELDS[n].width for n in migrate if FIELDS[n].dtype == np.float64)
    assert p.width_i == sum(FIELDS[n].width for n in migrate if FIELDS[n].dtype != np.float64)


def test_rotation_fields_only_in_a_store_with_the_feature():
    """A store built without ``ROTATION`` holds no spin, torque or history: nothing allocated,
    nothing in its selections, adding one raises; ``values`` reads zeros for output."""
    lean, h = _store(features=())
    full, _ = _store()
    rotation = {n for n, f in FIELDS.items() if f.feature == ROTATION}
    assert rotation == {"omega", "torque", "history_count", "history_key", "history_spring"}
    assert set(lean.fields) == set(FIELDS) - rotation and not hasattr(lean, "omega")
    for kind in (GHOST_CREATE, GHOST_UPDATE, MIGRATE, CHECKPOINT):
        assert lean.selection(kind) == tuple(n for n in full.selection(kind)
                                             if n not in rotation)
    assert lean.selection(GHOST_UPDATE) == ("pos", "vel")
    with pytest.raises(KeyError, match=r"not in this store: \['omega'\]"):
        lean.add(gid=[7], omega=[[1.0, 0.0, 0.0]], radius=1.0, mass=1.0)
    np.testing.assert_array_equal(lean.values("omega", h[:2]), np.zeros((2, 3)))
    full.omega[h[1]] = 2.0
    np.testing.assert_array_equal(full.values("omega", h[:2]), [[0.0] * 3, [2.0] * 3])
    with pytest.raises(ValueError, match="unknown particle feature"):
        ParticleStore(features=("magnetism",))


def test_migrant_round_trip_is_exact():
    s, h = _store()
    s.force[h] = np.arange(3 * len(h)).reshape(-1, 3) * 0.1
    s.flags[h[2]] = OWNED | particles.FIXED
    p = Packing(s.selection(MIGRATE))
    f, i = p.pack(s, h[[2, 3]])
    new = s.add(**p.fields(f, i))
    for name in s.selection(MIGRATE):
        np.testing.assert_array_equal(getattr(s, name)[new], getattr(s, name)[h[[2, 3]]], name)


def test_ghost_images_are_shifted_and_updated_in_place():
    s, h = _store()
    shifts = np.array([[0.0, 0.0, 0.0], [-5.0, 0.0, 0.0]])
    create, update = Packing(s.selection(GHOST_CREATE)), Packing(s.selection(GHOST_UPDATE))
    src, sidx = h[[0, 1]], np.array([1, 0])
    ghosts = s.add(**create.fields(*create.pack(s, src, sidx, shifts)), flags=GHOST)
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])
    np.testing.assert_array_equal(s.radius[ghosts], s.radius[src])
    np.testing.assert_array_equal(s.force[ghosts], 0.0)  # force never travels to ghosts
    s.pos[src] += 1.0
    s.vel[src] *= 2.0
    update.write(s, ghosts, *update.pack(s, src, sidx, shifts))
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])
    np.testing.assert_array_equal(s.vel[ghosts], s.vel[src])
    s.pos[src] -= 3.0
    update.copy(s, src, ghosts, sidx, shifts)  # local images: no message, same bits
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])


def test_a_new_field_is_one_schema_line(monkeypatch):
    """Store and packer take their arrays and columns from FIELDS alone."""
    monkeypatch.setitem(FIELDS, "omega", Field(np.float64, (3,), ghost=ALWAYS, migrate=True,
                                               checkpoint=True))
    s, h = _store()
    s.omega[h] = np.arange(3 * len(h)).reshape(-1, 3)
    p = Packing(("gid", "omega"))
    new = s.add(**p.fields(*p.pack(s, h)))
    np.testing.assert_array_equal(s.omega[new], s.omega[h])
