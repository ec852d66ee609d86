"""Small dense scenes for the multi-rank tests (every rank builds the same one)."""

import numpy as np

from pdyn.config import BoxConfig, ContactConfig, OutputConfig, ParticlesConfig, SimulationConfig
from pdyn.particles import FIELDS
from pdyn.restart import from_checkpoint
from pdyn.scenarios import place_spheres
from pdyn.simulation import Simulation


def dense_polydisperse(boundary=("periodic",) * 3, n=400, seed=3, broadphase="linked_cells",
                       speed=1.5, law="linear", friction=0.0, **cfg):
    """~``n`` spheres of radii 0.2-0.6 plus a few of 1.0 in a box at ~35 % packing, random
    velocities (crossings in every direction), elastic-ish contacts (``law``), no gravity;
    with ``friction`` μ > 0 also rolling friction μ/10, so spheres spin and keep history."""
    rng = np.random.default_rng(seed)
    radii = np.concatenate((rng.uniform(0.2, 0.6, n - 4), np.full(4, 1.0)))
    vol = (4 / 3 * np.pi * radii**3).sum()
    L = (vol / 0.35) ** (1 / 3)
    pos = place_spheres(radii, np.zeros(3), np.full(3, L), seed)
    vel = rng.normal(0.0, speed, (len(radii), 3))
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=radii, density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(L, L, L), boundary=tuple(boundary)),
        contact=ContactConfig(law=law, youngs_modulus=1e6, restitution=0.9, friction=friction,
                              rolling_friction=0.1 * friction),
        gravity=(0.0, 0.0, 0.0), broadphase=broadphase, progress=False, **cfg)


def owned_state(sim):
    """(gid, pos, vel) of this rank's owned spheres."""
    h = sim.store.owned
    return sim.store.gid[h].copy(), sim.store.pos[h].copy(), sim.store.vel[h].copy()


def gather_fields(sim, names):
    """Global arrays of the store fields ``names`` (``gid`` first) of the owned spheres,
    sorted by gid, on every rank (small scenes only); a ragged field (the contact history's
    records) as the records of the spheres in gid order, concatenated."""
    h = sim.store.owned[np.argsort(sim.store.gid[sim.store.owned], kind="stable")]
    parts = sim.comm.allgather([sim.store.values(k, h) for k in ("gid",) + tuple(names)]
                               + [sim.store.history_count[h] if "history_key" in names
                                  else None])
    g = np.concatenate([p[0] for p in parts])
    o = np.argsort(g, kind="stable")
    out = [g[o]]
    for k, name in enumerate(names, start=1):
        if FIELDS[name].counted_by is None:
            out.append(np.concatenate([p[k] for p in parts])[o])
            continue
        pieces = []  # each sphere's records, the spheres in gid order
        for p in parts:
            ends = np.cumsum(p[-1])
            pieces += [p[k][e - c:e] for c, e in zip(p[-1], ends)]
        out.append(np.concatenate([pieces[i] for i in o]) if pieces else p[k][:0])
    return out


#: the state of a frictional run: rotation and contact history included
FRICTIONAL_STATE = ("pos", "vel", "omega", "torque", "history_key", "history_spring",
                    "history_count")


def gather_state(sim):
    """Global (gid, pos, vel) sorted by gid, on every rank (small scenes only)."""
    return tuple(gather_fields(sim, ("pos", "vel")))


def serial_state(cfg, steps):
    """(gid, pos, vel) after ``steps`` steps of ``cfg`` on one rank (the reference)."""
    from pdyn.parallel import SerialComm
    from pdyn.simulation import Simulation

    ref = Simulation(cfg, comm=SerialComm())
    ref.run(steps)
    return gather_state(ref)


def walled_pile(n=150, seed=2, **cfg):
    """``n`` spheres of radii 0.1-0.2 m falling into a walled 2.4 x 2.4 x 3 m box under
    gravity, damped linear contacts: they land on the floor within a few hundred steps."""
    rng = np.random.default_rng(seed)
    radii = rng.uniform(0.1, 0.2, n)
    pos = place_spheres(radii, np.zeros(3), np.array([2.4, 2.4, 2.0]), seed)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=2500.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(2.4, 2.4, 3.0)),
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.3), gravity=(0.0, 0.0, -9.81),
        progress=False, **cfg)


def assert_same_state(a, b, what: str) -> None:
    """The frictional state (``gid`` and :data:`FRICTIONAL_STATE`) of ``a`` and ``b`` is equal
    bit for bit; each is a Simulation or the list :func:`gather_fields` made of one."""
    a, b = (gather_fields(s, FRICTIONAL_STATE) if hasattr(s, "store") else s for s in (a, b))
    for name, x, y in zip(("gid",) + FRICTIONAL_STATE, a, b):
        assert np.array_equal(x, y), f"{name} differs {what}"


def run_then_restart(cfg_of, out, comm, steps: int, at: int, wall_forces: bool = False,
                     **sim):
    """Run the config ``cfg_of(output)`` for ``steps`` steps on ``comm``, writing checkpoints
    every ``at`` steps into ``out``/a; returns that run and a Simulation restarted from its
    checkpoint of step ``at`` (writing into ``out``/b), not yet run. ``sim``: more arguments
    of the Simulation (a scene)."""
    ref = Simulation(cfg_of(OutputConfig(folder=str(out / "a"), checkpoint_every=at,
                                         overwrite=True, wall_forces=wall_forces)),
                     comm=comm, **sim)
    ref.run(steps)
    cont = from_checkpoint(out / "a" / "checkpoints" / f"ckpt_{at:08d}.h5", comm=comm,
                           output=OutputConfig(folder=str(out / "b"), overwrite=True))
    return ref, cont
