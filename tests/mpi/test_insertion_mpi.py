"""Insertion on several ranks: the same spheres, with the same global ids, are poured in on 1,
2 and 4 ranks (each by the rank owning its place), and the whole trajectory — outlet included —
is the 1-rank one bit for bit."""

import numpy as np
import pytest

from pdyn.config import InsertionConfig, SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.simulation import Simulation

from .scenes import gather_state

pytestmark = pytest.mark.mpi


def _heap():
    ins = InsertionConfig(region_lo=(0.3, 0.3, 1.0), region_hi=(2.5, 2.5, 2.6), rate=600.0,
                          radius_min=0.08, radius_max=0.12, velocity=(0.0, 0.0, -3.0),
                          total=250, every=25, seed=7, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(0.6, 2.8, 0.4))
    return SimulationConfig(scene="heap", scale=0.05, insertion=ins, progress=False)


def test_poured_spheres_do_not_depend_on_ranks(comm):
    sim = Simulation(_heap(), comm=comm)
    sim.run(1200)
    got = gather_state(sim)
    owners = comm.allgather(len(sim.store.owned))
    if comm.rank == 0:
        ref = Simulation(_heap(), comm=SerialComm())
        ref.run(1200)
        want = gather_state(ref)
        assert len(want[0]) > 150 and ref.inserter.removed > 0
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
        assert sim.inserter.state() == ref.inserter.state()
        if comm.size > 1:
            assert sum(n > 0 for n in owners) > 1  # spheres went to several ranks
    comm.barrier()
