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

import signal
import threading

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


class StopRequest:
    """While entered (``with StopRequest() as stop:``), SIGINT and SIGTERM set
    ``stop.signum`` (0: none yet) instead of interrupting; the handlers before are restored
    on exit. Only the main thread can install handlers: elsewhere nothing is installed."""

    def __init__(self):
        self.signum = 0
        self._before: dict = {}

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self._before[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self._before.items():
            signal.signal(s, handler)
        self._before = {}

    def _handle(self, signum, frame) -> None:
        if self.signum and signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C twice: now
        self.signum = self.signum or int(signum)
