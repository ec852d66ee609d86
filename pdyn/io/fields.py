"""Coarse-grained fields on a grid, written every window (``[[fields]]``; the fields and their
equations: ``pdyn.fields.coarse``).

Every ``every`` steps a sample (exact sums over the ranks, the same bits on any rank count);
every ``window`` samples their mean is written by rank 0 to

    <folder>/fields/<name>_<step:08d>.h5    the fields of the window ending at ``step``
    <folder>/<name>.xmf                     the XDMF 2 index ParaView opens (cell data),
                                            rewritten at most every INDEX_SECONDS
    <folder>/fields/<name>_<step:08d>.csv   with one resolved axis: the profile as a table

An HDF5 file holds ``x``, ``y``, ``z`` (the cell centres, m) and each field as
(nz, ny, nx[, components]) — z slowest, as VTK and XDMF order a grid: ``density[k, j, i]``
is the cell at (x_i, y_j, z_k) —: ``volume_fraction``, ``density`` (kg/m³), ``velocity`` (3,
m/s), ``kinetic_stress``, ``contact_stress``, ``stress`` (9: xx, xy, xz, yx, …, Pa, tension
positive); attributes ``format = "pdyn-fields"``, ``version``, ``step``, ``time`` (s),
``samples`` (in the window), ``every``, ``kernel``, ``width`` (m), ``lo``, ``hi``, ``cells``.
Windows end at multiples of every · window steps, so a restart at such a step continues the
files bit for bit; one elsewhere writes its first window from the samples after it
(``samples`` says how many); a run that ends inside a window does not write it."""

from __future__ import annotations

import time
from pathlib import Path

import h5py
import numpy as np

from ..fields.coarse import FIELDS, fields_of, sample
from ..fields.grid import Grid
from ..heap import Scratch
from .hdf5 import OutputFileError, agree, attempt, make_folder, put, write_atomic, \
    write_bytes_atomic
from .runid import claim_folder
from .writer import Writer

FORMAT = "pdyn-fields"
VERSION = 1
#: component names of the vector and tensor fields
VECTOR = ("x", "y", "z")
TENSOR = tuple(a + b for a in "xyz" for b in "xyz")
#: the index lists every window written at most this many seconds (wall clock) ago: rewritten
#: at the first window, then at a window this long after the last rewrite, and at the end of
#: a run or a stop (:meth:`FieldsWriter.finish`) — not at every window: replacing a file by a
#: rename makes ext4 write it out (about 0.5 ms), and the index grows with the windows
INDEX_SECONDS = 10.0


class FieldsWriter(Writer):
    """One ``[[fields]]`` table (``pdyn.config.FieldsConfig``): samples every ``every``
    steps, writes every ``window`` samples into ``folder``."""

    name = "fields"
    needs = frozenset({"contacts_once"})  # the step's contacts, each once over the ranks

    def __init__(self, folder: str | Path, config):
        self.run_folder = Path(folder)
        self.folder = self.run_folder / "fields"
        self.config = config
        self.written: list[Path] = []
        self._sums, self._samples, self._grid = None, 0, None
        self._scratch = Scratch()  # the sample's values, kept between samples
        self._claimed = False
        self._entries: dict = {}  # file name -> its entry in the index (write_fields_xdmf)
        self._indexed = None  # when the index was last written (time.monotonic(), s)
        self._unlisted = False  # a window written since

    def due(self, step: int) -> bool:
        return step % self.config.every == 0

    def __call__(self, view) -> Path | None:
        cfg = self.config
        if self._grid is None:
            self._grid = Grid.over(view.box, cfg.cells, cfg.lo, cfg.hi)
        if not self._claimed:
            claim_folder(self.run_folder, view.run_id, view.comm)
            self._claimed = True
        width = cfg.width * 2.0 * view.r_mean
        sums = sample(view.comm, view.store, view.contacts_once, self._grid, cfg.kernel, width,
                      scratch=self._scratch)
        self._sums = sums if self._sums is None else self._sums + sums
        self._samples += 1
        if view.step % (cfg.every * cfg.window):
            return None
        mean, n = self._sums / self._samples, self._samples
        self._sums, self._samples = None, 0
        path = self.folder / f"{cfg.name}_{view.step:08d}.h5"
        if view.comm.rank == 0:
            fields = fields_of(mean, self._grid.cell_volume)
            message = attempt(lambda: self._write(path, view, fields, n, width))
        else:
            message = None
        agree(view.comm, message)
        self.written.append(path)
        return path

    def _write(self, path: Path, view, fields: dict, samples: int, width: float) -> None:
        g, cfg = self._grid, self.config
        make_folder(self.folder)

        def write(f):
            f.attrs.update({"format": FORMAT, "version": VERSION, "step": int(view.step),
                            "time": float(view.time), "samples": int(samples),
                            "every": int(cfg.every), "kernel": cfg.kernel,
                            "width": float(width), "lo": g.lo, "hi": g.hi, "cells": g.cells})
            for a, name in enumerate("xyz"):
                put(f, name, g.centres(a))
            for name, value in fields.items():
                put(f, name, zyx(value))

        write_atomic(path, write)
        if int(np.count_nonzero(g.cells > 1)) == 1:
            write_bytes_atomic(path.with_suffix(".csv"), profile_csv(g, fields).encode())
        self._entries[path.name] = _entry(path.name, int(view.step), float(view.time), g)
        self._unlisted = True
        if self._indexed is None or time.monotonic() - self._indexed >= INDEX_SECONDS:
            self._index()

    def _index(self) -> None:
        """Rewrite the index (rank 0): at the first time with the folder's files listed
        (those of the run before a restart), then the files it knows."""
        write_fields_xdmf(self.run_folder, self.config.name, self._grid, self._entries,
                          scan=self._indexed is None)
        self._indexed, self._unlisted = time.monotonic(), False

    def finish(self, view) -> None:
        """The end of a run or a stop: the index lists every window written (collective)."""
        due = view.comm.rank == 0 and self._unlisted
        agree(view.comm, attempt(self._index) if due else None)


