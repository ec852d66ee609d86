"""The Markdown report of ``pdyn bench --report``: tables in the theses' layout, each with our
ranking beside the published one ([Koch2020], [Ihmsen2011], [Schornbaum2009]; ``theses.py``),
where they differ and why, and how ``auto`` did against the fastest structure."""

from __future__ import annotations

import math

from . import theses
from .measure import MORE_STEPS

#: how close ``auto`` must be to the fastest structure
AUTO_WITHIN = 1.2


def _f(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, int):
        return f"{v:,}".replace(",", " ")
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_f(c) for c in r) + " |" for r in rows]
    return out + [""]


def _mb(b):
    return None if b is None else b / 1e6


def ranking(rows: list[dict], key: str, among=None) -> list[str]:
    """Structures fastest first by ``key`` (restricted to ``among``); those that refused the
    scene or ran out of memory or time come last (slower than any measured one), those
    skipped by choice (brute above its size limit) not at all."""
    rows = [r for r in rows if among is None or r["structure"] in among]
    ok = [r for r in rows if not r.get("error") and r.get(key) is not None]
    failed = [r["structure"] for r in rows if r.get("error")
              and not r["error"].startswith("skipped")]
    return [r["structure"] for r in sorted(ok, key=lambda r: r[key])] + failed


def auto_ratio(rows: list[dict], key: str) -> tuple[float | None, str | None, str | None]:
    """(auto's time / the fastest other structure's, that structure, what auto chose)."""
    auto = next((r for r in rows if r["structure"] == "auto" and not r.get("error")), None)
    others = [r for r in rows if r["structure"] != "auto" and not r.get("error")
              and r.get(key) is not None]
    if auto is None or auto.get(key) is None or not others:
        return None, None, None
    best = min(others, key=lambda r: r[key])
    return auto[key] / best[key], best["structure"], auto.get("chosen")


def _order(names: list[str]) -> str:
    return " < ".join(f"`{n}`" for n in names) if names else "-"


def _compare(ours: list[str], published: list[str], why: str) -> list[str]:
    ours = [s for s in ours if s in published]
    same = ours == published[: len(ours)] and len(ours) == len(published)
    lines = [f"- published (fastest first): {_order(published)}",
             f"- ours, same structures: {_order(ours)} — "
             + ("**agrees**." if same else "**differs**.")]
    if why:
        lines.append(f"- why: {why}")
    return lines + [""]


# ------------------------------------------------------------------ sections
def _runs(res) -> list[str]:
    """Which run measured which series, when the report gathers several (``--series``)."""
    groups: dict[tuple, list[str]] = {}
    for s, r in res.get("runs", {}).items():
        if s in res:
            changed = "; ".join(f"{k} = {v['used']} (full run: {v['full']})"
                                for k, v in r["reduced"].items())
            groups.setdefault((r["command"], r["mode"], _day(r["date"]), changed), []).append(s)
    if len(groups) < 2:
        return []
    out = ["The series were measured in separate runs on this machine (compare ratios within "
           "a series, not times across series):", ""]
    for (command, mode, date, changed), names in groups.items():
        out.append(f"- {', '.join(names)}: `{command}` — {mode} run, {date}"
                   + (f"; sizes changed from the full run's: {changed}" if changed else "")
                   + ".")
    return out + [""]


def _day(date: str) -> str:
    """The day of a run's date (YYYY-MM-DD): tables are stamped with the day, not the hour."""
    return date.split(" ")[0]


