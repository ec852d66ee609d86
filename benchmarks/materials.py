"""The cost of several materials (docs/contacts.md, "Several materials"): one material against
two, on the scenes of ``benchmarks/vs_lammps.py``, and one material against a checkout from
before materials existed.

**One vs two materials.** Each round is one process (1 rank) holding three simulations of the
same scene and contact model: ``one`` (no ``[[materials]]``: the law's own records, no index
read), ``two_same`` (two ``[[materials]]`` of identical values, every other sphere of the
second by id: the pass reads each pair's records from the pair table, the trajectory is
``one``'s) and ``two_diff`` (the second material is softer, 0.8 E or 0.8 k, has half the
friction and, if the scene is damped, 0.8 e, and the pair of the two has its own friction in
``[[interactions]]``: three distinct rows of the table, a trajectory of its own). After
their warm-up each steps 2 × 10 steps (as ``run()`` steps, the closing half-kick left to the
next step: ``step()``'s default closes each step and refreshes the ghosts; the chunk's length
is sized on ``one``'s: as many steps as it takes in ``--chunk-seconds``), then they are
stepped in turn, a chunk each, the order turned by one every chunk, each chunk timed,
``--chunks`` chunks. A round's ratio is
the median over the turns of a variant's chunk over ``one``'s chunk of the same turn (a rare
slow chunk — numba compiling a path first met in the timed steps, the machine busy for a
moment — weighs nothing; a rebuild of the lists falls on the same turn in ``one`` and
``two_same``, whose trajectories are the same). The table gives the median over
``--rounds`` rounds (which simulation is set up first turns with the round). Scenes
(vs_lammps.py's, smaller): ``gas`` (frictionless Hooke and Hertz with μ = 0.5,
``--gas-scale``), ``bed`` (the settled Hertz bed with μ = 0.5 and its floor,
``--bed-scale``, settled once and cached by ``benchmarks/bed.py``) and ``chute`` (linear,
μ = 0.5, a fixed rough base, ``--chute-scale``; from its flowing state, ``chute_flow.py``'s,
the same in every simulation and version: from rest, versions whose forces differ in the
last bits part into two flows).

**Before materials** (``--before TREE``): ``TREE`` is a checkout of pdyn from before
materials existed with its own venv (``TREE/.venv``): the main line just before materials
were merged is 945eb09 (the first parent of the merge 257b00c; the materials branch itself
started from the older b32d2e9, which lacks the dampings, the first-touch rule and the
fields that landed beside it). Per round and scene, this script serves the one-material
simulation from two processes at once, one with this venv's Python (this checkout's pdyn)
and one with TREE's (its pdyn; the same scene code, this script's and vs_lammps.py's): each
sets up, compiles, warms up and steps 2 × 10 steps, then steps a chunk (sized on this
checkout's side) when told and answers with the time; the driver tells them in turn (the
order swapped every chunk, the set-up order every round), so a slow spell of the shared
machine falls on both alike. ``now/before`` is the median over rounds of a round's median
chunk ratio. ``--now TREE2`` serves the "now" side from another checkout with its venv
instead of this one (no one-vs-two rounds): two commits of the main line against each other,
as in a bisect of a slowdown (the scene code stays this script's: the checkouts' pdyn must
run it).

**Bytes per sphere**: the itemsize of the particle field ``material`` (``pdyn.particles``).

    python benchmarks/materials.py                     # one vs two materials, 3 rounds
    git worktree add ../pdyn-old 945eb09 && (cd ../pdyn-old && python -m venv .venv &&
        .venv/bin/pip install -e .)
    python benchmarks/materials.py --before ../pdyn-old --doc docs/contacts.md
    python benchmarks/materials.py --now ../pdyn-a --before ../pdyn-b --scenes gas-hertz
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bed as bed_scene  # noqa: E402
import vs_lammps  # noqa: E402
from _common import STARTED, command_line, write_doc_block, write_json  # noqa: E402

VARIANTS = ("one", "two_same", "two_diff")
#: (name, vs_lammps scene, law, μ)
SCENES = (("gas-hooke", "gas", "hooke", 0.0), ("gas-hertz", "gas", "hertz", 0.5),
          ("bed", "bed", "hertz", 0.5), ("chute", "chute", "hooke", 0.5))


def scene_args(args, scene: str, law: str, mu: float) -> SimpleNamespace:
    """vs_lammps.py's arguments for ``scene`` at this benchmark's scale."""
    scale = {"gas": args.gas_scale, "bed": args.bed_scale, "chute": args.chute_scale}[scene]
    return SimpleNamespace(scene=scene, law=law, friction=mu, scale=scale, steps=10**6,
                           chunks=args.chunks, chunk_seconds=args.chunk_seconds,
                           warmup=args.warmup, solid_fraction=0.3, seed=0, settle_friction=None,
                           damping="tangent", pdyn_config="",
                           flow_time=vs_lammps.chute_flow.FLOW_TIME)


def materials(variant: str, contact) -> dict:
    """The ``[[materials]]`` and ``[[interactions]]`` of ``variant`` over ``contact``'s values
    (``one``: none; ``two_diff``: the module docstring)."""
    if variant == "one":
        return {}
    from pdyn.config import InteractionConfig, MaterialConfig

    if variant == "two_same":
        return {"materials": (MaterialConfig(name="a"), MaterialConfig(name="b"))}
    a, b = {}, {"friction": 0.5 * contact.friction}
    if contact.restitution is not None and contact.restitution < 1.0:
        b["restitution"] = 0.8 * contact.restitution  # an elastic gas stays elastic
    if contact.stiffness is not None:
        a["stiffness"], b["stiffness"] = contact.stiffness, 0.8 * contact.stiffness
    else:
        b["youngs_modulus"] = 0.8 * contact.youngs_modulus
    return {"materials": (MaterialConfig(name="a", **a), MaterialConfig(name="b", **b)),
            "interactions": (InteractionConfig(materials=("a", "b"),
                                               friction=0.75 * contact.friction),)}


def simulation(a: SimpleNamespace, variant: str, comm, tiny: bool = False):
    """The simulation of vs_lammps.py's scene ``a`` with the materials of ``variant``, every
    other sphere (by id) of the second (``tiny``: a small one, to compile the kernels)."""
    from pdyn.config import ContactConfig
    from pdyn.simulation import Simulation

    if a.scene == "bed":
        p = vs_lammps.bed_parameters(a)
        bed = bed_scene.settled_bed(p)
        keep = np.argsort(bed["positions"][:, 2])[:300] if tiny else slice(None)
        cfg = bed_scene.pdyn_config(p, bed["positions"][keep], bed["radii"][keep], bed["top"],
                                    a.friction, a.steps, dt=bed["dt"])
        extra = materials(variant, cfg.contact)
        if extra:
            n = len(cfg.particles.radii)
            cfg = cfg.with_(**extra, particles=replace(
                cfg.particles, material=["a", "b"] * (n // 2) + ["a"] * (n % 2)))
        return Simulation(cfg, comm=comm)
    if a.scene == "chute":
        from pdyn.config import OutputConfig, SimulationConfig

        chute = vs_lammps.chute_parameters(SimpleNamespace(**{**vars(a), "scale": 0.1})
                                           if tiny else a)
        contact = vs_lammps.chute_contact(a, a.friction, chute)
        scene = (chute["scene"] if tiny else
                 vs_lammps.chute_flow.flowing_scene(*vs_lammps.flowing_chute(a)))
        cfg = SimulationConfig(scene="chute", steps=a.steps, progress=False,
                               output=OutputConfig(snapshot_every=0), contact=contact,
                               initial_overlap="allow", **materials(variant, contact))
    else:
        scale = 0.01 if tiny else a.scale
        cfg = vs_lammps.pdyn_gas(a, a.friction, scale, a.steps)
        scene = vs_lammps.gas_scene(a, scale, materialise=True)
        contact = cfg.contact or ContactConfig(**scene.contact)
        cfg = cfg.with_(contact=contact, **materials(variant, contact))
    if variant != "one":
        scene = replace(scene, material=(np.arange(len(scene)) % 2).astype(np.uint8))
    return Simulation(cfg, comm=comm, scene=scene)


def chunk_of(seconds: float, steps: int, target: float) -> int:
    """Steps of a chunk of ``target`` seconds at ``seconds`` per ``steps`` steps."""
    return max(1, round(target * steps / max(seconds, 1e-9)))


def paired(a: SimpleNamespace, first: int) -> dict:
    """One round (module docstring): the three variants set up from ``VARIANTS[first]`` on,
    warmed up, then stepped in turn by chunks; each variant's summed chunk time (s)."""
    from pdyn.parallel import get_comm

    comm = get_comm()
    order = VARIANTS[first:] + VARIANTS[:first]
    for v in order:
        simulation(a, v, comm, tiny=True).run(vs_lammps.COMPILE_STEPS)
    sims = {}
    for v in order:
        sims[v] = simulation(a, v, comm)
        sims[v].run(a.warmup)
    spent = {v: [] for v in VARIANTS}

    def steps(v, n):
        comm.barrier()
        t0 = time.perf_counter()
        for _ in range(n):  # as run() steps: the closing half-kick left to the next step
            sims[v].step(close=False)
        return comm.allreduce_max(time.perf_counter() - t0)

    calibration = {v: min(steps(v, 10) for _ in range(2)) for v in order}  # all in step
    chunk = chunk_of(calibration["one"], 10, a.chunk_seconds)
    for turn in range(a.chunks):
        for v in order[turn % 3:] + order[:turn % 3]:
            spent[v].append(steps(v, chunk))
    return {"chunks": spent, "chunk": chunk, "particles": int(sims["one"].summary()["particles"]),
            "contacts": {v: int(sims[v].n_contacts) for v in VARIANTS}}


