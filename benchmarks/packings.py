"""Polydisperse frictional packings on 1, 2 and 4 ranks: spheres that touch far more than 16
others, run to rest, the same bits on every rank count and across a restart.

Scenes (SI units; density 2500 kg/m³, Hertz–Mindlin contacts with E = 10 MPa, ν = 0.3,
restitution 0.5, sliding friction μ = 0.5, gravity 9.81 m/s², pdyn's default time step):

* ``pour3``, ``pour5``, ``pour10``: bidisperse, size ratio q = 3, 5, 10 — ``--n`` spheres
  (default 3000), big ones of R = 5 cm and small ones of r = R / q (± 5 %), equal solid volume
  of each kind (3000 spheres: 107, 24, 3 big ones). The big spheres start at random places
  near the floor of a walled box and fall onto it; the small ones are poured over them with
  ``[insertion]`` in 1 s, and the pile comes to rest; rolling friction μ_r = 0.1. Why
  bidisperse: a sphere holds many contacts when small spheres surround it, and with radii
  uniform in [r, q r] (``[insertion]``'s own distribution) one sphere in nine at 1:10 is
  below 2 r, so the large ones touch mostly large ones — poured the same way, uniform radii
  gave at most 15 (1:3) and 17 (1:10) contacts a sphere in a trial of this program.
* ``user7.5``: a user's scene — one sphere of r = 0.15 m among 11 900 of
  r = 0.02 m (size ratio 7.5), no rolling friction, in a walled box with a 1 m × 1 m floor,
  2 m tall so random non-overlapping placement (``pdyn.scenarios.place_spheres``, solid
  fraction 0.2) succeeds; the spheres fall and settle.

Each scene runs to rest on the first of ``--ranks`` (default 1 2 4): in chunks of 0.01 s of
simulated time until every sphere is poured and the rms speed sqrt(2 KE / M) is below
``--settle-speed`` (default 0.01 m/s), at most ``--max-time`` s; that fixes the step count S.
Then S steps on each other rank count — the second writes a checkpoint at S // 2 —, and that
checkpoint continued to S on the first rank count. Every run is its own ``mpiexec -n N`` job
(the venv's mpiexec; oversubscribing the cores is fine) whose rank 0 saves the end state —
gid, pos, vel, omega and the contact-history records (count, partner key, spring) of every
sphere, in gid order —; the runs are compared with the first bit for bit.

Reported per scene: spheres, size ratio, steps S, the most contacts one sphere holds at the
end (its history records: one per touching contact, walls included), the big spheres' mean,
the mean coordination number Z = 2 C / N (C sphere–sphere contacts), the rms speed at the
end (m/s), wall time of the steps (s) and steps/s at each rank count, and whether the other
rank counts and the restart (``restart_2>1``: checkpoint of the 2-rank run continued on 1
rank) equal the first run bit for bit ("yes"/"NO"; any "NO" ends with exit status 1).

    python benchmarks/packings.py --markdown --json packings.json   # the full version, ~11 min
    python benchmarks/packings.py --quick           # 300 spheres, 1:3 (about a minute)
    python benchmarks/packings.py --scenes pour10 --n 1000 --ranks 1 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402
from pdyn.config import (BoxConfig, ContactConfig, InsertionConfig, OutputConfig,  # noqa: E402
                         ParticlesConfig, SimulationConfig)
from pdyn.dynamics.contact import RAYLEIGH_FRACTION, ContactLaw  # noqa: E402
from pdyn.particles import WALL_KEY_BASE  # noqa: E402

#: material of every scene: density (kg/m³), Young's modulus (Pa), Poisson ratio, restitution,
#: sliding friction μ
DENSITY, YOUNGS, POISSON, RESTITUTION, FRICTION = 2500.0, 1e7, 0.3, 0.5, 0.5
GRAVITY = (0.0, 0.0, -9.81)  # m/s²
R_BIG = 0.05  # m: the big spheres' radius in the poured scenes
SPREAD = 0.05  # the small spheres' radii are uniform in r (1 ± SPREAD)
ROLLING = 0.1  # rolling friction μ_r of the poured scenes
BED_FRACTION = 0.6  # solid fraction assumed to size the poured scenes' box
BED_ASPECT = 0.5  # the poured bed's depth over its width (the width at least 2 big diameters)
POUR_TIME = 1.0  # s: the poured scenes' insertion rate is (small spheres) / POUR_TIME
POUR_SPEED = 1.0  # m/s: downward speed of a poured sphere
INSERT_EVERY = 0.01  # s between two insertion steps of the poured scenes
CHUNK_TIME = 0.01  # s of simulated time between two checks for rest
#: the user's scene: (count, radius in m) of the two kinds, box (m), no rolling friction
USER_SPHERES = ((1, 0.15), (11900, 0.02))
USER_BOX = (1.0, 1.0, 2.0)
POURED = {"pour3": 3.0, "pour5": 5.0, "pour10": 10.0}  # scene: size ratio
SCENES = (*POURED, "user7.5")
#: the end state compared across runs: per-sphere fields, then the contact-history records
STATE = ("gid", "pos", "vel", "omega", "history_count", "history_key", "history_spring")
#: mpiexec of the venv (the mpich wheel)
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def contact(rolling: float) -> ContactConfig:
    """The scenes' contact law with rolling friction ``rolling`` (μ_r)."""
    return ContactConfig(law="hertz", youngs_modulus=YOUNGS, poisson_ratio=POISSON,
                         restitution=RESTITUTION, friction=FRICTION, rolling_friction=rolling)


