"""The wall-force series' compiled pieces (``pdyn.dynamics.contact.ContactPass.wall_sums``:
each wall's loads summed exactly; ``pdyn.fields.exact.GroupSums``: sums per step and group)
against numpy and ``math.fsum`` as oracles: the sums are ``math.fsum`` of ``-(n + t)`` and
``np.cross`` of the contact network's numbers, correctly rounded whatever the order of the
terms and however they are split over ranks. (The file's bytes on 1 and 2 ranks:
``tests/mpi/test_wall_forces_mpi.py``.)"""

from __future__ import annotations

import math

import numpy as np

from pdyn.capture import contact_network
from pdyn.config import OutputConfig
from pdyn.fields.exact import GroupSums, group_totals
from pdyn.simulation import Simulation

from ..mpi.scenes import drum_with_piston


def test_wall_sums_are_fsums_of_the_contact_networks_loads(tmp_path):
    """On a turning drum with friction (tangential forces recorded for the wall contacts):
    each wall's sums are ``math.fsum`` of the forces on it, −(normal + tangential force on
    the sphere), and of their moments (c − p) × F about the wall's point, as numpy computes
    them from the contact network."""
    sim = Simulation(drum_with_piston(output=OutputConfig(folder=str(tmp_path),
                                                          wall_forces=True)))
    sim.run(150)
    c, s, lists = sim.contact, sim.store, sim.neighbours
    walls = s.walls[np.argsort(-s.gid[s.walls])]
    column = np.arange(len(walls))  # the walls' ids are −1, −2, ...
    assert np.array_equal(s.gid[walls], -1 - column)
    sums = GroupSums(6 * len(walls))
    c.wall_sums(s, lists, sim.dt, sums, column, 0)
    got = group_totals(*sums.take(), 6 * len(walls)).reshape(len(walls), 6)
    net = contact_network(c, s, lists, sim.dt, spheres=False)
    assert len(net["id"]) >= 10 and np.abs(net["tangential_force"]).sum() > 0.0
    force = -(net["normal_force"] + net["tangential_force"])
    wall_point = s.pos[walls[-1 - net["id"][:, 1]]]
    load = np.concatenate((force, np.cross(net["ends"][1::2] - wall_point, force)), axis=1)
    want = np.array([[math.fsum(load[net["id"][:, 1] == -1 - w, q].tolist()) + 0.0
                      for q in range(6)] for w in column])
    assert got.tobytes() == want.tobytes() and np.count_nonzero(want) >= 12


def test_sums_are_correctly_rounded_however_split_and_ordered():
    """Loads over 16 orders of magnitude, with exact cancellations: each (step, wall,
    component) total is ``math.fsum`` of its contacts' values (a zero +0), the same bits
    when the contacts come in another order and spread over three buffers (ranks)."""
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

    def add(sums, t, rows):
        group = (6 * column[t][rows, None] + np.arange(6)).ravel()
        sums.add(t, group, loads[t][rows].ravel())

    one = GroupSums(6 * n_walls, capacity=4)  # grows as it fills
    for t in range(n_steps):
        add(one, t, np.arange(k))
    got = group_totals(*one.take(), want.size).reshape(want.shape)
    assert got.tobytes() == want.tobytes() and one.n == 0

    ranks = [GroupSums(6 * n_walls) for _ in range(3)]
    for t in range(n_steps):
        p, rank = rng.permutation(k), rng.integers(0, 3, k)
        for r, sums in enumerate(ranks):
            add(sums, t, p[rank[p] == r])
    parts = [sums.take() for sums in ranks[::-1]]
    got = group_totals(np.concatenate([q[0] for q in parts]),
                       np.concatenate([q[1] for q in parts]), want.size).reshape(want.shape)
    assert got.tobytes() == want.tobytes()
    assert group_totals(np.zeros(0, np.int64), np.zeros(0, np.int64), 24).tobytes() == bytes(192)


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
