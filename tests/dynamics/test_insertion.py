"""Insertion during the run (``pdyn.dynamics.insertion``) and the ``heap`` scene: the count
follows the rate, nothing is inserted onto a sphere, ids continue, the outlet removes, and a
restart continues the random stream bit for bit."""

import numpy as np
import pytest

from pdyn.config import ConfigError, InsertionConfig, OutputConfig, SimulationConfig
from pdyn.dynamics.insertion import Inserter
from pdyn.parallel import SerialComm
from pdyn.particles import ParticleStore
from pdyn.restart import from_checkpoint
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

POUR = dict(region_lo=(1.0, 1.0, 1.0), region_hi=(2.0, 2.0, 2.6), rate=400.0, radius_min=0.08,
            radius_max=0.12, velocity=(0.0, 0.0, -3.0), total=120, every=20, seed=4)


def heap(folder=None, **changes):
    ins = InsertionConfig(**dict(POUR, **changes))
    out = OutputConfig(folder=str(folder), checkpoint_every=300) if folder else OutputConfig()
    return SimulationConfig(scene="heap", scale=0.05, insertion=ins, progress=False, output=out)


def state(sim):
    h = sim.store.owned
    o = np.argsort(sim.store.gid[h], kind="stable")
    return [a[h][o].copy() for a in (sim.store.gid, sim.store.pos, sim.store.vel,
                                      sim.store.force)]


def test_count_follows_the_rate_and_ids_continue():
    sim = Simulation(heap())
    assert len(sim.store.owned) == 0
    counts = []
    for _ in range(12):
        sim.run(100)
        counts.append(len(sim.store.owned))
    want = [min(int(400.0 * 100 * k * sim.dt + 1e-9), 120) for k in range(1, 13)]
    # a candidate that lands on a sphere is dropped; what is owed carries over
    assert counts[0] == want[0] and all(c <= w for c, w in zip(counts, want))
    assert counts == sorted(counts) and counts[-1] == 120
    gid = np.sort(sim.store.gid[sim.store.owned])
    assert np.array_equal(gid, np.arange(120))
    r = sim.store.radius[sim.store.owned]
    assert r.min() >= 0.08 and r.max() <= 0.12 and r.std() > 0.005  # drawn, not fixed
    assert sim.inserter.state()["next_gid"] == 120


def test_a_box_of_ones_own_starts_empty_and_is_poured_into():
    """``[particles]`` with ``positions = []`` and ``radii = []`` (as a TOML config gives them)
    starts a box of the config's own empty; the insertion pours into it as into the empty
    ``heap`` scene, the same spheres on the same steps."""
    from pdyn.config import config_from_dict

    sim = Simulation(config_from_dict({
        "box": {"lo": [0.0, 0.0, 0.0], "hi": [8.0, 8.0, 3.0]},
        "particles": {"positions": [], "radii": [], "density": 2500.0},
        "contact": {"youngs_modulus": 1e7, "restitution": 0.3}, "gravity": [0.0, 0.0, -9.81],
        "insertion": {k: list(v) if isinstance(v, tuple) else v for k, v in POUR.items()},
        "progress": False}))
    assert len(sim.store.owned) == 0
    scene = Simulation(heap())
    assert sim.dt == scene.dt
    for _ in range(3):
        sim.run(100)
        scene.run(100)
        assert len(sim.store.owned) > 0
        for a, b in zip(state(sim), state(scene)):
            assert np.array_equal(a, b)


def test_no_sphere_is_inserted_onto_another():
    store = ParticleStore()
    rng = np.random.default_rng(0)
    pos = rng.uniform(0.0, 1.0, (300, 3))
    h = store.add(gid=np.arange(300), pos=pos, radius=0.05, mass=1.0)
    ins = Inserter(dict(InsertionConfig(region_lo=(0, 0, 0), region_hi=(1, 1, 1), rate=1e4,
                                        radius_min=0.05, radius_max=0.1, total=60).__dict__),
                   next_gid=300)
    new = ins.insert(store, h, 1.0, SerialComm(), lambda p: np.zeros(len(p), np.int64))
    assert 0 < len(new) <= 60 and ins.inserted == len(new)
    live = store.owned
    p, r = store.pos[live], store.radius[live]
    q, s = store.pos[new], store.radius[new]
    d = np.linalg.norm(q[:, None] - p[None], axis=2)  # each new sphere against every sphere
    d[np.arange(len(new)), np.searchsorted(live, new)] = np.inf
    assert (d > s[:, None] + r[None]).all()
    assert np.array_equal(np.sort(store.gid[new]), 300 + np.arange(len(new)))
    assert ((q - s[:, None] >= 0) & (q + s[:, None] <= 1)).all()


