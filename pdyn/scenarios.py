"""Named, deterministic initial states ("scenes"): Koch 2020's seven benchmark scenes (Sec. 4.1),
Schornbaum 2009's constant-density scene (Sec. 4.1-4.3), a granular gas in a box, a
polydisperse drop onto a floor (the default, a good first picture), a heap poured onto a
floor (insertion during the run), a rotating drum and a chute (flow down a rough incline).

Every scene is a pure function of ``(scale, seed)``: ``make_scene(name, scale=..., seed=...)``.
``scale`` multiplies the particle count; lengths of the box and of the placement regions scale
by ``scale**(1/3)`` so that densities stay those of the source. Radii never scale (except the
single huge sphere of ``very_polydisperse``, which keeps filling the box). Units: SI-like and
consistent (m, kg, s); Koch's scenes use his unit radii and a unit density.

Built-in scenes are **generated per lattice cell** (``pdyn.placement``): each cell from its own
random stream, its particle count known before any position is drawn, so a run on many ranks
creates on each rank only the particles of its own blocks and the scene never depends on the
rank count. ``make_scene`` returns the whole scene (every cell drawn, ``positions`` etc. set)
unless asked for the lazy form a run distributes. A scene given as arrays (``Scene`` with
``positions``; a config's ``[particles]``) is read on one rank and scattered.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace

import numpy as np

from .analysis import dembenchmark as dem
from .placement import (Cells, SceneError, lattice_cells, place_spheres, placed_cells,
                        random_layer, uniform_cells)
from .values import BadValue, flag, number


@dataclass
class Scene:
    """Initial state: particles, box, boundaries, gravity and suggested contact parameters.
    The particles are either arrays (``positions``, ``velocities``, ``radii``) or ``cells``,
    generated per lattice cell on demand (:meth:`materialised` draws them all)."""

    name: str
    box_lo: np.ndarray
    box_hi: np.ndarray
    boundary: tuple  # per axis: "wall" | "periodic" | "open"
    positions: np.ndarray | None = None
    velocities: np.ndarray | None = None
    radii: np.ndarray | None = None
    density: float = 1.0
    gravity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    contact: dict = field(default_factory=dict)  # suggested ContactConfig values
    insertion: dict = field(default_factory=dict)  # suggested InsertionConfig values (pouring)
    steps: int = 1000  # suggested number of steps
    dt: float | None = None  # suggested time step (s); None: from the contact time
    description: str = ""
    given_masses: np.ndarray | None = None  # kg, given by a config or a checkpoint (else density)
    cells: Cells | None = None  # generated per lattice cell instead of the arrays
    walls: tuple = ()  # walls beyond the box faces, as [[walls]] tables (pdyn.walls)
    #: per sphere of the arrays: fixed (never integrated, at rest: a rough floor; None: none)
    fixed: np.ndarray | None = None
    #: per sphere of the arrays: the index k of the wall ``walls[k]`` it is glued to (fixed,
    #: moving with the wall: a rough drum, ``pdyn.dynamics.glued``), -1 none (None: none)
    glued: np.ndarray | None = None
    #: several materials: ``[[materials]]`` and ``[[interactions]]`` tables the scene brings
    #: (a config's own replace them), and per sphere of the arrays its index into
    #: ``materials`` (None: 0)
    materials: tuple = ()
    interactions: tuple = ()
    material: np.ndarray | None = None
    #: Lees–Edwards shear (``[box] shear_rate``, 1/s; 0: none) and whether the spheres start
    #: on its linear profile (``shear_profile``), unless the config gives a ``[box]``
    shear_rate: float = 0.0
    shear_profile: bool = False
    #: a box whose lengths follow target pressures: ``[box]`` fields (``target_pressure``,
    #: ``max_strain_rate``, ``pressure_gain``, ``pressure_every``), unless the config gives
    #: a ``[box]``
    pressure: dict = field(default_factory=dict)
    #: a run in stages: ``[[stages]]`` tables the scene brings (``pdyn.stageplan``), unless
    #: the config gives its own
    stages: tuple = ()

    def masses_of(self, radius) -> np.ndarray:
        """Masses (kg) of spheres of ``radius`` at the scene's density."""
        return self.density * (4.0 / 3.0) * np.pi * np.asarray(radius, float) ** 3

    @property
    def masses(self) -> np.ndarray:
        if self.given_masses is not None:
            return self.given_masses
        return self.masses_of(self.radii)

    def materialised(self) -> Scene:
        """The scene with every particle drawn into the arrays (itself when it has them)."""
        if self.cells is None:
            return self
        p = self.cells.fill()
        return replace(self, positions=p["pos"], velocities=p["vel"], radii=p["radius"],
                       cells=None)

    def __len__(self) -> int:
        if self.cells is not None:
            return self.cells.n
        return 0 if self.radii is None else self.radii.shape[0]


# ------------------------------------------------------------------ the scenes
def _koch(name, scale, seed, box, groups, regions, steps, description, huge=None,
          few_large=False):
    """Koch 2020 Sec. 4.1 layout: ``groups`` = [(count, radius)], ``regions`` =
    [(fraction, lo, hi)] in unscaled coordinates; lengths scale by scale**(1/3). ``huge``: the
    radius of one fixed sphere in the middle of the box (scaled too); ``few_large``: the first
    group is placed once in the whole box (every rank places the same few spheres) and the
    cells, then narrow enough for the other radii, avoid them."""
    s = scale ** (1 / 3)
    kinds = [(max(int(round(c * scale)), 1 if c else 0), r, r) for c, r in groups]
    hi = np.asarray(box, float) * s
    fixed_pos, fixed_radius = np.zeros((0, 3)), np.zeros(0)
    if huge is not None:  # the huge sphere sits in the middle
        fixed_pos, fixed_radius = 0.5 * hi[None, :], np.array([huge * s])
    if few_large:
        (count, r, _), kinds = kinds[0], kinds[1:]
        fixed_radius = np.full(count, r)
        fixed_pos = place_spheres(fixed_radius, np.zeros(3), hi, seed)
    fixed_vel = np.random.default_rng([seed, 1]).uniform(-0.01, 0.01, (len(fixed_radius), 3))
    regions = [(f, np.asarray(lo, float) * s, np.asarray(rhi, float) * s)
               for f, lo, rhi in regions]
    cells = placed_cells(np.zeros(3), hi, kinds, regions, seed, velocity=(1, 0.01),
                         fixed=(fixed_pos, fixed_vel, fixed_radius))
    return Scene(
        name=name, box_lo=np.zeros(3), box_hi=hi, boundary=("wall", "wall", "wall"),
        density=1.0, contact={"youngs_modulus": 1e3}, steps=steps, description=description,
        cells=cells,
    )


