"""The wall-force series' compiled pieces (``pdyn.dynamics.contact.ContactPass.wall_loads``:
each wall contact's load; ``pdyn.io.wallforces.LoadSums``: their sums per step and wall)
against numpy and ``math.fsum`` as oracles: the loads are ``-(n + t)`` and ``np.cross`` of
the contact network's numbers bit for bit, the sums are correctly rounded whatever the order
of the contacts and however they are split over ranks. (The file's bytes on 1 and 2 ranks:
``tests/mpi/test_wall_forces_mpi.py``.)"""

from __future__ import annotations

import math

import numpy as np

from pdyn.capture import contact_network
from pdyn.config import OutputConfig
from pdyn.io.wallforces import LoadSums, load_totals
from pdyn.simulation import Simulation

from ..mpi.scenes import drum_with_piston


def test_loads_are_the_contact_networks_bit_for_bit(tmp_path):
    """On a turning drum with friction (tangential forces recorded for the wall contacts):
    the force on the wall is −(normal + tangential force on the sphere) and its moment
    (c − p) × F about the wall's point, as numpy computes them from the contact network."""
    sim = Simulation(drum_with_piston(output=OutputConfig(folder=str(tmp_path),
                                                          wall_forces=True)))
    sim.run(150)
    c, s, lists = sim.contact, sim.store, sim.neighbours
    ids, load = (a.copy() for a in c.wall_loads(s, lists, sim.dt))
    net = contact_network(c, s, lists, sim.dt, spheres=False)
    assert len(ids) >= 10 and np.abs(net["tangential_force"]).sum() > 0.0
    force = -(net["normal_force"] + net["tangential_force"])
    wall_point = s.pos[s.walls[np.searchsorted(-s.gid[s.walls], -net["id"][:, 1])]]
    assert np.array_equal(s.gid[s.walls], np.sort(s.gid[s.walls])[::-1])  # the lookup's order
    old = np.concatenate((force, np.cross(net["ends"][1::2] - wall_point, force)), axis=1)
    assert np.array_equal(ids, net["id"]) and load.tobytes() == old.tobytes()


def test_sums_are_correctly_rounded_however_split_and_ordered():
    """Loads over 16 orders of magnitude, with exact cancellations: each (step, wall,
    component) total is ``math.fsum`` of its contacts' values (a zero +0), the same bits when the
    contacts come in another order and spread over three buffers (ranks)."""
    rng = np.random.default_rng(6)
    n_steps, n_walls, k = 4, 3, 300
    loads = [rng.normal(size=(k, 6)) * 10.0 ** rng.integers(-8, 8, (k, 1)) for _ in
             range(n_steps)]
    loads[1][-1] = -loads[1][:-1].sum(axis=0)  # a step whose total nearly cancels
    column = [rng.integers(0, n_walls, k) for _ in range(n_steps)]
    column[2][:] = 1  # a step that loads one wall alone
    want = np.zeros((n_steps, n_walls, 6))
    for t in range(n_steps):
        for w in range(n_walls):
            for c in range(6):
                want[t, w, c] = math.fsum(loads[t][column[t] == w, c].tolist()) + 0.0

    wall_ids = -1 - np.arange(n_walls)
    one = LoadSums(wall_ids, capacity=4)  # grows as it fills
    for t in range(n_steps):
        one.add(t, wall_ids[column[t]], loads[t])
    got = load_totals(*one.take(), want.shape)
    assert got.tobytes() == want.tobytes() and one.n == 0

    ranks = [LoadSums(wall_ids) for _ in range(3)]
    for t in range(n_steps):
        p, rank = rng.permutation(k), rng.integers(0, 3, k)
        for r, sums in enumerate(ranks):
            mine = p[rank[p] == r]
            sums.add(t, wall_ids[column[t][mine]], loads[t][mine])
    parts = [sums.take() for sums in ranks[::-1]]
    got = load_totals(np.concatenate([q[0] for q in parts]),
                      np.concatenate([q[1] for q in parts]), want.shape)
    assert got.tobytes() == want.tobytes()
    assert load_totals(np.zeros(0, np.int64), np.zeros(0), (2, 2, 6)).tobytes() == bytes(192)


def test_wall_contacts_recorded_alone_write_the_same_bytes(tmp_path):
    """With friction the force pass records the tangential forces of the wall contacts alone
    for the wall-force series (sphere pairs stay handed over, evaluated once): the file and
    the trajectory are those of a pass that records every pair."""
    runs = {}
    for every in (False, True):
        folder = tmp_path / str(every)
        sim = Simulation(drum_with_piston(output=OutputConfig(
            folder=str(folder), snapshot_every=0, wall_forces=True)))
        sim.record_tangential = every  # True: every pair, as a contact network needs
        sim.run(150)
        assert sim.contact.recorded == ("all" if every else "walls")
        slid = np.abs(sim.wall_contacts()["tangential_force"]).sum(axis=1) > 0.0
        assert slid.sum() >= 3  # wall contacts with friction, whose forces the file sums
        runs[every] = (folder / "wall_forces.csv").read_bytes(), sim.store.pos.copy()
    assert runs[False][0] == runs[True][0]
    assert np.array_equal(runs[False][1], runs[True][1])
