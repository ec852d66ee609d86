"""Small dense scenes for the multi-rank tests (every rank builds the same one), and the
gathering of their state for bit-for-bit comparisons. A scene builder takes the output
configuration as ``output`` (or keyword fields of the SimulationConfig)."""

import math
from dataclasses import replace

import numpy as np

from pdyn.config import (BoxConfig, ContactConfig, InsertionConfig, InteractionConfig,
                         MaterialConfig, ParticlesConfig, SimulationConfig)
from pdyn.mesh import box_surface, grid_surface, tube_surface
from pdyn.particles import FIELDS
from pdyn.scenarios import Scene, drum, hopper, make_scene, place_spheres
from pdyn.stl import write_stl

from .conftest import idle_barrier

#: the box boundaries of :func:`dense_polydisperse` by name
BOUNDARIES = {
    "periodic": ("periodic", "periodic", "periodic"),
    "walled": ("wall", "wall", "wall"),
    "mixed": ("periodic", "wall", "periodic"),
}


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
        gravity=(0.0, 0.0, 0.0), broadphase=broadphase, progress=False,
        allow_deep_overlap=True, **cfg)  # fast enough that spheres pass through each other


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


def large_particle(boundary=("wall",) * 3, **cfg):
    """8 blocks of edge 2 along x; a big sphere (r 4.2 > 2 blocks) in block 2 touching small
    spheres whose centres are in blocks 0 and 4, two blocks away on either side (they start
    in contact: initial overlaps allowed)."""
    pos = [[5.0, 4.5, 4.5], [9.45, 4.5, 4.5], [0.55, 4.5, 4.5], [13.0, 4.5, 4.5]]
    vel = [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=[4.2, 0.3, 0.3, 0.3],
                                  density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(16.0, 9.0, 9.0), boundary=boundary),
        blocks=(8, 1, 1), gravity=(0.0, 0.0, 0.0), dt=1e-3, progress=False,
        initial_overlap="allow", **cfg)


def thrown_chute():
    """The chute at a quarter of its area (544 spheres over 18 fixed ones), every flowing
    sphere thrown down at 2 √(gd) so that the base is hit within the first 100 steps."""
    s = make_scene("chute", scale=0.25)
    s.velocities[~s.fixed] = np.random.default_rng(2).normal(0.0, 0.5, ((~s.fixed).sum(), 3))
    s.velocities[~s.fixed, 2] -= 2.0
    return s


def thrown_rough_drum():
    """The rough drum at a third of its length (666 spheres, 166 glued ones) turning fast
    (Fr = 25: the layer moves 2 cm in 200 steps, across the blocks), contacts soft (k = 1000
    N/m: a step is 84 µs) and the bed thrown at 0.5 m/s, so that it hits the layer within
    the run."""
    s = drum(scale=1 / 3, froude=25.0, rough=True)
    bed = s.glued < 0
    v = np.zeros_like(s.positions)
    v[bed] = np.random.default_rng(4).normal(0.0, 0.5, (bed.sum(), 3))
    return replace(s, velocities=v, contact={**s.contact, "youngs_modulus": 5e5})


def sliding_plate():
    """A rough plate sliding along a periodic axis: a plane at z = 0 moving at 2 m/s along
    x carries a 6 × 6 square layer of glued spheres (d = 1 m, touching) in a box periodic
    over 6 m in x and y; 30 spheres fall onto it under gravity and are dragged along. In 300
    steps of 10 ms the layer goes once round the box in x."""
    g = (np.arange(6) + 0.5)
    x, y = np.meshgrid(g, g, indexing="ij")
    layer = np.column_stack((x.ravel(), y.ravel(), np.full(36, 0.5)))
    k, i = np.divmod(np.arange(30), 6)  # five layers of six, 1.1 m apart, on a diagonal
    above = np.column_stack((g[i] + 0.05 * k, g[::-1][i], 1.8 + 1.1 * k))
    pos = np.concatenate((layer, above))
    return Scene(name="plate", box_lo=np.zeros(3), box_hi=np.array([6.0, 6.0, 10.0]),
                 boundary=("periodic", "periodic", "open"), positions=pos,
                 velocities=np.zeros_like(pos), radii=np.full(len(pos), 0.5), density=1000.0,
                 gravity=np.array([0.0, 0.0, -9.81]), dt=0.01,
                 contact={"stiffness": 1e4, "restitution": 0.5, "friction": 0.5},
                 walls=({"type": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0],
                         "velocity": [2.0, 0.0, 0.0]},),
                 glued=np.where(np.arange(len(pos)) < 36, 0, -1))


