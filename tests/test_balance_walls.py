"""The load balancer weighs wall contacts (issue 33): a sphere's work is 1 + CONTACT_COST per
entry of its neighbour-list row, and a row's walls are entries too — in a turning drum the
blocks of the spheres against the cylinder weigh CONTACT_COST more per wall entry than the
same rows without their walls."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import BlockGrid
from pdyn.parallel.balance import CONTACT_COST, block_work
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation


def test_wall_entries_count_as_work():
    s = make_scene("drum", scale=1 / 3)
    sim = Simulation(SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, radii=s.radii, density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        contact=ContactConfig(**s.contact), walls=list(s.walls), gravity=tuple(s.gravity),
        progress=False))
    sim.run(50)
    lists = sim.neighbours
    n = len(lists.rows)
    walls = lists.start[1:n + 1] - lists.split[:n]  # wall entries per row
    assert walls.sum() >= 10  # the bottom of the bed lies against the drum
    grid = BlockGrid(sim.box, (1, 4, 4))
    work = block_work(grid, sim.store.pos, lists.rows, lists.start)
    without = block_work(grid, sim.store.pos, lists.rows,
                         np.concatenate(([0], np.cumsum(lists.split[:n] - lists.start[:n]))))
    per_block = np.zeros(grid.n_blocks)
    np.add.at(per_block, grid.block_of(sim.store.pos, lists.rows), walls)
    assert work - without == pytest.approx(CONTACT_COST * per_block, abs=1e-9)
    assert (per_block > 0).sum() >= 2  # blocks along the drum wall
