"""Multi-rank tests: run with ``mpiexec -n N python -m mpi4py -m pytest --with-mpi tests/mpi``
(``tests/test_mpi_suite.py`` does so for each N of its ``ranks`` parameter). Without
``--with-mpi`` pytest-mpi skips them. A failure on any rank aborts the whole job (HOOMD's habit)
instead of leaving the other ranks waiting in a collective."""

import sys
import tempfile
import time
from pathlib import Path

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and report.when in ("setup", "call"):
        from pdyn.parallel import get_comm

        comm = get_comm()
        if comm.size > 1:
            sys.stderr.write(f"\n[rank {comm.rank}] FAILED {item.nodeid}\n{report.longreprtext}\n")
            sys.stderr.flush()
            comm.abort(1)


def idle_barrier(comm, poll: float = 0.002) -> None:
    """``comm.barrier()`` that sleeps while it waits: where rank 0 alone works (the 1-rank
    reference run, files it writes or reads), the other ranks would poll MPI at full speed
    (MPICH has no blocking wait; its heavy yield still takes a core's share on a shared or
    oversubscribed machine) and slow rank 0 down (rank 0's serial work on 4 ranks over 2
    cores: 1.6x the time with the others polling in ``Barrier``)."""
    if comm.size == 1:
        return
    request = comm.comm.Ibarrier()
    while not request.Test():
        time.sleep(poll)


@pytest.fixture(scope="module")
def comm():
    from pdyn.parallel import get_comm

    return get_comm()


@pytest.fixture
def shared_dir(comm):
    """One temporary folder, the same path on every rank."""
    path = tempfile.mkdtemp(prefix="pdyn-mpi-") if comm.rank == 0 else None
    path = Path(comm.bcast(path))
    yield path
    idle_barrier(comm)
