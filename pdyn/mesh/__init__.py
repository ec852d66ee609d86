"""Triangle-mesh walls, one module per job:

* :mod:`~pdyn.mesh.geometry` — the sphere–triangle geometry, written once: closest feature
  (face, edge, vertex) from a triangle's packed record, the one-contact-per-feature rule
  ([KremmerFavier2001], [Su2011]) and the pass that gives each list entry its normal and
  overlap at a step;
* :mod:`~pdyn.mesh.frame` — a mesh's frame: rotation, a centre into the frame, a normal back;
* :mod:`~pdyn.mesh.grid` — the uniform grid over a mesh's triangles (the lists' query);
* :mod:`~pdyn.mesh.model` — :class:`Mesh`: welded triangles, adjacency, motion, frame, grid;
* :mod:`~pdyn.mesh.bundle` — :func:`pack`: all meshes of a run as one :class:`MeshBundle`;
* :mod:`~pdyn.mesh.place` — where a mesh's arrays live (this process, or one copy per node);
* :mod:`~pdyn.mesh.shapes` — test surfaces (:func:`grid_surface`, :func:`tube_surface`,
  :func:`box_surface`).

``docs/walls.md`` says how mesh walls work; ``pdyn.walls`` holds the wall table a mesh is one
row of.
"""

from .bundle import MeshBundle, pack
from .frame import frames, in_frame, rotation, to_body, to_world
from .geometry import (EDGE, EPS, FACE, NONE, VERTEX, contact_geometry, entry_homes,
                       record_feature)
from .grid import candidates
from .model import Mesh, MeshError, corners_of
from .shapes import box_surface, grid_surface, tube_surface

__all__ = ["Mesh", "MeshError", "corners_of", "MeshBundle", "pack", "frames", "rotation",
           "in_frame", "to_body", "to_world", "FACE", "EDGE", "VERTEX", "NONE", "EPS",
           "record_feature", "contact_geometry", "entry_homes", "candidates", "grid_surface",
           "tube_surface", "box_surface"]
