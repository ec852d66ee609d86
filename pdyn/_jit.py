"""The one place JIT options are defined: every hot kernel is ``@njit(**JIT)`` at module level.

``cache=True`` keeps compiled kernels on disk between runs; set ``NUMBA_DISABLE_JIT=1`` to run
the kernels as plain Python (coverage, debugging).

**Cache validity.** numba marks a cached kernel with the stamp of the one file that defines it,
so a kernel that inlines a function from another file (every force kernel calls the laws of
``pdyn/dynamics/laws.py``) kept its old machine code when only that other file changed — in
an editable install after ``git pull``, a run silently used the old physics (a limitation
numba documents under ``cache``; numba issue #1833). Importing this module puts a locator
in front of numba's own for pdyn's files: the same cache places (next to the sources, or the
user-wide cache), stamped with a hash of *every* source file of the package
(:data:`PACKAGE_STAMP`), so any change of pdyn recompiles all its kernels once. An index that
another version of pdyn wrote and that cannot be read any more (it names a type since removed;
numba 0.68 unpickles it before it compares the stamp and raises, numba issue #6018) is a cache
miss: the kernel is compiled and the index written anew. If numba's internals differ from what
this expects, numba's own locators and index reading are left as they are.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

JIT = {"cache": True, "nogil": True}

#: for a kernel whose divisions cannot divide by zero on valid input (positive radii and
#: masses): numpy's error model drops numba's ZeroDivisionError test from each division
#: (the IEEE result otherwise). The frictionless contact pass: 0.95x the time alone, 0.86x
#: with unsigned handles (equilibrated 97 336-sphere gas, same state, alternating calls)
JIT_IEEE = {**JIT, "error_model": "numpy"}

#: for a hot loop that allocates nothing (the contact force loops): compiled without numba's
#: reference counts, so the small helpers numba inlines into it (``inline="always"``) count
#: none either, those that take arrays and branch or loop inside too (in a loop with reference
#: counts each call of such a helper counted references to its arrays: atomic operations, the
#: rotating pass took 1.3x the time; as functions of their own that LLVM inlined, the step
#: took 1.05x: the frictional gas, same state, alternating runs)
JIT_LOOP = {**JIT_IEEE, "_nrt": False}

#: for a large helper of the contact loops: compiled once per argument types as a function of
#: its own (cached, shared by every loop and variant that calls it), without reference counts,
#: and marked for LLVM to inline it into each caller (``forceinline``: LLVM's alwaysinline) —
#: the loop's machine code of numba's ``inline="always"``, without numba's inlining, which
#: processes the helper's code anew at every call site of every variant of every loop
JIT_INLINE = {**JIT_IEEE, "_nrt": False, "forceinline": True}

PACKAGE_DIR = Path(__file__).resolve().parent


def package_stamp(root: Path = PACKAGE_DIR) -> str:
    """SHA-256 of the relative path and bytes of every ``.py`` file under ``root``."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


PACKAGE_STAMP = package_stamp()


def _package_locator(base):
    """``base`` (a numba cache locator class) for pdyn's files, stamped with the package."""

    class PackageStamped(base):
        def get_source_stamp(self):
            return PACKAGE_STAMP

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(PACKAGE_DIR):
                return None
            return super().from_function(py_func, py_file)

    PackageStamped.__name__ = PackageStamped.__qualname__ = f"Pdyn{base.__name__.lstrip('_')}"
    return PackageStamped


def _unreadable_index_is_a_miss(index_file) -> None:
    """numba's index reader (``index_file``: its ``IndexDataCacheFile`` class) returns no
    entries, instead of raising, for a pdyn index it cannot unpickle (the stamp it expects starts
    with :data:`PACKAGE_STAMP`); any other index is read as numba reads it."""
    load = getattr(index_file, "_load_index", None)
    if load is None:
        return  # pragma: no cover - other numba internals

    def _load_index(self):
        try:
            return load(self)
        except (AttributeError, ImportError, EOFError, pickle.UnpicklingError):
            if not str(getattr(self, "_source_stamp", "")).startswith(PACKAGE_STAMP):
                raise
            return {}

    index_file._load_index = _load_index


def _install() -> None:
    """Put the package-stamped locators first in numba's list (once); a pdyn index that cannot
    be read is a miss."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba without the caching module
        return
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n, None) for n in names]
    locators = getattr(impl, "_locator_classes", None)
    if not isinstance(locators, list) or any(b is None for b in bases):
        return  # pragma: no cover - other numba internals: numba's own stamps
    if any(getattr(c, "__name__", "").startswith("Pdyn") for c in locators):
        return
    locators[:0] = [_package_locator(b) for b in bases]
    index_file = getattr(caching, "IndexDataCacheFile", None) or getattr(
        caching, "_IndexDataCacheFile", None)
    if index_file is not None:
        _unreadable_index_is_a_miss(index_file)


_install()
