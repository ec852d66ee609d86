"""Handing the C heap's free pages back to the system (glibc's ``malloc_trim(0)``).

glibc serves a block of at least its *mmap threshold* with a mapping of its own, unmapped when
freed, but each time it frees such a block it raises the threshold to that block's size (up to
32 MiB; ``mallopt(3)``), so after a run's first large frees its arrays come from the heap, and
memory freed in the middle of the heap stays resident: the process keeps the freed fragments
on top of the arrays it holds. ``malloc_trim(0)`` returns every whole free page of the heap to
the system (the heap's layout and the threshold are unchanged; a page used again is a fresh
page then: a page fault). pdyn calls it where large blocks were just freed and rarely: when
the contact history's buffers grow and when it has been loaded from the particles' records
(``pdyn.dynamics.history``), so that the peak resident memory of a frictional run counts the
arrays it holds, not the heap's freed fragments. Never every step: under MPICH's UCX device
every range handed back stays recorded (a few hundred bytes) until UCX next registers memory,
which a run on one node never does (a trim a step grew such a run by kilobytes a step).
Elsewhere (no glibc ``malloc_trim``) nothing is done. What a step needs now and then (a
writer's sample, its contacts) is kept in a :class:`Scratch` for that reason.
"""

from __future__ import annotations

import ctypes

import numpy as np


def _trim():
    """glibc's ``malloc_trim`` (argument: bytes to keep at the heap's top), or None."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # no C library by that name, no trim
        return None
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim


_TRIM = _trim()


def release_free() -> bool:
    """Return the heap's whole free pages to the system; True if some were (False where the C
    library has no ``malloc_trim``)."""
    return bool(_TRIM(0)) if _TRIM is not None else False


class Scratch:
    """Arrays kept from one use to the next (by name; rows × width, or rows alone for width
    None; made anew, a quarter to spare, when short). Made afresh, an array used every few
    hundred steps would be fresh pages each time (the free pages go back at a frictional run's
    rebuilds, :func:`release_free`): in a chute run the page faults made a fields sample's
    values take four times as long."""

    def __init__(self):
        self._arrays: dict = {}

    def take(self, name: str, rows: int, width: int | None, dtype=np.float64) -> np.ndarray:
        """The first ``rows`` rows of the array ``name`` (its values whatever they were)."""
        a, tail = self._arrays.get(name), () if width is None else (width,)
        if a is None or a.shape[0] < rows or a.shape[1:] != tail or a.dtype != dtype:
            a = self._arrays[name] = np.empty((rows + rows // 4,) + tail, dtype)
        return a[:rows]
