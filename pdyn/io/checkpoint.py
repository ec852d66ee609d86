"""Checkpoint files: written every m steps, read back for a restart (``pdyn.restart``).

``<folder>/checkpoints/ckpt_<step:08d>.h5`` (+ per-rank pieces on several ranks, as snapshots)
holds everything the run needs to continue:

* ``particles/<field>`` for every field the schema marks ``checkpoint``
  (``pdyn.particles.CHECKPOINT``: gid, pos, vel, force, radius, mass, flags, build_pos): the
  owned spheres in full precision, rank-major, sorted by id within a rank. ``build_pos`` (the
  position at the last neighbour-list rebuild) keeps the rebuild schedule: a restart rebuilds
  at the same steps as the uninterrupted run. ``force`` is the force at the end of the
  checkpoint step; it is restored, not recomputed, because damping forces were evaluated with
  the half-step velocity, which is gone (velocity Verlet, ``pdyn.dynamics.integrate``);
* ``walls/{id, point, normal, quad_points, quads}``: the half-spaces (rebuilt from the box on
  restart, kept here so ``pdyn info``/``render`` show the container);
* attributes: ``step``, ``time``, ``dt`` (s), ``config`` (the run's configuration as JSON, its
  ``particles`` table left out: the arrays above replace it), the effective ``gravity`` and
  ``contact`` law (JSON), the box, ``scene``, ``ranks``, ``exchange`` (JSON: the plain values
  of the exchange's state ``exchange.state()``: the skin, the block grid; its arrays, the
  block → rank map, are the datasets ``exchange/<name>``), ``seed``; ``rows_per_rank`` tells
  which rank owned each row.
  There is no random-number state to keep: scenes are drawn from ``seed`` once at set-up and
  the step draws no random numbers. There is no contact history: the contact laws are
  history-free (normal force only).

This module only writes and reads files; ``pdyn.restart`` builds the continued simulation from
what :func:`read_checkpoint` returns.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from ..particles import CHECKPOINT as PARTICLE_FIELDS
from ..version import __version__
from .hdf5 import (CHECKPOINT, VERSIONS, OutputFileError, open_pdyn, read_dataset, remove_after,
                   step_files, write_global)
from .snapshot import PREFIX as SNAP_PREFIX
from .snapshot import common_attrs, owned_sorted, wall_arrays

PREFIX = "ckpt"


def config_json(config) -> str:
    """The configuration as JSON (TOML-shaped), without the ``particles`` table."""
    d = dataclasses.asdict(config)
    d.pop("particles", None)
    return json.dumps({k: v for k, v in d.items() if v is not None}, default=_plain)


def _plain(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"cannot store {type(x).__name__} in a checkpoint config")


class CheckpointWriter:
    """Writes a checkpoint every ``every`` steps into ``folder/checkpoints``."""

    name = "checkpoint"

    def __init__(self, folder: str | Path, every: int):
        self.folder = Path(folder) / "checkpoints"
        self.every = int(every)
        self.written: list[Path] = []

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0

    def __call__(self, sim) -> Path:
        path = self.folder / f"{PREFIX}_{sim.step_index:08d}.h5"
        self.folder.mkdir(parents=True, exist_ok=True)
        write_checkpoint(sim, path)
        self.written.append(path)
        return path


def write_checkpoint(sim, path: str | Path) -> Path:
    """Write ``sim``'s full state to ``path`` (collective over ``sim.comm``)."""
    store = sim.store
    h = owned_sorted(sim)
    c = sim.contact
    contact = {"law": c.law, "youngs_modulus": c.E, "restitution": c.restitution}
    if c.k > 0:
        contact["stiffness"] = c.k
    attrs = dict(
        common_attrs(sim), format=CHECKPOINT, version=VERSIONS[CHECKPOINT],
        n_particles=sim.comm.allreduce_sum(int(h.size)), config=config_json(sim.config),
        gravity=np.asarray(sim.gravity, float), contact=json.dumps(contact),
        seed=int(sim.config.seed), steps_total=int(sim.steps), pdyn_version=__version__,
    )
    ex = sim.exchange.state()
    extra = wall_arrays(sim)
    extra.update({f"exchange/{k}": v for k, v in ex.items() if isinstance(v, np.ndarray)})
    attrs.update(exchange=json.dumps(
        {k: v for k, v in ex.items() if not isinstance(v, np.ndarray)}, default=_plain))
    arrays = {f"particles/{k}": getattr(store, k)[h] for k in PARTICLE_FIELDS}
    write_global(Path(path), sim.comm, attrs, arrays, extra=extra)
    return Path(path)


