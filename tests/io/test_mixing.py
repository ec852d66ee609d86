"""The mixing columns of thermo.csv (``pdyn.analysis.mixing``): Lacey's index against hand-worked
cases, counts that do not depend on how the spheres are split over ranks, and the columns of
a run of several materials. Multi-rank: the ``two-materials-mixing`` row of
tests/mpi/test_same_bits.py."""

import math

import numpy as np

from pdyn.io import read_thermo
from pdyn.analysis.mixing import cell_counts, lacey, merged
from pdyn.simulation import Simulation

from ..mpi.scenes import two_materials


def test_lacey_is_0_segregated_and_1_random():
    segregated = {(0, 0, 0, 0): 4, (1, 0, 0, 1): 4}
    assert lacey(segregated) == 0.0
    # cells of 3 + 1 and 1 + 3: p = 1/2, σ₀² = 1/4, n̄ = 4, σ_R² = 1/16, σ² = 1/16: M = 1
    random = {(0, 0, 0, 0): 3, (0, 0, 0, 1): 1, (1, 0, 0, 0): 1, (1, 0, 0, 1): 3}
    assert lacey(random) == 1.0
    # all in one cell, 2 + 2: σ² = 0, n̄ = 4: M = σ₀² / (σ₀² − σ₀²/4) = 4/3
    assert math.isclose(lacey({(0, 0, 0, 0): 2, (0, 0, 0, 1): 2}), 4.0 / 3.0)
    assert math.isnan(lacey({(0, 0, 0, 0): 5, (1, 0, 0, 0): 2}))  # one material


def test_counts_do_not_depend_on_the_split():
    rng = np.random.default_rng(3)
    pos = rng.uniform(-1.0, 1.0, (500, 3))
    material = rng.integers(0, 3, 500)
    whole = cell_counts(pos, material, (-1.0, -1.0, -1.0), 0.3)
    parts = [cell_counts(pos[k::3], material[k::3], (-1.0, -1.0, -1.0), 0.3) for k in range(3)]
    assert merged(parts) == whole and sum(whole.values()) == 500
    assert lacey(merged(parts[::-1])) == lacey(whole)


def test_thermo_of_several_materials_has_the_mixing_columns(tmp_path):
    from pdyn.config import OutputConfig

    sim = Simulation(two_materials(output=OutputConfig(folder=str(tmp_path), thermo_every=50)))
    sim.writers[-1].say = lambda line: None
    sim.run(100)
    names, rows = read_thermo(tmp_path / "thermo.csv")
    assert names[-4:] == ["lacey", "spheres_glass", "spheres_rubber", "spheres_steel"]
    last = dict(zip(names, rows[-1]))
    h = sim.store.owned
    counts = np.bincount(sim.store.material[h], minlength=3)
    assert [last[f"spheres_{m}"] for m in ("glass", "rubber", "steel")] == counts.tolist()
    assert 0.0 < last["lacey"] < 1.5  # alternating materials: well mixed
