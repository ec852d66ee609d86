"""Scenes generated per lattice cell: any subset of cells draws the same particles as the whole
scene, every centre is found in the cells that overlap its block, and each scene keeps its
documented character (counts, radii, regions, density)."""

import numpy as np
import pytest

from pdyn.domain import BlockGrid, Box
from pdyn.lattice import Lattice
from pdyn.scenarios import SCENES, make_scene


def test_spread_keeps_counts():
    rng = np.random.default_rng(1)
    fine = Lattice.over(np.zeros(3), np.array([4.0, 6.0, 8.0]), (4, 6, 8))
    counts = rng.integers(0, 50, fine.n_cells)
    coarse = Lattice.over(np.zeros(3), np.array([4.0, 6.0, 8.0]), (2, 3, 4))  # aligned
    c = counts.reshape(8, 6, 4)
    exact = c.reshape(4, 2, 3, 2, 2, 2).sum(axis=(1, 3, 5)).reshape(-1)
    assert np.array_equal(fine.spread(counts, coarse), exact)
    odd = Lattice.over(np.zeros(3), np.array([4.0, 6.0, 8.0]), (3, 5, 7))
    spread = fine.spread(counts, odd)
    assert spread.shape == (105,) and abs(spread.sum() - counts.sum()) < 1e-9
    assert spread.min() >= 0 and spread.max() < counts.sum()


@pytest.mark.parametrize("name,scale", [("drop", 2.0), ("gas", 0.05), ("schornbaum", 0.5),
                                        ("very_polydisperse", 0.05), ("checkerboard", 0.005),
                                        ("more_polydisperse", 0.05)])
def test_every_centre_is_in_a_cell_its_block_draws(name, scale):
    """For random block grids, the cells overlapping a block (``cells_overlapping``, with the
    scene's inset) hold every centre that lies in that block."""
    scene = make_scene(name, scale=scale, materialise=False)
    cells = scene.cells
    p = cells.fill()
    f = len(cells.fixed_radius)
    cell_of = np.searchsorted(cells.first, p["gid"][f:], side="right") - 1
    box = Box(scene.box_lo, scene.box_hi, scene.boundary)
    rng = np.random.default_rng(0)
    for _ in range(3):
        grid = BlockGrid(box, rng.integers(1, 7, 3))
        blo, bhi = grid.bounds()
        block = grid.block_of(p["pos"][f:])
        for b in np.unique(block):
            found = cells.lattice.cells_overlapping(blo[b], bhi[b], inset=cells.inset)
            assert np.isin(cell_of[block == b], found).all()


# heap starts empty; drum, hopper, chute, the DEM benchmark's two and the shear cell are given
# as arrays (their lattices are cut by the walls, the chute's base is fixed, the shear cell's
# spare sites are drawn; scattered from rank 0)
@pytest.mark.parametrize("name", [n for n in SCENES if n not in (
    "heap", "drum", "hopper", "chute", "silo_benchmark", "drum_benchmark", "shear_cell")])
def test_any_cells_draw_what_the_whole_scene_holds(name):
    scene = make_scene(name, scale=0.02, materialise=False)
    whole = make_scene(name, scale=0.02)
    assert len(scene) == len(whole)
    assert np.array_equal(scene.cells.fill()["gid"], np.arange(len(whole)))
    pick = np.arange(scene.cells.lattice.n_cells)[::-3][::-1]  # every third cell, ascending
    part = scene.cells.fill(pick)
    for key, arr in (("pos", whole.positions), ("vel", whole.velocities),
                     ("radius", whole.radii)):
        assert np.array_equal(part[key], arr[part["gid"]])
    other = make_scene(name, scale=0.02, seed=1)  # another seed, other streams
    assert not (np.array_equal(other.positions, whole.positions)
                and np.array_equal(other.velocities, whole.velocities))


def test_koch_scenes_keep_counts_and_regions():
    s = make_scene("inhomogeneous", scale=0.05)
    assert len(s) == 5000 and np.all(s.radii == 0.5)
    k = 0.05 ** (1 / 3)
    for frac, lo, hi in [(0.70, (0, 200, 250), (150, 250, 350)),
                         (0.25, (325, 150, 100), (400, 225, 175)),
                         (0.04, (475, 475, 475), (500, 500, 500))]:
        inside = ((s.positions >= np.array(lo) * k) & (s.positions <= np.array(hi) * k)).all(1)
        assert abs(inside.mean() - frac) < 0.02
    poly = make_scene("more_polydisperse", scale=0.05)
    radii, counts = np.unique(poly.radii, return_counts=True)
    assert radii.tolist() == [0.5, 1.0, 2.5, 20.0] and counts.tolist() == [3200, 640, 144, 16]
    huge = make_scene("very_polydisperse", scale=0.05)
    assert huge.radii[0] == 180 * 0.05 ** (1 / 3) and np.all(huge.radii[1:] == 0.5)
    assert np.array_equal(huge.positions[0], 0.5 * huge.box_hi)


def test_gas_keeps_its_lattice_density_and_momentum():
    s = make_scene("gas")
    assert len(s) == 97336 and s.boundary == ("periodic",) * 3
    fraction = len(s) * np.pi / 6 / np.prod(s.box_hi)
    assert abs(fraction - 0.3) < 1e-12
    a = s.box_hi[0] / 46
    assert np.allclose(np.sort(np.unique(s.positions[:, 0])), (np.arange(46) + 0.5) * a)
    assert np.abs(s.velocities.sum(axis=0)).max() < 1e-9
    assert abs(s.velocities.std() - 1.0) < 0.01


def test_drop_stays_in_its_region():
    s = make_scene("drop", scale=2.0)
    w = s.box_hi[0]
    z = s.positions[:, 2]
    assert len(s) == 2000 and (z - s.radii >= 1.0).all() and (z + s.radii <= 1 + 1.2 * w).all()
    assert (s.radii >= 0.15).all() and (s.radii <= 0.35).all() and not s.velocities.any()
