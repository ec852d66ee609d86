"""``pdyn plot RUN``: the thermo and wall-force series of a run folder as PNG files (needs
the optional ``matplotlib`` package, ``pip install 'pdyn[plot]'``).

``thermo.csv`` gives ``thermo_energy.png`` (kinetic and rotational energy, J, against time),
``thermo_contacts.png`` (contacts and mean coordination) and ``thermo_overlap.png`` (largest
overlap / radius); ``wall_forces.csv``, when the run wrote it, ``wall_forces.png`` (each
wall's force components, N); each ``[[fields]]`` profile (``fields/<name>_<step>.csv``, one
resolved axis) its newest window as ``fields_<name>.png`` (volume fraction, velocity, the
stress's diagonal and shear against the axis). A series whose last line a stopped run cut is
drawn without it (a note says so); a series that does not read otherwise, or lacks a column,
is one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .hdf5 import OutputFileError, OutputWriteError, make_folder
from .thermo import FILE_NAME as THERMO
from .wallforces import FILE_NAME as WALL_FORCES


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("pdyn plot needs the 'matplotlib' package: pip install 'pdyn[plot]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


#: the columns each series must hold to be drawn
THERMO_COLUMNS = ("time", "kinetic_energy", "rotational_energy", "contacts", "coordination",
                  "max_overlap")
WALL_COLUMNS = ("step", "time")


def read_cut_series(path: Path, columns: tuple) -> tuple[list[str], np.ndarray, str | None]:
    """(column names, rows, note) of the CSV series ``path``, which must hold ``columns``:
    a last line that a stopped run cut (too few numbers, a cut number, no end of line) is
    left out, and ``note`` says so (else None). Anything else that does not read is one
    :class:`OutputFileError` naming the file and the line."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputFileError(f"{path}: cannot read it ({exc})") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise OutputFileError(f"{path}: empty, expected a header line of column names")
    names = lines[0].split(",")
    for c in columns:
        if c not in names:
            raise OutputFileError(f"{path}: no column {c!r} in its header (not a pdyn series?)")
    rows, note = [], None
    body = [(k, ln) for k, ln in enumerate(lines[1:], start=2) if ln]
    for k, ln in body:
        try:
            row = [float(x) for x in ln.split(",")]
            if len(row) != len(names):
                raise ValueError(f"{len(row)} numbers for {len(names)} columns")
            if k == body[-1][0] and not text.endswith("\n"):  # every row ends with one
                raise ValueError("no end of line")
        except ValueError as exc:
            if k == body[-1][0]:  # the last line: cut by a run that stopped while writing
                note = (f"pdyn: note: {path}: its last line ({k}) is cut ({exc}); left out "
                        "(a run stopped while appending?)")
                break
            raise OutputFileError(f"{path}: line {k} does not read ({exc})") from None
        rows.append(row)
    return names, np.array(rows, float).reshape(-1, len(names)), note


def newest_profiles(run: Path) -> dict[str, Path]:
    """Profile name -> its newest CSV file in ``run/fields`` (``<name>_<step>.csv``)."""
    newest = {}
    for p in sorted((run / "fields").glob("*_*.csv")):
        name, _, step = p.stem.rpartition("_")
        if step.isdigit() and (name not in newest or int(step) >= newest[name][0]):
            newest[name] = (int(step), p)
    return {name: p for name, (_, p) in newest.items()}


#: the profile panels: label and the columns drawn
PROFILE_PANELS = (("volume fraction", ("volume_fraction",)),
                  ("velocity (m/s)", ("velocity_x", "velocity_y", "velocity_z")),
                  ("stress (Pa)", ("stress_xx", "stress_yy", "stress_zz", "stress_xz")))


