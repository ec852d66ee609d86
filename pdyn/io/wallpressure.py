"""Wall pressure maps in snapshots (``[output] wall_pressure``): every step's wall contacts
summed per patch (``pdyn.fields.wallstress``, exact), averaged over the steps since the last
snapshot and written into the snapshot's walls block:

* ``walls/pressure/vertices`` (V, 3) m, ``walls/pressure/triangles`` (T, 3) rows of them: the
  patches drawn as triangles at the snapshot's time (``pdyn.fields.wallpatches``: a plane's
  grid cells clipped to its polygon in the box, a cylinder's or cone's (angle, axial)
  quadrilaterals, a mesh's own triangles);
* per triangle: ``walls/pressure/wall`` its wall's id, ``walls/pressure/patch`` its patch
  (numbered over the walls in id order), ``walls/pressure/area`` the patch's area (m²),
  ``walls/pressure/normal_stress`` the patch's mean normal stress (Pa, > 0 pressing on the
  wall), ``walls/pressure/shear_stress`` (3) its mean shear traction on the wall (Pa);
* the attribute ``pressure_samples``: the steps averaged.

The window of a snapshot at step s is the steps after the previous snapshot up to s (a
restart at a snapshot step continues the maps bit for bit; elsewhere the first window
starts at the restart, as ``pressure_samples`` says). The patch layout is each sample's
walls; a wall that moves changes only patches it sweeps (a piston along its normal, a
plane sliding in itself, a turning drum keep theirs)."""

from __future__ import annotations

import numpy as np

from ..fields.wallpatches import patch_surface, wall_patches
from ..fields.wallstress import sample, stresses
from ..wallkinds import KIND, PLANE
from ..walls import WallSet
from .writer import Writer


def plane_points(table, points, normals) -> np.ndarray:
    """``points`` with each plane's replaced by the plane's point nearest the origin, (p·n̂) n̂:
    the same while the plane slides in itself (m)."""
    out = np.array(points, float)
    for w in np.flatnonzero(table[:, KIND] == PLANE):
        n = normals[w] / np.linalg.norm(normals[w])
        out[w] = float(out[w] @ n) * n
    return out


def _walls(view):
    """(table, points, normals) of the view's walls in id order (−1, −2, …)."""
    store = view.store
    w = store.walls
    w = w[np.argsort(-store.gid[w], kind="stable")]
    table = (view.wall_table if view.wall_table is not None
             else WallSet(store.pos[w], store.normal[w]).table)
    return table, store.pos[w], store.normal[w], store.gid[w]


class WallPressureSampler(Writer):
    """Samples the wall contacts of every step into patch sums; :meth:`take` gives a
    snapshot its maps and starts the next window. ``patches`` (nu, nv) per analytic wall."""

    name = "wall_pressure"
    needs = frozenset({"walls", "wall_patches"})

    def __init__(self, patches):
        self.patches = tuple(int(k) for k in patches)
        self._sums, self._samples = None, 0
        self._key, self._walls = None, None  # the last layout and the walls it is of

    def due(self, step: int) -> bool:
        return True

    def _layout(self, view):
        """The walls' patches now; the last ones while the walls' rows have not changed (a
        mesh's patches do not change as it moves, nor a plane's as it slides in itself: a
        plane is cut from its point nearest the origin)."""
        table, points, normals, _ = _walls(view)
        points = plane_points(table, points, normals)
        key = (table.tobytes(), points.tobytes(), normals.tobytes())
        if key != self._key:
            self._key = key
            self._walls = wall_patches(table, points, normals, view.box.lo, view.box.hi,
                                       view.wall_meshes, self.patches)
        return self._walls

    def __call__(self, view) -> None:
        sums = sample(view.comm, self._layout(view), view.wall_load)
        if self._sums is None or self._sums.shape != sums.shape:
            self._sums = sums
        else:
            self._sums = self._sums + sums
        self._samples += 1

    def take(self, view) -> tuple[dict, int]:
        """The snapshot's ``walls/pressure/*`` datasets (module docstring) of the window that
        ends now, and its samples; starts the next window."""
        table, points, normals, ids = _walls(view)
        walls = self._layout(view)
        points = plane_points(table, points, normals)
        verts, tris, patch = patch_surface(walls, table, points, normals, view.box.lo,
                                           view.box.hi, view.time, view.wall_meshes)
        area = np.concatenate([w.area for w in walls])
        n = self._samples
        mean = self._sums / n if n and self._sums.shape[0] == len(area) \
            else np.zeros((len(area), 4))
        normal, shear = stresses(mean, area)
        owner = np.repeat(ids, [w.count for w in walls])
        self._sums, self._samples = None, 0
        return {"walls/pressure/vertices": verts, "walls/pressure/triangles": tris,
                "walls/pressure/wall": owner[patch], "walls/pressure/patch": patch,
                "walls/pressure/area": area[patch],
                "walls/pressure/normal_stress": normal[patch],
                "walls/pressure/shear_stress": shear[patch]}, n


__all__ = ["WallPressureSampler"]
