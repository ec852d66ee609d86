"""Run configuration: frozen, keyword-only dataclasses validated on construction, loadable from
TOML (``load_config``). The CLI is a thin layer over :class:`SimulationConfig`.

Every validation failure raises :class:`ConfigError` whose message names the field (dotted
path, e.g. ``contact.restitution``) and the offending value, on one line.
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .domain import BOUNDARIES, CURVES
from .values import (BadValue, array, choice, choices, flag, integer, integers, number,
                     short, vector)
from .mesh import Mesh
from .placement import FILL_TRIES, fill_region
from .programs import check_motion, check_program, check_servo, check_servo_kind
from .stageplan import box_axes, check_stages
from .regions import check_region, region_of
from .scenefile import read_spheres
from .sizes import size_distribution
from .wallkinds import KINDS, load_mesh

CONTACT_LAWS = ("linear", "hertz")
#: the cohesion models ("none": none; ``pdyn.dynamics.cohesion``) and the field each reads
COHESIONS = ("none", "dmt", "jkr", "liquid_bridge", "sjkr")
COHESION_PARAMETERS = {"dmt": ("work_of_adhesion",), "jkr": ("work_of_adhesion",),
                       "sjkr": ("cohesion_energy_density",),
                       "liquid_bridge": ("liquid_volume", "surface_tension", "contact_angle")}
#: every cohesion parameter and its range
COHESION_FIELDS = {"work_of_adhesion": {"lo": 0}, "cohesion_energy_density": {"lo": 0},
                   "liquid_volume": {"above": 0}, "surface_tension": {"lo": 0},
                   "contact_angle": {"lo": 0, "hi": 90}}
#: the normal dashpots (the table in ``pdyn.dynamics.laws``: a test holds the two lists equal)
DAMPINGS = ("tangent", "constant", "mass_velocity", "viscoelastic", "tsuji")
#: the dampings whose coefficient the user gives (``contact.damping_coefficient``), not e
GIVEN_DAMPINGS = ("mass_velocity", "viscoelastic")
#: how the tangential spring is turned into a new tangent plane (``pdyn.dynamics.friction``)
TANGENTIAL_HISTORIES = ("rescaled", "projected")
#: the smallest coefficient of restitution accepted: the damping ratio that gives e is bounded
#: (``pdyn.dynamics.laws.MAX_DAMPING_RATIO``, whose e is 6.2e-4 linear, 5.2e-4 Hertz)
MIN_RESTITUTION = 1e-3
#: what to do with spheres that overlap each other or a wall at the start (``pdyn.checks``)
INITIAL_OVERLAP = ("refuse", "allow", "relax")


class ConfigError(ValueError):
    """Invalid configuration value; ``str(err)`` is a one-line message naming field and value."""


def _config_errors(post_init):
    """``__post_init__`` with a failed value check (:class:`pdyn.values.BadValue`) raised as
    :class:`ConfigError`."""

    @functools.wraps(post_init)
    def checked(self):
        try:
            post_init(self)
        except BadValue as exc:
            raise ConfigError(str(exc)) from None

    return checked


@dataclass(frozen=True, kw_only=True)
class ContactConfig:
    """Contact law. ``linear``: F = k δ with k = ``stiffness`` if set, else
    ``youngs_modulus`` · R_eff (N/m). ``hertz``: F = 4/3 · E* · √R_eff · δ^{3/2}, E* =
    E / (2 (1 − ν²)) from ``youngs_modulus`` E and ``poisson_ratio`` ν. Optional normal damping
    from the restitution coefficient e (1 = elastic; at least :data:`MIN_RESTITUTION`): a
    dashpot that vanishes with the approach speed, so a contact at rest carries its elastic force
    exactly, on the law's tangent stiffness (``damping = "tangent"``) or of constant
    coefficient (``"constant"``) (``pdyn.dynamics.laws``). Tangential friction
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
    damping: str = "tangent"  # the normal dashpot: "tangent" (c ∝ √k_t(δ)) or "constant"
    # LAMMPS' dampings and history (docs/contacts.md): γ of "mass_velocity" (1/s) and
    # "viscoelastic" (1/(m s)); the tangential spring "rescaled" or "projected"
    damping_coefficient: float | None = None
    tangential_history: str = "rescaled"
    # cohesion (pdyn.dynamics.cohesion): "none", "dmt" (work_of_adhesion w, J/m²) or "sjkr"
    # (cohesion_energy_density k, J/m³)
    cohesion: str = "none"
    work_of_adhesion: float | None = None
    cohesion_energy_density: float | None = None
    # liquid bridges: the liquid volume per bridge (m³), its surface tension (N/m), its
    # contact angle on the spheres (degrees)
    liquid_volume: float | None = None
    surface_tension: float | None = None
    contact_angle: float | None = None

    @_config_errors
    def __post_init__(self):
        choice("contact.law", self.law, CONTACT_LAWS)
        _cohesion_values("contact", self.__dict__)
        choice("contact.damping", self.damping, DAMPINGS)
        choice("contact.tangential_history", self.tangential_history, TANGENTIAL_HISTORIES)
        if self.damping in GIVEN_DAMPINGS:
            if self.damping_coefficient is None:
                raise ConfigError(f"contact.damping_coefficient: damping {self.damping!r} "
                                  "needs it (gamma, as LAMMPS' damping coefficient)")
            number("contact.damping_coefficient", self.damping_coefficient, lo=0)
            if self.restitution != 1.0:
                raise ConfigError(f"contact.restitution = {self.restitution!r}: damping "
                                  f"{self.damping!r} takes contact.damping_coefficient, not e")
        elif self.damping_coefficient is not None:
            raise ConfigError(f"contact.damping_coefficient = {self.damping_coefficient!r}: "
                              f"only for damping {' or '.join(map(repr, GIVEN_DAMPINGS))}")
        number("contact.youngs_modulus", self.youngs_modulus, lo=0)
        if self.stiffness is not None:
            number("contact.stiffness", self.stiffness, above=0)
            if self.law != "linear":
                raise ConfigError(f"contact.stiffness = {self.stiffness!r}: only for law 'linear'")
        number("contact.restitution", self.restitution, lo=MIN_RESTITUTION, hi=1,
               note="the damping ratio is bounded")
        number("contact.friction", self.friction, lo=0)
        number("contact.rolling_friction", self.rolling_friction, lo=0)
        number("contact.poisson_ratio", self.poisson_ratio, above=-1, hi=0.5)


# ------------------------------------------------------------------ several materials
#: the ``[contact]`` fields a material (``[[materials]]``) or a pair (``[[interactions]]``)
#: may set for itself; a material's omitted ones take ``[contact]``'s values
MATERIAL_FIELDS = ("youngs_modulus", "poisson_ratio", "restitution", "friction",
                   "rolling_friction", "stiffness", "cohesion", "work_of_adhesion",
                   "cohesion_energy_density", "liquid_volume", "surface_tension",
                   "contact_angle")
#: the most materials a run has (the per-sphere index is a byte, ``pdyn.particles.FIELDS``)
MAX_MATERIALS = 255


def _material_values(where: str, values: dict, law: str | None = None) -> None:
    """The material fields of ``values`` that are given, checked as ``[contact]`` checks
    them (errors name ``<where>.<field>``)."""
    checks = {"youngs_modulus": {"lo": 0}, "poisson_ratio": {"above": -1, "hi": 0.5},
              "restitution": {"lo": MIN_RESTITUTION, "hi": 1},
              "friction": {"lo": 0}, "rolling_friction": {"lo": 0}, "stiffness": {"above": 0}}
    for name, bounds in checks.items():
        if values.get(name) is not None:
            number(f"{where}.{name}", values[name], **bounds)
    _cohesion_values(where, values)


