"""Timing plumbing of ``pdyn bench``: a stopwatch around a broad phase, measurements in a
memory-limited child process, and a description of the machine and its load."""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import resource
import time
from datetime import datetime, timezone

from ..broadphase import BroadPhaseError

#: the clock of every timing: CPU seconds of this process, all its threads. On the shared
#: machine wall time also measured the neighbours' load (the same structure measured twice in
#: one run differed by up to 1.8x in wall time); CPU time counts the work of every thread
clock = time.process_time


class Stopwatch:
    """A broad phase with its calls timed: ``update`` (build, insert, remove, bind, update) and
    ``query`` (candidate_pairs, contacts) seconds accumulate; everything else is passed
    through."""

    def __init__(self, bp):
        self.__dict__["_bp"] = bp
        self.__dict__["seconds"] = {"update": 0.0, "query": 0.0}

    def _timed(self, what, method, *args, **kw):
        t0 = clock()
        try:
            return getattr(self._bp, method)(*args, **kw)
        finally:
            self.seconds[what] += clock() - t0

    def build(self, *a, **kw):
        self._timed("update", "build", *a, **kw)
        return self

    def insert(self, *a, **kw):
        return self._timed("update", "insert", *a, **kw)

    def remove(self, *a, **kw):
        return self._timed("update", "remove", *a, **kw)

    def bind(self, *a, **kw):
        return self._timed("update", "bind", *a, **kw)

    def update(self, *a, **kw):
        return self._timed("update", "update", *a, **kw)

    def candidate_pairs(self, *a, **kw):
        return self._timed("query", "candidate_pairs", *a, **kw)

    def contacts(self, *a, **kw):
        return self._timed("query", "contacts", *a, **kw)

    def __getattr__(self, name):
        return getattr(self._bp, name)


def _child(conn, limit_bytes, fn, args, rows_for):
    """Run ``fn(*args)`` under an address-space limit; send back its result, or the error if
    it is running out of memory or one of ``rows_for`` (anything else is a bug: its traceback
    is printed and the parent reports the child's death)."""
    try:
        if limit_bytes:
            with open("/proc/self/status") as fh:
                vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
            resource.setrlimit(resource.RLIMIT_AS, (vm + limit_bytes, vm + limit_bytes))
        conn.send(fn(*args))
    except MemoryError:
        conn.send({"error": f"out of memory (> {limit_bytes / 2**30:g} GiB)"})
    except rows_for as exc:  # a refused query, a peer's failure: a row of the table
        conn.send({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"})
    finally:
        conn.close()


def isolated(fn, *args, mem_gib: float = 4.0, timeout: float = 600.0,
             rows_for: tuple = (BroadPhaseError,)):
    """``fn(*args)`` in a forked child limited to ``mem_gib`` GiB of extra memory and
    ``timeout`` seconds, so a measurement that explodes (a peer pairing 10⁸ candidates) is
    reported as ``{"error": ...}`` instead of taking the machine down; so are the exceptions
    in ``rows_for`` (default: a structure refusing a query)."""
    ctx = mp.get_context("fork")  # inherits the arrays (and compiled kernels)
    here, there = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(there, int(mem_gib * 2**30), fn, args, rows_for))
    proc.start()
    there.close()
    if not here.poll(timeout):
        proc.kill()
        proc.join()
        return {"error": f"slower than {timeout:g} s in all"}
    try:
        row = here.recv()
    except EOFError:
        row = {"error": f"child died (exit code {proc.exitcode})"}
    proc.join()
    return row


def peak_rss_bytes() -> int:
    """Peak resident memory of this process so far (bytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def machine() -> dict:
    """What the numbers were measured on: CPU, cores, memory, load averages, date."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem = float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_GiB": round(mem, 1),
            "platform": platform.platform(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
