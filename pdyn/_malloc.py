"""Freed arrays go back to the operating system (glibc only; elsewhere nothing changes).

glibc's malloc serves a request of at least its *mmap threshold* (128 KiB at start) with a
mapping of its own and unmaps it when freed, but raises the threshold to the size of every such
block freed (up to 32 MiB): from then on arrays of that size come from the heap, whose freed
middle stays resident. A run's arrays — the store's fields, the neighbour lists, the
broad phase's, the contact history's, their temporaries at a rebuild — are such sizes, so the
heap kept the garbage of every rebuild and of every growth of a buffer (on the 97 336-sphere
dense gas 16-18 MiB of free heap at the end of 100 steps, a sixth of the run's memory).
:func:`keep_threshold` fixes the threshold (``mallopt(M_MMAP_THRESHOLD)``, which also turns off
its raising), so every large array is a mapping of its own and its pages go back when it is
freed: the resident size follows the arrays alive. Steps between rebuilds allocate no large
array, so only rebuilds pay fresh pages.
"""

from __future__ import annotations

import ctypes
import ctypes.util

#: requests of at least this many bytes get a mapping of their own (glibc's initial default)
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt parameter (malloc.h)

_done = False


def keep_threshold() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` for this process (once); False
    where there is no glibc ``mallopt``."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    _done = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return _done
