"""Migration and ghost exchange for one rank holding the whole box (the serial case).

The simulation calls ``distribute`` once, then ``migrate`` and ``ghosts`` every step; a
decomposed run swaps in an exchange with the same three methods.
"""

from __future__ import annotations

import numpy as np

from ..particles import OWNED


class ExchangeError(RuntimeError):
    """A configuration the decomposition cannot honour (message names the field and value)."""


class SerialExchange:
    """One rank owns everything: no ghosts, no migration."""

    def __init__(self, sim):
        self.sim = sim
        if sim.box.periodic.any():
            axes = [a for a in "xyz" if sim.box.boundary["xyz".index(a)] == "periodic"]
            raise ExchangeError(
                f"box.boundary = {list(sim.box.boundary)!r}: periodic axes ({', '.join(axes)}) "
                "need the block decomposition, which is not available in this build"
            )

    def distribute(self, gid, pos, vel, radius, mass) -> np.ndarray:
        """Insert the particles this rank owns (all of them); return their handles."""
        return self.sim.store.add(gid=gid, pos=pos, vel=vel, radius=radius, mass=mass,
                                  flags=OWNED)

    def migrate(self) -> int:
        return 0

    def ghosts(self) -> int:
        return 0

    def stats(self) -> dict:
        return {"ghosts": 0, "migrated": 0}


def make_exchange(sim):
    """The exchange for ``sim.comm``: serial for one rank."""
    if sim.comm.size == 1:
        return SerialExchange(sim)
    raise ExchangeError(
        f"ranks = {sim.comm.size}: the block decomposition is not available in this build; "
        "run on one rank"
    )
