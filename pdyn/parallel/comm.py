"""A small communicator interface over mpi4py, and a serial stand-in for one rank.

Only the operations pdyn uses: rank/size, reductions, (all)gather, scatter, barrier, abort,
and point-to-point ``Irecv``/``Isend`` of numpy buffers with the neighbour ranks only, posted
(:meth:`MPIComm.post`; or made once and started every step, :meth:`MPIComm.persistent`) and
completed later (:meth:`MPIComm.wait`), so that other work — the step's reduction — goes on
while they travel. *What* to send is
planned by the exchange (``pdyn.parallel.exchange``); a rank's messages to itself (periodic
images) never go through MPI.
"""

from __future__ import annotations

import os
import sys

import numpy as np


class SerialComm:
    """One rank, no MPI: every collective is the identity."""

    rank = 0
    size = 1
    mpi = None
    node_size = 1  # ranks sharing this rank's node (its memory)

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

    def scatter(self, x, root=0):
        return x[0]

    def allgather(self, x):
        return [x]

    def post(self, peers, send, recv, tag):
        return []

    def wait(self, requests):
        pass

    def persistent(self, peers, send, recv, tag):
        return []

    def start(self, requests):
        pass

    def free(self, requests):
        pass

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
        self._node_size = None

    def allreduce_sum(self, x):
        """Sum of ``x`` over the ranks; a float64 array elementwise (one buffer reduction)."""
        if isinstance(x, np.ndarray):
            out = np.empty_like(x)
            self.comm.Allreduce(np.ascontiguousarray(x), out, op=self.mpi.SUM)
            return out
        return self.comm.allreduce(x, op=self.mpi.SUM)

    def allreduce_max(self, x):
        """Largest ``x`` over the ranks; a float64 array elementwise (one buffer reduction)."""
        if isinstance(x, np.ndarray):
            out = np.empty_like(x)
            self.comm.Allreduce(x, out, op=self.mpi.MAX)
            return out
        return self.comm.allreduce(x, op=self.mpi.MAX)

    def allreduce_min(self, x):
        return self.comm.allreduce(x, op=self.mpi.MIN)

    @property
    def node_size(self) -> int:
        """The ranks on this rank's node, which share its memory (collective the first time:
        MPI's shared-memory split)."""
        if self._node_size is None:
            local = self.comm.Split_type(self.mpi.COMM_TYPE_SHARED)
            self._node_size = local.Get_size()
            local.Free()
        return self._node_size

    def bcast(self, x, root=0):
        return self.comm.bcast(x, root=root)

    def gather(self, x, root=0):
        return self.comm.gather(x, root=root)

    def scatter(self, x, root=0):
        """Item ``r`` of ``x`` (given on ``root``) to rank ``r``."""
        return self.comm.scatter(x, root=root)

    def allgather(self, x):
        return self.comm.allgather(x)

    def post(self, peers, send, recv, tag):
        """Start receiving ``recv[p]`` from and sending ``send[p]`` to every rank ``p`` in
        ``peers`` (contiguous numpy buffers whose sizes both sides know, left untouched until
        :meth:`wait`); returns the requests. Every peer must post the matching pair with
        ``tag``."""
        c = self.comm
        return ([c.Irecv(recv[p], source=p, tag=tag) for p in peers]
                + [c.Isend(send[p], dest=p, tag=tag) for p in peers])

    def wait(self, requests):
        """Complete the requests of :meth:`post` (or those :meth:`start` started)."""
        self.mpi.Request.Waitall(requests)

    def persistent(self, peers, send, recv, tag):
        """The requests of :meth:`post` made once, to be started any number of times
        (:meth:`start`, then :meth:`wait`) over the same buffers, until :meth:`free`
        (``MPI_Recv_init``/``MPI_Send_init``)."""
        c = self.comm
        return ([c.Recv_init(recv[p], source=p, tag=tag) for p in peers]
                + [c.Send_init(send[p], dest=p, tag=tag) for p in peers])

    def start(self, requests):
        """Start the requests of :meth:`persistent` (all inactive)."""
        if requests:
            self.mpi.Prequest.Startall(requests)

    def free(self, requests):
        """Release the requests of :meth:`persistent` (all inactive; nothing once MPI is
        finalised)."""
        if not self.mpi.Is_finalized():
            for r in requests:
                r.Free()

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