def _cohesion_values(where: str, values: dict) -> None:
    """The cohesion fields of ``values`` that are given: a known model, parameters ≥ 0, and
    no parameter of another model than the one named (errors name ``<where>.<field>``)."""
    name = values.get("cohesion")
    if name is not None:
        choice(f"{where}.cohesion", name, COHESIONS)
    for field, bounds in COHESION_FIELDS.items():
        if values.get(field) is not None:
            number(f"{where}.{field}", values[field], **bounds)
            if name not in (None, "none") and field not in COHESION_PARAMETERS[name]:
                raise BadValue(f"{where}.{field}", values[field],
                               f"only for cohesion {_models(field)} (this is {name!r})")


def _models(field: str) -> str:
    """The cohesion models that read ``field``, as 'a' or 'b'."""
    return " or ".join(repr(m) for m, f in COHESION_PARAMETERS.items() if field in f)


@dataclass(frozen=True, kw_only=True)
class ContactValues:
    """The ``[contact]`` material fields (:data:`MATERIAL_FIELDS`) a material or a pair of
    materials sets for itself (None: not set)."""

    youngs_modulus: float | None = None
    poisson_ratio: float | None = None
    restitution: float | None = None
    friction: float | None = None
    rolling_friction: float | None = None
    stiffness: float | None = None
    cohesion: str | None = None
    work_of_adhesion: float | None = None
    cohesion_energy_density: float | None = None
    liquid_volume: float | None = None
    surface_tension: float | None = None
    contact_angle: float | None = None

    def given(self) -> dict:
        """The fields set (name -> value)."""
        return {k: (v if k == "cohesion" else float(v)) for k in MATERIAL_FIELDS
                if (v := getattr(self, k)) is not None}


@dataclass(frozen=True, kw_only=True)
class MaterialConfig(ContactValues):
    """One material (``[[materials]]``): its ``name`` and any of the ``[contact]`` material
    fields (:class:`ContactValues`; omitted: ``[contact]``'s value) and ``density`` (kg/m³;
    the density of the spheres of this material where their table gives none). Pairs of
    materials mix their values (``pdyn.dynamics.materials``) unless an ``[[interactions]]``
    table sets them."""

    name: str
    density: float | None = None

    @_config_errors
    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise BadValue("materials.name", self.name, "expected a name")
        _material_values("materials", self.__dict__)
        if self.density is not None:
            number("materials.density", self.density, above=0)

    def values(self, contact: ContactConfig) -> dict:
        """The material's :data:`MATERIAL_FIELDS`, ``contact``'s where it gives none."""
        return {**{k: getattr(contact, k) for k in MATERIAL_FIELDS}, **self.given()}


@dataclass(frozen=True, kw_only=True)
class InteractionConfig(ContactValues):
    """The contact values of one pair of materials (``[[interactions]]``): ``materials`` (two
    names, the same twice for a material with itself) and any of the ``[contact]`` material
    fields (:class:`ContactValues`), which replace the pair's mixed values (as LIGGGHTS'
    ``peratomtypepair``)."""

    materials: tuple

    @_config_errors
    def __post_init__(self):
        pair = self.materials
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(m, str) and m for m in pair)):
            raise BadValue("interactions.materials", pair, "expected two material names")
        object.__setattr__(self, "materials", tuple(pair))
        _material_values("interactions", self.__dict__)


def _tables(name: str, cls, value) -> tuple:
    """``[[name]]`` (a list of tables or ``cls``) as a tuple of ``cls``, errors naming
    ``name[k].<field>``."""
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{name} = {short(value)}: expected tables [[{name}]]")
    out = []
    for k, item in enumerate(value):
        if isinstance(item, cls):
            out.append(item)
            continue
        if not isinstance(item, dict):
            raise ConfigError(f"{name}[{k}] = {short(item)}: expected a table [[{name}]]")
        bad = sorted(set(item) - _known(cls))
        if bad:
            raise ConfigError(f"{name}[{k}].{bad[0]} = {short(item[bad[0]])}: unknown key "
                              f"(known: {', '.join(sorted(_known(cls)))})")
        required = [f.name for f in fields(cls) if f.default is MISSING]
        for r in required:
            if r not in item:
                raise ConfigError(f"{name}[{k}].{r}: required in [[{name}]]")
        try:
            out.append(cls(**item))
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(f"{name}.", f"{name}[{k}].", 1)) from None
    return tuple(out)


def material_configs(materials, interactions) -> tuple[tuple, tuple]:
    """``[[materials]]`` and ``[[interactions]]`` checked together: names unique, at most
    :data:`MAX_MATERIALS`, an interaction names known materials, each pair once, and a
    linear ``stiffness`` given for every material or none (the pair of one with and one
    without has no rule)."""
    mats = _tables("materials", MaterialConfig, materials)
    pairs = _tables("interactions", InteractionConfig, interactions)
    if len(mats) > MAX_MATERIALS:
        raise ConfigError(f"materials: {len(mats)} tables; at most {MAX_MATERIALS} materials")
    seen = {}
    for k, m in enumerate(mats):
        if m.name in seen:
            raise ConfigError(f"materials[{k}].name = {m.name!r}: a duplicate (also "
                              f"materials[{seen[m.name]}])")
        seen[m.name] = k
    if pairs and not mats:
        raise ConfigError(f"interactions[0].materials = {list(pairs[0].materials)!r}: no "
                          "[[materials]] to name")
    given = set()
    for k, p in enumerate(pairs):
        for name in p.materials:
            if name not in seen:
                raise ConfigError(f"interactions[{k}].materials = {list(p.materials)!r}: "
                                  f"unknown material {name!r} (known: {', '.join(seen)})")
        key = frozenset(p.materials)
        if key in given:
            raise ConfigError(f"interactions[{k}].materials = {list(p.materials)!r}: that "
                              "pair is set twice")
        given.add(key)
    stiff = [m.stiffness is not None for m in mats]
    if any(stiff) and not all(stiff):
        k = stiff.index(False)
        raise ConfigError(f"materials[{k}].stiffness = None: give a stiffness for every "
                          "material or none")
    return mats, pairs


def check_cohesion(contact: ContactConfig, materials: tuple, interactions: tuple) -> None:
    """One cohesion model per run (``pdyn.dynamics.cohesion``: the kernels are compiled for
    one), named in ``[contact]``, ``[[materials]]`` or ``[[interactions]]``; a table whose
    model (a material's own or ``[contact]``'s) is one gives its parameter (a material's own or
    ``[contact]``'s), and no table gives a parameter of another model."""
    own = [(f"materials[{k}]", m.given()) for k, m in enumerate(materials)]
    own += [(f"interactions[{k}]", p.given()) for k, p in enumerate(interactions)]
    tables = [("contact", contact.__dict__)] + own
    models = {}
    for where, values in tables:
        if values.get("cohesion") not in (None, "none"):
            models.setdefault(values["cohesion"], where)
    if len(models) > 1:
        (a, wa), (b, wb) = list(models.items())[:2]
        raise ConfigError(f"{wb}.cohesion = {b!r}: one cohesion model per run ({wa} has {a!r})")
    model = next(iter(models), "none")
    for where, values in tables:
        for field in COHESION_FIELDS:
            if (values.get(field) is not None
                    and field not in COHESION_PARAMETERS.get(model, ())):
                raise ConfigError(str(BadValue(f"{where}.{field}", values[field],
                                               f"only for cohesion {_models(field)} (the "
                                               f"run's: {model!r})")))
    if model == "jkr" and contact.law != "hertz":
        raise ConfigError(f"contact.law = {contact.law!r}: cohesion 'jkr' takes law 'hertz' "
                          "(its E*)")
    needs = [(w, {**contact.__dict__, **v} if w.startswith("materials") else v)
             for w, v in (own if materials else tables)]
    for where, values in needs:
        name = values.get("cohesion")
        for field in COHESION_PARAMETERS.get(name, ()):
            if values.get(field) is None:
                raise ConfigError(f"{where}.{field}: cohesion {name!r} needs it")


