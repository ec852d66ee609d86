"""``benchmarks/mesh_bed.py``: its three floors (the box's wall, a plane wall, a flat mesh over
the periodic cell) hold the same spheres with the same forces, so the benchmark times one
physics three ways."""

import numpy as np

from pdyn.config import BoxConfig
from pdyn.simulation import Simulation

from .conftest import benchmark_script


def test_floors_give_the_same_contacts():
    mesh_bed = benchmark_script("mesh_bed")
    bed = benchmark_script("bed")
    p = bed.parameters(scale=0.002)  # 160 spheres over a 25 mm cell
    centres, radii, top = bed.poured(p)
    low = centres[:, 2] < p["spacing"] * p["r_max"]  # the first layer, lowered onto the floor
    centres, radii = centres[low], radii[low]
    centres[:, 2] = radii  # touching it
    base = bed.pdyn_config(p, centres, radii, top, 0.5, 30)
    forces = {}
    for name, (walls, z) in mesh_bed.floors(p, 2000).items():
        box = BoxConfig(lo=base.box.lo, hi=base.box.hi, boundary=("periodic", "periodic", z))
        sim = Simulation(base.with_(box=box, walls=list(walls)))
        sim.run(30)
        forces[name] = np.sort(sim.wall_contacts()["force"])
    ref = forces["plane wall"]
    assert len(ref) == len(radii)  # every sphere of the layer on the floor
    for name, f in forces.items():
        np.testing.assert_allclose(f, ref, rtol=1e-9, err_msg=name)
