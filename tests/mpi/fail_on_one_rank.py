"""Raise on the last rank in the middle of a run (for the abort test): under
``mpiexec -n N python -m mpi4py -m tests.mpi.fail_on_one_rank`` the whole job must end with a
non-zero exit through ``MPI_Abort``, the other ranks not left waiting in a collective. Every rank
writes ``rank R finished step S`` to stderr after each step, so the test can count how far the
others went."""

import sys

from pdyn.parallel import get_comm
from pdyn.simulation import Simulation
from tests.mpi.scenes import dense_polydisperse

comm = get_comm()
sim = Simulation(dense_polydisperse(("periodic",) * 3, n=200), comm=comm)
for step in range(1000):
    if step == 5 and comm.rank == comm.size - 1:
        raise RuntimeError(f"injected failure on rank {comm.rank}")
    sim.step()
    # one write per line (print writes text and newline apart: the ranks' lines interleave)
    sys.stderr.write(f"rank {comm.rank} finished step {sim.step_index};\n")
    sys.stderr.flush()
print("finished without failure", file=sys.stderr)