def _header(res) -> list[str]:
    mb, ma = res["machine_before"], res.get("machine_after", {})
    missing = [s for s in res.get("series", []) if s not in res]
    took = (f"{res['seconds'] / 60:.1f} min" if "seconds" in res
            else "stopped before its end")
    return [
        "# Which broad-phase structure for which scene",
        "",
        f"`{res.get('command') or 'pdyn bench --report'}` — {res['mode']} run, "
        f"{_day(mb['date'])}, {took}."
        + (f" Series not measured: {', '.join(missing)}." if missing else ""),
        "",
        *_runs(res),
        f"Machine: {mb['cpu']}, {mb['cores']} cores, {mb['memory_GiB']} GiB, {mb['platform']}, "
        f"Python {mb['python']}. Load average (1, 5, 15 min) before: {mb['load_average']}, "
        f"after: {ma.get('load_average', '-')} — the machine was shared, so compare ratios "
        "within a table (same run, round robin), not absolute times across runs.",
        "",
        "Times are CPU time of the measuring process (all its threads; on a shared machine "
        "wall time also measures the neighbours' load): medians over the steps, best of the "
        "repeated calls from scratch; in Koch's scaling and Schornbaum's series, steps of the "
        "structures alone and calls from scratch are repeated until each structure's took "
        f"{res.get('sizes', {}).get('min_seconds', 0)} s in all (at most {MORE_STEPS} times as "
        "many), and the structures alone take turns in a new random order at every step. "
        "*total*: the whole simulation step; *detection*: the structure's update + candidate "
        "query; *update*: insert/remove/update/build alone; *candidates*: pairs handed to the "
        "exact sphere test per step (the same definition for "
        "every structure); *memory*: the structure's `memory_bytes`, for peers the peak "
        "resident-memory growth of one call (pair arrays included). Peers find the contacts "
        "from scratch each call (build + query + exact filter + sort), so their time compares "
        "with our *detection* on a static scene and with `find_contacts`.",
        "",
    ]


def _headline(h) -> list[str]:
    out = ["## Headline", ""]
    mono = h["monodisperse"]["rows"]
    kd = next((r for r in mono if r["structure"] == "scipy cKDTree" and "time_ms" in r), None)
    out.append(f"`find_contacts` on {_f(h['monodisperse']['particles'])} equal spheres "
               "(r = 0.5, solid fraction 0.3), from scratch, best of the repeated calls:")
    out.append("")
    rows = []
    for r in mono:
        ratio = kd["time_ms"] / r["time_ms"] if kd and r.get("time_ms") else None
        rows.append([r["structure"] + (f" (→ {r['chosen']})" if r.get("chosen") else ""),
                     r.get("time_ms"), ratio, r.get("contacts"), r.get("exact"),
                     r.get("error")])
    out += _table(["", "ms", "cKDTree / this", "contacts", "same pairs", "error"], rows)
    poly = h["very_polydisperse"]["rows"]
    a = next((r for r in poly if r["structure"] == "find_contacts default"), {})
    lc = next((r for r in poly if r["structure"] == "linked_cells"), {})
    out.append(f"`very_polydisperse` at scale {h['very_polydisperse']['scale']} "
               f"({_f(h['very_polydisperse']['particles'])} spheres, one spanning the box):")
    out.append("")
    ratio = lc["time_ms"] / a["time_ms"] if a.get("time_ms") and lc.get("time_ms") else None
    out += _table(["", "ms", "candidates", "linked_cells / this", "error"],
                  [[f"find_contacts default (→ {a.get('chosen')})", a.get("time_ms"),
                    a.get("candidates"), ratio, a.get("error")],
                   ["linked_cells", lc.get("time_ms"), lc.get("candidates"), 1.0 if ratio else
                    None, lc.get("error")]])
    out += ["Both test pairs while they emit them (no candidate list). Linked cells' cells are "
            "as wide as the giant, so it tests ~N²/2 pairs and the ratio grows with N: "
            "`python benchmarks/giant_among_small.py` measures it at growing sizes.", ""]
    return out


def _auto_rows(res) -> tuple[list, list]:
    """(rows for the scenes: Koch's seven and the full step; rows for the scaling series):
    [what, time, auto chose, fastest other, ratio, within AUTO_WITHIN]."""

    def row(what, key_name, rows, key):
        ratio, best, ch = auto_ratio(rows, key)
        return [what, key_name, ch, best, ratio, None if ratio is None else ratio <= AUTO_WITHIN]

    scenes, series = [], []
    for scene, d in res.get("koch_scenes", {}).items():
        scenes += [row(f"Koch {scene}", "total", d["rows"], "total_ms"),
                   row(f"Koch {scene}", "detection", d["rows"], "detect_ms")]
    for variant, rs in res.get("full_step", {}).get("variants", {}).items():
        scenes.append(row(f"full step, {variant}", "total", rs, "total_ms"))
    for variant, sizes in res.get("schornbaum", {}).items():
        series += [row(f"Schornbaum {variant}, N = {_f(s['particles'])}", "step", s["steps"],
                       "step_ms") for s in sizes]
    for s in res.get("koch_scaling", {}).get("rows", []):
        n = _f(s["particles"])
        series.append(row(f"Koch scaling N = {n}", "step", s["steps"], "step_ms"))
        series.append(row(f"Koch scaling N = {n}", "from scratch",
                          [r for r in s["from_scratch"] if r.get("kind") == "pdyn"], "time_ms"))
    return scenes, series


