"""PNG plots of ``pdyn bench --report`` (matplotlib, Agg backend): log-log time against N per
structure and peer (Koch's and Schornbaum's scaling series), bar charts of detection time per
Koch scene, and the full step per structure. Without matplotlib no plot is written."""

from __future__ import annotations

from pathlib import Path

PEER_STYLE = {"linestyle": "--", "marker": "s"}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _series(groups, key_steps, key_scratch=None):
    """name -> ([N], [ms]) from a list of {"particles", "steps", "from_scratch"}."""
    out = {}
    for g in groups:
        for r in g.get("steps", []):
            if r.get(key_steps) is not None and not r.get("error"):
                out.setdefault(r["structure"], ([], []))
                out[r["structure"]][0].append(g["particles"])
                out[r["structure"]][1].append(r[key_steps])
        for r in g.get("from_scratch", []) if key_scratch else []:
            if r.get("kind") == "peer" and r.get(key_scratch) is not None:
                out.setdefault(r["structure"], ([], []))
                out[r["structure"]][0].append(g["particles"])
                out[r["structure"]][1].append(r[key_scratch])
    return out


def _loglog(plt, series, peers, title, ylabel, path):
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for name, (n, t) in sorted(series.items()):
        style = PEER_STYLE if name in peers else {"marker": "o"}
        ax.loglog(n, t, label=name, lw=2.2 if name == "auto" else 1.2, **style)
    ax.set_xlabel("particles N")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _scaling_scratch(groups):
    """name -> ([N], [ms]) of the from-scratch times (structures and peers)."""
    out = {}
    for g in groups:
        for r in g.get("from_scratch", []):
            if r.get("time_ms") is not None:
                out.setdefault(r["structure"], ([], []))
                out[r["structure"]][0].append(g["particles"])
                out[r["structure"]][1].append(r["time_ms"])
    return out


def write_plots(res: dict, folder) -> list[str]:
    """Write every plot the results allow into ``folder``; returns the file names."""
    plt = _pyplot()
    if plt is None:
        return []
    folder = Path(folder)
    peers = set(res.get("peers", []))
    written = []
    if "koch_scaling" in res:
        _loglog(plt, _scaling_scratch(res["koch_scaling"]["rows"]), peers,
                "Koch 4.2: spheres in a 1024³ box, find contacts from scratch",
                "ms per call", folder / "koch_scaling.png")
        written.append("koch_scaling.png")
    if "schornbaum" in res:
        groups = res["schornbaum"].get("motion 20 %", [])
        _loglog(plt, _series(groups, "step_ms", "time_ms"), peers,
                "Schornbaum 4.1: constant density, 20 % motion (peers: from scratch)",
                "ms per step", folder / "schornbaum.png")
        written.append("schornbaum.png")
    if "koch_scenes" in res:
        scenes = res["koch_scenes"]
        fig, axes = plt.subplots(2, 4, figsize=(15, 7))
        for ax, (scene, d) in zip(axes.flat, scenes.items()):
            rows = [(r["structure"], r["detect_ms"]) for r in d["rows"]
                    if r.get("detect_ms") is not None]
            rows += [(r["structure"], r["time_ms"]) for r in d["peers"]
                     if r.get("time_ms") is not None]
            names = [n for n, _ in rows]
            colors = ["tab:red" if n == "auto" else "tab:gray" if n in peers else "tab:blue"
                      for n in names]
            ax.barh(names, [t for _, t in rows], color=colors)
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
            ax.set_title(f"{scene} ({d['particles']})", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.set_xlabel("ms (detection per step; peers from scratch)", fontsize=7)
        for ax in list(axes.flat)[len(scenes):]:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(folder / "koch_scenes.png", dpi=100)
        plt.close(fig)
        written.append("koch_scenes.png")
        for scene, d in scenes.items():  # one chart per scene as well
            fig, ax = plt.subplots(figsize=(6, 4))
            rows = [r for r in d["rows"] if r.get("total_ms") is not None]
            names = [r["structure"] for r in rows]
            ax.barh(names, [r["total_ms"] for r in rows], label="total", color="tab:blue")
            ax.barh(names, [r["detect_ms"] for r in rows], label="detection",
                    color="tab:orange")
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
            ax.set_xlabel("ms per step")
            ax.set_title(f"Koch {scene}: {d['particles']} particles")
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(folder / f"scene_{scene}.png", dpi=100)
            plt.close(fig)
            written.append(f"scene_{scene}.png")
    if "full_step" in res:
        fig, ax = plt.subplots(figsize=(7, 4))
        variants = res["full_step"]["variants"]
        width = 0.8 / max(len(variants), 1)
        for k, (variant, rows) in enumerate(variants.items()):
            rows = [r for r in rows if r.get("total_ms") is not None]
            ax.barh([i + k * width for i in range(len(rows))], [r["total_ms"] for r in rows],
                    height=width, label=variant)
            if k == 0:
                ax.set_yticks(range(len(rows)), [r["structure"] for r in rows])
        ax.set_xlabel("ms per step")
        ax.set_title(f"full step, gas scene ({res['full_step']['particles']} spheres)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(folder / "full_step.png", dpi=100)
        plt.close(fig)
        written.append("full_step.png")
    return written
