"""Multi-rank tests: run with ``mpiexec -n N python -m mpi4py -m pytest --with-mpi tests/mpi``
(``tests/test_mpi_suite.py`` does so for each N of its ``ranks`` parameter). Without
``--with-mpi`` pytest-mpi skips them. A failure on any rank aborts the whole job (HOOMD's habit)
instead of leaving the other ranks waiting in a collective."""

import sys
import tempfile
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
    comm.barrier()
