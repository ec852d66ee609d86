"""Size distributions of poured and generated spheres: one table (:data:`DISTRIBUTIONS`) of the
distributions, each with its parameters, their check and its sampler.

A distribution is given as a TOML table (``[insertion.sizes]``, ``[particles.fill.sizes]``)
with ``distribution`` and its parameters; the radius bounds ``radius_min``, ``radius_max``
(m) of the table around it bound (truncate) every continuous distribution, and a ``discrete``
one sets them from its radii. Radii are drawn from a numpy ``Generator`` on one place (every
rank draws the same numbers), so a sample depends on the seed only:

- ``uniform`` (the default): uniform by number in [r_min, r_max], ``r_min + (r_max − r_min) u``
  (the bits pdyn always drew);
- ``uniform_mass``: uniform by mass — each radius interval carries mass ∝ its width, so the
  number density is ∝ r⁻³ — by its inverse distribution function
  r = (r_min⁻² − u (r_min⁻² − r_max⁻²))^(−1/2);
- ``normal``: ``mean`` (m), ``std`` (m) truncated to [r_min, r_max];
- ``log_normal``: ln r normal around ln ``median`` (m) with ``sigma`` (of ln r), truncated to
  [r_min, r_max];
- ``discrete``: a sieve table — ``radii`` (m) with ``fractions`` of the spheres by number
  (``by = "number"``) or of the mass by mass (``by = "mass"``: the number fraction of a
  radius is ∝ its mass fraction / r³, at one density).

Truncated distributions are sampled by rejection (draws outside the bounds are drawn again,
in order), which leaves the distribution inside the bounds exact; bounds that keep less than
``MIN_KEPT`` of it are refused. Sampling by inverse transform and rejection: [Devroye1986]
Ch. II.2 and II.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .values import BadValue, choice, number, numbers

#: the least part of a truncated distribution its bounds may keep (else rejection would draw
#: too many times over)
MIN_KEPT = 1e-3


@dataclass(frozen=True)
class Field:
    """A parameter of a distribution: ``kind`` "length" (m, > 0), "positive" (> 0),
    "lengths" (a list of m, > 0), "fractions" (a list, >= 0, not all 0) or a tuple of
    choices; ``default`` (None: required); ``help``: what it means."""

    kind: object
    help: str
    default: object = None

    def check(self, name: str, value):
        """``value`` checked (:class:`BadValue` naming ``name`` if not)."""
        if isinstance(self.kind, tuple):
            return choice(name, value, self.kind)
        if self.kind in ("length", "positive"):
            return number(name, value, above=0)
        arr = numbers(name, value, "a list of numbers")
        if arr.ndim != 1 or arr.size == 0:
            raise BadValue(name, value, "expected a list of numbers")
        bad = ~(arr > 0) if self.kind == "lengths" else ~(arr >= 0)
        if bad.any() or not np.isfinite(arr).all():
            k = int(np.argmax(bad | ~np.isfinite(arr)))
            raise BadValue(f"{name}[{k}]", float(arr[k]),
                           "must be > 0" if self.kind == "lengths" else "must be >= 0")
        if self.kind == "fractions" and not arr.sum() > 0:
            raise BadValue(name, value, "the fractions sum to 0")
        return tuple(float(x) for x in arr)


@dataclass(frozen=True)
class Distribution:
    """A row of :data:`DISTRIBUTIONS`: its ``fields`` (name -> :class:`Field`), whether it
    takes ``bounds`` (radius_min, radius_max) from the table around it, and ``draw(rng, n,
    params, lo, hi)`` -> n radii (m)."""

    help: str
    fields: dict
    draw: Callable
    bounds: bool = True


def _uniform(rng, n, p, lo, hi):
    return lo + (hi - lo) * rng.random(n)


def _uniform_mass(rng, n, p, lo, hi):
    a, b = lo**-2, hi**-2
    return (a - rng.random(n) * (a - b)) ** -0.5


def _truncated(rng, n, lo, hi):
    """``n`` standard normal numbers in [lo, hi] (rejection, in draw order)."""
    out = np.empty(n)
    k = 0
    while k < n:
        z = rng.standard_normal(max(2 * (n - k), 16))
        z = z[(z >= lo) & (z <= hi)][: n - k]
        out[k:k + z.size] = z
        k += z.size
    return out


def _normal(rng, n, p, lo, hi):
    m, s = p["mean"], p["std"]
    return m + s * _truncated(rng, n, (lo - m) / s, (hi - m) / s)


def _log_normal(rng, n, p, lo, hi):
    m, s = math.log(p["median"]), p["sigma"]
    return np.exp(m + s * _truncated(rng, n, (math.log(lo) - m) / s, (math.log(hi) - m) / s))


def number_fractions(radii, fractions, by: str) -> np.ndarray:
    """A sieve table's fractions by number (summing to 1) from ``fractions`` by ``by``
    ("number", or "mass": ∝ fraction / r³)."""
    f = np.asarray(fractions, float)
    if by == "mass":
        f = f / np.asarray(radii, float) ** 3
    return f / f.sum()


def _discrete(rng, n, p, lo, hi):
    cdf = np.cumsum(number_fractions(p["radii"], p["fractions"], p["by"]))
    pick = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.asarray(p["radii"], float)[np.minimum(pick, len(cdf) - 1)]


DISTRIBUTIONS = {
    "uniform": Distribution("uniform by number in [radius_min, radius_max]", {}, _uniform),
    "uniform_mass": Distribution("uniform by mass in [radius_min, radius_max] (number ∝ r⁻³)",
                                 {}, _uniform_mass),
    "normal": Distribution("normal, truncated to [radius_min, radius_max]",
                           {"mean": Field("length", "mean radius (m) before truncation"),
                            "std": Field("length", "standard deviation of the radius (m)")},
                           _normal),
    "log_normal": Distribution(
        "log-normal (ln r normal), truncated to [radius_min, radius_max]",
        {"median": Field("length", "median radius (m) before truncation: exp of ln r's mean"),
         "sigma": Field("positive", "standard deviation of ln r")}, _log_normal),
    "discrete": Distribution(
        "a sieve table: radii with fractions by number or by mass",
        {"radii": Field("lengths", "the radii (m)"),
         "fractions": Field("fractions", "each radius' share (normalised to sum 1)"),
         "by": Field(("number", "mass"), "whether fractions are of the number or the mass",
                     "number")}, _discrete, bounds=False),
}


def _kept(name: str, p: dict, lo: float, hi: float) -> None:
    """Refuse bounds that keep less than ``MIN_KEPT`` of a truncated distribution."""
    if name == "normal":
        a, b = (lo - p["mean"]) / p["std"], (hi - p["mean"]) / p["std"]
    elif name == "log_normal":
        m = math.log(p["median"])
        a, b = (math.log(lo) - m) / p["sigma"], (math.log(hi) - m) / p["sigma"]
    else:
        return
    kept = 0.5 * (math.erf(b / math.sqrt(2.0)) - math.erf(a / math.sqrt(2.0)))
    if not kept >= MIN_KEPT:
        raise BadValue("radius_min", lo, f"with radius_max = {hi!r} the bounds keep "
                       f"{kept:.2g} of the {name} distribution (at least {MIN_KEPT:g})")


@dataclass(frozen=True)
class Sizes:
    """A checked size distribution: its ``name``, ``params`` and bounds ``lo``, ``hi`` (m)."""

    name: str
    params: dict
    lo: float
    hi: float

    def draw(self, rng, n: int) -> np.ndarray:
        """``n`` radii (m) from ``rng`` (a numpy Generator)."""
        return DISTRIBUTIONS[self.name].draw(rng, int(n), self.params, self.lo, self.hi)

    @property
    def uniform(self) -> bool:
        """The default distribution (uniform by number)?"""
        return self.name == "uniform"


def size_distribution(prefix: str, table, radius_min, radius_max) -> Sizes:
    """The distribution the table ``table`` (None: uniform) asks for, with the bounds
    ``radius_min``, ``radius_max`` (m) of the table around it; errors name
    ``<prefix>.sizes.<field>`` or ``<prefix>.radius_min``/``radius_max`` (raised as
    :class:`BadValue`)."""
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise BadValue(f"{prefix}.sizes", table, "expected a table")
    name = choice(f"{prefix}.sizes.distribution", table.get("distribution", "uniform"),
                  tuple(DISTRIBUTIONS))
    dist = DISTRIBUTIONS[name]
    unknown = sorted(set(table) - set(dist.fields) - {"distribution"})
    if unknown:
        raise BadValue(f"{prefix}.sizes.{unknown[0]}", table[unknown[0]],
                       f"not a parameter of the {name} distribution (its parameters: "
                       f"{', '.join(dist.fields) or 'none'})")
    p = {}
    for key, f in dist.fields.items():
        if key not in table and f.default is None:
            raise BadValue(f"{prefix}.sizes.{key}", None, f"required by the {name} distribution "
                           f"({f.help})")
        p[key] = f.check(f"{prefix}.sizes.{key}", table.get(key, f.default))
    if not dist.bounds:
        if len(p["fractions"]) != len(p["radii"]):
            raise BadValue(f"{prefix}.sizes.fractions", list(p["fractions"]),
                           f"{len(p['fractions'])} fractions for {len(p['radii'])} radii")
        lo, hi = min(p["radii"]), max(p["radii"])
        for key, v, bad in (("radius_min", radius_min, lambda v: v > lo),
                            ("radius_max", radius_max, lambda v: v < hi)):
            if v is not None and bad(number(f"{prefix}.{key}", v, above=0)):
                raise BadValue(f"{prefix}.{key}", v, f"the discrete radii span {lo!r}..{hi!r}")
        return Sizes(name, p, lo, hi)
    for key, v in (("radius_min", radius_min), ("radius_max", radius_max)):
        if v is None:
            raise BadValue(f"{prefix}.{key}", None, f"required by the {name} distribution")
    lo = number(f"{prefix}.radius_min", radius_min, above=0)
    hi = number(f"{prefix}.radius_max", radius_max, above=0)
    if hi < lo:
        raise BadValue(f"{prefix}.radius_max", radius_max,
                       f"must be >= {prefix}.radius_min = {radius_min!r}")
    try:
        _kept(name, p, lo, hi)
    except BadValue as exc:
        raise BadValue(f"{prefix}.{exc.name}", exc.value, exc.why) from None
    return Sizes(name, p, lo, hi)

