"""The triaxial test (issue 48): a box axis strained at a fixed rate ([box] strain_rate, a
stage's ``box``) in closed form, the lateral pressure held while the axial strain proceeds,
the stage switch and the ``strain`` end at their steps, refusals in one line, restart bit for
bit, and the ``triaxial`` scene."""

import math

import numpy as np
import pytest

from pdyn.config import BoxConfig, ConfigError, OutputConfig, SimulationConfig, load_config
from pdyn.restart import from_checkpoint
from pdyn.scenarios import TRIAXIAL_COMPRESS, SceneError, make_scene
from pdyn.simulation import Simulation
from pdyn.stageplan import check_stages
from tests.mpi.scenes import TRIAXIAL_P, TRIAXIAL_RATE, TRIAXIAL_STRAIN, quick_triaxial

P = TRIAXIAL_P


def test_fixed_rate_follows_the_closed_form():
    """[box] strain_rate z = −0.5 /s beside target pressures on x and y: after n steps L_z =
    L_z0 (1 + ε̇ dt)^n (to 1e-13: one rounding a step), the z rate never changes, x and y
    move at their controller's rates."""
    scene = make_scene("shear_cell", scale=0.5, options={"rate": 0.0})
    box = BoxConfig(lo=tuple(scene.box_lo), hi=tuple(scene.box_hi), boundary=("periodic",) * 3,
                    target_pressure={"x": P, "y": P}, strain_rate={"z": -0.5},
                    max_strain_rate=0.5, pressure_gain=5.0)
    sim = Simulation(SimulationConfig(scene="shear_cell", scale=0.5, box=box, progress=False),
                     scene=scene)
    length = sim.box.length.copy()
    assert sim.exchange.rate.tolist() == [0.0, 0.0, -0.5]
    for n in (1, 100, 300):
        sim.run(n - sim.step_index)
        want = length[2] * (1.0 - 0.5 * sim.dt) ** n
        assert sim.box.length[2] == pytest.approx(want, rel=1e-13, abs=0.0)
        assert sim.exchange.rate[2] == -0.5
    assert np.all(sim.box.length[:2] < length[:2])  # loose: the controller presses x and y


def test_stage_switch_and_strain_end_at_their_steps():
    """The quick triaxial test: the compression ends at step round(0.1 / dt) (not one before),
    the z rate −TRIAXIAL_RATE from the next step, and the shear stage ends after n =
    ⌈ln(1 − ε) / ln(1 − ε̇ dt)⌉ steps: the first at which L_z / L_z(start) − 1 reaches −ε,
    L_z there the closed form; the run without steps stops there."""
    sim = Simulation(quick_triaxial())
    n0 = round(0.1 / sim.dt)
    sim.run(n0 - 1)
    assert sim.stages.index == 0 and sim.exchange.rate[2] != -TRIAXIAL_RATE
    sim.run(1)
    assert sim.stages.starts == [0, n0] and sim.exchange.rate[2] == -TRIAXIAL_RATE
    lz0 = sim.box.length[2]
    sim.run()
    n1 = math.ceil(math.log1p(-TRIAXIAL_STRAIN) / math.log1p(-TRIAXIAL_RATE * sim.dt))
    assert sim.stages.finished and sim.step_index == n0 + n1
    ratio = (1.0 - TRIAXIAL_RATE * sim.dt) ** np.array([n1 - 1, n1])
    assert sim.box.length[2] == pytest.approx(lz0 * ratio[1], rel=1e-13, abs=0.0)
    assert ratio[0] - 1.0 > -TRIAXIAL_STRAIN >= ratio[1] - 1.0


