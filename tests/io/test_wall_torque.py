"""The torque columns of ``wall_forces.csv`` (issue 33): per configured wall the moment of the
spheres' forces on it about its point, τ = Σ (c − p) × F — a sphere resting on a plane away
from the plane's point, and a turning drum against its contacts' moments in a snapshot."""

import numpy as np
import pytest

from pdyn.config import (BoxConfig, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.io import read_snapshot, read_wall_forces
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

R, RHO, G = 0.01, 2800.0, 9.81


def test_sphere_resting_on_a_plane_off_its_point(tmp_path):
    """A sphere at rest on a floor whose point is p = (0.3, −0.2, 0): the floor's torque
    about p is (c − p) × F with c the contact point below the centre and F = (0, 0, −m g)."""
    p = np.array([0.3, -0.2, 0.0])
    mass = RHO * 4.0 / 3.0 * np.pi * R**3
    sim = Simulation(SimulationConfig(
        contact=ContactConfig(youngs_modulus=1e7, restitution=0.3),
        box=BoxConfig(lo=(-1, -1, -1), hi=(1, 1, 1), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[0.05, 0.02, R]], radii=[R], density=RHO),
        walls=[{"type": "plane", "point": p.tolist(), "normal": [0, 0, 1]}],
        gravity=(0.0, 0.0, -G), progress=False,
        output=OutputConfig(folder=str(tmp_path), wall_forces=True)))
    sim.run(4000)
    names, rows = read_wall_forces(tmp_path / "wall_forces.csv")
    assert names == ["step", "time"] + [f"wall1_{q}{a}" for q in "ft" for a in "xyz"]
    (h,) = sim.store.owned
    c = sim.store.pos[h] * [1, 1, 0]  # the contact point on the floor
    f = np.array([0.0, 0.0, -mass * G])
    last = rows[-1]
    assert last[2:5] == pytest.approx(f, abs=1e-9 * mass * G)
    assert last[5:8] == pytest.approx(np.cross(c - p, f), abs=1e-9 * mass * G)


@pytest.mark.slow  # seconds: outside the fast lane (tests/lanes.py)
def test_turning_drum_torque_is_the_sum_of_its_contacts_moments(tmp_path):
    """The drum scene (a third of it, thrown at 0.3 m/s, 6000 steps): at a snapshot's step
    the torque column of the cylinder is Σ (c − p) × (−(F_n + F_t)) over the snapshot's
    contacts with it (c: the contact point on the cylinder, p its axis point), and the
    drum's spheres resist its turning: τ·â averaged over the last 3000 steps opposes Ω (one
    step's torque is of either sign while the thrown spheres still bounce; the mean opposed
    Ω on every seed of 0–7, a single step's on 5 of 7)."""
    s = make_scene("drum", scale=1 / 3)
    v = np.random.default_rng(5).normal(0.0, 0.3, s.positions.shape)
    sim = Simulation(SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, velocities=v, radii=s.radii,
                                  density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        contact=ContactConfig(**s.contact), walls=list(s.walls), gravity=tuple(s.gravity),
        progress=False, output=OutputConfig(folder=str(tmp_path), snapshot_every=6000,
                                            wall_forces=True)))
    sim.run(6000)
    names, rows = read_wall_forces(tmp_path / "wall_forces.csv")
    snap = read_snapshot(tmp_path / "snapshots" / "snap_00006000.h5")
    c = snap["contacts"]
    on = np.flatnonzero(c["id"][:, 1] == -1)
    assert len(on) > 10
    p = snap["walls"]["point"][0]
    want = np.zeros(3)
    for k in on:  # one by one: the moments of the contacts
        force = -(c["normal_force"][k] + c["tangential_force"][k])
        want += np.cross(c["points"][2 * k + 1] - p, force)
    got = rows[-1, [names.index(f"wall1_t{a}") for a in "xyz"]]
    assert got == pytest.approx(want, rel=1e-10, abs=1e-12)
    assert rows[-3000:, names.index("wall1_tx")].mean() * s.walls[0]["angular_velocity"] < 0.0
