"""Simulation driver: determinism, Z-curve memory reordering, scenes, summaries."""

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.zorder import morton3, zorder


def final_state(sim):
    h = sim.store.owned
    h = h[np.argsort(sim.store.gid[h])]
    return sim.store.pos[h].copy(), sim.store.vel[h].copy()


@pytest.mark.parametrize("scene", ["drop", "box"])
def test_reordering_memory_changes_no_bit(scene):
    # a thin skin: rebuilds (where memory is reordered when due) come often
    base = SimulationConfig(scene=scene, scale=0.3, steps=120, progress=False,
                            neighbour_skin=5e-4)
    a = Simulation(base.with_(reorder_every=0))
    a.run()
    b = Simulation(base.with_(reorder_every=25))
    b.run()
    assert b.rebuilds > 3 and b.timers.get("reorder", 0) > 0
    assert not np.array_equal(a.store.gid[a.store.live], b.store.gid[b.store.live])  # permuted
    for x, y in zip(final_state(a), final_state(b)):
        np.testing.assert_array_equal(x, y)


def test_reorder_puts_neighbours_close_in_memory():
    sim = Simulation(SimulationConfig(scene="drop", scale=0.5, steps=1, progress=False,
                                      reorder_every=1))
    sim.run()
    h = sim.store.owned
    h = np.sort(h)
    step = np.linalg.norm(np.diff(sim.store.pos[h], axis=0), axis=1)
    rng = np.random.default_rng(0)
    shuffled = sim.store.pos[rng.permutation(h)]
    assert np.median(step) < 0.5 * np.median(np.linalg.norm(np.diff(shuffled, axis=0), axis=1))


def test_morton_interleaves_bits():
    def slow(x, y, z):
        return sum(((x >> b) & 1) << (3 * b) | ((y >> b) & 1) << (3 * b + 1)
                   | ((z >> b) & 1) << (3 * b + 2) for b in range(21))

    rng = np.random.default_rng(1)
    for x, y, z in rng.integers(0, 1 << 21, (200, 3)):
        assert morton3(int(x), int(y), int(z)) == slow(int(x), int(y), int(z))


def test_zorder_is_a_permutation():
    rng = np.random.default_rng(2)
    pos = rng.uniform(-1e6, 1e6, (1000, 3))
    h = rng.permutation(1000)[:700]
    out = zorder(pos, h, 0.1)
    assert sorted(out.tolist()) == sorted(h.tolist())


def test_same_seed_same_run_different_seed_different_run():
    cfg = SimulationConfig(scene="box", scale=0.1, steps=50, progress=False)
    a, b, c = Simulation(cfg), Simulation(cfg), Simulation(cfg.with_(seed=1))
    for s in (a, b, c):
        s.run()
    np.testing.assert_array_equal(final_state(a)[0], final_state(b)[0])
    assert not np.array_equal(final_state(a)[0], final_state(c)[0])


def test_summary_reports_rate_and_phases():
    sim = Simulation(SimulationConfig(scene="box", scale=0.1, steps=30, progress=False))
    s = sim.run()
    assert s["steps"] == 30 and s["particles"] == 200 and s["steps_per_second"] > 0
    assert {"broadphase", "contacts", "integrate"} <= set(s["timers"])


def test_the_history_save_at_a_rebuild_is_in_a_phase():
    """With friction, the history save before a rebuild runs inside a timed phase, so the
    phase table accounts for it."""
    from contextlib import contextmanager

    from pdyn.assembly import build
    from pdyn.config import ContactConfig
    from pdyn.parallel import get_comm
    from pdyn.timers import PhaseTimers

    class Open(PhaseTimers):  # remembers the phases being timed now
        def __init__(self):
            super().__init__()
            self.open = []

        @contextmanager
        def __call__(self, phase):
            self.open.append(phase)
            with PhaseTimers.__call__(self, phase):
                yield
            self.open.pop()

    parts = build(SimulationConfig(scene="box", scale=0.1, steps=60, progress=False,
                                   neighbour_skin=5e-4, contact=ContactConfig(friction=0.5)),
                  get_comm())
    sim = Simulation(parts=parts._replace(timers=Open()))  # the parts of a run, one replaced
    seen = []
    save = sim.contact.history.save
    sim.contact.history.save = lambda *a: (seen.append(list(sim.timers.open)), save(*a))[1]
    for _ in range(60):
        sim.step()
    assert sim.rebuilds > 3 and len(seen) >= sim.rebuilds
    assert all(seen), seen


def test_a_run_from_built_parts_is_the_same_run_and_tells_a_hung_component_of_each_rebuild():
    """``build`` returns the parts of a run as a frozen record; a component hung on its lists
    before the simulation exists (``NeighbourList.hang``, a ``Hanger``: nothing of the driver
    changed) is told before each rebuild and after each build, at exactly the steps that
    rebuild, and the run is the one ``Simulation(config)`` makes, bit for bit."""
    from pdyn.assembly import build
    from pdyn.parallel import get_comm
    from tests.dynamics.test_neighbours import RebuildSpy, rebuild_steps

    cfg = SimulationConfig(scene="box", scale=0.1, progress=False)
    parts = build(cfg, get_comm())
    with pytest.raises(AttributeError):
        parts.dt = 1.0
    with pytest.raises(TypeError, match="parts alone"):
        Simulation(cfg, parts=parts)
    spy = RebuildSpy(lambda: sim.step_index)
    parts.neighbours.hang(spy)
    sim = Simulation(parts=parts)
    assert spy.calls == []  # hung after the first build
    rebuilt = rebuild_steps(sim, 80)
    assert 3 < len(rebuilt) < 80
    assert spy.calls == [(k, s) for s in rebuilt for k in ("before", "after")]
    ref = Simulation(cfg)
    for _ in range(80):
        ref.step()
    for x, y in zip(final_state(sim), final_state(ref)):
        np.testing.assert_array_equal(x, y)


def test_nothing_outside_the_simulation_sets_its_attributes():
    """The simulation sets its own attributes (``Simulation.__init__`` unpacks the parts
    ``build`` made): no other module of the package assigns to an attribute of a name that
    holds a simulation (``sim``), and the driver neither syncs, releases nor rewinds what
    hangs on the lists (the lists' hangers do)."""
    import ast
    from pathlib import Path

    import pdyn

    root = Path(pdyn.__file__).parent

    def assigned(t):  # the names assigned to, tuples unpacked (not items of arrays)
        return [a for e in t.elts for a in assigned(e)] if isinstance(t, (ast.Tuple, ast.List)) \
            else assigned(t.value) if isinstance(t, ast.Starred) else [t]

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else
                       node.args[:1] if isinstance(node, ast.Call) and getattr(
                           node.func, "id", None) == "setattr" else [])
            for t in (a for t in targets for a in assigned(t)):
                if isinstance(t, ast.Attribute) and getattr(t.value, "id", None) == "sim" \
                        or getattr(t, "id", None) == "sim" and isinstance(node, ast.Call):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
    driver = (root / "simulation.py").read_text()
    assert not [w for w in ("sync_history", "release_links", "rewind", ".builds")
                if w in driver]
