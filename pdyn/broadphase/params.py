"""The broad-phase structures' parameters, each declared once here with its kind, range, default
and meaning. A structure lists the ones it takes (``params``, name -> :class:`Param`); its
constructor, the config's ``broadphase_params`` check and ``pdyn run --help`` read that table."""

from __future__ import annotations

from dataclasses import dataclass

from .. import values
from ._kernels import MAX_CANDIDATES, BroadPhaseError


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` "number", "integer" or "choice"; ``default`` (None: chosen
    from the particles, and None may be given); bounds ``above`` (exclusive), ``lo``, ``hi``;
    ``choices``; ``power_of_two`` (integers); ``help``: what it means (units)."""

    kind: str
    default: object
    help: str
    above: float | None = None
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    power_of_two: bool = False

    def check(self, name: str, value):
        """``value`` checked (:class:`pdyn.values.BadValue` naming ``name`` if not)."""
        if value is None and self.default is None:
            return None
        if self.kind == "number":
            return values.number(name, value, above=self.above, lo=self.lo, hi=self.hi)
        if self.kind == "choice":
            return values.choice(name, value, self.choices)
        v = values.integer(name, value, lo=self.lo, hi=self.hi)
        if self.power_of_two and v & (v - 1):
            raise values.BadValue(name, value, f"must be a power of two >= {self.lo}")
        return v

    def describe(self) -> str:
        """One line: kind, range, default, meaning."""
        if self.kind == "choice":
            kind = " | ".join(self.choices)
        else:
            kind = "power of two" if self.power_of_two else self.kind
            low = (f"({self.above:g}" if self.above is not None
                   else f"[{self.lo:g}" if self.lo is not None else None)
            if low and self.hi is not None:
                kind += f" in {low}, {self.hi:g}]"
            elif low:
                kind += f" {'>' if low[0] == '(' else '>='} {low[1:]}"
        default = "automatic" if self.default is None else repr(self.default)
        return f"{kind} (default {default}): {self.help}"


CELL_SIZE = Param("number", None, "cell edge (m); default the largest diameter, a smaller one "
                  "is refused", above=0)
MAX_CELLS = Param("integer", None, "bound on the dense cell table; cells grow to respect it",
                  lo=1)
MAX_CANDIDATES_PARAM = Param("integer", MAX_CANDIDATES, "a query that would hand out more "
                             "candidate pairs raises instead of exhausting memory (huge cells "
                             "on a sparse scene)", lo=1)
TABLE_SIZE = Param("integer", None, "hash table entries; default a prime above a multiple of "
                   "the particle count, re-sized as it grows; a given size is kept, however "
                   "small (collisions cost time, never exactness)", lo=1)
UPDATE = Param("choice", "incremental", "incremental: move only what left its cell or leaf; "
               "rebuild: clear and reinsert at every update", choices=("incremental", "rebuild"))


def checked(cls, given: dict) -> dict:
    """The parameters of the structure class ``cls`` (its ``params`` table): ``given``
    checked, the defaults filled in, then ``cls.check_relations``; raises
    :class:`pdyn.values.BadValue` naming the parameter and its value."""
    table = cls.params
    for key, value in given.items():
        if key not in table:
            known = ", ".join(sorted(table)) or "none"
            raise values.BadValue(key, value, f"unknown parameter of {cls.name} (known: {known})")
    out = {k: p.check(k, given[k]) if k in given else p.default for k, p in table.items()}
    relations = getattr(cls, "check_relations", None)
    if relations is not None:
        relations(out)
    return out


def settings(cls, given: dict) -> dict:
    """:func:`checked`, a failure as :class:`BroadPhaseError` (the constructors)."""
    try:
        return checked(cls, given)
    except values.BadValue as exc:
        raise BroadPhaseError(str(exc)) from None


def describe(registry: dict) -> str:
    """Every structure of ``registry`` with its parameters, one per line (``--help``)."""
    lines = []
    for name, cls in registry.items():
        lines.append(f"  {name}" + ("" if cls.params else " (no parameters)"))
        lines += [f"    {k}: {p.describe()}" for k, p in cls.params.items()]
    return "\n".join(lines)
