"""The Lees–Edwards cost benchmark's protocol (``benchmarks/lees_edwards_cost.py``): the
state it starts from is a fixed periodic box's too, and its "boundary" run does the fixed
run's physics, so "boundary / fixed" compares the same work."""

import numpy as np

from .conftest import benchmark_script


def test_boundary_run_does_the_fixed_runs_work():
    """A 125-sphere cell sheared one strain unit, then 60 steps three ways: the sheared
    state lies in the box, and the boundary run ends with the fixed run's contacts and
    rebuilds (its images shifted by 10⁻⁹ of the rate's travel), the sheared run with its
    own; the table renders one row per run."""
    program = benchmark_script("lees_edwards_cost")
    scene, pos, vel, radii = program.sheared_state(0.25, 1.0, 1.0)
    assert np.all(pos >= scene.box_lo) and np.all(pos < scene.box_hi)
    assert len(pos) == len(vel) == len(radii) == 125
    row = program.measure(0.25, 1.0, 60, 1, 1.0)
    assert row["boundary"]["contacts"] == row["fixed"]["contacts"] > 0, row
    assert row["boundary"]["rebuilds"] == row["fixed"]["rebuilds"], row
    assert row["sheared"]["contacts"] != row["fixed"]["contacts"], row
    lines = benchmark_script("performance_tables").lees_edwards_table(
        {"args": {"steps": 60, "rate": 1.0}, "command": "cmd", "started": "2026-12-02T00:00",
         "machine": "m", "rows": [row]})
    assert sum(line.startswith("| 125 |") for line in lines) == 3
