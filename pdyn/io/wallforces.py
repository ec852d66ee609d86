"""The total force on each wall, every step, as a CSV time series (``wall_forces.csv``).

One row per step: ``step``, ``time`` (s), then for each wall (in id order −1, −2, ...) the
three components (N) of the total force the spheres exert on it — minus the sum of the
forces the walls exert on the spheres in contact, normal and tangential (the numbers of the
contact network, ``ContactPass.contact_list``). Columns are named after the wall: ``x_lo``
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

Independent of the rank count bit for bit: each rank contributes its wall contacts (sphere id,
wall id, force), rank 0 gathers them and sums each wall's in ascending sphere id — the same
numbers in the same order on any number of ranks. Rows are buffered and appended when a
snapshot or checkpoint is written, every ``FLUSH`` steps, when the ranks' buffers hold about
``BUFFER_ROWS`` contacts each and at the end of a run (bounded memory); a restart
keeps the rows up to its step (the file as it was goes to ``superseded/``, as snapshots do).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from .._jit import JIT
from .hdf5 import OutputWriteError, agree, attempt, make_folder, write_bytes_atomic
from .runid import claim_folder
from .writer import Writer

FILE_NAME = "wall_forces.csv"
#: steps between appends to the file (at most; snapshots and checkpoints append too)
FLUSH = 1000
#: wall contacts a rank buffers between appends, about (72 B each): fewer steps between
#: appends when the walls hold many contacts
BUFFER_ROWS = 1 << 15


def buffer_bytes(ranks: int) -> int:
    """The most the series' buffers hold (bytes, rank 0's): its own rows with room to double
    (72 B each: step, sphere and wall id, force and torque), and at an append every rank's
    gathered and concatenated (for ``pdyn.checks.check_memory``)."""
    return 72 * BUFFER_ROWS * (2 + 2 * int(ranks))


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


def sum_by_wall(steps: np.ndarray, wall: np.ndarray, sphere: np.ndarray, force: np.ndarray,
                wall_ids: np.ndarray, step_list: np.ndarray) -> np.ndarray:
    """(len(step_list), W, C) totals: the ``force`` rows (K, C) of each (step, wall) summed
    in ascending ``sphere`` id (the one order every rank count reproduces)."""
    out = np.zeros((len(step_list), len(wall_ids)) + np.shape(force)[1:])
    if len(steps) == 0:
        return out
    order = np.lexsort((sphere, wall, steps))
    s_row = np.searchsorted(step_list, steps[order])
    w_col = np.searchsorted(-wall_ids, -wall[order])  # wall ids −1, −2, ... descending
    _add_rows(s_row, w_col, np.asarray(force)[order].reshape(len(order), -1),
              out.reshape(len(step_list), len(wall_ids), -1))
    return out


@njit(**JIT)
def _add_rows(s_row, w_col, force, out):
    """out[s_row[k], w_col[k]] += force[k] for k in order, one by one (``np.add.at``'s
    sums, compiled)."""
    for k in range(s_row.shape[0]):
        for c in range(force.shape[1]):
            out[s_row[k], w_col[k], c] += force[k, c]


class ContactBuffer:
    """A rank's wall contacts since the last append: (step, sphere id, wall id, load (6))
    rows in preallocated arrays that double when full, so adding a step costs a copy of its
    contacts and nothing is kept per step (the append rule bounds how many rows it holds)."""

    def __init__(self, capacity: int = 1024):
        self.n = 0
        self.ids = np.empty((capacity, 3), np.int64)  # step, sphere id, wall id
        self.load = np.empty((capacity, 6))

    def add(self, step: int, ids: np.ndarray, load: np.ndarray) -> None:
        k = len(ids)
        if self.n + k > len(self.ids):
            grown = max(2 * len(self.ids), self.n + k)
            self.ids = np.resize(self.ids, (grown, 3))
            self.load = np.resize(self.load, (grown, 6))
        self.ids[self.n:self.n + k, 0] = step
        self.ids[self.n:self.n + k, 1:] = ids
        self.load[self.n:self.n + k] = load
        self.n += k

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, load) of the rows held (copies), and empty the buffer."""
        out = self.ids[:self.n].copy(), self.load[:self.n].copy()
        self.n = 0
        return out


