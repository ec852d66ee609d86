"""The total force on each wall, every step, as a CSV time series (``wall_forces.csv``).

One row per step: ``step``, ``time`` (s), then for each wall (in id order −1, −2, ...) the
three components (N) of the total force the spheres exert on it — minus the sum of the
forces the walls exert on the spheres in contact, normal and tangential (the contact
network's numbers, summed per wall by ``ContactPass.wall_sums``). Columns are named after the wall: ``x_lo``
is the wall at the low end of x (inward normal +x), ``z_hi`` the top, others — tilted
planes, every configured ``[[walls]]`` entry (a cylinder's force is the net force on it) —
``wall<k>`` with k = −id;
e.g. ``z_lo_fz`` is the floor's vertical load. After the forces, for each configured wall
the three components (N·m) of the torque of those forces about the wall's point (its point
of the step for a translating wall: a cylinder's axis point, a plane's point), ``wall<k>_tx``
…: the sum over its contacts of (c − p) × F, c the contact point on the wall's surface and
F the force on the wall there — a turning drum's driving torque is −τ·â. Numbers are
written with 17 significant digits, so they read back to the same bits
(``numpy.genfromtxt(path, delimiter=",", names=True)``, ``pandas.read_csv``).

Independent of the rank count bit for bit: each rank sums its wall contacts' loads per wall
exactly (in a long accumulator of integer limbs, [Collange2015]), rank 0 adds the ranks' limbs
and rounds each total once — the correctly rounded sum of every contact's load (as
``math.fsum``), whatever the ranks and the order. Rows are buffered and appended when a
snapshot or checkpoint is written, every ``FLUSH`` steps, when the ranks' buffers hold about
``BUFFER_ROWS`` limbs each and at the end of a run (bounded memory); a restart
keeps the rows up to its step (the file as it was goes to ``superseded/``, as snapshots do).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..fields.exact import GroupSums, group_totals
from .hdf5 import OutputWriteError, agree, attempt, make_folder, write_bytes_atomic
from .runid import claim_folder
from .writer import Writer

FILE_NAME = "wall_forces.csv"
#: steps between appends to the file (at most; snapshots and checkpoints append too)
FLUSH = 1000
#: rows of limbs of exact sums a rank buffers between appends, about (16 B each): fewer
#: steps between appends when many walls are loaded
BUFFER_ROWS = 1 << 15


def buffer_bytes(ranks: int) -> int:
    """The most the series' buffers hold (bytes, rank 0's): its own rows with room to double
    (16 B each: key and limb value), and at an append every rank's gathered and concatenated
    (for ``pdyn.checks.check_memory``)."""
    return 16 * BUFFER_ROWS * (2 + 2 * int(ranks))


def wall_names(normals: np.ndarray, n_box: int | None = None) -> list[str]:
    """A column name per wall from its inward normal: ``x_lo`` for +x, ``z_hi`` for −z,
    ``wall<k>`` (k = −id) for any other direction and for every wall after the first
    ``n_box`` (the box faces; the configured ``[[walls]]`` follow them)."""
    names = []
    for k, n in enumerate(np.asarray(normals, float)):
        a = int(np.argmax(np.abs(n)))
        face = np.count_nonzero(n) == 1 and (n_box is None or k < n_box)
        names.append(f"{'xyz'[a]}_{'lo' if n[a] > 0 else 'hi'}" if face else f"wall{k + 1}")
    return names


class WallForceWriter(Writer):
    """Collects every step's wall loads of this rank, summed exactly per wall
    (``ContactPass.wall_sums`` into a ``pdyn.fields.exact.GroupSums`` of 6 sums a wall: one
    compiled call a step), and appends the totals per wall to ``folder/wall_forces.csv``
    (rank 0) when due: at flush steps (``flush_at(step)``), every ``FLUSH`` steps, once the
    ranks hold about ``BUFFER_ROWS`` rows each (the interval set at each append from the most
    rows a rank added in one step since the previous one; from one step on, at most doubling)
    and at :meth:`finish`: the memory it holds is bounded whatever the run's length."""

    name = "wall_forces"
    collects = frozenset({"wall_loads"})  # every step: the pass records the wall contacts
    velocities = False  # (what it writes was collected with the force pass)

    def __init__(self, folder: str | Path, flush_at=None):
        self.path = Path(folder) / FILE_NAME
        self.flush_at = flush_at or (lambda step: False)
        self._steps = np.empty(FLUSH, np.int64)
        self._times = np.empty(FLUSH)
        self._held = 0  # steps buffered
        self._most = 0  # the most rows of one step since the last append
        self._every = 1  # steps between appends (the size rule's; at most doubling)
        self._sums = None  # GroupSums, from the first collect
        self._started = False
        self.written: list[Path] = []  # the file, once started

    def due(self, step: int) -> bool:
        """Whether the end of ``step`` appends (or starts the file)."""
        held = self._held + 1  # with the step's own row
        return (not self._started or step % FLUSH == 0 or held >= self._every  # (≤ FLUSH)
                or self.flush_at(step))

    def collect(self, contact, store, lists, dt: float, step: int, time: float) -> None:
        """Step ``step``'s wall loads, summed exactly per wall, held."""
        if self._sums is None:
            walls = store.walls[np.argsort(-store.gid[store.walls], kind="stable")]
            self.walls = walls
            self.wall_ids = store.gid[walls].copy()  # −1, −2, ...: descending
            self._column = np.full(int(-np.min(self.wall_ids, initial=-1)), -1, np.int64)
            self._column[-1 - self.wall_ids] = np.arange(len(walls))  # wall −1 − k: its column
            self._sums = GroupSums(6 * len(walls))
        before = self._sums.n
        contact.wall_sums(store, lists, dt, self._sums, self._column, self._held)
        self._most = max(self._most, self._sums.n - before)
        self._steps[self._held] = step
        self._times[self._held] = time
        self._held += 1

    def __call__(self, view) -> None:
        self.flush(view)

    def finish(self, view) -> None:
        """Append what is buffered (end of a run)."""
        self.flush(view)

    def _start(self, view) -> None:
        """Start the file: a header, and after a restart the rows up to its step."""
        names = wall_names(view.store.normal[self.walls], view.n_box)
        self.n_box = len(self.walls) if view.n_box is None else view.n_box
        header = (["step", "time"] + [f"{w}_f{a}" for w in names for a in "xyz"]
                  + [f"{w}_t{a}" for w in names[self.n_box:] for a in "xyz"])
        self._started = True
        start_series(self.path, header, view.first_step, view)
        self.written = [self.path]

    def flush(self, view) -> None:
        """Gather the buffered rows on rank 0 and append them; set the steps until the next
        append from the largest rank's rows per step (collective)."""
        if not self._held:
            return
        if not self._started:
            self._start(view)
        steps = self._steps[:self._held].copy()
        times = self._times[:self._held].copy()
        most = view.comm.allreduce_max(self._most)
        self._every = int(min(FLUSH, 2 * self._every, max(1, BUFFER_ROWS // max(most, 1))))
        self._most = 0
        self._held = 0
        parts = view.comm.gather(self._sums.take(), root=0)

        def append():
            totals = group_totals(np.concatenate([p[0] for p in parts]),
                                  np.concatenate([p[1] for p in parts]),
                                  len(steps) * len(self.wall_ids) * 6
                                  ).reshape(len(steps), len(self.wall_ids), 6)
            totals = np.concatenate((totals[:, :, :3].reshape(len(steps), -1),  # forces, torques
                                     totals[:, self.n_box:, 3:].reshape(len(steps), -1)), axis=1)
            fmt = ",".join(["%d"] + ["%.17g"] * (1 + totals[0].size)) + "\n"  # exact
            text = "".join(fmt % (s, t, *row) for s, t, row in
                           zip(steps.tolist(), times.tolist(), totals.tolist()))
            append_text(self.path, text)

        agree(view.comm, attempt(append) if view.comm.rank == 0 else None)


def start_series(path: Path, header: list[str], step: int, view) -> None:
    """Start the CSV series ``path`` with its ``header``, keeping the rows of an earlier run
    up to ``step`` (a restart at ``step`` > 0; the file as it was went to ``superseded/``,
    :func:`keep_series`). Rank 0 writes; collective."""

    def write():
        lines = [",".join(header)]
        if step > 0 and path.exists():
            try:
                old = path.read_text().splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise OutputWriteError(f"{path}: cannot read it to continue ({exc})") from None
            lines += [ln for ln in old[1:] if ln.split(",", 1)[0].isdigit()
                      and ln.count(",") == len(header) - 1
                      and int(ln.split(",", 1)[0]) <= step]
        make_folder(path.parent)
        write_bytes_atomic(path, ("\n".join(lines) + "\n").encode())

    claim_folder(path.parent, view.run_id, view.comm)
    agree(view.comm, attempt(write) if view.comm.rank == 0 else None)


def append_text(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` (rank 0's part of a series' append)."""
    try:
        with open(path, "a") as f:
            f.write(text)
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot append ({exc.strerror or exc})") from None


def keep_series(path: Path, step: int, dest: Path) -> list[Path]:
    """A restart at ``step``: copy the series ``path`` into the folder ``dest`` if it holds
    rows after ``step`` (the continued run rewrites it with the rows up to ``step``); return
    the copy's path in a list (empty when nothing was copied). Raises
    :class:`OutputWriteError`."""
    path = Path(path)
    try:
        if not path.is_file():
            return []
        last = [ln for ln in path.read_text().splitlines()[1:] if ln.split(",", 1)[0].isdigit()]
        if not last or int(last[-1].split(",", 1)[0]) <= step:
            return []
        make_folder(dest)
        write_bytes_atomic(dest / path.name, path.read_bytes())
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot copy it aside ({exc.strerror or exc})"
                               ) from None
    return [dest / path.name]


def read_series(path: str | Path) -> tuple[list[str], np.ndarray]:
    """(column names, rows as a float array) of a CSV series (``wall_forces.csv``,
    ``thermo.csv``)."""
    lines = Path(path).read_text().splitlines()
    names = lines[0].split(",")
    rows = np.array([[float(x) for x in ln.split(",")] for ln in lines[1:] if ln],
                    float).reshape(-1, len(names))
    return names, rows


read_wall_forces = read_series


__all__ = ["FILE_NAME", "WallForceWriter", "read_series", "read_wall_forces", "wall_names"]
