"""Snapshots every k steps: one HDF5 file per snapshot plus an XDMF 2 sidecar that ParaView opens
as a time series.

Layout of a run folder::

    <folder>/snapshots.xmf                      open this in ParaView (XDMF 2 reader)
    <folder>/snapshots/snap_<step:08d>.h5        one snapshot (the "master" file)
    <folder>/snapshots/snap_<step:08d>.r<rank:04d>.h5   per-rank pieces (multi-rank runs
                                                 without parallel HDF5; the master's datasets
                                                 are virtual datasets over them)

A snapshot file holds (rank-major; within a rank sorted by id):

* ``particles/id`` int64 (N,), ``particles/position`` float64 (N, 3) m, ``particles/velocity``
  (N, 3) m/s, ``particles/radius`` (N,) m, ``particles/rank`` int32 (N,) owning rank,
  ``particles/angular_velocity`` (N, 3) rad/s (from version 4), ``particles/material``
  uint8 (N,) each sphere's material index (``pdyn.dynamics.materials``; from version 8);
* ``walls/point``, ``walls/normal`` (W, 3): each wall's point at the snapshot's time and its
  normal (a plane's, toward the spheres) or axis (a cylinder's), ``walls/id`` (W,), and for
  pictures every wall as triangles at that time (``pdyn.io.wallmesh``): ``walls/vertices``
  (V, 3) m, ``walls/triangles`` (T, 3) rows of the vertices, ``walls/triangle_wall`` (T,)
  the wall id of each triangle (from version 7; before it ``walls/quad_points`` (4W, 3) and
  ``walls/quads`` (W, 4), each wall as a quadrilateral);
* ``contacts/id`` int64 (K, 2): the contact network, each touching contact once — a sphere
  pair (lower id first) or a sphere and a wall (the wall's negative id second) —,
  ``contacts/points`` (2K, 3) m: its two ends (the centres; for a wall the contact point on
  its plane), ``contacts/lines`` (K, 2): line k joins points 2k and 2k + 1,
  ``contacts/force`` (K,) N: the normal force magnitude (> 0 pushes apart),
  ``contacts/normal_force`` and ``contacts/tangential_force`` (K, 3) N: the forces on the
  first sphere from the second (tangential zero without friction); ParaView shows them as
  lines (the ``contacts`` block of the sidecar); rank-major, within a rank sorted by ids;
* with ``[output] sphere_stress`` (``--sphere-stress``): ``particles/stress`` (N, 6) Pa —
  xx, yy, zz, xy, xz, yz of the symmetric part of the sphere's stress, tension positive
  (``pdyn.fields.sphere``) —, ``particles/coordination`` int32 (N,) its touching contacts,
  walls included, ``particles/contact_force`` (N,) N the magnitude of the sum of its contact
  forces (fixed spheres: zeros); read when present;
* with ``[output] wall_pressure``: the wall pressure maps ``walls/pressure/*`` and the
  attribute ``pressure_samples`` (``pdyn.io.wallpressure``); read when present;
* attributes ``format = "pdyn-snapshot"``, ``version``, ``step``, ``time`` (s), ``dt`` (s),
  ``n_particles``, ``n_contacts``, ``ranks``, ``box_lo``, ``box_hi``, ``boundary``,
  ``scene``, ``run_id`` (``pdyn.io.runid``). (Version 7 drew the walls as triangles, 6 added
  the run id, 5 the contacts, 4 ``particles/angular_velocity``; versions 2 to 6 are read
  without them.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .hdf5 import SNAPSHOT, VERSIONS, OutputFileError, step_files, write_global
from .runid import claim_folder
from .schema import read_header, read_pdyn
from ..fields.once import each_once, fixed_ids, lower_first
from ..fields.sphere import sphere_tensors, symmetric_six
from ..walls import WallSet
from .wallmesh import wall_surfaces
from .xdmf import write_xdmf
from .writer import Writer

PREFIX = "snap"
XDMF_NAME = "snapshots.xmf"


def wall_surface_arrays(view) -> dict:
    """The walls' datasets of a snapshot (``view``: an ``OutputView``): id, point, normal and
    every wall as triangles at the snapshot's time (:func:`~pdyn.io.wallmesh.wall_surfaces`)."""
    store = view.store
    w = store.walls
    w = w[np.argsort(-store.gid[w], kind="stable")]  # wall ids -1, -2, ...
    table = (view.wall_table if view.wall_table is not None
             else WallSet(store.pos[w], store.normal[w]).table)
    verts, tris, ids = wall_surfaces(table, store.pos[w], store.normal[w], view.box.lo,
                                     view.box.hi, view.time, view.wall_meshes)
    return {"walls/id": store.gid[w], "walls/point": store.pos[w], "walls/normal": store.normal[w],
            "walls/vertices": verts, "walls/triangles": tris, "walls/triangle_wall": ids}


