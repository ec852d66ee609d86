"""The ``hopper`` scene (issue 33): a silo with a pyramidal bottom of four planes, filled
closed and opened by an outlet that starts at a time."""

import math

import numpy as np
import pytest

from pdyn.config import SimulationConfig
from pdyn.scenarios import hopper, make_scene
from pdyn.simulation import Simulation
from pdyn.walls import PLANE, gaps


def test_the_orifice_is_the_planes_section_and_every_sphere_starts_clear():
    s = make_scene("hopper")
    assert len(s) == 5000 and len(s.walls) == 4
    d, slope = 0.01, math.radians(15.0)
    c = 0.5 * s.box_hi[0]
    assert math.isclose(s.box_hi[0], 0.2) and s.boundary == ("wall",) * 3
    for w in s.walls:
        g = gaps(s.positions, w["point"], w["normal"], PLANE, 0.0)
        assert (g >= s.radii).all()
        n = np.array(w["normal"])
        edge = np.array([c, c, 0.0]) - 3.0 * d * np.array([n[0], n[1], 0.0]) / math.sin(slope)
        # the plane crosses z = 0 on the orifice's edge, 3 d (D/2) from the axis
        assert abs(gaps(edge[None], w["point"], n, PLANE, 0.0)[0]) < 1e-12
    ins = s.insertion
    assert ins["rate"] == 0.0 and ins["outlet_start"] == 0.3
    assert math.isclose(ins["outlet_hi"][2], 0.005 * math.cos(slope))
    assert (s.positions[:, 2] > ins["outlet_hi"][2]).sum() < len(s)  # some rest below z_out
    assert hopper(scale=8.0).box_hi[0] == 0.4 and len(hopper(scale=8.0).radii) == 40000
    assert hopper(scale=0.01, orifice=9.0).box_hi[0] == 0.15  # at least D + 6 d wide


def test_height_makes_the_fill_taller_in_the_same_silo():
    low, tall = hopper(scale=0.2), hopper(scale=0.2, height=2.5)
    assert len(tall) == round(2.5 * len(low)) and tall.box_hi[0] == low.box_hi[0]
    assert tall.positions[:, 2].max() > 2.0 * low.positions[:, 2].max()
    assert np.array_equal(tall.walls[0]["normal"], low.walls[0]["normal"])
    for bad in (0, -1.0, float("nan"), "2"):
        with pytest.raises(ValueError, match="^height = .*: ") as err:
            hopper(height=bad)
        assert "\n" not in str(err.value)


def test_closed_until_it_opens_then_spheres_leave():
    sim = Simulation(SimulationConfig(scene="hopper", progress=False),
                     scene=hopper(scale=0.1, orifice=4.0, opens=0.06))
    sim.run(int(0.06 / sim.dt) - 1)
    low = (sim.store.pos[sim.store.owned, 2] < 0.005 * math.cos(math.radians(15.0))).sum()
    assert sim.inserter.removed == 0 and low > 0  # resting on the planes across the orifice
    sim.run(int(0.1 / sim.dt))
    assert sim.inserter.removed > low
    assert len(sim.store.owned) == 500 - sim.inserter.removed


def test_runs_from_its_name():
    sim = Simulation(SimulationConfig(scene="hopper", scale=0.05, steps=20, progress=False))
    sim.run()
    h = sim.store.owned
    assert len(h) == 250 and np.isfinite(sim.store.pos[h]).all() and sim.step_index == 20
