"""Stopping a run by hand or by the batch system: Ctrl-C (SIGINT) and SIGTERM (what Slurm sends
at the time limit) only set a flag here. The driver carries the flag in the step's one
reduction (``Simulation.step``), so every rank learns of a signal any rank received in the
same step — never inside a collective —, and at the end of that step every rank writes a
checkpoint and ends the run with :class:`Stopped`, naming it. A second Ctrl-C interrupts at
once (``KeyboardInterrupt``; under ``mpiexec`` Hydra itself aborts the job on a second Ctrl-C);
a repeated SIGTERM (Slurm may signal the job's processes and ``mpiexec`` forward it as well)
changes nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: the signals that stop a run at the end of a step
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(RuntimeError):
    """The run stopped at the end of a step on the signal ``signum``; the message says where
    it can continue from. Exit code ``128 + signum`` (130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def signal_name(signum: int) -> str:
    """``SIGINT`` (Ctrl-C), ``SIGTERM``, ..."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
    return f"{name} (Ctrl-C)" if signum == signal.SIGINT else name


def _install(handlers) -> dict:
    """Install ``handlers`` ({signal: handler}, or one handler for :data:`SIGNALS`); return
    the handlers they replace."""
    if not isinstance(handlers, dict):
        handlers = dict.fromkeys(SIGNALS, handlers)
    return {s: signal.signal(s, h) for s, h in handlers.items()}


class StopRequest:
    """While entered (``with StopRequest() as stop:``), SIGINT and SIGTERM set
    ``stop.signum`` (0: none yet) instead of interrupting; the handlers before are restored
    on exit. Only the main thread can install handlers: elsewhere nothing is installed."""

    def __init__(self):
        self.signum = 0
        self._before: dict = {}

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            self._before = _install(self._handle)
        return self

    def __exit__(self, *exc) -> None:
        self._before = _install(self._before)

    def _handle(self, signum, frame) -> None:
        if self.signum and signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C twice: now
        self.signum = self.signum or int(signum)



#: seconds a rank other than 0 waits before it ends on a start-up signal (rank 0 says why)
GRACE = 1.0


def launched_as() -> tuple[int, int]:
    """(rank, ranks) the launcher's environment gives this process before MPI starts (what
    :class:`StartupSignals` needs before the MPI modules load); (0, 1) outside ``mpiexec``."""
    env = os.environ
    for rank, size in (("PMI_RANK", "PMI_SIZE"), ("PMIX_RANK", "PMIX_SIZE"),
                       ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if env.get(rank, "").isdigit() and env.get(size, "").isdigit():
            return int(env[rank]), int(env[size])
    return 0, 1


class StartupSignals:
    """While entered (``pdyn.cli.main`` around a command), SIGINT and SIGTERM end the process
    at once (:meth:`end`: one line, exit code 130 / 143), not by the default's death by the
    signal; a run's :class:`StopRequest` takes them over while it steps. Nothing is raised:
    an exception from a signal handler can surface anywhere (an import turns it into an
    ``ImportError``). With several ``ranks`` a rank may wait inside a collective call for
    another that already ended, where no Python handler runs: a thread woken by the signal
    itself (``signal.set_wakeup_fd``) then ends the process. ``say(line)`` prints the one
    line (rank 0's). The handlers before are restored on exit; outside the main thread
    nothing is installed."""

    def __init__(self, rank: int = 0, ranks: int = 1, say=None):
        self.rank, self.ranks = rank, ranks
        self.say = say or (lambda line: None)
        self._before: dict = {}
        self._lock = threading.Lock()
        self._said = False
        self._wakeup = None  # (the wake-up fd before, the pipe's read and write ends)

    def __enter__(self) -> StartupSignals:
        if threading.current_thread() is not threading.main_thread():
            return self
        read, write = os.pipe()  # the thread acts once the ranks are known to be several
        os.set_blocking(write, False)
        self._wakeup = (signal.set_wakeup_fd(write), read, write)
        threading.Thread(target=self._watch, args=(read,), name="pdyn-signals",
                         daemon=True).start()
        self._before = _install(self._handle)
        return self

    def __exit__(self, *exc) -> None:
        self._before = _install(self._before)
        if self._wakeup is not None:
            signal.set_wakeup_fd(self._wakeup[0])
            os.close(self._wakeup[2])  # the thread reads the end of the pipe and returns
            self._wakeup = None

    def _handle(self, signum, frame) -> None:
        self.end(signum)

    def end(self, signum: int) -> None:
        """Rank 0 says why (once), and the process ends with exit code 128 + ``signum``
        (``os._exit``: other ranks may wait in a collective, and ``mpiexec`` ends them without
        a message of its own when one rank exits); a rank other than 0 :data:`GRACE` seconds
        later, so that rank 0 says it first."""
        with self._lock:
            first, self._said = not self._said, True
        if first and self.rank == 0:
            self.say(f"pdyn: stopped by {signal_name(signum)} while no step runs (start-up or "
                     "the end of a run): no checkpoint was written")
        sys.stdout.flush()
        sys.stderr.flush()
        if self.rank != 0:
            time.sleep(GRACE)
        os._exit(128 + signum)

    def _watch(self, read: int) -> None:
        """Each signal's byte on the wake-up pipe: unless a run's handler has it, give the
        main thread :data:`GRACE` seconds to end the process, then end it from here."""
        while True:
            try:
                data = os.read(read, 1)
            except OSError:
                return
            if not data:
                os.close(read)
                return
            signum = data[0]
            if self.ranks > 1 and signal.getsignal(signum) == self._handle:
                time.sleep(GRACE)
                self.end(signum)
