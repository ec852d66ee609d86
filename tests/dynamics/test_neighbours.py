"""Verlet neighbour lists: the lists hold every contact of every step between rebuilds (against
brute force, with particles moving close to half the skin, every broad-phase structure), the
row layout, the rebuild test, and trajectories that do not depend on the skin."""

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.broadphase import REGISTRY, canonical_pairs, find_contacts
from pdyn.config import BoxConfig, ConfigError, ParticlesConfig
from pdyn.dynamics.neighbours import Hanger, NeighbourList
from pdyn.particles import FIXED, INFINITE, ParticleStore

from ..mpi.scenes import dense_polydisperse

WALLED = ("wall",) * 3
PERIODIC = ("periodic",) * 3


def brute_contacts(sim):
    """(sphere pairs, wall contacts) of the integrated particles by brute force over every
    live sphere of the store (owned and ghosts: periodic images), as sorted gid pairs."""
    s = sim.store
    rows = sim._integrated()
    live = np.setdiff1d(s.live, s.walls)
    pairs = live[find_contacts(s.pos[live], s.radius[live], method="brute")]
    mine = np.isin(pairs, rows).any(axis=1)
    spheres = np.unique(canonical_pairs(s.gid[pairs[mine]]), axis=0)
    walls = [(int(s.gid[i]), int(s.gid[w])) for i in rows for w in s.walls
             if s.radius[i] - np.dot(s.pos[i] - s.pos[w], s.normal[w]) >= 0.0]
    return spheres, sorted(walls)


def listed_wall_contacts(sim):
    s, lists = sim.store, sim.neighbours
    out = []
    for t, i in enumerate(lists.rows):
        for w in lists.partner[lists.split[t]:lists.start[t + 1]]:
            if s.radius[i] - np.dot(s.pos[i] - s.pos[w], s.normal[w]) >= 0.0:
                out.append((int(s.gid[i]), int(s.gid[w])))
    return sorted(out)


def drift(sim):
    """Largest displacement of an integrated particle since the last rebuild (m)."""
    rows = sim.neighbours.rows
    d = sim.store.pos[rows] - sim.store.build_pos[rows]
    return float(np.sqrt((d * d).sum(axis=1)).max())


@pytest.mark.parametrize("boundary", [pytest.param(WALLED, marks=pytest.mark.slow), PERIODIC],
                         ids=["walled", "periodic"])
def test_lists_hold_every_contact_until_the_next_rebuild(boundary):
    """300 steps of a dense, fast scene with a thin skin: at every step the contacts found
    through the lists equal brute force, while particles moved up to (nearly) half the skin
    between rebuilds."""
    skin = 0.05
    cfg = dense_polydisperse(boundary, n=250, speed=3.0, dt=1e-3, neighbour_skin=skin)
    sim = Simulation(cfg)
    assert sim.neighbours.skin == skin
    closest = 0.0
    for _ in range(300):
        rebuilds = sim.rebuilds
        sim.step()
        if sim.rebuilds == rebuilds:  # lists built at an earlier step
            closest = max(closest, drift(sim))
        spheres, walls = brute_contacts(sim)
        assert np.array_equal(sim.contact_pairs(), spheres), f"step {sim.step_index}"
        assert listed_wall_contacts(sim) == walls, f"step {sim.step_index}"
    assert sim.rebuilds > 20
    assert 0.9 * 0.5 * skin < closest <= 0.5 * skin
    assert sim.summary()["contacts"] > 50


@pytest.mark.parametrize("gap", [0.7, 0.98])
def test_head_on_pair_within_the_skin_is_listed(gap):
    """Two spheres ``gap`` skins apart close in head-on, each moving just under half a skin
    before the next rebuild: they touch while the lists built at the start are in use."""
    skin, v, dt = 0.2, 9.9, 1e-3  # 10 steps: each moves 0.099 < skin/2, together 0.198
    d = 1.0 + gap * skin
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=[[5.0, 5.0, 5.0], [5.0 + d, 5.0, 5.0]],
                                  velocities=[[v, 0, 0], [-v, 0, 0]], radii=[0.5, 0.5]),
        box=BoxConfig(lo=(0, 0, 0), hi=(12, 10, 10)), gravity=(0.0, 0.0, 0.0), dt=dt,
        neighbour_skin=skin, progress=False)
    sim = Simulation(cfg)
    touched = 0
    for _ in range(10):
        sim.step()
        assert np.array_equal(sim.contact_pairs(), brute_contacts(sim)[0])
        touched += len(sim.contact_pairs())
    assert sim.rebuilds == 0 and touched > 0


