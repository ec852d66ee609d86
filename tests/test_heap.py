"""``pdyn.heap``: the C heap's free pages handed back (glibc's ``malloc_trim``), nothing
elsewhere."""

import platform

import numpy as np

from pdyn import heap


def test_release_free_finds_glibc_trim_and_frees_a_freed_block():
    if platform.libc_ver()[0] != "glibc":
        assert heap.release_free() is False
        return
    assert heap._TRIM is not None
    blocks = [np.ones(4096) for _ in range(2048)]  # 64 MiB of heap blocks, pages touched
    del blocks[:-1]  # freed in the middle of the heap: glibc keeps them
    assert heap.release_free() is True  # some pages went back to the system
