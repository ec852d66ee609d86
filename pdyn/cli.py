"""Command line: ``pdyn run [CONFIG.toml] [options]``, ``pdyn scenes``, ``info``, ``render``,
``plot``, ``bench``.

A thin layer over :class:`pdyn.config.SimulationConfig`: options override the TOML file, which
overrides the defaults. One error path for every command: anything the user can cause (config,
options, files, folders, the initial state, a run that blows up, a full disk) is one line on
stderr, ``pdyn: error: <what> = <value>: <why>``, exit code 2, and nothing half-written. Errors
that every rank raises alike (all of these but a broad phase's, which can be one rank's) are
printed by rank 0 and every rank exits 2; anything else (a bug in pdyn) prints its traceback
and, under ``mpiexec``, aborts every rank. ``--debug`` adds the traceback to user errors too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

EXIT_USAGE = 2
DEFAULT_SNAPSHOT_EVERY = 500
#: ``pdyn render --size`` bounds (pixels per side)
MIN_SIZE, MAX_SIZE = 16, 16384


class CLIError(ValueError):
    """A command-line option that cannot apply (one line naming the option and value)."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line through the CLI's error path."""

    def error(self, message):
        raise CLIError(f"{message} (see '{self.prog} --help')")


def _structures_help() -> str:
    """The broad-phase structures and their parameters (``pdyn.broadphase.params``)."""
    from .broadphase import REGISTRY
    from .broadphase.params import describe

    return ("broad-phase structures and their parameters ([broadphase_params] in a config):\n"
            + describe(REGISTRY))


def _parser() -> argparse.ArgumentParser:
    """The ``pdyn`` command line: ``--debug`` and a parser for each command."""
    structures = _structures_help()
    p = _Parser(prog="pdyn", description="Particle dynamics of spheres with pluggable "
                "broad-phase structures (MPI-parallel).")
    p.add_argument("--debug", action="store_true",
                   help="print the traceback of every error, also of bad input")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="print the traceback of every error, also of bad input")
    sub = p.add_subparsers(dest="command", required=True)
    _run_parser(sub, common, structures)
    sub.add_parser("scenes", parents=[common], help="list the built-in scenes")
    _file_parsers(sub, common)
    _bench_parser(sub, common, structures)
    return p