def _auto_summary(res) -> list[str]:
    scenes, series = _auto_rows(res)
    if not scenes and not series:
        return []
    out = ["## `auto` against the fastest structure", "",
           "Ratio = auto's time / the fastest other structure's, same run (auto runs one of "
           "them, so a ratio above 1 is its statistics' overhead, noise, or a wrong pick).", ""]
    for title, rows in (("Koch's scenes and the full step", scenes),
                        ("Scaling series (structures alone)", series)):
        ok = [r[5] for r in rows if r[5] is not None]
        itself = sum(1 for r in rows if r[5] is False and r[2] == r[3])
        if rows:
            out += [f"{title}: {sum(ok)} of {len(ok)} within {AUTO_WITHIN}x"
                    + (f"; in {itself} of the misses auto ran the fastest structure itself "
                       "(the same code on the same input: noise of the shared machine, or "
                       "the statistics' cost, on steps or calls of a millisecond or less)"
                       if itself else "") + ".", ""]
            out += _table(["", "time", "auto chose", "fastest other", "ratio",
                           f"≤ {AUTO_WITHIN}x"], rows)
    return out


def _koch_scenes(ks) -> list[str]:
    out = ["## Koch's scenes ([Koch2020] Sec. 4.1, Tables 1-7)", "",
           "One simulation per structure, same scene and trajectory, ms per step; peers on the "
           "scene's positions. ![detection time per scene](koch_scenes.png)", ""]
    for scene, d in ks.items():
        table, published = theses.KOCH_SCENES[scene]
        out.append(f"### `{scene}` (Table {table}): {_f(d['particles'])} particles "
                   f"(scale {d['scale']}), {d['steps']} steps")
        out.append("")
        rows = [[r["structure"], r.get("total_ms"), r.get("detect_ms"), r.get("update_ms"),
                 r.get("candidates"), _mb(r.get("memory_bytes")),
                 _note(r)] for r in d["rows"]]
        rows += [[r["structure"], None, r.get("time_ms"), None, r.get("candidates"),
                  _mb(r.get("rss_growth_bytes")), _note(r) or "peer, from scratch"]
                 for r in d["peers"]]
        out += _table(["structure", "total ms", "detection ms", "update ms", "candidates",
                       "memory MB", "note"], rows)
        ours = ranking(d["rows"], "total_ms")
        out.append(f"Our ranking by total time (all structures; refused or out of memory "
                   f"last): {_order(ours)}.")
        out.append("")
        out.append(f"Koch's Table {table} ranking by total time:")
        out += _compare(ours, theses.published_order(published), theses.KOCH_WHY.get(scene))
        if scene == "reference":
            out.append("[Ihmsen2011] Table 2 ranking (SPH fluid, total time per step):")
            out += _compare(ranking(d["rows"], "detect_ms"),
                            theses.published_order(theses.IHMSEN_TABLE2, 2), theses.IHMSEN_WHY)
    return out


def _note(r) -> str:
    if r.get("error"):
        return r["error"]
    if r.get("exact") is False:
        return "DIFFERENT CONTACTS"
    return f"→ {r['chosen']}" if r.get("chosen") else ""