@pytest.mark.slow  # a validation run to 10 % strain; the lane has the triaxial rows
def test_lateral_pressure_holds_while_straining():
    """The ``triaxial`` scene at 250 spheres, sheared to 10 % axial strain at 0.02 /s: the
    compression ends with every normal stress within 1 % of p0; during the shear the
    lateral stresses' mean stays within 1 % of p0 and every reading (every 100 steps, after
    the first 0.5 % of strain) within 4 %, while σ_zz rises to a peak q / p above 0.6 (a
    dense packing) and the cell dilates."""
    sim = Simulation(SimulationConfig(scene="triaxial", scale=0.5, progress=False,
                                      scene_options={"strain": 0.1}))
    vol = float(np.sum(4.0 / 3.0 * np.pi * sim.store.radius[sim.store.owned] ** 3))
    sim.run(round(TRIAXIAL_COMPRESS / sim.dt))  # the compression's last step
    assert sim.stages.index == 1
    s = -np.diag(sim.cell.stress)
    assert np.all(np.abs(s / P - 1.0) < 0.01), s
    lz0, phi0 = sim.box.length[2], vol / np.prod(sim.box.length)
    seen = []
    while not sim.stages.finished:
        sim.run(100)
        if sim.box.length[2] < 0.995 * lz0:
            seen.append(-np.diag(sim.cell.stress))
    seen = np.array(seen)
    lateral = seen[:, :2] / P - 1.0
    assert np.all(np.abs(lateral.mean(axis=0)) < 0.01), lateral.mean(axis=0)
    assert np.abs(lateral).max() < 0.04, np.abs(lateral).max()
    q_over_p = (seen[:, 2] - seen[:, :2].mean(axis=1)) / seen.mean(axis=1)
    assert q_over_p.max() > 0.6, q_over_p.max()
    assert vol / np.prod(sim.box.length) < phi0 - 0.005


def test_restart_continues_bit_for_bit(tmp_path):
    """The quick triaxial test checkpointed in its compression (step 100) and in its shear
    (step 200), each continued to step 300: box, rates, stages and every sphere's state are
    those of the run not stopped."""
    def config(folder):
        return quick_triaxial(output=OutputConfig(folder=str(folder), overwrite=True,
                                                  checkpoint_every=100))
    sim = Simulation(config(tmp_path / "a"))
    sim.run(300)
    for at in (100, 200):
        cont = from_checkpoint(tmp_path / "a" / "checkpoints" / f"ckpt_{at:08d}.h5",
                               output=OutputConfig(folder=str(tmp_path / f"b{at}"),
                                                   overwrite=True))
        cont.run(300 - at)
        assert np.array_equal(cont.box.hi, sim.box.hi)
        assert np.array_equal(cont.exchange.rate, sim.exchange.rate)
        assert cont.stages.state() == sim.stages.state()
        for name in ("pos", "vel", "omega"):
            a, b = (getattr(s.store, name)[s.store.owned][np.argsort(s.store.gid[s.store.owned])]
                    for s in (sim, cont))
            assert np.array_equal(a, b), (at, name)


def test_stage_box_from_toml(tmp_path):
    """A stage's box and strain end from a TOML file; the checked plan reads back to itself
    from its tables (as a checkpoint stores it)."""
    path = tmp_path / "tri.toml"
    path.write_text('scene = "triaxial"\n'
                    '[[stages]]\nname = "compress"\nduration = 1.0\n'
                    '[[stages]]\nname = "shear"\nstrain = {z = -0.2}\n'
                    'box = {target_pressure = {x = 200.0, y = 200.0}, '
                    'strain_rate = {z = -0.05}, pressure_gain = 3.0}\n')
    plan = load_config(path).stages
    assert plan[1].box == {"target_pressure": (200.0, 200.0, None),
                           "strain_rate": (None, None, -0.05), "pressure_gain": 3.0}
    assert plan[1].end == ("strain", {"z": -0.2}) and plan[0].box is None
    assert check_stages([s.table() for s in plan]) == plan


SHEAR = {"duration": 1.0}


