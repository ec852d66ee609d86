"""The writer protocol: what the driver calls at the end of a step (HOOMD-blue's writers with
triggers, [Anderson2020]). A writer never sees the simulation, only an ``OutputView``."""

from __future__ import annotations


class Writer:
    """A writer of output files. ``name`` names it (``"checkpoint"``: continuing a run reads
    its ``written`` paths); ``needs`` says what the driver must fill into the view before it
    is called (a set of ``network``, ``walls``, ``state``, ``thermo``: ``OutputView``);
    :meth:`due` says whether it writes at the end of a step; :meth:`__call__` writes;
    :meth:`finish` flushes what it buffers (the end of a run, a stop), nothing by default.
    ``velocities``: it reads the state at the step's end (so the step's closing half-kick is
    done before it is called, not left to the next step's). A writer that keeps something of
    every step, due or not, names what it needs of each in ``collects`` and the driver calls
    :meth:`collect` right after each force pass (velocities as the pass saw them)."""

    name = "writer"
    needs = frozenset()
    velocities = True
    collects = frozenset()

    def due(self, step: int) -> bool:
        raise NotImplementedError

    def __call__(self, view):
        raise NotImplementedError

    def collect(self, contact, store, lists, dt: float, step: int, time: float) -> None:
        """Keep what it needs of step ``step``'s force pass (at ``time``, s) of ``contact``
        (``pdyn.dynamics.contact.ContactPass``) over ``lists`` of this rank's ``store``, time
        step ``dt`` (s) (only with ``collects``)."""
        raise NotImplementedError

    def finish(self, view) -> None:
        """Write what is buffered (nothing unless overridden)."""