#: the longest file or folder name file systems take (bytes; NAME_MAX of Linux)
MAX_NAME = 255
#: the largest ``insertion.rate`` (s⁻¹): its spheres owed over a run of 10⁶ s still count in
#: 64-bit integers
MAX_INSERTION_RATE = 1e12
#: the largest ``insertion.fill``: random sequential placement jams near 0.38 for equal spheres
#: ([Torquato2006]); wider size distributions reach somewhat more
MAX_FILL = 0.6


@dataclass(frozen=True, kw_only=True)
class OutputConfig:
    """Where and how often to write. 0 disables a writer. ``wall_forces``: the total force on
    each wall every step, ``folder/wall_forces.csv``. ``thermo_every``: every N steps a thermo
    line on stdout and a row of ``folder/thermo.csv`` (``pdyn.io.thermo``; default 0: off).
    ``sphere_stress``: snapshots add each sphere's stress, contacts and contact force
    (``pdyn.fields.sphere``). ``wall_pressure``: snapshots add the walls' pressure maps,
    averaged over every step since the last snapshot, on ``wall_patches`` (nu, nv) patches
    per analytic wall (``pdyn.io.wallpressure``)."""

    folder: str = "pdyn-output"
    snapshot_every: int = 0
    checkpoint_every: int = 0
    overwrite: bool = False
    wall_forces: bool = False
    thermo_every: int = 0
    sphere_stress: bool = False  # snapshots: stress, contacts, contact force per sphere
    wall_pressure: bool = False  # snapshots: normal and shear stress per wall patch
    wall_patches: tuple = (8, 8)  # patches per plane (u, v) or cylinder/cone (angle, axial)

    @property
    def writes_files(self) -> bool:
        """Do the ``[output]`` writers write anything into ``folder``? (A run's
        ``[[fields]]`` write there too: ``SimulationConfig.writes_files``.)"""
        return bool(self.snapshot_every or self.checkpoint_every or self.wall_forces
                    or self.thermo_every)

    @_config_errors
    def __post_init__(self):
        if not isinstance(self.folder, str) or not self.folder:
            raise ConfigError(f"output.folder = {self.folder!r}: expected a folder path")
        if "\0" in self.folder:
            raise ConfigError(f"output.folder = {self.folder!r}: holds a NUL character")
        if any(len(part.encode(errors="replace")) > MAX_NAME for part in self.folder.split("/")):
            raise ConfigError(f"output.folder = {self.folder[:40]!r}... ({len(self.folder)} "
                              f"characters): a name in it is longer than {MAX_NAME} bytes")
        integer("output.snapshot_every", self.snapshot_every, lo=0)
        integer("output.checkpoint_every", self.checkpoint_every, lo=0)
        integer("output.thermo_every", self.thermo_every, lo=0)
        for name in ("overwrite", "wall_forces", "sphere_stress", "wall_pressure"):
            flag(f"output.{name}", getattr(self, name))
        object.__setattr__(self, "wall_patches", tuple(
            integers("output.wall_patches", self.wall_patches, 2, lo=1).tolist()))
        if math.prod(self.wall_patches) > MAX_WALL_PATCHES:
            raise BadValue("output.wall_patches", list(self.wall_patches),
                           f"at most {MAX_WALL_PATCHES} patches a wall")
        if self.wall_pressure and not self.snapshot_every:
            raise BadValue("output.wall_pressure", True, "written into snapshots: give "
                           "output.snapshot_every > 0")


#: the most patches of one analytic wall's pressure map (``output.wall_patches``)
MAX_WALL_PATCHES = 512 ** 2


#: the kernels of coarse-grained fields (``pdyn.fields.deposit``)
FIELD_KERNELS = ("gaussian", "lucy", "bins")


@dataclass(frozen=True, kw_only=True)
class FieldsConfig:
    """Coarse-grained fields (``[[fields]]``; ``pdyn.fields.coarse``, ``pdyn.io.fields``): a
    grid of ``cells`` per axis (1: the axis averaged out) over the box or the region
    ``lo``..``hi`` (m), a ``kernel`` (gaussian, lucy, bins) of ``width`` mean diameters (the
    Gaussian's standard deviation, Lucy's cut-off; bins: unused), a sample every ``every``
    steps, the mean of ``window`` samples written as ``folder/fields/<name>_<step>.h5``."""

    name: str = "fields"
    cells: tuple = (1, 1, 20)
    kernel: str = "gaussian"
    width: float = 1.0
    every: int = 100
    window: int = 1
    lo: tuple | None = None
    hi: tuple | None = None

    @_config_errors
    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise BadValue("fields.name", self.name, "a name of letters, digits and _")
        object.__setattr__(self, "cells", tuple(integers("fields.cells", self.cells, 3,
                                                         lo=1).tolist()))
        if math.prod(self.cells) > MAX_FIELD_CELLS:
            raise BadValue("fields.cells", list(self.cells),
                           f"at most {MAX_FIELD_CELLS} cells in all")
        choice("fields.kernel", self.kernel, FIELD_KERNELS)
        number("fields.width", self.width, above=0)
        integer("fields.every", self.every, lo=1)
        integer("fields.window", self.window, lo=1)
        if (self.lo is None) != (self.hi is None):
            raise BadValue("fields.lo" if self.lo is None else "fields.hi", None,
                           "give both lo and hi (or neither: the box)")
        if self.lo is not None:
            lo, hi = vector("fields.lo", self.lo), vector("fields.hi", self.hi)
            if not all(h > l for l, h in zip(lo, hi)):
                raise BadValue("fields.hi", list(hi), f"must exceed fields.lo = {list(lo)}")
            object.__setattr__(self, "lo", lo)
            object.__setattr__(self, "hi", hi)


#: the most cells of one [[fields]] grid (a 256³ grid of 23 int64 sums is 3 GB)
MAX_FIELD_CELLS = 256 ** 3


