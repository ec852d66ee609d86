"""Single-particle benchmark runs and their closed-form solutions ([ChungOoi2011]), at pdyn's
default time step: used by the validation tests and by ``benchmarks/validation.py`` (plots).

One sphere against a floor wall (a half-space of the sphere's material, so E* = E/(2(1 − ν²))
and R* = r, m* = m), or two spheres, with Hertz–Mindlin contacts (``pdyn.dynamics.friction``):

* normal elastic impact: maximum overlap δ_m = (15 m* v² / (16 E* √R*))^{2/5}, peak force
  F_m = 4/3 E* √R* δ_m^{3/2}, contact duration t_c = 2.868 (m*² / (R* E*² v))^{1/5}
  ([ChungOoi2011] tests 1–2, Hertz's solution);
* oblique impact at incident angle θ (from the normal) with speed v: in gross sliding
  (tan θ ≥ 7/2 μ (1 + e)) the tangential speed drops by μ (1 + e) v_n and the spin becomes
  ω r = 5/2 μ (1 + e) v_n; at smaller angles the rigid-body limit ends rolling, v_t' = ω r
  = 5/7 v_t, which the tangential compliance of Mindlin's contact modifies (Maw, Barber and
  Fawcett's solution, [ChungOoi2011] test 4 and the tests with spin); the plots show both
  regimes.

Units: SI (m, kg, s, Pa).
"""

from __future__ import annotations

import math

import numpy as np

from .config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from .simulation import Simulation

#: the material of the runs: a glass-like sphere (E, ν, ρ, radius)
GLASS = {"youngs_modulus": 4.8e10, "poisson_ratio": 0.2, "density": 2800.0, "radius": 0.01}


def effective(material=GLASS) -> dict:
    """E*, R*, m* of a sphere of ``material`` on a wall of the same material."""
    r = material["radius"]
    nu = material["poisson_ratio"]
    return {"E": material["youngs_modulus"] / (2.0 * (1.0 - nu * nu)), "R": r,
            "m": material["density"] * 4.0 / 3.0 * math.pi * r**3}


def hertz_impact(v: float, material=GLASS) -> dict:
    """Hertz's normal impact at speed ``v`` (m/s): ``overlap`` (m), ``force`` (N),
    ``duration`` (s)."""
    e = effective(material)
    d = (15.0 * e["m"] * v * v / (16.0 * e["E"] * math.sqrt(e["R"]))) ** 0.4
    return {"overlap": d, "force": 4.0 / 3.0 * e["E"] * math.sqrt(e["R"]) * d**1.5,
            "duration": 2.868 * (e["m"] ** 2 / (e["R"] * e["E"] ** 2 * v)) ** 0.2}


def on_floor(velocity, omega=(0.0, 0.0, 0.0), *, friction=0.0, restitution=1.0,
             law="hertz", gap=0.0, gravity=(0.0, 0.0, 0.0), material=GLASS) -> Simulation:
    """One sphere of ``material`` with its lowest point ``gap`` (m) above a floor wall
    (periodic in x and y), at the default time step."""
    r = material["radius"]
    cfg = SimulationConfig(
        contact=ContactConfig(law=law, youngs_modulus=material["youngs_modulus"],
                              poisson_ratio=material["poisson_ratio"], friction=friction,
                              restitution=restitution),
        box=BoxConfig(lo=(-1.0, -1.0, 0.0), hi=(1.0, 1.0, 1.0),
                      boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=[[0.0, 0.0, r + gap]], radii=[r],
                                  velocities=[velocity], density=material["density"]),
        gravity=gravity, progress=False)
    sim = Simulation(cfg)
    if sim.contact.rotating:  # a frictionless sphere has no spin field (and keeps none)
        sim.store.omega[sim.store.owned] = omega
    return sim


def impact(velocity, omega=(0.0, 0.0, 0.0), *, record=False, **kw) -> dict:
    """A sphere hitting the floor (no gravity) from one step away: its velocity and spin after
    the contact; with ``record`` the time series of overlap and normal force during it."""
    vz = -velocity[2]
    sim = on_floor(velocity, omega, gap=0.0, **kw)
    h = sim.store.owned
    r = sim.store.radius[h][0]
    sim.store.pos[h, 2] = r + 1.5 * vz * sim.dt  # first touch half-way through the 2nd step
    t, overlap, force, touched = [], [], [], False
    for _ in range(1_000_000):
        sim.step()
        if sim.n_contacts:
            touched = True
            if record:
                t.append(sim.time)
                overlap.append(r - sim.store.pos[h, 2][0])
                force.append(sim.store.force[h, 2][0])
        elif touched:
            break
    out = {"velocity": sim.store.vel[h][0].copy(), "omega": sim.store.values("omega", h)[0],
           "dt": sim.dt, "radius": r}
    if record:
        out.update(time=np.array(t), overlap=np.array(overlap), force=np.array(force))
    return out


def oblique(theta_deg: float, speed: float = 1.0, mu: float = 0.3, e: float = 1.0,
            spin: float = 0.0) -> dict:
    """Oblique impact at ``theta_deg`` from the normal (tangential along +x), initial spin
    ``spin`` (rad/s about y): pdyn's rebound (tangential speed, spin × r) and the rigid-body
    solution (gross sliding or ending in rolling, [ChungOoi2011] test 4 and the tests with
    spin)."""
    th = math.radians(theta_deg)
    vt, vn = speed * math.sin(th), speed * math.cos(th)
    res = impact((vt, 0.0, -vn), (0.0, spin, 0.0), friction=mu, restitution=e)
    r = res["radius"]
    slip = vt - spin * r  # contact-point speed along x (ω_y r adds −x at the bottom)
    if abs(slip) >= 3.5 * mu * (1.0 + e) * vn:  # gross sliding throughout
        dv = math.copysign(mu * (1.0 + e) * vn, slip)
        vt_rigid, wr_rigid = vt - dv, spin * r + 2.5 * dv
    else:  # ends rolling: contact-point speed 0, angular momentum about it conserved
        vt_rigid = (5.0 * vt + 2.0 * spin * r) / 7.0
        wr_rigid = vt_rigid
    return {"vt": res["velocity"][0], "wr": res["omega"][1] * r, "vt_rigid": vt_rigid,
            "wr_rigid": wr_rigid, "vn_out": res["velocity"][2], "vt_in": vt, "vn_in": vn}