def _slope(points: list[tuple[float, float]]) -> float | None:
    pts = [(math.log(n), math.log(t)) for n, t in points if t]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def _koch_scaling(sc) -> list[str]:
    out = ["## Koch's particle-count scaling ([Koch2020] Sec. 4.2, Tables 8-10)", "",
           f"N spheres r = {sc['radius']} at random in a {sc['box']:g}³ box (overlaps allowed, "
           "static). *build*: build + first query; *step*: update + query (the candidates' exact "
           "test included, so every structure yields the same pairs); *from scratch*: "
           "`find_contacts` (build + query + exact filter + sort) and the peers on the same "
           "positions. ![time vs N](koch_scaling.png)", ""]
    names = []
    for s in sc["rows"]:
        for r in s["steps"] + s["from_scratch"]:
            if r["structure"] not in names:
                names.append(r["structure"])
    rows = []
    for name in names:
        cells = []
        for s in sc["rows"]:
            st = next((r for r in s["steps"] if r["structure"] == name), {})
            fs = next((r for r in s["from_scratch"] if r["structure"] == name), {})
            t = fs.get("time_ms")
            cells.append(f"{_f(t)} / {_f(st.get('step_ms'))}" if st or t else "-")
        rows.append([name] + cells)
    out.append("ms from scratch / ms per static step:")
    out.append("")
    out += _table(["structure"] + [_f(s["particles"]) for s in sc["rows"]], rows)
    mem = [[name] + [_mb(next((r.get("memory_bytes") for r in s["steps"]
                                if r["structure"] == name), None)) for s in sc["rows"]]
           for name in names if any(r["structure"] == name for s in sc["rows"]
                                    for r in s["steps"])]
    out.append("Memory (MB; [Koch2020] Table 11 measured 35-300 MiB for its hash grid and "
               "80-1200 MiB for its octree at 0.5-8·10⁶ particles):")
    out.append("")
    out += _table(["structure"] + [_f(s["particles"]) for s in sc["rows"]], mem)
    rows = []
    for name in names:
        pts = [(s["particles"], next((r.get("time_ms") for r in s["from_scratch"]
                                      if r["structure"] == name), None)) for s in sc["rows"]]
        rows.append([name, _slope(pts), theses.KOCH_EXPONENTS.get(name)])
    out.append("Fitted exponent b of time ∝ N^b (from scratch), beside Koch's (Sec. 4.2.3; the "
               "hash grid's from Table 10):")
    out.append("")
    out += _table(["structure", "ours", "Koch"], rows)
    last = sc["rows"][-1]
    ours = ranking(last["steps"], "step_ms", among=theses.KOCH_SCALING)
    out.append(f"At N = {_f(last['particles'])}: Koch's tables have the hash grid ahead up to "
               "~10⁶ particles and the octree ahead from 2.56·10⁶ (his 128³ hash grid "
               f"saturates); ours: {_order(ours)}. Our hash grid doubles its grids as N grows "
               "(≤ 1/5 object per cell), so it does not saturate.")
    return out + [""]


def _schornbaum(sb) -> list[str]:
    out = ["## Schornbaum's constant-density scaling ([Schornbaum2009] Sec. 4.1, 4.5)", "",
           "Periodic cube, density for ~2 overlaps per object, N grows with the box; ms per "
           "step (update + query + exact test of the candidates), median. "
           "![step time vs N](schornbaum.png)", ""]
    for variant, sizes in sb.items():
        names = []
        for s in sizes:
            for r in s["steps"] + s.get("from_scratch", []):
                if r["structure"] not in names:
                    names.append(r["structure"])
        rows = []
        for name in names:
            cells = []
            for s in sizes:
                r = next((r for r in s["steps"] + s.get("from_scratch", [])
                          if r["structure"] == name), {})
                cells.append(r.get("error") or r.get("step_ms", r.get("time_ms")))
            rows.append([name] + cells)
        out.append(f"### {variant}")
        out.append("")
        out += _table(["structure"] + [f"N = {_f(s['particles'])}" for s in sizes], rows)
        published, text = theses.SCHORNBAUM[variant]
        ours = ranking(sizes[-1]["steps"], "step_ms")
        out.append(f"Ours at N = {_f(sizes[-1]['particles'])} (all): {_order(ours)}.")
        out.append("")
        # compared at the largest N where every published structure ran (brute stops early)
        at = next((s for s in sizes[::-1] if set(published) <= set(ranking(s["steps"],
                                                                          "step_ms"))),
                  sizes[-1])
        out.append(f"{text} (ours at N = {_f(at['particles'])}):")
        out += _compare(ranking(at["steps"], "step_ms"), published,
                        theses.SCHORNBAUM_WHY.get(variant, ""))
    return out


