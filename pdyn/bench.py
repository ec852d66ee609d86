"""``pdyn bench``: Koch's table ([Koch2020] Sec. 4.1) for every broad phase on one scene.

For each structure: a short simulation of the scene (``steps`` steps, neighbour lists off, so
the structure finds the contacts at every step) reporting total time, collision time (broad
phase + lists + contacts), candidate pairs summed over the steps, and the
structure's memory — plus the same contact detection done by the peers a Python user would
reach for (scipy's ``cKDTree.query_pairs`` + exact filter; freud's ``AABBQuery`` where
installed), timed on the same positions each step. All figures come from the same run.
"""

from __future__ import annotations

import time

import numpy as np

from .broadphase import REGISTRY, canonical_pairs
from .config import SimulationConfig
from .simulation import Simulation

BRUTE_MAX = 5000
#: the phases of a step that find and evaluate contacts
COLLISION_PHASES = ("broadphase", "neighbours", "contacts")


def _kdtree_pairs(pos, rad):
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos).query_pairs(2.0 * rad.max(), output_type="ndarray")
    d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
    s = rad[pairs[:, 0]] + rad[pairs[:, 1]]
    return canonical_pairs(pairs[np.einsum("ij,ij->i", d, d) <= s * s]), pairs.shape[0]


def _freud_pairs(pos, rad, box_lo, box_hi):
    import freud

    L = box_hi - box_lo
    box = freud.box.Box(*L)
    q = freud.locality.AABBQuery(box, pos - box_lo - L / 2)
    nl = q.query(pos - box_lo - L / 2, {"r_max": 2.0 * rad.max(), "exclude_ii": True}
                 ).toNeighborList()
    pairs = np.stack((nl.query_point_indices, nl.point_indices), axis=1).astype(np.int64)
    pairs = pairs[pairs[:, 0] < pairs[:, 1]]
    d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
    s = rad[pairs[:, 0]] + rad[pairs[:, 1]]
    return canonical_pairs(pairs[np.einsum("ij,ij->i", d, d) <= s * s]), pairs.shape[0]


def bench_scene(scene: str, scale: float, steps: int, methods=None, seed: int = 0,
                progress=print) -> list[dict]:
    """Rows of Koch's table for ``scene`` at ``scale``; one row per structure and peer."""
    methods = methods or sorted(REGISTRY)
    rows = []
    last_pos = None
    for m in methods:
        # no neighbour-list skin: the structure finds the contacts at every step
        cfg = SimulationConfig(scene=scene, scale=scale, seed=seed, steps=steps, broadphase=m,
                               progress=False, neighbour_skin=0.0)
        sim = Simulation(cfg)
        if m == "brute" and len(sim.store.owned) > BRUTE_MAX:
            continue
        Simulation(cfg.with_(steps=1)).run()  # warm-up: numba compiles outside the timing
        candidates = 0
        sim.timers.clear()
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step()
            candidates += sim.broadphase.stats()["candidates"]
        total = time.perf_counter() - t0
        t = sim.timers
        rows.append({
            "structure": m, "particles": len(sim.store.owned), "steps": steps,
            "total_s": total, "collision_s": sum(t.get(k, 0) for k in COLLISION_PHASES),
            "candidates": candidates, "memory_MB": sim.broadphase.stats()["memory_bytes"] / 1e6,
        })
        progress(f"  {m}: {total:.3f} s")
        h = sim.store.owned
        last_pos, last_rad = sim.store.pos[h].copy(), sim.store.radius[h].copy()
        box = (sim.box.lo, sim.box.hi)
    if last_pos is None:
        return rows
    peers = {"scipy cKDTree": lambda: _kdtree_pairs(last_pos, last_rad)}
    try:
        import freud  # noqa: F401

        peers["freud AABBQuery"] = lambda: _freud_pairs(last_pos, last_rad, *box)
    except ImportError:
        pass
    for name, fn in peers.items():
        fn()
        t0 = time.perf_counter()
        for _ in range(steps):
            _, cand = fn()
        dt = time.perf_counter() - t0
        rows.append({"structure": name, "particles": last_pos.shape[0], "steps": steps,
                     "total_s": None, "collision_s": dt, "candidates": cand * steps,
                     "memory_MB": None})
    return rows


#: columns of Koch's table, in order
COLUMNS = ["structure", "particles", "steps", "total_s", "collision_s", "candidates", "memory_MB"]


def format_table(rows: list[dict], columns: list[str] = COLUMNS) -> str:
    """Rows as a right-aligned text table (floats to 4 significant digits, missing as "-");
    also the table printer of ``benchmarks/``."""

    def fmt(v):
        return "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))

    w = [max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in columns]
    lines = ["  ".join(c.rjust(x) for c, x in zip(columns, w))]
    lines += ["  ".join(fmt(r.get(c)).rjust(x) for c, x in zip(columns, w)) for r in rows]
    return "\n".join(lines)
