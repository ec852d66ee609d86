"""Several materials: the contact values of each pair of materials and the table of sub-model
records the contact loop reads by the two sides' material indices.

**Mixing** (:func:`mixed`; a pair with an ``[[interactions]]`` table takes its values from it
instead, field by field). Two sides of one material keep that material's values, bit for bit.
Otherwise, from each side's Young's modulus E and Poisson ratio ν, the effective moduli of
Hertz–Mindlin ([ChungOoi2011] §2; LAMMPS ``pair granular``'s mixing of E, [LAMMPSgranular]):

    1/E* = (1 − ν₁²)/E₁ + (1 − ν₂²)/E₂,    1/G* = 2 (2 − ν₁)(1 + ν₁)/E₁ + 2 (2 − ν₂)(1 + ν₂)/E₂,

and the pair is given the *equivalent material* (E, ν) of one material that has the same E*
and G* (ν = 2 (1 − r)/(2 − r), r = 4 G*/E*; E = 2 E* (1 − ν²)), so the records are built by
the constructors a single material uses (``pdyn.dynamics.laws.law_parameters``,
``pdyn.dynamics.friction.tangential_model``): Hertz' E* and Mindlin's k_t/k_n = 4 G*/E* come
out as mixed. Every other value — restitution e, friction μ, rolling friction μ_r, the linear
law's stiffness k and stiffness scale E — is the geometric mean √(x₁ x₂) of the two sides', as
LAMMPS ``pair granular`` mixes its coefficients other than the modulus ([LAMMPSgranular],
"Mixing"); the linear law's ν (which it does not use) the mean. The damping ratio follows
from the pair's e (``damping_ratio``), so a pair rebounds at its own e.

**The table** (:func:`pair_table`): one float64 array of shape (M, M, W) for M materials, row
[a, b] the pair's records flattened field by field — the normal law's record (its law, then its
damping: coefficient and kind), then the tangential record's three (μ, k_t/k_n, how the spring
turns), then the rolling record's one (μ_r) —, symmetric. The loop reads a pair's records with
:func:`pair_normal`, :func:`pair_tangential` and :func:`pair_rolling` from the run's records
(the *templates*, whose types numba compiles for) and the two material indices (a wall's is its
particle's, ``pdyn.particles.FIELDS`` ``material``); given no table (None: one material) they
return the templates themselves and the loop reads no material (pruned at compile time). A pair
without friction in a run that has it holds μ = 0 (no tangential force), without rolling
friction μ_r = 0. Inside numba a record is rebuilt from its row by code generated once per
record type (:func:`_builder`), so any record of float fields — the damping's kind and the
tangential history too — is read the same way.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from .._jit import JIT
from .cohesion import PARAMETER

#: the generated builders' options: not cached themselves (code made at run time has no file
#: for numba's cache), compiled into the cached kernels that call them
_BUILT = {k: v for k, v in JIT.items() if k != "cache"}


def _geometric(x: float, y: float) -> float:
    """√(x y), x itself when y == x (and 0 when either is 0)."""
    return float(x) if x == y else math.sqrt(float(x) * float(y))


def _equivalent(e1: float, nu1: float, e2: float, nu2: float) -> tuple[float, float]:
    """The (E, ν) of one material whose pair of two bodies has the E* and G* of bodies of
    (E₁, ν₁) and (E₂, ν₂) (module docstring)."""
    if e1 == 0.0 or e2 == 0.0:
        return 0.0, 0.5 * (nu1 + nu2)
    e_star = 1.0 / ((1.0 - nu1 * nu1) / e1 + (1.0 - nu2 * nu2) / e2)
    g_star = 1.0 / (2.0 * (2.0 - nu1) * (1.0 + nu1) / e1 + 2.0 * (2.0 - nu2) * (1.0 + nu2) / e2)
    r = 4.0 * g_star / e_star
    nu = 2.0 * (1.0 - r) / (2.0 - r)
    return 2.0 * e_star * (1.0 - nu * nu), nu


def mixed(law: str, a: dict, b: dict) -> dict:
    """The contact values of a pair of materials with values ``a`` and ``b`` (dicts of
    ``youngs_modulus``, ``poisson_ratio``, ``restitution``, ``friction``,
    ``rolling_friction``, ``stiffness`` (None: E·R_eff)) under the normal ``law``: ``a``'s
    own where the two are equal, else the mixing rules of the module docstring."""
    if a == b:
        return dict(a)
    out = {k: _geometric(a[k], b[k]) for k in ("restitution", "friction", "rolling_friction")}
    out.update(_cohesion(a, b))
    k1, k2 = a["stiffness"], b["stiffness"]
    out["stiffness"] = None if k1 is None or k2 is None else _geometric(k1, k2)
    if law == "hertz":
        out["youngs_modulus"], out["poisson_ratio"] = _equivalent(
            a["youngs_modulus"], a["poisson_ratio"], b["youngs_modulus"], b["poisson_ratio"])
    else:
        out["youngs_modulus"] = _geometric(a["youngs_modulus"], b["youngs_modulus"])
        out["poisson_ratio"] = (a["poisson_ratio"] if a["poisson_ratio"] == b["poisson_ratio"]
                                else 0.5 * (a["poisson_ratio"] + b["poisson_ratio"]))
    return out


def _cohesion(a: dict, b: dict) -> dict:
    """The cohesion values of a pair of materials (``pdyn.dynamics.cohesion``, "Mixing"): the
    model either side names, each of its parameters the geometric mean of the two sides' (a side
    without that model counts 0)."""
    names = {a.get("cohesion", "none"), b.get("cohesion", "none")} - {"none"}
    if not names:
        return {}
    name = names.pop()
    out = {"cohesion": name}
    for field in PARAMETER[name]:
        x, y = ((float(v.get(field) or 0.0) if v.get("cohesion") == name else 0.0)
                for v in (a, b))
        out[field] = _geometric(x, y)
    return out


def pair_values(law: str, materials: list, interactions: dict) -> list:
    """The values of every pair of ``materials`` (a list of value dicts, :func:`mixed`) as a
    list of lists [a][b]; ``interactions``: (a, b) → the values a pair sets itself (either
    order)."""
    n = len(materials)
    out = [[None] * n for _ in range(n)]
    for a in range(n):
        for b in range(a, n):
            v = mixed(law, materials[a], materials[b])
            v.update(interactions.get((a, b), interactions.get((b, a), {})))
            out[a][b] = out[b][a] = v
    return out


def flat(record) -> list:
    """A record's float fields in order, nested records depth first (None: none)."""
    if record is None:
        return []
    if isinstance(record, tuple):
        return [x for field in record for x in flat(field)]
    return [float(record)]


