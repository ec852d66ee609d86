"""Insertion on several ranks: the time-averaged imbalance of a pour. (The same spheres, with
the same global ids, poured in on 2 and 4 ranks as on 1, the whole trajectory — outlet
included — the 1-rank one bit for bit: ``test_same_bits.py``.)"""

import numpy as np
import pytest

from pdyn.simulation import Simulation

from .scenes import heap_pour

pytestmark = pytest.mark.mpi


def test_time_averaged_imbalance_follows_the_poured_count(comm):
    """A pour into blocks stacked along z (the spheres land in the bottom rank's): the
    time-averaged owned imbalance is the mean over the steps of max/mean of the owned counts
    of that step, the mean from the count present (it was taken from the initial count, 0,
    and read 1.00)."""
    cfg = heap_pour(blocks=(1, 1, 4), balance_every=0)
    sim = Simulation(cfg, comm=comm)
    ratios = []
    for _ in range(400):
        owned = comm.allgather(int(sim.store.owned.size))
        mean = sum(owned) / comm.size
        ratios.append(max(owned) / mean if mean > 0 else 1.0)
        sim.step()
    if comm.size > 1:
        assert sim.balancer.mean_imbalance == pytest.approx(np.mean(ratios), rel=1e-12)
        assert sim.balancer.mean_imbalance > 1.2
