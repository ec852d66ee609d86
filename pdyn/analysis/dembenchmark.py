"""The open-source DEM community's silo and drum benchmark ([Dosta2024]): its materials, pair
values and geometry as MercuryDPM's definition of the benchmark gives them ([MercuryOS]:
``Drivers/Papers/DEMBenchmark``, ``MercuryOS.h``, ``OSSilo.cpp``, ``OSDrum.cpp``), the
initial packings pdyn generates for them, and the quantities the paper compares. Units: m, kg,
s. The scenes themselves are ``pdyn.scenarios.silo_benchmark`` and ``drum_benchmark``.

**Materials** (Hertz with a viscoelastic dashpot, Mindlin's tangential spring, no rolling
friction; ``MercuryOS.h``): M1 (E = 1 GPa, ρ = 2500 kg/m³), M2 (E = 0.5 GPa, ρ = 2000 kg/m³)
and steel (E = 210 GPa, ρ = 7200 kg/m³), ν = 0.2 for all. Each pair's effective E* and G* are
Hertz–Mindlin's from the two sides' E and ν (1/E* = Σ (1 − ν²)/E, 1/G* = Σ (2 − ν)/G,
G = E/(2 (1 + ν))) — pdyn's mixing rule, ``pdyn.dynamics.materials``; each pair's restitution
and sliding friction are the benchmark's own (:data:`PAIRS`).

**Silo** (``OSSilo.cpp``): a cylinder of radius 0.1 m (axis z) over a 45° cone down to an
orifice of radius 3 cm at z = −0.0554222 m (the large orifice) or 2 cm at z = −0.0593008 m
(small); 100 000 spheres of radius 2 mm, all M1 (dt = 1.5 µs) or all M2 (2 µs); spheres 2 cm
below the orifice are deleted; compared: the spheres whose centre is above the orifice
against time. The published initial packings (``Silo/PartCoordinates*.txt``) were not
available to read: pdyn fills the silo (:func:`silo_packing`) and lets it settle on a closed
orifice first.

**Drum** (``OSDrum.cpp``): a cylinder of radius 0.1 m, axis y, 6 cm wide between two steel
side walls at y = ±0.03 m, all turning at ω = (0, −2, 0) rad/s; 8000 M2 spheres of radius
2 mm and 30 000 M1 spheres of radius 1 mm (the published packing, ``Drum/PartCoordinates.txt``,
is the M2 spheres poured first and the M1 spheres on top: pdyn generates that layering,
:func:`drum_packing`, and lets it settle before the drum turns); dt = 0.8 µs; compared: each
size's count in zone 1 (x > 0 and z > 0) and zone 2 (x < 0 and z < 0) against time.
"""

from __future__ import annotations

import numpy as np

#: the benchmark's materials as ``[[materials]]`` tables
MATERIALS = (
    {"name": "M1", "youngs_modulus": 1e9, "poisson_ratio": 0.2, "restitution": 0.5,
     "friction": 0.3, "density": 2500.0},
    {"name": "M2", "youngs_modulus": 0.5e9, "poisson_ratio": 0.2, "restitution": 0.4,
     "friction": 0.4, "density": 2000.0},
    {"name": "steel", "youngs_modulus": 210e9, "poisson_ratio": 0.2, "restitution": 0.6,
     "friction": 0.5, "density": 7200.0},
)
#: each pair of two materials: (restitution, sliding friction) ([MercuryOS] ``MercuryOS.h``)
PAIRS = {("M1", "M2"): (0.45, 0.2), ("M1", "steel"): (0.4, 0.2), ("M2", "steel"): (0.4, 0.2)}
#: the pairs as ``[[interactions]]`` tables (E* and G* mix as the benchmark's do)
INTERACTIONS = tuple({"materials": list(p), "restitution": e, "friction": mu}
                     for p, (e, mu) in PAIRS.items())
#: the contact model: Hertz, a dashpot on the tangent stiffness (pdyn's ``tangent``: the form
#: η ∝ √(m* k_t(δ)) of MercuryDPM's ``HertzianViscoelastic`` species with the damping set from
#: e), Mindlin's tangential spring (``pdyn.dynamics.friction``)
CONTACT = {"law": "hertz", "damping": "tangent", "poisson_ratio": 0.2}
GRAVITY = (0.0, 0.0, -9.8)

# ------------------------------------------------------------------ the silo
SILO_RADIUS = 0.1
#: (orifice radius, orifice height) of the large and the small orifice (m)
ORIFICES = {"large": (0.03, -0.0554222), "small": (0.02, -0.0593008)}
SILO_SPHERES = 100000
SILO_SPHERE_RADIUS = 2e-3
#: the benchmark's time steps (s) for silos of M1 and of M2 spheres
SILO_DT = {"M1": 1.5e-6, "M2": 2e-6}
#: spheres this far below the orifice are deleted (m)
SILO_DELETE_BELOW = 0.02
#: the clearance of a generated packing's spheres from the walls and from each other
#: (a fraction of the diameter) and its jitter (± of the diameter)
CLEARANCE, JITTER = 0.05, 0.005