def _whole(box):
    return [(1.0, (0, 0, 0), box)]


def reference(scale=1.0, seed=0):
    """Koch 4.1.2: 100 000 spheres r=0.5, homogeneous in a walled 100^3 box."""
    return _koch("reference", scale, seed, (100, 100, 100), [(100000, 0.5)],
                 _whole((100, 100, 100)), 200,
                 "Koch Sec. 4.1.2: 100 000 spheres r=0.5, homogeneous in 100^3")


def inhomogeneous(scale=1.0, seed=0):
    """Koch 4.1.3: 100 000 spheres r=0.5 in three dense regions of a 500^3 box."""
    regions = [
        (0.70, (0, 200, 250), (150, 250, 350)),
        (0.25, (325, 150, 100), (400, 225, 175)),
        (0.04, (475, 475, 475), (500, 500, 500)),
        (0.01, (0, 0, 0), (500, 500, 500)),
    ]
    return _koch("inhomogeneous", scale, seed, (500, 500, 500), [(100000, 0.5)], regions, 200,
                 "Koch Sec. 4.1.3: 100 000 spheres r=0.5 in three dense regions of 500^3")


def very_inhomogeneous(scale=1.0, seed=0):
    """Koch 4.1.4: 80 000 spheres r=0.5 crowded into one corner of a 2000^3 box."""
    regions = [
        (0.10, (0, 0, 0), (40, 40, 40)),
        (0.85, (0, 0, 0), (100, 100, 100)),
        (0.05, (0, 0, 0), (2000, 2000, 2000)),
    ]
    return _koch("very_inhomogeneous", scale, seed, (2000, 2000, 2000), [(80000, 0.5)],
                 regions, 200, "Koch Sec. 4.1.4: 80 000 spheres r=0.5 in one corner of 2000^3")


def checkerboard(scale=1.0, seed=0):
    """Koch 4.1.5: 10^6 spheres r=0.5 filling 32 of 64 cubes of a 400^3 box."""
    regions = [
        (1.0, (100 * i, 100 * j, 100 * k), (100 * i + 100, 100 * j + 100, 100 * k + 100))
        for i in range(4) for j in range(4) for k in range(4) if (i + j + k) % 2 == 0
    ]
    return _koch("checkerboard", scale, seed, (400, 400, 400), [(1000000, 0.5)], regions, 50,
                 "Koch Sec. 4.1.5: 10^6 spheres r=0.5 in 32 of 64 cubes of 400^3")


def polydisperse(scale=1.0, seed=0):
    """Koch 4.1.6: 4 x 12 500 spheres of radii 2, 1, 0.5, 0.25 in a 200^3 box."""
    return _koch("polydisperse", scale, seed, (200, 200, 200),
                 [(12500, 2.0), (12500, 1.0), (12500, 0.5), (12500, 0.25)],
                 _whole((200, 200, 200)), 200, "Koch Sec. 4.1.6: radii 2, 1, 0.5, 0.25 in 200^3")


def more_polydisperse(scale=1.0, seed=0):
    """Koch 4.1.7: radii 20, 2.5, 1, 0.5 (80 000 spheres, size ratio 40) in 400^3."""
    return _koch("more_polydisperse", scale, seed, (400, 400, 400),
                 [(320, 20.0), (2880, 2.5), (12800, 1.0), (64000, 0.5)],
                 _whole((400, 400, 400)), 200, "Koch Sec. 4.1.7: radii 20, 2.5, 1, 0.5 in 400^3",
                 few_large=True)


def very_polydisperse(scale=1.0, seed=0):
    """Koch 4.1.8: one sphere r=180 among 39 999 of r=0.5 in a 400^3 box."""
    return _koch("very_polydisperse", scale, seed, (400, 400, 400), [(39999, 0.5)],
                 _whole((400, 400, 400)), 10,
                 "Koch Sec. 4.1.8: one sphere r=180 among 39 999 of r=0.5 in 400^3", huge=180.0)


def box(scale=1.0, seed=0):
    """Elastic granular gas in a walled box, no gravity (e = 1)."""
    n = max(int(round(2000 * scale)), 1)
    L = 20.0 * scale ** (1 / 3)
    hi = np.full(3, L)
    cells = placed_cells(np.zeros(3), hi, [(n, 0.2, 0.4)], _whole(hi), seed, velocity=(2, 1.0))
    return Scene(
        name="box", box_lo=np.zeros(3), box_hi=hi, boundary=("wall",) * 3, density=1000.0,
        contact={"youngs_modulus": 1e6, "restitution": 1.0}, steps=2000, cells=cells,
        description="elastic granular gas of 2000 spheres (r 0.2-0.4 m) in a walled 20 m box",
    )


def drop(scale=1.0, seed=0):
    """Polydisperse spheres (r 0.15-0.35 m) falling onto a floor under gravity."""
    n = max(int(round(1000 * scale)), 1)
    w = 8.0 * scale ** (1 / 3)
    hi = np.array([w, w, 1.0 + 1.5 * w])
    region = [(1.0, (0.0, 0.0, 1.0), (w, w, 1.0 + 1.2 * w))]
    cells = placed_cells(np.zeros(3), hi, [(n, 0.15, 0.35)], region, seed)
    return Scene(
        name="drop", box_lo=np.zeros(3), box_hi=hi, boundary=("wall",) * 3, density=2500.0,
        gravity=np.array([0.0, 0.0, -9.81]), contact={"youngs_modulus": 1e8, "restitution": 0.5},
        steps=10000, cells=cells,
        description="1000 spheres (r 0.15-0.35 m, glass density) dropped 1-10 m onto a floor",
    )


