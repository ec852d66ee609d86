"""Insertion with size distributions, regions, fills and several feeds
(``pdyn.dynamics.insertion``): the poured sample follows the asked distribution by number and
by mass (Kolmogorov–Smirnov at the 1 % level, fixed seed), a fill reaches its solid fraction,
spheres lie inside cylinders and cones, several ``[[insertion]]`` tables pour one after the
other, and without a ``sizes`` table the draw is the one pdyn always made."""

import math

import numpy as np
import pytest
from scipy import stats

from pdyn.config import ConfigError, InsertionConfig, OutputConfig, SimulationConfig, load_config
from pdyn.dynamics.insertion import TRIES, Inserter
from pdyn.parallel import SerialComm
from pdyn.particles import ParticleStore
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from ..test_sizes import KS_1PC, ks

LOG_NORMAL = {"distribution": "log_normal", "median": 0.02, "sigma": 0.4}


def pour(store, params, steps, every_time=1.0):
    """``steps`` insertion steps of the inserter of ``params`` into ``store`` (one rank)."""
    ins = Inserter(dict(vars(InsertionConfig(**params))), next_gid=0)
    for k in range(steps):
        ins.insert(store, store.owned, (k + 1) * every_time, SerialComm(),
                   lambda p: np.zeros(len(p), np.int64))
    return ins


def no_overlaps(pos, r):
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2)
    np.fill_diagonal(d, np.inf)
    return (d > r[:, None] + r[None]).all()


def truncated_log_normal(lo, hi):
    dist = stats.lognorm(0.4, scale=0.02)
    a, b = dist.cdf(lo), dist.cdf(hi)
    return lambda r: (dist.cdf(r) - a) / (b - a)


def poured(params, legacy=False, steps=8):
    """Radii poured by ``steps`` insertion steps, the spheres leaving the region after each
    (as they fall out of it in a run), and the inserter."""
    store = ParticleStore()
    ins = Inserter(dict(vars(InsertionConfig(**params))), 0)
    if legacy:  # a radius per candidate: the draw without a sizes table
        ins.feeds[0].legacy, ins.feeds[0].group = True, 1
    for k in range(steps):
        ins.insert(store, store.owned, k + 1.0, SerialComm(), lambda p: np.zeros(len(p), np.int64))
        store.pos[store.owned, 2] -= 10.0
    return store.radius[store.owned], ins


def test_poured_sample_follows_the_distribution():
    """4000 log-normal spheres owed, 500 an insertion step into a region they crowd (solid
    fraction 0.16 a step): the sample is the drawn one, by number and by mass, less the few
    still pending. A radius per candidate (the draw without a sizes table) favours small
    spheres there and fails the same test."""
    params = dict(region_lo=(0, 0, 0), region_hi=(0.5, 0.5, 0.5), rate=500.0,
                  radius_min=0.01, radius_max=0.05, sizes=LOG_NORMAL, seed=5)
    r, ins = poured(params)
    assert ins.inserted == len(r) > 3500 and 0 < ins.feeds[0].pending.size < 500
    cdf = truncated_log_normal(0.01, 0.05)
    grid = np.linspace(0.01, 0.05, 20001)
    m = np.concatenate(([0.0], np.cumsum(grid[1:] ** 3 * np.diff(cdf(grid)))))
    assert ks(r, cdf) < KS_1PC and ks(r, lambda x: np.interp(x, grid, m / m[-1]), r**3) < KS_1PC
    r, ins = poured(params, legacy=True)
    assert ins.inserted == 4000 and ks(r, cdf) > KS_1PC


