"""Measured against asked coefficient of restitution ([ChungOoi2011] test 3): one sphere hits a
floor wall at 1 m/s without gravity, at eight phases of the impact within a step, for both
laws and e from 0.1 to 1 (or the ``--asked`` values), at a given number of steps per contact
time (``dt_safety``; pdyn's default is 20). Prints the range of the measured e and the worst
relative error per (law, e), and the worst over e per ``dt_safety``: the dashpot's
discretisation error (``pdyn.dynamics.laws._dashpot``) against the time step.

    python benchmarks/restitution.py                      # the default dt only
    python benchmarks/restitution.py --dt-safety 10 14 20 40
    python benchmarks/restitution.py --asked 0.001 0.01 0.05
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_json  # noqa: E402

from pdyn.bench import format_table  # noqa: E402
from pdyn.config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig  # noqa: E402
from pdyn.simulation import Simulation  # noqa: E402

ASKED = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
#: where in a step the first touch falls (not 0: a touch exactly on a step boundary is the one
#: case the stateless first-touch test can misjudge, see pdyn/dynamics/laws.py)
PHASES = tuple((np.arange(8) + 0.5) / 8)


def rebound(law: str, e: float, phase: float, dt_safety: float = 20.0, speed: float = 1.0,
            radius: float = 0.01, youngs_modulus: float = 1e7) -> float:
    """Rebound speed / impact speed of a glass-like sphere (ρ = 2800 kg/m³, ν = 0.2) hitting a
    floor wall, its first touch ``phase`` (0..1) of a step after a step boundary."""
    cfg = SimulationConfig(
        contact=ContactConfig(law=law, youngs_modulus=youngs_modulus, poisson_ratio=0.2,
                              restitution=e),
        box=BoxConfig(lo=(-1.0, -1.0, 0.0), hi=(1.0, 1.0, 1.0),
                      boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=[[0.0, 0.0, 2 * radius]], radii=[radius],
                                  velocities=[[0.0, 0.0, -speed]], density=2800.0),
        gravity=(0.0, 0.0, 0.0), dt_safety=dt_safety, progress=False)
    sim = Simulation(cfg)  # set up out of contact: no force before the first step
    h = sim.store.owned
    sim.store.pos[h, 2] = radius + speed * sim.dt * (3 + phase)
    while not (sim.store.vel[h, 2][0] > 0 and sim.n_contacts == 0):
        sim.step()
    return float(sim.store.vel[h, 2][0] / speed)


def sweep(law: str, dt_safety: float = 20.0, asked=ASKED) -> dict:
    """Range of the measured e over :data:`PHASES` for each e in ``asked``."""
    lo, hi = [], []
    for e in asked:
        measured = [rebound(law, e, ph, dt_safety) for ph in PHASES]
        lo.append(min(measured))
        hi.append(max(measured))
    return {"asked": list(asked), "min": lo, "max": hi}


def worst(run: dict) -> float:
    """Largest |measured/asked − 1| of a :func:`sweep`."""
    return max(max(abs(a / e - 1), abs(b / e - 1))
               for e, a, b in zip(run["asked"], run["min"], run["max"]))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dt-safety", type=float, nargs="+", default=[20.0],
                   help="steps per contact time to run (pdyn's default dt: 20)")
    p.add_argument("--asked", type=float, nargs="+", default=list(ASKED),
                   help="the coefficients of restitution to ask for (default 0.1 … 1)")
    p.add_argument("--json", help="write the numbers to this JSON file")
    args = p.parse_args(argv)
    results, rows = {}, []
    for law in ("linear", "hertz"):
        for s in args.dt_safety:
            run = sweep(law, s, args.asked)
            results[f"{law}/{s:g}"] = run
            for e, a, b in zip(run["asked"], run["min"], run["max"]):
                rows.append({"law": law, "t_c/dt": f"{s:g}", "asked e": f"{e:g}",
                             "measured e": (f"{a:.4f} – {b:.4f}" if e >= 0.1
                                            else f"{a:.3g} – {b:.3g}"),
                             "worst error": f"{100 * max(abs(a / e - 1), abs(b / e - 1)):.1f} %"})
            print(f"{law}, dt = t_c/{s:g}: worst error over e {100 * worst(run):.1f} %",
                  flush=True)
    print(format_table(rows, ["law", "t_c/dt", "asked e", "measured e", "worst error"]))
    write_json(args.json, {"benchmark": "restitution", "results": results})


if __name__ == "__main__":
    main()
