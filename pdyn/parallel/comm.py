"""A small communicator interface over mpi4py, and a serial stand-in for one rank.

Only the operations pdyn uses: rank/size, reductions, barrier, abort. Point-to-point neighbour
exchange lives with the code that plans it (ghosts, migration).
"""

from __future__ import annotations

import os
import sys


class SerialComm:
    """One rank, no MPI: every collective is the identity."""

    rank = 0
    size = 1
    mpi = None

    def allreduce_sum(self, x):
        return x

    def allreduce_max(self, x):
        return x

    def allreduce_min(self, x):
        return x

    def bcast(self, x, root=0):
        return x

    def gather(self, x, root=0):
        return [x]

    def barrier(self):
        pass

    def abort(self, code: int = 1):
        sys.exit(code)


class MPIComm:
    """Thin wrapper over an mpi4py communicator."""

    def __init__(self, comm):
        from mpi4py import MPI

        self.mpi = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def allreduce_sum(self, x):
        return self.comm.allreduce(x, op=self.mpi.SUM)

    def allreduce_max(self, x):
        return self.comm.allreduce(x, op=self.mpi.MAX)

    def allreduce_min(self, x):
        return self.comm.allreduce(x, op=self.mpi.MIN)

    def bcast(self, x, root=0):
        return self.comm.bcast(x, root=root)

    def gather(self, x, root=0):
        return self.comm.gather(x, root=root)

    def barrier(self):
        self.comm.Barrier()

    def abort(self, code: int = 1):
        self.comm.Abort(code)


def _launched_by_mpi() -> bool:
    keys = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS",
            "HYDRA_CONTROL_FD", "PMI_FD")
    return any(k in os.environ for k in keys)


def get_comm():
    """MPI's world communicator when started under mpiexec with more than one rank, else the
    serial stand-in (so a plain ``pdyn run`` never initialises MPI)."""
    if not _launched_by_mpi():
        return SerialComm()
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_size() == 1:
        return SerialComm()
    return MPIComm(MPI.COMM_WORLD)
