"""The one place JIT options are defined: every hot kernel is ``@njit(**JIT)`` at module level.

``cache=True`` keeps compiled kernels on disk between runs; set ``NUMBA_DISABLE_JIT=1`` to run
the kernels as plain Python (coverage, debugging).

Threaded kernels (:func:`serial_and_threaded`) loop with ``prange`` over fixed chunks of
``CHUNK`` particles and add per-chunk partial sums in chunk order afterwards, so their results
do not depend on the number of threads (nor on whether the serial or the threaded compilation
ran): each particle's own sums are sequential, and the chunks are the same on any machine.
"""

import numba
from numba import njit

JIT = {"cache": True, "nogil": True}

#: particles per task of a threaded kernel (fixed: partial sums do not depend on threads)
CHUNK = 1024
#: fewer particles than this run the serial compilation (starting threads costs ~10 µs)
THREADED_MIN = 8 * CHUNK


def serial_and_threaded(fn):
    """``fn`` (a kernel looping with ``prange``) compiled twice: serial and threaded."""
    return njit(**JIT)(fn), njit(parallel=True, **JIT)(fn)


def pick(kernels, n: int):
    """The serial or threaded compilation of ``kernels`` for ``n`` particles."""
    return kernels[1] if n >= THREADED_MIN and numba.get_num_threads() > 1 else kernels[0]


def share_cores(ranks_here: int) -> int:
    """Give each of ``ranks_here`` MPI ranks on this node an equal share of numba's threads
    (at least one); returns the threads this rank uses."""
    if ranks_here > 1:
        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // ranks_here))
    return numba.get_num_threads()
