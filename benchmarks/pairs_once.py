"""Frictional pairs evaluated once against every pair evaluated in both rows, in one process.

Two simulations of one scene of ``vs_lammps.py`` (the gas at ``--solid-fraction``, or the
settled bed) are set up alike and stepped alternately in chunks of ``--chunk`` steps (the
order swapped every chunk); in one of them the contact pass's links
(``pdyn.dynamics.contact``) send every pair to be evaluated in both of its rows, the scheme
before pairs were handed over. Both meet the shared machine's slow and fast spells alike;
the median over the chunks of the time ratio is the figure (the two runs stay bit for bit
equal, which the script checks at the end). Runs under ``mpiexec -n N`` too.

    python benchmarks/pairs_once.py --scale 0.5 --solid-fraction 0.5 --friction 0.5
    python benchmarks/pairs_once.py --scene bed --scale 0.1 --friction 0.5
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


def evaluate_in_both_rows(sim) -> None:
    """Make ``sim``'s contact pass evaluate every pair in each of its rows: links that hold
    each entry's own position (no pair handed over), set for every new build of the lists."""
    model = sim.contact
    forces = model.forces

    def both(store, lists, *args, **kwargs):
        if model._links_of != (lists, lists.builds):
            model._link = np.arange(lists.entries(), dtype=np.int32)
            model._links_of = (lists, lists.builds)
        return forces(store, lists, *args, **kwargs)

    model.forces = both


def owned_state(sim) -> tuple:
    """Positions, velocities and spins of the owned spheres in gid order."""
    s = sim.store
    h = s.owned[np.argsort(s.gid[s.owned])]
    return s.pos[h], s.vel[h], s.omega[h]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", choices=("gas", "bed"), default="gas")
    p.add_argument("--scale", type=float, default=0.5)
    p.add_argument("--solid-fraction", type=float, default=0.5)
    p.add_argument("--friction", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0, help="the bed's seed")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--chunk", type=int, default=20)
    p.add_argument("--warmup", type=int, default=30)
    args = p.parse_args(argv)
    args.law = "hertz" if args.scene == "bed" else "hooke"
    args.pdyn_config, args.settle_friction = None, None
    comm = get_comm()
    vs_lammps.pdyn_sim(args, args.friction, comm, tiny=True).run(3)  # numba compiles
    sims = {"once": vs_lammps.pdyn_sim(args, args.friction, comm),
            "both": vs_lammps.pdyn_sim(args, args.friction, comm)}
    evaluate_in_both_rows(sims["both"])
    for sim in sims.values():
        sim.run(args.warmup)
    chunks = {k: [] for k in sims}
    order = list(sims)
    done = 0
    while done < args.steps:
        for k in order:
            comm.barrier()
            t0 = time.perf_counter()
            for _ in range(args.chunk):
                sims[k].step()
            chunks[k].append(comm.allreduce_max(time.perf_counter() - t0))
        order.reverse()
        done += args.chunk
    same = all(np.array_equal(a, b) for a, b in zip(*(owned_state(s) for s in sims.values())))
    same = comm.allreduce_max(0 if same else 1) == 0
    ratios = [a / b for a, b in zip(chunks["once"], chunks["both"])]
    n = sims["once"].summary()["particles"]
    if comm.rank == 0:
        ns = {k: 1e9 * sum(v) / (n * done) for k, v in chunks.items()}
        print(f"{args.scene} ({n} spheres, μ = {args.friction}, {comm.size} rank(s)), "
              f"{done} steps in chunks of {args.chunk}: once {ns['once']:.1f} ns, both "
              f"{ns['both']:.1f} ns per particle-step; once/both median "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}); "
              f"same bits: {same}")


if __name__ == "__main__":
    main()
