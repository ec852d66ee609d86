"""A periodic cell whose lengths follow a target pressure ([box] target_pressure,
``pdyn.dynamics.cell``): the controller's law, the affine resize of box, blocks, images and
centres, the rebuild test's strain term, isotropic compression to the target, the shear
cell at constant pressure and the refusals (one line naming the field and value)."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ConfigError, OutputConfig, SimulationConfig, load_config
from pdyn.dynamics.cell import CellControl, Control
from pdyn.io import read_thermo
from pdyn.restart import from_checkpoint
from pdyn.scenarios import SceneError, make_scene
from pdyn.simulation import Simulation

P = 200.0  # Pa: k / (p d) = 100 for the shear cell's spheres (overlaps of about 1 %)


def test_rates_follow_the_relative_error_clamped():
    """ε̇ = clamp(g (p − p*) / p*, ±ε̇_max) on the controlled axes, 0 on the others."""
    c = CellControl(Control.of((None, 100.0, 200.0), gain=2.0, max_rate=0.5))
    assert np.array_equal(c.rates(np.array([1e9, 110.0, 150.0])), [0.0, 0.2, -0.5])
    assert np.array_equal(c.rates(np.array([0.0, 1000.0, 210.0])), [0.0, 0.5, 2.0 * 0.05])
    assert [c.due(s) for s in (1, 2)] == [True, True]
    c3 = CellControl(Control.of((1.0, None, None), gain=1.0, max_rate=1.0), every=3)
    assert [c3.due(s) for s in (1, 2, 3, 6)] == [False, False, True, True]
    assert c3.needs(3) == frozenset({"sphere_contacts"}) and not c3.needs(4)


def _iso(steps, **extra):
    scene = make_scene("shear_cell", scale=0.5, options={"rate": 0.0})
    box = BoxConfig(lo=tuple(scene.box_lo), hi=tuple(scene.box_hi),
                    boundary=("periodic",) * 3, target_pressure={"x": P, "y": P, "z": P},
                    max_strain_rate=0.2, pressure_gain=0.2, **extra)
    sim = Simulation(SimulationConfig(scene="shear_cell", scale=0.5, box=box,
                                      progress=False), scene=scene)
    return sim


@pytest.mark.slow  # a validation run (6000 steps); the lane keeps the cell's other tests
def test_isotropic_compression_reaches_the_target():
    """250 spheres at rest, loose (no contact) in a cube whose three lengths follow p* =
    200 Pa: the cell shrinks, the spheres jam and the measured normal stresses settle on
    the target — mean over the last 1000 steps within 1 % on every axis, the lengths
    shrunk alike; the centres stay inside the box, scaled with it."""
    sim = _iso(0)
    hi0 = sim.box.hi.copy()
    seen = []
    for _ in range(12):
        sim.run(500)
        seen.append(-np.diag(sim.cell.stress))
    last = np.mean(seen[-2:], axis=0)
    assert np.all(np.abs(last / P - 1.0) < 0.01), last
    shrink = sim.box.hi / hi0
    assert np.all(shrink < 0.97) and np.ptp(shrink) < 0.02, shrink
    pos = sim.store.pos[sim.store.owned]
    assert np.all(pos > -0.5) and np.all(pos < sim.box.hi + 0.5)
    assert sim.rebuilds > 1


def test_rebuild_test_counts_the_strain():
    """The strain term: half of (1 − the smallest length ratio since the rebuild) × reach,
    0 for a box that grew; a resize scales the blocks, the image shifts and the centres
    (about lo), and the build positions with them."""
    sim = _iso(0)
    ex, store = sim.exchange, sim.store
    h = store.owned[:5]
    before, built = store.pos[h].copy(), store.build_pos[h].copy()
    edge = ex.grid.edge.copy()
    ex.strain([0.0, -1.0, 10.0])
    ex.deform(0.01)
    f = np.array([1.0, 0.99, 1.1])
    assert np.allclose(store.pos[h], before * f) and np.allclose(store.build_pos[h], built * f)
    assert np.allclose(ex.grid.edge, edge * f)
    assert np.allclose(np.abs(ex.shifts[1:]).max(axis=0), sim.box.length)
    assert ex.strain_drift() == pytest.approx(0.5 * 0.01 * ex.reach)


@pytest.mark.slow  # six strain units; the lane has the same-bits row shear-cell-pressure
def test_shear_cell_at_constant_pressure(tmp_path):
    """The shear cell at p* along z (I ≈ 0.09): only L_z changes, the z stress's mean over
    strain units 2 to 6 within 10 % of the target (a sheared 250-sphere cell's pressure swings
    around it over a few strain units), μ = −σ_xz / σ_zz of a frictional flow (0.2-0.7), from
    thermo's columns."""
    sim = Simulation(SimulationConfig(
        scene="shear_cell", scale=0.5, scene_options={"rate": 1.0, "pressure": P},
        progress=False, output=OutputConfig(folder=str(tmp_path), overwrite=True,
                                            thermo_every=100)))
    hi0 = sim.box.hi.copy()
    strain = int(round(1.0 / sim.dt))  # steps a strain unit at 1/s
    sim.run(6 * strain)
    names, rows = read_thermo(tmp_path / "thermo.csv")
    last = rows[rows[:, names.index("step")] > 2 * strain]
    pz = -np.mean(last[:, names.index("stress_zz")])
    assert abs(pz / P - 1.0) < 0.1, pz
    mu = np.mean(last[:, names.index("stress_xz")]) / pz  # −σ_xz / σ_zz
    assert 0.2 < mu < 0.7, mu
    assert np.array_equal(sim.box.hi[:2], hi0[:2]) and sim.box.hi[2] != hi0[2]


