"""The one random-operations harness of the broad-phase tests: random insert / remove /
re-insert / move / jump / resize operations on one or more structures, each checked against
``brute`` after every operation, plus the small checks every test shares."""

from __future__ import annotations

import numpy as np

from pdyn.broadphase import find_contacts, make_broadphase
from pdyn.broadphase._kernels import canonical_pairs, filter_overlapping

from .scenes import random_scene

OPS = ("insert", "remove", "move", "jump", "resize")


def assert_each_pair_once(pairs: np.ndarray) -> None:
    """No self pair and no pair twice (in either order)."""
    if pairs.shape[0] == 0:
        return
    assert np.all(pairs[:, 0] != pairs[:, 1]), "self pair"
    c = canonical_pairs(pairs)
    assert not np.any(np.all(c[1:] == c[:-1], axis=1)), "pair reported twice"


def contacts(bp, pos: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """The structure's candidates, checked to hold each pair once, after the exact test."""
    cand = bp.candidate_pairs()
    assert_each_pair_once(cand)
    return canonical_pairs(filter_overlapping(cand, pos, rad))


def expected(pos: np.ndarray, rad: np.ndarray, handles: np.ndarray) -> np.ndarray:
    """``brute``'s contacts among ``handles`` (the oracle), as pairs of handles."""
    e = find_contacts(pos[handles], rad[handles], method="brute")
    return canonical_pairs(handles[e]) if e.size else np.zeros((0, 2), np.int64)


def random_operations(structures, seed: int, steps: int = 25, family: str | None = None,
                      ops=OPS, cap: int = 400, batch: int = 60, drift: float = 0.1,
                      flow=(0.0, 0.0, 0.0), before=None, after=None) -> list:
    """Run ``steps`` random operations on every structure in ``structures`` (names or (name,
    params) pairs), all fed the same operations, and check each against brute after every one:
    candidates once each, only residents, exactly brute's contacts after the exact test.

    The scene is ``random_scene(seed, family)`` in a capacity-``cap`` array (spare rows placed
    in its bounding box with its radii); half of it is resident at the start. ``insert`` adds up
    to ``batch`` spare handles, ``remove`` takes up to ``batch`` residents (half of the time
    putting half of them straight back: migration there and back), ``move`` shifts everyone by
    ``drift`` diameters at most plus ``flow`` (a common drift), ``jump`` sends ~3 % of the
    particles far away and across zero, ``resize`` changes ~20 % of the radii by up to e^±1.
    ``before(bps)`` / ``after(bps)`` run around every operation (structure-specific
    invariants). Returns the structures.
    """
    rng = np.random.default_rng(10_000 + seed)
    _, pos0, rad0 = random_scene(seed, family)
    n0 = pos0.shape[0]
    cap = max(cap, n0 + batch)
    lo, hi = (pos0.min(axis=0), pos0.max(axis=0)) if n0 else (np.zeros(3), np.ones(3))
    pos = np.empty((cap, 3))
    rad = np.empty(cap)
    pos[:n0], rad[:n0] = pos0, rad0
    pos[n0:] = lo + rng.uniform(0, 1, (cap - n0, 3)) * (hi - lo)
    rad[n0:] = rng.choice(rad0 if n0 else np.ones(1), cap - n0)
    resident = np.zeros(cap, bool)
    resident[: n0 // 2] = True
    specs = [(s, {}) if isinstance(s, str) else s for s in structures]
    bps = [make_broadphase(name, **params) for name, params in specs]
    for bp in bps:
        bp.build(pos, rad, np.flatnonzero(resident))
    for step in range(steps):
        op = ops[int(rng.integers(len(ops)))]
        if before:
            before(bps)
        if op == "insert":
            free = np.flatnonzero(~resident)
            new = rng.choice(free, min(free.size, int(rng.integers(1, batch))), replace=False)
            for bp in bps:
                bp.insert(new)
            resident[new] = True
        elif op == "remove":
            res = np.flatnonzero(resident)
            gone = rng.choice(res, min(res.size, int(rng.integers(1, batch))), replace=False)
            back = gone[: gone.size // 2] if rng.random() < 0.5 else gone[:0]
            for bp in bps:
                bp.remove(gone)
                if back.size:
                    bp.insert(back)
            resident[gone] = False
            resident[back] = True
        elif op == "move":
            pos = pos + rng.uniform(-drift, drift, pos.shape) * (2 * rad)[:, None] + flow
            for bp in bps:
                bp.update(pos)
        elif op == "jump":
            far = rng.random(cap) < 0.03
            pos = pos.copy()
            pos[far] = -pos[far] * rng.uniform(1, 3, (int(far.sum()), 1))
            for bp in bps:
                bp.update(pos)
        elif op == "resize":
            rad = rad * np.exp(rng.uniform(-1, 1, cap) * (rng.random(cap) < 0.2))
            for bp in bps:
                bp.update(pos, rad)
        res = np.flatnonzero(resident)
        want = expected(pos, rad, res)
        for bp in bps:
            cand = bp.candidate_pairs()
            assert np.isin(cand, res).all(), f"{bp.name}: pair with a non-resident handle"
            assert_each_pair_once(cand)
            got = canonical_pairs(filter_overlapping(cand, pos, rad))
            np.testing.assert_array_equal(got, want, err_msg=f"{bp.name} step {step} op {op}")
        if after:
            after(bps)
    return bps
