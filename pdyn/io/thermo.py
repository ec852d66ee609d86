"""Thermo output, as LAMMPS' ``thermo``: every N steps a line on stdout (rank 0) and a row of
``thermo.csv`` in the run folder.

Columns: ``step``, ``time`` (s), ``kinetic_energy`` (J, Σ ½ m v² of the owned spheres),
``rotational_energy`` (J, Σ ½ I ω², I = 2/5 m r²; 0 without rotation), ``contacts`` (touching
contacts: sphere pairs once, sphere–wall contacts), ``coordination`` (mean sphere–sphere
contacts per sphere, 2 pairs / spheres), ``max_overlap`` (largest overlap over the radius of
the smaller sphere, walls included), then the cell's stress tensor, kinetic + contact
(``stress_xx``, ``stress_yy``, ``stress_zz``, ``stress_xy``, ``stress_xz``, ``stress_yz``, Pa,
tension positive; ``pressure`` −tr σ / 3 and ``deviator`` √(3/2 s:s), Pa:
``pdyn.fields.virial``, over the box's volume); stdout adds ``Press`` and ``steps/s`` since
the last line. A run of several materials adds ``lacey`` (Lacey's mixing index of the first
material against the others) and ``spheres_<name>`` per material (``pdyn.analysis.mixing``);
a staged run adds ``stage`` (the stage running after the step, from 0: ``pdyn.stages``).
The CSV holds every float as its ``repr`` (reads back to the same bits) and the
same bytes on any rank count: counts are integers, the overlap a maximum, and each energy (and
each sum of the stress) is the correctly rounded sum of all spheres' terms — every rank reduces
its terms to an exact expansion (Shewchuk's partials, as ``math.fsum``: ``pdyn.fields.exact``),
rank 0 sums all expansions with ``math.fsum`` — whatever the order. A restart keeps the rows
up to its step (the file as it was goes to ``superseded/``, as ``wall_forces.csv`` does).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from .._jit import JIT
from ..fields.exact import MAX_PARTIALS, exact_total
from ..fields.once import each_once, fixed_ids
from ..fields.exact import grow as _grow
from ..fields.virial import COLUMNS as STRESS_COLUMNS
from ..fields.virial import cell_parts, cell_stress, stress_columns
from ..analysis.mixing import CELL_DIAMETERS, cell_counts, lacey, merged
from .wallforces import append_text, start_series
from .wallforces import read_series as read_thermo
from .writer import Writer

FILE_NAME = "thermo.csv"
COLUMNS = ("step", "time", "kinetic_energy", "rotational_energy", "contacts", "coordination",
           "max_overlap") + STRESS_COLUMNS
#: the stdout columns: name and width (LAMMPS-style right-aligned table)
SCREEN = (("Step", 10), ("Time", 13), ("KinEng", 13), ("RotEng", 13), ("Contacts", 9),
          ("Coord", 8), ("MaxOverlap", 11), ("Press", 11), ("Steps/s", 9))
@njit(**JIT)
def energy_partials(h, vel, mass, omega, radius, spin):
    """Exact expansions of Σ ½ m v² and (``spin``) Σ ⅕ m r² ω² over the spheres ``h``."""
    kin = np.zeros(MAX_PARTIALS)
    rot = np.zeros(MAX_PARTIALS)
    nk = 0
    nr = 0
    for i in h:
        v2 = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] + vel[i, 2] * vel[i, 2]
        nk = _grow(kin, nk, 0.5 * mass[i] * v2)
        if spin:
            w2 = omega[i, 0] * omega[i, 0] + omega[i, 1] * omega[i, 1] + omega[i, 2] * omega[i, 2]
            nr = _grow(rot, nr, 0.2 * mass[i] * radius[i] * radius[i] * w2)
    return kin[:nk].copy(), rot[:nr].copy()


def thermo_row(view, fixed: np.ndarray | None = None) -> tuple | None:
    """The thermo columns (``COLUMNS``) of the run at ``view`` (an ``OutputView`` with
    ``thermo`` and ``sphere_contacts``) on rank 0, None on the others; ``fixed``: the fixed
    spheres' ids (``pdyn.fields.once.fixed_ids``, found when None). Collective."""
    store, comm = view.store, view.comm
    if fixed is None:
        fixed = fixed_ids(comm, store)
    h = store.owned
    spin = "omega" in store.fields
    omega = store.omega if spin else np.zeros((1, 3))
    kin, rot = energy_partials(h, store.vel, store.mass, omega, store.radius, spin)
    parts = comm.gather((kin, rot, int(h.size)) + tuple(view.contacts)
                        + (cell_parts(store, each_once(view.sphere_contacts, fixed), view.box),),
                        root=0)
    if comm.rank != 0:
        return None
    ke, re = (exact_total([p[k] for p in parts]) for k in (0, 1))
    n, once, ends = (sum(p[k] for p in parts) for k in (2, 3, 4))
    volume = float(np.prod(np.asarray(view.box.hi, float) - np.asarray(view.box.lo, float)))
    stress = stress_columns(*cell_stress([p[6] for p in parts], volume))
    return (int(view.step), float(view.time), ke, re, once, ends / n if n else 0.0,
            max(p[5] for p in parts)) + stress


