"""Command line: ``pdyn run [CONFIG.toml] [options]``, ``pdyn scenes``.

A thin layer over :class:`pdyn.config.SimulationConfig`: options override the TOML file, which
overrides the defaults. Bad input is one line on stderr naming the field and the value, exit
code 2, and nothing is written. Under ``mpiexec`` an exception on any rank aborts every rank.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

EXIT_USAGE = 2
DEFAULT_SNAPSHOT_EVERY = 500


class CLIError(ValueError):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pdyn", description="Particle dynamics of spheres with "
                                "pluggable broad-phase structures (MPI-parallel).")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a simulation (default: the built-in 'drop' scene)")
    run.add_argument("config", nargs="?", help="TOML config file (optional)")
    run.add_argument("--scene", help="built-in scene name (see 'pdyn scenes')")
    run.add_argument("--scale", type=float, help="scale the scene's particle count")
    run.add_argument("--steps", type=int, help="number of time steps")
    run.add_argument("--dt", type=float, help="time step in s (default: contact time / 20)")
    run.add_argument("--broadphase", help="broad-phase structure name")
    run.add_argument("--seed", type=int, help="seed of the scene generator")
    run.add_argument("--blocks", type=int, nargs=3, metavar=("BX", "BY", "BZ"),
                     help="block grid of the MPI decomposition (default: ~4 blocks per rank)")
    run.add_argument("--output", help="output folder (default: pdyn-output)")
    run.add_argument("--snapshot-every", type=int,
                     help=f"snapshot interval in steps, 0 = none (default {DEFAULT_SNAPSHOT_EVERY})")
    run.add_argument("--checkpoint-every", type=int,
                     help="checkpoint interval in steps, 0 = none (default 0)")
    run.add_argument("--restart", metavar="CHECKPOINT",
                     help="continue from a checkpoint file (or the newest one of a run folder); "
                     "--steps then counts further steps")
    run.add_argument("--overwrite", action="store_true", help="replace an existing run's output")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_parser("scenes", help="list the built-in scenes")
    info = sub.add_parser("info", help="print what a snapshot or checkpoint file holds")
    info.add_argument("file", help="snapshot or checkpoint (.h5)")
    render = sub.add_parser("render", help="PNG of a snapshot (needs the 'vtk' package)")
    render.add_argument("file", help="snapshot or checkpoint (.h5), or a run folder (its newest "
                        "snapshot)")
    render.add_argument("-o", "--out", help="PNG file (default: FILE with .png)")
    render.add_argument("--color", choices=("speed", "radius", "rank"), default="speed",
                        help="colour the spheres by (default: speed)")
    render.add_argument("--size", type=int, nargs=2, metavar=("W", "H"), default=(1200, 900))
    bench = sub.add_parser(
        "bench", help="which broad phase for which scene: Koch's table for one scene, or the "
        "whole report (--report)",
        description="Without --report: every broad-phase structure runs the same short "
        "simulation of one scene (Koch's table: ms per step of the whole step, of collision "
        "detection and of the update, candidate pairs, memory) beside the peers a Python user "
        "would reach for. With --report DIR: the series of the source theses for every "
        "structure and peer, written as JSON, Markdown and PNG plots.")
    bench.add_argument("--scene", default="reference",
                       help="built-in scene of the single table (default: reference)")
    bench.add_argument("--scale", type=float, default=0.1,
                       help="scale of the scene's particle count (default: 0.1)")
    bench.add_argument("--steps", type=int, default=20,
                       help="simulation steps per structure (default: 20)")
    bench.add_argument("--structures", nargs="+", metavar="NAME",
                       help="subset of structures (default: all registered, 'auto' included)")
    bench.add_argument("--no-peers", action="store_true",
                       help="leave out scipy / matscipy / freud (single table only)")
    bench.add_argument("--json", metavar="FILE", help="also write the table's rows as JSON")
    bench.add_argument("--report", metavar="DIR",
                       help="run every series and write DIR/report.json, DIR/report.md and "
                       "PNG plots")
    bench.add_argument("--quick", action="store_true",
                       help="with --report: small sizes (a few minutes on 2 cores) instead "
                       "of the theses' sizes (about an hour)")
    bench.add_argument("--series", nargs="+", metavar="NAME",
                       help="with --report: only these series (headline, koch_scenes, "
                       "koch_scaling, schornbaum, update_strategies, full_step)")
    bench.add_argument("--render-only", action="store_true",
                       help="with --report: rewrite report.md and the plots from "
                       "DIR/report.json without measuring again")
    bench.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _output_options(args) -> dict:
    """The ``[output]`` fields set on the command line (other than the folder)."""
    out = {}
    if args.snapshot_every is not None:
        out["snapshot_every"] = args.snapshot_every
    if args.checkpoint_every is not None:
        out["checkpoint_every"] = args.checkpoint_every
    if args.overwrite:
        out["overwrite"] = True
    return out


def build_config(args):
    """Merge defaults, the TOML file and the command-line options into a validated config."""
    from .config import OutputConfig, SimulationConfig, load_config

    cfg = load_config(args.config) if args.config else SimulationConfig(
        output=OutputConfig(snapshot_every=DEFAULT_SNAPSHOT_EVERY))
    changes = {}
    for opt, key in (("scene", "scene"), ("scale", "scale"), ("steps", "steps"), ("dt", "dt"),
                     ("broadphase", "broadphase"), ("seed", "seed")):
        v = getattr(args, opt)
        if v is not None:
            changes[key] = v
    if args.blocks is not None:
        changes["blocks"] = tuple(args.blocks)
    if args.no_progress:
        changes["progress"] = False
    out = {}
    if args.output is not None:
        out["folder"] = args.output
    out.update(_output_options(args))
    if out:
        from dataclasses import replace

        changes["output"] = replace(cfg.output, **out)
    return cfg.with_(**changes) if changes else cfg


def check_output_folder(cfg) -> None:
    """Fail before anything is written if the output folder is unusable or holds a run."""
    from .config import ConfigError

    out = cfg.output
    if not (out.snapshot_every or out.checkpoint_every):
        return
    folder = Path(out.folder)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"output.folder = {out.folder!r}: exists and is not a folder")
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"output.folder = {out.folder!r}: not writable")
    if any((folder / sub).exists() and any((folder / sub).iterdir())
           for sub in ("snapshots", "checkpoints")):
        if not out.overwrite:
            raise ConfigError(f"output.folder = {out.folder!r}: holds an earlier run "
                              "(use --overwrite to replace it)")


def clear_output_folder(cfg) -> None:
    folder = Path(cfg.output.folder)
    if not cfg.output.overwrite:
        return
    for sub in ("snapshots", "checkpoints"):
        if (folder / sub).exists():
            shutil.rmtree(folder / sub)
    (folder / "snapshots.xmf").unlink(missing_ok=True)


def _print_summary(s: dict, out) -> None:
    chosen = f" -> {s['chosen']}" if s.get("chosen") else ""
    print(f"pdyn: scene {s['scene']!r}: {s['particles']} particles, {s['ranks']} rank(s), "
          f"broad phase {s['broadphase']}{chosen}", file=out)
    print(f"  {s['steps']} steps of dt = {s['dt']:.4g} s -> t = {s['time']:.4g} s in "
          f"{s['wall_seconds']:.2f} s wall ({s['steps_per_second']:.0f} steps/s)", file=out)
    print(f"  contacts at the end: {s['contacts']}, kinetic energy: {s['kinetic_energy']:.6g} J",
          file=out)
    total = sum(s["timers"].values()) or 1.0
    phases = ", ".join(f"{k} {v / total:.0%}" for k, v in
                       sorted(s["timers"].items(), key=lambda kv: -kv[1]))
    print(f"  time per phase: {phases}", file=out)
    if s.get("output"):
        print(f"  output: {s['output']}", file=out)


def _output_note(sim, cfg) -> str | None:
    """Where the run's files went, or why there are none."""
    if not sim.writers:
        return None
    n = sum(len(getattr(w, "written", ())) for w in sim.writers)
    folder = str(Path(cfg.output.folder).resolve())
    if n == 0:
        return (f"nothing written to {folder} (the run ended before the first snapshot or "
                "checkpoint; lower --snapshot-every)")
    return f"{n} file(s) in {folder}"