@pytest.mark.parametrize("structure", sorted(REGISTRY))
def test_every_structure_builds_the_lists(structure):
    """Each broad-phase structure, bound to the enlarged radii, yields lists that hold every
    contact (checked against brute force after each of 60 steps)."""
    cfg = dense_polydisperse(PERIODIC, n=150, speed=3.0, dt=1e-3, neighbour_skin=0.05,
                             broadphase=structure)
    sim = Simulation(cfg)
    for _ in range(60):
        sim.step()
        assert np.array_equal(sim.contact_pairs(), brute_contacts(sim)[0])
    assert sim.rebuilds > 3


def test_trajectory_does_not_depend_on_the_skin():
    """Walled box, one rank (no periodic wrap, whose steps follow the rebuild schedule): lists
    with any skin, or none, sum the same contacts in the same order, bit for bit."""
    cfg = SimulationConfig(scene="box", scale=0.1, steps=300, progress=False)
    runs = []
    for skin in (0.0, 0.02, 0.3):
        sim = Simulation(cfg.with_(neighbour_skin=skin))
        sim.run()
        h = sim.store.owned[np.argsort(sim.store.gid[sim.store.owned])]
        runs.append((sim.store.pos[h].copy(), sim.store.vel[h].copy(), sim.rebuilds))
    assert runs[1][2] > runs[2][2] > 0  # thinner skin, more rebuilds
    for pos, vel, _ in runs[1:]:
        np.testing.assert_array_equal(pos, runs[0][0])
        np.testing.assert_array_equal(vel, runs[0][1])


def test_rows_list_partners_by_gid_then_walls():
    s = ParticleStore()
    walls = s.add(gid=[-1, -2], pos=[[0, 0, 0], [0, 0, 0]], normal=[[0, 0, 1], [1, 0, 0]],
                  radius=np.inf, mass=np.inf, flags=INFINITE | FIXED)
    a, b, c, d = s.add(gid=[9, 4, 7, 2], pos=[[0.5, 5, 0.45], [0.5, 5.8, 0.45],
                                               [1.3, 5, 0.45], [0.5, 4.3, 0.45]],
                       radius=0.5, mass=1.0)
    lists = NeighbourList(skin=0.2)
    radius = lists.radii(s.radius)
    assert radius[a] == 0.6 and np.isinf(radius[walls]).all()
    pairs = np.array([[a, b], [c, a], [a, d], [b, d], [b, c]])
    lists.build(pairs, s, radius, np.array([a, b]), walls[::-1])
    # a: partners by gid d (2), b (4), c (7), then walls as given; wall -1 (floor) within reach
    # of both, wall -2 (x = 0 plane) within r + skin = 0.7 of both
    assert lists.partner[lists.start[0]:lists.split[0]].tolist() == [d, b, c]
    assert lists.partner[lists.split[0]:lists.start[1]].tolist() == [walls[1], walls[0]]
    # b: b–d are 1.5 apart (> r + r + skin = 1.2), b–c 1.13 and b–a 0.8: c (7), a (9)
    assert lists.partner[lists.start[1]:lists.split[1]].tolist() == [c, a]
    assert lists.entries() == 3 + 2 + 2 + 2


@pytest.mark.parametrize("structure", ["index_sort", "linked_cells", "octree"])
def test_lists_from_exact_pairs_equal_lists_from_candidates(structure):
    """A rebuild takes the structure's exact pairs (``contacts``) instead of cutting its
    candidates: the same lists, also when one ``NeighbourList`` (and its scratch) builds a
    large scene, then a smaller one, then the large one again."""
    from pdyn.broadphase import make_broadphase

    rng = np.random.default_rng(7)
    s = ParticleStore(capacity=64)
    walls = s.add(gid=[-1, -2], pos=[[0, 0, 0], [0, 0, 0]], normal=[[0, 0, 1], [1, 0, 0]],
                  radius=np.inf, mass=np.inf, flags=INFINITE | FIXED)
    n = 600
    h = s.add(gid=rng.permutation(n), pos=rng.uniform(0, 7, (n, 3)),
              radius=rng.uniform(0.2, 0.5, n), mass=1.0)
    one, mine = NeighbourList(skin=0.2), NeighbourList(skin=0.2)
    for rows in (h[::2], h[:50], h[::2]):
        radius = one.radii(s.radius)
        bp = make_broadphase(structure).build(s.pos, radius, h)
        one.build(bp.candidate_pairs(include_infinite=False), s, radius, rows, walls)
        mine.build(bp.contacts(include_infinite=False), s, mine.radii(s.radius), rows, walls,
                   exact=True)
        for a, b in zip((one.start, one.split, one.partner), (mine.start, mine.split,
                                                              mine.partner)):
            np.testing.assert_array_equal(a, b)
        assert one.entries() > rows.size  # spheres and walls listed