def chunk_ratio(a: list, b: list) -> float:
    """The median over turns of chunk ``a`` over chunk ``b``."""
    return statistics.median(x / y for x, y in zip(a, b))


def run_round(args, name: str, a: SimpleNamespace, first: int) -> dict:
    """One round of scene ``name`` in its own process (this script's ``--worker``)."""
    cmd = [sys.executable, __file__, "--worker", json.dumps(vars(a)), "--first", str(first)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{name} round failed (exit {r.returncode}):\n{r.stderr[-2000:]}")


def serve(a: SimpleNamespace) -> None:
    """``--serve``: the one-material simulation of scene ``a`` set up, compiled and warmed up
    (``READY <spheres>``), then per line ``n`` read, ``n`` steps timed (``TIME <s>``)."""
    from pdyn.parallel import get_comm

    comm = get_comm()
    simulation(a, "one", comm, tiny=True).run(vs_lammps.COMPILE_STEPS)
    sim = simulation(a, "one", comm)
    sim.run(a.warmup)
    print(f"READY {int(sim.summary()['particles'])}", flush=True)
    for line in sys.stdin:
        t0 = time.perf_counter()
        for _ in range(int(line)):
            sim.step(close=False)  # as run() steps
        print(f"TIME {time.perf_counter() - t0!r}", flush=True)


def _answer(proc, word: str) -> str:
    """The rest of the next line of ``proc`` that starts with ``word``."""
    for line in proc.stdout:
        if line.startswith(word + " "):
            return line.split(" ", 1)[1]
    raise RuntimeError(f"{proc.args[0]} --serve stopped (exit {proc.wait()}; its errors "
                       "above)")


def before_round(args, tree: Path, a: SimpleNamespace, first: int) -> dict:
    """One round of now (this checkout, or ``args.now``'s) against ``tree`` (module
    docstring): each side's summed chunk times (s) and its sphere count; ``first``: which
    side is set up first (0: now)."""
    pythons = tuple(str(t / ".venv" / "bin" / "python") if t else sys.executable
                    for t in (args.now, tree))
    procs = [None, None]
    for side in (first, 1 - first):
        procs[side] = subprocess.Popen(
            [pythons[side], __file__, "--serve", json.dumps(vars(a))], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        n = int(_answer(procs[side], "READY"))
    def steps(side, k):
        procs[side].stdin.write(f"{k}\n")
        procs[side].stdin.flush()
        return float(_answer(procs[side], "TIME"))

    calibration = [min(steps(side, 10) for _ in range(2)) for side in (0, 1)]
    chunk = chunk_of(calibration[0], 10, a.chunk_seconds)
    spent = [[], []]
    for turn in range(a.chunks):
        for side in ((0, 1) if turn % 2 == 0 else (1, 0)):
            spent[side].append(steps(side, chunk))
    for p in procs:
        p.stdin.close()
        p.wait(timeout=60)
    return {"now": spent[0], "before": spent[1], "particles": n, "chunk": chunk}


def material_bytes() -> int:
    """Bytes per sphere of the particle field ``material``."""
    from pdyn.particles import FIELDS

    return int(np.dtype(FIELDS["material"].dtype).itemsize)


def _name(tree) -> str:
    """The checkout ``tree``'s commit: its short hash and subject (60 characters)."""
    return subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()[:60]


def markdown(rows: list, before: list, args) -> str:
    """The tables of the docs page, with the command and the day."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    out = [f"`{command_line()}` ({STARTED.date().isoformat()}, 1 rank, median of "
           f"{args.rounds} rounds; load average at the end {load}); the material index: "
           f"{material_bytes()} byte per sphere."]
    if rows:
        out += ["", "| scene | spheres | steps | one (ns/sphere-step) | two_same / one | "
                "two_diff / one |", "|---|---|---|---|---|---|"]
        out += [f"| {r['scene']} | {r['particles']} | {r['steps']} | {r['one_ns']:.0f} | "
                f"{r['two_same']:.3f} | {r['two_diff']:.3f} |" for r in rows]
    if before:
        now = f"`{_name(args.now)}`" if args.now else "One material"
        out += ["", f"{now} against the checkout of `{_name(args.before)}`"
                + ("" if args.now else " (the commit before materials)") + ":", "",
                "| scene | spheres | steps | now (ns/sphere-step) | before | now / before |",
                "|---|---|---|---|---|---|"]
        out += [f"| {r['scene']} | {r['particles']} | {r['steps']} | {r['now_ns']:.0f} | "
                f"{r['before_ns']:.0f} | {r['now_vs_before']:.3f} |" for r in before]
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", nargs="+", default=[s[0] for s in SCENES],
                   choices=[s[0] for s in SCENES])
    p.add_argument("--gas-scale", type=float, default=0.1)
    p.add_argument("--bed-scale", type=float, default=0.05)
    p.add_argument("--chute-scale", type=float, default=1.0)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--chunks", type=int, default=40, help="timed chunks per simulation")
    p.add_argument("--chunk-seconds", type=float, default=0.05, help="a chunk's length")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", help="a checkout from before materials, with its .venv")
    p.add_argument("--now", type=lambda x: Path(x).resolve(), help="a checkout with its .venv "
                   "timed against --before instead of this one (a bisect); no one-vs-two rounds")
    p.add_argument("--timeout", type=float, default=1200)
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--doc", help="rewrite the materials_speed block of this markdown file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--serve", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        serve(SimpleNamespace(**json.loads(args.serve)))
        return
    if args.worker:
        res = paired(SimpleNamespace(**json.loads(args.worker)), args.first)
        print("RESULT " + json.dumps(res), flush=True)
        return
    if args.now and not args.before:
        p.error("--now needs --before (the checkout it is timed against)")
    scenes = [s for s in SCENES if s[0] in args.scenes]
    tree = Path(args.before).resolve() if args.before else None
    runs, old = {}, {}
    for rnd in range(args.rounds):
        for name, scene, law, mu in scenes:
            a = scene_args(args, scene, law, mu)
            if not args.now:
                res = run_round(args, name, a, rnd % 3)
                runs.setdefault(name, []).append(res)
                c = res["chunks"]
                print(f"round {rnd + 1} {name}: two_same/one "
                      f"{chunk_ratio(c['two_same'], c['one']):.3f}, two_diff/one "
                      f"{chunk_ratio(c['two_diff'], c['one']):.3f}", flush=True)
            if tree:
                res = before_round(args, tree, a, rnd % 2)
                old.setdefault(name, []).append(res)
                print(f"round {rnd + 1} {name}: now/before "
                      f"{chunk_ratio(res['now'], res['before']):.3f}", flush=True)
    rows, before = [], []
    for name, *_ in scenes:
        rs = runs.get(name)  # (none with --now)
        if rs:
            n = rs[0]["particles"]
            rows.append({"scene": name, "particles": n, "steps": args.chunks * rs[0]["chunk"],
                         "one_ns": statistics.median(statistics.median(r["chunks"]["one"])
                                                     / r["chunk"] for r in rs) / n * 1e9,
                         **{v: statistics.median(chunk_ratio(r["chunks"][v], r["chunks"]["one"])
                                                 for r in rs) for v in VARIANTS[1:]}})
        if tree:
            ps = old[name]
            before.append({"scene": name, "particles": ps[0]["particles"],
                           "steps": args.chunks * ps[0]["chunk"],
                           **{f"{k}_ns": statistics.median(statistics.median(q[k]) / q["chunk"]
                                                           for q in ps)
                              / ps[0]["particles"] * 1e9 for k in ("now", "before")},
                           "now_vs_before": statistics.median(chunk_ratio(q["now"], q["before"])
                                                              for q in ps)})
    text = markdown(rows, before, args)
    print("\n" + text)
    write_json(args.json, {"benchmark": "materials", "rows": rows, "before": before,
                           "runs": runs, "before_runs": old})
    if args.doc:
        write_doc_block(args.doc, "materials_speed", text)


if __name__ == "__main__":
    main()