def heap(scale=1.0, seed=0):
    """Spheres (r 0.08-0.12 m) poured from a small region onto a floor: a heap (cone).

    The box starts empty; insertion (``pdyn.dynamics.insertion``) pours 2000 · ``scale``
    spheres at 300 · ``scale`` per second, moving down at 3 m/s, from a region 1.2 m wide
    (× ``scale``^(1/3)) 1.0-2.6 m above the centre of the floor; glass-like density, damped
    linear contacts (e = 0.3). ``benchmarks/repose.py`` measures the cone's angle of repose.
    """
    n = max(int(round(2000 * scale)), 1)
    w = 8.0 * scale ** (1 / 3)
    c = 0.5 * w
    half = 0.6 * scale ** (1 / 3)
    return Scene(
        name="heap", box_lo=np.zeros(3), box_hi=np.array([w, w, 3.0]),
        boundary=("wall",) * 3, positions=np.zeros((0, 3)), velocities=np.zeros((0, 3)),
        radii=np.zeros(0), density=2500.0, gravity=np.array([0.0, 0.0, -9.81]),
        contact={"youngs_modulus": 1e7, "restitution": 0.3},
        insertion={"region_lo": (c - half, c - half, 1.0), "region_hi": (c + half, c + half, 2.6),
                   "rate": 300.0 * scale, "radius_min": 0.08, "radius_max": 0.12,
                   "density": 2500.0, "velocity": (0.0, 0.0, -3.0), "total": n, "every": 50,
                   "seed": seed},
        steps=25000,
        description=f"{n} spheres (r 0.08-0.12 m) poured onto a floor, forming a heap",
    )


def gas(scale=1.0, seed=0, solid_fraction=0.3):
    """Periodic elastic gas of 97 336 unit spheres (d = 1 m, m = 1 kg) at solid fraction 0.3.

    The time-step benchmark scene (``benchmarks/vs_lammps.py`` builds the same one in LAMMPS):
    centres on a simple cubic lattice of 46^3 sites, spacing (π/(6·0.3))^(1/3) ≈ 1.204 m,
    velocities normal with σ = 1 m/s per component (zero total momentum: each lattice cell's
    mean is removed), linear spring k = 2000 N/m, no damping, no gravity, dt = 0.001 s.
    ``scale`` changes the lattice to round((97 336·scale)^(1/3)) sites per edge (at least 4);
    ``solid_fraction`` φ (at most π/6, touching lattice neighbours) the spacing to (π/(6φ))^(1/3)
    (``benchmarks/vs_lammps.py --solid-fraction``: 0.5 is the dense variant).
    """
    if not 0.0 < solid_fraction <= np.pi / 6.0:
        raise SceneError(f"solid_fraction = {solid_fraction!r}: must be in (0, π/6] "
                         "(a simple cubic lattice of touching spheres)")
    m = max(int(round((97336 * scale) ** (1 / 3))), 4)
    a = (np.pi / (6.0 * solid_fraction)) ** (1 / 3)
    cells = lattice_cells(m, a, seed, 0.5)
    return Scene(
        name="gas", box_lo=np.zeros(3), box_hi=np.full(3, m * a), boundary=("periodic",) * 3,
        density=6.0 / np.pi, contact={"stiffness": 2000.0}, steps=500, dt=0.001, cells=cells,
        description=f"periodic elastic gas of {m**3} spheres d=1 m, m=1 kg, solid fraction "
        f"{solid_fraction:g}, k = 2000 N/m (time-step benchmark)",
    )


def schornbaum(scale=1.0, seed=0):
    """Schornbaum 2009 Sec. 4: periodic random spheres, 2 overlaps each, 20 % motion, no forces.

    Density chosen for ~2 overlaps per object, each moving at most 20 % of its size per unit
    step; meant for broad-phase benchmarks."""
    n = max(int(round(10000 * scale)), 1)
    # expected overlaps per object = n_density * (4/3) pi (2r)^3 = 2
    density = 2.0 / ((4.0 / 3.0) * np.pi * 1.0**3)
    L = (n / density) ** (1 / 3)
    cells = uniform_cells(np.full(3, L), n, 0.5, seed)
    return Scene(
        name="schornbaum", dt=1.0, box_lo=np.zeros(3), box_hi=np.full(3, L),
        boundary=("periodic",) * 3, density=1.0, contact={"youngs_modulus": 0.0}, steps=100,
        cells=cells,
        description="Schornbaum 2009 Sec. 4: 10^4 overlapping spheres, 2 overlaps each, "
        "moving <= 20 % of their size per step (broad-phase benchmark, no forces)",
    )


