"""What coarse-grained fields cost (issue 47): a chute run with ``[[fields]]`` every 100 steps
against the same run without, and the fields of a 10⁶-sphere state on a 64³ grid against
writing its snapshot.

    python benchmarks/fields_cost.py [--rounds 5] [--steps 10000] [--turn 1000]
        [--spheres 1000000] [--json out.json] [--doc docs/validation.md]

**Chute** (:func:`chute_cost`): the ``chute`` scene (scale 1: 2177 spheres over 70 fixed, 24°)
twice in one process — without fields (A) and with a depth profile every 100 steps (B: 30
cells along z over the box, each ``kernel`` in turn, width 1 d, written every 10 samples) —
after ``warmup`` steps (the spheres landed, about 3000 contacts), a round ``steps`` steps of
each, advanced in turns of ``turn`` steps (one window: ten samples and a file), the order
swapped every turn (a load that changes on the shared machine meets both alike); B's wall
time over A's per round, and the same of the process' CPU time (the two follow the same
trajectory: fields do not touch the dynamics), the median and range over the rounds.

**10⁶ spheres** (:func:`million_cost`): ``spheres`` spheres (d = 1 mm) on a jittered simple
cubic lattice of spacing 0.995 d in a periodic cube (about three contacts a sphere counted
once), random velocities, one step; the snapshot writer and a 64³ ``[[fields]]`` writer
(each kernel, width 1 d) called at that step, each timed (the contacts they read are taken
with the step's force pass, counted in neither); ``--million-kernels`` says which kernels.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import STARTED, command_line, write_doc_block, write_json  # noqa: E402

KERNELS = ("gaussian", "lucy", "bins")


def _timed(cls, record: list):
    """Patch ``cls.__call__`` to append each call's wall time (s) to ``record``."""
    call = cls.__call__

    def timed(self, view):
        t0 = time.perf_counter()
        out = call(self, view)
        record.append((type(self).__name__, getattr(self, "config", None),
                       time.perf_counter() - t0))
        return out

    cls.__call__ = timed


def chute_cost(kernel: str, rounds: int, steps: int, angle: float = 24.0,
               warmup: int = 20000, turn: int = 1000) -> dict:
    """The chute's wall time with fields every 100 steps over without (module docstring)."""
    from pdyn import Simulation, SimulationConfig
    from pdyn.config import FieldsConfig, OutputConfig
    from pdyn.scenarios import chute

    with tempfile.TemporaryDirectory() as tmp:
        scene = chute(scale=1.0, angle=angle)
        plain = Simulation(SimulationConfig(scene="chute", progress=False), scene=scene)
        cfg = SimulationConfig(scene="chute", progress=False,
                               output=OutputConfig(folder=tmp, overwrite=True),
                               fields=(FieldsConfig(name="depth", cells=(1, 1, 30),
                                                    kernel=kernel, every=100, window=10),))
        fields = Simulation(cfg, scene=scene)
        for sim in (plain, fields):  # compiled, the spheres landed: the flow's contacts
            sim.run(warmup)
        ratios, cpu_ratios, seconds = [], [], {"A": [], "B": []}
        for _ in range(rounds):
            took, cpu = {"A": 0.0, "B": 0.0}, {"A": 0.0, "B": 0.0}
            for k, n in enumerate(_turns(steps, turn)):
                order = (("A", plain), ("B", fields)) if k % 2 == 0 else \
                    (("B", fields), ("A", plain))
                for name, sim in order:
                    t0, c0 = time.perf_counter(), time.process_time()
                    sim.run(n)
                    took[name] += time.perf_counter() - t0
                    cpu[name] += time.process_time() - c0
            for name in took:
                seconds[name].append(took[name])
            ratios.append(took["B"] / took["A"])
            cpu_ratios.append(cpu["B"] / cpu["A"])
    return {"kernel": kernel, "spheres": len(scene), "steps": steps, "rounds": rounds,
            "turn": turn,
            "ratios": ratios, "median": float(np.median(ratios)),
            "min": float(np.min(ratios)), "max": float(np.max(ratios)),
            "cpu_ratios": cpu_ratios, "cpu_median": float(np.median(cpu_ratios)),
            "seconds_A": seconds["A"], "seconds_B": seconds["B"]}


def _turns(steps: int, turn: int) -> list[int]:
    """``steps`` cut into turns of ``turn`` steps (the last one shorter)."""
    return [min(turn, steps - s) for s in range(0, steps, max(1, turn))]


