"""The flowing chute of ``vs_lammps.py --scene chute``: pdyn's ``chute`` scene (Silbert et al.'s
incline, ``pdyn.scenarios.chute``) run from rest until it flows, cached, so both codes are
timed on a flow rather than on a lattice falling through empty space.

Making it (:func:`flowing_chute`): the scene at ``scale`` and ``seed`` (its base and lattice
jitter: the same state on every run and machine, up to the floating point of the run) with
its own contacts (linear k = 2·10⁴, e = 0.88, μ = 0.5, pdyn's default damping), run on one
rank for ``flow_time`` time units √(d/g) (``FLOW_TIME``: 100, 316 228 steps at scale 1) in
chunks of ``CHUNK`` steps; after each chunk it records the flowing spheres' mean downhill
velocity, kinetic energy and contacts per sphere (:func:`measures`). The centres (x and y
wrapped into the periodic box) and velocities by global id, the series and the dt are cached
in ``benchmarks/.cache/chute_<key>.npz``, the key a hash of the parameters; the directory is
ignored by git (making it took 494 s at scale 1 on a shared 2-core machine). The spheres land
on the base at t ≈ 5 and then flow; at scale 1 the mean downhill velocity ⟨v_x⟩ is 0.8 √(gd)
at t = 10, 1.4 at 38, 2.3 at 76 and 2.5 at 100, still rising but slower (+8 % over the last
20 time units), while the contacts per sphere fall from 3.0 (t = 10–28) to 2.2–2.7 (from
t = 40 on, fluctuating): a dense flow on the base, not yet Silbert's steady profile, which
takes some hundreds of time units (docs/validation.md: steady from 500 at 22° and 24°).

The benchmark starts both codes from those centres and velocities with zero spins and no
tangential springs (LAMMPS cannot be given pdyn's springs); the fixed base is the scene's.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import numpy as np
from _common import cached

#: time units √(d/g) the chute flows before its state is saved
FLOW_TIME = 100.0
#: steps between two records of the series
CHUNK = 5000


def parameters(scale: float = 1.0, seed: int = 0, flow_time: float = FLOW_TIME) -> dict:
    """The flowing chute's parameters (the scene's scale and seed, the time it flows)."""
    return {"scene": "chute", "scale": float(scale), "seed": int(seed),
            "flow_time": float(flow_time), "chunk": CHUNK}


def measures(pos: np.ndarray, vel: np.ndarray, scene) -> dict:
    """The chute's state (centres and velocities by global id, the base first): mean downhill
    velocity and kinetic energy per flowing sphere (m = 1), and ``bed.bed_measures``' sphere
    contacts per sphere (every sphere, base included: overlapping pairs), mean and largest
    overlap over the radius."""
    from bed import bed_measures

    flow = ~scene.fixed
    m = bed_measures(pos, scene.radii, float(scene.box_hi[0]))
    return {"vx": float(vel[flow, 0].mean()),
            "kinetic_energy": float(0.5 * (vel[flow] ** 2).sum() / flow.sum()),
            "contacts_per_sphere": m["contacts_per_sphere"], "mean_overlap": m["mean_overlap"],
            "max_overlap": m["max_overlap"]}


def flow(p: dict, log=print) -> dict:
    """Run the chute from rest for ``p["flow_time"]`` on this process (1 rank); the cached
    record."""
    from pdyn import Simulation, SimulationConfig
    from pdyn.config import OutputConfig
    from pdyn.scenarios import chute

    scene = chute(scale=p["scale"], seed=p["seed"])
    sim = Simulation(SimulationConfig(scene="chute", progress=False,
                                      output=OutputConfig(snapshot_every=0)), scene=scene)
    steps = int(round(p["flow_time"] / sim.dt))
    series = []
    t0 = time.perf_counter()
    while sim.step_index < steps:
        sim.run(min(p["chunk"], steps - sim.step_index))
        pos, vel = state(sim, scene)
        series.append({"t": sim.time, **measures(pos, vel, scene)})
        s = series[-1]
        log(f"chute flowing ({len(scene)} spheres): t = {s['t']:.1f} of {p['flow_time']:g}, "
            f"<v_x> {s['vx']:.3f}, KE/sphere {s['kinetic_energy']:.3f}, contacts/sphere "
            f"{s['contacts_per_sphere']:.3f}", flush=True)
    log(f"flowed {sim.step_index} steps ({time.perf_counter() - t0:.0f} s)", flush=True)
    return {"positions": pos, "velocities": vel, "dt": float(sim.dt), "steps": int(sim.step_index),
            "series": json.dumps(series), "parameters": json.dumps(p, sort_keys=True)}


def state(sim, scene) -> tuple[np.ndarray, np.ndarray] | None:
    """(centres, velocities) of every sphere of a simulation of ``scene`` by global id, x and
    y wrapped into the periodic box, on rank 0 (None on the others)."""
    from bed import owned_state

    parts = sim.comm.gather(owned_state(sim), root=0)
    if sim.comm.rank != 0:
        return None
    gid, pos, vel = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(gid)
    pos, vel = pos[order], vel[order]
    pos[:, :2] %= scene.box_hi[:2]
    return pos, vel


def flowing_chute(p: dict, log=print) -> dict:
    """The flowing chute of parameters ``p``: from the cache, or run now and cached."""
    rec = cached("chute", p, lambda: flow(p, log), log)
    rec["dt"], rec["steps"] = float(rec["dt"]), int(rec["steps"])
    rec["series"] = json.loads(str(rec["series"]))
    return rec


def flowing_scene(p: dict, rec: dict):
    """The ``chute`` scene of ``p`` with the flowing state ``rec``'s centres and velocities."""
    from pdyn.scenarios import chute

    return replace(chute(scale=p["scale"], seed=p["seed"]), positions=rec["positions"],
                   velocities=rec["velocities"])