def field_configs(value) -> tuple:
    """``[[fields]]`` (a list of tables or :class:`FieldsConfig`) as FieldsConfigs, each
    error naming ``fields[k].<field>``; names unique."""
    out = _tables("fields", FieldsConfig, value)
    names = [c.name for c in out]
    for k, n in enumerate(names):
        if n in names[:k]:
            raise ConfigError(f"fields[{k}].name = {n!r}: another [[fields]] table has it")
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class InsertionConfig:
    """Spheres poured in during the run (``pdyn.dynamics.insertion``): ``rate`` spheres per
    second (s⁻¹), or at once to the solid fraction ``fill`` of the region, into a ``region``:
    the box ``region_lo``..``region_hi`` (m; the default), a vertical ``cylinder`` or ``cone``
    (``center``, ``radius`` or ``radius_lo``/``radius_hi``, ``lo``, ``hi``: ``pdyn.regions``);
    radii uniform in [``radius_min``, ``radius_max``] (m) or from the distribution ``sizes``
    (a table, ``pdyn.sizes``), ``density`` (kg/m³), initial ``velocity`` (m/s), at most
    ``total`` (0: no limit), an insertion step every ``every`` steps, random stream ``seed``
    (``rate`` 0: nothing is poured, the outlet alone); optional outlet box
    ``outlet_lo``..``outlet_hi`` (m) whose spheres are removed from time ``outlet_start`` (s) on
    (a hopper filled closed, then opened). Several tables: ``[[insertion]]``."""

    region_lo: tuple | None = None
    region_hi: tuple | None = None
    rate: float | None = None
    radius_min: float | None = None
    radius_max: float | None = None
    density: float = 2500.0
    velocity: tuple = (0.0, 0.0, 0.0)
    total: int = 0
    every: int = 100
    seed: int = 0
    outlet_lo: tuple | None = None
    outlet_hi: tuple | None = None
    outlet_start: float = 0.0
    region: str = "box"  # or "cylinder", "cone" (pdyn.regions)
    center: tuple | None = None  # cylinder, cone: (x, y) of the vertical axis, m
    radius: float | None = None  # cylinder, m
    radius_lo: float | None = None  # cone, m at z = lo
    radius_hi: float | None = None  # cone, m at z = hi
    lo: float | None = None  # cylinder, cone: z from, m
    hi: float | None = None  # cylinder, cone: z to, m
    sizes: dict | None = None  # the size distribution (pdyn.sizes); None: uniform
    fill: float | None = None  # fill the region to this solid fraction at once
    material: str | None = None  # its spheres' material ([[materials]]; None: the first)

    @_config_errors
    def __post_init__(self):
        for name, value in check_region("insertion", self.__dict__).items():
            object.__setattr__(self, name, value)
        dist = size_distribution("insertion", self.sizes, self.radius_min, self.radius_max)
        if self.fill is not None:
            number("insertion.fill", self.fill, above=0, hi=MAX_FILL,
                   note="the fill draws spheres at random, without moving them")
            if self.rate not in (None, 0, 0.0):
                raise BadValue("insertion.rate", self.rate, "not with fill (a fill pours "
                               "once, to its solid fraction)")
            object.__setattr__(self, "rate", 0.0)
        elif self.rate is None:
            raise BadValue("insertion.rate", None, "required (or fill)")
        number("insertion.rate", self.rate, lo=0)
        number("insertion.rate", self.rate, hi=MAX_INSERTION_RATE,
               note="spheres per second: a count owed beyond 64-bit integers")
        region = region_of(self.__dict__)
        if self.region == "box":
            lo, hi = self.region_lo, self.region_hi
            for a in range(3):
                if not hi[a] - lo[a] >= 2.0 * dist.hi:
                    raise ConfigError(f"insertion.region_hi = {list(hi)!r}: the region must "
                                      f"be at least 2 radius_max = {2.0 * dist.hi!r} m wide "
                                      f"along {'xyz'[a]} (region_lo = {list(lo)!r})")
        elif not region.fits(dist.hi):
            raise ConfigError(f"insertion.region = {self.region!r}: no sphere of radius "
                              f"{dist.hi!r} m fits inside it")
        object.__setattr__(self, "radius_min", dist.lo)
        object.__setattr__(self, "radius_max", dist.hi)
        if self.sizes is not None:
            object.__setattr__(self, "sizes", dict(self.sizes, distribution=dist.name))
        number("insertion.density", self.density, above=0)
        object.__setattr__(self, "velocity", vector("insertion.velocity", self.velocity))
        integer("insertion.total", self.total, lo=0)
        integer("insertion.every", self.every, lo=1)
        integer("insertion.seed", self.seed, lo=0)
        object.__setattr__(self, "outlet_start",
                           number("insertion.outlet_start", self.outlet_start, lo=0))
        if (self.outlet_lo is None) != (self.outlet_hi is None):
            given = "outlet_lo" if self.outlet_hi is None else "outlet_hi"
            raise ConfigError(f"insertion.{given} = {getattr(self, given)!r}: give both "
                              "outlet_lo and outlet_hi")
        if self.outlet_lo is not None:
            olo = vector("insertion.outlet_lo", self.outlet_lo)
            ohi = vector("insertion.outlet_hi", self.outlet_hi)
            if not all(ohi[a] > olo[a] for a in range(3)):
                raise ConfigError(f"insertion.outlet_hi = {list(ohi)!r}: must exceed "
                                  f"insertion.outlet_lo = {list(olo)!r}")
            object.__setattr__(self, "outlet_lo", olo)
            object.__setattr__(self, "outlet_hi", ohi)

    def check_box(self, lo, hi) -> None:
        """The region must lie inside the box ``lo``..``hi`` (m), the outlet must overlap it
        (else it would never remove a sphere)."""
        lo, hi = [float(x) for x in lo], [float(x) for x in hi]
        region = region_of(self.__dict__)
        if self.region != "box":
            if (region.lo < lo).any() or (region.hi > hi).any():
                raise ConfigError(f"insertion.region = {self.region!r}: reaches outside the "
                                  f"box {lo!r}..{hi!r} (it spans {region.lo.tolist()!r}.."
                                  f"{region.hi.tolist()!r})")
        for name, v, bad in (("region_lo", self.region_lo, lambda a: v[a] < lo[a]),
                             ("region_hi", self.region_hi, lambda a: v[a] > hi[a])):
            if self.region == "box" and any(bad(a) for a in range(3)):
                raise ConfigError(f"insertion.{name} = {list(v)!r}: outside the box "
                                  f"{lo!r}..{hi!r}")
        if self.outlet_lo is not None and not all(
                self.outlet_lo[a] < hi[a] and self.outlet_hi[a] > lo[a] for a in range(3)):
            raise ConfigError(f"insertion.outlet_lo = {list(self.outlet_lo)!r}: the outlet "
                              f"..{list(self.outlet_hi)!r} lies outside the box "
                              f"{lo!r}..{hi!r} (it would never remove a sphere)")


def insertion_configs(value) -> tuple:
    """``[insertion]`` (a table or :class:`InsertionConfig`) or ``[[insertion]]`` (a list of
    them) as a tuple of InsertionConfigs (empty for None); errors of the k-th of a list name
    ``insertion[k].<field>``."""
    if value is None:
        return ()
    one = isinstance(value, (dict, InsertionConfig))
    if not one and not isinstance(value, (list, tuple)):
        raise ConfigError(f"insertion = {short(value)}: expected a table [insertion] or "
                          "tables [[insertion]]")
    items = [value] if one else list(value)
    if not items:
        raise ConfigError("insertion = []: expected at least one table [[insertion]]")
    out = []
    for k, item in enumerate(items):
        where = "insertion" if one else f"insertion[{k}]"
        if isinstance(item, InsertionConfig):
            out.append(item)
            continue
        if not isinstance(item, dict):
            raise ConfigError(f"{where} = {short(item)}: expected a table [{where}]")
        bad = sorted(set(item) - _known(InsertionConfig))
        if bad:
            raise ConfigError(f"{where}.{bad[0]} = {short(item[bad[0]])}: unknown key "
                              f"(known: {', '.join(sorted(_known(InsertionConfig)))})")
        try:
            out.append(InsertionConfig(**item))
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("insertion.", f"{where}.", 1)) from None
    return tuple(out)


def insertion_params(value, lo, hi) -> list:
    """The run's insertion tables (:func:`insertion_configs` of ``value``), each checked
    against the box ``lo``..``hi`` (m), as the plain dicts ``pdyn.dynamics.insertion.Inserter``
    takes (a one-table list for ``[insertion]``)."""
    configs = insertion_configs(value or None)
    for c in configs:
        c.check_box(lo, hi)
    return [asdict(c) for c in configs]