def zyx(value: np.ndarray) -> np.ndarray:
    """(C, nx, ny, nz) as (nz, ny, nx[, C]) (one component: no last axis)."""
    out = np.transpose(value, (3, 2, 1, 0))
    return out[..., 0] if out.shape[-1] == 1 else out


def component_names() -> list[str]:
    """The column names of every field's components (:data:`FIELDS` order)."""
    names = []
    for name, n in FIELDS.items():
        names += [name] if n == 1 else [f"{name}_{c}" for c in (VECTOR if n == 3 else TENSOR)]
    return names


def profile_csv(grid: Grid, fields: dict) -> str:
    """A 1D profile as CSV: the resolved axis' centres, then every component (exact digits)."""
    axis = int(np.flatnonzero(grid.cells > 1)[0])
    cols = np.vstack([grid.centres(axis)] + [v.reshape(v.shape[0], -1) for v in fields.values()])
    lines = [",".join(["xyz"[axis]] + component_names())]
    lines += [",".join(map(repr, row)) for row in cols.T.tolist()]
    return "\n".join(lines) + "\n"


def _attribute(f: str, name: str, n: int, dims: str) -> str:
    kind = {1: "Scalar", 3: "Vector", 9: "Tensor"}[n]
    shape = dims if n == 1 else f"{dims} {n}"
    return (f'     <Attribute Name="{name}" AttributeType="{kind}" Center="Cell">\n'
            f'      <DataItem Dimensions="{shape}" NumberType="Float" Precision="8" '
            f'Format="HDF">{f}:/{name}</DataItem>\n     </Attribute>')


def _entry(file: str, step: int, time: float, grid: Grid) -> str:
    """The XDMF grid of the fields file ``file`` (in ``fields/``) of ``step`` at ``time``."""
    nx, ny, nz = (int(c) for c in grid.cells)
    nodes = [grid.lo[a] + np.arange(grid.cells[a] + 1) * grid.spacing[a] for a in range(3)]
    dims = f"{nz} {ny} {nx}"
    ref = f"fields/{file}"
    return "\n".join([
        f'   <Grid Name="step {step}" GridType="Uniform">',
        f'    <Time Value="{time!r}"/>',
        f'    <Topology TopologyType="3DRectMesh" Dimensions="{nz + 1} {ny + 1} {nx + 1}"/>',
        '    <Geometry GeometryType="VXVYVZ">',
        *[f'     <DataItem Dimensions="{len(v)}" NumberType="Float" Precision="8" '
          f'Format="XML">{" ".join(repr(float(x)) for x in v)}</DataItem>' for v in nodes],
        '    </Geometry>',
        *[_attribute(ref, field, n, dims) for field, n in FIELDS.items()],
        '   </Grid>'])


def write_fields_xdmf(run_folder: Path, name: str, grid: Grid,
                      known: dict | None = None, scan: bool = True) -> Path:
    """Write ``run_folder/<name>.xmf``: an XDMF 2 time series of the grid's files in
    ``run_folder/fields`` (a 3DRectMesh — VTK's XDMF 2 reader misreads a 3DCoRectMesh's
    origin and spacing —, its node coordinates inline, the fields as cell data; XDMF orders
    the dimensions z, y, x); ``known``: file name -> its entry (:func:`_entry`) of files
    already read or written (filled in here, so each file is opened once); ``scan=False``:
    ``known`` holds every file (the folder was listed before and the writer added its own
    since; a listing costs in proportion to the files), by name."""
    known = {} if known is None else known
    entries = []
    found = sorted((Path(run_folder) / "fields").glob(f"{name}_*.h5")) if scan else []
    for p in found:
        tail = p.stem[len(name) + 1:]
        if not tail.isdigit():
            continue
        if p.name not in known:
            try:
                with h5py.File(p, "r") as f:
                    known[p.name] = _entry(p.name, int(tail), float(f.attrs["time"]), grid)
            except (OSError, KeyError):  # an unreadable file is left out
                continue
        entries.append(known[p.name])
    if not scan:
        entries = [known[k] for k in sorted(known)]
    text = ('<?xml version="1.0" ?>\n<!DOCTYPE Xdmf SYSTEM "Xdmf.dtd" []>\n'
            '<Xdmf Version="2.0">\n <Domain>\n'
            f'  <Grid Name="{name}" GridType="Collection" CollectionType="Temporal">\n'
            + "\n".join(entries) + "\n  </Grid>\n </Domain>\n</Xdmf>\n")
    path = Path(run_folder) / f"{name}.xmf"
    write_bytes_atomic(path, text.encode())
    return path


def read_fields(path: str | Path) -> dict:
    """A fields file as a dict: its attributes, ``x``, ``y``, ``z`` and every field
    (:data:`~pdyn.fields.coarse.FIELDS`); raises :class:`OutputFileError` for a file that is
    not one."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") != FORMAT:
                raise OutputFileError(f"{path}: not a pdyn fields file")
            out = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            for key in ("x", "y", "z", *FIELDS):
                out[key] = f[key][()]
    except (OSError, KeyError) as exc:
        raise OutputFileError(f"{path}: cannot read it as a fields file ({exc})") from None
    return out


__all__ = ["FORMAT", "FieldsWriter", "read_fields", "write_fields_xdmf"]
