"""One compilation of each pdyn kernel across the test processes. On a fresh numba cache the
pytest-xdist workers and the ranks under ``mpiexec`` (which run the same tests in lockstep)
each compiled the same kernels at the same time; the cache (``pdyn._jit``) then held one
copy and the other compilations were lost work. :func:`install` wraps numba's
``Dispatcher.compile`` so that a process compiling a pdyn kernel holds a file lock named
after it: another process needing that kernel waits, then loads it from the cache.

Deadlock-free: a compilation takes locks only along the call graph (a kernel, then the
kernels it calls), which has no cycle, and never waits on MPI. Changes no compiled code and
no result; a kernel without ``cache=True`` and ``NUMBA_DISABLE_JIT=1`` are left alone."""

import fcntl
import hashlib
import os
import tempfile
from pathlib import Path


def install() -> None:
    """Wrap ``Dispatcher.compile`` (once per process) with the per-kernel file lock."""
    from numba.core import dispatcher

    from pdyn import _jit

    compile_ = dispatcher.Dispatcher.compile
    if getattr(compile_, "pdyn_locked", False):
        return
    tag = hashlib.sha256(str(_jit.PACKAGE_DIR).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"pdyn-jit-locks-{tag}"
    folder.mkdir(exist_ok=True)
    held = set()  # the locks this process holds (a kernel compiled inside another's)

    def compile(self, sig):
        code = getattr(self.py_func, "__code__", None)
        if (code is None or type(self._cache).__name__ == "NullCache"
                or not Path(code.co_filename).resolve().is_relative_to(_jit.PACKAGE_DIR)):
            return compile_(self, sig)
        key = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        if key in held:
            return compile_(self, sig)
        fd = os.open(folder / key, os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.add(key)
            return compile_(self, sig)  # loads from the cache what another process compiled
        finally:
            held.discard(key)
            os.close(fd)  # releases the lock

    compile.pdyn_locked = True
    dispatcher.Dispatcher.compile = compile


def cache_the_tests_kernels() -> None:
    """A test's own kernel (``@njit(cache=True)``, in a file under ``tests/``) is cached next
    to it, stamped with its file's bytes and the whole package (``pdyn._jit.PACKAGE_STAMP``):
    an oracle that calls pdyn's kernels is compiled again when pdyn changes, not loaded stale
    (numba's own stamp is the one file's), and not compiled in every run."""
    from numba.core import caching

    from pdyn import _jit

    tests = Path(__file__).resolve().parent
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = (getattr(caching, "InTreeCacheLocator", None)
            or getattr(caching, "_InTreeCacheLocator", None))
    locators = getattr(impl, "_locator_classes", None)
    if base is None or not isinstance(locators, list):
        return  # other numba internals: the tests' kernels are compiled in each run
    if any(getattr(c, "__name__", "") == "TestsStamped" for c in locators):
        return

    class TestsStamped(base):
        def get_source_stamp(self):
            source = Path(self._py_file).read_bytes()
            return _jit.PACKAGE_STAMP + hashlib.sha256(source).hexdigest()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(tests):
                return None
            return super().from_function(py_func, py_file)

    locators.insert(0, TestsStamped)
