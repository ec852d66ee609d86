"""Arena allocation for the structures' njit kernels, and the one grow-and-resume protocol.

An *arena* is a numpy array (rows of any shape and dtype) plus an int64 ``state`` array. Blocks
of ``unit << c`` rows (size class ``c``) are carved from the top by a bump pointer and recycled
through one free list per class, linked through the first element of each free block; a block
that outgrows its class moves to a block of the next class and frees the old one (the pooled
vectors of [Schornbaum2009] Sec. 3.1 and 3.5, Koch's leaf and adjacency lists, [Koch2020] Sec.
3.1, Ihmsen's cell segments, [Ihmsen2011] Sec. 4.5). A dense list that only grows at the top
(swap-removal lowers ``state[TOP]``) is an arena used through :func:`bump` alone.

Grow and resume: an njit kernel never reallocates. Before it changes anything for the next
object it asks :func:`has_block` / :func:`has_room`; on "no" these record the rows it needs in
``state[NEED]`` and the kernel returns how far it got. Python then replaces every arena whose
``NEED`` is set by :func:`grown` (capacity at least doubles: amortised O(1) per row) and calls
the kernel again from there (:func:`run_resumable`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from .._jit import JIT

# state layout: bump pointer, rows a stopped kernel needs, rows of a class-0 block, free-list
# heads of the size classes (-1: empty)
TOP, NEED, UNIT, HEAD = 0, 1, 2, 3
N_CLASSES = 48
CACHE_LINE = 64


# ------------------------------------------------------------------ Python side
def aligned(shape, fill, dtype) -> np.ndarray:
    """``np.full(shape, fill, dtype)`` whose first byte is on a 64-byte cache-line boundary
    (numpy aligns to 16 only), so that records of 32 or 64 bytes never straddle two lines."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if fill == 0:  # calloc: pages the OS zeroes when first touched
        buf = np.zeros(nbytes + CACHE_LINE, np.uint8)
    else:
        buf = np.empty(nbytes + CACHE_LINE, np.uint8)
    off = (-buf.ctypes.data) % CACHE_LINE
    out = buf[off: off + nbytes].view(dtype).reshape(shape)
    if fill != 0:
        out.fill(fill)
    return out


def new_state(unit: int = 1) -> np.ndarray:
    """State of an empty arena whose class-0 blocks have ``unit`` rows."""
    state = np.full(HEAD + N_CLASSES, -1, np.int64)
    state[TOP] = state[NEED] = 0
    state[UNIT] = unit
    return state


def grown(data: np.ndarray, state: np.ndarray, fill=0) -> np.ndarray:
    """``data`` with room for the ``state[NEED]`` rows a kernel asked for past the top (at least
    double the rows; contents kept, new rows ``fill``); ``data`` itself if nothing was asked."""
    need = int(state[NEED])
    state[NEED] = 0
    if need == 0 or int(state[TOP]) + need <= data.shape[0]:
        return data
    rows = max(int(state[TOP]) + need, 2 * data.shape[0], 16)
    new = aligned((rows,) + data.shape[1:], fill, data.dtype)
    new[: data.shape[0]] = data
    return new


def run_resumable(step, n: int, grow) -> None:
    """The protocol: ``step(t)`` runs a kernel from ``t`` and returns how far it got; until that
    is ``n``, ``grow()`` makes the room the kernel asked for and it resumes."""
    t = 0
    while True:
        t = step(t)
        if t >= n:
            return
        grow()


# ------------------------------------------------------------------ njit side
def _link(data, s):
    """First element of row ``s`` (a free block's link); scalar or row-table arena."""
    return data[s] if data.ndim == 1 else data[s, 0]


@overload(_link)
def _link_jit(data, s):
    if data.ndim == 1:
        return lambda data, s: data[s]
    return lambda data, s: data[s, 0]


def _set_link(data, s, v):
    if data.ndim == 1:
        data[s] = v
    else:
        data[s, 0] = v


@overload(_set_link)
def _set_link_jit(data, s, v):
    if data.ndim == 1:
        def set_scalar(data, s, v):
            data[s] = v
        return set_scalar

    def set_row(data, s, v):
        data[s, 0] = v
    return set_row


@njit(**JIT)
def size_class(state, rows):
    """Smallest class ``c`` whose blocks (``unit << c`` rows) hold ``rows``."""
    c = 0
    while state[UNIT] << c < rows:
        c += 1
    return c


@njit(**JIT)
def has_room(data, state, rows):
    """Are there ``rows`` rows past the top? If not, ask for them (``state[NEED]``)."""
    if data.shape[0] - state[TOP] >= rows:
        return True
    state[NEED] = max(state[NEED], rows)
    return False


@njit(**JIT)
def has_block(data, state, c):
    """Can a block of class ``c`` be allocated without growing? If not, ask for it."""
    return state[HEAD + c] >= 0 or has_room(data, state, state[UNIT] << c)


@njit(**JIT)
def alloc(data, state, c):
    """First row of a block of class ``c`` (caller made sure :func:`has_block`)."""
    s = state[HEAD + c]
    if s >= 0:
        state[HEAD + c] = _link(data, s)
        return s
    return bump(state, state[UNIT] << c)


@njit(**JIT)
def free(data, state, s, c):
    """Return the block of class ``c`` at row ``s`` to its free list."""
    _set_link(data, s, state[HEAD + c])
    state[HEAD + c] = s


@njit(**JIT)
def bump(state, rows):
    """Take ``rows`` rows at the top (caller made sure :func:`has_room`); returns the first."""
    s = state[TOP]
    state[TOP] = s + rows
    return s


@njit(**JIT)
def reset(state):
    """Forget every block: the whole array is free again."""
    state[TOP] = 0
    state[NEED] = 0
    for c in range(N_CLASSES):
        state[HEAD + c] = -1
