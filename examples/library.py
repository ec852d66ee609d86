"""Drive pdyn as a library: build a scene, step it, read contacts, compare broad phases.

    python examples/library.py
"""

import time

import numpy as np

import pdyn
from pdyn.config import ContactConfig, SimulationConfig

# 1. A built-in scene, a few hundred steps, no output files.
cfg = SimulationConfig(scene="box", scale=0.25, steps=300, broadphase="linked_cells",
                       contact=ContactConfig(youngs_modulus=1e6, restitution=1.0),
                       progress=False)
sim = pdyn.Simulation(cfg)
e0 = sim.kinetic_energy() + sim.potential_energy()
sim.run()
e1 = sim.kinetic_energy() + sim.potential_energy()
print(f"{len(sim.store.owned)} spheres, {sim.step_index} steps, dt = {sim.dt:.3g} s, "
      f"relative energy change {abs(e1 - e0) / e0:.2e}")

# 2. The contacts right now, as pairs of global particle ids.
pairs = sim.contact_pairs()
print(f"{len(pairs)} sphere-sphere contacts, e.g. {pairs[:3].tolist()}")

# 3. Which structure suits a scene? The same answer from each, at a different cost.
scene = pdyn.make_scene("schornbaum", scale=0.5, seed=1)  # ~2 overlaps per sphere
for name in sorted(pdyn.REGISTRY):
    if name == "brute" and len(scene) > 3000:
        continue
    t0 = time.perf_counter()
    found = pdyn.find_contacts(scene.positions, scene.radii, method=name)
    bp = pdyn.make_broadphase(name).build(scene.positions, scene.radii)
    bp.candidate_pairs()
    st = bp.stats()
    print(f"{name:14s} {len(found):6d} contacts  {st['candidates']:8d} candidates  "
          f"{st['memory_bytes'] / 1e6:6.2f} MB  {time.perf_counter() - t0:.3f} s (incl. compile)")