def _lattice(lo, hi, spacing: float) -> np.ndarray:
    """The centres of a simple cubic lattice of ``spacing`` (m) filling ``lo``..``hi``, centred
    in x and y, its first layer half a spacing above ``lo``'s z; lowest layers first (then y,
    then x)."""
    axes = []
    for k, (a, b) in enumerate(zip(lo, hi)):
        n = max(int((b - a) // spacing), 1)
        start = a + 0.5 * (b - a - (n - 1) * spacing) if k < 2 else a + 0.5 * spacing
        axes.append(start + spacing * np.arange(n))
    x, y, z = np.meshgrid(*axes, indexing="ij")
    pts = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    return pts[np.lexsort((pts[:, 0], pts[:, 1], pts[:, 2]))]


def silo_packing(n: int, radius: float, orifice: str, seed: int) -> np.ndarray:
    """``n`` centres (m) of spheres of ``radius`` in the silo with the ``orifice`` ("large" or
    "small"): the lowest ``n`` sites of a simple cubic lattice of spacing 2.1 radii that lie
    inside the cylinder and above the cone and the orifice's plane, each clear of them by
    :data:`CLEARANCE` diameters, jittered by ± :data:`JITTER` diameters (a loose packing,
    solid fraction ≈ 0.45, that settles under gravity)."""
    r_o, z_o = ORIFICES[orifice]
    d = 2.0 * radius
    gap = radius + CLEARANCE * d
    a = 1.05 * d
    height = n * a**3 / (np.pi * (SILO_RADIUS - gap) ** 2) + (SILO_RADIUS - r_o) + 4.0 * a
    pts = _lattice((-SILO_RADIUS, -SILO_RADIUS, z_o), (SILO_RADIUS, SILO_RADIUS, z_o + height),
                   a)
    rho = np.hypot(pts[:, 0], pts[:, 1])
    above_cone = (r_o + (pts[:, 2] - z_o) - rho) / np.sqrt(2.0) >= gap
    keep = (rho <= SILO_RADIUS - gap) & above_cone & (pts[:, 2] >= z_o + gap)
    pts = pts[keep]
    if len(pts) < n:
        raise ValueError(f"silo_packing: {len(pts)} sites for {n} spheres")
    rng = np.random.default_rng([int(seed), 45])
    return pts[:n] + rng.uniform(-JITTER * d, JITTER * d, (n, 3))


def silo_count(pos: np.ndarray, orifice: str) -> int:
    """The spheres whose centre is above the orifice's height (the benchmark's
    ``ParticleNumber``)."""
    return int(np.count_nonzero(np.asarray(pos)[:, 2] > ORIFICES[orifice][1]))


# ------------------------------------------------------------------ the drum
DRUM_RADIUS = 0.1
DRUM_HALF_WIDTH = 0.03
DRUM_OMEGA = -2.0  # rad/s about +y: ω = (0, −2, 0)
#: (count, radius (m), material) of the two kinds, the larger first (poured first)
DRUM_KINDS = ((8000, 2e-3, "M2"), (30000, 1e-3, "M1"))
DRUM_DT = 8e-7


def drum_packing(kinds, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centres (m), radii (m) and each sphere's index into ``kinds`` ((count, radius, _) each)
    in the drum: each kind on a simple cubic lattice of spacing 2.1 of its radii, inside the
    drum clear of its wall and side walls by :data:`CLEARANCE` diameters, the first kind in the
    lowest sites, each next kind in the lowest sites clear of the one below; jittered by
    ± :data:`JITTER` diameters. The published packing is the same layering, poured."""
    rng = np.random.default_rng([int(seed), 46])
    out_pos, out_r, out_k = [], [], []
    floor = -DRUM_RADIUS
    for k, (count, radius, _) in enumerate(kinds):
        d = 2.0 * radius
        gap = radius + CLEARANCE * d
        a = 1.05 * d
        pts = _lattice((-DRUM_RADIUS, -DRUM_HALF_WIDTH, floor),
                       (DRUM_RADIUS, DRUM_HALF_WIDTH, DRUM_RADIUS), a)
        keep = ((np.hypot(pts[:, 0], pts[:, 2]) <= DRUM_RADIUS - gap)
                & (np.abs(pts[:, 1]) <= DRUM_HALF_WIDTH - gap))
        pts = pts[keep][:count]
        if len(pts) < count:
            raise ValueError(f"drum_packing: {len(pts)} sites for {count} spheres of radius "
                             f"{radius}")
        out_pos.append(pts + rng.uniform(-JITTER * d, JITTER * d, pts.shape))
        out_r.append(np.full(count, float(radius)))
        out_k.append(np.full(count, k, np.uint8))
        if k + 1 < len(kinds):  # the next kind's first layer clear of this one's top
            r_next = kinds[k + 1][1]
            floor = (float(pts[:, 2].max()) + radius + r_next + CLEARANCE * d
                     - 1.05 * r_next)  # its first centres half a spacing above the floor
    return np.concatenate(out_pos), np.concatenate(out_r), np.concatenate(out_k)


def drum_counts(pos: np.ndarray, radius: np.ndarray, big: float) -> dict:
    """Each size's count in zone 1 (x > 0 and z > 0) and zone 2 (x < 0 and z < 0): keys
    ``zone1_big``, ``zone2_big`` (spheres of radius ``big`` or more), ``zone1_small``,
    ``zone2_small`` (the benchmark's ``zone1mm4`` etc.)."""
    pos, radius = np.asarray(pos), np.asarray(radius)
    z1 = (pos[:, 0] > 0) & (pos[:, 2] > 0)
    z2 = (pos[:, 0] < 0) & (pos[:, 2] < 0)
    large = radius >= big
    return {"zone1_big": int(np.count_nonzero(z1 & large)),
            "zone2_big": int(np.count_nonzero(z2 & large)),
            "zone1_small": int(np.count_nonzero(z1 & ~large)),
            "zone2_small": int(np.count_nonzero(z2 & ~large))}