def test_outlet_removes_what_reaches_it():
    sim = Simulation(heap(outlet_lo=(0.0, 0.0, 0.0), outlet_hi=(3.0, 3.0, 0.5)))
    sim.run(600)
    z = sim.store.pos[sim.store.owned, 2]
    assert sim.inserter.removed > 0
    assert len(sim.store.owned) == sim.inserter.inserted - sim.inserter.removed
    assert (z > 0.5).sum() >= len(z) - 20  # only what fell in since the last rebuild


def test_outlet_opens_at_its_start_time():
    """Closed before ``outlet_start`` (the spheres pile up in it), open from then on."""
    sim = Simulation(heap(outlet_lo=(0.0, 0.0, 0.0), outlet_hi=(3.0, 3.0, 0.5),
                          outlet_start=0.35))
    closed = int(0.35 / sim.dt) - 1  # ends before the outlet opens
    sim.run(closed)
    z = sim.store.pos[sim.store.owned, 2]
    assert sim.inserter.removed == 0 and (z < 0.5).sum() > 10
    sim.run(int(0.1 / sim.dt))
    assert sim.inserter.removed >= (z < 0.5).sum()


def test_rate_zero_pours_nothing_and_the_outlet_still_drains():
    ins = InsertionConfig(**dict(POUR, rate=0.0, outlet_lo=(0.0, 0.0, 2.0),
                                 outlet_hi=(3.0, 3.0, 3.0)))
    sim = Simulation(SimulationConfig(scene="drop", scale=0.05, insertion=ins, progress=False))
    z = sim.store.pos[sim.store.owned, 2]
    while sim.rebuilds == 0:  # the outlet drains at the first rebuild
        sim.run(1)
    inside = ((z > 2.05) & (z < 2.95)).sum()  # still inside then (they fell < 5 cm)
    assert sim.inserter.inserted == 0 and sim.inserter.removed >= inside > 0
    assert len(sim.store.owned) == len(z) - sim.inserter.removed
    assert sim.inserter.most(sim.box.lo, sim.box.hi) == (0, 0)  # nothing to pour: no memory


def test_restart_continues_the_stream_bit_for_bit(tmp_path):
    ref = Simulation(heap(tmp_path / "a"))
    ref.run(600)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000300.h5",
                           output=OutputConfig(folder=str(tmp_path / "b")))
    assert cont.inserter.inserted < ref.inserter.inserted
    cont.run(300)
    for a, b in zip(state(ref), state(cont)):
        assert np.array_equal(a, b)
    assert ref.inserter.state() == cont.inserter.state()


def test_heap_is_a_pure_function_of_scale_and_seed():
    a, b = make_scene("heap", scale=0.3, seed=2), make_scene("heap", scale=0.3, seed=2)
    assert a.insertion == b.insertion and a.insertion["total"] == 600 and len(a) == 0
    assert make_scene("heap", seed=3).insertion["seed"] == 3


@pytest.mark.parametrize("field,value,needle", [
    ("radius_max", 0.05, "insertion.radius_max = 0.05: must be >= insertion.radius_min"),
    ("region_hi", (1.1, 2.0, 2.6), "insertion.region_hi = [1.1, 2.0, 2.6]: the region must"),
    ("outlet_lo", (0.0, 0.0, 0.0), "insertion.outlet_lo = (0.0, 0.0, 0.0): give both"),
    ("rate", -1.0, "insertion.rate = -1.0: must be >= 0"),
    ("outlet_start", -0.5, "insertion.outlet_start = -0.5: must be >= 0"),
])
def test_bad_insertion_is_one_line(field, value, needle):
    with pytest.raises(ConfigError) as err:
        InsertionConfig(**dict(POUR, **{field: value}))
    assert str(err.value).startswith(needle) and "\n" not in str(err.value)


def test_region_outside_the_box_is_refused():
    with pytest.raises(ConfigError, match=r"insertion.region_hi = \[2.0, 2.0, 9.0\]: outside"):
        Simulation(heap(region_hi=(2.0, 2.0, 9.0)))