@dataclass(frozen=True, kw_only=True)
class BoxConfig:
    """Simulation box [lo, hi] (m) and the boundary per axis: wall, periodic or open; a
    Lees–Edwards ``shear_rate`` (1/s; flow x, gradient z, both periodic; docs/running.md),
    ``shear_profile``: start with v_x = rate (z − z_mid) added to the spheres' velocities.
    ``target_pressure``: per periodic axis the normal pressure (Pa, > 0, compression
    positive) its length follows (a table ``{z = 1e3}``, or 3 values with None for a fixed
    length), at strain rates up to ``max_strain_rate`` (1/s) set from the relative error by
    ``pressure_gain`` (1/s; default 10 × max_strain_rate), measured every
    ``pressure_every`` steps (``pdyn.dynamics.cell``). ``strain_rate``: per periodic axis
    a fixed strain rate (1/s, negative: compression) its length follows instead.
    ``[[stages]]`` may change both (``box = {...}``)."""

    lo: tuple = (0.0, 0.0, 0.0)
    hi: tuple = (1.0, 1.0, 1.0)
    boundary: tuple = ("wall", "wall", "wall")
    material: str | None = None  # the faces' material ([[materials]]; None: the first)
    shear_rate: float = 0.0
    shear_profile: bool = False
    target_pressure: Any = (None, None, None)
    strain_rate: Any = (None, None, None)
    max_strain_rate: float | None = None
    pressure_gain: float | None = None
    pressure_every: int = 1

    @_config_errors
    def __post_init__(self):
        lo = vector("box.lo", self.lo)
        hi = vector("box.hi", self.hi)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        for a in range(3):
            if not hi[a] > lo[a]:
                raise ConfigError(f"box.hi = {list(hi)!r}: must exceed box.lo = {list(lo)!r}")
            if not math.isfinite(hi[a] - lo[a]):
                raise ConfigError(f"box.hi = {list(hi)!r}: the box is too large (its length "
                                  f"along {'xyz'[a]} overflows)")
        object.__setattr__(self, "boundary", choices("box.boundary", self.boundary, BOUNDARIES))
        object.__setattr__(self, "shear_rate", number("box.shear_rate", self.shear_rate))
        flag("box.shear_profile", self.shear_profile)
        if self.shear_rate and (self.boundary[0], self.boundary[2]) != ("periodic", "periodic"):
            raise BadValue("box.shear_rate", self.shear_rate, "needs box.boundary periodic "
                           f"along x and z (flow x, gradient z), not {list(self.boundary)!r}")
        if self.shear_profile and not self.shear_rate:
            raise BadValue("box.shear_profile", True, "needs box.shear_rate")
        self._check_pressure()

    def _check_pressure(self) -> None:
        """``target_pressure`` (positive) and ``strain_rate`` (finite) per periodic axis, or
        None (never both on one axis, never along x, the flow, of a sheared box) and the
        controller's fields."""
        found = box_axes("box", {"target_pressure": self.target_pressure,
                                  "strain_rate": self.strain_rate})
        for key, values in found.items():
            for a, v in enumerate(values):
                if v is not None:
                    self.check_axis(f"box.{key}.{'xyz'[a]}", v, a)
            object.__setattr__(self, key, values)
        controlled = any(v is not None for v in self.target_pressure)
        for key in ("max_strain_rate", "pressure_gain"):
            v = getattr(self, key)
            if v is not None:
                if not controlled:
                    raise BadValue(f"box.{key}", v, "needs box.target_pressure")
                object.__setattr__(self, key, number(f"box.{key}", v, above=0.0))
        every = integer("box.pressure_every", self.pressure_every, lo=1)
        if controlled and self.max_strain_rate is None:
            raise BadValue("box.max_strain_rate", None, "needed with box.target_pressure "
                           "(the largest strain rate of the box, 1/s)")
        if controlled and self.pressure_gain is None:
            object.__setattr__(self, "pressure_gain", 10.0 * self.max_strain_rate)
        if every != 1 and not controlled:
            raise BadValue("box.pressure_every", every, "needs box.target_pressure")

    def check_axis(self, name: str, value: float, a: int) -> None:
        """An axis whose length changes: periodic, not the flow of a sheared box."""
        if self.boundary[a] != "periodic":
            raise BadValue(name, value, f"needs box.boundary[{a}] periodic, not "
                           f"{self.boundary[a]!r}")
        if a == 0 and self.shear_rate:
            raise BadValue(name, value, "a sheared box keeps its length along x (the flow)")

    @property
    def deforms(self) -> bool:
        """Whether an axis follows a target pressure or a strain rate."""
        return any(v is not None for v in self.target_pressure + self.strain_rate)


#: the fields of an ``[insertion]`` table a ``[particles]`` fill takes
FILL_FIELDS = ("region", "region_lo", "region_hi", "center", "radius", "radius_lo",
               "radius_hi", "lo", "hi", "radius_min", "radius_max", "sizes", "fill", "seed")


def _rows(value, width: int):
    """``value``, or N = 0 rows of ``width`` numbers where it is an empty list (``positions =
    []``: a run that starts with no spheres, to pour them in)."""
    if isinstance(value, (list, tuple)) and len(value) == 0:
        return np.zeros((0, width))
    return value


@dataclass(frozen=True, kw_only=True)
class ParticlesConfig:
    """User-given spheres (instead of a named scene): centres (m), velocities (m/s), radii (m),
    and either ``masses`` (kg) or a ``density`` (kg/m³). The centres, radii and velocities
    given as arrays, or read from a CSV or HDF5 ``file`` (``pdyn.scenefile``; a relative path
    is resolved against the config file's folder by :func:`load_config`), or generated: a
    ``fill`` table — a region, sizes and the solid fraction ``fill`` as an ``[insertion]``
    fill, with its ``seed`` (``pdyn.placement.fill_region``), spheres at rest."""

    positions: Any = None
    radii: Any = None
    velocities: Any = None
    masses: Any = None
    density: float | None = None
    file: str | None = None
    fill: dict | None = None
    # the spheres' material ([[materials]]): one name, or one per sphere; a file's column
    # (names, or a snapshot's indices) becomes it; None: the first
    material: Any = None

    @_config_errors
    def __post_init__(self):
        made = self._made()
        if made is None and (self.positions is None or self.radii is None):
            raise BadValue("particles.positions" if self.positions is None else
                           "particles.radii", None, "required (or particles.file or "
                           "particles.fill)")
        pos = array("particles.positions", made["positions"] if made else
                    _rows(self.positions, 3), (3,))
        n = pos.shape[0]
        rad = array("particles.radii", made["radii"] if made else self.radii, (), positive=True)
        if rad.shape[0] != n:
            raise ConfigError(f"particles.radii: {rad.shape[0]} values for {n} positions")
        vel = (made["velocities"] if made else np.zeros((n, 3)) if self.velocities is None
               else array("particles.velocities", _rows(self.velocities, 3), (3,)))
        if vel.shape[0] != n:
            raise ConfigError(f"particles.velocities: {vel.shape[0]} rows for {n} positions")
        if self.masses is not None:
            mass = array("particles.masses", self.masses, (), positive=True)
            if mass.shape[0] != n:
                raise ConfigError(f"particles.masses: {mass.shape[0]} values for {n} positions")
        elif self.density is None and self.material is not None:
            mass = None  # from the materials' densities (SimulationConfig)
        else:
            rho = number("particles.density", 1000.0 if self.density is None else self.density,
                          above=0)
            mass = rho * 4.0 / 3.0 * np.pi * rad**3
        if isinstance(self.material, np.ndarray):  # a snapshot's indices (pdyn.scenefile)
            index = self.material
            if (self.file is None or index.shape != (n,)
                    or not np.issubdtype(index.dtype, np.integer)):
                raise BadValue("particles.material", index, f"expected a name, or {n} names "
                               "(one per sphere)")
            index.setflags(write=False)
        elif self.material is not None and not isinstance(self.material, str):
            names = self.material
            if (not isinstance(names, (list, tuple)) or len(names) != n
                    or not all(isinstance(m, str) for m in names)):
                raise BadValue("particles.material", names, f"expected a name, or {n} names "
                               "(one per sphere)")
            object.__setattr__(self, "material", tuple(names))
        for name, arr in (("positions", pos), ("radii", rad), ("velocities", vel),
                          ("masses", mass)):
            if arr is not None:
                arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def _made(self) -> dict | None:
        """The spheres the ``file`` or the ``fill`` gives (None: neither); arrays given beside
        them must be the very ones they give (a copy of this config holds them), and so must a
        ``material`` given beside a file's material column, which becomes ``material``."""
        if self.file is not None and self.fill is not None:
            raise BadValue("particles.fill", self.fill, "not with particles.file")
        if self.file is not None:
            if not isinstance(self.file, str) or not self.file:
                raise BadValue("particles.file", self.file, "expected a file path")
            made, source = read_spheres(self.file), "file"
        elif self.fill is not None:
            made, source = self.filled(), "fill"
        else:
            return None
        for name in ("positions", "radii", "velocities"):
            given = getattr(self, name)
            if given is not None and not np.array_equal(np.asarray(given), made[name]):
                raise BadValue(f"particles.{name}", given, f"not with particles.{source} "
                               "(it gives them)")
        column = made.get("material")
        if column is not None:
            given = self.material
            if given is not None and not (
                    isinstance(given, (tuple, list, np.ndarray)) and len(given) == len(column)
                    and np.array_equal(np.asarray(given), np.asarray(column))):
                raise BadValue("particles.material", given, "not with particles.file's "
                               "material column (it gives them)")
            object.__setattr__(self, "material", column)
        return made

    def fill_config(self) -> InsertionConfig:
        """The ``fill`` table checked as an ``[insertion]`` fill (errors name
        ``particles.fill.<field>``)."""
        if not isinstance(self.fill, dict):
            raise BadValue("particles.fill", self.fill, "expected a table [particles.fill]")
        bad = sorted(set(self.fill) - set(FILL_FIELDS))
        if bad:
            raise BadValue(f"particles.fill.{bad[0]}", self.fill[bad[0]], "unknown key (known: "
                           f"{', '.join(sorted(FILL_FIELDS))})")
        if "fill" not in self.fill:
            raise BadValue("particles.fill.fill", None, "required: the solid fraction")
        try:
            return InsertionConfig(**self.fill)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("insertion.", "particles.fill.", 1)) from None

    def filled(self) -> dict:
        """The spheres of the ``fill`` (at rest); every drawn sphere must find a place."""
        cfg = self.fill_config()
        dist = size_distribution("particles.fill", cfg.sizes, cfg.radius_min, cfg.radius_max)
        region = region_of(asdict(cfg))
        rng = np.random.Generator(np.random.PCG64(cfg.seed))
        pos, rad, drawn = fill_region(region, dist, cfg.fill, rng, FILL_TRIES)
        if len(rad) < drawn:
            reached = float(np.sum(4.0 / 3.0 * np.pi * rad**3)) / region.volume
            raise BadValue("particles.fill.fill", cfg.fill, f"{len(rad)} of the {drawn} spheres "
                           f"drawn found a place in {FILL_TRIES} tries each (solid fraction "
                           f"{reached:.3g}): ask for less")
        return {"positions": pos, "radii": rad, "velocities": np.zeros_like(pos)}


