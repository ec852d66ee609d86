"""Run configuration: frozen, keyword-only dataclasses validated on construction, loadable from
TOML (``load_config``). The CLI is a thin layer over :class:`SimulationConfig`.

Every validation failure raises :class:`ConfigError` whose message names the field (dotted
path, e.g. ``contact.restitution``) and the offending value, on one line.
"""

from __future__ import annotations

import inspect
import math
import tomllib
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .domain import BOUNDARIES, CURVES

CONTACT_LAWS = ("linear", "hertz")
#: the smallest coefficient of restitution accepted: the damping ratio that gives e is bounded
#: (``pdyn.dynamics.laws.MAX_DAMPING_RATIO``, whose e is 6.2e-4 linear, 5.2e-4 Hertz)
MIN_RESTITUTION = 1e-3
#: what to do with spheres that overlap each other or a wall at the start (``pdyn.checks``)
INITIAL_OVERLAP = ("refuse", "allow", "relax")


class ConfigError(ValueError):
    """Invalid configuration value; ``str(err)`` is a one-line message naming field and value."""


def _finite(name: str, value, *, positive=False, nonneg=False, lo=None, hi=None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"{name} = {value!r}: expected a number")
    v = float(value)
    if not math.isfinite(v):
        raise ConfigError(f"{name} = {value!r}: must be finite")
    if positive and not v > 0:
        raise ConfigError(f"{name} = {value!r}: must be > 0")
    if nonneg and v < 0:
        raise ConfigError(f"{name} = {value!r}: must be >= 0")
    if lo is not None and v < lo:
        raise ConfigError(f"{name} = {value!r}: must be >= {lo}")
    if hi is not None and v > hi:
        raise ConfigError(f"{name} = {value!r}: must be <= {hi}")
    return v


def _int(name: str, value, *, minimum=None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} = {value!r}: expected an integer")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} = {value!r}: must be >= {minimum}")
    return int(value)


def _choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{name} = {value!r}: choose from {', '.join(choices)}")
    return value


def _has_bool(value) -> bool:
    """True if a (nested) list holds a boolean: numpy would read it as 0 or 1."""
    if isinstance(value, (list, tuple)):
        return any(_has_bool(v) for v in value)
    return isinstance(value, (bool, np.bool_))


def _numbers(name: str, value, what: str) -> np.ndarray:
    """``value`` as a float array, refusing strings, booleans and ragged lists."""
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise ConfigError(f"{name}: expected {what}") from None
    if arr.dtype.kind not in "iuf" or _has_bool(value):
        raise ConfigError(f"{name} = {_short(value)}: expected {what}")
    return arr.astype(float)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _vector(name: str, value, n: int = 3) -> tuple:
    arr = _numbers(name, value, f"{n} numbers")
    if arr.shape != (n,):
        raise ConfigError(f"{name} = {_short(value)}: expected {n} numbers")
    if not np.isfinite(arr).all():
        raise ConfigError(f"{name} = {value!r}: must be finite")
    return tuple(float(x) for x in arr)


