"""Where a mesh's arrays live: built by this process and held by it (:class:`Local`, the
default: one rank, no MPI), or by another *placement* that :func:`placed` hands the build to —
``pdyn.parallel.shared.NodeShared`` builds them on one rank of a node into memory every rank
of the node maps, so a node holds one copy of a large mesh instead of one per rank. This
module knows no MPI: a placement is any object with ``arrays(key, make)`` (``make()`` builds
a ``dict`` of numpy arrays; the same ``key``, the same arrays) and ``close()``.

A placement keeps what it built by key (a mesh's file, its size, time and scale), so a config
checked twice reads its STL once.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager


class Local:
    """Arrays built and held by this process, the last :attr:`KEEP` kept by key."""

    KEEP = 16
    shared = False  # each process its own copy

    def __init__(self):
        self._kept: OrderedDict = OrderedDict()

    def arrays(self, key, make) -> dict:
        """``make()``'s arrays, or those built before for ``key``."""
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        out = make()
        self._kept[key] = out
        while len(self._kept) > self.KEEP:
            self._kept.popitem(last=False)
        return out

    def close(self) -> None:
        self._kept.clear()


_stack = [Local()]


def placed(key, make) -> dict:
    """The arrays of ``key`` (``make()``: a dict of numpy arrays) from the current placement
    (the innermost :func:`using`; else :class:`Local`)."""
    return _stack[-1].arrays(key, make)


def current_placement():
    """The placement meshes are built with now (its ``shared``: do several processes view
    one copy?)."""
    return _stack[-1]


@contextmanager
def using(placement):
    """Build meshes with ``placement`` inside the block; on leaving it normally the placement
    is closed (``close()``: shared buffers freed — collective for a node's ranks), after an
    error it is only dropped (another rank may be elsewhere: the process ends anyway)."""
    _stack.append(placement)
    try:
        yield placement
    except BaseException:
        _stack.remove(placement)
        raise
    _stack.remove(placement)
    placement.close()


__all__ = ["Local", "current_placement", "placed", "using"]