def discharging(**cfg):
    """A tenth of the hopper (500 spheres, orifice 4 d) opened from the start, the spheres
    thrown down at 1 m/s (and ± 0.2 m/s at random), so that the lowest layers leave at once."""
    s = hopper(scale=0.1, orifice=4.0, opens=0.0)
    v = np.random.default_rng(7).normal(0.0, 0.2, s.positions.shape) + [0.0, 0.0, -1.0]
    return SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, velocities=v, radii=s.radii,
                                  density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        contact=ContactConfig(**s.contact), walls=list(s.walls),
        insertion=InsertionConfig(**s.insertion), gravity=tuple(s.gravity), progress=False,
        **cfg)


def trough(folder, comm, **cfg):
    """250 spheres (r 4-6 mm) over a V trough of 200 triangles (faces at 30°, an STL file
    in mm, written into ``folder`` by rank 0), thrown down at 1 m/s, a vertical mesh plate
    moving in along y at 0.3 m/s; friction 0.5, rolling friction 0.02, walled sides."""
    if comm.rank == 0:
        slope = math.tan(math.radians(30.0))
        v, t = grid_surface(10, 100.0, lift=lambda x, y: slope * np.abs(x))
        write_stl(folder / "trough.stl", v[t].astype(np.float32))
    idle_barrier(comm)
    rng = np.random.default_rng(9)
    radii = rng.uniform(0.004, 0.006, 250)
    pos = place_spheres(radii, np.array([-0.03, -0.09, 0.025]), np.array([0.03, 0.09, 0.14]),
                        9)  # above the trough (0.017 m high at |x| = 0.03 m)
    vel = rng.normal(0.0, 0.2, pos.shape) + [0.0, 0.0, -1.0]
    plate = {"type": "mesh", "vertices": [[-0.1, -0.092, 0.0], [0.1, -0.092, 0.0],
                                          [0.1, -0.092, 0.2], [-0.1, -0.092, 0.2]],
             "triangles": [[0, 1, 2], [0, 2, 3]], "velocity": [0.0, 0.3, 0.0]}
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=radii, density=2500.0),
        box=BoxConfig(lo=(-0.1, -0.12, -0.01), hi=(0.1, 0.1, 0.25),
                      boundary=("wall", "wall", "open")),
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.5, friction=0.5,
                              rolling_friction=0.02),
        walls=[{"type": "mesh", "file": str(folder / "trough.stl"), "scale": 0.001}, plate],
        gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


def mesh_drum(**cfg):
    """100 spheres (r 3-4 mm) thrown down at 0.5 m/s in a drum of 192 triangles (radius 5 cm,
    axis y through (0, 0, 0.01), walled ends) turning at 4 rad/s, friction 0.5, rolling
    friction 0.02."""
    rng = np.random.default_rng(4)
    radii = rng.uniform(0.003, 0.004, 100)
    pos = place_spheres(radii, np.array([-0.025, -0.02, -0.028]),
                        np.array([0.025, 0.02, 0.015]), 4)
    vel = rng.normal(0.0, 0.1, pos.shape) + [0.0, 0.0, -0.5]
    v, t = tube_surface(48, 0.05, 0.04, along=2)
    wall = {"type": "mesh", "vertices": v + [0.0, 0.0, 0.01], "triangles": t,
            "angular_velocity": 4.0, "axis": [0.0, 1.0, 0.0], "point": [0.0, 0.0, 0.01]}
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=radii, density=2500.0),
        box=BoxConfig(lo=(-0.06, -0.02, -0.05), hi=(0.06, 0.02, 0.07),
                      boundary=("open", "wall", "open")),
        contact=ContactConfig(youngs_modulus=2e5, restitution=0.5, friction=0.5,
                              rolling_friction=0.02),
        walls=[wall], gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


#: a plane moving in along its normal and turning about it (a turning piston)
PISTON = {"type": "plane", "point": [0.0, -0.1, 0.0], "normal": [0.0, 1.0, 0.0],
          "velocity": [0.0, 0.5, 0.0], "angular_velocity": 40.0}
