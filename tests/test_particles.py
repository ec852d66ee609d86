"""The particle store (stable handles, O(1) insert/remove with a free list, growth,
permutation, ragged fields) and the field schema that drives every packer."""

import numpy as np
import pytest

from pdyn import particles
from pdyn.particles import (ALWAYS, CHECKPOINT, FIELDS, GHOST, GHOST_CREATE, GHOST_UPDATE,
                            FEATURES, GLUED, INFINITE, MIGRATE, OWNED, ROTATION, Field, Packing,
                            ParticleStore)

HISTORY = ("history_key", "history_spring")


def _store(n=6, capacity=16, features=FEATURES):
    s = ParticleStore(capacity, features=features)
    rng = np.random.default_rng(n)
    h = s.add(gid=np.arange(n) * 10, pos=rng.normal(size=(n, 3)), vel=rng.normal(size=(n, 3)),
              radius=rng.uniform(0.1, 1, n), mass=rng.uniform(1, 2, n))
    return s, h


def _rows(s, h):
    """Every field of the particles ``h`` (a ragged field: each one's records; the walls'
    fields are tested on walls, ``test_wall_fields_hold_the_walls_only``)."""
    return {name: (getattr(s, name)[h].copy() if FIELDS[name].counted_by is None
                   else [s.values(name, [k]) for k in h])
            for name in s.fields if not FIELDS[name].walls_only}


def _same(a, b, name):
    if isinstance(a, list):
        assert len(a) == len(b), name
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y, name)
    else:
        np.testing.assert_array_equal(a, b, name)


def _give_records(s, h, rng):
    """Random history records (0-20 a particle, ascending keys) for ``h``."""
    counts = rng.integers(0, 21, h.size)
    keys = np.concatenate([np.sort(rng.choice(999, c, replace=False)) + 1 for c in counts])
    s.set_records("history_count", h, counts, {"history_key": keys.astype(np.int64),
                                               "history_spring": rng.normal(size=(keys.size, 3))})
    return counts


def test_handles_are_stable_across_removals():
    s, h = _store()
    _give_records(s, h, np.random.default_rng(0))
    before = _rows(s, h)
    s.remove(h[[1, 4]])
    keep = [0, 2, 3, 5]
    after = _rows(s, h[keep])
    for name in before:
        _same(after[name], [before[name][k] for k in keep] if isinstance(before[name], list)
              else before[name][keep], name)
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
    _give_records(s, h, np.random.default_rng(1))
    before = _rows(s, h)
    cap = s.capacity
    more = s.add(gid=np.arange(50) + 1000, radius=1.0, mass=1.0)
    assert s.capacity > cap and not s.history_count[more].any()
    after = _rows(s, h)
    for name in before:
        _same(after[name], before[name], name)
    assert len(set(more.tolist()) | set(h.tolist())) == 60 and len(s) == 60


def test_permute_compacts_and_maps_old_to_new():
    s, h = _store(n=8)
    _give_records(s, h, np.random.default_rng(1))
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
    after = _rows(s, old_to_new[live])
    for name in before:  # every particle moved with all its fields; freed slots are zero
        _same(after[name], before[name], name)
        if FIELDS[name].counted_by is None:
            assert not getattr(s, name)[n:].any(), name
    assert s.add(gid=[99], radius=1.0, mass=1.0).tolist() == [n]  # free list was reset


