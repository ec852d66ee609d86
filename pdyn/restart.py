"""Continue a checkpointed run: a :class:`~pdyn.simulation.Simulation` built from a checkpoint
file (``pdyn run --restart FILE``).

Sits above the driver: it reads the file through ``pdyn.io.checkpoint`` (which only reads and
writes files) and hands the driver a :class:`~pdyn.simulation.RestartState` — every checkpointed
field of every particle (ids kept, forces included), the rank that owned each, the exchange's
schedule, the step and dt. The broad phase and the ghosts are rebuilt (forces are summed by
partner id, so their order does not matter). On the same rank count the continued run is
bit-identical to the uninterrupted one, and on a different rank count it continues with the same
ids and count (and is bit-identical too wherever the N-rank run matches the 1-rank run). Centres
are restored unwrapped (``distribute(..., wrap=False)``): one that drifted past a periodic face
since the last rebuild stays there, as in the uninterrupted run, and is wrapped at the next
rebuild. On the same rank count every particle goes back to the rank that wrote it, under the
checkpointed block → rank map, so each rank continues with what it held.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import ConfigError, config_from_dict
from .io.checkpoint import read_checkpoint
from .io.hdf5 import OutputFileError
from .particles import CHECKPOINT
from .scenarios import Scene
from .simulation import RestartState, Simulation


def from_checkpoint(path: str | Path, *, comm=None, **changes) -> Simulation:
    """A :class:`~pdyn.simulation.Simulation` continuing the checkpointed run at ``path`` on
    ``comm`` (any number of ranks). ``changes`` override configuration fields (``output``,
    ``progress``, ``steps``, ``broadphase``, ...)."""
    data = read_checkpoint(path)
    try:
        cfg = config_from_dict(data["config"], source=f"{path} (config)")
    except ConfigError as exc:
        raise OutputFileError(f"{path}: its stored config is invalid here ({exc})") from None
    if changes:
        cfg = cfg.with_(**changes)
    scene = Scene(name=data["scene"], box_lo=data["box_lo"], box_hi=data["box_hi"],
                  boundary=data["boundary"], positions=data["pos"], velocities=data["vel"],
                  radii=data["radius"], density=1.0, gravity=data["gravity"],
                  contact=data["contact"], dt=data["dt"], steps=data["steps_total"],
                  description=f"restarted from {Path(path).name} at step {data['step']}",
                  given_masses=data["mass"],
                  insertion=data["insertion"]["params"] if data["insertion"] else {})
    restart = RestartState(particles={k: data[k] for k in CHECKPOINT}, rank_of=data["rank"],
                           exchange=data["exchange"], step=data["step"], dt=data["dt"],
                           insertion=data["insertion"]["state"] if data["insertion"] else None)
    sim = Simulation(cfg, comm=comm, scene=scene, restart=restart)
    kept = sim.store.gid[sim.store.owned]
    n = sim.comm.allreduce_sum(int(kept.size))
    if n != len(data["gid"]) or not np.isin(kept, data["gid"]).all():
        raise OutputFileError(f"{path}: restart kept {n} of {len(data['gid'])} particles")
    return sim