def _update(us) -> list[str]:
    out = ["## Update strategies ([Schornbaum2009] Sec. 4.3, Fig. 25)", "",
           f"{_f(us['particles'])} objects, Schornbaum's scene; ms per step (median).", ""]
    for variant, rows in us["variants"].items():
        out.append(f"### {variant}")
        out.append("")
        out += _table(["structure / strategy", "update ms", "query ms", "step ms", "note"],
                      [[r["structure"], r.get("update_ms"), r.get("query_ms"),
                        r.get("step_ms"), _note(r)] for r in rows])
    out.append(f"Published: {theses.SCHORNBAUM_UPDATE}. Ours, step time of the incremental "
               "strategy / the rebuilding one (below 1: incremental faster):")
    out.append("")
    rows = []
    for name, (incremental, rebuild) in theses.UPDATE_COMPARED.items():
        ratios = [_ratio(us["variants"][v], incremental, rebuild) for v in us["variants"]]
        rows.append([name, *ratios, theses.UPDATE_WHY.get(name, "")])
    out += _table(["structure", *us["variants"], "where it differs from Fig. 25, and why"],
                  rows)
    return out


def _ratio(rows, a, b) -> float | None:
    """step time of row ``a`` / row ``b`` (None if either is missing)."""
    ta, tb = (next((r.get("step_ms") for r in rows if r["structure"] == x), None)
              for x in (a, b))
    return ta / tb if ta and tb else None


def _full_step(fs) -> list[str]:
    out = ["## The full time step (`gas` scene)", "",
           f"{_f(fs['particles'])} spheres, periodic elastic gas, {fs['steps']} steps per "
           "structure; ms per step (median). ![full step](full_step.png)", ""]
    if not fs["neighbour_lists"]:
        out.append("This build has no neighbour lists (`SimulationConfig.neighbour_skin` does "
                   "not exist), so only the step without them is measured.")
        out.append("")
    for variant, rows in fs["variants"].items():
        out.append(f"### {variant}")
        out.append("")
        out += _table(["structure", "total ms", "detection ms", "update ms", "candidates",
                       "note"], [[r["structure"], r.get("total_ms"), r.get("detect_ms"),
                                  r.get("update_ms"), r.get("candidates"), _note(r)]
                                 for r in rows])
    table, published = theses.KOCH_SCENES["reference"]
    for variant, rows in fs["variants"].items():
        out.append(f"{variant}: our ranking by total time: {_order(ranking(rows, 'total_ms'))}. "
                   f"Koch's Table {table} (his homogeneous monodisperse scene, the whole step):")
        out += _compare(ranking(rows, "total_ms"), theses.published_order(published),
                        theses.FULL_STEP_WHY.get(variant, ""))
    lam = fs.get("lammps", {})
    if lam.get("error"):
        out.append(f"LAMMPS: {lam['error']}.")
    elif lam.get("rows"):
        out.append(f"Against LAMMPS (`python {lam['command']}`; pdyn with its defaults), ns "
                   "per particle-step:")
        out.append("")
        out += _table(["ranks", "particles", "pdyn", "LAMMPS", "pdyn / LAMMPS"],
                      [[r["ranks"], r["particles"], r.get("pdyn_ns"), r.get("lammps_ns"),
                        r.get("ratio")] for r in lam["rows"]])
        if lam.get("note"):
            out.append(lam["note"])
    return out + [""]


def write_markdown(res: dict, path) -> None:
    """The whole report as Markdown at ``path``."""
    lines = _header(res)
    if "headline" in res:
        lines += _headline(res["headline"])
    lines += _auto_summary(res)
    if "koch_scenes" in res:
        lines += _koch_scenes(res["koch_scenes"])
    if "koch_scaling" in res:
        lines += _koch_scaling(res["koch_scaling"])
    if "schornbaum" in res:
        lines += _schornbaum(res["schornbaum"])
    if "update_strategies" in res:
        lines += _update(res["update_strategies"])
    if "full_step" in res:
        lines += _full_step(res["full_step"])
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