#: the piston following a program: a constant velocity, a sine, a ramp and a table, turning
#: as a ramp and a sine (``pdyn.programs``)
PROGRAMMED = {**PISTON, "velocity": [0.0, 0.2, 0.0], "angular_velocity": 10.0,
              "translation": [
                  {"type": "sine", "amplitude": [0.0, 0.001, 0.0005], "frequency": 30.0},
                  {"type": "ramp", "velocity": [0.0, 0.1, 0.0], "start": 0.002, "end": 0.02},
                  {"type": "table", "times": [0.0, 0.01, 0.03],
                   "velocities": [[0.0, 0.0, 0.0], [0.0, 0.1, 0.02], [0.0, -0.05, 0.0]]}],
              "rotation": [{"type": "ramp", "velocity": 30.0, "start": 0.0, "end": 0.02},
                           {"type": "sine", "amplitude": 0.05, "frequency": 50.0}]}
#: an open tube across the drum just above the bed, hit by the spheres thrown up (its outer
#: face and its rims)
TUBE = {"type": "cylinder", "point": [0.013, 0.0, 0.031], "axis": [0.0, 1.0, 0.0],
        "radius": 0.012, "length": 0.07}


def drum_with_piston(extra=PISTON, **cfg):
    """The drum scene at a third of its length (666 spheres, soft) thrown at 0.3 m/s, with a
    plane moving in from the side at 0.5 m/s (or the wall ``extra``)."""
    s = make_scene("drum", scale=1 / 3)
    v = np.random.default_rng(5).normal(0.0, 0.3, s.positions.shape)
    return SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, velocities=v, radii=s.radii,
                                  density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        # the scene's contacts made soft (k = 1000 N/m), so that a few hundred steps are
        # tens of ms: the spheres reach the walls
        contact=ContactConfig(**{**s.contact, "youngs_modulus": 5e5}),
        walls=list(s.walls) + [extra],
        gravity=tuple(s.gravity), progress=False, **cfg)


#: steps of :func:`mixture` to run: the spheres have fallen and piled up (a big sphere
#: touching ~30 small ones at 1:3, ~60 at 1:10)
MIXTURE_STEPS = {3: 600, 10: 1200}


def mixture(ratio, n_small=700, big=0.25, seed=5, **cfg):
    """Three spheres of radius ``big`` and ``n_small`` of radius big/``ratio`` placed at random
    in a walled box at ~20 % solid fraction, twice as high as wide: they fall and pile up on
    the floor; gravity, Hertz contacts with friction 0.5 and rolling friction 0.05,
    restitution 0.5."""
    small = big / ratio
    radii = np.concatenate((np.full(3, big), np.full(n_small, small)))
    rng = np.random.default_rng(seed)
    radii = radii * rng.uniform(0.95, 1.05, radii.size)  # no two alike
    L = ((4.0 / 3.0 * np.pi * radii**3).sum() / 0.4) ** (1.0 / 3.0)
    hi = np.array([L, L, 2.0 * L])
    pos = place_spheres(radii, np.zeros(3), hi, seed)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=tuple(hi)),
        contact=ContactConfig(law="hertz", youngs_modulus=1e6, restitution=0.5, friction=0.5,
                              rolling_friction=0.05),
        gravity=(0.0, 0.0, -9.81), progress=False, balance_every=20, balance_threshold=1.0,
        reorder_every=30, allow_deep_overlap=True, **cfg)  # small ones crushed by big ones


def heap_pour(**cfg):
    """The heap scene at scale 0.05 with 250 spheres poured in over an outlet."""
    ins = InsertionConfig(region_lo=(0.3, 0.3, 1.0), region_hi=(2.5, 2.5, 2.6), rate=600.0,
                          radius_min=0.08, radius_max=0.12, velocity=(0.0, 0.0, -3.0),
                          total=250, every=25, seed=7, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(0.6, 2.8, 0.4))
    return SimulationConfig(scene="heap", scale=0.05, insertion=ins, progress=False, **cfg)


