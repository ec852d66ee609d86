"""Regions spheres are poured or filled into: a box, a vertical cylinder, a vertical cone
(frustum), each a table's fields checked here and the numpy tests a candidate meets.

- ``box``: ``region_lo``..``region_hi`` (m);
- ``cylinder``: axis vertical through ``center`` = (x, y) (m), ``radius`` (m), from z = ``lo``
  to ``hi`` (m);
- ``cone``: axis vertical through ``center``, radius ``radius_lo`` at z = ``lo`` and
  ``radius_hi`` at z = ``hi`` (m, >= 0, not both 0): the ``cone`` wall's fields with its axis
  ẑ and its point (x, y, 0) ([LAMMPSregion]).

A sphere of radius r is inside when all of it is: in the box shrunk by r; within ``radius``
− r of the axis and r of the ends; for the cone, r from the ends and a distance
(R(z) − ρ) cos α >= r from the lateral surface, R(z) the radius at its centre's height, ρ its
distance from the axis and α the half-angle (tan α = (radius_hi − radius_lo)/(hi − lo)).
Candidates are drawn uniformly in the bounding box shrunk by their radius (the box's own draw)
and those not inside are rejected: uniform in the admissible region of each radius.
Units: m.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .values import BadValue, choice, number, vector

REGIONS = ("box", "cylinder", "cone")
#: each region's own fields (the others must be left unset)
FIELDS = {"box": ("region_lo", "region_hi"), "cylinder": ("center", "radius", "lo", "hi"),
          "cone": ("center", "radius_lo", "radius_hi", "lo", "hi")}


@dataclass(frozen=True)
class Region:
    """A checked region: its ``kind``, bounding box ``lo``, ``hi`` (m, arrays of 3) and for a
    cylinder or cone the axis' ``center`` (x, y) and radii ``r_lo`` at z = lo[2], ``r_hi`` at
    z = hi[2] (equal for a cylinder)."""

    kind: str
    lo: np.ndarray
    hi: np.ndarray
    center: tuple = (0.0, 0.0)
    r_lo: float = 0.0
    r_hi: float = 0.0

    @property
    def volume(self) -> float:
        """m³."""
        if self.kind == "box":
            return float(np.prod(self.hi - self.lo))
        h = float(self.hi[2] - self.lo[2])
        return math.pi * h / 3.0 * (self.r_lo**2 + self.r_lo * self.r_hi + self.r_hi**2)

    def _room(self, z, r):
        """How far (m) a sphere of radius ``r`` centred at height ``z`` may lie from the axis."""
        h = float(self.hi[2] - self.lo[2])
        slope = (self.r_hi - self.r_lo) / h
        return self.r_lo + slope * (z - self.lo[2]) - r * math.sqrt(1.0 + slope * slope)

    def fits(self, r: float) -> bool:
        """Does a sphere of radius ``r`` (m) fit somewhere inside?"""
        if not bool(np.all(self.hi - self.lo >= 2.0 * r)):
            return False
        if self.kind == "box":
            return True
        return max(self._room(self.lo[2] + r, r), self._room(self.hi[2] - r, r)) >= 0.0

    def sample(self, rng, r: np.ndarray) -> np.ndarray:
        """Centres (m, (n, 3)) uniform in the bounding box shrunk by each radius ``r``."""
        u = rng.random((len(r), 3))
        lo = self.lo + r[:, None]
        return lo + (self.hi - r[:, None] - lo) * u

    def inside(self, pos: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Which spheres (centres ``pos``, radii ``r``) from :meth:`sample` lie inside."""
        if self.kind == "box":
            return np.ones(len(r), bool)
        rho = np.hypot(pos[:, 0] - self.center[0], pos[:, 1] - self.center[1])
        return rho <= self._room(pos[:, 2], r)


def check_region(prefix: str, values: dict) -> dict:
    """The region fields of ``values`` (``region`` and its kind's fields) checked and
    normalised, each error naming ``<prefix>.<field>`` (raised as :class:`BadValue`)."""
    kind = choice(f"{prefix}.region", values.get("region", "box"), REGIONS)
    out = {"region": kind}
    for other in sorted({f for fs in FIELDS.values() for f in fs} - set(FIELDS[kind])):
        if values.get(other) is not None:
            owners = [k for k, fs in FIELDS.items() if other in fs]
            raise BadValue(f"{prefix}.{other}", values[other], f"not a field of a {kind} "
                           f"region (only of a {' or '.join(owners)})")
    for name in FIELDS[kind]:
        if values.get(name) is None:
            raise BadValue(f"{prefix}.{name}", None, f"required by a {kind} region")
    if kind == "box":
        lo = vector(f"{prefix}.region_lo", values["region_lo"])
        hi = vector(f"{prefix}.region_hi", values["region_hi"])
        return dict(out, region_lo=lo, region_hi=hi)
    out["center"] = vector(f"{prefix}.center", values["center"], 2)
    out["lo"] = number(f"{prefix}.lo", values["lo"])
    out["hi"] = number(f"{prefix}.hi", values["hi"])
    if not out["hi"] > out["lo"]:
        raise BadValue(f"{prefix}.hi", values["hi"], f"must exceed {prefix}.lo = "
                       f"{values['lo']!r}")
    if kind == "cylinder":
        out["radius"] = number(f"{prefix}.radius", values["radius"], above=0)
        return out
    out["radius_lo"] = number(f"{prefix}.radius_lo", values["radius_lo"], lo=0)
    out["radius_hi"] = number(f"{prefix}.radius_hi", values["radius_hi"], lo=0)
    if out["radius_lo"] == out["radius_hi"] == 0.0:
        raise BadValue(f"{prefix}.radius_hi", values["radius_hi"], "radius_lo and radius_hi "
                       "are both 0 (a cone of no volume)")
    return out


def region_of(values: dict) -> Region:
    """The :class:`Region` of checked fields (:func:`check_region`'s, or a table holding
    them; without ``region`` a box)."""
    kind = values.get("region") or "box"
    if kind == "box":
        return Region("box", np.array(values["region_lo"], float),
                      np.array(values["region_hi"], float))
    r_lo, r_hi = ((values["radius"],) * 2 if kind == "cylinder"
                  else (values["radius_lo"], values["radius_hi"]))
    wide = max(r_lo, r_hi)
    cx, cy = (float(c) for c in values["center"])
    return Region(kind, np.array([cx - wide, cy - wide, values["lo"]], float),
                  np.array([cx + wide, cy + wide, values["hi"]], float), (cx, cy),
                  float(r_lo), float(r_hi))
