"""A mesh's build (``pdyn.mesh.model``: weld, edges, adjacency) and the distance search
(``pdyn.mesh.grid.distances``) give the same arrays, bit for bit, as the slower code they
replaced, kept here as the oracle: ``np.unique`` of the rows, and the search that grew the
grid query's reach until it found a triangle. Their speed on 10⁶ triangles is
``benchmarks/mesh_startup.py``'s."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from pdyn.mesh import Mesh, grid_surface, pack, record_feature, tube_surface
from pdyn.mesh.grid import distances, query
from pdyn.mesh.model import _unique_pairs, weld


def _old_mesh_arrays(corners):
    """The welded vertices, triangles, edges and adjacency as ``Mesh`` built them before."""
    verts, inverse = np.unique(corners.reshape(-1, 3), axis=0, return_inverse=True)
    tri = inverse.reshape(-1, 3).astype(np.int64)
    t = tri.shape[0]
    a, b = tri, np.roll(tri, -1, axis=1)
    pairs = np.stack((np.minimum(a, b), np.maximum(a, b)), axis=2).reshape(-1, 2)
    edge_v, eid = np.unique(pairs, axis=0, return_inverse=True)
    tedge = eid.reshape(t, 3).astype(np.int64)

    def csr(keys, n, values):
        order = np.lexsort((values, keys))
        start = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(keys, minlength=n), out=start[1:])
        return start, values[order].astype(np.int64)

    estart, etri = csr(tedge.ravel(), len(edge_v), np.repeat(np.arange(t), 3))
    vstart, vtri = csr(tri.ravel(), len(verts), np.repeat(np.arange(t), 3))
    return {"verts": verts, "tri": tri, "edge_v": edge_v, "tedge": tedge, "estart": estart,
            "etri": etri, "vstart": vstart, "vtri": vtri}


def _surfaces():
    """Test meshes as corners (T, 3, 3): an irregular bumpy sheet, a drum, a random soup of
    triangles whose corners repeat (integer coordinates), one triangle."""
    v, t = grid_surface(23, 1.0, lift=lambda x, y: 0.3 * np.sin(3 * x) * y, jitter=0.3,
                        seed=4)
    v2, t2 = tube_surface(17, 0.5, 2.0, along=4)
    rng = np.random.default_rng(7)
    soup = rng.integers(-3, 4, (400, 3, 3)).astype(float)
    soup = soup[np.linalg.norm(np.cross(soup[:, 1] - soup[:, 0], soup[:, 2] - soup[:, 0]),
                               axis=1) > 0]
    return {"sheet": v[t], "drum": v2[t2] + 0.25, "soup": soup,
            "one": np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])}


@pytest.mark.parametrize("name", list(_surfaces()))
def test_weld_is_unique_of_the_rows(name):
    points = _surfaces()[name].reshape(-1, 3)
    verts, inverse = weld(points)
    old_verts, old_inverse = np.unique(points, axis=0, return_inverse=True)
    assert verts.tobytes() == old_verts.tobytes() and verts.shape == old_verts.shape
    assert np.array_equal(inverse, old_inverse.reshape(-1)) and inverse.dtype == np.int64


def test_weld_joins_signed_zeros_and_keeps_the_first():
    points = np.array([[0.0, 1.0, 2.0], [-0.0, 1.0, 2.0], [0.0, -1.0, 2.0]])
    verts, inverse = weld(points)
    assert inverse.tolist() == [1, 1, 0]
    assert np.signbit(verts[1, 0]) == np.signbit(points[0, 0])


def test_unique_pairs_are_unique_of_the_rows():
    rng = np.random.default_rng(3)
    lo = rng.integers(0, 50, 3000)
    hi = lo + rng.integers(0, 50, 3000)
    pairs, inverse = _unique_pairs(lo, hi, 100)
    old_pairs, old_inverse = np.unique(np.column_stack((lo, hi)), axis=0, return_inverse=True)
    assert np.array_equal(pairs, old_pairs) and np.array_equal(inverse, old_inverse.reshape(-1))


@pytest.mark.parametrize("name", list(_surfaces()))
def test_mesh_arrays_are_the_old_builds(name):
    corners = _surfaces()[name]
    mesh = Mesh(corners)
    for key, old in _old_mesh_arrays(corners).items():
        new = getattr(mesh, key)
        assert new.dtype == old.dtype and new.shape == old.shape, key
        assert new.tobytes() == old.tobytes(), key


@njit(cache=True)
def _old_distances(pos, mesh):
    """The distance search before: per mesh, grid queries of reach h, 2h, 4h, … until one
    finds a triangle; the nearest of those found."""
    n_tri = mesh.records.shape[0]
    mark = np.full(n_tri, -1, np.int64)
    buf = np.empty(n_tri, np.int64)
    out = np.empty(pos.shape[0])
    stamp = 0
    for i in range(pos.shape[0]):
        best = np.inf
        for m in range(mesh.gf.shape[0]):
            reach = mesh.gf[m, 3]
            while True:
                got = query(pos[i, 0], pos[i, 1], pos[i, 2], reach, m, mesh, mark, stamp, buf,
                            0)
                stamp += 1
                if got > 0:
                    for q in range(got):
                        d2 = record_feature(pos[i, 0], pos[i, 1], pos[i, 2], mesh.records,
                                            buf[q], np.inf)[4]
                        best = min(best, math.sqrt(d2))
                    break
                reach *= 2.0
                if reach > 1e300:
                    break
        out[i] = best
    return out


def test_distances_are_the_old_search_bit_for_bit():
    s = _surfaces()
    meshes = [Mesh(s["sheet"]), Mesh(s["drum"]), Mesh(s["soup"] * 0.2 + 5.0)]
    bundle = pack(meshes, [6, 7, 8])
    rng = np.random.default_rng(11)
    pos = np.concatenate((rng.uniform(-3.0, 8.0, (1500, 3)),  # near and far
                          meshes[0].verts[rng.integers(0, len(meshes[0].verts), 200)],
                          s["drum"].mean(axis=1)[:100],  # on faces
                          rng.uniform(-1e3, 1e3, (50, 3))))
    new, old = distances(pos, bundle), _old_distances(pos, bundle)
    assert new.tobytes() == old.tobytes()
    one = pack([meshes[1]], [7])
    assert distances(pos, one).tobytes() == _old_distances(pos, one).tobytes()


def test_gaps_pack_the_mesh_once():
    mesh = Mesh(_surfaces()["sheet"])
    pos = np.array([[0.1, 0.2, 0.5], [3.0, 0.0, 0.0]])
    first = mesh.gaps(pos)
    moved = mesh.moved(velocity=(0.0, 0.0, 1.0))
    assert moved.gaps(pos + [0.0, 0.0, 2.0], time=2.0).tobytes() == first.tobytes()
    assert len(mesh._alone) == 1 and moved._alone is mesh._alone