def _chosen(sim, comm) -> str | None:
    """What ``auto`` picked on each rank ("zindex_sort", or "index_sort on 3 ranks, zindex_sort
    on 1"); None for any other structure."""
    picks = comm.gather(getattr(sim.broadphase, "chosen", None))
    if comm.rank != 0 or picks is None or picks[0] is None:
        return None
    counts = {p: picks.count(p) for p in dict.fromkeys(picks)}
    if len(counts) == 1:
        return picks[0]
    return ", ".join(f"{p} on {k} rank{'s' * (k > 1)}" for p, k in counts.items())


def cmd_run(args, comm) -> int:
    from .simulation import Simulation

    if args.restart:
        return cmd_restart(args, comm)
    cfg = build_config(args)
    if comm.rank == 0:
        check_output_folder(cfg)
    comm.barrier()
    sim = Simulation(cfg, comm=comm)
    if comm.rank == 0:
        clear_output_folder(cfg)
    comm.barrier()
    summary = sim.run()
    summary["output"] = _output_note(sim, cfg)
    summary["chosen"] = _chosen(sim, comm)
    if comm.rank == 0:
        _print_summary(summary, sys.stdout)
    return 0


def cmd_restart(args, comm) -> int:
    """``pdyn run --restart CHECKPOINT``: continue a run (``pdyn.restart``). Output goes to
    the checkpoint's run folder (files after the checkpoint's step are replaced) unless
    ``--output`` names another folder."""
    from dataclasses import replace

    from .config import config_from_dict
    from .io.checkpoint import (checkpoint_header, latest_checkpoint, prune_after,
                                run_folder_of)
    from .restart import from_checkpoint

    for opt in ("config", "scene", "scale", "seed", "dt"):
        if getattr(args, opt) is not None:
            flag = "CONFIG" if opt == "config" else f"--{opt}"
            raise CLIError(f"{flag} = {getattr(args, opt)!r}: cannot be changed with --restart "
                           "(the checkpoint holds the run's configuration)")
    ckpt = latest_checkpoint(args.restart)
    head = checkpoint_header(ckpt)
    step = int(head["step"])
    stored = config_from_dict(head["config"], source=f"{ckpt} (config)")
    if args.steps is not None:
        steps = args.steps
    else:
        steps = int(head["steps_total"]) - step
        if steps < 1:
            raise CLIError(f"--restart {args.restart}: the run ended at step {step}; give --steps "
                           "for further steps")
    same = args.output is None or Path(args.output).resolve() == run_folder_of(ckpt)
    out = {"folder": str(run_folder_of(ckpt)) if args.output is None else args.output}
    out.update(_output_options(args))
    changes = {"output": replace(stored.output, **out)}
    if args.blocks is not None:
        changes["blocks"] = tuple(args.blocks)
    if args.no_progress:
        changes["progress"] = False
    if args.broadphase is not None:
        changes["broadphase"] = args.broadphase
    cfg = stored.with_(**changes)
    if not same:
        if comm.rank == 0:
            check_output_folder(cfg)
        comm.barrier()
    sim = from_checkpoint(ckpt, comm=comm, **changes)
    if comm.rank == 0:
        if same:
            prune_after(cfg.output.folder, step)
        else:
            clear_output_folder(cfg)
        print(f"pdyn: restarted from {ckpt} at step {step} (t = {sim.time:.6g} s)", flush=True)
    comm.barrier()
    summary = sim.run(steps)
    summary["output"] = _output_note(sim, cfg)
    summary["chosen"] = _chosen(sim, comm)
    if comm.rank == 0:
        _print_summary(summary, sys.stdout)
    return 0