def test_ragged_records_grow_with_the_records_not_with_slots():
    """A particle may hold any number of records; the pool holds what is given (a replace
    rewrites it for the particles named and leaves the others none); bad counts change
    nothing."""
    s, h = _store(n=4)
    rng = np.random.default_rng(2)
    s.set_records("history_count", h[:1], [500],
                  {"history_key": np.arange(1, 501), "history_spring": rng.normal(size=(500, 3))})
    assert s.history_count[h[0]] == 500 and s.values("history_key", h[:1]).tolist() == list(
        range(1, 501))
    counts = _give_records(s, h[1:], rng)
    assert s.history_key.shape[0] < 2 * (500 + counts.sum()) + 16
    s.set_records("history_count", h[2:3], [2], {"history_key": np.array([7, 9]),
                                                  "history_spring": np.ones((2, 3))},
                  replace=True)
    assert s.history_count[h].tolist() == [0, 0, 2, 0]
    assert s.values("history_key", h).tolist() == [7, 9]
    with pytest.raises(ValueError, match="history_count"):
        s.set_records("history_count", h[:1], [3], {"history_key": np.zeros(2, np.int64),
                                                     "history_spring": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="history_count"):
        s.add(gid=[5], radius=1.0, mass=1.0, history_count=[2], history_key=[1, 2])
    assert s.history_count[h].tolist() == [0, 0, 2, 0] and len(s) == 4


def test_replace_records_takes_given_pools_and_refuses_more_than_int32_offsets(monkeypatch):
    """``replace_records`` takes a given pool as it is (no copy: what a history save hands
    over) and allocates the others for the caller to fill; a pool of the wrong shape and more
    records than ``MAX_RECORDS`` (the int32 offsets) are clear errors that change nothing."""
    s, h = _store(n=4)
    springs = np.arange(9.0).reshape(3, 3)
    pools = s.replace_records("history_count", h[[1, 3]], [2, 1],
                              given={"history_spring": springs})
    assert s.history_spring is springs and pools["history_spring"] is springs
    pools["history_key"][:] = [4, 8, 6]
    assert s.history_count[h].tolist() == [0, 2, 0, 1]
    assert s.values("history_key", h[[3]]).tolist() == [6]
    np.testing.assert_array_equal(s.values("history_spring", h[[3]]), springs[2:])
    with pytest.raises(ValueError, match="history_spring: a pool of"):
        s.replace_records("history_count", h[:1], [2], given={"history_spring": springs})
    monkeypatch.setattr(particles, "MAX_RECORDS", 2)
    with pytest.raises(MemoryError, match="3 records of history_count"):
        s.set_records("history_count", h[:1], [3], {"history_key": np.arange(1, 4),
                                                     "history_spring": np.zeros((3, 3))},
                      replace=True)
    with pytest.raises(MemoryError, match="3 records of history_count"):
        s.replace_records("history_count", h[:1], [3])
    assert s.history_count[h].tolist() == [0, 2, 0, 1]
    assert s.values("history_key", h).tolist() == [4, 8, 6]


def test_handles_with_selects_by_flags():
    s, h = _store(n=4)
    s.flags[h[1]] = GHOST
    w = s.add(gid=[-1], pos=[[0, 0, 0]], normal=[[0, 0, 1]], radius=np.inf, mass=np.inf,
              flags=INFINITE)
    assert sorted(s.owned.tolist()) == sorted(h[[0, 2, 3]].tolist())
    assert s.ghosts.tolist() == [h[1]] and s.walls.tolist() == w.tolist()


def test_wall_fields_hold_the_walls_only():
    """``normal`` (``walls_only``) has a row per wall slot, not per capacity slot: walls added
    first keep slots 0..W-1 through spheres, growth and reordering; a wall added later
    lengthens it to its slot."""
    s = ParticleStore(4)
    w = s.add(gid=[-1, -2], pos=np.zeros((2, 3)), normal=[[0, 0, 1], [1, 0, 0]],
              radius=np.inf, mass=np.inf, flags=INFINITE)
    h = s.add(gid=np.arange(40), pos=np.ones((40, 3)), radius=1.0, mass=1.0)
    assert w.tolist() == [0, 1] and s.capacity >= 42 and s.normal.shape == (2, 3)
    late = s.add(gid=[-3], pos=np.zeros((1, 3)), normal=[[0, 1, 0]], radius=np.inf,
                 mass=np.inf, flags=INFINITE)
    assert s.normal.shape == (int(late[0]) + 1, 3) and s.normal[late[0]].tolist() == [0, 1, 0]
    s.remove(h[:5])
    walls = np.array([w[1], late[0], w[0]])  # walls first, in a new order
    old_to_new = s.permute(np.concatenate((walls, h[5:])))
    assert s.normal.shape == (3, 3) and old_to_new[walls].tolist() == [0, 1, 2]
    assert s.normal.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert s.values("normal", s.walls).shape == (3, 3)


# ------------------------------------------------------------------ schema and packing
def test_selections_follow_the_schema():
    s, _ = _store()
    assert s.selection(GHOST_UPDATE) == tuple(n for n, f in FIELDS.items() if f.ghost == ALWAYS)
    assert set(s.selection(GHOST_UPDATE)) < set(s.selection(GHOST_CREATE))
    assert "force" not in s.selection(GHOST_CREATE) and "flags" in s.selection(MIGRATE)
    assert "normal" not in s.selection(CHECKPOINT)
    p = Packing(s.selection(MIGRATE))
    migrate = s.selection(MIGRATE)
    fixed = [n for n in migrate if FIELDS[n].counted_by is None]
    assert p.width_f == sum(FIELDS[n].width for n in fixed if FIELDS[n].dtype == np.float64)
    assert p.width_i == sum(FIELDS[n].width for n in fixed if FIELDS[n].dtype != np.float64)
    assert (p.rwidth_f, p.rwidth_i) == (3, 1)  # a spring and a key per history record


def test_rotation_fields_only_in_a_store_with_the_feature():
    """A store built without ``ROTATION`` holds no spin, torque or history (without ``GLUED``
    no glued wall and anchor): nothing allocated, nothing in its selections, adding one
    raises; ``values`` reads zeros for output."""
    assert {n for n, f in FIELDS.items() if f.feature == GLUED} == {"glued", "anchor"}
    assert not {"glued", "anchor"} & set(ParticleStore(features=(ROTATION,)).fields)
    lean, h = _store(features=(GLUED,))
    full, _ = _store()
    rotation = {n for n, f in FIELDS.items() if f.feature == ROTATION}
    assert rotation == {"omega", "torque", "history_count", "history_key", "history_spring"}
    assert {n for n, f in FIELDS.items() if f.counted_by} == set(HISTORY)
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
    """Every field a migrant carries arrives with the same bits, its records included."""
    s, h = _store()
    _give_records(s, h, np.random.default_rng(3))
    s.force[h] = np.arange(3 * len(h)).reshape(-1, 3) * 0.1
    s.flags[h[2]] = OWNED | particles.FIXED
    p = Packing(s.selection(MIGRATE))
    message = p.pack(s, h[[2, 3]])
    assert message[2].shape[0] == s.history_count[h[[2, 3]]].sum()
    new = s.add(**p.fields(*message))
    for name in s.selection(MIGRATE):
        np.testing.assert_array_equal(s.values(name, new), s.values(name, h[[2, 3]]), name)


def test_ghost_images_are_shifted_and_updated_in_place():
    s, h = _store()
    shifts = np.array([[0.0, 0.0, 0.0], [-5.0, 0.0, 0.0]])
    create, update = Packing(s.selection(GHOST_CREATE)), Packing(s.selection(GHOST_UPDATE))
    src, sidx = h[[0, 1]], np.array([1, 0])
    ghosts = s.add(**create.fields(*create.pack(s, src, sidx, shifts)), flags=GHOST)
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])
    np.testing.assert_array_equal(s.radius[ghosts], s.radius[src])
    np.testing.assert_array_equal(s.force[ghosts], 0.0)  # force never travels to ghosts
    assert not s.history_count[ghosts].any()  # nor the history
    s.pos[src] += 1.0
    s.vel[src] *= 2.0
    update.write(s, ghosts, *update.pack(s, src, sidx, shifts))
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])
    np.testing.assert_array_equal(s.vel[ghosts], s.vel[src])
    s.pos[src] -= 3.0
    update.copy(s, src, ghosts, sidx, shifts)  # local images: no message, same bits
    np.testing.assert_array_equal(s.pos[ghosts], s.pos[src] + shifts[sidx])