def outlet_pour(friction=0.5, broadphase="auto", seed=2, **cfg):
    """Spheres poured onto an outlet strip along the whole floor (0 < y < 1 m), blocks
    rebalanced every 10 steps: spheres migrate or move with their block at the very rebuild
    steps at which the outlet drains them."""
    ins = InsertionConfig(region_lo=(0.3, 0.3, 0.45), region_hi=(3.4, 1.6, 1.0), rate=2000.0,
                          radius_min=0.08, radius_max=0.12, velocity=(2.0, 0.5, -3.0),
                          total=300, every=10, seed=seed, outlet_lo=(0.0, 0.0, 0.0),
                          outlet_hi=(3.7, 1.0, 0.35))
    return SimulationConfig(scene="heap", scale=0.1, insertion=ins, progress=False,
                            balance_every=10, balance_threshold=1.0, broadphase=broadphase,
                            contact=ContactConfig(youngs_modulus=1e7, restitution=0.3,
                                                  friction=friction,
                                                  rolling_friction=0.2 * friction), **cfg)


#: a frictional contact for the pours
POUR_CONTACT = ContactConfig(youngs_modulus=1e7, restitution=0.3, friction=0.5,
                             rolling_friction=0.1)


def lognormal_pour(**cfg):
    """300 spheres of log-normal radii (median 0.08 m, σ = 0.35, 0.05..0.15 m) poured onto the
    heap's floor (3.7 m square) at 2000 per second, thrown sideways and down."""
    ins = InsertionConfig(region_lo=(0.3, 0.3, 0.45), region_hi=(3.4, 3.4, 1.2), rate=2000.0,
                          radius_min=0.05, radius_max=0.15, velocity=(1.0, 0.5, -3.0),
                          sizes={"distribution": "log_normal", "median": 0.08, "sigma": 0.35},
                          total=300, every=10, seed=3)
    return SimulationConfig(scene="heap", scale=0.1, insertion=ins, progress=False,
                            contact=POUR_CONTACT, **cfg)


def cylinder_pour(**cfg):
    """Two feeds ([[insertion]]): a cone (0.4 m to 1.2 m radius) filled to 0.2 at the first
    step with a sieve table by mass, and spheres uniform by mass poured from a cylinder above
    it at 3000 per second."""
    cone = InsertionConfig(region="cone", center=(1.85, 1.85), radius_lo=0.4, radius_hi=1.2,
                           lo=0.1, hi=0.9, fill=0.2, seed=5,
                           sizes={"distribution": "discrete", "radii": [0.06, 0.09, 0.12],
                                  "fractions": [0.2, 0.3, 0.5], "by": "mass"})
    tube = InsertionConfig(region="cylinder", center=(1.85, 1.85), radius=1.0, lo=1.2, hi=2.8,
                           rate=3000.0, radius_min=0.06, radius_max=0.12, total=200, every=10,
                           velocity=(0.0, 0.0, -2.0), seed=6,
                           sizes={"distribution": "uniform_mass"})
    return SimulationConfig(scene="heap", scale=0.1, insertion=(cone, tube), progress=False,
                            contact=POUR_CONTACT, **cfg)


CONE_SILO, CONE_SPHERE = 0.03, 0.002  # m
#: the cone hopper: a 45° cone (apex at the origin, radius z) from its orifice at z = 0.008 to
#: z = 0.03, turning slowly, under a cylinder of the cone's top radius up to z = 0.09
CONE_WALLS = [{"type": "cylinder", "point": [0.0, 0.0, 0.06], "axis": [0.0, 0.0, 1.0],
               "radius": CONE_SILO, "length": 0.06},
              {"type": "cone", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
               "radius_lo": 0.008, "radius_hi": CONE_SILO, "lo": 0.008, "hi": 0.03,
               "angular_velocity": 5.0}]


def cone_hopper(**cfg):
    """A cylinder (wall −7) over a turning 45° cone (wall −8) with an orifice: three layers
    of spheres (a square lattice within the cylinder, 384 of them) above the cone, thrown
    down at 1 m/s (± 0.2 m/s at random): soft (k = 1000 N/m), frictional."""
    g = np.arange(-0.0264, 0.0265, 0.0044)
    x, y, z = np.meshgrid(g, g, [0.033, 0.0375, 0.042], indexing="ij")
    pos = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    pos = pos[np.hypot(pos[:, 0], pos[:, 1]) < CONE_SILO - 1.25 * CONE_SPHERE]
    v = np.random.default_rng(3).normal(0.0, 0.2, pos.shape) + [0.0, 0.0, -1.0]
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=v,
                                  radii=np.full(len(pos), CONE_SPHERE), density=2500.0),
        box=BoxConfig(lo=(-0.04, -0.04, -0.02), hi=(0.04, 0.04, 0.1)),
        contact=ContactConfig(youngs_modulus=5e5, restitution=0.5, friction=0.5),
        walls=CONE_WALLS, gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


