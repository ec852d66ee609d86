"""A small communicator interface over mpi4py, and a serial stand-in for one rank.

Only the operations pdyn uses: rank/size, reductions, (all)gather, scatter, barrier, abort,
and point-to-point ``Irecv``/``Isend`` of numpy buffers with the neighbour ranks only, posted
(:meth:`MPIComm.post`; or made once and started every step, :meth:`MPIComm.persistent`) and
completed later (:meth:`MPIComm.wait`), so that other work — the step's reduction — goes on
while they travel. *What* to send is
planned by the exchange (``pdyn.parallel.exchange``); a rank's messages to itself (periodic
images) never go through MPI.

**The watchdog** (:func:`start_watchdog`; ``pdyn.cli`` runs every command under it) ends a
job one of whose ranks stopped answering (stopped with SIGSTOP, hung, its node lost), where the
other ranks would wait in a collective for ever, silently (MPI polls: rank 0 busy-waits). Each
rank runs a daemon thread that every ``timeout / 10`` seconds (at most 10 s) sends a heartbeat
to the next rank of a ring, on a communicator of its own, and checks the heartbeats of the rank
before it: when none came for ``timeout`` seconds (the first one for :data:`FIRST_BEAT`
seconds, if longer) it prints one line naming that rank and aborts every rank
(``MPI_Abort``). The step does nothing for it (the thread sleeps between heartbeats; numba
kernels and MPI waits release the GIL): it costs nothing measurable a step. A rank that ends its
command (:meth:`Watchdog.stop`) says so with its last heartbeat, and the rank after it stops
watching it. A rank whose Python holds the GIL longer than ``timeout`` in one call counts as
not answering. ``PDYN_WATCHDOG`` (environment, seconds) sets the timeout: default
:data:`DEFAULT_TIMEOUT`, 0 turns it off. It runs only under ``mpiexec`` with more than one rank
and an MPI that provides ``MPI_THREAD_MULTIPLE``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time

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


# ------------------------------------------------------------------ the watchdog
#: the environment variable that sets the timeout (seconds; 0: off)
ENV = "PDYN_WATCHDOG"
#: seconds without a heartbeat after which a rank counts as not answering
DEFAULT_TIMEOUT = 300.0
#: the exit code of a job the watchdog aborts
EXIT_CODE = 1
#: the longest wait for a rank's first heartbeat (s; or the timeout, if longer): loading
#: numba and the kernels holds the interpreter of a rank for seconds
FIRST_BEAT = 300.0
#: heartbeats per timeout, and the longest interval between two (s)
BEATS_PER_TIMEOUT, LONGEST_INTERVAL = 10, 10.0
_BEAT, _BYE = 1, -1  # a heartbeat's payload: alive, or ending its command


def timeout_from(environ=os.environ) -> float:
    """The watchdog timeout (s) ``PDYN_WATCHDOG`` sets (0: off); raises ``ValueError`` (one
    line naming the variable and value) for anything but a number ≥ 0."""
    text = environ.get(ENV)
    if text is None or not text.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{ENV} = {text!r}: expected seconds >= 0 (0 turns the watchdog off)")
    return value


class Watchdog:
    """The heartbeat ring of an ``MPIComm`` (the module docstring); :meth:`stop` ends it
    (say goodbye, stop the thread). Collective to make (the ring's communicator is a
    duplicate)."""

    def __init__(self, comm, timeout: float):
        self.timeout = float(timeout)
        self.interval = min(LONGEST_INTERVAL, self.timeout / BEATS_PER_TIMEOUT)
        mpi = comm.mpi
        self.mpi = mpi
        self.ring = comm.comm.Dup()
        self.ring.Set_errhandler(mpi.ERRORS_RETURN)  # a failed heartbeat ends the watch only
        self.rank, size = comm.rank, comm.size
        self.after, self.before = (self.rank + 1) % size, (self.rank - 1) % size
        self._out = np.full(1, _BEAT, np.int64)
        self._bye = np.full(1, _BYE, np.int64)
        self._in = np.zeros(1, np.int64)
        self._sent: list = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pdyn-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        try:
            self._beat()
        except self.mpi.Exception:  # the ring broke (a rank ended): nothing left to watch
            pass

    def _beat(self) -> None:
        ring, heard = self.ring, time.monotonic()
        limit = max(self.timeout, FIRST_BEAT)  # until the first heartbeat arrives
        incoming = ring.Irecv(self._in, source=self.before, tag=0)
        watching = True
        try:
            while not self._done.wait(self.interval):
                self._sent = [r for r in self._sent if not r.Test()]
                self._sent.append(ring.Isend(self._out, dest=self.after, tag=0))
                while watching and incoming.Test():
                    heard, limit = time.monotonic(), self.timeout
                    watching = self._in[0] != _BYE
                    incoming = ring.Irecv(self._in, source=self.before, tag=0)
                if watching and time.monotonic() - heard > limit:
                    self._abort(time.monotonic() - heard)
        finally:
            incoming.Cancel()
            incoming.Wait()

    def _abort(self, silent: float) -> None:
        """One line naming the rank before this one, then every rank ends."""
        sys.stderr.write(f"pdyn: error: rank {self.before} has not answered for {silent:.0f} s "
                         f"(stopped or hung; watchdog timeout {ENV} = {self.timeout:g} s): "
                         "every rank is aborted\n")
        sys.stderr.flush()
        self.mpi.COMM_WORLD.Abort(EXIT_CODE)

    def stop(self) -> None:
        """End the watch: the thread stops, the next rank hears goodbye (not collective)."""
        self._done.set()
        self._thread.join()
        try:
            self.ring.Isend(self._bye, dest=self.after, tag=0).Free()
            for r in self._sent:
                r.Free()
        except self.mpi.Exception:
            pass
        self._sent = []


def start_watchdog(comm, timeout: float) -> Watchdog | None:
    """The watchdog of ``comm`` with ``timeout`` seconds (collective), or None: one rank, a
    timeout of 0, or an MPI without ``MPI_THREAD_MULTIPLE``."""
    mpi = getattr(comm, "mpi", None)
    if mpi is None or comm.size < 2 or timeout <= 0:
        return None
    if mpi.Query_thread() < mpi.THREAD_MULTIPLE:
        return None
    return Watchdog(comm, timeout)