def pressure_counts(walls: dict) -> dict:
    """The XDMF entry's counts of the wall pressure maps (``pdyn.io.wallpressure``) from a
    snapshot's walls datasets or their shapes; none without maps."""
    if "walls/pressure/triangles" not in walls:
        return {}

    def rows(v):
        return v[0] if isinstance(v, tuple) else len(v)  # a shape, or an array

    return {"pressure_vertices": rows(walls["walls/pressure/vertices"]),
            "pressure_triangles": rows(walls["walls/pressure/triangles"])}


def owned_sorted(view) -> np.ndarray:
    """This rank's owned sphere handles sorted by global id."""
    h = view.store.owned
    return h[np.argsort(view.store.gid[h], kind="stable")]


def common_attrs(view) -> dict:
    """The attributes snapshots and checkpoints share."""
    attrs = {
        "step": int(view.step), "time": float(view.time), "dt": float(view.dt),
        "ranks": int(view.comm.size), "box_lo": np.asarray(view.box.lo, float),
        "box_hi": np.asarray(view.box.hi, float), "boundary": list(view.box.boundary),
        "scene": str(view.scene),
    }
    if view.run_id is not None:  # pdyn.io.runid
        attrs["run_id"] = view.run_id
    return attrs


class SnapshotWriter(Writer):
    """Writes a snapshot every ``every`` steps into ``folder/snapshots`` and keeps the XDMF
    sidecar ``folder/snapshots.xmf`` listing every complete snapshot in the folder."""

    name = "snapshot"
    # every row's contacts of the step: the network (each once, a fixed sphere's too) and the
    # per-sphere stress
    needs = frozenset({"sphere_contacts"})

    def __init__(self, folder: str | Path, every: int, sphere_stress: bool = False,
                 pressure=None):
        self.run_folder = Path(folder)
        self.pressure = pressure  # a WallPressureSampler (pdyn.io.wallpressure) or None
        self.sphere_stress = bool(sphere_stress)
        self._fixed = None  # the fixed spheres' ids (pdyn.fields.once.fixed_ids), once
        self.folder = self.run_folder / "snapshots"
        self.every = int(every)
        self.written: list[Path] = []
        self._index: dict[str, dict] = {}  # file name -> entry for the XDMF sidecar
        self._claimed = False  # the folder records the run's id (pdyn.io.runid)

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0

    def __call__(self, view) -> Path:
        store, comm = view.store, view.comm
        if not self._claimed:
            claim_folder(self.run_folder, view.run_id, comm)
            self._claimed = True
        h = owned_sorted(view)
        path = self.folder / f"{PREFIX}_{view.step:08d}.h5"
        n_total = comm.allreduce_sum(int(h.size))
        attrs = dict(common_attrs(view), format=SNAPSHOT, version=VERSIONS[SNAPSHOT],
                     n_particles=n_total)
        arrays = {
            "particles/id": store.gid[h], "particles/position": store.pos[h],
            "particles/velocity": store.vel[h], "particles/radius": store.radius[h],
            "particles/rank": np.full(h.size, comm.rank, np.int32),
            # zeros in a run without rotation: the format does not depend on the run
            "particles/angular_velocity": store.values("omega", h),
            "particles/material": store.material[h],
        }
        if self.sphere_stress:
            stress, count, force = sphere_tensors(store, h, view.sphere_contacts)
            arrays.update({"particles/stress": symmetric_six(stress),
                           "particles/coordination": count,
                           "particles/contact_force": np.linalg.norm(force, axis=1)})
        walls = wall_surface_arrays(view)
        if self.pressure is not None:
            maps, attrs["pressure_samples"] = self.pressure.take(view)
            walls.update(maps)
        if self._fixed is None:
            self._fixed = fixed_ids(comm, store)
        net = lower_first(each_once(view.sphere_contacts, self._fixed))
        order = np.lexsort((net["id"][:, 1], net["id"][:, 0]))
        ends = net["ends"].reshape(-1, 2, 3)[order].reshape(-1, 3)
        arrays.update({"contacts/id": net["id"][order], "contacts/points": ends})
        arrays.update({f"contacts/{k}": net[k][order]
                       for k in ("force", "normal_force", "tangential_force")})
        k_total = comm.allreduce_sum(int(order.size))
        attrs["n_contacts"] = k_total
        walls["contacts/lines"] = np.arange(2 * k_total, dtype=np.int64).reshape(-1, 2)

        def index():
            self._index[path.name] = {"file": path.name, "step": view.step,
                                      "time": view.time, "n": n_total,
                                      "n_walls": len(walls["walls/id"]), "n_contacts": k_total,
                                      "wall_vertices": len(walls["walls/vertices"]),
                                      "wall_triangles": len(walls["walls/triangles"]),
                                      "material": True, **pressure_counts(walls)}
            self.update_xdmf()

        write_global(path, comm, attrs, arrays, extra=walls, then=index)
        self.written.append(path)
        return path

    def update_xdmf(self) -> Path:
        """Rewrite the sidecar from the snapshots in the folder (earlier runs' snapshots of a
        restarted run included)."""
        return write_series(self.run_folder, self._index)


