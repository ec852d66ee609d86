"""The resident set of a run with every writer on (snapshots, checkpoints, the wall-force
series, thermo) stays flat on several ranks: no step leaves memory behind (run under real
mpiexec at 2 and 4 ranks; also runs on 1). Under MPICH's UCX device every block of memory
handed back to the system (a ``malloc_trim``, a large array freed) stays recorded until UCX
next registers memory, which a run on one node never does: a step must not hand memory back
each time it writes."""

import contextlib
import io
import os

import pytest

from pdyn.config import OutputConfig, SimulationConfig
from pdyn.simulation import Simulation

pytestmark = pytest.mark.mpi

#: steps between the two measurements, and what they may differ by (bytes): the per-step
#: save and reload of the contact history (a ``malloc_trim`` each) left ~7 KB a step behind
STEPS, ALLOWED = 1000, 1 << 20


def resident() -> int:
    """This process's resident set (bytes, ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_resident_set_is_flat_with_every_writer_on(comm, shared_dir):
    out = OutputConfig(folder=str(shared_dir / "run"), snapshot_every=100,
                       checkpoint_every=200, thermo_every=10, wall_forces=True)
    sim = Simulation(SimulationConfig(scene="drum", scale=0.5, output=out, progress=False),
                     comm=comm)
    sizes = []
    with contextlib.redirect_stdout(io.StringIO()):  # the thermo lines
        for _ in range(3):  # settle (contacts form, buffers reach their size), then twice
            sim.run(STEPS)
            sizes.append(resident())
    grown = comm.allgather(sizes[2] - sizes[1])
    assert max(grown) < ALLOWED, f"resident set grew by {grown} bytes over {STEPS} steps"
