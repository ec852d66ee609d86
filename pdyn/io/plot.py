"""``pdyn plot RUN``: the thermo and wall-force series of a run folder as PNG files (needs
the optional ``matplotlib`` package, ``pip install 'pdyn[plot]'``).

``thermo.csv`` gives ``thermo_energy.png`` (kinetic and rotational energy, J, against time),
``thermo_contacts.png`` (contacts and mean coordination) and ``thermo_overlap.png`` (largest
overlap / radius); ``wall_forces.csv``, when the run wrote it, ``wall_forces.png`` (each
wall's force components, N).
"""

from __future__ import annotations

from pathlib import Path

from .hdf5 import OutputFileError, make_folder
from .thermo import FILE_NAME as THERMO
from .wallforces import FILE_NAME as WALL_FORCES
from .wallforces import read_series


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("pdyn plot needs the 'matplotlib' package: pip install 'pdyn[plot]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _read(path: Path):
    try:
        return read_series(path)
    except (OSError, UnicodeDecodeError, ValueError, IndexError) as exc:
        raise OutputFileError(f"{path}: not a readable series ({exc})") from None


def plot_run(run: str | Path, out: str | Path | None = None) -> list[Path]:
    """Draw the series of the run folder ``run`` into ``out`` (default: ``run``); returns the
    PNG files written. Raises :class:`OutputFileError` when ``run`` has no ``thermo.csv`` and
    ``ImportError`` without matplotlib."""
    run = Path(run)
    if not (run / THERMO).is_file():
        raise OutputFileError(f"{run}: no {THERMO} here (run with --thermo-every N or "
                              "[output] thermo_every = N)")
    plt = _pyplot()
    out = Path(out) if out is not None else run
    make_folder(out)
    names, rows = _read(run / THERMO)
    col = {n: rows[:, k] for k, n in enumerate(names)}
    t = col["time"]
    panels = [
        ("thermo_energy.png", "energy (J)",
         [("kinetic", col["kinetic_energy"]), ("rotational", col["rotational_energy"])]),
        ("thermo_contacts.png", "contacts / coordination",
         [("contacts", col["contacts"]), ("coordination", col["coordination"])]),
        ("thermo_overlap.png", "largest overlap / radius", [("max overlap", col["max_overlap"])]),
    ]
    if (run / WALL_FORCES).is_file():
        names_w, rows_w = _read(run / WALL_FORCES)
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
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        written.append(out / name)
    return written


__all__ = ["plot_run"]
