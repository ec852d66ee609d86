"""``pdyn bench``: which broad-phase structure for which scene, measured.

Without ``--report``: Koch's table ([Koch2020] Sec. 4.1) for one scene — every structure runs
the same short simulation (round robin, same trajectory) and reports ms per step of the whole
step, of collision detection (the structure's update + query) and of the update alone,
candidate pairs per step (pairs handed to the exact test) and its memory; the peers a Python
user would reach for (``peers.py``) find the same contacts from scratch on the scene's positions.
With ``--report DIR``: every series (``report.py``), written as JSON, Markdown and PNG plots.
"""

from __future__ import annotations

from ..scenarios import make_scene
from . import peers as peer_functions
from .measure import from_scratch, simulations, structure_config

#: columns of Koch's table, in order (ms per step; peers: one from-scratch call)
COLUMNS = ["structure", "particles", "steps", "total_ms", "detect_ms", "update_ms",
           "candidates", "memory_MB", "note"]


def note(row: dict) -> str:
    """The last column of a table row: an error, a mismatch, or what ``auto`` chose."""
    if row.get("error"):
        return row["error"]
    if row.get("exact") is False:
        return "DIFFERENT CONTACTS"
    return f"-> {row['chosen']}" if row.get("chosen") else ""


def bench_scene(scene: str, scale: float, steps: int, methods, seed: int = 0,
                with_peers: bool = True, progress=None) -> list[dict]:
    """Rows of Koch's table for ``scene`` at ``scale``: one per structure in ``methods``, then
    one per installed peer (from scratch on the scene's positions; total and update "-")."""
    sc = make_scene(scene, scale=scale, seed=seed)
    rows = simulations(sc, methods, steps, extra=structure_config(), progress=progress)
    for r in rows:
        r["memory_MB"] = r["memory_bytes"] / 1e6 if r.get("memory_bytes") is not None else None
    if with_peers:
        for r in from_scratch(sc.positions, sc.radii, peers=peer_functions.available(),
                              progress=progress):
            rows.append({"structure": r["structure"], "particles": len(sc), "steps": 1,
                         "detect_ms": r.get("time_ms"), "candidates": r.get("candidates"),
                         "memory_MB": (r["rss_growth_bytes"] / 1e6
                                       if r.get("rss_growth_bytes") else None),
                         "error": r.get("error")})
    for r in rows:
        r["note"] = note(r)
    return rows


def format_table(rows: list[dict], columns: list[str] = COLUMNS) -> str:
    """Rows as a right-aligned text table (floats to 4 significant digits, missing as "-");
    also the table printer of ``benchmarks/``."""

    def fmt(v):
        return "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))

    w = [max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in columns]
    lines = ["  ".join(c.rjust(x) for c, x in zip(columns, w))]
    lines += ["  ".join(fmt(r.get(c)).rjust(x) for c, x in zip(columns, w)) for r in rows]
    return "\n".join(lines)