@pytest.mark.parametrize("box, text", [
    (dict(target_pressure={"z": -5.0}, max_strain_rate=1.0),
     "box.target_pressure.z = -5.0: must be > 0"),
    (dict(target_pressure={"w": 5.0}, max_strain_rate=1.0),
     "box.target_pressure.w = 5.0: unknown axis"),
    (dict(target_pressure={"z": 5.0}, max_strain_rate=1.0, boundary=("periodic", "periodic",
                                                                    "wall")),
     "box.target_pressure.z = 5.0: needs box.boundary[2] periodic"),
    (dict(target_pressure={"x": 5.0}, max_strain_rate=1.0, shear_rate=1.0),
     "box.target_pressure.x = 5.0: a sheared box keeps its length along x"),
    (dict(target_pressure={"z": 5.0}), "box.max_strain_rate = None: needed with"),
    (dict(target_pressure={"z": 5.0}, max_strain_rate=0.0), "box.max_strain_rate = 0.0: must"),
    (dict(pressure_gain=1.0), "box.pressure_gain = 1.0: needs box.target_pressure"),
    (dict(target_pressure={"z": 5.0}, max_strain_rate=1.0, pressure_every=0),
     "box.pressure_every = 0: must be >= 1"),
    (dict(target_pressure=[1.0, 2.0]), "box.target_pressure = [1.0, 2.0]: expected a table"),
])
def test_refusals(box, text):
    args = dict(boundary=("periodic",) * 3, hi=(4.0, 4.0, 4.0)) | box
    with pytest.raises(ConfigError) as err:
        BoxConfig(**args)
    assert str(err.value).startswith(text) and "\n" not in str(err.value), str(err.value)


def test_refusals_of_the_run():
    """A deforming box takes no [[walls]]; the scene's pressure must be positive."""
    box = BoxConfig(hi=(4.0, 4.0, 4.0), boundary=("periodic",) * 3,
                    target_pressure={"z": 5.0}, max_strain_rate=1.0)
    with pytest.raises(ConfigError, match=r"^walls = '1 table\(s\)': a box whose lengths change"):
        SimulationConfig(box=box, walls=[{"type": "plane", "point": [0, 0, 1],
                                          "normal": [0, 0, 1]}])
    with pytest.raises(SceneError, match=r"^scene_options.pressure = -1.0: must be > 0"):
        make_scene("shear_cell", scale=0.5, options={"pressure": -1.0})


def test_restart_continues_bit_for_bit(tmp_path):
    """A sheared cell at constant pressure checkpointed at step 150 and continued to 300: the
    box, the rates, the offset and every sphere's state are those of the run not stopped
    (the checkpoint keeps the box's lengths, rates and offsets; the reader checks them)."""
    def config(folder, every):
        return SimulationConfig(scene="shear_cell", scale=0.5, progress=False,
                                scene_options={"rate": 8.0, "pressure": 2000.0},
                                output=OutputConfig(folder=str(folder), overwrite=True,
                                                    checkpoint_every=every))
    sim = Simulation(config(tmp_path / "a", 150))
    sim.run(300)
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000150.h5",
                           output=OutputConfig(folder=str(tmp_path / "b"), overwrite=True))
    assert cont.box.hi[2] != sim.scene.box_hi[2]
    cont.run(150)
    assert np.array_equal(cont.box.hi, sim.box.hi) and sim.box.hi[2] < sim.scene.box_hi[2]
    assert np.array_equal(cont.exchange.rate, sim.exchange.rate)
    assert cont.exchange.offset == sim.exchange.offset
    for name in ("pos", "vel", "omega"):
        a, b = (getattr(s.store, name)[s.store.owned][np.argsort(s.store.gid[s.store.owned])]
                for s in (sim, cont))
        assert np.array_equal(a, b), name


def test_config_file(tmp_path):
    """[box] target_pressure as a TOML table; an axis not named keeps its length."""
    path = tmp_path / "cell.toml"
    path.write_text('scene = "shear_cell"\n[box]\nhi = [6.0, 6.0, 6.0]\n'
                    'boundary = ["periodic", "periodic", "periodic"]\n'
                    'target_pressure = {y = 150.0, z = 200.0}\nmax_strain_rate = 0.5\n')
    box = load_config(path).box
    assert box.target_pressure == (None, 150.0, 200.0)
    assert box.pressure_gain == 5.0 and box.pressure_every == 1