#: the servo bed's piston load (N) and box (m): periodic across, a floor below
SERVO_FORCE = 10.0
SERVO_BOX = ((0.0, 0.0, 0.0), (0.05, 0.05, 0.2))


#: the servo's target: none while the bed settles (0.1 s), then ramped up in 0.02 s and held
SERVO_TARGET = [[0.1, 0.0], [0.12, SERVO_FORCE]]


def servo_bed(force=SERVO_TARGET, layers=6, seed=7, pressure=None, mesh=False,
              direction=(0.0, 0.0, -1.0), **cfg):
    """A frictional bed of ``layers`` × 25 spheres (r 4–4.5 mm, k ≈ 4000 N/m, weight ≈ 1.2 N)
    on a floor, periodic in x and y, and above it a plane held at ``force`` (N, or a table of
    time) by its servo (``pdyn.dynamics.wallmotion.Servo``; ``pressure``: its pressure and
    area instead), touching the top layer at the start: with the default target it stays
    there while the bed settles, then presses. ``mesh``: the piston is a closed box of 12
    triangles (5 mm thick, wider than the cell) driven along ``direction`` instead."""
    rng = np.random.default_rng(seed)
    lo, hi = SERVO_BOX
    grid = np.stack(np.meshgrid(np.arange(5), np.arange(5), np.arange(layers), indexing="ij"),
                    -1).reshape(-1, 3)
    pos = 0.01 * (grid + 0.5) + rng.uniform(-4e-4, 4e-4, grid.shape)
    pos[:, 2] = 0.0046 + 0.0092 * grid[:, 2]
    radii = rng.uniform(0.004, 0.0045, len(pos))
    top = float((pos[:, 2] + radii).max())
    servo = {**({"force": force} if pressure is None else pressure), "gain": 0.02,
             "max_speed": 0.2}
    piston = {"type": "plane", "point": [0.0, 0.0, top], "normal": [0.0, 0.0, -1.0],
              "servo": servo}
    if mesh:
        v, t = box_surface((lo[0] - 0.01, lo[1] - 0.01, top), (hi[0] + 0.01, hi[1] + 0.01,
                                                                top + 0.005))
        piston = {"type": "mesh", "vertices": v.tolist(), "triangles": t.tolist(),
                  "servo": {**servo, "direction": list(direction)}}
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=2500.0),
        box=BoxConfig(lo=lo, hi=hi, boundary=("periodic", "periodic", "wall")),
        contact=ContactConfig(youngs_modulus=1e6, restitution=0.3, friction=0.3),
        walls=[piston], gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


#: the servo ring's spheres (number, radius m, stiffness N/m) and its target load (N)
RING = (12, 0.01, 1e4)
RING_FORCE = 10.0


def servo_ring(force=((0.0, 0.0), (0.02, RING_FORCE)), pressure=None, length=None, **cfg):
    """:data:`RING` spheres in a ring about the z axis (z = 0), neighbours touching, inside a
    cylinder (infinite, or a tube of ``length``) touching them, whose radius a servo drives to
    hold ``force`` (N, or a table of time; default ramped up in 0.02 s) or ``pressure`` (Pa,
    over the tube's 2πRL); no gravity, frictionless linear contacts (``stiffness``), damped."""
    n, r, k = RING
    phi = 2.0 * np.pi * np.arange(n) / n
    rho = r / math.sin(math.pi / n)
    pos = np.column_stack((rho * np.cos(phi), rho * np.sin(phi), np.zeros(n)))
    wall = {"type": "cylinder", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
            "radius": rho + r, "servo": {**({"force": force} if pressure is None
                                            else {"pressure": pressure}),
                                         "gain": 0.002, "max_speed": 0.5}}
    if length is not None:
        wall["length"] = length
    half = rho + 2.0 * r
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=np.full(n, r), density=2500.0),
        box=BoxConfig(lo=(-half, -half, -2.0 * r), hi=(half, half, 2.0 * r)),
        contact=ContactConfig(stiffness=k, restitution=0.3), walls=[wall],
        gravity=(0.0, 0.0, 0.0), progress=False, **cfg)