def default_dt(radii: np.ndarray) -> float:
    """pdyn's default time step (s) for spheres of ``radii`` (m) of the scenes' material:
    the shortest contact time over ``dt_safety`` or 0.2 Rayleigh times, the smaller
    (``pdyn.dynamics.contact.ContactLaw.time_step_limit``)."""
    model = ContactLaw.from_config(contact(0.0))
    mass = DENSITY * 4.0 / 3.0 * math.pi * radii**3
    return min(model.contact_time(radii, mass) / SimulationConfig().dt_safety,
               RAYLEIGH_FRACTION * model.rayleigh_time(radii, mass))


def poured_config(ratio: float, n: int, seed: int = 0, comm=None, **cfg) -> SimulationConfig:
    """A bidisperse poured packing of ``n`` spheres at size ratio ``ratio``: ``n_big`` spheres
    of radius R_BIG and the rest of radius r = R_BIG / ``ratio`` (× uniform 1 ± SPREAD), equal
    solid volumes of both kinds (n_big = round(n / (1 + ratio³)), at least 1). Walled box with
    a W × W floor, W such that the bed (solid fraction BED_FRACTION) is BED_ASPECT W deep, at
    least two big diameters. The big spheres start at rest at random places below twice the
    bed's depth (at least two big diameters; ``place_spheres``, drawn on rank 0 of ``comm``
    and broadcast) and fall to the floor; the small ones are poured over them
    (``[insertion]``) from a region spanning the floor above that, at POUR_SPEED downwards,
    rate (n − n_big) / POUR_TIME, an insertion step every INSERT_EVERY s. Hertz,
    μ = FRICTION, μ_r = ROLLING, e = RESTITUTION."""
    r_small = R_BIG / ratio
    n_big = big_count(f"pour{ratio:g}", n)
    n_small = n - n_big
    lo, hi = r_small * (1.0 - SPREAD), r_small * (1.0 + SPREAD)
    small_cube = (hi**4 - lo**4) / (4.0 * (hi - lo))  # mean r³ of the uniform radii
    solid = 4.0 / 3.0 * math.pi * (n_big * R_BIG**3 + n_small * small_cube)
    width = max((solid / (BED_FRACTION * BED_ASPECT)) ** (1.0 / 3.0), 4.0 * R_BIG)
    depth = solid / BED_FRACTION / width**2
    z_big = max(2.0 * depth, 4.0 * R_BIG)  # the big spheres start below this height
    z0 = z_big + 2.0 * hi
    top = z0 + max(0.25 * width, 20.0 * hi)
    radii = np.full(n_big, R_BIG)
    pos = _placed(radii, (width, width, z_big), seed, comm)
    every = max(int(round(INSERT_EVERY / default_dt(np.array([lo, R_BIG])))), 1)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=DENSITY),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(width, width, top)),
        insertion=InsertionConfig(region_lo=(0.0, 0.0, z0), region_hi=(width, width, top),
                                  rate=n_small / POUR_TIME, radius_min=lo, radius_max=hi,
                                  density=DENSITY, velocity=(0.0, 0.0, -POUR_SPEED),
                                  total=n_small, every=every, seed=seed),
        contact=contact(ROLLING), gravity=GRAVITY, progress=False, **cfg)