def pair_table(normal: list, tangential: list, rolling: list,
               cohesion: list | None = None) -> np.ndarray:
    """The (M, M, W) table of M materials' pairs from their records, each a list of lists
    [a][b]: the normal records, the tangential records (all None: no tangential columns),
    the rolling records (all None: none) and the cohesion records (None: none), last."""
    n = len(normal)
    rows = [[flat(normal[a][b]) + flat(tangential[a][b]) + flat(rolling[a][b])
             + flat(None if cohesion is None else cohesion[a][b])
             for b in range(n)] for a in range(n)]
    return np.ascontiguousarray(rows, dtype=np.float64).reshape(n, n, -1)


# ------------------------------------------------------------------ reading the table
def _rebuilt(template, row, col):
    """A record of ``template``'s type from ``row`` from column ``col`` on, and the next
    column (plain Python: what the generated code does inside numba)."""
    if isinstance(template, tuple):
        values = []
        for field in template:
            v, col = _rebuilt(field, row, col)
            values.append(v)
        return type(template)(*values), col
    return float(row[col]), col + 1


def _width(record) -> int:
    return len(flat(record))


def pair_normal(law, table, a, b):
    """The normal record (a ``pdyn.dynamics.laws.Normal``) of the pair of materials ``a``,
    ``b``: from ``table`` (:func:`pair_table`), or ``law`` itself when ``table`` is None."""
    return law if table is None else _rebuilt(law, table[a, b], 0)[0]