def million_cost(n: int, kernels=("bins",), seed: int = 0) -> dict:
    """The fields of an ``n``-sphere state on a 64³ grid against its snapshot (module
    docstring): each writer's wall time (s)."""
    from pdyn import Simulation
    from pdyn.config import (BoxConfig, ContactConfig, FieldsConfig, OutputConfig,
                             ParticlesConfig, SimulationConfig)
    from pdyn.io.fields import FieldsWriter
    from pdyn.io.snapshot import SnapshotWriter

    d = 1e-3
    side = int(round(n ** (1 / 3)))
    a = 0.995 * d
    g = (np.arange(side) + 0.5) * a
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    rng = np.random.default_rng(seed)
    pos = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    pos += rng.uniform(-0.001 * d, 0.001 * d, pos.shape)
    length = side * a
    record: list = []
    _timed(FieldsWriter, record)
    _timed(SnapshotWriter, record)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = SimulationConfig(
            particles=ParticlesConfig(positions=pos, radii=np.full(len(pos), 0.5 * d),
                                      velocities=rng.normal(0, 1e-3, pos.shape),
                                      density=2500.0),
            box=BoxConfig(lo=(0, 0, 0), hi=(length,) * 3, boundary=("periodic",) * 3),
            contact=ContactConfig(law="linear", stiffness=1e3, restitution=0.5,
                                  friction=0.5),
            gravity=(0, 0, 0), progress=False, initial_overlap="allow",
            output=OutputConfig(folder=tmp, overwrite=True, snapshot_every=1),
            fields=tuple(FieldsConfig(name=k, cells=(64, 64, 64), kernel=k, every=1)
                         for k in kernels))
        t0 = time.perf_counter()
        sim = Simulation(cfg)
        built = time.perf_counter() - t0
        sim.run(1)
        contacts = len(sim.sphere_contacts["id"]) if sim.sphere_contacts else 0
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.h5"))
    out = {"spheres": len(pos), "contacts_rows": contacts, "build_seconds": built,
           "bytes_written": size}
    for name, config, seconds in record:
        key = "snapshot" if config is None else f"fields_{config.kernel}"
        out[key] = seconds
    return out


def table(chutes: list[dict], million: dict | None) -> str:
    out = ["| chute (2247 spheres): fields every 100 steps, kernel | steps a round, rounds, turn "
           "| wall time with / without: median (range) | CPU time with / without: median |",
           "|---|---|---|---|"] if chutes else []
    for c in chutes:
        out.append(f"| {c['kernel']} | {c['steps']}, {c['rounds']}, {c['turn']} "
                   f"| {c['median']:.3f} "
                   f"({c['min']:.3f}–{c['max']:.3f}) | {c['cpu_median']:.3f} |")
    if million:
        m = million
        out += [""] if out else []
        out += [f"| {m['spheres']:,} spheres | seconds | over the snapshot's |", "|---|---|---|",
                f"| snapshot written | {m['snapshot']:.2f} | 1 |"]
        for k in (k for k in KERNELS if f"fields_{k}" in m):
            out.append(f"| fields on 64³, {k} (sample and file) | {m[f'fields_{k}']:.2f} "
                       f"| {m[f'fields_{k}'] / m['snapshot']:.2f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--turn", type=int, default=1000, help="steps a turn of each run")
    p.add_argument("--kernels", nargs="*", default=list(KERNELS))
    p.add_argument("--spheres", type=int, default=1_000_000, help="0: no 10⁶ case")
    p.add_argument("--million-kernels", nargs="*", default=["bins"])
    p.add_argument("--json")
    p.add_argument("--doc")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    chutes = [chute_cost(k, args.rounds, args.steps, turn=args.turn) for k in args.kernels] \
        if args.rounds else []
    million = million_cost(args.spheres, args.million_kernels) if args.spheres else None
    text = table(chutes, million)
    print(text)
    write_json(args.json, {"chutes": chutes, "million": million,
                           "seconds": time.perf_counter() - t0})
    if args.doc:
        import os
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        write_doc_block(args.doc, "fields_cost",
                        f"```\n{command_line()}\n```\n\nRun {STARTED:%Y-%m-%d}, load average "
                        f"at the end {load}.\n\n" + text)


if __name__ == "__main__":
    main()