class WallForceWriter(Writer):
    """Records every step's wall contacts of this rank (:class:`ContactBuffer`) and appends
    the totals per wall to ``folder/wall_forces.csv`` (rank 0) at flush steps
    (``flush_at(step)``), every ``FLUSH`` steps, once the ranks hold about ``BUFFER_ROWS``
    contacts each (the interval set at each append from the most contacts a rank had in one
    step since the previous one; from one step on, at most doubling) and at :meth:`finish`: the
    memory it holds is bounded whatever the run's length."""

    name = "wall_forces"
    needs = frozenset({"walls"})  # the wall contacts of every step

    def __init__(self, folder: str | Path, flush_at=None):
        self.path = Path(folder) / FILE_NAME
        self.flush_at = flush_at or (lambda step: False)
        self._steps = np.empty(FLUSH, np.int64)
        self._times = np.empty(FLUSH)
        self._held = 0  # steps buffered
        self._most = 0  # the most contacts of one step since the last append
        self._every = 1  # steps between appends (the size rule's; at most doubling)
        self._contacts = ContactBuffer()
        self._started = False
        self.written: list[Path] = []  # the file, once started

    def due(self, step: int) -> bool:
        return True

    def __call__(self, view) -> None:
        if not self._started:
            self._start(view)
        if self._held == len(self._steps):  # at most FLUSH steps between appends
            self.flush(view)
        self._steps[self._held] = view.step
        self._times[self._held] = view.time
        self._held += 1
        before = self._contacts.n
        self._contacts.add(view.step, *wall_loads(view.wall_load, view.store, self.wall_ids,
                                                  self.wall_handles))
        self._most = max(self._most, self._contacts.n - before)
        if (view.step % FLUSH == 0 or self._held >= self._every
                or self.flush_at(view.step)):
            self.flush(view)

    def finish(self, view) -> None:
        """Append what is buffered (end of a run)."""
        self.flush(view)

    def _start(self, view) -> None:
        """Start the file: a header, and after a restart the rows up to its step."""
        walls = view.store.walls
        walls = walls[np.argsort(-view.store.gid[walls], kind="stable")]
        self.wall_ids = view.store.gid[walls].copy()
        self.wall_handles = walls
        names = wall_names(view.store.normal[walls], view.n_box)
        self.n_box = len(walls) if view.n_box is None else view.n_box
        header = (["step", "time"] + [f"{w}_f{a}" for w in names for a in "xyz"]
                  + [f"{w}_t{a}" for w in names[self.n_box:] for a in "xyz"])
        self._started = True
        start_series(self.path, header, view.first_step, view)
        self.written = [self.path]

    def flush(self, view) -> None:
        """Gather the buffered rows on rank 0 and append them; set the steps until the next
        append from the largest rank's contacts per step (collective)."""
        if not self._held:
            return
        steps = self._steps[:self._held].copy()
        times = self._times[:self._held].copy()
        most = view.comm.allreduce_max(self._most)
        self._every = int(min(FLUSH, 2 * self._every, max(1, BUFFER_ROWS // max(most, 1))))
        self._most = 0
        self._held = 0
        parts = view.comm.gather(self._contacts.take(), root=0)

        def append():
            ids = np.concatenate([p[0] for p in parts])
            load = np.concatenate([p[1] for p in parts])
            totals = sum_by_wall(ids[:, 0], ids[:, 2], ids[:, 1], load, self.wall_ids, steps)
            totals = np.concatenate((totals[:, :, :3].reshape(len(steps), -1),  # forces, torques
                                     totals[:, self.n_box:, 3:].reshape(len(steps), -1)), axis=1)
            fmt = ",".join(["%d"] + ["%.17g"] * (1 + totals[0].size)) + "\n"  # exact
            text = "".join(fmt % (s, t, *row) for s, t, row in
                           zip(steps.tolist(), times.tolist(), totals.tolist()))
            append_text(self.path, text)

        agree(view.comm, attempt(append) if view.comm.rank == 0 else None)


def wall_loads(contacts: dict, store, wall_ids: np.ndarray, handles: np.ndarray) -> tuple:
    """(ids (K, 2), loads (K, 6)) of a step's wall contacts (``ContactPass.contact_list``):
    per contact the force on the wall F = −(normal + tangential force on the sphere), N, and
    its moment (c − p) × F about the wall's point p of the step, N·m (c: the contact point
    on the wall, the second end)."""
    ids = contacts["id"]
    load = np.empty((len(ids), 6))
    _loads(contacts["normal_force"], contacts["tangential_force"], contacts["ends"], store.pos,
           handles[np.searchsorted(-wall_ids, -ids[:, 1])], load)
    return ids, load


@njit(**JIT)
def _loads(normal, tangential, ends, pos, at, load):
    """Per wall contact k: F = −(normal + tangential force) into ``load[k, :3]`` and its moment
    (c − p) × F into ``load[k, 3:]``, c = ``ends[2k + 1]``, p = ``pos[at[k]]`` (the
    arithmetic of ``-(n + t)`` and ``np.cross``, so the same bits)."""
    for k in range(at.shape[0]):
        fx = -(normal[k, 0] + tangential[k, 0])
        fy = -(normal[k, 1] + tangential[k, 1])
        fz = -(normal[k, 2] + tangential[k, 2])
        ax = ends[2 * k + 1, 0] - pos[at[k], 0]
        ay = ends[2 * k + 1, 1] - pos[at[k], 1]
        az = ends[2 * k + 1, 2] - pos[at[k], 2]
        load[k, 0], load[k, 1], load[k, 2] = fx, fy, fz
        load[k, 3] = ay * fz - az * fy
        load[k, 4] = az * fx - ax * fz
        load[k, 5] = ax * fy - ay * fx


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
