"""Threaded kernels: the trajectory, the contact count and the energy do not depend on the
number of threads, nor on whether the serial or the threaded compilation runs."""

import numba
import numpy as np
import pytest

import pdyn._jit
from pdyn import Simulation

from ..mpi.scenes import dense_polydisperse

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                reason="numba allows one thread here (NUMBA_NUM_THREADS)")


def _run(threads: int, threaded_min: int, monkeypatch):
    monkeypatch.setattr(pdyn._jit, "THREADED_MIN", threaded_min)
    sim = Simulation(dense_polydisperse(("periodic",) * 3, n=2500, speed=3.0, dt=1e-3))
    numba.set_num_threads(threads)  # after set-up, which shares the cores among ranks
    try:
        sim.run(100)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    h = sim.store.owned[np.argsort(sim.store.gid[sim.store.owned])]
    return sim.store.pos[h].copy(), sim.store.vel[h].copy(), sim.n_contacts, sim.elastic_energy


def test_results_do_not_depend_on_threads(monkeypatch):
    serial = _run(1, 1 << 62, monkeypatch)
    assert serial[2] > 300  # dense: many contacts
    for threads in (1, 2):
        threaded = _run(threads, 0, monkeypatch)  # chunks of 1024 rows: 3 of them here
        for a, b in zip(serial, threaded):
            np.testing.assert_array_equal(a, b)
