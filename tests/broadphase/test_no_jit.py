"""The plain-Python debug mode works: with ``NUMBA_DISABLE_JIT=1`` (read when numba is
imported, so in a fresh interpreter) a short scene runs, and every structure builds, removes,
inserts, updates and answers exactly."""

import os
import subprocess
import sys

STRUCTURES = """
import numba
import numpy as np
from pdyn.broadphase import REGISTRY, make_broadphase
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping

assert numba.config.DISABLE_JIT
rng = np.random.default_rng(0)
pos = rng.uniform(0, 4, (70, 3))
rad = rng.uniform(0.1, 0.5, 70)
rad[0] = np.inf  # a wall among them
res = np.r_[np.arange(1, 60)[np.arange(1, 60) % 4 != 0], np.arange(60, 70), 0]
moved = pos + rng.normal(0, 0.2, pos.shape)
i, j = np.triu_indices(res.size, 1)
a, b = res[i], res[j]
d = moved[a] - moved[b]
s = rad[a] + rad[b]
hit = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2] <= s * s
want = canonical_pairs(np.stack((a[hit], b[hit]), axis=1))
for name in REGISTRY:
    params = {"activation_threshold": 0} if name == "hash_grid" else {}
    bp = make_broadphase(name, **params).build(pos, rad, np.arange(60))
    bp.remove(np.arange(0, 60, 4))
    bp.insert(np.r_[np.arange(60, 70), 0])
    bp.update(moved)
    got = canonical_pairs(filter_overlapping(bp.candidate_pairs(), moved, rad))
    assert np.array_equal(got, want), name
print("structures ok")
"""


def _run(args, tmp_path):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, *args], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_structure_without_jit(tmp_path):
    assert "structures ok" in _run(["-c", STRUCTURES], tmp_path)


def test_a_short_scene_without_jit(tmp_path):
    out = _run(["-m", "pdyn", "run", "--scene", "box", "--scale", "0.05", "--steps", "5",
                "--broadphase", "hash_grid", "--no-progress", "--snapshot-every", "0",
                "--output", str(tmp_path / "run")], tmp_path)
    assert "5 steps" in out