def pair_tangential(law, tangential, table, a, b):
    """The tangential record of the pair (after the normal record's columns), or
    ``tangential`` itself when ``table`` is None."""
    if table is None or tangential is None:
        return tangential
    return _rebuilt(tangential, table[a, b], _width(law))[0]


def pair_rolling(law, tangential, rolling, table, a, b):
    """The rolling record of the pair (after the normal and tangential records' columns), or
    ``rolling`` itself when ``table`` is None."""
    if table is None or rolling is None:
        return rolling
    return _rebuilt(rolling, table[a, b], _width(law) + _width(tangential))[0]


def pair_cohesion(cohesion, table, a, b):
    """The cohesion record of the pair (the table's last columns), or ``cohesion`` itself
    when ``table`` is None."""
    if table is None or cohesion is None:
        return cohesion
    row = table[a, b]
    return _rebuilt(cohesion, row, row.shape[0] - _width(cohesion))[0]


def _leaves(t) -> int:
    """Float fields of a numba record type (nested records counted through; None: 0)."""
    if isinstance(t, types.NoneType):
        return 0
    if isinstance(t, types.BaseTuple):
        return sum(_leaves(x) for x in t.types)
    return 1


def _expression(t, col: int, classes: dict, base: str = "") -> tuple[str, int]:
    """Source of an expression building a record of numba type ``t`` from ``table[a, b]``
    from column ``base`` + ``col`` on, and the next column; the record classes it calls go into
    ``classes``."""
    if isinstance(t, types.BaseNamedTuple):
        name = f"_record{len(classes)}"
        classes[name] = t.instance_class
        parts = []
        for field in t.types:
            text, col = _expression(field, col, classes, base)
            parts.append(text)
        return f"{name}({', '.join(parts)})", col
    return f"table[a, b, {base}{col}]", col + 1


def _builder(args: str, template, first: int, base: str = ""):
    """A function of ``args`` (the last three: table, a, b) that builds the record of numba
    type ``template`` from the table's row [a, b] from column ``first`` on (after ``base``, an
    expression of ``table``), reading each value by its three indices (no view of the row
    is made)."""
    classes: dict = {}
    expr = _expression(template, first, classes, base)[0]
    source = f"def impl({args}):\n    return {expr}\n"
    exec(compile(source, f"<pair record {template}>", "exec"), classes)  # noqa: S102
    return classes["impl"]


def _no_table(table) -> bool:
    return table is None or isinstance(table, types.NoneType)


@overload(pair_normal, jit_options=_BUILT)
def _pair_normal(law, table, a, b):
    """Inside numba: the record rebuilt by code generated for its type (or ``law``)."""
    if _no_table(table):
        return lambda law, table, a, b: law
    return _builder("law, table, a, b", law, 0)


@overload(pair_tangential, jit_options=_BUILT)
def _pair_tangential(law, tangential, table, a, b):
    """Inside numba: as :func:`_pair_normal`, after the normal record's columns."""
    if _no_table(table) or isinstance(tangential, types.NoneType):
        return lambda law, tangential, table, a, b: tangential
    return _builder("law, tangential, table, a, b", tangential, _leaves(law))


@overload(pair_rolling, jit_options=_BUILT)
def _pair_rolling(law, tangential, rolling, table, a, b):
    """Inside numba: as :func:`_pair_normal`, after the normal and tangential columns."""
    if _no_table(table) or isinstance(rolling, types.NoneType):
        return lambda law, tangential, rolling, table, a, b: rolling
    return _builder("law, tangential, rolling, table, a, b", rolling,
                    _leaves(law) + _leaves(tangential))


@overload(pair_cohesion, jit_options=_BUILT)
def _pair_cohesion(cohesion, table, a, b):
    """Inside numba: as :func:`_pair_normal`, from the row's last columns."""
    if _no_table(table) or isinstance(cohesion, types.NoneType):
        return lambda cohesion, table, a, b: cohesion
    return _builder("cohesion, table, a, b", cohesion, 0,
                    f"table.shape[2] - {_leaves(cohesion)} + ")