def cmd_info(args, comm) -> int:
    from .io.inspect import describe

    if comm.rank == 0:
        print(describe(args.file))
    return 0


def cmd_render(args, comm) -> int:
    from .io.render import render_png

    if comm.rank == 0:
        try:
            out = render_png(args.file, args.out, color=args.color, size=tuple(args.size))
        except ImportError as exc:
            raise CLIError(str(exc)) from None
        print(f"pdyn: wrote {out}")
    return 0


def cmd_scenes(args, comm) -> int:
    from .scenarios import DEFAULT_SCENE, describe_scenes

    if comm.rank == 0:
        for name, text in describe_scenes():
            mark = " (default)" if name == DEFAULT_SCENE else ""
            print(f"{name:20s} {text}{mark}")
    return 0


def cmd_bench(args, comm) -> int:
    import json

    from .bench import COLUMNS, bench_scene, format_table
    from .bench.report import SERIES, render, run
    from .broadphase import REGISTRY
    from .config import ConfigError

    for name in args.structures or []:
        if name not in REGISTRY:
            raise ConfigError(f"structures = {name!r}: unknown (choose from {', '.join(REGISTRY)})")
    for name in args.series or []:
        if name not in SERIES:
            raise ConfigError(f"series = {name!r}: unknown (choose from {', '.join(SERIES)})")
    if args.steps < 1:
        raise ConfigError(f"steps = {args.steps}: must be >= 1")
    if comm.rank != 0:
        return 0
    if args.report and args.render_only:
        render(args.report)
        print(f"pdyn bench: rewrote {Path(args.report) / 'report.md'} from report.json")
        return 0
    if args.report:
        command = " ".join(["pdyn bench --report", args.report] + ["--quick"] * args.quick
                           + (["--series", *args.series] if args.series else [])
                           + (["--structures", *args.structures] if args.structures else []))
        res = run(args.report, quick=args.quick, series=args.series or SERIES,
                  structures=args.structures, progress=not args.no_progress, command=command)
        print(f"pdyn bench: wrote {Path(args.report) / 'report.md'} "
              f"({res['seconds'] / 60:.1f} min; plots: {', '.join(res['plots']) or 'none'})")
        return 0
    print(f"pdyn bench: scene {args.scene!r} at scale {args.scale}, {args.steps} steps "
          "(ms per step; peers: one from-scratch call)")
    rows = bench_scene(args.scene, args.scale, args.steps, args.structures or list(REGISTRY),
                       with_peers=not args.no_peers)
    print(format_table(rows, COLUMNS))
    auto = next((r for r in rows if r["structure"] == "auto" and r.get("chosen")), None)
    if auto:
        print(f"broad phase auto -> {auto['chosen']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


COMMANDS = {"run": cmd_run, "scenes": cmd_scenes, "bench": cmd_bench, "info": cmd_info,
            "render": cmd_render}


def main(argv=None) -> int:
    from .broadphase import BroadPhaseError
    from .config import ConfigError
    from .io.hdf5 import OutputFileError
    from .parallel import get_comm
    from .parallel.exchange import ExchangeError
    from .scenarios import SceneError

    args = _parser().parse_args(argv)
    comm = get_comm()
    try:
        return COMMANDS[args.command](args, comm)
    except (ConfigError, SceneError, BroadPhaseError, ExchangeError, CLIError,
            OutputFileError) as exc:
        print(f"pdyn: error: {exc}", file=sys.stderr)
        if comm.size > 1:
            sys.stderr.flush()
            comm.abort(EXIT_USAGE)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("pdyn: interrupted", file=sys.stderr)
        if comm.size > 1:
            comm.abort(130)
        return 130
    except Exception as exc:  # any other failure: never leave other ranks hanging
        if comm.size > 1:
            import traceback

            traceback.print_exc()
            print(f"pdyn: rank {comm.rank}: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.stderr.flush()
            comm.abort(1)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
