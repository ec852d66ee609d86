"""The wall-force series under real mpiexec (2 and 4 ranks; also runs on 1): its buffers stay
bounded however long the run, and it writes the bytes of the writer that kept every step's
contacts until an append."""

import numpy as np
import pytest

from pdyn.config import OutputConfig
from pdyn.simulation import Simulation

from .scenes import drum_with_piston

pytestmark = pytest.mark.mpi


class _ListWriter:
    """The wall-force writer as it was before its buffers were bounded (a list of every
    step's contacts, concatenated, sorted and gathered at an append): the reference whose
    bytes the bounded writer must write."""

    def __new__(cls, folder, flush_at):
        from pdyn.io import wallforces as wf

        class ListWriter(wf.WallForceWriter):
            def __call__(self, view):
                if not self._started:
                    self._start(view)
                    self._list = []
                self._list.append((view.step, view.time, wf.wall_loads(
                    view.wall_load, view.store, self.wall_ids, self.wall_handles)))
                if view.step % wf.FLUSH == 0 or self.flush_at(view.step):
                    self.flush(view)

            def flush(self, view):
                if not getattr(self, "_list", None):
                    return
                steps = np.array([s for s, _, _ in self._list], np.int64)
                times = [t for _, t, _ in self._list]
                ids, load = (np.concatenate(a) for a in zip(*[r for _, _, r in self._list]))
                counts = [len(r[0]) for _, _, r in self._list]
                mine = (np.repeat(steps, counts), ids[:, 0], ids[:, 1], load)
                self._list = []
                parts = view.comm.gather(mine, root=0)
                if view.comm.rank == 0:
                    cat = [np.concatenate([p[k] for p in parts]) for k in range(4)]
                    tot = wf.sum_by_wall(cat[0], cat[2], cat[1], cat[3], self.wall_ids, steps)
                    tot = np.concatenate((tot[:, :, :3].reshape(len(steps), -1),
                                          tot[:, self.n_box:, 3:].reshape(len(steps), -1)), 1)
                    fmt = ",".join(["%d"] + ["%.17g"] * (1 + tot[0].size)) + "\n"
                    wf.append_text(self.path, "".join(
                        fmt % (s, t, *row) for s, t, row in zip(steps.tolist(), times,
                                                                 tot.tolist())))
                view.comm.barrier()

        return ListWriter(folder, flush_at)


def test_wall_forces_bounded_and_the_same_bytes(comm, shared_dir, monkeypatch):
    """The wall-force writer appends once its ranks hold about ``BUFFER_ROWS`` contacts (here
    made small): once the spheres reach the walls it never holds much more, and the
    file holds the bytes of the writer that kept every step's contacts until an append (the
    reference above, run in the same steps into another folder)."""
    import pdyn.assembly
    from pdyn.io import WallForceWriter, wallforces

    monkeypatch.setattr(wallforces, "BUFFER_ROWS", 40)
    real = pdyn.assembly.make_writers
    monkeypatch.setattr(pdyn.assembly, "make_writers", lambda out, *more: real(out, *more) + [
        _ListWriter(shared_dir / "ref", lambda step: step % 50 == 0)])
    sim = Simulation(drum_with_piston(output=OutputConfig(
        folder=str(shared_dir / "new"), snapshot_every=50, wall_forces=True)), comm=comm)
    writer = next(w for w in sim.writers if type(w) is WallForceWriter)
    held = []
    add = writer._contacts.add
    monkeypatch.setattr(writer._contacts, "add", lambda *a: (add(*a), held.append(
        writer._contacts.n)))
    sim.run(120)
    assert 1 < writer._every < 50  # appends by size, every few steps
    assert max(held[60:]) <= 4 * wallforces.BUFFER_ROWS  # once the spheres reach the walls
    comm.barrier()
    if comm.rank == 0:
        new = (shared_dir / "new" / "wall_forces.csv").read_bytes()
        assert len(new.splitlines()) == 121
        assert new == (shared_dir / "ref" / "wall_forces.csv").read_bytes()