def read_checkpoint(path: str | Path) -> dict:
    """The checkpoint's particle arrays (global, sorted by id) and attributes, as a dict."""
    with open_pdyn(path, CHECKPOINT) as f:
        out = {k: read_dataset(f, f"particles/{k}") for k in PARTICLE_FIELDS}
        a = f.attrs
        try:
            out.update(step=int(a["step"]), time=float(a["time"]), dt=float(a["dt"]),
                       n_particles=int(a["n_particles"]), ranks=int(a["ranks"]),
                       config=json.loads(a["config"]), contact=json.loads(a["contact"]),
                       gravity=np.asarray(a["gravity"], float),
                       box_lo=np.asarray(a["box_lo"], float), box_hi=np.asarray(a["box_hi"], float),
                       boundary=tuple(str(b) for b in a["boundary"]), scene=str(a["scene"]),
                       steps_total=int(a["steps_total"]), exchange=json.loads(a["exchange"]))
            rows = np.asarray(a.get("rows_per_rank", [len(out["gid"])]), np.int64)
        except (KeyError, ValueError) as exc:
            raise OutputFileError(f"{path}: checkpoint attribute missing or damaged ({exc})") \
                from None
        for k in (f["exchange"].keys() if "exchange" in f else ()):  # state() arrays
            out["exchange"][k] = read_dataset(f, f"exchange/{k}")
    if len(out["gid"]) != out["n_particles"]:
        raise OutputFileError(f"{path}: holds {len(out['gid'])} particles, its header says "
                              f"{out['n_particles']} (incomplete file)")
    if rows.sum() != len(out["gid"]):
        raise OutputFileError(f"{path}: rows_per_rank {rows.tolist()} does not add up to "
                              f"{len(out['gid'])} particles (damaged file)")
    out["rank"] = np.repeat(np.arange(len(rows), dtype=np.int64), rows)  # who wrote each row
    order = np.argsort(out["gid"], kind="stable")
    for k in PARTICLE_FIELDS + ("rank",):
        out[k] = out[k][order]
    if len(order) > 1 and (np.diff(out["gid"]) == 0).any():
        raise OutputFileError(f"{path}: a particle id appears twice (damaged file)")
    return out


def checkpoint_header(path: str | Path) -> dict:
    """The attributes of a checkpoint (``config`` decoded), without reading the arrays."""
    with open_pdyn(path, CHECKPOINT) as f:
        out = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    try:
        out["config"] = json.loads(out["config"])
    except (KeyError, ValueError) as exc:
        raise OutputFileError(f"{path}: checkpoint attribute 'config' missing or damaged "
                              f"({exc})") from None
    return out


def latest_checkpoint(path: str | Path) -> Path:
    """``path`` itself if it is a file; for a run folder (or its ``checkpoints`` folder) the
    newest checkpoint that opens cleanly."""
    path = Path(path)
    if not path.is_dir():
        return path
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    for _, p in reversed(step_files(folder, PREFIX)):
        try:
            open_pdyn(p, CHECKPOINT).close()
            return p
        except OutputFileError:
            continue
    raise OutputFileError(f"{path}: no readable checkpoint in this folder")


def run_folder_of(checkpoint: str | Path) -> Path:
    """The output folder a checkpoint belongs to (``<folder>/checkpoints/ckpt_*.h5``)."""
    p = Path(checkpoint).resolve()
    return p.parent.parent if p.parent.name == "checkpoints" else p.parent


def prune_after(folder: str | Path, step: int) -> list[Path]:
    """Remove snapshots and checkpoints of ``folder`` written after ``step`` (the future of a
    run that is being continued from a checkpoint at ``step``) and stray temporary files."""
    folder = Path(folder)
    return (remove_after(folder / "snapshots", SNAP_PREFIX, step)
            + remove_after(folder / "checkpoints", PREFIX, step))
