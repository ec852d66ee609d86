"""The contact network of snapshots and the wall-force series on several ranks, with friction:
every rank writes its share, and the files hold the same numbers, bit for bit, as the 1-rank
run's."""

from dataclasses import replace

import numpy as np
import pytest

from pdyn.config import OutputConfig
from pdyn.io import read_snapshot
from pdyn.parallel import SerialComm
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import walled_pile

#: 900 steps on N ranks and on one
pytestmark = [pytest.mark.mpi, pytest.mark.slow]


def _run(folder, comm):
    cfg = walled_pile(output=OutputConfig(folder=str(folder), snapshot_every=300,
                                          wall_forces=True))
    cfg = cfg.with_(contact=replace(cfg.contact, friction=0.5, rolling_friction=0.05))
    Simulation(cfg, comm=comm).run(900)


def _network(path):
    c = read_snapshot(path)["contacts"]
    order = np.lexsort((c["id"][:, 1], c["id"][:, 0]))
    ends = c["points"].reshape(-1, 2, 3)[order]
    return [c["id"][order], ends] + [c[k][order] for k in ("force", "normal_force",
                                                            "tangential_force")]


def test_network_and_wall_forces_do_not_depend_on_ranks(comm, shared_dir):
    _run(shared_dir / "n", comm)
    if comm.rank == 0:
        _run(shared_dir / "one", SerialComm())
        for step in (300, 600, 900):
            name = f"snapshots/snap_{step:08d}.h5"
            got, want = _network(shared_dir / "n" / name), _network(shared_dir / "one" / name)
            assert len(want[0]) > 50 and want[-1].any()  # tangential forces (friction)
            for a, b in zip(got, want):
                assert np.array_equal(a, b)
            if comm.size > 1:
                assert len(list((shared_dir / "n" / "snapshots").glob(
                    f"snap_{step:08d}.r*.h5"))) == comm.size
        a = (shared_dir / "n" / "wall_forces.csv").read_text()
        b = (shared_dir / "one" / "wall_forces.csv").read_text()
        assert a == b and len(a.splitlines()) == 901
        floor = np.array([float(ln.split(",")[16]) for ln in a.splitlines()[1:]])
        assert floor.min() < 0.0  # the pile landed on the floor (z_lo_fz)
    idle_barrier(comm)


def _network_now(sim, comm):
    """Every rank's share of ``sim.contact_network()`` gathered, in id order."""
    parts = comm.allgather(sim.contact_network())
    c = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.lexsort((c["id"][:, 1], c["id"][:, 0]))
    return [c[k][order] for k in ("id", "force", "normal_force", "tangential_force")]


def test_network_between_runs_does_not_depend_on_ranks(comm, shared_dir):
    """Between two runs (the step closed: full-step velocities) the contact network read from
    Python has the 1-rank run's numbers on any rank count: the damping of a contact with a
    ghost sees the ghost's full-step velocity too."""
    cfg = walled_pile(output=OutputConfig(folder=str(shared_dir / "n")))
    cfg = cfg.with_(contact=replace(cfg.contact, friction=0.5))
    sim = Simulation(cfg, comm=comm)
    sim.record_tangential = True
    sim.run(450)
    got = _network_now(sim, comm)
    if comm.rank == 0:
        one = Simulation(cfg.with_(output=OutputConfig(folder=str(shared_dir / "one"))),
                         comm=SerialComm())
        one.record_tangential = True
        one.run(450)
        want = _network_now(one, SerialComm())
        assert len(want[0]) > 50 and want[-1].any()
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
    idle_barrier(comm)