@pytest.mark.parametrize("region", [
    dict(region="cylinder", center=(0.5, 0.5), radius=0.3, lo=0.1, hi=0.7),
    dict(region="cone", center=(0.5, 0.5), radius_lo=0.1, radius_hi=0.4, lo=0.1, hi=0.6),
    dict(region="box", region_lo=(0.2, 0.2, 0.2), region_hi=(0.8, 0.7, 0.8)),
])
def test_a_fill_reaches_its_solid_fraction_inside_its_region(region):
    store = ParticleStore()
    params = dict(region, fill=0.3, radius_min=0.01, radius_max=0.04, sizes=LOG_NORMAL, seed=2)
    ins = Inserter(dict(vars(InsertionConfig(**params))), 0)
    assert ins.due(1, 1e-4)  # at the run's first step
    ins.insert(store, store.owned, 1e-4, SerialComm(), lambda p: np.zeros(len(p), np.int64))
    feed = ins.feeds[0]
    assert feed.pending.size == 0 and not ins.due(100, 1.0)
    pos, r = store.pos[store.owned], store.radius[store.owned]
    volume = feed.region.volume
    phi = np.sum(4 / 3 * np.pi * r**3) / volume
    assert abs(phi - 0.3) <= 4 / 3 * np.pi * 0.04**3 / volume
    assert no_overlaps(pos, r)
    x, y, z = (pos - [0.5, 0.5, 0.0]).T
    rho = np.hypot(x, y)
    if region["region"] == "cylinder":
        assert (rho + r <= 0.3 + 1e-12).all() and (z - r >= 0.1).all() and (z + r <= 0.7).all()
    elif region["region"] == "cone":
        # the distance to the lateral line ρ = 0.1 + 0.6 (z − 0.1) in the meridian plane
        gap = (0.1 + 0.6 * (z - 0.1) - rho) / math.sqrt(1 + 0.6**2)
        assert (gap >= r - 1e-12).all() and (z - r >= 0.1).all() and (z + r <= 0.6).all()
        assert rho.max() > 0.3  # it does reach the wide top
    else:
        assert ((pos - r[:, None] >= [0.2, 0.2, 0.2]) & (pos + r[:, None] <= [0.8, 0.7, 0.8])).all()


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
def test_a_fill_by_mass_fractions_follows_them():
    """A sieve table by mass: each size's share of the filled mass within its sampling error
    (chi-square of the counts against the number fractions at the 1 % level)."""
    store = ParticleStore()
    radii, fractions = [0.01, 0.02, 0.03], [0.3, 0.3, 0.4]
    ins = Inserter(dict(vars(InsertionConfig(
        region_lo=(0, 0, 0), region_hi=(1, 1, 1), fill=0.2, seed=9,
        sizes={"distribution": "discrete", "radii": radii, "fractions": fractions,
               "by": "mass"}))), 0)
    ins.insert(store, store.owned, 0.0, SerialComm(), lambda p: np.zeros(len(p), np.int64))
    r = store.radius[store.owned]
    counts = np.array([np.sum(r == s) for s in radii])
    p = np.array(fractions) / np.array(radii) ** 3
    p /= p.sum()
    assert stats.chisquare(counts, counts.sum() * p).pvalue > 0.01
    mass = counts * np.array(radii) ** 3
    np.testing.assert_allclose(mass / mass.sum(), fractions, atol=0.03)


def test_without_sizes_the_draw_is_the_old_one():
    """No ``sizes`` table: a radius per candidate, then the centres, from one stream — the
    bits every earlier pdyn drew."""
    params = dict(region_lo=(1, 1, 1), region_hi=(2, 2, 3), rate=400.0, radius_min=0.08,
                  radius_max=0.12, seed=4)
    pos, r, quota = Inserter(dict(vars(InsertionConfig(**params))), 0).candidates(0.1)
    rng = np.random.Generator(np.random.PCG64(4))
    m = TRIES * 40
    want_r = 0.08 + (0.12 - 0.08) * rng.random(m)
    u = rng.random((m, 3))
    lo = np.array([1.0, 1, 1]) + want_r[:, None]
    want = lo + (np.array([2.0, 2, 3]) - want_r[:, None] - lo) * u
    assert quota == 40 and np.array_equal(r, want_r) and np.array_equal(pos, want)


TWO_FEEDS = """
scene = "heap"
scale = 0.05
steps = 400
progress = false

[[insertion]]
region = "cylinder"
center = [1.5, 1.5]
radius = 0.6
lo = 1.0
hi = 2.4
rate = 1500.0
total = 60
every = 20
radius_min = 0.06
radius_max = 0.12
seed = 1
[insertion.sizes]
distribution = "uniform_mass"

[[insertion]]
region_lo = [0.3, 0.3, 1.0]
region_hi = [1.0, 1.0, 2.0]
rate = 800.0
total = 30
every = 30
radius_min = 0.05
radius_max = 0.05
density = 1000.0
seed = 2
"""