def drum(scale=1.0, seed=0, froude=0.01, rough=False):
    """A rotating drum: ~2000 frictional spheres (r 3.7-4.3 mm) in a cylinder turning about x.

    The cylinder (radius 0.1 m, axis x, spheres inside; ``pdyn.walls``) turns at Ω with
    Froude number Fr = Ω² R / g = ``froude`` (0.01: Ω = 0.99 rad/s, the rolling regime);
    periodic along x over 9 lattice spacings × ``scale`` (at least 3; below scale 1/3 the
    slabs hold fewer spheres, so the count stays 1998 × ``scale``). The spheres start on a
    simple cubic lattice (spacing 8.8 mm, jittered by ±0.09 mm) in the lowest 55 % of the
    cross-section, at rest, and fall into the turning drum; glass-like density, linear
    contacts (k = 40 000 N/m between spheres: overlaps below 1 % of a radius while the bed
    flows, ``benchmarks/drum_angle.py``), e = 0.5, μ = 0.5, μ_r = 0.02.

    ``rough``: the wall carries a glued layer (``Scene.glued``, ``pdyn.dynamics.glued``) of
    spheres of the mean diameter d = 8 mm, centres at R − d/2, turning with the drum: one
    ring of them per lattice spacing along the axis (rings 8.8 mm apart), each ring as many
    as fit with no two overlapping (75: 8.04 mm apart), ring i turned by i·⌊n/2⌋/n of that
    spacing (n rings), so that neighbouring rings are staggered by about half of it. A bed
    sphere rests in a hollow 5.3 mm above the glued centres: it cannot reach the smooth wall
    beneath (a random layer would leave holes a sphere wedges into and rides round in). The
    lattice then keeps d more from the wall and holds the same spheres.
    """
    number("froude", froude, lo=0)
    big, r, a = 0.1, 0.004, 0.0088
    nx = max(int(round(9 * scale)), 3)
    length = nx * a
    omega = float(np.sqrt(froude * 9.81 / big))
    m = int(np.ceil(big / a))
    g = (np.arange(-m, m + 1) + 0.5) * a
    y, z = np.meshgrid(g, g, indexing="ij")
    inside = np.hypot(y, z) < big - 1.3 * r - (2.0 * r if rough else 0.0)
    y, z = y[inside], z[inside]
    order = np.lexsort((y, z))  # lowest rows first
    keep = order[:max(1, int(round(1998 * scale / nx)))]  # 222 per slab at scale >= 1/3
    yz = np.column_stack((y[keep], z[keep]))
    pos = np.concatenate([np.column_stack((np.full(len(yz), (i + 0.5) * a), yz))
                          for i in range(nx)])
    rng = np.random.default_rng(seed)
    pos = pos + rng.uniform(-0.00009, 0.00009, pos.shape)
    radii = rng.uniform(0.925 * r, 1.075 * r, len(pos))
    n_bed, glued = len(pos), None
    if rough:
        ring = big - r  # the glued centres' circle
        per = int(np.pi / np.arcsin(r / ring))  # chords of at least 2 r
        k = np.arange(nx)[:, None]
        phi = 2.0 * np.pi / per * (np.arange(per)[None, :] + (k * (nx // 2) % nx) / nx)
        layer = np.column_stack((np.repeat((np.arange(nx) + 0.5) * a, per),
                                 ring * np.cos(phi.ravel()), ring * np.sin(phi.ravel())))
        pos = np.concatenate((pos, layer))
        radii = np.concatenate((radii, np.full(len(layer), r)))
        glued = np.where(np.arange(len(pos)) < n_bed, -1, 0)
    return Scene(
        name="drum", box_lo=np.array([0.0, -big - 0.01, -big - 0.01]),
        box_hi=np.array([length, big + 0.01, big + 0.01]),
        boundary=("periodic", "open", "open"), positions=pos, velocities=np.zeros_like(pos),
        radii=radii, density=2500.0, gravity=np.array([0.0, 0.0, -9.81]), glued=glued,
        contact={"youngs_modulus": 2e7, "restitution": 0.5, "friction": 0.5,
                 "rolling_friction": 0.02},
        walls=({"type": "cylinder", "point": [0.0, 0.0, 0.0], "axis": [1.0, 0.0, 0.0],
                "radius": big, "inside": True, "angular_velocity": omega},),
        steps=75000,
        description=f"rotating drum: {n_bed} spheres (r 3.7-4.3 mm) in a cylinder R = 0.1 m "
        f"turning at {omega:.3g} rad/s (Froude {froude:g}), periodic along its axis"
        + (f", its wall rough: {len(pos) - n_bed} spheres glued to it" if rough else ""),
    )


def hopper(scale=1.0, seed=0, orifice=6.0, slope=15.0, opens=0.3, height=1.0):
    """A silo with a pyramidal bottom: ~5000 frictional spheres (d ≈ 1 cm) settle, then flow out.

    A square silo 20 d wide (d = 1 cm the mean diameter; box walls in x and y; at least
    D + 6 d) whose bottom is four planes (``pdyn.walls``) rising at ``slope`` degrees from a
    square orifice of side D = ``orifice`` · d at the centre (the planes' section at z = 0).
    Planes are infinite: below z = 0 they close the orifice as a shallow pyramid, so the
    spheres, started at rest on a simple cubic lattice (spacing 1.07 d, jittered by ±0.005 d)
    above the bottom, settle on a closed hopper. The outlet (``[insertion]`` with rate 0)
    removes every sphere whose centre is below z_out = r cos(slope) — below it a sphere could
    only touch the planes' continuation across the orifice, never the bottom itself — from
    t = ``opens`` (s) on: the hopper opens. Radii uniform in 0.475-0.525 cm, glass density,
    linear contacts (E = 4.5 MPa: k = 11 250 N/m between spheres), e = 0.5, μ = 0.5.
    ``scale`` multiplies the count and the silo's width by its cube root (the fill's height
    follows); ``height`` (> 0) multiplies the count again at the same width, so the fill is
    that many times taller; the orifice stays D. ``benchmarks/beverloo.py`` fits Beverloo's
    law to the discharge rate over orifice sizes.
    """
    number("height", height, above=0)
    d, r = 0.01, 0.005
    rmin, rmax, a = 0.95 * r, 1.05 * r, 1.07 * d
    n = max(int(round(5000 * scale * height)), 1)
    width = max(20.0 * scale ** (1 / 3), orifice + 6.0) * d
    a_sin, a_cos = float(np.sin(np.radians(slope))), float(np.cos(np.radians(slope)))
    tan = float(np.tan(np.radians(slope)))
    apex = -0.5 * orifice * d * tan  # the planes meet below the orifice
    m = int(width // a)
    g = (np.arange(m) + 0.5) * a + 0.5 * (width - m * a)
    layers = int(np.ceil(n / (m * m))) + int(np.ceil(0.5 * width * tan / a)) + 2
    x, y, z = np.meshgrid(g, g, apex + (np.arange(layers) + 0.5) * a + rmax, indexing="ij")
    x, y, z = x.ravel(), y.ravel(), z.ravel()
    # clear of the bottom by rmax + 0.05 d: height above the pyramid's surface at (x, y)
    floor = apex + np.maximum(abs(x - 0.5 * width), abs(y - 0.5 * width)) * tan
    keep = (z - floor) * a_cos >= rmax + 0.05 * d
    order = np.lexsort((y[keep], x[keep], z[keep]))[:n]  # lowest layers first
    pos = np.column_stack((x[keep][order], y[keep][order], z[keep][order]))
    rng = np.random.default_rng(seed)
    pos = pos + rng.uniform(-0.005 * d, 0.005 * d, pos.shape)
    radii = rng.uniform(rmin, rmax, len(pos))
    lo = np.array([0.0, 0.0, apex - d])
    hi = np.array([width, width, pos[:, 2].max() + 2.0 * d])
    c = 0.5 * width
    walls = tuple({"type": "plane", "point": [c, c, apex], "normal": list(nrm)}
                  for nrm in ((a_sin, 0.0, a_cos), (-a_sin, 0.0, a_cos), (0.0, a_sin, a_cos),
                              (0.0, -a_sin, a_cos)))
    return Scene(
        name="hopper", box_lo=lo, box_hi=hi, boundary=("wall",) * 3, positions=pos,
        velocities=np.zeros_like(pos), radii=radii, density=2500.0,
        gravity=np.array([0.0, 0.0, -9.81]),
        contact={"youngs_modulus": 4.5e6, "restitution": 0.5, "friction": 0.5}, walls=walls,
        insertion={"region_lo": (0.0, 0.0, hi[2] - 2.2 * rmax), "region_hi": tuple(hi),
                   "rate": 0.0, "radius_min": rmin, "radius_max": rmax, "density": 2500.0,
                   "outlet_lo": tuple(lo), "outlet_hi": (width, width, r * a_cos),
                   "outlet_start": float(opens)},
        steps=30000,
        description=f"hopper: {len(pos)} spheres (d 0.95-1.05 cm) in a silo {width / d:.3g} d "
        f"wide with a {slope:g}° pyramidal bottom and a {orifice:g} d square orifice, opened "
        f"at t = {opens:g} s",
    )


def chute(scale=1.0, seed=0, angle=23.0, depth=20.0, stiffness=2e4):
    """Spheres (d = 1) flowing down a rough incline at ``angle`` degrees: Silbert et al. 2001.

    Units d = 1 m, m = 1 kg, g = 1 m/s² (time in √(d/g) = 1 s). Periodic along x (the flow)
    and y over L = 10 d × √``scale`` (at least 3 d: below scale 0.09 the depth shrinks
    instead, so the count stays ∝ ``scale``); gravity tilted, g = (sin θ, 0, −cos θ), the box not. The
    floor (a wall at z = 0) carries a rough base: a random monolayer of *fixed* spheres of the
    same diameter, centres at z = d/2 (``pdyn.placement.random_layer``; ``Scene.fixed``: never
    integrated, at rest). Above it the flowing spheres start at rest on a simple cubic lattice
    (spacing L/⌊L/1.05 d⌋, jittered by ±0.02 d), as many as fill ``depth`` d at packing 0.57;
    a wall closes the box 6 d above the lattice. Silbert's contacts: linear spring k_n =
    ``stiffness`` mg/d (Silbert 2 × 10⁵; the default 2 × 10⁴ and a time step 10⁻⁴ √10 √(d/g),
    the same fraction 1/50 of the contact time, cost √10 fewer steps), e = 0.88, k_t = 2/7
    k_n, μ = 0.5. ``benchmarks/chute_bagnold.py`` compares the flow with Bagnold's profile.
    """
    d, r = 1.0, 0.5
    length = max(10.0 * np.sqrt(scale), 3.0)  # periodic: two interaction ranges (d + skin)
    depth = float(depth) * 100.0 * scale / length**2  # below scale 0.09 the depth shrinks
    layer = random_layer(length, length, d, seed)
    base = np.column_stack((layer, np.full(len(layer), r)))
    n_side = int(length // 1.05)
    a = length / n_side
    want = int(round(length * length * depth * 0.57 / (np.pi / 6.0)))
    layers = int(np.ceil(want / n_side**2))
    g = (np.arange(n_side) + 0.5) * a
    z = d + r + 0.05 + np.arange(layers) * a
    x, y, zz = np.meshgrid(g, g, z, indexing="ij")
    flow = np.column_stack((x.ravel(), y.ravel(), zz.ravel()))
    flow = flow[np.lexsort((flow[:, 0], flow[:, 1], flow[:, 2]))][:want]  # lowest layers first
    flow = flow + np.random.default_rng([int(seed), 3]).uniform(-0.02, 0.02, flow.shape)
    pos = np.concatenate((base, flow))
    theta = np.radians(angle)
    k = float(stiffness)
    return Scene(
        name="chute", box_lo=np.zeros(3),
        box_hi=np.array([length, length, float(z[-1]) + 6.0]),
        boundary=("periodic", "periodic", "wall"), positions=pos,
        velocities=np.zeros_like(pos), radii=np.full(len(pos), r), density=6.0 / np.pi,
        gravity=np.array([np.sin(theta), 0.0, -np.cos(theta)]),
        contact={"stiffness": k, "restitution": 0.88, "friction": 0.5},
        fixed=np.arange(len(pos)) < len(base),
        dt=1e-4 * np.sqrt(2e5 / k), steps=60000,
        description=f"chute: {len(flow)} spheres (d = 1) flowing down a rough incline at "
        f"{angle:g} deg over {len(base)} fixed ones, periodic {length:.3g} d x {length:.3g} d, "
        f"k_n = {k:.3g} mg/d",
    )


def shear_cell(scale=1.0, seed=0, rate=1.0, profile=True, pressure=None):
    """Lees–Edwards simple shear of a dense frictional packing at constant volume, or at
    constant ``pressure`` (Pa) along z.

    Units d = 1 m, m ≈ 1 kg (density 6/π kg/m³), no gravity. N = round(500 × ``scale``)
    spheres of radius uniform in [0.4, 0.5] m on the sites of a face-centred cubic lattice of
    nearest-neighbour distance 1 m (cube edge √2 m; nx × ny × nz cubes, each at least 2, the
    most nearly cubic of at most 5 % more than the fewest sites 4 nx ny nz ≥ N; the spare
    sites, drawn from ``seed``, stay empty): solid fraction 0.51–0.55 from scale 0.5 up
    (5 × 5 × 5 cubes at scale 1), less below (the cell stays 2 cubes wide). Periodic on
    every axis, sheared at ``rate`` (1/s: flow x, gradient z, ``[box] shear_rate``), starting
    on the linear profile (``profile``).
    Frictional linear spring k = 2 × 10⁴ N/m, e = 0.7, μ = 0.5. With ``pressure`` the
    box's z length follows it (``[box] target_pressure`` z, ``pdyn.dynamics.cell``: gain
    ``PRESSURE_GAIN`` × rate, largest strain rate ``MAX_STRAIN_RATE`` × rate, read every
    ``PRESSURE_EVERY`` steps), the
    inertial number I = rate d / √(pressure / ρ) (d = 1 m, ρ = 6/π kg/m³); else the
    volume stays. The thermo's stress_xz and stress_zz give μ = −σ_xz / σ_zz.
    """
    if pressure is not None:
        number("pressure", pressure, above=0.0, note=" (Pa)")
    want = max(int(round(500.0 * float(scale))), 1)
    n0 = int(round((want / 4.0) ** (1.0 / 3.0)))
    sizes = [(nx, ny, max(2, -(-want // (4 * nx * ny))))
             for nx in range(max(2, n0 - 1), n0 + 2) for ny in range(max(2, n0 - 1), n0 + 2)]
    fewest = min(math.prod(d) for d in sizes)  # then the most cubic of up to 5 % more
    dims = min(sizes, key=lambda d: (math.prod(d) > 1.05 * fewest, max(d) - min(d),
                                      math.prod(d)))
    a = np.sqrt(2.0)
    basis = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])
    cube = np.stack(np.meshgrid(*map(np.arange, dims), indexing="ij"), -1).reshape(-1, 1, 3)
    pos = ((cube + basis + 0.25) * a).reshape(-1, 3)
    rng = np.random.default_rng([int(seed), 48])
    if want < len(pos):
        pos = pos[np.sort(rng.choice(len(pos), want, replace=False))]
    radii = rng.uniform(0.4, 0.5, len(pos))
    return Scene(
        name="shear_cell", box_lo=np.zeros(3), box_hi=np.array(dims, float) * a,
        boundary=("periodic",) * 3, positions=pos, velocities=np.zeros_like(pos), radii=radii,
        density=6.0 / np.pi, contact={"stiffness": 2e4, "restitution": 0.7, "friction": 0.5},
        steps=2000, shear_rate=float(rate), shear_profile=bool(profile),
        pressure={} if pressure is None else {
            "target_pressure": (None, None, float(pressure)),
            "pressure_gain": PRESSURE_GAIN * abs(float(rate)),
            "max_strain_rate": MAX_STRAIN_RATE * abs(float(rate)),
            "pressure_every": PRESSURE_EVERY},
        description=f"shear cell: {len(pos)} frictional spheres (d 0.8-1 m) sheared at "
        f"{float(rate):g} 1/s (Lees-Edwards, flow x, gradient z) at "
        + ("constant volume" if pressure is None else f"pressure {float(pressure):g} Pa")
        + f", periodic {' x '.join(f'{d * a:.3g}' for d in dims)} m")


#: the shear cell at constant pressure: the z length's gain and largest strain rate, per
#: unit shear rate (the error relaxes over about 1 / (gain K / p) ~ a few 1 / rate for
#: the bulk stiffness K ~ 50 p of the packing)
PRESSURE_GAIN = 0.1
MAX_STRAIN_RATE = 0.1
#: steps between its stress readings (a reading costs several steps' work; the error relaxes
#: over hundreds of steps)
PRESSURE_EVERY = 10


def triaxial(scale=1.0, seed=0, pressure=200.0, rate=0.02, strain=0.3, friction=0.5,
             compaction_friction=0.1):
    """A triaxial test in a periodic cell: isotropic compression, then axial strain at
    constant lateral stress.

    Units d ≈ 1 m, m ≈ 1 kg (density 6/π kg/m³), no gravity. N = round(500 × ``scale``)
    spheres of radius uniform in [0.4, 0.5] m (a size spread against crystals), placed at
    random without overlap at solid fraction 0.2 in a periodic cube; linear spring k = 2 × 10⁴
    N/m (k / (p d) = 100 at the default ``pressure`` 200 Pa), e = 0.7. Two stages
    (``[[stages]]``, docs/stages.md): *compress* — the three lengths follow ``pressure``
    (``[box] target_pressure``, gain ``TRIAXIAL_GAIN``, largest rate ``TRIAXIAL_MAX_RATE``,
    read every ``TRIAXIAL_EVERY`` steps) at friction ``compaction_friction`` (a low μ packs
    denser) for ``TRIAXIAL_COMPRESS`` s; *shear* — μ = ``friction``, z strained at the fixed
    rate −``rate`` (1/s: compression; inertial number rate d √(ρ/p) ≈ 0.002) while x and y
    follow ``pressure``, until the axial strain L_z / L_z0 − 1 = −``strain``. The thermo's
    stress columns give q = σ_zz − (σ_xx + σ_yy) / 2 (``benchmarks/triaxial.py``).
    """
    number("pressure", pressure, above=0.0, note=" (Pa)")
    number("rate", rate, above=0.0, note=" (1/s)")
    number("strain", strain, above=0.0, hi=0.9)
    number("friction", friction, above=0.0)
    number("compaction_friction", compaction_friction, above=0.0)
    n = max(int(round(500.0 * float(scale))), 1)
    mean_volume = 4.0 / 3.0 * np.pi * (0.5**4 - 0.4**4) / (4.0 * 0.1)  # ⟨r³⟩, r in [0.4, 0.5]
    hi = np.full(3, (n * mean_volume / 0.2) ** (1.0 / 3.0))
    cells = placed_cells(np.zeros(3), hi, [(n, 0.4, 0.5)], _whole(hi), seed)
    p = float(pressure)
    return Scene(
        name="triaxial", box_lo=np.zeros(3), box_hi=hi, boundary=("periodic",) * 3,
        density=6.0 / np.pi, contact={"stiffness": 2e4, "restitution": 0.7,
                                      "friction": float(friction)},
        cells=cells, steps=100000,
        pressure={"target_pressure": (p, p, p), "pressure_gain": TRIAXIAL_GAIN,
                  "max_strain_rate": TRIAXIAL_MAX_RATE, "pressure_every": TRIAXIAL_EVERY},
        stages=({"name": "compress", "duration": TRIAXIAL_COMPRESS,
                 "contact": {"friction": float(compaction_friction)}},
                {"name": "shear", "contact": {"friction": float(friction)},
                 "box": {"target_pressure": {"x": p, "y": p}, "strain_rate": {"z": -float(rate)}},
                 "strain": {"z": -float(strain)}}),
        description=f"triaxial test: {n} frictional spheres (d 0.8-1 m) in a periodic cell "
        f"compressed to {p:g} Pa (mu {float(compaction_friction):g}), then strained along z "
        f"at {-float(rate):g} 1/s to {-float(strain):g} (mu {float(friction):g}) at lateral "
        f"{p:g} Pa",
    )


#: the triaxial cell's pressure control: gain (1/s; a lateral strain rate ε̇ leaves an error
#: of about ε̇ / gain), largest rate (1/s), steps between readings, and the compression's time
#: (s: the cell jams and its pressure settles within ~1 % of the target)
TRIAXIAL_GAIN = 2.0
TRIAXIAL_MAX_RATE = 0.5
TRIAXIAL_EVERY = 5
TRIAXIAL_COMPRESS = 4.0


def _dem_materials(names) -> np.ndarray:
    """The indices of the benchmark's materials ``names`` in ``dembenchmark.MATERIALS``."""
    index = {m["name"]: k for k, m in enumerate(dem.MATERIALS)}
    return np.array([index[n] for n in names], np.uint8)


#: the silo's lid drops away at this speed (m/s), reached over this time (s)
LID_SPEED, LID_RAMP = 1.0, 1e-3
#: the drum reaches its speed over this time (s)
SPIN_RAMP = 1e-3


def silo_benchmark(scale=1.0, seed=0, small_orifice=False, m2=False, settle=0.3,
                   duration=5.0):
    """The DEM benchmark's silo ([Dosta2024]): 100 000 spheres (r = 2 mm) flow from a cylinder
    over a 45° cone out of its orifice (``pdyn.analysis.dembenchmark``).

    A steel cylinder (R = 0.1 m, axis z) over a steel cone down to the orifice — radius 3 cm
    at z = −0.0554222 m, or with ``small_orifice`` 2 cm at z = −0.0593008 m; spheres of M1
    (E = 1 GPa, ρ = 2500 kg/m³; dt = 1.5 µs) or with ``m2`` of M2 (0.5 GPa, 2000 kg/m³;
    dt = 2 µs); the benchmark's pair values (Hertz–Mindlin, each pair's e and μ). The
    benchmark's packing was not available: the spheres start on a loose lattice
    (``dembenchmark.silo_packing``) and settle for ``settle`` s on a steel plane closing the
    orifice, which then drops away (at 1 m/s, reached in 1 ms); from then on spheres 2 cm below the orifice
    are deleted, for ``duration`` s (the benchmark's 5 s: steps = (settle + duration)/dt).
    ``scale`` multiplies the count, the spheres and the silo stay (the fill is lower: the
    discharge rate, set by the orifice, is the full silo's while it lasts).
    """
    number("settle", settle, lo=0)
    number("duration", duration, above=0)
    orifice = "small" if small_orifice else "large"
    r_o, z_o = dem.ORIFICES[orifice]
    mat = "M2" if m2 else "M1"
    r = dem.SILO_SPHERE_RADIUS
    n = max(int(round(dem.SILO_SPHERES * scale)), 1)
    try:
        pos = dem.silo_packing(n, r, orifice, seed)
    except ValueError as exc:
        raise SceneError(f"scale = {scale!r}: {exc}") from None
    big = dem.SILO_RADIUS
    lo = np.array([-big - 0.01, -big - 0.01, z_o - 0.1])
    hi = np.array([big + 0.01, big + 0.01, float(pos[:, 2].max()) + 4.0 * r])
    rim = big + 0.005 - r_o  # the cone reaches past the cylinder
    drop = {"type": "table", "times": [settle, settle + LID_RAMP],
            "velocities": [[0.0, 0.0, 0.0], [0.0, 0.0, -LID_SPEED]]}
    walls = ({"type": "cylinder", "point": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
              "radius": big, "inside": True, "material": "steel"},
             {"type": "cone", "point": [0.0, 0.0, z_o], "axis": [0.0, 0.0, 1.0],
              "radius_lo": r_o, "radius_hi": r_o + rim, "lo": 0.0, "hi": rim,
              "material": "steel"},
             {"type": "plane", "point": [0.0, 0.0, z_o], "normal": [0.0, 0.0, 1.0],
              "translation": [drop], "material": "steel"})
    dt = dem.SILO_DT[mat]
    below = z_o - dem.SILO_DELETE_BELOW
    return Scene(
        name="silo_benchmark", box_lo=lo, box_hi=hi, boundary=("open",) * 3, positions=pos,
        velocities=np.zeros_like(pos), radii=np.full(n, r),
        density=dem.MATERIALS[int(_dem_materials([mat])[0])]["density"],
        gravity=np.array(dem.GRAVITY), contact=dict(dem.CONTACT), walls=walls,
        materials=dem.MATERIALS, interactions=dem.INTERACTIONS,
        material=np.full(n, _dem_materials([mat])[0]),
        insertion={"region_lo": (-0.02, -0.02, hi[2] - 3.0 * r),
                   "region_hi": (0.02, 0.02, hi[2]), "rate": 0.0, "radius_min": r,
                   "radius_max": r,
                   "outlet_lo": tuple(lo), "outlet_hi": (hi[0], hi[1], below),
                   "outlet_start": float(settle), "material": mat},
        dt=dt, steps=int(round((settle + duration) / dt)),
        description=f"DEM benchmark silo: {n} spheres of {mat} (r = 2 mm) in a cylinder "
        f"R = 0.1 m over a 45° cone, the {orifice} orifice (r = {r_o * 100:g} cm) opened "
        f"at t = {settle:g} s",
    )


def drum_benchmark(scale=1.0, seed=0, settle=0.2, duration=5.0):
    """The DEM benchmark's drum ([Dosta2024]): 8000 M2 spheres (r = 2 mm) under 30 000 M1
    spheres (r = 1 mm) in a drum turning at 2 rad/s (``pdyn.analysis.dembenchmark``).

    A steel cylinder (R = 0.1 m, axis y) between two steel planes at y = ±0.03 m, all turning
    at ω = (0, −2, 0) rad/s; M2 (E = 0.5 GPa, ρ = 2000 kg/m³) and M1 (1 GPa, 2500 kg/m³) with
    the benchmark's pair values; dt = 0.8 µs × the radius factor. The spheres start on loose
    lattices, the large below the small (``dembenchmark.drum_packing``: the published packing's
    layering), settle for ``settle`` s in the still drum, then it turns (reaching 2 rad/s in
    1 ms) for ``duration`` s (the benchmark's 5 s). ``scale`` multiplies both counts and the
    radii by scale^(−1/3): fewer, larger spheres fill the same drum to the same level.
    """
    number("settle", settle, lo=0)
    number("duration", duration, above=0)
    f = scale ** (-1.0 / 3.0)
    kinds = tuple((max(int(round(c * scale)), 1), r * f, m) for c, r, m in dem.DRUM_KINDS)
    try:
        pos, radii, kind = dem.drum_packing(kinds, seed)
    except ValueError as exc:  # spheres too large for the drum
        raise SceneError(f"scale = {scale!r}: {exc}") from None
    material = _dem_materials([m for _, _, m in kinds])[kind]
    rho = np.array([m["density"] for m in dem.MATERIALS])[material]
    big, half = dem.DRUM_RADIUS, dem.DRUM_HALF_WIDTH
    spin = [{"type": "ramp", "velocity": s, "start": float(settle),
             "end": float(settle) + SPIN_RAMP} for s in (dem.DRUM_OMEGA, -dem.DRUM_OMEGA)]
    walls = ({"type": "cylinder", "point": [0.0, 0.0, 0.0], "axis": [0.0, 1.0, 0.0],
              "radius": big, "inside": True, "rotation": [spin[0]], "material": "steel"},
             {"type": "plane", "point": [0.0, -half, 0.0], "normal": [0.0, 1.0, 0.0],
              "rotation": [spin[0]], "material": "steel"},
             {"type": "plane", "point": [0.0, half, 0.0], "normal": [0.0, -1.0, 0.0],
              "rotation": [spin[1]], "material": "steel"})
    dt = dem.DRUM_DT * f
    return Scene(
        name="drum_benchmark", box_lo=np.array([-big - 0.01, -half - 0.01, -big - 0.01]),
        box_hi=np.array([big + 0.01, half + 0.01, big + 0.01]), boundary=("open",) * 3,
        positions=pos, velocities=np.zeros_like(pos), radii=radii,
        given_masses=rho * 4.0 / 3.0 * np.pi * radii**3, gravity=np.array(dem.GRAVITY),
        contact=dict(dem.CONTACT), walls=walls, materials=dem.MATERIALS,
        interactions=dem.INTERACTIONS, material=material, dt=dt,
        steps=int(round((settle + duration) / dt)),
        description=f"DEM benchmark drum: {kinds[0][0]} M2 spheres (r = {kinds[0][1] * 1e3:.3g} "
        f"mm) under {kinds[1][0]} M1 (r = {kinds[1][1] * 1e3:.3g} mm) in a drum R = 0.1 m, "
        f"6 cm wide, turning at 2 rad/s from t = {settle:g} s",
    )


SCENES = {
    f.__name__: f
    for f in (drop, box, heap, gas, reference, inhomogeneous, very_inhomogeneous, checkerboard,
              polydisperse, more_polydisperse, very_polydisperse, schornbaum, drum, hopper, chute,
              silo_benchmark, drum_benchmark, shear_cell, triaxial)
}
DEFAULT_SCENE = "drop"
#: particles of each scene at scale 1 (the scene's count — for ``heap`` the count poured — is
#: about this times ``scale``)
SIZES = {"drop": 1000, "box": 2000, "heap": 2000, "gas": 97336, "reference": 100000,
         "inhomogeneous": 100000, "very_inhomogeneous": 80000, "checkerboard": 1000000, "polydisperse": 50000,
         "more_polydisperse": 80000, "very_polydisperse": 40000, "schornbaum": 10000,
         "drum": 2000, "hopper": 5000, "chute": 2300, "silo_benchmark": 100000,
         "drum_benchmark": 38000, "shear_cell": 500, "triaxial": 500}
#: peak memory of a run per particle on one rank (B): measured as the growth of the peak
#: resident size of ``pdyn run --scale S --steps 2`` from S = 1 to 100 and 400 (579 and 576 B)
BYTES_PER_PARTICLE = 600
#: what friction (rotation and the contact history) adds per particle (B): an upper bound of the
#: growth of the peak resident size of a 2-step ``pdyn run`` of the gas scene per particle
#: with ``friction = 0.5`` over the same run without
ROTATION_BYTES_PER_PARTICLE = 850


def available_memory() -> int | None:
    """Bytes this process may still allocate: the smaller of the kernel's ``MemAvailable`` and
    a cgroup v2 limit, None where neither is known."""
    known = []
    try:
        with open("/proc/meminfo") as f:
            known += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable")]
    except OSError:
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
        if limit.isdigit():
            known.append(int(limit) - used)
    except (OSError, ValueError):
        pass
    return min(known) if known else None


def check_memory(name: str, scale: float, ranks: int = 1, rotating: bool = False,
                 node_ranks: int = 1, available: float | None = None) -> None:
    """Refuse (SceneError) a scene whose estimated memory on a node exceeds the memory
    available there (``available`` bytes, default :func:`available_memory`), before anything
    is allocated: ``SIZES`` × scale × ``BYTES_PER_PARTICLE`` (+
    ``ROTATION_BYTES_PER_PARTICLE`` for a run with friction), each of ``ranks`` ranks holding
    its share and ``node_ranks`` of them sharing the node. (A run checks all it allocates
    again once its scene is known: ``pdyn.checks.check_memory``.)"""
    n = SIZES[name] * scale
    each = BYTES_PER_PARTICLE + (ROTATION_BYTES_PER_PARTICLE if rotating else 0)
    need = n * each / max(int(ranks), 1) * max(int(node_ranks), 1)
    have = available_memory() if available is None else available
    if have is not None and need > have:
        per = f" on a node of {node_ranks} of the {ranks} ranks" if ranks > 1 else ""
        raise SceneError(f"scale = {scale!r}: the {name!r} scene would hold about {n:.3g} "
                         f"particles and need about {need / 2**30:.3g} GiB of memory{per} "
                         f"({each} B each), more than the {have / 2**30:.3g} GiB "
                         "available")


def scene_options(name: str, options) -> dict:
    """``options`` checked as the named scene's keyword arguments beyond ``scale`` and
    ``seed`` (the drum's ``froude`` and ``rough``, the chute's ``angle``, ...): each a
    parameter of the scene's function, of its default's kind (a flag, or a finite number;
    numbers of the scene's own range checked by the scene). Errors as :class:`BadValue` of
    ``scene_options.<key>``, one line."""
    if not isinstance(options, dict):
        raise BadValue("scene_options", options, "expected a table [scene_options]")
    params = {k: p.default for k, p in inspect.signature(SCENES[name]).parameters.items()
              if k not in ("scale", "seed")}
    for key, value in options.items():
        if key not in params:
            known = ", ".join(params) or "none"
            raise BadValue(f"scene_options.{key}", value,
                           f"not an option of the {name!r} scene (its options: {known})")
        if isinstance(params[key], bool):
            flag(f"scene_options.{key}", value)
        else:
            number(f"scene_options.{key}", value)
    return dict(options)


def make_scene(name: str = DEFAULT_SCENE, *, scale: float = 1.0, seed: int = 0,
               materialise: bool = True, ranks: int = 1, rotating: bool = False,
               node_ranks: int = 1, available: float | None = None,
               options: dict | None = None) -> Scene:
    """Generate the named scene deterministically from ``seed``; ``scale`` shrinks/grows it;
    ``options`` are its further keyword arguments (:func:`scene_options`).
    With ``materialise=False`` a scene generated per cell keeps its cells undrawn (what a run
    distributes: each of ``ranks`` ranks draws its share, ``node_ranks`` of them on one
    node). Refuses (:class:`SceneError`) a scale whose memory estimate (more with
    ``rotating``: a run with friction) exceeds the memory available (``available`` bytes on
    the node; default :func:`available_memory`)."""
    if name not in SCENES:
        raise SceneError(f"scene = {name!r}: unknown (choose from {', '.join(SCENES)})")
    try:
        number("scale", scale, above=0)
    except BadValue as exc:
        raise SceneError(str(exc)) from None
    if materialise:
        ranks = node_ranks = 1  # this process draws it all
    try:
        options = scene_options(name, options or {})
    except BadValue as exc:
        raise SceneError(str(exc)) from None
    check_memory(name, scale, ranks, rotating, node_ranks, available)
    try:
        scene = SCENES[name](scale=float(scale), seed=int(seed), **options)
    except BadValue as exc:  # an option out of the scene's range
        prefix = "scene_options." if exc.name in options else ""
        raise SceneError(f"{prefix}{exc}") from None
    return scene.materialised() if materialise else scene


def describe_scenes() -> list[tuple[str, str]]:
    """(name, one-line description) of every built-in scene."""
    return [(name, (f.__doc__ or "").strip().splitlines()[0]) for name, f in SCENES.items()]
