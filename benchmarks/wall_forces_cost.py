"""What ``--wall-forces`` adds to a step, in one process: two simulations from one checkpoint,
stepped alternately.

A settled ``drum`` (``--settle`` steps of the scene at ``--scale``, checkpointed once; or
``--checkpoint PATH``) is restarted twice: A writes the wall-force series (``[output]
wall_forces``), B writes nothing. They are stepped in chunks of ``--chunk`` steps, the order
swapped every chunk, so both meet the shared machine's slow and fast spells alike; a chunk's
time is the slowest rank's, as wall time and as the process's CPU time (which leaves out the
spells the process waits for a core: the steadier figure on a loaded machine). The figures
are the medians over chunk pairs of A's time over B's; both runs must stay bit for bit equal (the series reads the step, it never changes it), which
the script checks at the end. ``--writers S C T`` gives both runs the other writers too:
snapshots every S steps, checkpoints every C, thermo every T (issue 44's run: 5000 10000 100);
the steps a writer runs land in the same chunk of A and B, and "whole run" is A's summed chunk
times over B's, which carries what those steps cost. Runs under ``mpiexec -n N`` too.

    mpiexec -n 2 python benchmarks/wall_forces_cost.py --write-doc
    mpiexec -n 2 python benchmarks/wall_forces_cost.py --writers 5000 10000 100 --steps 20000
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_doc_block  # noqa: E402

from pdyn.config import OutputConfig, SimulationConfig  # noqa: E402
from pdyn.parallel import get_comm  # noqa: E402
from pdyn.restart import from_checkpoint  # noqa: E402
from pdyn.simulation import Simulation  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "output.md"


def settled(args, comm, folder: Path) -> Path:
    """The checkpoint of the scene run for ``args.settle`` steps (written into ``folder``)."""
    out = OutputConfig(folder=str(folder / "settle"), checkpoint_every=args.settle,
                       overwrite=True)
    sim = Simulation(SimulationConfig(scene=args.scene, scale=args.scale, output=out,
                                      progress=False), comm=comm)
    sim.run(args.settle)
    return folder / "settle" / "checkpoints" / f"ckpt_{args.settle:08d}.h5"


def owned_state(sim) -> tuple:
    """Positions and velocities of the owned spheres in gid order."""
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    return s.pos[h], s.vel[h]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="drum")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--settle", type=int, default=6000)
    p.add_argument("--checkpoint", help="start from this checkpoint instead of settling")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--chunk", type=int, default=100)
    p.add_argument("--writers", type=int, nargs=3, metavar=("SNAPSHOT", "CHECKPOINT", "THERMO"),
                   default=(0, 0, 0), help="both runs also write snapshots, checkpoints and "
                   "thermo every this many steps (0: not)")
    p.add_argument("--write-doc", action="store_true", help=f"put the table into {DOC.name}")
    p.add_argument("--block", default="wall-forces-cost",
                   help=f"the block of {DOC.name} --write-doc replaces")
    args = p.parse_args(argv)
    comm = get_comm()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(comm.bcast(tmp if comm.rank == 0 else None))
        path = Path(args.checkpoint) if args.checkpoint else settled(args, comm, folder)
        snap, ckpt, thermo = args.writers
        sims = {k: from_checkpoint(path, comm=comm, progress=False, output=OutputConfig(
            folder=str(folder / k), wall_forces=k == "A", overwrite=True, snapshot_every=snap,
            checkpoint_every=ckpt, thermo_every=thermo)) for k in "AB"}
        for sim in sims.values():
            sim.run(args.chunk)  # warm: caches loaded, lists built
        chunks = {(k, c): [] for k in sims for c in ("wall", "cpu")}
        order, done = list(sims), 0
        while done < args.steps:
            for k in order:
                comm.barrier()
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(args.chunk):
                    sims[k].step(close=False)  # as Simulation.run steps
                chunks[k, "cpu"].append(comm.allreduce_max(time.process_time() - c0))
                chunks[k, "wall"].append(comm.allreduce_max(time.perf_counter() - t0))
            order.reverse()
            done += args.chunk
        for sim in sims.values():
            sim.close_step()
        same = all(np.array_equal(a, b) for a, b in zip(*(owned_state(s) for s in
                                                          sims.values())))
        same = comm.allreduce_max(0 if same else 1) == 0
        n = sims["A"].summary()["particles"]
        comm.barrier()
    if comm.rank != 0:
        return
    cells = []
    for c in ("wall", "cpu"):
        us = {k: 1e6 * statistics.median(chunks[k, c]) / args.chunk for k in "AB"}
        ratios = [a / b for a, b in zip(chunks["A", c], chunks["B", c])]
        cells.append(f"{us['A']:.0f} | {us['B']:.0f} | {statistics.median(ratios):.3f} "
                     f"({min(ratios):.2f}–{max(ratios):.2f}) | "
                     f"{sum(chunks['A', c]) / sum(chunks['B', c]):.3f}")
    others = ("none" if not any(args.writers) else
              "snapshots/checkpoints/thermo every {}/{}/{}".format(*args.writers))
    row = (f"| {datetime.date.today()} | {args.scene} ({n} spheres), {comm.size} rank(s), "
           f"{done} steps in chunks of {args.chunk} | {others} | {os.getloadavg()[0]:.1f} | "
           + " | ".join(cells) + " |")
    print(row)
    if not same:
        sys.exit("the runs with and without the wall-force series differ")
    if args.write_doc:
        head = ("| date | scene, ranks, steps | other writers (both) | load average "
                "| A wall µs/step | B wall µs/step | A/B wall: median (range) | whole run "
                "| A CPU µs/step | B CPU µs/step | A/B CPU: median (range) | whole run |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|")
        cmd = " ".join(["python benchmarks/wall_forces_cost.py"] + (argv or sys.argv[1:]))
        write_doc_block(DOC, args.block,
                        f"`{'mpiexec -n %d ' % comm.size if comm.size > 1 else ''}{cmd}`\n\n"
                        f"{head}\n{row}")


if __name__ == "__main__":
    main()