def _array(name: str, value, shape_tail: tuple, *, positive=False) -> np.ndarray:
    arr = _numbers(name, value, "an array of numbers")
    if arr.ndim != 1 + len(shape_tail) or arr.shape[1:] != shape_tail:
        raise ConfigError(f"{name}: expected shape (N{''.join(', %d' % s for s in shape_tail)}),"
                          f" got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise ConfigError(f"{name}[{idx[0]}] = {float(arr[tuple(idx)])!r}: must be finite")
    if positive:
        badp = ~(arr > 0)
        if badp.any():
            idx = np.argwhere(badp)[0]
            raise ConfigError(f"{name}[{idx[0]}] = {float(arr[tuple(idx)])!r}: must be > 0")
    return arr


@dataclass(frozen=True, kw_only=True)
class ContactConfig:
    """Contact law. ``linear``: F = k δ with k = ``stiffness`` if set, else
    ``youngs_modulus`` · R_eff (N/m). ``hertz``: F = 4/3 · E* · √R_eff · δ^{3/2}, E* =
    E / (2 (1 − ν²)) from ``youngs_modulus`` E and ``poisson_ratio`` ν. Optional normal damping
    from the restitution coefficient e (1 = elastic; at least :data:`MIN_RESTITUTION`): a
    dashpot that vanishes with the approach speed, so a contact at rest carries its elastic force
    exactly (``pdyn.dynamics.laws``). Tangential friction
    (``friction`` μ, Coulomb; 0 = frictionless), ``rolling_friction`` μ_r (constant rolling
    torque) and ``poisson_ratio`` ν (Hertz–Mindlin's shear modulus), as LAMMPS names them
    (``pdyn.dynamics.friction``)."""

    law: str = "linear"
    youngs_modulus: float = 1e6  # Pa (N/m²)
    stiffness: float | None = None  # N/m, linear law only
    restitution: float = 1.0
    friction: float = 0.0  # μ, Coulomb coefficient
    poisson_ratio: float = 0.3  # ν
    rolling_friction: float = 0.0  # μ_r, dimensionless (torque μ_r R_eff F_n)

    def __post_init__(self):
        _choice("contact.law", self.law, CONTACT_LAWS)
        _finite("contact.youngs_modulus", self.youngs_modulus, nonneg=True)
        if self.stiffness is not None:
            _finite("contact.stiffness", self.stiffness, positive=True)
            if self.law != "linear":
                raise ConfigError(f"contact.stiffness = {self.stiffness!r}: only for law 'linear'")
        e = _finite("contact.restitution", self.restitution)
        if not MIN_RESTITUTION <= e <= 1:
            raise ConfigError(f"contact.restitution = {self.restitution!r}: must be in "
                              f"[{MIN_RESTITUTION:g}, 1] (the damping ratio is bounded)")
        _finite("contact.friction", self.friction, nonneg=True)
        _finite("contact.rolling_friction", self.rolling_friction, nonneg=True)
        nu = _finite("contact.poisson_ratio", self.poisson_ratio)
        if not -1.0 < nu <= 0.5:
            raise ConfigError(f"contact.poisson_ratio = {self.poisson_ratio!r}: must be in "
                              "(-1, 0.5]")


@dataclass(frozen=True, kw_only=True)
class OutputConfig:
    """Where and how often to write. 0 disables a writer. ``wall_forces``: the total force on
    each wall every step, ``folder/wall_forces.csv``. ``thermo_every``: every N steps a thermo
    line on stdout and a row of ``folder/thermo.csv`` (``pdyn.io.thermo``; default 0: off)."""

    folder: str = "pdyn-output"
    snapshot_every: int = 0
    checkpoint_every: int = 0
    overwrite: bool = False
    wall_forces: bool = False
    thermo_every: int = 0

    @property
    def writes_files(self) -> bool:
        """Does the run write anything into ``folder``?"""
        return bool(self.snapshot_every or self.checkpoint_every or self.wall_forces
                    or self.thermo_every)

    def __post_init__(self):
        if not isinstance(self.folder, str) or not self.folder:
            raise ConfigError(f"output.folder = {self.folder!r}: expected a folder path")
        _int("output.snapshot_every", self.snapshot_every, minimum=0)
        _int("output.checkpoint_every", self.checkpoint_every, minimum=0)
        _int("output.thermo_every", self.thermo_every, minimum=0)
        for name in ("overwrite", "wall_forces"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"output.{name} = {getattr(self, name)!r}: expected true or "
                                  "false")


@dataclass(frozen=True, kw_only=True)
class InsertionConfig:
    """Spheres poured in during the run (``pdyn.dynamics.insertion``): ``rate`` spheres per
    second (s⁻¹) into the box ``region_lo``..``region_hi`` (m), radii uniform in
    [``radius_min``, ``radius_max``] (m), ``density`` (kg/m³), initial ``velocity`` (m/s),
    at most ``total`` (0: no limit), an insertion step every ``every`` steps, random stream
    ``seed``; optional outlet box ``outlet_lo``..``outlet_hi`` (m) whose spheres are removed."""

    region_lo: tuple
    region_hi: tuple
    rate: float
    radius_min: float
    radius_max: float
    density: float = 2500.0
    velocity: tuple = (0.0, 0.0, 0.0)
    total: int = 0
    every: int = 100
    seed: int = 0
    outlet_lo: tuple | None = None
    outlet_hi: tuple | None = None

    def __post_init__(self):
        lo = _vector("insertion.region_lo", self.region_lo)
        hi = _vector("insertion.region_hi", self.region_hi)
        _finite("insertion.rate", self.rate, positive=True)
        r0 = _finite("insertion.radius_min", self.radius_min, positive=True)
        r1 = _finite("insertion.radius_max", self.radius_max, positive=True)
        if r1 < r0:
            raise ConfigError(f"insertion.radius_max = {self.radius_max!r}: must be >= "
                              f"insertion.radius_min = {self.radius_min!r}")
        for a in range(3):
            if not hi[a] - lo[a] >= 2.0 * r1:
                raise ConfigError(f"insertion.region_hi = {list(hi)!r}: the region must be at "
                                  f"least 2 radius_max = {2.0 * r1!r} m wide along "
                                  f"{'xyz'[a]} (region_lo = {list(lo)!r})")
        _finite("insertion.density", self.density, positive=True)
        object.__setattr__(self, "velocity", _vector("insertion.velocity", self.velocity))
        _int("insertion.total", self.total, minimum=0)
        _int("insertion.every", self.every, minimum=1)
        _int("insertion.seed", self.seed, minimum=0)
        object.__setattr__(self, "region_lo", lo)
        object.__setattr__(self, "region_hi", hi)
        if (self.outlet_lo is None) != (self.outlet_hi is None):
            given = "outlet_lo" if self.outlet_hi is None else "outlet_hi"
            raise ConfigError(f"insertion.{given} = {getattr(self, given)!r}: give both "
                              "outlet_lo and outlet_hi")
        if self.outlet_lo is not None:
            olo = _vector("insertion.outlet_lo", self.outlet_lo)
            ohi = _vector("insertion.outlet_hi", self.outlet_hi)
            if not all(ohi[a] > olo[a] for a in range(3)):
                raise ConfigError(f"insertion.outlet_hi = {list(ohi)!r}: must exceed "
                                  f"insertion.outlet_lo = {list(olo)!r}")
            object.__setattr__(self, "outlet_lo", olo)
            object.__setattr__(self, "outlet_hi", ohi)

    def check_box(self, lo, hi) -> None:
        """The region must lie inside the box ``lo``..``hi`` (m), the outlet must overlap it
        (else it would never remove a sphere)."""
        lo, hi = [float(x) for x in lo], [float(x) for x in hi]
        for name, v, bad in (("region_lo", self.region_lo, lambda a: v[a] < lo[a]),
                             ("region_hi", self.region_hi, lambda a: v[a] > hi[a])):
            if any(bad(a) for a in range(3)):
                raise ConfigError(f"insertion.{name} = {list(v)!r}: outside the box "
                                  f"{lo!r}..{hi!r}")
        if self.outlet_lo is not None and not all(
                self.outlet_lo[a] < hi[a] and self.outlet_hi[a] > lo[a] for a in range(3)):
            raise ConfigError(f"insertion.outlet_lo = {list(self.outlet_lo)!r}: the outlet "
                              f"..{list(self.outlet_hi)!r} lies outside the box "
                              f"{lo!r}..{hi!r} (it would never remove a sphere)")


@dataclass(frozen=True, kw_only=True)
class BoxConfig:
    """Simulation box [lo, hi] (m) and the boundary per axis: wall, periodic or open."""

    lo: tuple = (0.0, 0.0, 0.0)
    hi: tuple = (1.0, 1.0, 1.0)
    boundary: tuple = ("wall", "wall", "wall")

    def __post_init__(self):
        lo = _vector("box.lo", self.lo)
        hi = _vector("box.hi", self.hi)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        for a in range(3):
            if not hi[a] > lo[a]:
                raise ConfigError(f"box.hi = {list(hi)!r}: must exceed box.lo = {list(lo)!r}")
            if not math.isfinite(hi[a] - lo[a]):
                raise ConfigError(f"box.hi = {list(hi)!r}: the box is too large (its length "
                                  f"along {'xyz'[a]} overflows)")
        b = tuple(self.boundary) if isinstance(self.boundary, (list, tuple)) else (self.boundary,)
        if len(b) != 3 or any(not isinstance(x, str) or x not in BOUNDARIES for x in b):
            raise ConfigError(
                f"box.boundary = {self.boundary!r}: expected 3 of {', '.join(BOUNDARIES)}"
            )
        object.__setattr__(self, "boundary", b)


@dataclass(frozen=True, kw_only=True)
class ParticlesConfig:
    """User-given spheres (instead of a named scene): centres (m), velocities (m/s), radii (m),
    and either ``masses`` (kg) or a ``density`` (kg/m³)."""

    positions: Any
    radii: Any
    velocities: Any = None
    masses: Any = None
    density: float | None = None

    def __post_init__(self):
        pos = _array("particles.positions", self.positions, (3,))
        n = pos.shape[0]
        rad = _array("particles.radii", self.radii, (), positive=True)
        if rad.shape[0] != n:
            raise ConfigError(f"particles.radii: {rad.shape[0]} values for {n} positions")
        vel = (np.zeros((n, 3)) if self.velocities is None
               else _array("particles.velocities", self.velocities, (3,)))
        if vel.shape[0] != n:
            raise ConfigError(f"particles.velocities: {vel.shape[0]} rows for {n} positions")
        if self.masses is not None:
            mass = _array("particles.masses", self.masses, (), positive=True)
            if mass.shape[0] != n:
                raise ConfigError(f"particles.masses: {mass.shape[0]} values for {n} positions")
        else:
            rho = _finite("particles.density", 1000.0 if self.density is None else self.density,
                          positive=True)
            mass = rho * 4.0 / 3.0 * np.pi * rad**3
        for name, arr in (("positions", pos), ("radii", rad), ("velocities", vel),
                          ("masses", mass)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)


@dataclass(frozen=True, kw_only=True)
class SimulationConfig:
    """Everything a run needs. ``None`` fields take the scene's suggestion."""

    scene: str = "drop"
    scale: float = 1.0
    seed: int = 0
    steps: int | None = None
    dt: float | None = None  # s; default: contact time / dt_safety
    dt_safety: float = 20.0
    # accept a dt above the limit (contact time / dt_safety; 0.2 Rayleigh times with Hertz)
    allow_large_dt: bool = False
    broadphase: str = "auto"  # picks the structure from the scene (pdyn/broadphase/auto.py)
    broadphase_params: dict = field(default_factory=dict)
    contact: ContactConfig | None = None
    gravity: tuple | None = None  # m/s²
    box: BoxConfig | None = None
    particles: ParticlesConfig | None = None
    insertion: InsertionConfig | None = None  # spheres poured in during the run
    blocks: tuple | None = None  # block grid for the MPI decomposition
    # dynamic load balancing (pdyn.parallel.balance): check at the first rebuild step at least
    # balance_every steps after the last check (0 = never), move blocks when the ranks' work
    # max/mean exceeds balance_threshold, ordering the blocks along balance_curve
    balance_every: int = 100
    balance_threshold: float = 1.05
    balance_curve: str = CURVES[0]
    reorder_every: int = 100  # steps between Z-curve reorderings of particle memory; 0 = off
    initial_overlap: str = "refuse"  # or "allow", "relax" (pdyn.checks)
    overlap_tolerance: float = 0.01  # initial overlap allowed, fraction of the smaller radius
    # Verlet skin of the neighbour lists (m); None: 0.3 mean diameters; 0: broad phase every step
    neighbour_skin: float | None = None
    output: OutputConfig = field(default_factory=OutputConfig)
    progress: bool = True

    def __post_init__(self):
        from .broadphase import REGISTRY
        from .scenarios import SCENES

        if self.particles is None and (not isinstance(self.scene, str)
                                       or self.scene not in SCENES):
            raise ConfigError(f"scene = {self.scene!r}: unknown (choose from {', '.join(SCENES)})")
        _finite("scale", self.scale, positive=True)
        _int("seed", self.seed, minimum=0)
        if self.steps is not None:
            _int("steps", self.steps, minimum=1)
        if self.dt is not None:
            _finite("dt", self.dt, positive=True)
        _finite("dt_safety", self.dt_safety, lo=1.0)
        if not isinstance(self.allow_large_dt, bool):
            raise ConfigError(f"allow_large_dt = {self.allow_large_dt!r}: expected true or false")
        if not isinstance(self.broadphase, str) or self.broadphase not in REGISTRY:
            raise ConfigError(
                f"broadphase = {self.broadphase!r}: unknown (choose from {', '.join(REGISTRY)})"
            )
        _check_broadphase_params(REGISTRY[self.broadphase], self.broadphase_params)
        if self.gravity is not None:
            object.__setattr__(self, "gravity", _vector("gravity", self.gravity))
        if self.blocks is not None:
            if not isinstance(self.blocks, (list, tuple)) or len(self.blocks) != 3:
                raise ConfigError(f"blocks = {self.blocks!r}: expected 3 integers")
            b = tuple(_int(f"blocks[{a}]", x, minimum=1) for a, x in enumerate(self.blocks))
            if math.prod(b) > 2**31:
                raise ConfigError(f"blocks = {list(b)!r}: {math.prod(b)} blocks; far too many")
            object.__setattr__(self, "blocks", b)
        _int("balance_every", self.balance_every, minimum=0)
        _finite("balance_threshold", self.balance_threshold, lo=1.0)
        _choice("balance_curve", self.balance_curve, CURVES)
        _int("reorder_every", self.reorder_every, minimum=0)
        _choice("initial_overlap", self.initial_overlap, INITIAL_OVERLAP)
        _finite("overlap_tolerance", self.overlap_tolerance, nonneg=True, hi=1.0)
        if self.neighbour_skin is not None:
            _finite("neighbour_skin", self.neighbour_skin, nonneg=True)
        if self.particles is not None and self.box is None:
            raise ConfigError("box: required with [particles] (give lo, hi, boundary)")
        if not isinstance(self.progress, bool):
            raise ConfigError(f"progress = {self.progress!r}: expected true or false")

    def with_(self, **changes) -> "SimulationConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


#: how a broad-phase parameter's annotation (``pdyn.broadphase`` constructors) is checked
_PARAM_KINDS = {"float": "number", "int": "integer", "str": "string"}


def _check_broadphase_params(cls, params) -> None:
    """Types of ``broadphase_params`` from the structure's constructor annotations (a number, an
    integer or a string, ``| None`` allowing none; booleans are never numbers), then the
    structure's own range checks, each error naming ``broadphase_params.<name>`` and the value.
    """
    from .broadphase import BroadPhaseError

    if not isinstance(params, dict):
        raise ConfigError(f"broadphase_params = {params!r}: expected a table")
    annotations = {}
    for klass in reversed(cls.__mro__):
        if "__init__" in vars(klass):
            for p in inspect.signature(vars(klass)["__init__"]).parameters.values():
                if isinstance(p.annotation, str):
                    annotations[p.name] = p.annotation
    for key, value in params.items():
        name = f"broadphase_params.{key}"
        if key not in annotations:
            known = ", ".join(sorted(annotations)) or "none"
            raise ConfigError(f"{name} = {value!r}: unknown parameter of {cls.name} "
                              f"(known: {known})")
        kinds = [k.strip() for k in annotations[key].split("|")]
        if value is None and "None" in kinds:
            continue
        kind = _PARAM_KINDS.get(kinds[0])
        if kind == "number":
            _finite(name, value)
        elif kind == "integer":
            _int(name, value)
        elif kind == "string" and not isinstance(value, str):
            raise ConfigError(f"{name} = {value!r}: expected a string")
    try:
        cls(**params)
    except BroadPhaseError as exc:
        text = str(exc).removeprefix(f"{cls.name}: ")
        key = next((k for k in params if text.startswith(f"{k} =")), None)
        raise ConfigError(f"broadphase_params.{text}" if key else f"broadphase_params: {text}"
                          ) from None


_SECTIONS = {"contact": ContactConfig, "output": OutputConfig, "box": BoxConfig,
             "particles": ParticlesConfig, "insertion": InsertionConfig}


def _known(cls) -> set[str]:
    return {f.name for f in fields(cls)}


def config_from_dict(data: dict, *, source: str = "config") -> SimulationConfig:
    """Build a validated :class:`SimulationConfig` from a (TOML-shaped) dict."""
    top = dict(data)
    unknown = set(top) - _known(SimulationConfig)
    if unknown:
        k = sorted(unknown)[0]
        raise ConfigError(f"{k} = {top[k]!r}: unknown key in {source} "
                          f"(known: {', '.join(sorted(_known(SimulationConfig)))})")
    for name, cls in _SECTIONS.items():
        if name in top:
            sec = top[name]
            if not isinstance(sec, dict):
                raise ConfigError(f"{name} = {sec!r}: expected a table [{name}]")
            bad = set(sec) - _known(cls)
            if bad:
                k = sorted(bad)[0]
                raise ConfigError(f"{name}.{k} = {sec[k]!r}: unknown key "
                                  f"(known: {', '.join(sorted(_known(cls)))})")
            missing = [f.name for f in fields(cls) if f.name not in sec
                       and f.default is MISSING and f.default_factory is MISSING]
            if missing:
                raise ConfigError(f"{name}.{missing[0]}: required in [{name}]")
            top[name] = cls(**sec)
    for key in ("gravity", "blocks"):
        if key in top and isinstance(top[key], list):
            top[key] = tuple(top[key])
    return SimulationConfig(**top)


def load_config(path: str | Path) -> SimulationConfig:
    """Read and validate a TOML config file (UTF-8 text)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"config = {str(path)!r}: cannot read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config = {str(path)!r}: not a UTF-8 text file (byte "
                          f"0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config = {str(path)!r}: invalid TOML ({exc})") from None
    return config_from_dict(data, source=str(path))