def user_config(seed: int = 0, comm=None, **cfg) -> SimulationConfig:
    """The scene of the report: USER_SPHERES at random non-overlapping places (drawn on rank 0
    of ``comm``, broadcast) in a walled USER_BOX, at rest; Hertz, μ = FRICTION, no rolling
    friction, e = RESTITUTION, gravity."""
    radii = np.concatenate([np.full(k, r) for k, r in USER_SPHERES])
    pos = _placed(radii, USER_BOX, seed, comm)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=DENSITY),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=USER_BOX), contact=contact(0.0),
        gravity=GRAVITY, progress=False, **cfg)


def _placed(radii, hi, seed, comm) -> np.ndarray:
    """``place_spheres`` in the box 0..``hi`` on rank 0 of ``comm`` (None: here), broadcast."""
    from pdyn.scenarios import place_spheres

    if comm is None or comm.rank == 0:
        pos = place_spheres(radii, np.zeros(3), np.array(hi, float), seed)
    else:
        pos = None
    return pos if comm is None else comm.bcast(pos)


def scene_config(scene: str, n: int, seed: int = 0, comm=None, **cfg) -> SimulationConfig:
    """The config of ``scene`` (one of SCENES; ``n`` spheres for the poured ones)."""
    if scene in POURED:
        return poured_config(POURED[scene], n, seed, comm, **cfg)
    if scene == "user7.5":
        return user_config(seed, comm, **cfg)
    raise ValueError(f"scene = {scene!r}: choose from {', '.join(SCENES)}")


def size_ratio(scene: str) -> float:
    return POURED.get(scene) or USER_SPHERES[0][1] / USER_SPHERES[1][1]


# ------------------------------------------------------------------ one run (any rank count)
def rms_speed(sim) -> float:
    """sqrt(2 KE / M) of the owned spheres over all ranks (m/s; 0 without spheres)."""
    h = sim.store.owned
    mass = sim.comm.allreduce_sum(float(sim.store.mass[h].sum()))
    return math.sqrt(2.0 * sim.kinetic_energy() / mass) if mass > 0 else 0.0


def poured(sim) -> bool:
    """Has the insertion (if any) put in all its spheres?"""
    ins = sim.inserter
    return ins is None or ins.inserted >= int(ins.p["total"])


def run_to_rest(sim, settle_speed: float, max_time: float) -> float:
    """Step ``sim`` in chunks of CHUNK_TIME until everything is poured and the rms speed is
    below ``settle_speed`` (m/s), or ``max_time`` (s) of simulated time; returns the wall
    time of the steps (s). The decision reads global sums: run it on one rank (their last
    bits may depend on the rank count)."""
    chunk = max(int(round(CHUNK_TIME / sim.dt)), 1)
    wall = 0.0
    while sim.time < max_time:
        sim.run(chunk)
        wall += sim.wall_time
        if poured(sim) and rms_speed(sim) < settle_speed:
            break
    return wall


def end_state(sim) -> dict | None:
    """The STATE arrays of all owned spheres sorted by gid, on rank 0 (None elsewhere); the
    records as each sphere's in gid order, concatenated (``history_count`` says how many)."""
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned], kind="stable")]
    mine = {k: s.values(k, h) for k in ("gid", "pos", "vel", "omega", "history_count")}
    recs = [s.records(k, h) for k in ("history_key", "history_spring")]
    parts = sim.comm.gather((mine, recs), root=0)
    if sim.comm.rank != 0:
        return None
    gid = np.concatenate([p[0]["gid"] for p in parts])
    order = np.argsort(gid, kind="stable")
    out = {k: np.concatenate([p[0][k] for p in parts])[order]
           for k in ("gid", "pos", "vel", "omega", "history_count")}
    for j, k in enumerate(("history_key", "history_spring")):
        pieces = []
        for p in parts:  # each sphere's records, in the rank's gid order
            ends = np.cumsum(p[0]["history_count"])
            pieces += [p[1][j][e - c:e] for c, e in zip(p[0]["history_count"], ends)]
        out[k] = np.concatenate([pieces[i] for i in order])
    return out


def packing_stats(state: dict, n_big: int) -> dict:
    """From an :func:`end_state`: spheres, the most contacts one sphere holds (records: one
    per touching contact, walls included), the mean contacts of the big spheres (ids below
    ``n_big``), the mean coordination number 2 C / N (sphere–sphere contacts C) and the
    share of spheres without a sphere contact (rattlers and not yet landed)."""
    count = state["history_count"]
    owner = np.repeat(np.arange(count.size), count)
    sphere = state["history_key"] < WALL_KEY_BASE
    per = np.bincount(owner[sphere], minlength=count.size)
    big = state["gid"] < n_big
    return {"spheres": int(count.size), "most_contacts": int(count.max(initial=0)),
            "big_contacts": float(count[big].mean()) if big.any() else 0.0,
            "mean_Z": float(sphere.sum() / max(count.size, 1)),
            "no_contact": float((per == 0).mean()) if count.size else 0.0}