def _run_parser(sub, common, structures: str) -> None:
    """``pdyn run``: the config file and the options that override it."""
    run = sub.add_parser("run", parents=[common],
                         help="run a simulation (default: the built-in 'drop' scene)",
                         epilog=structures, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("config", nargs="?", help="TOML config file (optional)")
    run.add_argument("--scene", help="built-in scene name (see 'pdyn scenes')")
    run.add_argument("--scale", type=float, help="scale the scene's particle count")
    run.add_argument("--steps", type=int, help="number of time steps")
    run.add_argument("--dt", type=float, help="time step in s (default and largest accepted: "
                     "contact time / 20, with Hertz at most 0.2 Rayleigh times)")
    run.add_argument("--allow-large-dt", action="store_true",
                     help="accept a --dt above the time-step limit")
    run.add_argument("--broadphase", help="broad-phase structure name (listed below; default "
                     "auto)")
    run.add_argument("--seed", type=int, help="seed of the scene generator")
    run.add_argument("--blocks", type=int, nargs=3, metavar=("BX", "BY", "BZ"),
                     help="block grid of the MPI decomposition (default: ~32 blocks per rank)")
    run.add_argument("--balance-every", type=int, metavar="STEPS",
                     help="rebalance the blocks over the ranks at most every STEPS steps when "
                     "the work is uneven, 0 = never (default 100)")
    run.add_argument("--skin", type=float, help="Verlet skin of the neighbour lists in m "
                     "(default: 0.3 mean diameters; 0: broad phase every step)")
    run.add_argument("--output", help="output folder (default: pdyn-output)")
    run.add_argument("--snapshot-every", type=int,
                     help=f"snapshot interval in steps, 0 = none (default {DEFAULT_SNAPSHOT_EVERY})")
    run.add_argument("--checkpoint-every", type=int,
                     help="checkpoint interval in steps, 0 = none (default 0)")
    run.add_argument("--thermo-every", type=int, metavar="STEPS",
                     help="a thermo line (energies, contacts, overlap) every STEPS steps on "
                     "stdout and in thermo.csv, 0 = none (default 0)")
    run.add_argument("--wall-forces", action="store_true",
                     help="write the total force on each wall every step (wall_forces.csv)")
    run.add_argument("--sphere-stress", action="store_true",
                     help="snapshots hold each sphere's stress, contacts and contact force")
    run.add_argument("--wall-pressure", action="store_true",
                     help="snapshots hold the walls' normal and shear stress per patch, "
                     "averaged since the last snapshot")
    overlap = run.add_mutually_exclusive_group()
    overlap.add_argument("--allow-overlap", action="store_true",
                         help="run even if spheres overlap each other or a wall at the start")
    overlap.add_argument("--relax-overlap", action="store_true",
                         help="push overlapping spheres apart before the first step")
    run.add_argument("--restart", metavar="CHECKPOINT",
                     help="continue from a checkpoint file (or the newest one of a run folder); "
                     "--steps then counts further steps")
    run.add_argument("--overwrite", action="store_true", help="replace an existing run's output")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")


def _file_parsers(sub, common) -> None:
    """``pdyn info``, ``render`` and ``plot``: what a run wrote."""
    info = sub.add_parser("info", parents=[common],
                          help="print what a snapshot or checkpoint file holds")
    info.add_argument("file", help="snapshot or checkpoint (.h5)")
    render = sub.add_parser("render", parents=[common],
                            help="PNG of a snapshot (needs the 'vtk' package)")
    render.add_argument("file", help="snapshot or checkpoint (.h5), or a run folder (its newest "
                        "snapshot)")
    render.add_argument("-o", "--out", help="PNG file (default: FILE with .png)")
    render.add_argument("--color", choices=("speed", "radius", "rank"), default="speed",
                        help="colour the spheres by (default: speed)")
    render.add_argument("--size", type=int, nargs=2, metavar=("W", "H"), default=(1200, 900),
                        help=f"picture size in pixels, {MIN_SIZE} to {MAX_SIZE} each "
                        "(default 1200 900)")
    plot = sub.add_parser("plot", parents=[common],
                          help="PNG plots of a run's thermo.csv, wall_forces.csv and fields "
                          "profiles (needs the 'matplotlib' package)")
    plot.add_argument("run", help="run folder (holding thermo.csv or fields profiles)")
    plot.add_argument("-o", "--out", metavar="DIR", help="folder for the PNG files "
                      "(default: the run folder)")


def _bench_parser(sub, common, structures: str) -> None:
    """``pdyn bench``: Koch's table for one scene, or the whole report."""
    bench = sub.add_parser(
        "bench", parents=[common], help="which broad phase for which scene: Koch's table for one scene, or the "
        "whole report (--report)",
        description="Without --report: every broad-phase structure runs the same short "
        "simulation of one scene (Koch's table: ms per step of the whole step, of collision "
        "detection and of the update, candidate pairs, memory) beside the peers a Python user "
        "would reach for. With --report DIR: the series of the source theses for every "
        "structure and peer, written as JSON, Markdown and PNG plots.", epilog=structures,
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    bench.add_argument("--sizes", metavar="JSON",
                       help="with --report: entries overriding the run's sizes, e.g. "
                       "'{\"schornbaum_sizes\": [1000, 10000]}' (keys: pdyn.bench.report.FULL)")
    bench.add_argument("--render-only", action="store_true",
                       help="with --report: rewrite report.md and the plots from "
                       "DIR/report.json without measuring again")
    bench.add_argument("--no-progress", action="store_true", help="no progress bars")


@dataclass(frozen=True)
class Option:
    """A ``pdyn run`` option that sets a config field: ``dest`` (argparse), ``field`` (``name``
    or ``output.name``), ``value`` a flag sets (None: the option's own value), and what
    ``--restart`` does with it: ``"apply"``, ``"keep"`` (refused: the checkpoint holds it),
    ``"refuse"`` (refused: a restart continues a checked state) or ``"own"`` (its own rule)."""

    dest: str
    field: str
    value: object = None
    restart: str = "apply"

    @property
    def flag(self) -> str:
        return "--" + self.dest.replace("_", "-")


#: every option of ``pdyn run`` that sets a config field, for a run and for a restart
OPTIONS = (
    Option("scene", "scene", restart="keep"),
    Option("scale", "scale", restart="keep"),
    Option("seed", "seed", restart="keep"),
    Option("dt", "dt", restart="keep"),
    Option("steps", "steps", restart="own"),  # a restart's further steps
    Option("broadphase", "broadphase"),
    Option("skin", "neighbour_skin"),
    Option("balance_every", "balance_every"),
    Option("blocks", "blocks"),
    Option("no_progress", "progress", value=False),
    Option("allow_large_dt", "allow_large_dt", value=True, restart="refuse"),
    Option("allow_overlap", "initial_overlap", value="allow", restart="refuse"),
    Option("relax_overlap", "initial_overlap", value="relax", restart="refuse"),
    Option("output", "output.folder", restart="own"),  # a restart's default: its run folder
    Option("snapshot_every", "output.snapshot_every"),
    Option("checkpoint_every", "output.checkpoint_every"),
    Option("thermo_every", "output.thermo_every"),
    Option("overwrite", "output.overwrite", value=True),
    Option("wall_forces", "output.wall_forces", value=True),
    Option("sphere_stress", "output.sphere_stress", value=True),
    Option("wall_pressure", "output.wall_pressure", value=True),
)


def _given(args, option: Option):
    """The option's value on the command line, or None when it is not given."""
    v = getattr(args, option.dest, None)
    if v is None or v is False:
        return None
    return option.value if option.value is not None else (tuple(v) if isinstance(v, list) else v)


def option_changes(args, restart: bool = False) -> tuple[dict, dict]:
    """(top-level fields, ``[output]`` fields) the command-line options set; with ``restart``
    only those a restart applies (:data:`OPTIONS`)."""
    top, out = {}, {}
    for option in OPTIONS:
        v = _given(args, option)
        if v is None or (restart and option.restart != "apply"):
            continue
        section, _, name = option.field.rpartition(".")
        (out if section == "output" else top)[name] = v
    return top, out


def build_config(args):
    """Merge defaults, the TOML file and the command-line options into a validated config."""
    from dataclasses import replace

    from .config import OutputConfig, SimulationConfig, load_config

    cfg = load_config(args.config) if args.config else SimulationConfig(
        output=OutputConfig(snapshot_every=DEFAULT_SNAPSHOT_EVERY))
    changes, out = option_changes(args)
    if out:
        changes["output"] = replace(cfg.output, **out)
    return cfg.with_(**changes) if changes else cfg


def _writable_from(path: Path, name: str) -> None:
    """``path`` can be created: its first existing ancestor is a writable folder."""
    from .config import ConfigError

    probe = path
    while not os.path.lexists(probe):
        probe = probe.parent
    if probe != path and not probe.is_dir():
        kind = "a broken symbolic link" if probe.is_symlink() else "a file"
        raise ConfigError(f"{name}: cannot be created, {str(probe)!r} is {kind}")
    if not os.access(probe if probe.is_dir() else probe.parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{name}: not writable (in {str(probe)!r})")


def check_output_folder(cfg, *, resuming: bool = False) -> None:
    """Fail before anything is written if the output folder is unusable (not a folder, a broken
    link, below a file, not writable, its ``snapshots``/``checkpoints`` not folders or its
    ``snapshots.xmf`` a folder) or holds a run (unless ``resuming`` it or overwriting)."""
    from .config import ConfigError

    out = cfg.output
    if not cfg.writes_files:
        return
    folder = Path(out.folder)
    name = f"output.folder = {out.folder!r}"
    if folder.is_symlink() and not folder.exists():
        raise ConfigError(f"{name}: a broken symbolic link (to {os.readlink(folder)!r})")
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{name}: exists and is not a folder")
    _writable_from(folder, name)
    for sub, folder_wanted in (("snapshots", True), ("checkpoints", True),
                               ("snapshots.xmf", False)):
        p = folder / sub
        if not os.path.lexists(p):
            continue
        if p.is_symlink() and not p.exists():
            raise ConfigError(f"{name}: its {sub!r} is a broken symbolic link")
        if p.is_dir() != folder_wanted:
            raise ConfigError(f"{name}: its {sub!r} is a {'folder' if p.is_dir() else 'file'}, "
                              f"expected a {'folder' if folder_wanted else 'file'}")
        if folder_wanted and not os.access(p, os.W_OK | os.X_OK):
            raise ConfigError(f"{name}: its {sub!r} is not writable")
    if resuming or out.overwrite:
        return
    if any((folder / f).exists() for f in ("wall_forces.csv", "thermo.csv")) or any(
            (folder / sub).is_dir() and any((folder / sub).iterdir())
            for sub in ("snapshots", "checkpoints")):
        raise ConfigError(f"{name}: holds an earlier run (use --overwrite to replace it)")


def clear_output_folder(cfg) -> None:
    """With ``--overwrite``: remove an earlier run's snapshots, checkpoints and sidecar."""
    from .io import OutputWriteError

    folder = Path(cfg.output.folder)
    if not cfg.output.overwrite:
        return
    try:
        for sub in ("snapshots", "checkpoints"):
            if (folder / sub).is_dir():
                shutil.rmtree(folder / sub)
        (folder / "snapshots.xmf").unlink(missing_ok=True)
        for series in ("wall_forces.csv", "thermo.csv"):
            (folder / series).unlink(missing_ok=True)
    except OSError as exc:
        raise OutputWriteError(f"{folder}: cannot remove the earlier run ({exc.strerror or exc})"
                               ) from None


def check_new_file(path: str, name: str) -> Path:
    """An output file the command will write (its folders created if needed): not a folder,
    creatable. Returns it as a Path."""
    from .config import ConfigError

    p = Path(path)
    label = f"{name} = {path!r}"
    if p.is_dir():
        raise ConfigError(f"{label}: is a folder, expected a file name")
    _writable_from(p, label)
    return p


def _on_root(comm, action):
    """Run ``action()`` on rank 0 only and return its value on every rank; if it raises a user
    error, every rank raises it (as a :class:`CLIError` with the same message), so no rank is
    left waiting for one that has stopped."""
    if comm.size == 1:
        return action()
    message = value = None
    if comm.rank == 0:
        try:
            value = action()
        except _user_errors() as exc:
            message = str(exc)
    message, value = comm.bcast((message, value))
    if message:
        raise CLIError(message)
    return value


def _print_summary(s: dict, out) -> None:
    chosen = f" -> {s['chosen']}" if s.get("chosen") else ""
    print(f"pdyn: scene {s['scene']!r}: {s['particles']} particles, {s['ranks']} rank(s), "
          f"broad phase {s['broadphase']}{chosen}", file=out)
    # the steps of this run (a restart's from its checkpoint's step on)
    n, first = s.get("steps_run", s["steps"]), s.get("first_step", 0)
    span = f" (step {first} to {first + n})" if first else ""
    print(f"  {n} steps{span} of dt = {s['dt']:.4g} s -> t = {s['time']:.4g} s in "
          f"{s['wall_seconds']:.2f} s wall ({s['steps_per_second']:.0f} steps/s)", file=out)
    print(f"  contacts at the end: {s['contacts']}, kinetic energy: {s['kinetic_energy']:.6g} J",
          file=out)
    total = sum(s["timers"].values()) or 1.0
    phases = ", ".join(f"{k} {v / total:.0%}" for k, v in
                       sorted(s["timers"].items(), key=lambda kv: -kv[1]))
    print(f"  time per phase: {phases}; {s['rebuilds']} rebuild(s) of the neighbour lists "
          f"and ghost plan", file=out)
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


def _blocks_note(sim, cfg) -> str | None:
    """Why ``blocks`` has no effect: one rank without a periodic axis has no decomposition."""
    if cfg.blocks and sim.comm.size == 1 and not sim.box.periodic.any():
        return (f"pdyn: note: blocks = {list(cfg.blocks)} has no effect on one rank without a "
                "periodic axis (there is nothing to decompose)")
    return None


def _dt_note(sim, cfg) -> str | None:
    """Why ``allow_large_dt`` has no effect: no dt given, the default is the limit itself."""
    if cfg.allow_large_dt and cfg.dt is None and sim.scene.dt is None:
        return (f"pdyn: note: allow_large_dt = true has no effect without a dt (the default "
                f"dt = {sim.dt:.4g} s is the time-step limit itself)")
    return None


def _insertion_note(sim) -> str | None:
    """A rate the insertion region cannot take: each insertion step pours at most what the
    region holds (``Inserter.capacity``), at the largest time step of the run's stages."""
    ins = sim.inserter
    if ins is None:
        return None
    dt = sim.clock.largest
    owed = ins.p["rate"] * ins.p["every"] * dt
    if owed <= ins.capacity:
        return None
    return (f"pdyn: note: insertion.rate = {ins.p['rate']!r}: {owed:.3g} spheres are owed at "
            f"each insertion step (every {ins.p['every']} steps of {dt:.4g} s), more than "
            f"the {ins.capacity} the region can hold; each step pours at most that many")


def _run(sim, cfg, comm, steps=None) -> int:
    notes = [n for n in (sim.setup_note and f"pdyn: {sim.setup_note}", _blocks_note(sim, cfg),
                         _dt_note(sim, cfg), _insertion_note(sim)) if n]
    if comm.rank == 0 and notes:
        print("\n".join(notes), flush=True)
    first = sim.step_index
    try:
        summary = sim.run(steps)
    except (KeyboardInterrupt, *_user_errors()) as exc:
        exc.last_good = sim.last_good()  # every stop names where to continue from
        raise
    summary.update(steps_run=sim.step_index - first, first_step=first)
    summary["output"] = _output_note(sim, cfg)
    summary["chosen"] = _chosen(sim, comm)
    if comm.rank == 0:
        if sim.load:
            print(sim.load, flush=True)
        _print_summary(summary, sys.stdout)
    return 0


def mesh_placement(comm):
    """The block in which a run's meshes are built: once per node, shared by its ranks
    (``pdyn.parallel.shared``), on several ranks; by this process on one."""
    from .mesh.place import Local, using
    from .parallel.shared import NodeShared

    return using(NodeShared(comm) if comm.mpi is not None and comm.size > 1 else Local())


def cmd_run(args, comm) -> int:
    from .simulation import Simulation

    with mesh_placement(comm):
        if args.restart:
            return cmd_restart(args, comm)
        cfg = build_config(args)
        _on_root(comm, lambda: check_output_folder(cfg))
        sim = Simulation(cfg, comm=comm)  # checks the initial state on every rank
        _on_root(comm, lambda: clear_output_folder(cfg))
        return _run(sim, cfg, comm)


def cmd_restart(args, comm) -> int:
    """``pdyn run --restart CHECKPOINT``: continue a run (``pdyn.restart``). Output goes to
    the checkpoint's run folder unless ``--output`` names another folder; there the snapshots
    and checkpoints written after the checkpoint are moved aside (never deleted) once the
    continued run has passed every check, and ``snapshots.xmf`` lists exactly the snapshots
    left."""
    from dataclasses import replace

    from .io.checkpoint import latest_checkpoint, run_folder_of, set_aside_after
    from .io.schema import unchecked_note
    from .restart import from_checkpoint, old_meshes_note, prepare

    kept = "cannot be changed with --restart (the checkpoint holds the run's configuration)"
    if args.config is not None:
        raise CLIError(f"CONFIG = {args.config!r}: {kept}")
    for option in OPTIONS:
        v = _given(args, option)
        if v is not None and option.restart == "keep":
            raise CLIError(f"{option.flag} = {v!r}: {kept}")
        if v is not None and option.restart == "refuse":
            raise CLIError(f"{option.flag}: does not apply to --restart (a restart continues a "
                           "checked state)")
    if args.steps is not None and args.steps < 1:
        raise CLIError(f"--steps = {args.steps}: must be >= 1 with --restart (further steps to "
                       "run); nothing was changed")
    ckpt = latest_checkpoint(args.restart)
    note = _on_root(comm, lambda: unchecked_note(ckpt))  # opens every per-rank piece
    head, _, stored = prepare(ckpt, comm)  # every rank, one verdict
    step = head["step"]
    notes = [n for n in (note, old_meshes_note(ckpt, head)) if n]
    if notes and comm.rank == 0:
        print("\n".join(notes), flush=True)
    staged = stored.stages and stored.steps is None and stored.stages[-1].end is not None
    if args.steps is not None:
        steps = args.steps
    elif staged:  # on until its last stage ends (Simulation.run)
        steps = None
        if head["stages"]["finished"]:
            raise CLIError(f"--restart {args.restart}: the run's last stage ended by step "
                           f"{step}; give --steps for further steps")
    else:
        steps = head["steps_total"] - step
        if steps < 1:
            raise CLIError(f"--restart {args.restart}: the run ended at step {step}; give --steps "
                           "for further steps")
    home = run_folder_of(ckpt)
    same = args.output is None or Path(args.output).resolve() == home
    changes, out = option_changes(args, restart=True)
    out["folder"] = str(home) if args.output is None else args.output
    changes["output"] = replace(stored.output, **out)
    cfg = stored.with_(**changes)
    _on_root(comm, lambda: check_output_folder(cfg, resuming=same))
    sim = from_checkpoint(ckpt, comm=comm, **changes)
    if same:
        aside = set_aside_after(cfg.output.folder, step, comm, run_id=head.get("run_id"))
    else:
        _on_root(comm, lambda: clear_output_folder(cfg))
        aside = None
    if comm.rank == 0:
        print(f"pdyn: restarted from {ckpt} at step {step} (t = {sim.time:.6g} s)", flush=True)
        if aside is not None and aside.folder is not None:
            print(f"pdyn: the files written after step {step} were moved to {aside.folder}",
                  flush=True)
        if aside is not None and aside.foreign:
            shown = ", ".join(aside.foreign[:3]) + (", ..." if len(aside.foreign) > 3 else "")
            print(f"pdyn: note: {len(aside.foreign)} of the files moved aside belong to "
                  f"another run, not to run {head.get('run_id')}: {shown}", flush=True)
    return _run(sim, cfg, comm, steps)


def _restartable(path) -> None:
    """Refuse (:class:`CLIError`) a checkpoint that ``pdyn run --restart`` would refuse, by
    the same checks (``pdyn.restart.refusal``); a snapshot passes. A damaged file is the
    strict reader's own error."""
    from .io.hdf5 import CHECKPOINT
    from .io.schema import read_header
    from .restart import refusal

    if read_header(path)["format"] != CHECKPOINT:
        return
    why = refusal(path)
    if why:
        raise CLIError(f"would be refused by --restart: {why}")


def cmd_info(args, comm) -> int:
    from .io.inspect import describe
    from .io.schema import unchecked_note

    if comm.rank == 0:
        description = describe(args.file)
        _restartable(args.file)
        print(description)
        note = unchecked_note(args.file)
        if note:
            print(note)
    return 0


def cmd_render(args, comm) -> int:
    from .io.render import render_png, snapshot_of
    from .io.schema import unchecked_note

    for value in args.size:
        if not MIN_SIZE <= value <= MAX_SIZE:
            raise CLIError(f"--size = {args.size[0]} {args.size[1]}: each side must be "
                           f"{MIN_SIZE} to {MAX_SIZE} pixels")
    if args.out is not None:
        check_new_file(args.out, "--out")
    if comm.rank == 0:
        if not Path(args.file).is_dir():
            _restartable(args.file)
        try:
            out = render_png(args.file, args.out, color=args.color, size=tuple(args.size))
        except ImportError as exc:
            raise CLIError(str(exc)) from None
        print(f"pdyn: wrote {out}")
        note = unchecked_note(snapshot_of(Path(args.file)))
        if note:
            print(note)
    return 0


def cmd_plot(args, comm) -> int:
    from .io.plot import plot_run

    if comm.rank == 0:
        try:
            files, notes = plot_run(args.run, args.out)
        except ImportError as exc:
            raise CLIError(str(exc)) from None
        for note in notes:
            print(note)
        for f in files:
            print(f"pdyn: wrote {f}")
    return 0


def cmd_scenes(args, comm) -> int:
    from .scenarios import DEFAULT_SCENE, describe_scenes

    if comm.rank == 0:
        for name, text in describe_scenes():
            mark = " (default)" if name == DEFAULT_SCENE else ""
            print(f"{name:20s} {text}{mark}")
    return 0


def bench_sizes(text: str | None) -> dict:
    """``pdyn bench --sizes JSON``: a dict whose keys are sizes of the report (``FULL``)."""
    import json

    from .bench.report import FULL
    from .config import ConfigError

    if not text:
        return {}
    try:
        sizes = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"sizes = {text!r}: not JSON ({exc.msg})") from None
    if not isinstance(sizes, dict):
        raise ConfigError(f"sizes = {text!r}: must be a JSON object")
    for key in sizes:
        if key not in FULL:
            raise ConfigError(f"sizes: unknown key {key!r} (choose from {', '.join(FULL)})")
    return sizes


def cmd_bench(args, comm) -> int:
    import json

    from .bench import COLUMNS, bench_scene, format_table
    from .bench.report import SERIES, render, run
    from .broadphase import REGISTRY
    from .config import ConfigError, SimulationConfig
    from .io.hdf5 import make_folder, write_bytes_atomic
    from .scenarios import check_memory

    for name in args.structures or []:
        if name not in REGISTRY:
            raise ConfigError(f"structures = {name!r}: unknown (choose from {', '.join(REGISTRY)})")
    for name in args.series or []:
        if name not in SERIES:
            raise ConfigError(f"series = {name!r}: unknown (choose from {', '.join(SERIES)})")
    SimulationConfig(scene=args.scene, scale=args.scale, steps=args.steps)  # validates them
    sizes = bench_sizes(args.sizes)
    if args.report and args.render_only:
        if comm.rank == 0:
            render(args.report)
            print(f"pdyn bench: rewrote {Path(args.report) / 'report.md'} from report.json")
        return 0
    if args.report:
        command = " ".join(["pdyn bench --report", args.report] + ["--quick"] * args.quick
                           + (["--series", *args.series] if args.series else [])
                           + (["--structures", *args.structures] if args.structures else [])
                           + ([f"--sizes '{args.sizes}'"] if args.sizes else []))
        if comm.rank == 0:
            res = run(args.report, quick=args.quick, series=args.series or SERIES,
                      structures=args.structures, progress=not args.no_progress,
                      command=command, sizes=sizes)
            print(f"pdyn bench: wrote {Path(args.report) / 'report.md'} "
                  f"({res['seconds'] / 60:.1f} min; plots: {', '.join(res['plots']) or 'none'})")
        return 0
    check_memory(args.scene, args.scale)
    out = check_new_file(args.json, "--json") if args.json else None
    print(f"pdyn bench: scene {args.scene!r} at scale {args.scale}, {args.steps} steps "
          "(ms per step; peers: one from-scratch call)")
    rows = bench_scene(args.scene, args.scale, args.steps, args.structures or list(REGISTRY),
                       with_peers=not args.no_peers)
    print(format_table(rows, COLUMNS))
    auto = next((r for r in rows if r["structure"] == "auto" and r.get("chosen")), None)
    if auto:
        print(f"broad phase auto -> {auto['chosen']}")
    if out is not None:
        make_folder(out.parent)
        write_bytes_atomic(out, json.dumps(rows, indent=2).encode())
    return 0


COMMANDS = {"run": cmd_run, "scenes": cmd_scenes, "bench": cmd_bench, "info": cmd_info,
            "render": cmd_render, "plot": cmd_plot}


def _user_errors() -> tuple:
    """Exceptions that report bad input or a failed environment, not a bug in pdyn."""
    from .broadphase import BroadPhaseError
    from .checks import InitialStateError, RunawayError
    from .config import ConfigError
    from .domain import DecompositionError
    from .io import OutputFileError, OutputWriteError
    from .parallel.exchange import ExchangeError
    from .scenarios import SceneError

    return (ConfigError, SceneError, BroadPhaseError, ExchangeError, DecompositionError,
            CLIError, OutputFileError, OutputWriteError, InitialStateError, RunawayError)


def _with_last_good(exc) -> str:
    """The error's message on one line, naming the last good checkpoint if the run had
    started (``Simulation.last_good``) and the message does not already."""
    msg = " ".join(str(exc).split())
    note = getattr(exc, "last_good", None)
    if note and "last good" not in msg and "written by this run" not in msg:
        msg = f"{msg}; {note}" if msg else f"; {note}"
    return msg


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code. SIGINT
    and SIGTERM before the first step end it with one line (``pdyn.interrupt``)."""
    from .interrupt import StartupSignals, launched_as

    argv = sys.argv[1:] if argv is None else list(argv)
    with StartupSignals(*launched_as(), say=_say) as signals:  # while no step runs
        from .parallel import get_comm

        comm = get_comm()
        signals.rank, signals.ranks = comm.rank, comm.size
        return _command(argv, comm)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _command(argv: list, comm) -> int:
    """Parse ``argv`` and run its command on ``comm`` (under the watchdog,
    ``pdyn.parallel.comm``); every error path of :func:`main`."""
    import traceback

    from .broadphase import BroadPhaseError
    from .interrupt import Stopped
    from .parallel.comm import start_watchdog, timeout_from

    debug = "--debug" in argv
    watchdog = None
    try:
        try:
            watchdog = start_watchdog(comm, timeout_from())
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        args = _parser().parse_args(argv)
        return COMMANDS[args.command](args, comm)
    except Stopped as exc:  # a signal, at the end of a step on every rank: where to continue
        if comm.rank == 0:
            print(f"pdyn: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    except _user_errors() as exc:
        # every rank raises these alike (a broad phase's error can be one rank's alone)
        alone = isinstance(exc, BroadPhaseError) and comm.size > 1
        if comm.rank == 0 or alone:
            if debug:
                traceback.print_exc()
            where = f"rank {comm.rank}: " if alone else ""
            print(f"pdyn: error: {where}{_with_last_good(exc)}", file=sys.stderr, flush=True)
        if alone:
            comm.abort(EXIT_USAGE)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(f"pdyn: interrupted{_with_last_good(exc)}", file=sys.stderr)
        if comm.size > 1:
            comm.abort(130)
        return 130
    except BrokenPipeError:  # stdout closed early (pdyn info FILE | head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug in pdyn: its traceback, and never leave other ranks waiting
        if comm.size > 1:
            traceback.print_exc()
            print(f"pdyn: rank {comm.rank}: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.stderr.flush()
            comm.abort(1)
        raise
    finally:
        if watchdog is not None:
            watchdog.stop()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