def plot_profile(plt, path: Path, names: list[str], rows: np.ndarray, out: Path) -> Path:
    """Draw one fields profile (its columns ``names``, ``rows``) into ``out``."""
    col = {n: rows[:, k] for k, n in enumerate(names)}
    axis = names[0]
    fig, axes = plt.subplots(1, len(PROFILE_PANELS), figsize=(12, 4.5))
    for ax, (label, keys) in zip(axes, PROFILE_PANELS):
        for k in keys:
            ax.plot(col[axis], col[k], label=k)
        ax.set_xlabel(f"{axis} (m)")
        ax.set_ylabel(label)
        ax.legend(loc="best", fontsize="small")
    fig.suptitle(path.name)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=100)
    except OSError as exc:
        raise OutputWriteError(f"{out}: cannot write ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
    return out


def plot_run(run: str | Path, out: str | Path | None = None) -> tuple[list[Path], list[str]]:
    """Draw the series of the run folder ``run`` into ``out`` (default: ``run``); returns the
    PNG files written and notes (a cut last line left out, :func:`read_cut_series`). Raises
    :class:`OutputFileError` when ``run`` has neither a readable ``thermo.csv`` nor a fields
    profile (or a series that does not read), :class:`OutputWriteError` when a PNG cannot be
    written and ``ImportError`` without matplotlib; all series are read before anything is
    written."""
    run = Path(run)
    profiles = {name: read_cut_series(p, PROFILE_PANELS[0][1]) + (p,)
                for name, p in newest_profiles(run).items()}
    notes = [v[2] for v in profiles.values() if v[2]]
    if not (run / THERMO).is_file():
        if not profiles:
            raise OutputFileError(f"{run}: no {THERMO} here (run with --thermo-every N or "
                                  "[output] thermo_every = N)")
        plt = _pyplot()
        out = Path(out) if out is not None else run
        make_folder(out)
        return [plot_profile(plt, p, names, rows, out / f"fields_{name}.png")
                for name, (names, rows, _, p) in profiles.items()], notes
    names, rows, note = read_cut_series(run / THERMO, THERMO_COLUMNS)
    notes += [note] if note else []
    wall = None
    if (run / WALL_FORCES).is_file():
        *wall, note = read_cut_series(run / WALL_FORCES, WALL_COLUMNS)
        notes += [note] if note else []
    plt = _pyplot()
    out = Path(out) if out is not None else run
    make_folder(out)
    col = {n: rows[:, k] for k, n in enumerate(names)}
    t = col["time"]
    panels = [
        ("thermo_energy.png", "energy (J)",
         [("kinetic", col["kinetic_energy"]), ("rotational", col["rotational_energy"])]),
        ("thermo_contacts.png", "contacts / coordination",
         [("contacts", col["contacts"]), ("coordination", col["coordination"])]),
        ("thermo_overlap.png", "largest overlap / radius", [("max overlap", col["max_overlap"])]),
    ]
    if wall is not None:
        names_w, rows_w = wall
        panels.append(("wall_forces.png", "force on the wall (N)",
                       [(n, rows_w[:, k]) for k, n in enumerate(names_w) if k >= 2
                        and n[-3:-1] == "_f" and rows_w[:, k].any()], rows_w[:, 1]))
    written = []
    for name, label, series, *x in panels:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        if name == "thermo_contacts.png":  # counts and a mean: two scales
            ax.plot(t, series[0][1], label=series[0][0])
            ax.set_ylabel("contacts")
            ax2 = ax.twinx()
            ax2.plot(t, series[1][1], color="C1", label=series[1][0])
            ax2.set_ylabel("mean coordination")
            fig.legend(loc="upper right")
        else:
            for lab, y in series:
                ax.plot(x[0] if x else t, y, label=lab)
            ax.set_ylabel(label)
            if series:
                ax.legend(loc="best", fontsize="small")
        ax.set_xlabel("time (s)")
        ax.set_title(f"{run.resolve().name}: {label}")
        fig.tight_layout()
        try:
            fig.savefig(out / name, dpi=100)
        except OSError as exc:
            raise OutputWriteError(f"{out / name}: cannot write ({exc.strerror or exc})"
                                   ) from None
        finally:
            plt.close(fig)
        written.append(out / name)
    written += [plot_profile(plt, p, names, rows, out / f"fields_{name}.png")
                for name, (names, rows, _, p) in profiles.items()]
    return written, notes


__all__ = ["plot_run"]