def ring_radius(load: float, length: float | None = None, pressure: float | None = None):
    """The ring's cylinder radius R (m) at rest under ``load`` (N; or ``pressure`` (Pa) over
    2πRL of a tube of ``length``): each sphere pressed by F_w = L/n, its neighbours by
    F_s = F_w/(2 sin(π/n)); the ring's radius ρ = (2r − F_s/k)/(2 sin(π/n)) and
    R = ρ + r − F_w/k — with a pressure F_w = p 2π R L/n, solved for R (linear)."""
    n, r, k = RING
    s = math.sin(math.pi / n)
    if pressure is None:
        f_w = load / n
        return (2.0 * r - f_w / (2.0 * s * k)) / (2.0 * s) + r - f_w / k
    c = pressure * 2.0 * math.pi * length / n  # F_w = c R
    return (r / s + r) / (1.0 + c / (4.0 * s * s * k) + c / k)


#: the materials of :func:`two_materials`: spheres of glass and rubber, a steel box
MATERIALS = (MaterialConfig(name="glass", youngs_modulus=5e7, poisson_ratio=0.24,
                            restitution=0.8, friction=0.3, density=2500.0),
             MaterialConfig(name="rubber", youngs_modulus=5e6, poisson_ratio=0.45,
                            restitution=0.4, friction=0.8, rolling_friction=0.05,
                            density=1200.0),
             MaterialConfig(name="steel", youngs_modulus=2e8, poisson_ratio=0.3,
                            friction=0.2))


def two_materials(n=200, seed=6, **cfg):
    """``n`` spheres (radii 0.05-0.1 m), glass and rubber alternating by id, falling into a
    walled steel box (1.2 x 1.2 x 2 m) under Hertz contacts with friction, a glass–steel pair
    of its own restitution ([[interactions]]), and a feed of 40 rubber spheres poured in."""
    rng = np.random.default_rng(seed)
    radii = rng.uniform(0.05, 0.1, n)
    pos = place_spheres(radii, np.zeros(3), np.array([1.2, 1.2, 1.3]), seed)
    vel = rng.normal(0.0, 0.5, (n, 3))
    ins = InsertionConfig(region_lo=(0.1, 0.1, 1.5), region_hi=(1.1, 1.1, 1.9), rate=2000.0,
                          radius_min=0.05, radius_max=0.08, velocity=(0.0, 0.0, -2.0),
                          total=40, every=10, seed=seed, material="rubber")
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, velocities=vel,
                                  material=["glass", "rubber"] * (n // 2) + ["glass"] * (n % 2)),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=(1.2, 1.2, 2.0), material="steel"),
        contact=ContactConfig(law="hertz", restitution=0.6), materials=MATERIALS,
        interactions=(InteractionConfig(materials=("glass", "steel"), restitution=0.5),),
        insertion=ins, gravity=(0.0, 0.0, -9.81), progress=False, **cfg)


#: the materials of :func:`materials_file`'s spheres, by sphere (its file's column)
FILE_MATERIALS = np.random.default_rng(8).choice(["glass", "rubber", "steel"], 200,
                                                 p=[0.45, 0.45, 0.1])


def materials_file(folder, comm, **cfg):
    """:func:`two_materials`' 200 spheres (no feed) read from a CSV file written into
    ``folder`` by rank 0, each sphere's material in its ``material`` column
    (:data:`FILE_MATERIALS`: glass, rubber and a few steel), in a steel box."""
    base = two_materials(n=200, seed=7)
    p = base.particles
    if comm.rank == 0:
        rows = [",".join([*(repr(float(v)) for v in (*x, r, *v)), m]) for x, r, v, m in
                zip(p.positions, p.radii, p.velocities, FILE_MATERIALS)]
        (folder / "spheres.csv").write_text("x,y,z,radius,vx,vy,vz,material\n"
                                            + "\n".join(rows) + "\n")
    idle_barrier(comm)
    return base.with_(particles=ParticlesConfig(file=str(folder / "spheres.csv")),
                      insertion=None, **cfg)


