"""Arrays built once per node and shared by its ranks: a placement (``pdyn.mesh.place``) for
large meshes, which every rank needs whole.

The node's first rank (of ``MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)``) builds the arrays
and copies them into one MPI shared-memory window (``MPI_Win_allocate_shared``); the node's
other ranks map that window (``MPI_Win_shared_query``) and view the arrays in it, building
nothing: a node holds one copy, whatever its rank count. The arrays are the builder's bit
for bit. They are not flagged read-only (numba would compile every kernel again for
read-only arrays); nothing writes them after the copy. An error of the build (a bad file) is
raised on every rank of the node alike. While the first rank builds, the others wait idle
(a non-blocking barrier tested every few ms: MPI's blocking waits would spin a core the
builder needs). :meth:`NodeShared.close` frees the windows (collective on the node). On a
node of one rank it is a plain build.
"""

from __future__ import annotations

import time

import numpy as np

#: byte alignment of each array in a window (a cache line)
ALIGN = 64
#: seconds between tests of the non-blocking barrier while the node's first rank builds
POLL = 0.005


def _layout(arrays: dict) -> tuple[list, int]:
    """(name, dtype, shape, offset) of each array in one buffer, and its size (bytes)."""
    out, end = [], 0
    for name, a in arrays.items():
        out.append((name, a.dtype.str, a.shape, end))
        end += -(-a.nbytes // ALIGN) * ALIGN
    return out, max(end, ALIGN)


def _portable(exc: BaseException) -> tuple:
    """An exception as (class, args, attributes), which unpickle without its ``__init__``."""
    return type(exc), exc.args, dict(vars(exc))


def _rebuilt(kind, args, attrs) -> BaseException:
    exc = kind.__new__(kind)
    exc.args = args
    vars(exc).update(attrs)
    return exc


class NodeShared:
    """The placement of ``comm`` (an ``MPIComm``): arrays built by the first rank of each
    node into a shared-memory window (module docstring), kept by key; collective over the
    node's ranks (every rank asks for the same keys in the same order)."""

    def __init__(self, comm):
        self.mpi = comm.mpi
        self.node = comm.comm.Split_type(self.mpi.COMM_TYPE_SHARED)
        self.shared = self.node.Get_size() > 1  # (one rank on its node: a plain build)
        self.windows: list = []
        self._kept: dict = {}

    def arrays(self, key, make) -> dict:
        """``make()``'s arrays (a dict of numpy arrays) for ``key``: built on the node's first
        rank, views of its window on every rank of the node."""
        if key in self._kept:
            return self._kept[key]
        if self.node.Get_size() == 1:
            self._kept[key] = out = make()
            return out
        first = self.node.Get_rank() == 0
        built = message = None
        if first:
            try:
                built = {k: np.ascontiguousarray(v) for k, v in make().items()}
                message = ("ok", _layout(built))
            except Exception as exc:  # raised on every rank of the node below
                message = ("error", _portable(exc))
        self._idle_barrier()
        try:
            message = self.node.bcast(message, root=0)
        except Exception as exc:  # an attribute that cannot be pickled
            raise RuntimeError(f"sharing a mesh's build failed: {exc}") from None
        if message[0] == "error":
            raise _rebuilt(*message[1])
        layout, size = message[1]
        win = self.mpi.Win.Allocate_shared(size if first else 0, 1, comm=self.node)
        self.windows.append(win)
        buf, _ = win.Shared_query(0)
        memory = np.frombuffer(buf, np.uint8, size)
        out = {name: np.ndarray(shape, np.dtype(dtype), memory, offset)
               for name, dtype, shape, offset in layout}
        win.Fence()
        if first:
            for name, a in built.items():
                out[name][...] = a
        win.Fence()  # the copy is seen by every rank of the node
        self._kept[key] = out
        return out

    def _idle_barrier(self) -> None:
        """A barrier of the node that waits without spinning."""
        request = self.node.Ibarrier()
        while not request.Test():
            time.sleep(POLL)

    def close(self) -> None:
        """Free the windows and the node's communicator (collective on the node); the arrays
        must not be read after."""
        self._kept.clear()
        for win in self.windows:
            win.Free()
        self.windows.clear()
        self.node.Free()


__all__ = ["NodeShared"]
