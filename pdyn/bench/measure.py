"""The measurements ``pdyn bench`` is made of, each comparing several structures on the same input
in one run (round robin, so a burst of load on the shared machine hits all of them):

* :func:`simulations` — a short simulation per structure, the same scene and trajectory
  ([Koch2020] Sec. 4.1: total, collision detection and update time, candidate pairs, memory);
* :func:`trajectory` — the structures alone on a given motion (build, then update + query per
  step; [Koch2020] Sec. 4.2, [Schornbaum2009] Sec. 4);
* :func:`from_scratch` — ``find_contacts`` and the peers (``peers.py``) on the same positions.

Times are CPU seconds of the process (``timing.clock``); per-step figures are medians over the
steps, from-scratch figures the best of the repeated calls (a burst of load on the shared
machine only ever makes a call slower).
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..broadphase import REGISTRY, BroadPhaseError, canonical_pairs, filter_overlapping
from ..broadphase import make_broadphase
from ..assembly import build
from ..config import OutputConfig, SimulationConfig
from ..parallel import get_comm
from ..simulation import Simulation
from .timing import Stopwatch, clock, isolated

#: structures that would need O(N²) time or memory above this many particles are skipped
BRUTE_MAX = 3000
#: :func:`trajectory` takes at most this many times the steps asked for (short steps)
MORE_STEPS = 40


def _error(exc: Exception) -> str:
    """One line for the table: what went wrong (a refusal, or memory)."""
    if isinstance(exc, MemoryError):
        return "out of memory (the measurement's limit)"
    return str(exc).splitlines()[0][:120]


def _median(xs) -> float | None:
    return float(np.median(xs)) if len(xs) else None


def _ms(x):
    return None if x is None else 1e3 * x


def pairs_digest(pairs: np.ndarray) -> str:
    """Short fingerprint of a sorted pair list (compares answers without keeping them)."""
    return hashlib.blake2b(np.ascontiguousarray(pairs, np.int64).tobytes(),
                           digest_size=8).hexdigest()


def config_fields() -> set[str]:
    """The fields this build's ``SimulationConfig`` knows (series pass optional ones, e.g.
    ``neighbour_skin``, only where they exist)."""
    return {f.name for f in dataclasses.fields(SimulationConfig)}


def structure_config(skin: float | None = 0.0) -> dict:
    """Config fields for measuring structures: neighbour-list skin ``skin`` where this build
    has neighbour lists (0: the structure finds the contacts at every step; None: the default
    skin), else nothing."""
    return {"neighbour_skin": skin} if "neighbour_skin" in config_fields() else {}


def chosen(bp) -> str | None:
    """What ``auto`` picked (None for any other structure)."""
    return getattr(bp, "chosen", None)


# ------------------------------------------------------------------ simulations
def simulations(scene, structures, steps: int, extra: dict | None = None, rounds: int = 2,
                budget: float = 60.0, progress=None) -> list[dict]:
    """Every structure in ``structures`` runs the same simulation of ``scene`` (a
    ``Scene``) for ``steps`` steps, in ``rounds`` round-robin blocks (``rounds = steps``:
    one step of each structure in turn); ``extra`` are further
    ``SimulationConfig`` fields (default: neighbour-list skin 0, so the structure finds the
    contacts at every step). A structure whose steps so far took more than ``budget``
    seconds stops early (its medians cover the steps it ran). Row per structure: ms per step
    (median) of the whole step (``total_ms``), of the broad phase (``detect_ms`` = ``update_ms``
    + ``query_ms``), candidates per step, ``memory_bytes``, contacts per step (checked equal
    across structures), or ``error``."""
    extra = {**structure_config(0.0), **(extra or {})}
    base = dict(scene=scene.name, steps=steps, progress=False, output=OutputConfig())
    runs, rows = {}, {}
    for name in structures:
        if name == "brute" and len(scene) > BRUTE_MAX:
            rows[name] = {"structure": name, "error": f"skipped (N > {BRUTE_MAX})"}
            continue
        try:
            parts = build(SimulationConfig(broadphase=name, **base, **extra), get_comm(), scene)
        except (BroadPhaseError, MemoryError) as exc:
            rows[name] = {"structure": name, "error": _error(exc)}
            continue
        sim = Simulation(parts=parts._replace(broadphase=Stopwatch(parts.broadphase)))
        runs[name] = {"sim": sim, "total": [], "update": [], "query": [], "cand": [],
                      "contacts": [], "spent": 0.0}
    per_round = max(1, -(-steps // rounds))
    for r in range(rounds):
        for name in list(runs):
            run = runs[name]
            sim, sw = run["sim"], run["sim"].broadphase
            for _ in range(min(per_round, steps - r * per_round)):
                if run["spent"] > budget:
                    break
                u0, q0 = sw.seconds["update"], sw.seconds["query"]
                t0 = clock()
                try:
                    sim.step()
                except (BroadPhaseError, MemoryError) as exc:
                    rows[name] = {"structure": name, "error": _error(exc)}
                    del runs[name]
                    break
                dt = clock() - t0
                run["spent"] += dt
                run["total"].append(dt)
                run["update"].append(sw.seconds["update"] - u0)
                run["query"].append(sw.seconds["query"] - q0)
                run["cand"].append(sw.stats()["candidates"])
                run["contacts"].append(int(sim.n_contacts))
            if progress:
                progress(name)
    ref = None
    for name, run in runs.items():
        sim = run["sim"]
        upd, qry = _median(run["update"]), _median(run["query"])
        row = {
            "structure": name, "particles": len(scene), "steps": len(run["total"]),
            "total_ms": _ms(_median(run["total"])),
            "detect_ms": _ms(_median(np.add(run["update"], run["query"]))),
            "update_ms": _ms(upd), "query_ms": _ms(qry),
            "candidates": int(np.median(run["cand"])) if run["cand"] else None,
            "memory_bytes": int(sim.broadphase.stats()["memory_bytes"]),
            "contacts": run["contacts"][-1] if run["contacts"] else None,
            "chosen": chosen(sim.broadphase),
        }
        if ref is None or len(run["contacts"]) > len(ref):
            ref = run["contacts"]
        rows[name] = row
    for name, run in runs.items():  # same trajectory: same contacts at every step
        rows[name]["exact"] = run["contacts"] == ref[: len(run["contacts"])]
    return [rows[n] for n in structures if n in rows]


# ------------------------------------------------------------------ structures alone
def _query(bp, pos, rad) -> np.ndarray:
    """``bp``'s candidate pairs that pass the exact sphere test: the query of
    :func:`trajectory`, the same answer from every structure (``hash_grid`` and ``brute`` test
    inside ``candidate_pairs``, the others' candidates are tested here)."""
    pairs = bp.candidate_pairs()
    return pairs if bp.filters else filter_overlapping(pairs, pos, rad)


def trajectory(pos0, rad, structures, move, steps: int, budget: float = 60.0,
               progress=None, min_seconds: float = 0.0) -> list[dict]:
    """Every structure in ``structures`` ((label, name, params) triples) is built on ``pos0``
    and then follows the same motion: ``steps`` times ``pos = move(pos)``, then ``update`` and
    the query of each structure in turn (in a new random order at every step: a structure that
    always followed the same one would always find the cache as that one left it), its
    candidate pairs and their exact sphere test
    (:func:`_query`), so every structure's query yields the same pairs and the times compare.
    Steps of a millisecond or less are noisy: more steps are taken, up to ``MORE_STEPS`` times
    ``steps``, until every structure has stepped ``min_seconds`` in all.
    Row per structure: ``build_ms`` (build + first query), medians of ``update_ms``,
    ``query_ms``, ``step_ms``, candidates per step,
    ``memory_bytes``, and whether its exact pairs after the last step agree with the first
    structure's (``exact``), or ``error``. A structure whose time so far exceeds ``budget``
    seconds stops early."""
    rows, live = {}, {}
    for label, name, params in structures:
        if name == "brute" and rad.shape[0] > BRUTE_MAX:
            rows[label] = {"structure": label, "error": f"skipped (N > {BRUTE_MAX})"}
            continue
        bp = make_broadphase(name, **params)
        t0 = clock()
        try:
            bp.build(pos0, rad)
            _query(bp, pos0, rad)
        except (BroadPhaseError, MemoryError) as exc:
            rows[label] = {"structure": label, "error": _error(exc)}
            continue
        t = clock() - t0
        live[label] = {"bp": bp, "build": t, "update": [], "query": [], "cand": [], "spent": t,
                       "pairs": None, "last": -1}
        if progress:
            progress(label)
    pos = pos0.copy()
    step, labels, shuffle = 0, list(live), np.random.default_rng(0)
    while step < steps or (step < MORE_STEPS * steps and any(
            sum(run["update"]) + sum(run["query"]) < min_seconds for run in live.values())):
        pos = move(pos)
        for k in shuffle.permutation(len(labels)):
            label = labels[k]
            run = live.get(label)
            if run is None or run["spent"] > budget:
                continue
            bp = run["bp"]
            try:
                t0 = clock()
                bp.update(pos)
                t1 = clock()
                touching = _query(bp, pos, rad)
                t2 = clock()
            except (BroadPhaseError, MemoryError) as exc:
                rows[label] = {"structure": label, "error": _error(exc)}
                del live[label]
                continue
            run["update"].append(t1 - t0)
            run["query"].append(t2 - t1)
            run["spent"] += t2 - t0
            run["cand"].append(bp.stats()["candidates"])
            run["pairs"], run["last"] = touching, step
        step += 1
    for run in live.values():  # the pairs after the last step (None: stopped before it)
        done = run["pairs"] is not None and run["last"] == step - 1
        run["pairs"] = pairs_digest(canonical_pairs(run["pairs"])) if done else None
    ref = next((r["pairs"] for r in live.values() if r["pairs"] is not None), None)
    for label, run in live.items():
        bp = run["bp"]
        rows[label] = {
            "structure": label, "particles": int(rad.shape[0]), "steps": len(run["update"]),
            "build_ms": _ms(run["build"]), "update_ms": _ms(_median(run["update"])),
            "query_ms": _ms(_median(run["query"])),
            "step_ms": _ms(_median(np.add(run["update"], run["query"]))),
            "candidates": int(np.median(run["cand"])) if run["cand"] else None,
            "memory_bytes": int(bp.stats()["memory_bytes"]), "chosen": chosen(bp),
            "exact": None if run["pairs"] is None else run["pairs"] == ref,
        }
    return [rows[label] for label, _, _ in structures if label in rows]


# ------------------------------------------------------------------ from scratch
def _time_calls(fn, repeat: int, min_seconds: float = 0.0) -> dict:
    """Best time of ``repeat`` calls of ``fn() -> (pairs, candidates)`` after one warm-up
    call (more calls, up to ``MORE_STEPS`` times ``repeat``, until they took ``min_seconds``
    in all: calls of a few milliseconds are noisy), with the peak resident-memory growth of
    the first call."""
    from .timing import peak_rss_bytes

    rss0 = peak_rss_bytes()
    pairs, cand = fn()
    grown = peak_rss_bytes() - rss0
    times = []
    while len(times) < repeat or (sum(times) < min_seconds
                                  and len(times) < MORE_STEPS * repeat):
        t0 = clock()
        pairs, cand = fn()
        times.append(clock() - t0)
    return {"time_ms": _ms(min(times)), "candidates": int(cand),
            "contacts": int(pairs.shape[0]), "digest": pairs_digest(pairs),
            "rss_growth_bytes": int(max(grown, 0))}


def _for_one_query(method, params):
    """The structure ``find_contacts(..., method, **params)`` builds."""
    return make_broadphase(method, **({"usage": "once", **params} if method == "auto"
                                      else params))


def _structure_call(pos, rad, method, params):
    """``find_contacts(pos, rad, method, **params)`` with the candidates it tested."""
    bp = _for_one_query(method, params).build(pos, rad)
    pairs = canonical_pairs(bp.contacts())
    return pairs, bp.stats()["candidates"]


def from_scratch(pos, rad, structures=(), peers=None, repeat: int = 3, mem_gib: float = 4.0,
                 timeout: float = 300.0, isolate_structures: bool = False,
                 progress=None, min_seconds: float = 0.0) -> list[dict]:
    """Time ``find_contacts`` (build + query + exact filter + canonical sort) for each
    (label, name, params) in ``structures`` and each peer of ``peers`` (name -> function,
    ``peers.available()``) on the same positions. Peers run in a memory-limited child
    process (``timing.isolated``): their memory column is the child's peak resident-memory
    growth during one call (pair arrays included); structures report ``memory_bytes``.
    ``timeout`` is seconds per call (a child gets ``repeat + 1`` times as long, warm-up
    included); calls shorter than ``min_seconds / repeat`` are repeated more often
    (:func:`_time_calls`). ``exact`` says whether the answer equals the first row's."""
    rows = []
    timeout = timeout * (repeat + 1)
    for label, name, params in structures:
        if name == "brute" and rad.shape[0] > BRUTE_MAX:
            continue
        fn = (lambda m=name, p=params: _structure_call(pos, rad, m, p))
        row = (isolated(_time_calls, fn, repeat, min_seconds, mem_gib=mem_gib, timeout=timeout)
               if isolate_structures else _guarded(_time_calls, fn, repeat, min_seconds))
        if "error" not in row:
            bp = _for_one_query(name, params).build(pos, rad)
            bp.contacts()
            row["memory_bytes"] = int(bp.stats()["memory_bytes"])
            row["chosen"] = chosen(bp)
        rows.append({"structure": label, "kind": "pdyn", **row})
        if progress:
            progress(label)
    for name, fn in (peers or {}).items():
        row = isolated(_time_calls, (lambda f=fn: f(pos, rad)), repeat, min_seconds,
                       mem_gib=mem_gib, timeout=timeout,
                       rows_for=(Exception,))  # the peer's failure: a row
        rows.append({"structure": name, "kind": "peer", **row})
        if progress:
            progress(name)
    ref = next((r["digest"] for r in rows if "digest" in r), None)
    for r in rows:
        if "digest" in r:
            r["exact"] = r["digest"] == ref
    return rows


def _guarded(fn, *args) -> dict:
    try:
        return fn(*args)
    except (BroadPhaseError, MemoryError) as exc:
        return {"error": _error(exc)}


def structure_specs(names=None) -> list[tuple[str, str, dict]]:
    """(label, name, params) for every registered structure (or ``names``)."""
    return [(n, n, {}) for n in (names or REGISTRY)]