def checksum(state: dict) -> str:
    """sha256 of the STATE arrays' bytes (a short way to see two states differ)."""
    h = hashlib.sha256()
    for k in STATE:
        h.update(np.ascontiguousarray(state[k]).tobytes())
    return h.hexdigest()[:16]


def big_count(scene: str, n: int) -> int:
    """The big spheres of ``scene`` (their ids are 0 … count − 1)."""
    if scene in POURED:
        return max(1, int(round(n / (1.0 + POURED[scene] ** 3))))
    return USER_SPHERES[0][0]


def worker(spec: dict, comm=None) -> dict | None:
    """One run on ``comm`` (default: the MPI world): ``spec`` names ``scene``, ``n``,
    ``seed``, ``folder`` (its output), and either ``restart`` (a checkpoint to continue to
    ``steps``) or ``steps`` (null: :func:`run_to_rest` with ``settle_speed``, ``max_time``)
    with ``checkpoint_every`` (0: none). Rank 0 returns the result (stats, timing, rms
    speed, ``state``: the :func:`end_state`); other ranks None."""
    from pdyn.parallel import get_comm
    from pdyn.restart import from_checkpoint
    from pdyn.simulation import Simulation

    comm = comm if comm is not None else get_comm()
    if spec.get("restart"):
        sim = from_checkpoint(spec["restart"], comm=comm,
                              output=OutputConfig(folder=spec["folder"]))
        start = sim.step_index
        sim.run(int(spec["steps"]) - start)
        wall = sim.wall_time
    else:
        out = OutputConfig(folder=spec["folder"], checkpoint_every=spec.get("checkpoint_every", 0))
        start = 0
        sim = Simulation(scene_config(spec["scene"], spec["n"], spec["seed"], comm, output=out),
                         comm=comm)
        if spec.get("steps"):
            sim.run(int(spec["steps"]))
            wall = sim.wall_time
        else:
            wall = run_to_rest(sim, spec["settle_speed"], spec["max_time"])
    speed = rms_speed(sim)
    state = end_state(sim)
    if comm.rank != 0:
        return None
    return {"ranks": comm.size, "steps": sim.step_index, "dt": sim.dt, "time": sim.time,
            "wall_s": wall, "steps_per_s": (sim.step_index - start) / wall,
            "rms_speed": speed, "rebuilds": sim.rebuilds,
            **packing_stats(state, big_count(spec["scene"], spec["n"])),
            "checksum": checksum(state), "state": state}


# ------------------------------------------------------------------ the driver (no MPI)
def same(a: dict, b: dict) -> bool:
    """Are two :func:`end_state` dicts the same bits (shapes, dtypes and values)?"""
    return all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape
               and a[k].tobytes() == b[k].tobytes() for k in STATE)


def job(ranks: int, spec: dict, mpiexec: str, workdir: Path, name: str) -> dict:
    """Run :func:`worker` with ``spec`` as ``mpiexec -n ranks`` (a process of its own); the
    result with its ``state``. Ranks oversubscribing the cores yield while they wait
    (MPICH's heavy yield, as ``tests/test_mpi_suite.py`` runs them)."""
    spec = {**spec, "folder": str(workdir / name), "result": str(workdir / f"{name}.npz")}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    cmd = [mpiexec, "-n", str(ranks), sys.executable, str(Path(__file__).resolve()),
           "--worker", json.dumps(spec)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"packings: {name} on {ranks} rank(s) failed (exit {res.returncode}):\n"
                         + (res.stdout + res.stderr)[-4000:])
    with np.load(spec["result"], allow_pickle=False) as f:
        state = {k: f[k] for k in STATE}
        result = json.loads(str(f["result"]))
    return {**result, "state": state}


def save_result(result: dict, path: str) -> None:
    """Rank 0's :func:`worker` result as one .npz: the state arrays and the rest as JSON."""
    state = result.pop("state")
    np.savez(path, result=json.dumps(result), **state)