#: the stages of :func:`staged_drum`: the piston moves in, then a stage turns it back with a
#: program, halves gravity and raises the friction until the spheres have slowed (or 0.01 s),
#: then a stage stops it; each change from the step its stage begins (pdyn.stages)
STAGES = [
    {"name": "in", "duration": 0.006},
    {"name": "back", "walls": [{"wall": 1, "velocity": [0.0, -0.3, 0.0], "translation": [
        {"type": "sine", "amplitude": [0.0, 0.0005, 0.0], "frequency": 40.0}]}],
     "gravity": [0.0, 0.0, -4.9], "contact": {"friction": 0.6},
     "kinetic_energy": 3.1e-5, "check_every": 5, "max_duration": 0.01},
    {"name": "rest", "walls": [{"wall": 1, "velocity": [0.0, 0.0, 0.0]}], "duration": 0.1},
]


def staged_drum(**cfg):
    """:func:`drum_with_piston` run in the three :data:`STAGES`."""
    return drum_with_piston(stages=STAGES, **cfg)


#: :func:`quick_triaxial`'s pressure (Pa), its shear stage's axial rate (1/s) and strain
TRIAXIAL_P, TRIAXIAL_RATE, TRIAXIAL_STRAIN = 200.0, 1.0, 0.05
#: the shear stage's control of the box in :func:`quick_triaxial` (its ``box`` table, what
#: ``Simulation.set_box`` takes)
TRIAXIAL_SHEAR_BOX = {"target_pressure": {"x": TRIAXIAL_P, "y": TRIAXIAL_P},
                      "strain_rate": {"z": -TRIAXIAL_RATE}}


def quick_triaxial(scale=0.5, compress=0.1, **cfg):
    """The ``triaxial`` scene in a hurry: its loose cell pressed at up to 5 /s (gain 20 /s)
    for ``compress`` s, then z strained at −``TRIAXIAL_RATE`` to −``TRIAXIAL_STRAIN`` with
    x and y at ``TRIAXIAL_P``."""
    scene = make_scene("triaxial", scale=scale, materialise=False)
    p = TRIAXIAL_P
    box = BoxConfig(lo=tuple(scene.box_lo), hi=tuple(scene.box_hi), boundary=("periodic",) * 3,
                    target_pressure=(p, p, p), max_strain_rate=5.0, pressure_gain=20.0,
                    pressure_every=5)
    stages = [{"name": "compress", "duration": compress},
              {"name": "shear", "box": TRIAXIAL_SHEAR_BOX, "strain": {"z": -TRIAXIAL_STRAIN}}]
    return SimulationConfig(scene="triaxial", scale=scale, box=box, stages=stages,
                            progress=False, **cfg)


def pressed_triaxial(scale=0.5, **cfg):
    """:func:`quick_triaxial`'s cell pressed on, one stage without an end (the shear's
    control of the box comes from Python: ``Simulation.set_box(**TRIAXIAL_SHEAR_BOX)``)."""
    return quick_triaxial(scale, **cfg).with_(stages=[{"name": "compress"}])


#: stages of :func:`drum_with_piston` that change the time step (8.4e-5 s from its law): a
#: coarse stage, a fine one that turns the piston back and raises the friction, coarse again
DT_STAGES = [
    {"name": "coarse", "duration": 0.004},
    {"name": "fine", "dt": 4e-5, "walls": [{"wall": 1, "velocity": [0.0, -0.3, 0.0]}],
     "contact": {"friction": 0.6}, "duration": 0.004},
    {"name": "coarse again", "dt": 8e-5},
]
#: changes made from Python (``Simulation.change``) to :func:`drum_with_piston`: the piston
#: turned back with a sine, gravity halved, restitution and friction changed, a finer step
CHANGES = {"walls": [{"wall": 1, "velocity": [0.0, -0.3, 0.0], "translation": [
    {"type": "sine", "amplitude": [0.0, 0.0005, 0.0], "frequency": 40.0}]}],
    "gravity": [0.0, 0.0, -4.9], "contact": {"friction": 0.6, "restitution": 0.5}, "dt": 4e-5}
