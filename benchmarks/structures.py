"""Which broad-phase structure for which scene? Build, update and query cost, candidates and memory
of every registered structure on [Koch2020]'s ``reference``, ``inhomogeneous`` and
``very_inhomogeneous`` scenes (Sec. 4.1, Tables 1-3), measured in one run.

Per scene and structure: ``build`` (``build()`` + first ``candidate_pairs()``; lazy structures
do their work on the query), then ``--steps`` times a small random motion of every particle
(normal, ``--motion`` x radius per axis; the same sequence for every structure) followed by
``update()`` and ``candidate_pairs()``; medians of the per-step ``update`` and ``query`` times
and of their sum ``step`` are reported (lazy structures rebuild inside the query, incremental
ones inside the update or the query: compare ``step``). ``candidates`` are the finite candidate
pairs of the last query, ``contacts`` the truly overlapping pairs among them (must agree across
structures: a mismatch is flagged), ``memory`` is ``stats()["memory_bytes"]``. ``brute`` is
skipped above ``--brute-max`` particles. Timings are process CPU time by default (``--clock
wall`` for wall-clock): on a shared machine CPU time is far less disturbed by other jobs.
Each measurement runs in a forked child limited to ``--mem-limit`` GiB of extra memory: a
structure that needs more (dense grids on sparse scenes at full size) is reported as out of
memory instead of taking the machine down.

    python benchmarks/structures.py                     # scale 0.25 (2-2.5e4 particles), ~1-2 min
    python benchmarks/structures.py --full              # Koch's full sizes (10^5 particles)
    python benchmarks/structures.py --json out.json --structures zindex_sort index_sort
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdyn.bench.timing import isolated
from pdyn.broadphase import REGISTRY, make_broadphase
from pdyn.broadphase._kernels import filter_overlapping
from pdyn.scenarios import make_scene

SCENES = ("reference", "inhomogeneous", "very_inhomogeneous")
#: the clock used for every timing (set from --clock in main)
CLOCK = {"clock": time.process_time}


def _now():
    return CLOCK["clock"]()


def _extra(stats: dict) -> dict:
    skip = {"name", "candidates", "memory_bytes", "residents", "infinite"}
    return {k: v for k, v in stats.items()
            if k not in skip and isinstance(v, (int, float, str, bool))}


def measure(name, pos0, rad, steps, motion, seed):
    """One structure on one scene: build, then ``steps`` x (move, update, query)."""
    rng = np.random.default_rng(seed)
    pos = pos0.copy()
    bp = make_broadphase(name)
    t0 = _now()
    bp.build(pos, rad)
    cand = bp.candidate_pairs()
    t_build = _now() - t0
    t_upd, t_qry = [], []
    for _ in range(steps):
        pos += rng.normal(0.0, 1.0, pos.shape) * (motion * rad)[:, None]
        t0 = _now()
        bp.update(pos)
        t1 = _now()
        cand = bp.candidate_pairs()
        t2 = _now()
        t_upd.append(t1 - t0)
        t_qry.append(t2 - t1)
    st = bp.stats()
    contacts = int(filter_overlapping(cand, pos, rad).shape[0])
    step = np.add(t_upd, t_qry) if steps else np.zeros(1)
    return {
        "structure": name, "n": int(rad.shape[0]),
        "build_ms": 1e3 * t_build,
        "update_ms": 1e3 * float(np.median(t_upd)) if steps else 0.0,
        "query_ms": 1e3 * float(np.median(t_qry)) if steps else 0.0,
        "step_ms": 1e3 * float(np.median(step)),
        "candidates": int(st["candidates"]), "contacts": contacts,
        "memory_bytes": int(st["memory_bytes"]), "extra": _extra(st),
    }


def measure_isolated(limit_gib, *args):
    """:func:`measure` in a forked child with a memory limit (``pdyn.bench.timing.isolated``),
    so one structure that blows up on a scene (e.g. a dense grid with 10^8 candidates) cannot
    take the machine down."""
    return isolated(measure, *args, mem_gib=limit_gib, timeout=3600) if limit_gib \
        else measure(*args)


def warm_up(names):
    """Compile every structure's kernels (numba) on a tiny scene, including the update path."""
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 10, (300, 3))
    rad = np.full(300, 0.5)
    for name in names:
        measure(name, pos, rad, 2, 0.05, 0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.25, help="particle-count factor (Koch = 1)")
    ap.add_argument("--full", action="store_true", help="Koch's full sizes (scale 1)")
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=SCENES)
    ap.add_argument("--structures", nargs="+", default=None, help="default: all registered")
    ap.add_argument("--steps", type=int, default=20, help="move/update/query steps per run")
    ap.add_argument("--motion", type=float, default=0.05,
                    help="random displacement per step and axis, in radii (std. dev.)")
    ap.add_argument("--brute-max", type=int, default=3000, help="skip brute above this N")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: process CPU time (robust on a shared machine); wall: perf_counter")
    ap.add_argument("--mem-limit", type=float, default=4.0,
                    help="GiB of extra memory per measurement (forked child; 0: no child)")
    ap.add_argument("--json", default=None, help="write results to this JSON file")
    args = ap.parse_args(argv)
    scale = 1.0 if args.full else args.scale
    CLOCK["clock"] = time.process_time if args.clock == "cpu" else time.perf_counter
    names = args.structures or list(REGISTRY)
    for n in names:
        if n not in REGISTRY:
            ap.error(f"unknown structure {n!r} (registered: {', '.join(REGISTRY)})")
    warm_up(names)
    rows = []
    hdr = (f"{'scene':<19}{'structure':<14}{'N':>7}{'build ms':>10}{'update ms':>10}"
           f"{'query ms':>10}{'step ms':>10}{'candidates':>12}{'contacts':>10}{'memory MB':>10}")
    print(hdr)
    print("-" * len(hdr))
    for scene_name in args.scenes:
        sc = make_scene(scene_name, scale=scale, seed=args.seed)
        pos, rad = np.ascontiguousarray(sc.positions), np.ascontiguousarray(sc.radii)
        ref_contacts = None
        for name in names:
            if name == "brute" and rad.shape[0] > args.brute_max:
                continue
            r = measure_isolated(args.mem_limit, name, pos, rad, args.steps, args.motion,
                                 args.seed + 1)
            r["scene"] = scene_name
            r["structure"] = name
            if "error" in r:
                rows.append(r)
                print(f"{scene_name:<19}{name:<14}{rad.shape[0]:>7}  {r['error'][:78]}",
                      flush=True)
                continue
            if ref_contacts is None:
                ref_contacts = r["contacts"]
            r["contacts_agree"] = r["contacts"] == ref_contacts
            rows.append(r)
            flag = "" if r["contacts_agree"] else "  <-- contacts differ!"
            print(f"{scene_name:<19}{name:<14}{r['n']:>7}{r['build_ms']:>10.2f}"
                  f"{r['update_ms']:>10.2f}{r['query_ms']:>10.2f}{r['step_ms']:>10.2f}"
                  f"{r['candidates']:>12}{r['contacts']:>10}"
                  f"{r['memory_bytes'] / 2**20:>10.2f}{flag}", flush=True)
        print()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "structures", "scale": scale, "steps": args.steps,
                       "clock": args.clock,
                       "motion": args.motion, "seed": args.seed, "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
