"""The wall-force series' compiled kernels (``pdyn.io.wallforces``: each contact's load, the
sums per step and wall) give the bits of the numpy code they replaced, kept here as the
oracle: ``-(n + t)`` with ``np.cross`` for the loads, ``np.add.at`` in sorted order for the
sums. (The file's bytes on 1 and 2 ranks: ``tests/mpi/test_wall_forces_mpi.py``.)"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from pdyn.io.wallforces import sum_by_wall, wall_loads


def _contacts(rng, k, walls):
    """``k`` random wall contacts (forces over 16 orders of magnitude) with ``walls`` (ids)."""
    scale = 10.0 ** rng.integers(-8, 8, (k, 1))
    ids = np.column_stack((rng.integers(0, 1000, k), rng.choice(walls, k)))
    return {"id": ids, "normal_force": rng.normal(size=(k, 3)) * scale,
            "tangential_force": rng.normal(size=(k, 3)) * scale * 0.3,
            "ends": rng.normal(size=(2 * k, 3)) * 10.0}


def test_loads_are_the_numpy_loads_bit_for_bit():
    rng = np.random.default_rng(5)
    wall_ids = np.array([-1, -2, -3, -7])
    handles = np.array([9, 4, 6, 0])
    store = SimpleNamespace(pos=rng.normal(size=(10, 3)))
    c = _contacts(rng, 500, wall_ids)
    ids, load = wall_loads(c, store, wall_ids, handles)
    force = -(c["normal_force"] + c["tangential_force"])
    arm = c["ends"][1::2] - store.pos[handles[np.searchsorted(-wall_ids, -c["id"][:, 1])]]
    old = np.concatenate((force, np.cross(arm, force)), axis=1)
    assert ids is c["id"] and load.tobytes() == old.tobytes()
    empty = _contacts(rng, 0, wall_ids)
    assert wall_loads(empty, store, wall_ids, handles)[1].shape == (0, 6)


def test_sums_are_add_at_in_sorted_order_bit_for_bit():
    rng = np.random.default_rng(6)
    n, wall_ids, step_list = 3000, np.array([-1, -2, -3]), np.array([4, 5, 7])
    steps, wall = rng.choice(step_list, n), rng.choice(wall_ids, n)
    sphere = rng.permutation(n)
    for force in (rng.normal(size=(n, 6)) * 10.0 ** rng.integers(-8, 8, (n, 1)),
                  rng.normal(size=n)):
        got = sum_by_wall(steps, wall, sphere, force, wall_ids, step_list)
        old = np.zeros((3, 3) + force.shape[1:])
        order = np.lexsort((sphere, wall, steps))
        np.add.at(old, (np.searchsorted(step_list, steps[order]),
                        np.searchsorted(-wall_ids, -wall[order])), force[order])
        assert got.shape == old.shape and got.tobytes() == old.tobytes()


def test_wall_contacts_recorded_alone_write_the_same_bytes(tmp_path):
    """With friction the force pass records the tangential forces of the wall contacts alone
    for the wall-force series (sphere pairs stay handed over, evaluated once): the file and
    the trajectory are those of a pass that records every pair."""
    from pdyn.config import OutputConfig
    from pdyn.simulation import Simulation

    from ..mpi.scenes import drum_with_piston

    runs = {}
    for every in (False, True):
        folder = tmp_path / str(every)
        sim = Simulation(drum_with_piston(output=OutputConfig(
            folder=str(folder), snapshot_every=0, wall_forces=True)))
        sim.record_tangential = every  # True: every pair, as a contact network needs
        sim.run(150)
        assert sim.contact.recorded == ("all" if every else "walls")
        slid = np.abs(sim.wall_load["tangential_force"]).sum(axis=1) > 0.0
        assert slid.sum() >= 3  # wall contacts with friction, whose forces the file sums
        runs[every] = (folder / "wall_forces.csv").read_bytes(), sim.store.pos.copy()
    assert runs[False][0] == runs[True][0]
    assert np.array_equal(runs[False][1], runs[True][1])
