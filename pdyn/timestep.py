"""The time step of a run and the contact time its step guard watches (s), from the contact
law's policy (``ContactLaw.time_step``: the contact time t_c over ``dt_safety`` and, with
Hertz, a share of the Rayleigh time, [EDEMtimestep]) over the spheres that bound them: this
rank's and those the insertion will add, the smallest over the ranks."""

from __future__ import annotations

import numpy as np

from .config import ConfigError


def bounding_spheres(store, inserter) -> tuple[np.ndarray, np.ndarray]:
    """Radii (m) and masses (kg) of this rank's owned spheres, plus the smallest and largest
    ``inserter`` (None: no insertion) will add: the spheres that bound the time step."""
    h = store.owned
    radius, mass = store.radius[h], store.mass[h]
    if inserter is not None:
        radius = np.concatenate((radius, inserter.radii))
        mass = np.concatenate((mass, inserter.mass(inserter.radii)))
    return radius, mass


def time_step(law, given: float | None, store, inserter, config, comm) -> float:
    """``given`` (the config's or the scene's dt), checked against the law's limit, or that
    limit (``ContactLaw.time_step``, with ``config.dt_safety`` and ``allow_large_dt``); a
    refusal is a one-line ``ConfigError``. Collective."""
    try:
        return law.time_step(given, *bounding_spheres(store, inserter), config.dt_safety,
                             config.allow_large_dt, comm.allreduce_min)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def contact_time(law, store, inserter, comm) -> float:
    """The shortest contact time over every rank's bounding spheres (``ContactLaw.contact_time``;
    inf without stiffness). Collective."""
    return comm.allreduce_min(law.contact_time(*bounding_spheres(store, inserter)))
