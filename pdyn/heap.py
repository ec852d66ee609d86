"""The one setting of the C heap pdyn changes: glibc's mmap threshold, fixed at its default.

glibc serves a block of at least the *mmap threshold* (128 KiB) with a mapping of its own and
unmaps it when it is freed, but each time it frees such a block it raises the threshold to that
block's size (up to 32 MiB; ``mallopt(3)``, "M_MMAP_THRESHOLD"). After the first rebuild of a
run, the arrays of the next ones (the broad phase's pairs, the new neighbour lists, the contact
history's hand-over, messages) therefore come from the heap, and freed memory in the middle of
the heap stays resident: the process keeps the largest sum of freed fragments it ever had on
top of the arrays it holds. Setting the threshold turns the raise off, so every large temporary
goes back to the system when freed and the peak is what is live at once (on the dense gas of
``benchmarks/memory.py`` ~40 bytes a sphere frictionless, ~120 with friction). The price is
fresh pages for a rebuild's temporaries (a few per cent of a step's CPU time on the dense
frictional gas); steps between rebuilds allocate nothing.

Elsewhere (no glibc ``mallopt``) nothing is changed.
"""

from __future__ import annotations

import ctypes

#: ``M_MMAP_THRESHOLD`` of glibc's ``malloc.h``
M_MMAP_THRESHOLD = -3
#: glibc's default threshold (bytes), kept fixed
MMAP_THRESHOLD = 128 * 1024

_fixed = False


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD`` for this process (once; later calls
    change nothing); False where the C library has no ``mallopt`` or refuses."""
    global _fixed
    if not _fixed:
        try:
            mallopt = ctypes.CDLL(None).mallopt
        except (OSError, AttributeError):
            return False
        mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        _fixed = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    return _fixed