def write_series(run_folder: Path, known: dict | None = None) -> Path:
    """Write ``run_folder/snapshots.xmf`` listing exactly the snapshots in
    ``run_folder/snapshots`` that read cleanly (``known``: file name -> XDMF entry of files
    already checked, filled in here)."""
    known = {} if known is None else known
    folder = Path(run_folder) / "snapshots"
    entries = []
    for _, p in step_files(folder, PREFIX):
        e = known.get(p.name)
        if e is None:
            try:
                head = read_header(p, SNAPSHOT)
            except OutputFileError:  # an unreadable file is left out of the series
                continue
            shapes = head["shapes"]
            e = {"file": p.name, "step": head["step"], "time": head["time"],
                 "n": head["n_particles"], "n_walls": shapes["walls/id"][0],
                 "n_contacts": head.get("n_contacts", 0),
                 "material": "particles/material" in shapes}
            if "walls/triangles" in shapes:  # version 7 on: triangles, else quadrilaterals
                e.update(wall_vertices=shapes["walls/vertices"][0],
                         wall_triangles=shapes["walls/triangles"][0])
            e.update(pressure_counts(shapes))
            known[p.name] = e
        entries.append(e)
    return write_xdmf(Path(run_folder) / XDMF_NAME, folder.name, entries)


def read_snapshot(path: str | Path) -> dict:
    """A snapshot as a dict: ``id``, ``position``, ``velocity``, ``radius``, ``rank``,
    ``angular_velocity`` (global arrays; zeros before version 4), ``stress``,
    ``coordination``, ``contact_force`` when the file holds them, ``walls`` and ``contacts``
    (dicts of the wall and contact-network arrays; no contacts before version 5), and
    ``step``, ``time``, ``dt``, ``ranks``,
    ``box_lo``, ``box_hi``, ``scene``. Checked strictly (``pdyn.io.schema``); raises
    :class:`~pdyn.io.hdf5.OutputFileError`."""
    head, data = read_pdyn(path, SNAPSHOT)
    out = {k: data[f"particles/{k}"] for k in ("id", "position", "velocity", "radius", "rank")}
    out["angular_velocity"] = data.get("particles/angular_velocity",
                                       np.zeros_like(out["position"]))
    out.update({k: data[f"particles/{k}"] for k in ("stress", "coordination", "contact_force")
                if f"particles/{k}" in data})
    out["material"] = data.get("particles/material", np.zeros(len(out["id"]), np.uint8))
    for group in ("walls", "contacts"):
        out[group] = {k.split("/", 1)[1]: v for k, v in data.items()
                      if k.startswith(group + "/")}
    out.update({k: head[k] for k in ("step", "time", "dt", "ranks", "box_lo", "box_hi",
                                     "scene")})
    return out