def test_several_feeds_pour_one_after_the_other(tmp_path):
    (tmp_path / "run.toml").write_text(TWO_FEEDS)
    cfg = load_config(tmp_path / "run.toml")
    assert len(cfg.insertion) == 2 and cfg.insertion[0].region == "cylinder"
    sim = Simulation(cfg)
    sim.run(400)
    a, b = sim.inserter.feeds
    assert a.inserted == 60 and b.inserted == 30
    h = sim.store.owned
    gid, r, m = sim.store.gid[h], sim.store.radius[h], sim.store.mass[h]
    assert np.array_equal(np.sort(gid), np.arange(90))
    small = r == 0.05
    assert small.sum() == 30 and np.allclose(m[small], 1000.0 * 4 / 3 * np.pi * 0.05**3)
    assert np.allclose(m[~small], 2500.0 * 4 / 3 * np.pi * r[~small] ** 3)


def test_several_feeds_restart_bit_for_bit(tmp_path):
    (tmp_path / "run.toml").write_text(TWO_FEEDS)
    cfg = load_config(tmp_path / "run.toml").with_(output=OutputConfig(
        folder=str(tmp_path / "a"), checkpoint_every=200))
    sim = Simulation(cfg)
    sim.run(400)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000200.h5",
                           output=OutputConfig(folder=str(tmp_path / "b")))
    assert len(cont.inserter.feeds) == 2
    cont.run(200)
    assert cont.inserter.state() == sim.inserter.state()
    for s in (sim, cont):
        s.order = np.argsort(s.store.gid[s.store.owned])
    for name in ("gid", "pos", "vel", "radius"):
        a = getattr(sim.store, name)[sim.store.owned][sim.order]
        b = getattr(cont.store, name)[cont.store.owned][cont.order]
        assert np.array_equal(a, b), name


@pytest.mark.parametrize("changes, message", [
    ({"region": "cylinder", "center": [0.5, 0.5], "lo": 0.0, "hi": 1.0},
     r"^insertion\[1\].radius = None: required by a cylinder region$"),
    ({"region": "cone", "center": [0.5, 0.5], "radius_lo": 0.0, "radius_hi": 0.0, "lo": 0.0,
      "hi": 1.0}, r"^insertion\[1\].radius_hi = 0.0: radius_lo and radius_hi are both 0"),
    ({"radius": 0.3}, r"^insertion\[1\].radius = 0.3: not a field of a box region \(only of "
                      r"a cylinder\)$"),
    ({"region": "sphere"}, r"^insertion\[1\].region = 'sphere': choose from box, cylinder, "),
    ({"fill": 0.3}, r"^insertion\[1\].rate = 100.0: not with fill"),
    ({"fill": 0.9, "rate": 0.0}, r"^insertion\[1\].fill = 0.9: must be in \(0, 0.6\]"),
    ({"rate": None}, r"^insertion\[1\].rate = None: required \(or fill\)$"),
    ({"region": "cylinder", "center": [0.5, 0.5], "radius": 0.1, "lo": 0.0, "hi": 1.0,
      "radius_max": 0.15},
     r"^insertion\[1\].region = 'cylinder': no sphere of radius 0.15 m fits inside it$"),
    ({"sizes": {"distribution": "normal", "mean": 0.1}},
     r"^insertion\[1\].sizes.std = None: required by the normal distribution"),
])
def test_bad_tables_get_one_line_naming_the_field(changes, message):
    base = dict(region_lo=[0.1, 0.1, 0.1], region_hi=[0.9, 0.9, 0.9], rate=100.0,
                radius_min=0.05, radius_max=0.1)
    second = dict(base, **changes)
    if changes.get("region") not in (None, "box"):
        second.pop("region_lo"), second.pop("region_hi")
    second = {k: v for k, v in second.items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        SimulationConfig(insertion=[base, second])


def test_a_region_outside_the_box_is_refused():
    cfg = SimulationConfig(scene="heap", scale=0.05, progress=False, insertion=InsertionConfig(
        region="cylinder", center=(2.5, 1.5), radius=0.8, lo=1.0, hi=2.0, rate=10.0,
        radius_min=0.05, radius_max=0.1))
    with pytest.raises(ConfigError, match=r"^insertion.region = 'cylinder': reaches outside "
                                          r"the box .* \(it spans \[1.7, 0.7, 1.0\]..\[3.3"):
        Simulation(cfg)
