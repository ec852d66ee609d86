"""Checkpoint files: written every m steps, read back for a restart (``pdyn.restart``).

``<folder>/checkpoints/ckpt_<step:08d>.h5`` (+ per-rank pieces on several ranks, as snapshots)
holds everything the run needs to continue:

* ``particles/<field>`` for every field of the run's store the schema marks ``checkpoint``
  (``ParticleStore.selection(CHECKPOINT)``: gid, pos, vel, force, radius, mass, flags,
  build_pos, material (from format 10: older checkpoints read as material 0); in a run that
  rotates also omega, torque and ``history_count``, a frictionless
  run has none): the owned spheres in full precision, rank-major, sorted within a rank by
  *index cell* (the cell of a lattice of about one cell per ``INDEX_PARTICLES`` particles
  over the box, at least ``INDEX_CELLS`` (``pdyn.io.schema.index_lattice``), attribute
  ``index_dims``; centres clamped into it), then by id;
* ``records/<field>`` for each ragged field (the contact history ``history_key``,
  ``history_spring``: ``history_count`` records per particle, ``pdyn.dynamics.history``): the
  records of the particles, in the particles' row order;
* ``index/{cell, start, count}``: the segments of rows with one writing rank and one index
  cell, in row order, and ``index/history_count``: the records of each segment (so a rank
  reads the records of its segments alone). A restart on another rank count reads on each rank only the segments of
  the cells that overlap its blocks (HDF5 hyperslabs; ``pdyn.restart``), and on the same rank
  count only the rows the rank wrote (``rows_per_rank``); ``build_pos`` (the
  position at the last neighbour-list rebuild) keeps the rebuild schedule: a restart rebuilds
  at the same steps as the uninterrupted run. ``force`` is the force at the end of the
  checkpoint step; it is restored, not recomputed, because damping forces were evaluated with
  the half-step velocity, which is gone (velocity Verlet, ``pdyn.dynamics.integrate``);
* ``walls/{id, point, normal}`` and every wall as triangles at the checkpoint's time,
  ``walls/{vertices, triangles, triangle_wall}`` as in a snapshot (from format 8; before it a
  quadrilateral a wall, ``quad_points``, ``quads``): pictures only — a restart rebuilds the
  walls from the config — so ``pdyn info``/``render`` show the container;
* ``meshes/{wall, vertex_count, triangle_count, vertices, triangles}`` (from format 9): each
  mesh wall's geometry as the run uses it — its wall id, its welded vertices (m, scaled, in
  its own frame at t = 0, ``pdyn.mesh.Mesh``) and its triangles (rows of its own vertices),
  the meshes in wall order. A restart builds its meshes from them and never reads an STL
  file again (an edited, moved or deleted file changes nothing; a run folder can move);
  the stored ``config`` leaves their ``vertices`` and ``triangles`` out;
* attributes: ``step``, ``time``, ``dt`` (s), ``config`` (the run's configuration as JSON, its
  ``particles`` table left out: the arrays above replace it), the effective ``gravity`` and
  ``contact`` configuration (JSON: every field of the ``ContactConfig`` the run used, its
  config's or its scene's), the box, ``scene``, ``ranks``, ``exchange`` (JSON: the plain values
  of the exchange's state ``exchange.state()``: the skin, the block grid; its arrays, the
  block → rank map, are the datasets ``exchange/<name>``), ``seed``; ``rows_per_rank`` tells
  which rank owned each row; ``drift`` (m), the largest displacement since the last rebuild
  (the first ghost plan of a restart reaches that much farther), and ``r_mean`` (m), the
  run's mean radius (default skins derive from it).
  ``insertion`` (JSON, runs that pour spheres in): the inserter's parameters and state —
  spheres inserted and removed, the mass removed (kg; optional, absent from older files), the
  next global id, the state of its random stream — so a restart draws the same candidates. ``servos`` (JSON, runs with servo walls,
  ``pdyn.dynamics.wallmotion.Servo``; optional, absent from older files): each servo wall's
  offset (m) and speed (m/s) by wall id, exact (JSON keeps a float's digits). ``stages``
  (JSON, staged runs, ``pdyn.stages``; optional): the steps the stages began at and whether
  the last has ended — a restart applies the same changes at the same steps. ``changes``
  (JSON, ``pdyn.stages.Changes``; optional, written when a stage switched the time step or
  ``Simulation.change`` changed the run): the run's own ``dt`` (s; the attribute ``dt`` is the
  one in force) and the changes made from Python, ``made`` as [step, changes]. Otherwise
  there is no random-number state to keep: scenes are drawn from ``seed`` once at set-up.

This module only writes and reads files; ``pdyn.restart`` builds the continued simulation from
what :func:`read_checkpoint` returns.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..particles import CHECKPOINT as CHECKPOINTED
from ..particles import FIELDS, ragged_groups
from ..version import __version__
from .hdf5 import (CHECKPOINT, VERSIONS, OutputFileError, agree, attempt, move_after, step_files,
                   write_global)
from .runid import claim_folder
from .schema import index_lattice, read_header, read_pdyn
from .snapshot import PREFIX as SNAP_PREFIX
from .snapshot import (XDMF_NAME, common_attrs, owned_sorted, wall_surface_arrays,
                       write_series)
from .thermo import FILE_NAME as THERMO
from .wallforces import FILE_NAME as WALL_FORCES
from .wallforces import keep_series
from .writer import Writer

PREFIX = "ckpt"
HISTORY_COUNT = "history_count"


#: a mesh wall's fields a checkpoint keeps in ``meshes/*``, not in its stored ``config``
MESH_ARRAYS = ("vertices", "triangles")


def config_json(config) -> str:
    """The configuration as JSON (TOML-shaped), without the ``particles`` table and without
    the mesh walls' ``vertices`` and ``triangles`` (the datasets ``meshes/*`` hold every
    mesh)."""
    d = {}
    for f in dataclasses.fields(config):
        v = getattr(config, f.name)
        if f.name == "particles" or v is None:
            continue
        if f.name == "walls":
            v = [{g.name: getattr(w, g.name) for g in dataclasses.fields(w)
                  if not (w.type == "mesh" and g.name in MESH_ARRAYS)} for w in v]
        elif f.name == "stages":
            v = [stage.table() for stage in v]
        elif dataclasses.is_dataclass(v):
            v = dataclasses.asdict(v)
        d[f.name] = v
    return json.dumps(d, default=_plain)


def mesh_arrays(view) -> dict:
    """The ``meshes/*`` datasets of a checkpoint (``view``: an ``OutputView``): each mesh
    wall's id, vertex and triangle counts, welded vertices (m) and triangles (rows of its own
    vertices), in wall order."""
    meshes = sorted((view.wall_meshes or {}).items())
    return {"meshes/wall": np.array([-1 - w for w, _ in meshes], np.int64),
            "meshes/vertex_count": np.array([len(m.verts) for _, m in meshes], np.int64),
            "meshes/triangle_count": np.array([len(m) for _, m in meshes], np.int64),
            "meshes/vertices": np.concatenate([m.verts for _, m in meshes] + [np.zeros((0, 3))]),
            "meshes/triangles": np.concatenate([m.tri for _, m in meshes]
                                               + [np.zeros((0, 3), np.int64)])}


def _plain(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):  # e.g. [[insertion]] tables
        return dataclasses.asdict(x)
    raise TypeError(f"cannot store {type(x).__name__} in a checkpoint config")


class CheckpointWriter(Writer):
    """Writes a checkpoint every ``every`` steps into ``folder/checkpoints``."""

    name = "checkpoint"
    needs = frozenset({"state"})  # the exchange's and the inserter's state

    def __init__(self, folder: str | Path, every: int):
        self.folder = Path(folder) / "checkpoints"
        self.every = int(every)
        self.written: list[Path] = []
        self._claimed = False  # the folder records the run's id (pdyn.io.runid)

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0

    def __call__(self, view) -> Path:
        if not self._claimed:
            claim_folder(self.folder.parent, view.run_id, view.comm)
            self._claimed = True
        path = self.folder / f"{PREFIX}_{view.step:08d}.h5"
        write_checkpoint(view, path)
        self.written.append(path)
        return path


def write_checkpoint(view, path: str | Path) -> Path:
    """Write the run's full state (``view``: an ``OutputView`` with ``state``) to ``path``
    (collective over ``view.comm``)."""
    store, comm = view.store, view.comm
    h = owned_sorted(view)
    n = comm.allreduce_sum(int(h.size))
    lattice = index_lattice(view.box.lo, view.box.hi, n)
    cell = lattice.cell_of(store.pos[h])
    order = np.argsort(cell, kind="stable")
    h, cell = h[order], cell[order]
    cells, count = np.unique(cell, return_counts=True)
    d = store.pos[h] - store.build_pos[h]
    drift = comm.allreduce_max(float(np.sqrt((d * d).sum(axis=1).max())) if h.size else 0.0)
    contact = {k: v for k, v in dataclasses.asdict(view.contact).items() if v is not None}
    attrs = dict(
        common_attrs(view), format=CHECKPOINT, version=VERSIONS[CHECKPOINT],
        n_particles=n, config=config_json(view.config),
        gravity=np.asarray(view.gravity, float), contact=json.dumps(contact),
        seed=int(view.config.seed), steps_total=int(view.steps_total),
        pdyn_version=__version__, drift=float(drift), r_mean=float(view.r_mean),
        index_dims=lattice.dims,
    )
    ex = view.exchange
    extra = wall_surface_arrays(view)
    extra.update(mesh_arrays(view))
    extra.update({f"exchange/{k}": v for k, v in ex.items() if isinstance(v, np.ndarray)})
    ragged = ragged_groups(store.selection(CHECKPOINTED))
    bounds = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
    per_segment = {c: np.add.reduceat(getattr(store, c)[h], bounds[:-1]) if h.size else
                   np.zeros(0, np.int64) for c in ragged}
    extra.update(_index(comm.allgather((cells, count, per_segment))))
    attrs.update(exchange=json.dumps(
        {k: v for k, v in ex.items() if not isinstance(v, np.ndarray)}, default=_plain))
    if view.insertion is not None:  # pouring: its parameters and state (counts, random stream)
        attrs["insertion"] = json.dumps(view.insertion, default=_plain)
    if view.servos is not None:  # servo walls: their offsets and speeds (not closed-form)
        attrs["servos"] = json.dumps(view.servos)
    if view.stages is not None:  # a staged run: the steps its stages began at
        attrs["stages"] = json.dumps(view.stages)
    if view.changes is not None:  # dt switched or changes made from Python: to replay them
        attrs["changes"] = json.dumps(view.changes, default=_plain)
    names = store.selection(CHECKPOINTED)
    arrays = {f"particles/{k}": store.values(k, h) for k in names
              if FIELDS[k].counted_by is None}
    arrays.update({f"records/{k}": store.values(k, h) for k in names if FIELDS[k].counted_by})
    write_global(Path(path), comm, attrs, arrays, extra=extra)
    return Path(path)


def _index(parts) -> dict:
    """``index/*`` from every rank's (cells, counts, records per segment), rank-major."""
    cell = np.concatenate([p[0] for p in parts]).astype(np.int64)
    count = np.concatenate([p[1] for p in parts]).astype(np.int64)
    start = (np.cumsum(count) - count).astype(np.int64)  # none for an empty checkpoint
    out = {"index/cell": cell, "index/start": start, "index/count": count}
    for c in parts[0][2]:
        out[f"index/{c}"] = np.concatenate([p[2][c] for p in parts]).astype(np.int64)
    return out


def read_checkpoint(path: str | Path) -> dict:
    """The checkpoint's particle arrays (the fields it holds, global, sorted by id; ``rank``:
    the rank that wrote each) and attributes, as a dict. Checked strictly
    (``pdyn.io.schema``); raises :class:`~pdyn.io.hdf5.OutputFileError`."""
    head, data = read_pdyn(path, CHECKPOINT)
    fields = _particles(path, head, data)
    out = dict(fields)
    out.update({k: head[k] for k in ("step", "time", "dt", "n_particles", "ranks", "config",
                                     "contact", "gravity", "box_lo", "box_hi", "boundary",
                                     "scene", "steps_total", "drift", "r_mean")})
    out["insertion"] = head.get("insertion")  # {"params", "state"} or None
    out["servos"] = head.get("servos")  # {wall id: [offset, speed]} or None
    out["stages"] = head.get("stages")  # {"starts": [...], "finished": bool} or None
    out["changes"] = head.get("changes")  # {"dt": s, "made": [[step, changes]]} or None
    out["exchange"] = _exchange(head, data)
    out["meshes"] = stored_meshes(data)
    rows = head["rows_per_rank"]
    out["rank"] = np.repeat(np.arange(len(rows), dtype=np.int64), rows)  # who wrote each row
    order = np.argsort(out["gid"], kind="stable")
    for c, names in ragged_groups(fields).items():  # each particle's records move with it
        take = _record_order(out[c], order)
        for k in names:
            out[k] = out[k][take]
    for k in [*fields, "rank"]:
        if FIELDS.get(k) is None or FIELDS[k].counted_by is None:
            out[k] = out[k][order]
    return out


def _record_order(count: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Indices of the records of particles with ``count`` records each (in row order) when the
    particles are taken in ``order``."""
    first = np.concatenate(([0], np.cumsum(count)))[:-1]
    c = count[order]
    return np.repeat(first[order] - np.concatenate(([0], np.cumsum(c)))[:-1], c) + np.arange(
        int(c.sum()), dtype=np.int64)


def _particles(path, head: dict, data: dict) -> dict:
    """The ``particles/*`` and ``records/*`` datasets read, by field name; a checkpoint's
    contact history of 16 slots per particle (versions 5 and 6) as records."""
    out = {k.split("/", 1)[1]: v for k, v in data.items()
           if k.startswith(("particles/", "records/"))}
    if head["version"] < 7 and "history_key" in out:  # counts and keys checked by the reader
        count, slots = out[HISTORY_COUNT], out["history_key"].shape[1]
        used = np.arange(slots)[None, :] < count[:, None]
        keys = out["history_key"][used]
        out["history_key"] = keys
        out["history_spring"] = out["history_spring"][used]
    return out


def stored_meshes(data: dict) -> dict | None:
    """The meshes of a checkpoint's checked data: wall id -> (vertices (V, 3) m, triangles
    (T, 3) rows of them), in wall order; None for a checkpoint before format 9 (its meshes
    are its config's files)."""
    if "meshes/wall" not in data:
        return None
    ends = {k: np.cumsum(data[f"meshes/{k}_count"])[:-1] for k in ("vertex", "triangle")}
    return dict(zip(data["meshes/wall"].tolist(),
                    zip(np.split(data["meshes/vertices"], ends["vertex"]),
                        np.split(data["meshes/triangles"], ends["triangle"]))))


def _exchange(head: dict, data: dict) -> dict:
    """The exchange's checkpointed state: its plain values and its ``exchange/*`` arrays."""
    out = dict(head["exchange"])
    out.update({k.split("/", 1)[1]: v for k, v in data.items() if k.startswith("exchange/")})
    return out


def read_checkpoint_rows(path: str | Path, rows=None) -> tuple[dict, dict, dict]:
    """(header, particles, rest) of the checkpoint at ``path`` with only the particle rows
    ``rows`` ([(start, stop)]; None: none) read: ``particles`` maps the fields the checkpoint
    holds to those rows, ``rest`` holds the exchange's state (``exchange``), the meshes
    (``meshes``, :func:`stored_meshes`) and the index (``cell``, ``start``, ``count``). Checked
    as :func:`read_checkpoint`."""
    head, data = read_pdyn(path, CHECKPOINT, rows=[] if rows is None else rows)
    particles = _particles(path, head, data)
    rest = {"exchange": _exchange(head, data), "meshes": stored_meshes(data)}
    rest.update({k: data[f"index/{k}"] for k in ("cell", "start", "count")})
    return head, particles, rest


def checkpoint_header(path: str | Path) -> dict:
    """The checked attributes of a checkpoint (``config`` decoded), without reading the
    arrays."""
    return read_header(path, CHECKPOINT)


def latest_checkpoint(path: str | Path) -> Path:
    """``path`` itself if it is not a folder; for a run folder (or its ``checkpoints`` folder)
    the newest checkpoint whose header reads cleanly — newest by the step it holds, not by
    its name (of two holding one step, the one whose name says so)."""
    path = Path(path)
    if not path.is_dir():
        return path
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    found = []
    for named, p in step_files(folder, PREFIX):
        try:
            step = read_header(p, CHECKPOINT)["step"]
        except OutputFileError:
            continue
        found.append((step, step == named, named, p))
    if not found:
        raise OutputFileError(f"{path}: no readable checkpoint in this folder")
    return max(found)[3]


def run_folder_of(checkpoint: str | Path) -> Path:
    """The output folder a checkpoint belongs to (``<folder>/checkpoints/ckpt_*.h5``)."""
    p = Path(checkpoint).resolve()
    return p.parent.parent if p.parent.name == "checkpoints" else p.parent


class SetAside(NamedTuple):
    """What :func:`set_aside_after` moved: the ``folder`` the files went to (None: none
    moved) and the ``foreign`` ones among them (snapshots and checkpoints of another run,
    as ``<subfolder>/<name> (run <id>)``)."""

    folder: Path | None
    foreign: list


def _foreign(moved: list, run_id: str | None) -> list[str]:
    """The snapshots and checkpoints among the ``moved`` files whose run id is not
    ``run_id`` (per-rank pieces and files without a run id left out)."""
    out = []
    for p in moved:
        if run_id is None or len(p.suffixes) != 1:  # a piece: <stem>.r0001.h5
            continue
        try:
            theirs = read_header(p).get("run_id")
        except OutputFileError:
            continue
        if theirs is not None and theirs != run_id:
            out.append(f"{p.parent.name}/{p.name} (run {theirs})")
    return out


def set_aside_after(run_folder, step: int, comm, run_id: str | None = None) -> SetAside:
    """Restarting ``run_folder`` at ``step``: move its snapshots and checkpoints written after
    ``step`` into ``run_folder/superseded/after_<step>[_k]/`` (with their own snapshots.xmf),
    delete stray ``.tmp`` files and rewrite ``run_folder/snapshots.xmf`` to list exactly the
    snapshots left. Nothing is deleted that the continued run has not replaced. Rank 0 does the
    work; collective (raises :class:`~pdyn.io.hdf5.OutputWriteError` on every rank). Returns
    the folder the files went to and those of them that belong to another run than
    ``run_id`` (:class:`SetAside`)."""
    run_folder = Path(run_folder)
    used = []

    def work():
        base = run_folder / "superseded" / f"after_{step:08d}"
        dest, k = base, 1
        while dest.exists():
            k += 1
            dest = base.with_name(f"{base.name}_{k}")
        files = (move_after(run_folder / "snapshots", SNAP_PREFIX, step, dest / "snapshots")
                 + move_after(run_folder / "checkpoints", PREFIX, step, dest / "checkpoints"))
        moved = (files + keep_series(run_folder / WALL_FORCES, step, dest)
                 + keep_series(run_folder / THERMO, step, dest))
        if moved:
            write_series(dest)
            used.append(SetAside(dest, _foreign(files, run_id)))
        if (run_folder / XDMF_NAME).exists() or (run_folder / "snapshots").is_dir():
            write_series(run_folder)

    agree(comm, attempt(work) if comm.rank == 0 else None)
    return comm.bcast(used[0] if used else SetAside(None, []))
