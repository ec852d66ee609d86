"""Pairs evaluated once against every pair evaluated in both rows, in one process.

Two simulations of one scene of ``vs_lammps.py`` (the gas at ``--solid-fraction``, the
settled bed or the flowing chute; with ``--friction`` μ or frictionless, pdyn's model of
``--damping``) are set up alike and stepped alternately
in chunks of ``--chunk`` steps (the order swapped every chunk); one hands every pair of two
rows over (``ContactPass.hand_over`` True, ``pdyn.dynamics.contact``), the other evaluates
every pair in both of its rows (False), whatever ``HAND_OVER_FROM`` would choose. Both meet
the shared machine's slow and fast spells alike; the median over the chunks of the time ratio
is the figure, in wall and in CPU seconds (the two runs stay bit for bit equal, which the
script checks at the end). Runs under ``mpiexec -n N`` too. Which contacts hand their pairs
over by default, and the measurements behind it: ``HAND_OVER_FROM`` and ``CHEAP_DAMPINGS``
(``pdyn.dynamics.contact``).

    python benchmarks/pairs_once.py --scale 0.5 --solid-fraction 0.5 --friction 0.5
    python benchmarks/pairs_once.py --scene bed --scale 0.1 --friction 0
    python benchmarks/pairs_once.py --scene chute --damping mass_velocity --steps 2000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_lammps  # noqa: E402

from pdyn.parallel import get_comm  # noqa: E402


def owned_state(sim) -> tuple:
    """Positions, velocities and spins (zeros without rotation) of the owned spheres in gid
    order."""
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    return s.pos[h], s.vel[h], s.values("omega", h)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", choices=("gas", "bed", "chute"), default="gas")
    p.add_argument("--scale", type=float, default=None, help="default 0.5; the chute 1")
    p.add_argument("--solid-fraction", type=float, default=0.5)
    p.add_argument("--friction", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0, help="the bed's seed")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--chunk", type=int, default=20)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--damping", choices=("tangent", *sorted(set(vs_lammps.LEGACY.values()))),
                   default="tangent", help="pdyn's model (vs_lammps.py --damping)")
    p.add_argument("--flow-time", type=float, default=vs_lammps.chute_flow.FLOW_TIME,
                   help="the chute's flowing state (vs_lammps.py --flow-time)")
    args = p.parse_args(argv)
    args.law = "hertz" if args.scene == "bed" else "hooke"
    if args.scale is None:
        args.scale = 1.0 if args.scene == "chute" else 0.5
    args.pdyn_config, args.settle_friction = None, None
    comm = get_comm()
    vs_lammps.pdyn_sim(args, args.friction, comm, tiny=True).run(3)  # numba compiles
    sims = {"once": vs_lammps.pdyn_sim(args, args.friction, comm),
            "both": vs_lammps.pdyn_sim(args, args.friction, comm)}
    for k, sim in sims.items():
        sim.contact.hand_over = k == "once"
    for sim in sims.values():
        sim.run(args.warmup)
    chunks = {k: [] for k in sims}
    cpu = {k: [] for k in sims}
    order = list(sims)
    done = 0
    while done < args.steps:
        for k in order:
            comm.barrier()
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(args.chunk):
                sims[k].step()
            chunks[k].append(comm.allreduce_max(time.perf_counter() - t0))
            cpu[k].append(comm.allreduce_max(time.process_time() - c0))
        order.reverse()
        done += args.chunk
    same = all(np.array_equal(a, b) for a, b in zip(*(owned_state(s) for s in sims.values())))
    same = comm.allreduce_max(0 if same else 1) == 0
    ratios = [a / b for a, b in zip(chunks["once"], chunks["both"])]
    cpu_ratio = statistics.median(a / b for a, b in zip(cpu["once"], cpu["both"]))
    n = sims["once"].summary()["particles"]
    if comm.rank == 0:
        ns = {k: 1e9 * sum(v) / (n * done) for k, v in chunks.items()}
        print(f"{args.scene} ({n} spheres, μ = {args.friction}, {args.damping}, "
              f"{comm.size} rank(s)), "
              f"{done} steps in chunks of {args.chunk}: once {ns['once']:.1f} ns, both "
              f"{ns['both']:.1f} ns per particle-step; once/both median "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), CPU "
              f"{cpu_ratio:.3f}; same bits: {same}")


if __name__ == "__main__":
    main()