def test_packing_into_given_buffers_and_one_kernel_for_any_row_count():
    """``pack(out=...)`` fills the buffers it is given (the ghost update's, made once per plan);
    messages of 0, 1 and many rows use the same compiled kernels (numba compiles one per array
    layout, and numpy calls a view of at most one row contiguous: a column view would compile
    again, mid-run, the first time a message holds two rows)."""
    s, h = _store()
    p = Packing(s.selection(MIGRATE))
    update = Packing(s.selection(GHOST_UPDATE))
    buffers = update.empty(3)
    packed = update.pack(s, h[:3], out=buffers)
    assert packed[0] is buffers[0] and packed[1] is buffers[1]
    np.testing.assert_array_equal(buffers[0][:, :3], s.pos[h[:3]])
    kernels = (particles._move_rows, particles._move_fields, particles._move_triples)
    if not hasattr(kernels[0], "signatures"):  # NUMBA_DISABLE_JIT: plain functions
        return
    p.pack(s, h[:0])
    p.pack(s, h[:1])
    update.write(s, h[:1], *update.pack(s, h[1:2]))  # (in a fresh process: compiles the write)
    before = [len(k.signatures) for k in kernels]
    message = p.pack(s, h[:5])
    s.add(**p.fields(*message))
    update.write(s, h[:2], *update.pack(s, h[4:6]))
    assert [len(k.signatures) for k in kernels] == before


@pytest.mark.parametrize("features", [FEATURES, (GLUED,)])
def test_three_column_fields_move_as_the_generic_kernel_moves_them(features):
    """The ghost update's fields (position, velocity, with rotation spin: three columns each)
    go through their own kernel; pack (shifted or not), write and copy give the bits of the
    generic one."""
    s, h = _store(n=9, features=features)
    shifts = np.array([[0.0, 0.0, 0.0], [-5.0, 0.25, 0.0], [0.0, 0.0, 3.0]])
    sidx = np.array([2, 0, 1, 1])
    fast, generic = Packing(s.selection(GHOST_UPDATE)), Packing(s.selection(GHOST_UPDATE))
    assert fast._triples
    generic._triples = False
    for shift in ((None, None), (sidx, shifts)):
        a, b = fast.pack(s, h[:4], *shift), generic.pack(s, h[:4], *shift)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[0].shape[1] == (9 if features == FEATURES else 6)
    copies = []
    for p in (fast, generic):
        t, _ = _store(n=9, features=features)
        p.write(t, h[4:8], *p.pack(s, h[:4], sidx, shifts))
        p.copy(t, h[:3], h[5:8], sidx[:3], shifts)
        copies.append(_rows(t, h))
    for name in copies[0]:
        _same(copies[0][name], copies[1][name], name)


def test_a_new_field_is_one_schema_line(monkeypatch):
    """Store and packer take their arrays and columns from FIELDS alone."""
    monkeypatch.setitem(FIELDS, "omega", Field(np.float64, (3,), ghost=ALWAYS, migrate=True,
                                               checkpoint=True))
    s, h = _store()
    s.omega[h] = np.arange(3 * len(h)).reshape(-1, 3)
    p = Packing(("gid", "omega"))
    new = s.add(**p.fields(*p.pack(s, h)))
    np.testing.assert_array_equal(s.omega[new], s.omega[h])
