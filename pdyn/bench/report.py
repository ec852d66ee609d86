"""``pdyn bench --report DIR``: the series of the source theses, for every structure and the
peers, in one run; writes ``DIR/report.json``, ``DIR/report.md`` (``markdown.py``) and PNG plots
(``plots.py``).

Series (sizes: ``QUICK`` / ``FULL``):

* ``koch_scenes`` — [Koch2020] Sec. 4.1: the seven scenes (``reference`` ... ``very_polydisperse``,
  checkerboard included), a short simulation per structure (``measure.simulations``) and the
  peers from scratch on the same positions;
* ``koch_scaling`` — Sec. 4.2: N = 10⁴ · 2^k spheres r = 0.5 in a 1024³ box, overlaps allowed,
  static: build, then update + query (``measure.trajectory``); every structure and peer from
  scratch (``measure.from_scratch``);
* ``schornbaum`` — [Schornbaum2009] Sec. 4.1, 4.5: constant density (~2 overlaps per object,
  periodic cube), each object moving up to 20 % or 1 % of its size per step, or 10⁵ times
  smaller objects (no contacts); N = 10³ ... ;
* ``update_strategies`` — Sec. 4.3: incremental update against rebuild (``hash_grid``,
  ``octree``; ``zindex_sort`` insertion against merge re-sort; ``compact_hash`` against
  ``spatial_hash``) at 20 % motion and when every object changes cell every step;
* ``full_step`` — the whole time step on the ``gas`` scene (LAMMPS' comparison scene) for every
  structure without neighbour lists (skin 0) and, where this build has them
  (``SimulationConfig.neighbour_skin``), with the default skin; LAMMPS through
  ``benchmarks/vs_lammps.py`` where that file and the ``lammps`` package exist;
* ``headline`` — the ``find_contacts`` default against ``cKDTree.query_pairs`` + exact filter on
  equal spheres (solid fraction 0.3, r = 0.5), and against ``linked_cells`` on
  ``very_polydisperse``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ..broadphase import REGISTRY
from ..scenarios import make_scene
from . import peers as peer_functions
from .measure import from_scratch, simulations, structure_config, structure_specs, trajectory
from .timing import isolated, machine

KOCH_SCENE_NAMES = ("reference", "inhomogeneous", "very_inhomogeneous", "checkerboard",
                    "polydisperse", "more_polydisperse", "very_polydisperse")

#: sizes of the quick run (a few minutes on 2 cores)
QUICK = {
    "koch_scale": 0.05, "koch_scale_checkerboard": 0.01, "koch_steps": 6,
    "koch_sizes": [10_000, 20_000, 40_000, 80_000], "scaling_steps": 3,
    "schornbaum_sizes": [1_000, 10_000, 30_000], "schornbaum_steps": 5,
    "update_size": 10_000, "update_steps": 5,
    "gas_scale": 0.1, "gas_steps": 10,
    "headline_n": 100_000, "headline_poly_scale": 0.1,
    "repeat": 2, "budget": 10.0, "peer_timeout": 10.0, "peers": None, "mem_gib": 4.0,
    "min_seconds": 0.01,
}
#: sizes of the full run ([Koch2020]'s scene sizes; up to 10⁶ particles)
FULL = {
    "koch_scale": 1.0, "koch_scale_checkerboard": 1.0, "koch_steps": 16,
    "koch_sizes": [10_000 * 2**k for k in range(7)], "scaling_steps": 3,
    "schornbaum_sizes": [1_000, 10_000, 100_000, 1_000_000], "schornbaum_steps": 5,
    "update_size": 100_000, "update_steps": 6,
    "gas_scale": 1.0, "gas_steps": 20,
    "headline_n": 1_000_000, "headline_poly_scale": 1.0,
    "repeat": 3, "budget": 40.0, "peer_timeout": 20.0, "peers": None, "mem_gib": 8.0,
    "min_seconds": 0.05,
}


class Progress:
    """A tqdm bar over the measurements of the run (or nothing)."""

    def __init__(self, enabled: bool, total: int):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="meas", dynamic_ncols=True, mininterval=0.5)

    def section(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_description(text[:40])

    def __call__(self, label: str = "") -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(label[:30], refresh=False)
            self.bar.update(1)

    def advance(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def available_peers(p) -> dict:
    """The installed peers, or those of them named in ``p["peers"]``."""
    have = peer_functions.available()
    return {k: f for k, f in have.items() if p.get("peers") is None or k in p["peers"]}


class Peers:
    """The peers of a series, minus those that already failed or ran out of time at a smaller
    size (they are not tried again at larger ones)."""

    def __init__(self, p):
        self.p = p
        self.failed: set[str] = set()

    def __call__(self) -> dict:
        return {k: f for k, f in available_peers(self.p).items() if k not in self.failed}

    def note(self, rows) -> list:
        self.failed |= {r["structure"] for r in rows if r.get("kind") == "peer"
                        and r.get("error")}
        return rows


def uniform_spheres(n: int, solid_fraction: float = 0.3, radius: float = 0.5, seed: int = 0):
    """``n`` random centres (overlaps allowed) in a cube sized for the solid fraction."""
    rng = np.random.default_rng(seed)
    edge = (n * 4 / 3 * np.pi * radius**3 / solid_fraction) ** (1 / 3)
    return rng.uniform(0, edge, (n, 3)), np.full(n, radius)


# ------------------------------------------------------------------ the series
def koch_scenes(p, names, progress) -> dict:
    out = {}
    for scene in KOCH_SCENE_NAMES:
        progress.section(f"Koch {scene}")
        scale = p["koch_scale_checkerboard"] if scene == "checkerboard" else p["koch_scale"]
        sc = make_scene(scene, scale=scale)
        # round robin step by step: a burst of load hits every structure alike
        rows = _limited(p, progress, len(names) * 2, simulations, sc, names, p["koch_steps"],
                        structure_config(), p["koch_steps"], p["budget"])
        peers = from_scratch(sc.positions, sc.radii, peers=available_peers(p),
                             repeat=p["repeat"], timeout=p["peer_timeout"], progress=progress)
        out[scene] = {"scale": scale, "particles": len(sc), "steps": p["koch_steps"],
                      "rows": rows, "peers": peers}
    return out


def _limited(p, progress, count, fn, *args) -> list[dict]:
    """``fn(*args)`` (a measurement returning rows) in a forked child limited to
    ``p["mem_gib"]`` GiB of extra memory: a structure that would pair everything with
    everything (a dense grid on ``very_polydisperse``) runs out of memory inside the child
    and is reported, instead of exhausting the shared machine."""
    rows = isolated(fn, *args, mem_gib=p["mem_gib"], timeout=3600)
    progress.advance(count)
    if isinstance(rows, dict):  # the child itself failed
        raise RuntimeError(f"{fn.__name__}: {rows['error']}")
    return rows


def _static(pos):
    return pos


def koch_scaling(p, names, progress) -> dict:
    progress.section("Koch scaling")
    rng = np.random.default_rng(0)
    out = []
    specs = structure_specs(names)
    peers = Peers(p)
    for n in p["koch_sizes"]:
        pos = rng.uniform(0, 1024, (n, 3))
        rad = np.full(n, 0.5)
        steps = _limited(p, progress, len(specs), trajectory, pos, rad, specs, _static,
                         p["scaling_steps"], p["budget"], None, p["min_seconds"])
        scratch = peers.note(from_scratch(pos, rad, specs, peers(), repeat=p["repeat"],
                                          timeout=p["peer_timeout"], progress=progress,
                                          min_seconds=p["min_seconds"]))
        out.append({"particles": n, "steps": steps, "from_scratch": scratch})
        specs = _within_budget(specs, steps, p["budget"])
    return {"box": 1024.0, "radius": 0.5, "rows": out}


def _within_budget(specs, rows, budget):
    """Drop structures that will not finish the next (doubled) size within ``budget``."""
    slow = {r["structure"] for r in rows
            if r.get("error") or (r.get("build_ms") or 0) + 3 * (r.get("step_ms") or 0)
            > 1e3 * budget / 3}
    return [s for s in specs if s[0] not in slow]


SCHORNBAUM_VARIANTS = {"motion 20 %": (1.0, 1.0), "motion 1 %": (0.05, 1.0),
                       "tiny, no contacts": (0.05, 1e-5)}


def _schornbaum_motion(sc, speed):
    L = sc.box_hi - sc.box_lo
    vel = sc.velocities * speed

    def move(pos):
        return np.mod(pos + vel, L)

    return move


def schornbaum(p, names, progress) -> dict:
    out = {}
    for variant, (speed, size) in SCHORNBAUM_VARIANTS.items():
        progress.section(f"Schornbaum {variant}")
        specs = structure_specs(names)
        peers = Peers(p)
        rows = []
        for n in p["schornbaum_sizes"]:
            sc = make_scene("schornbaum", scale=n / 10_000)
            rad = sc.radii * size
            steps = _limited(p, progress, len(specs), trajectory, sc.positions, rad, specs,
                             _schornbaum_motion(sc, speed), p["schornbaum_steps"], p["budget"],
                             None, p["min_seconds"])
            row = {"particles": len(sc), "steps": steps}
            if variant == "motion 20 %":
                row["from_scratch"] = peers.note(from_scratch(
                    sc.positions, rad, peers=peers(), repeat=p["repeat"],
                    timeout=p["peer_timeout"], progress=progress))
            rows.append(row)
            specs = _within_budget(specs, steps, p["budget"])
        out[variant] = rows
    return out


UPDATE_PAIRS = [
    ("hash_grid incremental", "hash_grid", {"update": "incremental"}),
    ("hash_grid rebuild", "hash_grid", {"update": "rebuild"}),
    ("octree incremental", "octree", {"update": "incremental"}),
    ("octree rebuild", "octree", {"update": "rebuild"}),
    ("zindex_sort insertion", "zindex_sort", {"resort": "insertion"}),
    ("zindex_sort merge", "zindex_sort", {"resort": "merge"}),
    ("compact_hash (moves changed)", "compact_hash", {}),
    ("spatial_hash (rebuilds)", "spatial_hash", {}),
]


def update_strategies(p, names, progress) -> dict:
    progress.section("update strategies")
    sc = make_scene("schornbaum", scale=p["update_size"] / 10_000)
    L = sc.box_hi - sc.box_lo
    rng = np.random.default_rng(1)
    specs = [s for s in UPDATE_PAIRS if s[1] in names]

    def jump(pos):  # every object changes cell: 1-2 diameters in a random direction
        d = rng.normal(size=pos.shape)
        d *= (rng.uniform(1.0, 2.0, pos.shape[0]) * 2.0 * sc.radii
              / np.linalg.norm(d, axis=1))[:, None]
        return np.mod(pos + d, L)

    out = {}
    for variant, move in (("motion 20 %", _schornbaum_motion(sc, 1.0)),
                          ("every object changes cell", jump)):
        out[variant] = _limited(p, progress, len(specs), trajectory, sc.positions, sc.radii,
                                specs, move, p["update_steps"], p["budget"])
    return {"particles": len(sc), "variants": out}


def _vs_lammps(p) -> dict:
    """LAMMPS against pdyn on the gas scene through ``benchmarks/vs_lammps.py`` (looked for in
    the current folder, then beside the package: a checkout)."""
    where = [Path.cwd(), Path(__file__).resolve().parents[2]]
    script = next((w / "benchmarks" / "vs_lammps.py" for w in where
                   if (w / "benchmarks" / "vs_lammps.py").exists()), None)
    if script is None:
        return {"error": "benchmarks/vs_lammps.py not found (run from the checkout's folder)"}
    with_json = Path(f"/tmp/pdyn-vs-lammps-{int(time.time() * 1e3)}.json")
    cmd = [sys.executable, str(script), "--ranks", "1", "--rounds", "1", "--scale",
           str(p["gas_scale"]), "--steps", str(p["gas_steps"] * 5), "--json", str(with_json)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"error": "vs_lammps.py took more than 30 min"}
    if r.returncode != 0 or not with_json.exists():
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"vs_lammps.py failed: {tail[:200]}"}
    data = json.loads(with_json.read_text())
    with_json.unlink()
    note = next((line for line in r.stdout.splitlines() if "lammps not usable" in line), None)
    return {"rows": data.get("rows", []), "note": note, "command": " ".join(cmd[1:])}


def full_step(p, names, progress) -> dict:
    progress.section("full step")
    sc = make_scene("gas", scale=p["gas_scale"])
    variants = {"no neighbour lists (skin 0)": structure_config(0.0)}
    if structure_config(None):  # this build has neighbour lists: its default skin
        variants["neighbour lists (default skin)"] = structure_config(None)
    names = [n for n in names if n not in ("brute", "sweep_prune")]
    out = {name: _limited(p, progress, 2 * len(names), simulations, sc, names, p["gas_steps"],
                          extra, p["gas_steps"], p["budget"]) for name, extra in variants.items()}
    return {"particles": len(sc), "steps": p["gas_steps"], "variants": out,
            "neighbour_lists": len(variants) > 1, "lammps": _vs_lammps(p)}


def headline(p, progress) -> dict:
    progress.section("headline")
    pos, rad = uniform_spheres(p["headline_n"])
    mono = from_scratch(pos, rad, [("find_contacts default", "auto", {}),
                                   ("index_sort", "index_sort", {}),
                                   ("linked_cells", "linked_cells", {}),
                                   ("zindex_sort", "zindex_sort", {}),
                                   ("hash_grid", "hash_grid", {})],
                        available_peers(p), repeat=p["repeat"],
                        timeout=p["peer_timeout"], progress=progress)
    sc = make_scene("very_polydisperse", scale=p["headline_poly_scale"])
    poly = from_scratch(sc.positions, sc.radii,
                        [("find_contacts default", "auto", {}),
                         ("linked_cells", "linked_cells", {"max_candidates": 1 << 40})],
                        repeat=1, mem_gib=12.0, timeout=1800, isolate_structures=True,
                        progress=progress)
    return {"monodisperse": {"particles": p["headline_n"], "solid_fraction": 0.3,
                             "radius": 0.5, "rows": mono},
            "very_polydisperse": {"particles": len(sc), "scale": p["headline_poly_scale"],
                                  "rows": poly}}


def warm_up(names) -> None:
    """Compile, in this process, every kernel the series will use (each structure's build,
    update, query and contacts paths, the update strategies, walls, periodic ghosts), before
    any measuring child is forked: numba compiling inside a forked child can fail."""
    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 8, (400, 3))
    rad = rng.uniform(0.2, 0.5, 400)
    specs = structure_specs(names) + [s for s in UPDATE_PAIRS if s[1] in names]
    trajectory(pos, rad, specs, lambda q: q + 0.05, 2)
    from_scratch(pos, rad, specs, repeat=1)
    for scene in ("box", "gas"):
        simulations(make_scene(scene, scale=0.01), names, 2, extra=structure_config())


SERIES = ("headline", "koch_scenes", "koch_scaling", "schornbaum", "update_strategies",
          "full_step")


def run(folder, quick: bool = True, series=SERIES, structures=None, progress: bool = True,
        command: str = "", sizes: dict | None = None) -> dict:
    """Run ``series`` (quick or full sizes, entries of ``sizes`` overriding them) and write
    JSON, Markdown and plots to ``folder``; returns the results."""
    from .markdown import write_markdown
    from .plots import write_plots

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    p = {**(QUICK if quick else FULL), **(sizes or {})}
    names = list(structures or REGISTRY)
    started = time.perf_counter()
    mode = "quick" if quick else "full"
    results = {"mode": mode, "sizes": p, "command": command,
               "machine_before": machine(), "structures": names,
               "peers": sorted(available_peers(p)), "series": list(series)}
    kept = kept_series(folder, series)
    this = {"command": command, "mode": mode, "date": results["machine_before"]["date"],
            "reduced": {k: {"used": p[k], "full": FULL.get(k)} for k in sorted(sizes or {})
                        if p[k] != FULL.get(k)}}
    results["runs"] = {**kept.pop("runs"), **{s: this for s in series}}
    results["series"] = [s for s in SERIES if s in results["runs"]]
    results.update(kept)
    warm_up(names)
    bar = Progress(progress, total=_count(p, names, series, len(results["peers"])))
    funcs = {"koch_scenes": koch_scenes, "koch_scaling": koch_scaling, "schornbaum": schornbaum,
             "update_strategies": update_strategies, "full_step": full_step}
    try:
        for s in series:
            results[s] = headline(p, bar) if s == "headline" else funcs[s](p, names, bar)
            (folder / "report.json").write_text(json.dumps(results, indent=1, default=str))
    finally:
        bar.close()
    results["machine_after"] = machine()
    results["seconds"] = time.perf_counter() - started
    (folder / "report.json").write_text(json.dumps(results, indent=1, default=str))
    return render(folder, results)


def kept_series(folder, series) -> dict:
    """The series of an earlier run in ``folder/report.json`` that this run (of ``series``) does
    not measure again, with ``runs``: series -> the run that measured it (command, mode, date,
    ``reduced``: the size entries it changed, used and full), so one report can gather
    series measured in separate runs (``--series``)."""
    path = Path(folder) / "report.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    keep = [s for s in SERIES if s in old and s not in series]
    runs = old.get("runs") or {s: {"command": old.get("command", ""), "mode": old.get("mode"),
                                   "date": old.get("machine_before", {}).get("date"),
                                   "reduced": {}} for s in keep}
    return {"runs": {s: runs[s] for s in keep if s in runs}, **{s: old[s] for s in keep}}


def render(folder, results: dict | None = None) -> dict:
    """Write ``folder/report.md`` and the plots from ``results`` (default: read from
    ``folder/report.json``, so a report can be rewritten without measuring again)."""
    from .markdown import write_markdown
    from .plots import write_plots

    folder = Path(folder)
    if results is None:
        results = json.loads((folder / "report.json").read_text())
    results["plots"] = write_plots(results, folder)
    write_markdown(results, folder / "report.md")
    return results


def _count(p, names, series, peers) -> int:
    """Measurements the progress bar counts (approximately)."""
    k = len(names)
    n = {"headline": 7 + peers, "koch_scenes": 7 * (k * 2 + peers),
         "koch_scaling": len(p["koch_sizes"]) * (2 * k + peers),
         "schornbaum": 3 * len(p["schornbaum_sizes"]) * k + len(p["schornbaum_sizes"]) * peers,
         "update_strategies": 2 * len(UPDATE_PAIRS), "full_step": 4 * k}
    return sum(n[s] for s in series)