@pytest.mark.parametrize("box, stages, text", [
    (dict(target_pressure={"z": 5.0}, strain_rate={"z": -0.1}, max_strain_rate=1.0), (),
     "box.strain_rate.z = -0.1: the axis follows box.target_pressure.z = 5.0"),
    (dict(strain_rate={"z": "fast"}), (), "box.strain_rate.z = 'fast': expected a number"),
    (dict(strain_rate={"w": 0.1}), (), "box.strain_rate.w = 0.1: unknown axis"),
    (dict(strain_rate={"z": -0.1}, boundary=("periodic", "periodic", "wall")), (),
     "box.strain_rate.z = -0.1: needs box.boundary[2] periodic"),
    (dict(strain_rate={"x": 0.1}, shear_rate=1.0), (),
     "box.strain_rate.x = 0.1: a sheared box keeps its length along x"),
    (dict(strain_rate={"z": -0.1}), ({"box": {"volume": 1.0}, **SHEAR},),
     "stages[0].box.volume = 1.0: unknown key"),
    (dict(strain_rate={"z": -0.1}), ({"box": [1.0], **SHEAR},),
     "stages[0].box = [1.0]: expected a table"),
    (dict(strain_rate={"z": -0.1}),
     ({"box": {"target_pressure": {"z": 1.0}, "strain_rate": {"z": 0.1}}, **SHEAR},),
     "stages[0].box.strain_rate.z = 0.1: the axis follows stages[0].box.target_pressure.z"),
    (dict(strain_rate={"z": -0.1}), ({"box": {"target_pressure": {"x": -1.0}}, **SHEAR},),
     "stages[0].box.target_pressure.x = -1.0: must be > 0"),
    (dict(strain_rate={"z": -0.1}), ({"box": {"pressure_gain": 0.0}, **SHEAR},),
     "stages[0].box.pressure_gain = 0.0: must be > 0"),
    (dict(strain_rate={"z": -0.1}), ({"strain": {"z": -0.1}},),
     "stages[0].strain.z = -0.1: needs the stage's box to strain that axis"),
    (dict(strain_rate={"z": -0.1}),
     ({"strain": {"z": 0.1}, "box": {"strain_rate": {"z": -0.1}}},),
     "stages[0].strain.z = 0.1: needs the stage's box to strain that axis at a fixed rate of "
     "the same sign"),
    (dict(strain_rate={"z": -0.1}),
     ({"strain": {"x": -0.1, "z": -0.1}, "box": {"strain_rate": {"z": -0.1}}},),
     "stages[0].strain = {'x': -0.1, 'z': -0.1}: expected one axis"),
    (dict(strain_rate={"z": -0.1}),
     ({"strain": {"z": -1.5}, "box": {"strain_rate": {"z": -0.1}}},),
     "stages[0].strain.z = -1.5: must be > -1"),
])
def test_refusals(box, stages, text):
    args = dict(boundary=("periodic",) * 3, hi=(4.0, 4.0, 4.0)) | box
    with pytest.raises(ConfigError) as err:
        SimulationConfig(scene="triaxial", box=BoxConfig(**args), stages=list(stages))
    assert str(err.value).startswith(text) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize("stage, text", [
    ({"box": {"strain_rate": {"z": -0.1}}},
     "stages[1].box.strain_rate.z = -0.1: needs box.boundary[2] periodic, not 'wall'"),
    ({"box": {"target_pressure": {"x": 10.0}}},
     "stages[1].box.max_strain_rate = None: needed with target_pressure"),
])
def test_refusals_against_the_box(stage, text):
    """A stage's axis must be periodic in the run's box, a stage's target pressure needs a
    largest rate (its own or one before): refused when the run is built."""
    box = BoxConfig(hi=(8.0, 8.0, 8.0), boundary=("periodic", "periodic", "wall"),
                    strain_rate={"x": -0.1})
    cfg = SimulationConfig(scene="triaxial", box=box, progress=False,
                           stages=[{"duration": 0.1}, {**stage, "duration": 0.1}])
    with pytest.raises(ConfigError) as err:
        Simulation(cfg)
    assert str(err.value).startswith(text) and "\n" not in str(err.value), str(err.value)


def test_scene_and_its_options():
    """The scene: about 500 × scale spheres at solid fraction 0.2, its two stages; options out
    of range refused in one line."""
    scene = make_scene("triaxial", scale=1.0)
    phi = np.sum(4.0 / 3.0 * np.pi * scene.radii**3) / np.prod(scene.box_hi)
    assert len(scene) == 500 and phi == pytest.approx(0.2, rel=0.03)
    assert [s["name"] for s in scene.stages] == ["compress", "shear"]
    with pytest.raises(SceneError, match=r"^scene_options.strain = 1.0: must be in \(0, 0.9\]"):
        make_scene("triaxial", options={"strain": 1.0})
