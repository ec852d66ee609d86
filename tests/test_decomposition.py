"""Block geometry without MPI (pdyn.domain): block ids, Morton and Hilbert order, weighted
contiguous block → rank map, neighbour ranks (against an all-pairs oracle), periodic wrap; the ghost plan's reach; periodic boundaries
on one rank through the same exchange code."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import (CURVES, BlockGrid, Box, DecompositionError, _curve_keys,
                         default_block_dims, wrap_periodic)
from pdyn.zorder import hilbert3
from pdyn.parallel import BlockExchange, ExchangeError, SerialExchange
from pdyn.parallel.ghosts import plan_ghosts
from pdyn.particles import ParticleStore
from pdyn.simulation import Simulation


def _box(L=(8.0, 8.0, 8.0), boundary=("wall",) * 3):
    return Box(np.zeros(3), np.asarray(L, float), tuple(boundary))


def test_block_ids_and_clamping():
    g = BlockGrid(_box(), (4, 2, 1))
    pos = np.array([[0.1, 0.1, 0.1], [7.9, 7.9, 7.9], [2.0, 4.0, 3.0], [-5.0, 20.0, 1.0]])
    ids = g.block_of(pos)
    assert ids.tolist() == [0, 7, 1 + 4, 0 + 4]
    assert g.coords(ids).tolist() == [[0, 0, 0], [3, 1, 0], [1, 1, 0], [0, 1, 0]]


def test_bounds_extend_to_infinity_on_closed_axes():
    g = BlockGrid(_box(boundary=("wall", "periodic", "open")), (2, 2, 2))
    lo, hi = g.bounds()
    assert np.isneginf(lo[0, 0]) and np.isposinf(hi[1, 0])
    assert lo[0, 1] == 0.0 and hi[2, 1] == 8.0  # periodic axis keeps the box
    assert np.isneginf(lo[0, 2]) and np.isposinf(hi[7, 2])


def test_morton_codes_interleave_bits():
    codes = _curve_keys(np.array([2, 2, 2], np.int64), False)
    # block id (iz*2+iy)*2+ix -> code with bits (iz iy ix)
    assert codes.tolist() == list(range(8))
    g = BlockGrid(_box(), (4, 4, 1))
    order = g.curve_order("morton")
    assert sorted(order.tolist()) == list(range(16))
    assert order[:4].tolist() == [0, 1, 4, 5]  # first Z of 2x2


@pytest.mark.parametrize("bits", [1, 2, 3, 4])
def test_hilbert_keys_are_a_path_of_face_neighbours(bits):
    n = 1 << bits
    cells = {}
    for x in range(n):
        for y in range(n):
            for z in range(n):
                cells[hilbert3(x, y, z, bits)] = (x, y, z)
    assert sorted(cells) == list(range(n ** 3))  # a bijection onto 0 .. n³-1
    path = np.array([cells[k] for k in range(n ** 3)])
    assert np.abs(np.diff(path, axis=0)).sum(axis=1).tolist() == [1] * (n ** 3 - 1)


def test_hilbert_order_of_a_grid_that_is_not_a_power_of_two():
    g = BlockGrid(_box(), (3, 5, 2))
    order = g.curve_order("hilbert")
    assert sorted(order.tolist()) == list(range(30))
    steps = np.abs(np.diff(g.coords(order), axis=0)).sum(axis=1)
    assert (steps == 1).sum() >= len(steps) - 2  # face neighbours but for a jump or two
    with pytest.raises(DecompositionError, match="balance_curve = 'peano'"):
        g.curve_order("peano")


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("nranks", [1, 2, 3, 4, 7])
def test_assign_contiguous_balanced(nranks, curve):
    rng = np.random.default_rng(1)
    g = BlockGrid(_box(), (4, 4, 4))
    weights = rng.integers(0, 100, g.n_blocks)
    owner = g.assign(weights, nranks, curve=curve)
    runs = owner[g.curve_order(curve)]
    assert np.all(np.diff(runs) >= 0), "runs along the curve must be contiguous"
    assert set(runs.tolist()) == set(range(nranks))
    load = np.bincount(owner, weights=weights, minlength=nranks)
    assert load.max() <= load.mean() + weights.max()  # within one block of ideal


def test_assign_every_rank_gets_a_block_even_when_empty():
    g = BlockGrid(_box(), (2, 2, 2))
    w = np.zeros(8)
    w[0] = 1000
    owner = g.assign(w, 8)
    assert sorted(owner.tolist()) == list(range(8))
    with pytest.raises(DecompositionError, match="8 blocks for 9 ranks"):
        g.assign(w, 9)


def test_empty_blocks_weigh_little():
    """A heap in one corner of many empty blocks: the particles are split evenly, not the
    blocks (an empty block weighing 1 like a particle would give rank 0 far fewer)."""
    g = BlockGrid(_box(), (12, 12, 12))
    w = np.bincount(g.block_of(np.random.default_rng(2).uniform(0, 2, (2000, 3))),
                    minlength=g.n_blocks).astype(float)
    load = np.bincount(g.assign(w, 4), weights=w, minlength=4)
    assert load.max() / load.mean() < 1.1


def test_default_dims():
    assert default_block_dims(_box(), 1) == (1, 1, 1)
    d = default_block_dims(_box(), 2)
    assert np.prod(d) >= 32
    d = default_block_dims(_box((32.0, 8.0, 8.0)), 2)
    assert d[0] > d[1]
    # never more than check_size allows: 4 ranks, 50 particles -> at most 256 blocks
    d = default_block_dims(_box(), 4, per_rank=200, n_particles=50)
    assert 4 <= np.prod(d) <= 256
    BlockGrid(_box(), d).check_size(50, 4)


def test_neighbour_ranks_symmetric_and_periodic():
    for boundary in (("wall",) * 3, ("periodic",) * 3):
        g = BlockGrid(_box((16.0, 4.0, 4.0), boundary), (8, 1, 1))
        g.assign(np.zeros(8), 4)  # ranks own blocks 0-1, 2-3, 4-5, 6-7 along x
        nb = {r: set(g.neighbour_ranks(r, 1.0, 4).tolist()) for r in range(4)}
        for r in range(4):
            for s in nb[r]:
                assert r in nb[s]
        if boundary[0] == "wall":
            assert nb[0] == {1} and nb[3] == {2}
        else:
            assert nb[0] == {1, 3} and nb[3] == {0, 2}
        # a reach of more than one rank's width makes next-but-one ranks neighbours
        assert 2 in set(g.neighbour_ranks(0, 4.5, 4).tolist())


def _neighbours_by_all_pairs(g, rank, reach):
    """The oracle: every block of ``rank`` against every block, every periodic shift."""
    blo, bhi = g.bounds()
    shifts = g.shifts()[:, None, :]
    lo, hi = blo[None] + shifts, bhi[None] + shifts  # (shift, block, axis): every image
    out = set()
    for b in g.blocks_of_rank(rank):
        gap = np.maximum(np.maximum(lo - bhi[b], blo[b] - hi), 0.0)
        gap[~np.isfinite(gap)] = 0.0
        near = ((gap ** 2).sum(axis=2) <= reach ** 2).any(axis=0) & (g.owner != rank)
        out.update(int(o) for o in g.owner[near])
    return out


@pytest.mark.parametrize("boundary", [("wall",) * 3, ("periodic",) * 3,
                                      ("periodic", "wall", "open")])
def test_neighbour_ranks_equal_all_pairs(boundary):
    """Only blocks within reach are visited; the answer is the all-pairs one (random maps,
    reaches from a fraction of a block to more than the box)."""
    rng = np.random.default_rng(5)
    g = BlockGrid(_box((9.0, 6.0, 4.0), boundary), (5, 4, 3))
    for trial in range(6):
        g.assign(rng.integers(0, 50, g.n_blocks), 7, curve=CURVES[trial % 2])
        for reach in (0.3, 1.8, 2.5, 7.0):
            for r in range(7):
                assert set(g.neighbour_ranks(r, reach, 7).tolist()) == \
                    _neighbours_by_all_pairs(g, r, reach), (boundary, reach, r)


def test_shifts():
    g = BlockGrid(_box(boundary=("periodic", "wall", "periodic")), (1, 1, 1))
    s = g.shifts()
    assert s.shape == (9, 3) and np.all(s[0] == 0) and np.all(s[:, 1] == 0)
    assert BlockGrid(_box(), (1, 1, 1)).shifts().shape == (1, 3)


def test_wrap_periodic_rule():
    box = _box(boundary=("periodic", "wall", "periodic"))
    pos = np.array([[-0.5, -0.5, 8.0], [8.25, 3.0, -1e-17], [3.0, 9.0, 17.0]])
    n = wrap_periodic(box, pos, np.arange(3))
    assert n == 3
    assert pos[0].tolist() == [7.5, -0.5, 0.0]
    assert pos[1, 0] == 0.25 and pos[1, 2] == 0.0  # rounds onto hi -> lo
    assert pos[2].tolist() == [3.0, 9.0, 1.0]
    assert ((pos[:, [0, 2]] >= 0) & (pos[:, [0, 2]] < 8)).all()


def test_ghost_plan_reach_large_particle_and_images():
    g = BlockGrid(_box((16.0, 4.0, 4.0), ("periodic", "wall", "wall")), (8, 1, 1))
    g.assign(np.zeros(8), 4)
    st = ParticleStore()
    h = st.add(gid=np.arange(3), pos=[[5.0, 2, 2], [0.2, 2, 2], [9.0, 2, 2]],
               radius=[4.0, 0.2, 0.2], mass=1.0)
    plan = plan_ghosts(st, h, g, 1, 0.5, 4)  # rank 1 owns x in [4, 8)
    big = {(int(r), int(s)) for hh, r, s in zip(plan.handles, plan.rank, plan.shift) if hh == 0}
    # the big sphere reaches x in [0.5, 9.5]: ranks 0 and 2 unshifted; nothing wraps
    assert big == {(0, 0), (2, 0)}
    # the small one near x = 0 is seen through the periodic face by rank 3 (shift +L)
    small = {(int(r), int(s)) for hh, r, s in zip(plan.handles, plan.rank, plan.shift)
             if hh == 1}
    assert any(r == 3 and np.allclose(g.shifts()[s], [16.0, 0, 0]) for r, s in small)


def test_ghost_plan_the_same_whatever_its_guess():
    """A plan's scratch is sized by the last plan's targets (``guess``); a guess below the
    targets (one more pass) or none (twice the owned handles) gives the same plan."""
    g = BlockGrid(_box((16.0, 4.0, 4.0), ("periodic", "wall", "wall")), (8, 1, 1))
    g.assign(np.zeros(8), 4)
    st = ParticleStore()
    rng = np.random.default_rng(5)
    h = st.add(gid=np.arange(400), pos=rng.uniform((4.0, 0.5, 0.5), (8.0, 3.5, 3.5), (400, 3)),
               radius=0.2, mass=1.0)
    plans = [plan_ghosts(st, h, g, 1, 0.5, 4, guess=k) for k in (0, 1, 1000)]
    assert len(plans[0]) > 64  # the smallest scratch: a guess of 1 runs the kernel twice
    for p in plans[1:]:
        for name in ("handles", "rank", "shift"):
            np.testing.assert_array_equal(getattr(p, name), getattr(plans[0], name))


# ------------------------------------------------------------------ one rank, periodic
def _periodic_cfg(n=150, seed=2, L=6.0):
    rng = np.random.default_rng(seed)
    from pdyn.scenarios import place_spheres

    radii = rng.uniform(0.2, 0.4, n)
    pos = place_spheres(radii, np.zeros(3), np.full(3, L), seed)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=rng.normal(0, 2.0, (n, 3)),
                                  radii=radii, density=1000.0),
        box=BoxConfig(lo=(0, 0, 0), hi=(L, L, L), boundary=("periodic",) * 3),
        gravity=(0.0, 0.0, 0.0), progress=False, dt=2e-3)


def _min_image_pairs(pos, rad, L):
    d = pos[:, None, :] - pos[None, :, :]
    d -= L * np.round(d / L)
    dist = np.sqrt((d**2).sum(-1))
    i, j = np.nonzero(np.triu(dist <= rad[:, None] + rad[None, :], 1))
    return {(int(a), int(b)) for a, b in zip(i, j)}


def test_periodic_one_rank_contacts_match_minimum_image():
    cfg = _periodic_cfg().with_(reorder_every=0)
    sim = Simulation(cfg)
    assert isinstance(sim.exchange, BlockExchange)
    for _ in range(60):
        sim.step()
    st = sim.store
    h = st.owned
    order = np.argsort(st.gid[h])
    pos, rad = st.pos[h][order], st.radius[h][order]
    expected = _min_image_pairs(pos, rad, 6.0)
    got = {tuple(map(int, p)) for p in sim.contact_pairs()}
    assert expected and got == expected
    assert len(h) == 150 and len(np.unique(st.gid[h])) == 150
    assert sim.exchange.stats()["rebuilds"] > 1
    assert sim.broadphase.calls["build"] == 1


def test_periodic_momentum_conserved_one_rank():
    sim = Simulation(_periodic_cfg())
    p0 = sim.momentum()
    sim.run(100)
    assert np.allclose(sim.momentum(), p0, atol=1e-8 * np.abs(p0).sum() + 1e-9)


def test_serial_walled_uses_the_free_exchange():
    cfg = _periodic_cfg().with_(box=BoxConfig(lo=(0, 0, 0), hi=(6, 6, 6)))
    assert isinstance(Simulation(cfg).exchange, SerialExchange)


def test_short_periodic_axis_rejected_on_one_rank():
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=[[1.0, 1.0, 0.6], [3.0, 3.0, 0.6]],
                                  radii=[0.4, 0.4]),
        box=BoxConfig(lo=(0, 0, 0), hi=(6, 6, 1.2), boundary=("periodic",) * 3),
        progress=False, dt=1e-3)
    with pytest.raises(ExchangeError, match="shorter than two interaction ranges"):
        Simulation(cfg)


def test_changes_made_one_after_another_apply_as_their_net_change():
    """A migration (one particle leaves, its slot refilled by an immigrant, another arrives),
    then an outlet (drains both immigrants, one slot refilled by a new sphere), then new
    ghosts: applied to the broad phase as ``then``'s net change, its residents are the
    store's particles — the immigrants it never held are neither removed nor inserted (one
    list per change, removed first, stopped 2 and 4 ranks pouring onto an outlet)."""
    from pdyn.broadphase import make_broadphase
    from pdyn.parallel import StoreChanges

    store = ParticleStore(capacity=16)
    rng = np.random.default_rng(0)

    def add(n, **kw):
        return store.add(gid=np.arange(n) + 100 * len(store.live), pos=rng.uniform(0, 5, (n, 3)),
                         radius=0.2, mass=1.0, **kw)
    old = add(6)
    bp = make_broadphase("brute")
    bp.build(store.pos, store.radius, store.live)
    store.remove(old[:1])
    came = add(2)
    assert old[0] in came  # the emigrant's slot holds an immigrant
    migration = StoreChanges(emigrated=old[:1], immigrated=came)
    store.remove(np.concatenate((came, old[1:2])))
    new = add(1)
    outlet = StoreChanges(emigrated=np.concatenate((came, old[1:2])),
                          immigrated=new)
    ghosts = StoreChanges(ghosts_added=add(2))
    net = migration.then(outlet).then(ghosts)
    bp.remove(net.removed)
    bp.bind(store.pos, store.radius)
    bp.insert(net.added)
    assert sorted(bp.members.tolist()) == sorted(store.live.tolist())