#: the ``[[walls]]`` types, one per wall kind (``pdyn.wallkinds.KINDS``)
WALL_TYPES = tuple(KINDS)
#: the ``[[walls]]`` fields of programs of time, any kind's (``pdyn.programs``)
MOTION_FIELDS = ("translation", "rotation", "servo")


@dataclass(frozen=True, kw_only=True)
class WallConfig:
    """A wall beyond the box faces (``[[walls]]``; geometry and equations in ``docs/walls.md``,
    code in ``pdyn.walls``). ``type = "plane"``: ``point`` on it and ``normal`` toward the
    spheres (any direction). ``type = "cylinder"``: ``point`` on its axis, ``axis``, ``radius``
    (m), spheres ``inside`` (true) or outside; infinite along the axis, or an open tube of
    ``length`` (m) centred on ``point`` whose both faces and rims act. Either may translate
    at ``velocity`` (m/s: its point is point + velocity · t) and turn at
    ``angular_velocity`` (rad/s, right-handed): a cylinder about its axis, a plane about its
    normal through its point (a turntable); the surface velocity drags the spheres through
    friction. ``type = "mesh"``: triangles from the STL ``file``
    (ASCII or binary; a relative path is resolved against the config file's folder by
    :func:`load_config`) or from ``vertices`` (V, 3) and ``triangles`` (T, 3) of vertex
    indices (library), times ``scale`` (file units → m); may translate, and turn at
    ``angular_velocity`` (rad/s, right-handed) about ``axis`` through ``point`` (m, in the
    scaled mesh's frame; default its origin) (``pdyn.mesh``). ``type = "cone"``: ``point``
    on its axis, ``axis``, radii ``radius_lo`` and ``radius_hi`` (m, >= 0, not both 0) at
    axial positions ``lo`` < ``hi`` (m from ``point`` along ``axis``), as LAMMPS' ``region
    cone``; a thin shell whose both faces and rims act, or with ``infinite`` the whole cone
    from its apex on; moves as a cylinder. Each type's fields, checks and table row: its
    spec in ``pdyn.wallkinds``. Any kind may follow a program of time: ``translation`` and
    ``rotation``, lists of terms (``sine``, ``ramp``, ``table``) added to ``velocity`` and
    ``angular_velocity``; a plane, a mesh or a cylinder's radius may hold a load with a
    ``servo`` (``pdyn.programs``, ``pdyn.dynamics.wallmotion``).
    Errors name ``walls[k].<field>``."""

    type: str
    point: tuple | None = None  # plane, cylinder, cone; mesh: on its axis of turning (m)
    normal: tuple | None = None  # plane: toward the spheres
    axis: tuple | None = None  # cylinder, cone; mesh: its axis of turning
    radius: float | None = None  # cylinder, m
    inside: bool = True  # cylinder: spheres inside
    velocity: tuple = (0.0, 0.0, 0.0)  # m/s
    angular_velocity: float = 0.0  # rad/s about the axis (cylinder, cone, mesh), plane's normal
    length: float | None = None  # cylinder, m, centred on point; None: infinite
    radius_lo: float | None = None  # cone, m, at lo
    radius_hi: float | None = None  # cone, m, at hi
    lo: float | None = None  # cone, m along the axis from point
    hi: float | None = None  # cone, m along the axis from point (> lo)
    infinite: bool = False  # cone: the whole cone from its apex on, not only lo to hi
    file: str | None = None  # mesh: an STL file
    scale: float = 1.0  # mesh: file units → m
    vertices: tuple | None = None  # mesh (library): (V, 3)
    triangles: tuple | None = None  # mesh (library): (T, 3) vertex indices
    allow_fast: bool = False  # run a wall faster than pdyn.checks.refuse_fast_walls accepts
    # programs of time (pdyn.programs, docs/walls.md "Programs"): terms added to velocity
    # (translation, m) and to angular_velocity (rotation, rad); a servo holding a load
    translation: tuple = ()
    rotation: tuple = ()
    servo: dict | None = None
    material: str | None = None  # its material ([[materials]]; None: the first)

    @_config_errors
    def __post_init__(self):
        """Fields of another kind refused; the kind's own checked and normalised by its
        spec (``pdyn.wallkinds.WallKind.check``)."""
        choice("walls.type", self.type, WALL_TYPES)
        object.__setattr__(self, "velocity", vector("walls.velocity", self.velocity))
        for name, dim in (("translation", 3), ("rotation", 1)):
            object.__setattr__(self, name, check_program(f"walls.{name}", getattr(self, name),
                                                         dim))
        if self.servo is not None:
            object.__setattr__(self, "servo", check_servo("walls.servo", self.servo))
        check_motion(self.type, self.velocity, self.translation, self.rotation, self.servo,
                     self.length is not None)
        kind = KINDS[self.type]
        defaults = {f.name: f.default for f in fields(self)}
        for name in sorted(set(defaults) - {"type", "velocity", "material", *MOTION_FIELDS}):
            if name in kind.fields or name in kind.explains:
                continue
            if getattr(self, name) != defaults[name]:
                owners = [k for k, v in KINDS.items() if name in v.fields]
                raise BadValue(f"walls.{name}", getattr(self, name),
                               f"not a field of a {self.type} (only of a "
                               f"{' or '.join(owners)})")
        for name, value in kind.check(self._values()).items():
            object.__setattr__(self, name, value)

    def _values(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def mesh(self) -> Mesh:
        """A mesh wall's geometry (``pdyn.mesh.Mesh``, in m; read once and cached)."""
        return load_mesh(self._values())

    def spec(self) -> dict:
        """The wall as ``pdyn.walls.WallSet`` takes it (``pdyn.wallkinds.WallKind.spec``)."""
        return {**KINDS[self.type].spec(self._values()),
                **{name: getattr(self, name) for name in MOTION_FIELDS}}


def wall_configs(walls) -> tuple:
    """``walls`` (a list of tables or :class:`WallConfig`) as WallConfigs, each error naming
    ``walls[k].<field>``."""
    if not isinstance(walls, (list, tuple)):
        raise ConfigError(f"walls = {short(walls)}: expected a list of tables [[walls]]")
    out = []
    known = _known(WallConfig)
    for k, w in enumerate(walls):
        if isinstance(w, WallConfig):
            out.append(w)
            continue
        if not isinstance(w, dict):
            raise ConfigError(f"walls[{k}] = {short(w)}: expected a table [[walls]]")
        bad = sorted(set(w) - known)
        if bad:
            raise ConfigError(f"walls[{k}].{bad[0]} = {short(w[bad[0]])}: unknown key "
                              f"(known: {', '.join(sorted(known))})")
        if "type" not in w:
            raise ConfigError(f"walls[{k}].type: required in [[walls]]")
        try:
            out.append(WallConfig(**w))
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("walls.", f"walls[{k}].", 1)) from None
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class SimulationConfig:
    """Everything a run needs. ``None`` fields take the scene's suggestion."""

    scene: str = "drop"
    scale: float = 1.0
    seed: int = 0
    # the scene's further options ([scene_options]: the drum's froude and rough, ...)
    scene_options: dict = field(default_factory=dict)
    steps: int | None = None
    dt: float | None = None  # s; default: contact time / dt_safety
    dt_safety: float = 20.0
    # accept a dt above the limit (contact time / dt_safety; 0.2 Rayleigh times with Hertz)
    allow_large_dt: bool = False
    # run on when a sphere goes through a wall or another sphere (pdyn.checks.OverlapWatch)
    allow_deep_overlap: bool = False
    broadphase: str = "auto"  # picks the structure from the scene (pdyn/broadphase/auto.py)
    broadphase_params: dict = field(default_factory=dict)
    contact: ContactConfig | None = None
    gravity: tuple | None = None  # m/s²
    box: BoxConfig | None = None
    particles: ParticlesConfig | None = None
    # spheres poured in during the run: [insertion], or a tuple of them ([[insertion]])
    insertion: InsertionConfig | tuple | None = None
    walls: tuple = ()  # [[walls]]: planes and cylinders besides the box faces (WallConfig)
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
    fields: tuple = ()  # [[fields]]: coarse-grained fields (FieldsConfig)
    progress: bool = True
    # several materials: [[materials]] (MaterialConfig) and pair values [[interactions]]
    # (InteractionConfig); none: [contact] is the one material
    materials: tuple = ()
    interactions: tuple = ()
    # a run in stages: [[stages]] (pdyn.stageplan.Stage; docs/stages.md)
    stages: tuple = ()

    @property
    def writes_files(self) -> bool:
        """Does the run write anything into ``output.folder`` (its ``[output]`` writers or
        a ``[[fields]]`` table)?"""
        return self.output.writes_files or bool(self.fields)

    def _check_deforming(self) -> None:
        """A box whose lengths follow ``box.target_pressure`` or ``box.strain_rate`` (or a
        stage's ``box``) takes no [[walls]], insertion or [[fields]] (they stay where the box
        was at the start)."""
        if not ((self.box is not None and self.box.deforms)
                or any(s.box is not None for s in self.stages)):
            return
        for key, value in (("walls", self.walls), ("insertion", self.insertion),
                           ("fields", self.fields)):
            if value:
                raise BadValue(key, f"{len(value) if isinstance(value, tuple) else 1} "
                               "table(s)", "a box whose lengths change (box.target_pressure, "
                               "box.strain_rate or a stage's box) takes "
                               f"no {key} (they would stay where the box was at the start)")

    @_config_errors
    def __post_init__(self):
        from .broadphase import REGISTRY
        from .scenarios import SCENES, scene_options

        if self.particles is None and (not isinstance(self.scene, str)
                                       or self.scene not in SCENES):
            raise ConfigError(f"scene = {self.scene!r}: unknown (choose from {', '.join(SCENES)})")
        number("scale", self.scale, above=0)
        integer("seed", self.seed, lo=0)
        if self.particles is not None and self.scene_options:
            raise BadValue("scene_options", self.scene_options, "a scene's options, not for "
                           "[particles]")
        if self.particles is None:
            object.__setattr__(self, "scene_options", scene_options(self.scene,
                                                                    self.scene_options))
        if self.steps is not None:
            integer("steps", self.steps, lo=1)
        if self.dt is not None:
            number("dt", self.dt, above=0)
        number("dt_safety", self.dt_safety, lo=1.0)
        flag("allow_large_dt", self.allow_large_dt)
        flag("allow_deep_overlap", self.allow_deep_overlap)
        if not isinstance(self.broadphase, str) or self.broadphase not in REGISTRY:
            raise ConfigError(
                f"broadphase = {self.broadphase!r}: unknown (choose from {', '.join(REGISTRY)})"
            )
        _check_broadphase_params(REGISTRY[self.broadphase], self.broadphase_params)
        if self.gravity is not None:
            object.__setattr__(self, "gravity", vector("gravity", self.gravity))
        object.__setattr__(self, "walls", wall_configs(self.walls))
        if self.walls and self.box is not None and self.box.shear_rate:
            raise BadValue("walls", f"{len(self.walls)} table(s)", "a sheared box "
                           "(box.shear_rate) takes no [[walls]]: the images move past them")
        object.__setattr__(self, "fields", field_configs(self.fields))
        if self.insertion is not None and not isinstance(self.insertion, InsertionConfig):
            found = insertion_configs(self.insertion)
            object.__setattr__(self, "insertion",
                               found[0] if isinstance(self.insertion, dict) else found)
        if self.blocks is not None:
            b = tuple(integers("blocks", self.blocks, 3, lo=1).tolist())
            if math.prod(b) > 2**31:
                raise ConfigError(f"blocks = {list(b)!r}: {math.prod(b)} blocks; far too many")
            object.__setattr__(self, "blocks", b)
        integer("balance_every", self.balance_every, lo=0)
        number("balance_threshold", self.balance_threshold, lo=1.0)
        choice("balance_curve", self.balance_curve, CURVES)
        integer("reorder_every", self.reorder_every, lo=0)
        choice("initial_overlap", self.initial_overlap, INITIAL_OVERLAP)
        number("overlap_tolerance", self.overlap_tolerance, lo=0, hi=1.0)
        if self.neighbour_skin is not None:
            number("neighbour_skin", self.neighbour_skin, lo=0)
        if self.particles is not None and self.box is None:
            raise ConfigError("box: required with [particles] (give lo, hi, boundary)")
        if self.particles is not None and self.particles.fill is not None:
            try:
                self.particles.fill_config().check_box(self.box.lo, self.box.hi)
            except ConfigError as exc:
                raise ConfigError(str(exc).replace("insertion.", "particles.fill.", 1)) from None
        flag("progress", self.progress)
        self._materials()
        check_cohesion(self.contact or ContactConfig(), self.materials, self.interactions)
        self._stages()
        self._check_deforming()

    def _stages(self) -> None:
        """``[[stages]]`` checked (``pdyn.stageplan``) and against the run: the walls they
        name exist and may take the change, the materials they change are known."""
        plan = check_stages(self.stages)
        object.__setattr__(self, "stages", plan)
        n = len(self.walls)
        for k, stage in enumerate(plan):
            where = f"stages[{k}]"
            if stage.end is not None and stage.end[0] == "wall_force" and (
                    stage.end[1]["wall"] >= n):
                raise BadValue(f"{where}.wall_force.wall", stage.end[1]["wall"],
                               f"the run has {n} [[walls]]")
            self.fits(where, stage)

    def fits(self, where: str, stage) -> None:
        """The changes of ``stage`` (``pdyn.stageplan.Stage``, a stage's or a
        ``Simulation.change``'s, named ``where``) fit the run: the walls they name exist and
        may take the change, the materials they change are known (``BadValue``)."""
        n = len(self.walls)
        for i, w in enumerate(stage.walls):
            name = f"{where}.walls[{i}]"
            if w["wall"] >= n:
                raise BadValue(f"{name}.wall", w["wall"], f"the run has {n} [[walls]]")
            wall = self.walls[w["wall"]]
            if wall.type == "mesh" and wall.servo is None:
                raise BadValue(f"{name}.wall", w["wall"], "a mesh's motion is set for the "
                               "whole run")
            if ("servo" in w) != (wall.servo is not None):
                raise BadValue(f"{name}.wall", w["wall"], "a servo wall takes a new servo "
                               "only" if wall.servo is not None else
                               "a new servo only for a wall that has one from the start")
            if "servo" in w:
                check_servo_kind(f"{name}.servo", wall.type, w["servo"],
                                 wall.length is not None, wall.servo.get("direction"))
        if stage.contact is not None and self.materials:
            raise BadValue(f"{where}.contact", stage.contact, "the run has [[materials]]: "
                           "change them by materials = [{name = ..., ...}]")
        if stage.materials and not self.materials:
            raise BadValue(f"{where}.materials", list(stage.materials), "the run has no "
                           "[[materials]]: change contact = {...}")
        for i, m in enumerate(stage.materials):
            self.material_index(f"{where}.materials[{i}].name", m["name"])

    def _materials(self) -> None:
        """``[[materials]]`` and ``[[interactions]]`` checked, every ``material`` name known,
        and the densities of materials given to the spheres of ``[particles]`` and of the
        insertion feeds that name them and give no density of their own."""
        mats, pairs = material_configs(self.materials, self.interactions)
        object.__setattr__(self, "materials", mats)
        object.__setattr__(self, "interactions", pairs)
        p = self.particles
        if p is not None:
            index = self.material_indices("particles.material", p.material, len(p.radii))
            if p.masses is None:
                rho = np.array([1000.0 if m.density is None else m.density for m in mats]
                               or [1000.0])
                mass = rho[index] * 4.0 / 3.0 * np.pi * np.asarray(p.radii) ** 3
                mass.setflags(write=False)
                object.__setattr__(p, "masses", mass)
        if self.box is not None:
            self.material_index("box.material", self.box.material)
        for k, w in enumerate(self.walls):
            self.material_index(f"walls[{k}].material", w.material)
        feeds = (self.insertion,) if isinstance(self.insertion, InsertionConfig) else (
            self.insertion or ())
        out = []
        for k, feed in enumerate(feeds):
            where = ("insertion" if isinstance(self.insertion, InsertionConfig)
                     else f"insertion[{k}]")
            m = mats[self.material_index(f"{where}.material", feed.material)] if (
                feed.material is not None) else None
            if m is not None and m.density is not None and feed.density != m.density:
                if feed.density != InsertionConfig.density:
                    raise BadValue(f"{where}.density", feed.density, f"the material "
                                   f"{m.name!r} has density {m.density!r} (give one)")
                feed = replace(feed, density=float(m.density))
            out.append(feed)
        if out:
            object.__setattr__(self, "insertion", out[0] if isinstance(
                self.insertion, InsertionConfig) else tuple(out))

    def material_index(self, where: str, name: str | None) -> int:
        """The index of the material ``name`` in :attr:`materials` (None: 0, the first);
        a one-line error naming ``where`` for a name not there."""
        if name is None:
            return 0
        for k, m in enumerate(self.materials):
            if m.name == name:
                return k
        known = ", ".join(m.name for m in self.materials) or "none: no [[materials]]"
        raise ConfigError(str(BadValue(where, name, f"unknown material (known: {known})")))

    def material_indices(self, where: str, names, n: int) -> np.ndarray:
        """``names`` (one name, one per sphere, or None) as the material index of each of
        ``n`` spheres (uint8); ``[particles]``' per-sphere materials from its ``file`` (names,
        or a snapshot's indices) with a bad one named by the file and the sphere."""
        p = self.particles
        if names is None or isinstance(names, str):
            return np.full(n, self.material_index(where, names), np.uint8)
        if not (p is not None and p.file is not None and names is p.material):
            return np.array([self.material_index(f"{where}[{k}]", m)
                             for k, m in enumerate(names)], np.uint8)
        known = {m.name: k for k, m in enumerate(self.materials)}
        if isinstance(names, np.ndarray):  # a snapshot's indices into [[materials]]
            index, bad = names, names >= len(self.materials)
        else:
            unique, inverse = np.unique(np.asarray(names, str), return_inverse=True)
            index = np.array([known.get(m, -1) for m in unique])[inverse]
            bad = index < 0
        if bad.any():
            k = int(np.argmax(bad))
            why = ("the run has no [[materials]] to name" if not self.materials else
                   f"not an index of the run's {len(self.materials)} [[materials]] (0 to "
                   f"{len(self.materials) - 1})" if isinstance(
                       names, np.ndarray) else f"unknown material (known: {', '.join(known)})")
            raise ConfigError(str(BadValue("particles.file", Path(p.file).name, f"sphere {k}: "
                                           f"material = {short(names[k])}: {why}")))
        return index.astype(np.uint8)

    def material_pairs(self, contact: ContactConfig, scene: set | None = None) -> dict:
        """What the contact law takes of the materials (``ContactLaw.from_config``): each
        material's values (``materials``, :meth:`MaterialConfig.values` over ``contact``),
        the pairs' own (``interactions``: (a, b) -> values) and the pairs that can occur
        (``occurs``: a sphere material with a sphere or wall material, the time step's;
        ``scene``: the material indices of a named scene's spheres, None: 0);
        empty without ``[[materials]]``."""
        if not self.materials:
            return {}
        index = {m.name: k for k, m in enumerate(self.materials)}
        p = self.particles
        feeds = (self.insertion,) if isinstance(self.insertion, InsertionConfig) else (
            self.insertion or ())
        spheres = {index.get(f.material, 0) for f in feeds}
        if p is None:
            spheres.update({0} if scene is None else {int(k) for k in scene})
        elif p.material is None or isinstance(p.material, str):
            spheres.add(index.get(p.material, 0))
        else:
            spheres.update(self.material_indices("particles.material", p.material,
                                                 len(p.radii)).tolist())
        walls = {index.get(None if self.box is None else self.box.material, 0)}
        walls.update(index.get(w.material, 0) for w in self.walls)
        return {"materials": [m.values(contact) for m in self.materials],
                "interactions": {tuple(index[m] for m in i.materials): i.given()
                                 for i in self.interactions},
                "occurs": {(a, b) for a in spheres for b in spheres | walls}}

    def with_(self, **changes) -> "SimulationConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def _check_broadphase_params(cls, params) -> None:
    """``broadphase_params`` against the structure's parameter table
    (``pdyn.broadphase.params``), each error naming ``broadphase_params.<name>`` and the
    value."""
    from .broadphase.params import checked

    if not isinstance(params, dict):
        raise ConfigError(f"broadphase_params = {params!r}: expected a table")
    try:
        checked(cls, params)
    except BadValue as exc:
        raise ConfigError(f"broadphase_params.{exc}") from None


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
            missing = [f.name for f in fields(cls) if f.name not in sec
                       and f.default is MISSING and f.default_factory is MISSING]
            if missing:
                raise ConfigError(f"{name}.{missing[0]}: required in [{name}]")
            top[name] = cls(**sec)
    if "walls" in top:
        top["walls"] = wall_configs(top["walls"])
    if "insertion" in top:  # [insertion] or [[insertion]]
        found = insertion_configs(top["insertion"])
        top["insertion"] = found[0] if isinstance(top["insertion"], dict) else found
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
    for w in data.get("walls", ()) if isinstance(data.get("walls"), list) else ():
        if isinstance(w, dict) and isinstance(w.get("file"), str):  # relative to the config
            w["file"] = str(path.parent / w["file"])
    particles = data.get("particles")
    if isinstance(particles, dict) and isinstance(particles.get("file"), str):
        particles["file"] = str(path.parent / particles["file"])
    return config_from_dict(data, source=str(path))
