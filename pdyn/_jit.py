"""The one place JIT options are defined: every hot kernel is ``@njit(**JIT)`` at module level.

``cache=True`` keeps compiled kernels on disk between runs; set ``NUMBA_DISABLE_JIT=1`` to run
the kernels as plain Python (coverage, debugging).
"""

JIT = {"cache": True, "nogil": True}
