"""Spheres read from a file as a scene (``[particles] file``): a CSV table or an HDF5 file.

- CSV (``.csv``, UTF-8): a header line ``x,y,z,radius`` or ``x,y,z,radius,vx,vy,vz`` (any
  order), optionally with a ``material`` column (each sphere's material by its
  ``[[materials]]`` name), then one sphere a line; blank lines are skipped.
- HDF5 (``.h5``, ``.hdf5``): one-dimensional datasets ``x``, ``y``, ``z``, ``radius`` and
  optionally ``vx``, ``vy``, ``vz`` and ``material`` (strings: names) of one length; or a pdyn
  snapshot (``format = "pdyn-snapshot"``, ``pdyn.io.snapshot``): its ``particles/position``,
  ``radius``, ``velocity`` and ``material`` (indices into ``[[materials]]``; all 0: none) in
  the order of ``particles/id``.

Positions in m, radii in m, velocities in m/s. Every value must be finite, every radius
positive and every material name not empty; the first that is not is named in a one-line
:class:`pdyn.values.BadValue` (``particles.file = '<name>': sphere <k> ...``, the file's name;
k counts from 0, the sphere's id). Whether the spheres lie inside the box and clear of the
walls is checked with every initial state (``pdyn.checks.initial_state``); whether their
materials are the run's by the config (``SimulationConfig.material_indices``).
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from .values import BadValue

COLUMNS = ("x", "y", "z", "radius")
VELOCITY = ("vx", "vy", "vz")
MATERIAL = "material"
EXPECTED = "expected x, y, z, radius and optionally vx, vy, vz, material"


def read_spheres(path: str) -> dict:
    """``positions`` (N, 3), ``radii`` (N,), ``velocities`` (N, 3; zero when the file has
    none) and ``material`` (a tuple of N names, a snapshot's (N,) indices, or None when the
    file has none) from the CSV or HDF5 file at ``path``, checked (module docstring)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        columns = _csv(path)
    elif suffix in (".h5", ".hdf5"):
        columns = _hdf5(path)
    else:
        raise _bad(path, "expected a .csv, .h5 or .hdf5 file")
    return _checked(path, columns)


def _bad(path: str, why: str) -> BadValue:
    """The error of the file at ``path``, named by its name (the config names its folder)."""
    return BadValue("particles.file", Path(path).name, why)


def _columns(path: str, names) -> None:
    """The column names: the four needed, the velocity's three all or none, nothing else."""
    names = list(names)
    for c in COLUMNS:
        if c not in names:
            raise _bad(path, f"no column {c!r} ({EXPECTED})")
    other = sorted(set(names) - set(COLUMNS) - set(VELOCITY) - {MATERIAL})
    if other:
        raise _bad(path, f"unknown column {other[0]!r} ({EXPECTED})")
    some = [c for c in VELOCITY if c in names]
    if some and len(some) < 3:
        missing = ", ".join(c for c in VELOCITY if c not in some)
        raise _bad(path, f"velocity columns {', '.join(some)} without {missing}")


def _csv(path: str) -> dict:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _bad(path, f"cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise _bad(path, "not a UTF-8 text file") from None
    lines = [(k + 1, ln) for k, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise _bad(path, "empty (expected a header x,y,z,radius)")
    head = [h.strip() for h in lines[0][1].split(",")]
    _columns(path, head)
    if len(set(head)) != len(head):
        raise _bad(path, f"a column named twice in the header {head}")
    rows = np.empty((len(lines) - 1, len(head)))
    names = []
    for i, (line, text_row) in enumerate(lines[1:]):
        cells = text_row.split(",")
        if len(cells) != len(head):
            raise _bad(path, f"line {line}: {len(cells)} values for the {len(head)} columns "
                       "of the header")
        for j, cell in enumerate(cells):
            if head[j] == MATERIAL:
                names.append(cell.strip())
                continue
            try:
                rows[i, j] = float(cell)
            except ValueError:
                raise _bad(path, f"line {line}: {head[j]} = {cell.strip()[:20]!r} is not a "
                           "number") from None
    out = {name: rows[:, j] for j, name in enumerate(head) if name != MATERIAL}
    if MATERIAL in head:
        out[MATERIAL] = tuple(names)
    return out


def _hdf5(path: str) -> dict:
    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") in ("pdyn-snapshot", b"pdyn-snapshot"):
                return _snapshot(path, f)
            _columns(path, [k for k in f.keys()])
            out = {}
            for name in f.keys():
                data = f[name]
                if not isinstance(data, h5py.Dataset) or data.ndim != 1:
                    raise _bad(path, f"{name}: expected a one-dimensional dataset")
                if name == MATERIAL:
                    if h5py.check_string_dtype(data.dtype) is None:
                        raise _bad(path, f"material: a dataset of {data.dtype}, expected "
                                   "strings (material names)")
                    out[name] = tuple(str(m) for m in data.asstr()[()])
                else:
                    out[name] = np.asarray(data[()], float)
    except OSError as exc:
        raise _bad(path, f"cannot read as HDF5 ({exc})") from None
    n = {len(v) for v in out.values()}
    if len(n) > 1:
        raise _bad(path, f"datasets of different lengths {sorted(n)}")
    return out


def _snapshot(path: str, f) -> dict:
    """A pdyn snapshot's spheres in the order of their ids."""
    try:
        ids = np.asarray(f["particles/id"][()])
        pos = np.asarray(f["particles/position"][()], float).reshape(-1, 3)
        rad = np.asarray(f["particles/radius"][()], float)
        vel = np.asarray(f["particles/velocity"][()], float).reshape(-1, 3)
    except KeyError as exc:
        raise _bad(path, f"a pdyn snapshot without {exc}") from None
    if not len(ids) == len(pos) == len(rad) == len(vel):
        raise _bad(path, "a pdyn snapshot whose particle datasets differ in length")
    o = np.argsort(ids, kind="stable")
    out = dict(zip(COLUMNS + VELOCITY, [*pos[o].T, rad[o], *vel[o].T]))
    if "particles/material" in f:  # indices into the run's [[materials]]; all 0: the first
        material = np.asarray(f["particles/material"][()])
        if len(material) != len(ids):
            raise _bad(path, "a pdyn snapshot whose particle datasets differ in length")
        if material.any():
            out[MATERIAL] = material[o].astype(np.int64)
    return out


def _checked(path: str, columns: dict) -> dict:
    """Finite values and positive radii, the first bad one named by its sphere."""
    for name in COLUMNS + VELOCITY:
        v = columns.get(name)
        if v is None:
            continue
        bad = ~np.isfinite(v) if name != "radius" else ~(np.isfinite(v) & (v > 0))
        if bad.any():
            k = int(np.argmax(bad))
            why = "must be finite and > 0" if name == "radius" else "must be finite"
            raise _bad(path, f"sphere {k}: {name} = {float(v[k])!r} {why}")
    material = columns.get(MATERIAL)
    if isinstance(material, tuple) and not all(material):
        raise _bad(path, f"sphere {material.index('')}: material = '' is empty (expected a "
                   "material name)")
    pos = np.column_stack([columns[c] for c in COLUMNS[:3]])
    vel = (np.column_stack([columns[c] for c in VELOCITY]) if "vx" in columns
           else np.zeros_like(pos))
    return {"positions": pos, "radii": np.asarray(columns["radius"], float), "velocities": vel,
            "material": material}