def test_rebuild_is_due_past_half_the_skin():
    lists = NeighbourList(skin=0.2)
    assert not lists.due(0.1 ** 2) and lists.due(0.1 ** 2 * (1 + 1e-12))
    assert lists.due(0.11 ** 2)
    off = NeighbourList(skin=0.0, rebuild_skin=0.4)  # lists every step, plan on its own skin
    assert off.every_step and not off.due(0.19 ** 2) and off.due(0.21 ** 2)


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf"), "0.2", True])
def test_bad_skin_is_a_one_line_error(value):
    with pytest.raises(ConfigError, match=r"^neighbour_skin = .*: ") as err:
        SimulationConfig(neighbour_skin=value)
    assert "\n" not in str(err.value) and repr(value) in str(err.value)


def test_skin_on_the_command_line():
    from pdyn.cli import _parser, build_config

    cfg = build_config(_parser().parse_args(["run", "--skin", "0.05", "--no-progress"]))
    assert cfg.neighbour_skin == 0.05
    with pytest.raises(ConfigError, match=r"^neighbour_skin = -1.0: must be >= 0$"):
        build_config(_parser().parse_args(["run", "--skin", "-1"]))


def test_default_skin_and_one_schedule():
    """The default skin is SKIN_DIAMETERS mean diameters and the exchange plans with it; with
    lists off the plan keeps its own skin (half a mean radius)."""
    from pdyn.dynamics.neighbours import SKIN_DIAMETERS

    cfg = dense_polydisperse(PERIODIC, n=100)
    sim = Simulation(cfg)
    mean_d = 2.0 * np.mean(cfg.particles.radii)
    assert sim.neighbours.skin == pytest.approx(SKIN_DIAMETERS * mean_d, rel=1e-12)
    assert sim.exchange.skin == sim.neighbours.skin == sim.neighbours.rebuild_skin
    off = Simulation(cfg.with_(neighbour_skin=0.0))
    assert off.neighbours.every_step
    assert off.neighbours.rebuild_skin == off.exchange.skin == pytest.approx(0.25 * mean_d)


class RebuildSpy(Hanger):
    """A component hung on the lists that notes each call with the step it belongs to
    (``step()``: the simulation's step index)."""

    def __init__(self, step):
        self.step, self.calls = step, []

    def before_rebuild(self, store, lists):
        self.calls.append(("before", self.step() + 1))

    def after_build(self, store, lists):
        self.calls.append(("after", self.step() + 1))

    def save(self, store, lists):
        self.calls.append(("save", self.step()))


def rebuild_steps(sim, steps: int) -> list:
    """Step ``sim`` ``steps`` times; the steps at which its lists were rebuilt."""
    rebuilt = []
    for _ in range(steps):
        before = sim.rebuilds
        sim.step()
        if sim.rebuilds > before:
            rebuilt.append(sim.step_index)
    return rebuilt


def test_a_hanger_added_to_a_running_simulation_is_called_at_the_rebuild_steps():
    """An object hung on the lists of a running simulation (``NeighbourList.hang``; nothing
    of the driver changed) is told before each rebuild and after each build, at exactly the
    steps that rebuild, in that order, and asked to save at the end of the run."""
    sim = Simulation(SimulationConfig(scene="box", scale=0.1, progress=False))
    sim.run(5)
    spy = RebuildSpy(lambda: sim.step_index)
    sim.neighbours.hang(spy)
    rebuilt = rebuild_steps(sim, 80)
    sim.run(0)
    assert 3 < len(rebuilt) < 80
    assert spy.calls == [(k, s) for s in rebuilt for k in ("before", "after")] \
        + [("save", sim.step_index)]
