"""Run configuration: frozen, keyword-only dataclasses validated on construction, loadable from
TOML (``load_config``). The CLI is a thin layer over :class:`SimulationConfig`.

Every validation failure raises :class:`ConfigError` whose message names the field (dotted
path, e.g. ``contact.restitution``) and the offending value, on one line.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

BOUNDARIES = ("wall", "periodic", "open")
CONTACT_LAWS = ("linear", "hertz")


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


def _vector(name: str, value, n: int = 3) -> tuple:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} = {value!r}: expected {n} numbers") from None
    if arr.shape != (n,):
        raise ConfigError(f"{name} = {value!r}: expected {n} numbers")
    if not np.isfinite(arr).all():
        raise ConfigError(f"{name} = {value!r}: must be finite")
    return tuple(float(x) for x in arr)


def _array(name: str, value, shape_tail: tuple, *, positive=False) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected an array of numbers") from None
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
    """Normal contact law. ``linear``: F = k δ with k = ``stiffness`` if set, else
    ``youngs_modulus`` · R_eff (N/m). ``hertz``: F = 4/3 · E · √R_eff · δ^{3/2}. Optional
    normal damping from the restitution coefficient e (1 = elastic)."""

    law: str = "linear"
    youngs_modulus: float = 1e6  # Pa (N/m²)
    stiffness: float | None = None  # N/m, linear law only
    restitution: float = 1.0

    def __post_init__(self):
        if self.law not in CONTACT_LAWS:
            raise ConfigError(f"contact.law = {self.law!r}: choose from {', '.join(CONTACT_LAWS)}")
        _finite("contact.youngs_modulus", self.youngs_modulus, nonneg=True)
        if self.stiffness is not None:
            _finite("contact.stiffness", self.stiffness, positive=True)
            if self.law != "linear":
                raise ConfigError(f"contact.stiffness = {self.stiffness!r}: only for law 'linear'")
        e = _finite("contact.restitution", self.restitution)
        if not 0 < e <= 1:
            raise ConfigError(f"contact.restitution = {self.restitution!r}: must be in (0, 1]")


@dataclass(frozen=True, kw_only=True)
class OutputConfig:
    """Where and how often to write. 0 disables a writer."""

    folder: str = "pdyn-output"
    snapshot_every: int = 0
    checkpoint_every: int = 0
    overwrite: bool = False

    def __post_init__(self):
        if not isinstance(self.folder, str) or not self.folder:
            raise ConfigError(f"output.folder = {self.folder!r}: expected a folder path")
        _int("output.snapshot_every", self.snapshot_every, minimum=0)
        _int("output.checkpoint_every", self.checkpoint_every, minimum=0)
        if not isinstance(self.overwrite, bool):
            raise ConfigError(f"output.overwrite = {self.overwrite!r}: expected true or false")


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
        b = tuple(self.boundary) if isinstance(self.boundary, (list, tuple)) else (self.boundary,)
        if len(b) != 3 or any(x not in BOUNDARIES for x in b):
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
    broadphase: str = "auto"  # picks the structure from the scene (pdyn/broadphase/auto.py)
    broadphase_params: dict = field(default_factory=dict)
    contact: ContactConfig | None = None
    gravity: tuple | None = None  # m/s²
    box: BoxConfig | None = None
    particles: ParticlesConfig | None = None
    blocks: tuple | None = None  # block grid for the MPI decomposition
    reorder_every: int = 100  # steps between Z-curve reorderings of particle memory; 0 = off
    output: OutputConfig = field(default_factory=OutputConfig)
    progress: bool = True

    def __post_init__(self):
        from .broadphase import REGISTRY
        from .scenarios import SCENES

        if self.particles is None and self.scene not in SCENES:
            raise ConfigError(f"scene = {self.scene!r}: unknown (choose from {', '.join(SCENES)})")
        _finite("scale", self.scale, positive=True)
        _int("seed", self.seed, minimum=0)
        if self.steps is not None:
            _int("steps", self.steps, minimum=1)
        if self.dt is not None:
            _finite("dt", self.dt, positive=True)
        _finite("dt_safety", self.dt_safety, lo=1.0)
        if self.broadphase not in REGISTRY:
            raise ConfigError(
                f"broadphase = {self.broadphase!r}: unknown (choose from {', '.join(REGISTRY)})"
            )
        if not isinstance(self.broadphase_params, dict):
            raise ConfigError(f"broadphase_params = {self.broadphase_params!r}: expected a table")
        for k, v in self.broadphase_params.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"broadphase_params.{k} = {v!r}: must be finite")
        if self.gravity is not None:
            object.__setattr__(self, "gravity", _vector("gravity", self.gravity))
        if self.blocks is not None:
            b = tuple(_int(f"blocks[{a}]", x, minimum=1) for a, x in enumerate(self.blocks))
            if len(b) != 3:
                raise ConfigError(f"blocks = {self.blocks!r}: expected 3 integers")
            object.__setattr__(self, "blocks", b)
        _int("reorder_every", self.reorder_every, minimum=0)
        if self.particles is not None and self.box is None:
            raise ConfigError("box: required with [particles] (give lo, hi, boundary)")
        if not isinstance(self.progress, bool):
            raise ConfigError(f"progress = {self.progress!r}: expected true or false")

    def with_(self, **changes) -> "SimulationConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


_SECTIONS = {"contact": ContactConfig, "output": OutputConfig, "box": BoxConfig,
             "particles": ParticlesConfig}


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
            try:
                top[name] = cls(**sec)
            except TypeError as exc:  # missing required keys
                raise ConfigError(f"{name}: {exc}") from None
    for key in ("gravity", "blocks"):
        if key in top and isinstance(top[key], list):
            top[key] = tuple(top[key])
    return SimulationConfig(**top)


def load_config(path: str | Path) -> SimulationConfig:
    """Read and validate a TOML config file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"config = {str(path)!r}: cannot read ({exc.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config = {str(path)!r}: invalid TOML ({exc})") from None
    return config_from_dict(data, source=str(path))