def scene_row(scene: str, args, mpiexec: str, workdir: Path) -> tuple[dict, dict]:
    """All runs of one scene: to rest on ``args.ranks[0]`` ranks (that fixes the steps S), S
    steps on each other rank count (the first of them writes a checkpoint at S // 2), that
    checkpoint continued to S on ``args.ranks[0]`` ranks; the table row and the JSON record."""
    first, others = args.ranks[0], args.ranks[1:]
    base = {"scene": scene, "n": args.n, "seed": args.seed}
    ref = job(first, {**base, "steps": None, "settle_speed": args.settle_speed,
                      "max_time": args.max_time}, mpiexec, workdir, f"{scene}-r{first}")
    steps, half = ref["steps"], ref["steps"] // 2
    runs = {first: ref}
    for k, n in enumerate(others):
        runs[n] = job(n, {**base, "steps": steps, "checkpoint_every": half if k == 0 else 0},
                      mpiexec, workdir, f"{scene}-r{n}")
    ckpt = workdir / f"{scene}-r{others[0]}" / "checkpoints" / f"ckpt_{half:08d}.h5"
    again = job(first, {**base, "steps": steps, "restart": str(ckpt)}, mpiexec, workdir,
                f"{scene}-restart")
    row = {"scene": scene, "spheres": ref["spheres"], "ratio": size_ratio(scene),
           "steps": steps, "most_contacts": ref["most_contacts"],
           "big_contacts": round(ref["big_contacts"], 1), "mean_Z": round(ref["mean_Z"], 2),
           "rms_speed": ref["rms_speed"]}
    for n, r in runs.items():
        row[f"wall_s_{n}"] = round(r["wall_s"], 1)
        row[f"steps/s_{n}"] = round(r["steps_per_s"])
    for n in others:
        row[f"same_{n}"] = "yes" if same(runs[n]["state"], ref["state"]) else "NO"
    row[f"restart_{others[0]}>{first}"] = "yes" if same(again["state"], ref["state"]) else "NO"
    record = {"row": row, "runs": {str(n): {k: v for k, v in r.items() if k != "state"}
                                   for n, r in runs.items()},
              "restart": {"from_ranks": others[0], "at_step": half, "on_ranks": first,
                          **{k: v for k, v in again.items() if k != "state"}}}
    return row, record


def markdown(rows: list[dict]) -> str:
    """``rows`` as a Markdown table (floats to 4 significant digits)."""
    cols = list(rows[0])

    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", choices=SCENES, default=None,
                    help="default: all (--quick: pour3)")
    ap.add_argument("--n", type=int, default=None,
                    help="spheres of a poured scene (default 3000; --quick: 300)")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4],
                    help="rank counts; the first is the reference (default 1 2 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settle-speed", type=float, default=0.01,
                    help="m/s: at rest when the rms speed is below this (default 0.01)")
    ap.add_argument("--max-time", type=float, default=4.0,
                    help="s of simulated time at most (default 4)")
    ap.add_argument("--quick", action="store_true", help="300 spheres, ratio 1:3")
    ap.add_argument("--mpiexec", default=str(MPIEXEC), help="default: the venv's")
    ap.add_argument("--workdir", default=None,
                    help="folder for the runs' output (default: a temporary one, removed)")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:  # one run, under mpiexec
        spec = json.loads(args.worker)
        result = worker(spec)
        if result is not None:
            save_result(result, spec["result"])
        return
    if len(args.ranks) < 2 or len(set(args.ranks)) != len(args.ranks) or min(args.ranks) < 1:
        ap.error("--ranks: at least two different rank counts >= 1")
    args.scenes = args.scenes or (["pour3"] if args.quick else list(SCENES))
    args.n = args.n or (300 if args.quick else 3000)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pdyn-packings-") as tmp:
        workdir = Path(args.workdir or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        rows, records = [], []
        for scene in args.scenes:
            row, record = scene_row(scene, args, args.mpiexec, workdir)
            print(format_table([row], list(row)), flush=True)
            rows.append(row)
            records.append(record)
    total = time.perf_counter() - t0
    print()
    print(format_table(rows, list(rows[0])))
    if args.markdown:
        print()
        print(markdown(rows))
    print(f"\n{len(rows)} scene(s), {total:.0f} s in all")
    write_json(args.json, {"benchmark": "packings", "n": args.n, "ranks": args.ranks,
                           "seed": args.seed, "settle_speed": args.settle_speed,
                           "max_time": args.max_time, "seconds": total, "scenes": records})
    bad = [r["scene"] for r in rows for k, v in r.items() if v == "NO"]
    if bad:
        raise SystemExit(f"packings: not bit-identical: {', '.join(sorted(set(bad)))}")


if __name__ == "__main__":
    main()