def mixing_columns(view, n_materials: int) -> tuple | None:
    """(Lacey's index, each of ``n_materials`` materials' sphere count) of the run at
    ``view`` on rank 0, None on the others (``pdyn.analysis.mixing``: sample cells of
    ``CELL_DIAMETERS`` largest diameters). Collective."""
    store, comm = view.store, view.comm
    h = store.owned
    r_max = comm.allreduce_max(float(store.radius[h].max()) if h.size else 0.0)
    edge = CELL_DIAMETERS * 2.0 * r_max if r_max > 0.0 else 1.0
    parts = comm.gather(cell_counts(store.pos[h], store.material[h], view.box.lo, edge),
                        root=0)
    if comm.rank != 0:
        return None
    counts = merged(parts)
    per = [0] * n_materials
    for key, c in counts.items():
        per[key[3]] += c
    return (lacey(counts), *per)


def mixing_header(materials: tuple) -> list[str]:
    """The mixing columns of a run of the named ``materials`` (none for fewer than two):
    ``lacey``, then ``spheres_<name>`` per material (``pdyn.analysis.mixing``)."""
    if len(materials) < 2:
        return []
    return ["lacey"] + [f"spheres_{name}" for name in materials]


def _say(line: str) -> None:
    """A line on stdout that does not break a progress bar (tqdm redraws it below)."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        print(line, flush=True)
        return
    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


class ThermoWriter(Writer):
    """Every ``every`` steps: a thermo line on stdout (a header line first) and a row of
    ``folder/thermo.csv`` (rank 0)."""

    name = "thermo"
    # the contact statistics and every row's contacts of the step
    needs = frozenset({"thermo", "sphere_contacts"})

    def __init__(self, folder: str | Path, every: int, say=_say, materials: tuple = ()):
        self.path = Path(folder) / FILE_NAME
        self.every = int(every)
        self.say = say
        #: the run's material names: with two or more, the mixing columns
        #: (pdyn.analysis.mixing)
        self.materials = tuple(materials) if len(materials) > 1 else ()
        self.written: list[Path] = []  # the file, once started
        self._last = (None, time.perf_counter())  # (step, time) of the last line
        self._fixed = None  # the fixed spheres' ids (pdyn.fields.once), found at the first row

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0

    def __call__(self, view) -> None:
        if not self.written:
            start_series(self.path, list(COLUMNS) + mixing_header(self.materials)
                         + ["stage"] * (view.stage is not None),
                         view.first_step, view)
            self.written = [self.path]
            if view.comm.rank == 0:
                self.say(" ".join(f"{name:>{w}}" for name, w in SCREEN))
            self._last = (view.first_step, self._last[1])
        if self._fixed is None:
            self._fixed = fixed_ids(view.comm, view.store)
        row = thermo_row(view, self._fixed)
        mixing = mixing_columns(view, len(self.materials)) if self.materials else ()
        if row is None:
            return
        stage = () if view.stage is None else (view.stage,)
        append_text(self.path, ",".join(repr(x) for x in row + mixing + stage) + "\n")
        now = time.perf_counter()
        rate = (row[0] - self._last[0]) / max(now - self._last[1], 1e-12)
        self._last = (row[0], now)
        cells = (f"{row[0]:>10d}", f"{row[1]:>13.6g}", f"{row[2]:>13.6g}", f"{row[3]:>13.6g}",
                 f"{row[4]:>9d}", f"{row[5]:>8.4g}", f"{row[6]:>11.4g}",
                 f"{row[COLUMNS.index('pressure')]:>11.4g}", f"{rate:>9.1f}")
        self.say(" ".join(cells))


__all__ = ["FILE_NAME", "ThermoWriter", "read_thermo", "thermo_row"]
