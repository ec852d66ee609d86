"""The ghost update between rebuilds: the fields that travel every step (``GHOST_UPDATE``:
position, velocity and, with rotation, spin) of the planned ghosts, with everything a step
needs made once per ghost plan.

A :class:`GhostUpdate` is made from a ghost plan (``pdyn.parallel.ghosts``) and the ghost
handles the plan filled on this rank; it keeps, until the next plan, the rows to send to every
neighbour rank in one send matrix (peer after peer), the rows received from them in one receive
matrix, their handles, and persistent requests over those matrices (``MPI_Send_init`` /
``MPI_Recv_init``: a step starts them, no request is made again; [MPI40] §3.9). A step is
:meth:`GhostUpdate.start` — one gather of every sent row (the periodic shift added), the
requests started, this rank's images of its own particles copied — and, after the caller's
reduction, :meth:`GhostUpdate.finish` — wait, one scatter of every received row into its ghost;
``free()`` releases the requests (so does dropping the update, or the end of the process).
The rows and their order are the plan's, so every ghost gets exactly the bits it got before.
"""

from __future__ import annotations

import weakref

import numpy as np


def _rows(parts) -> tuple[np.ndarray, list[slice]]:
    """The concatenation of the int64 arrays ``parts`` and the slice of each in it."""
    bounds = np.cumsum([0] + [len(p) for p in parts])
    rows = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    return np.ascontiguousarray(rows), [slice(int(a), int(b))
                                        for a, b in zip(bounds[:-1], bounds[1:])]


class GhostUpdate:
    """The per-step ghost update of one plan on one rank (see the module docstring).

    ``plan`` is the :class:`~pdyn.parallel.ghosts.GhostPlan`, ``recv_handles[p]`` the ghost
    handles filled from rank ``p`` (this rank's own images under its own rank), ``peers`` the
    neighbour ranks (every one posts the matching requests), ``packing`` the
    :class:`~pdyn.particles.Packing` of the ``GHOST_UPDATE`` fields, ``tag`` the message tag.
    """

    def __init__(self, comm, plan, recv_handles: dict, peers: list[int], packing, tag: int):
        self.comm, self.packing, self.shifts = comm, packing, plan.shifts
        self.peers = list(peers)
        parts = [plan.part(p) for p in self.peers]
        self.send_rows, send_at = _rows([h for h, _ in parts])
        self.send_shift, _ = _rows([s for _, s in parts])
        self.recv_rows, recv_at = _rows([recv_handles[p] for p in self.peers])
        self.own_src, self.own_shift = (np.ascontiguousarray(a, np.int64)
                                        for a in plan.part(comm.rank))
        self.own_dst = np.ascontiguousarray(recv_handles[comm.rank], np.int64)
        self.send = packing.empty(len(self.send_rows))
        self.recv = packing.empty(len(self.recv_rows))
        self.requests = []
        self.bytes = 0  # payload sent a step (B)
        self.messages = 0  # messages sent a step
        for a, width in enumerate((packing.width_f, packing.width_i)):
            if not width:
                continue
            self.requests += comm.persistent(
                self.peers, {p: self.send[a][sl] for p, sl in zip(self.peers, send_at)},
                {p: self.recv[a][sl] for p, sl in zip(self.peers, recv_at)}, tag + 10 * a)
            self.bytes += self.send[a].nbytes
            self.messages += len(self.peers)
        # freed with the update, or at exit before MPI finalises (it warns of requests left)
        self.free = weakref.finalize(self, comm.free, self.requests)

    def start(self, store) -> None:
        """Gather the rows to send, start the messages, copy this rank's own images."""
        packing = self.packing
        if len(self.send_rows):
            packing.pack(store, self.send_rows, self.send_shift, self.shifts, out=self.send)
        self.comm.start(self.requests)
        if len(self.own_src):
            packing.copy(store, self.own_src, self.own_dst, self.own_shift, self.shifts)

    def finish(self, store) -> None:
        """Wait for the messages; write the received rows into their ghosts."""
        self.comm.wait(self.requests)
        if len(self.recv_rows):
            self.packing.write(store, self.recv_rows, *self.recv)
