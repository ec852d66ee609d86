"""The wall-force series under real mpiexec (2 and 4 ranks; also runs on 1): its buffers stay
bounded however long the run, and it writes the bytes of a writer that kept every step's
contacts until an append and summed them with ``math.fsum`` (a zero +0)."""

import math

import numpy as np
import pytest

from pdyn.config import OutputConfig
from pdyn.fields.exact import GroupSums
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import drum_with_piston

pytestmark = pytest.mark.mpi


class _ListWriter:
    """A wall-force writer that keeps every step's contacts until an append, then gathers
    them and sums each (step, wall, component) with ``math.fsum``: the reference whose bytes
    the bounded writer (exact partial sums per rank) must write."""

    def __new__(cls, folder, flush_at):
        from pdyn.capture import contact_network
        from pdyn.io import wallforces as wf

        class ListWriter(wf.WallForceWriter):
            collects = frozenset({"wall_loads"})

            def due(self, step):
                return step % wf.FLUSH == 0 or self.flush_at(step)

            def collect(self, contact, store, lists, dt, step, time):
                if not hasattr(self, "_list"):
                    self._list = []
                    super().collect(contact, store, lists, dt, step, time)  # the wall order
                net = contact_network(contact, store, lists, dt, spheres=False)
                force = -(net["normal_force"] + net["tangential_force"])
                point = store.pos[self.walls[-1 - net["id"][:, 1]]]
                load = np.concatenate((force, np.cross(net["ends"][1::2] - point, force)), 1)
                self._list.append((step, step * dt, net["id"][:, 1], load))

            def __call__(self, view):
                self.flush(view)

            def flush(self, view):
                if not getattr(self, "_list", None):
                    return
                if not self._started:
                    self._start(view)
                mine, self._list = self._list, []
                parts = view.comm.gather(mine, root=0)
                if view.comm.rank == 0:
                    rows = []
                    for t, (step, time, _, _) in enumerate(parts[0]):
                        wall = np.concatenate([p[t][2] for p in parts])
                        load = np.concatenate([p[t][3] for p in parts])
                        tot = [[math.fsum(load[wall == w, c].tolist()) + 0.0 for c in range(6)]
                               for w in self.wall_ids]
                        rows.append([step, time] + [f for w in tot for f in w[:3]]
                                    + [m for w in tot[self.n_box:] for m in w[3:]])
                    fmt = ",".join(["%d"] + ["%.17g"] * (len(rows[0]) - 1)) + "\n"
                    wf.append_text(self.path, "".join(fmt % tuple(r) for r in rows))
                view.comm.barrier()

        return ListWriter(folder, flush_at)


def test_wall_forces_bounded_and_the_same_bytes(comm, shared_dir, monkeypatch):
    """The wall-force writer appends once its ranks hold about ``BUFFER_ROWS`` rows of partial
    sums (here made small): once the spheres reach the walls it never holds much more, and
    the file holds the bytes of the writer that kept every step's contacts until an append
    (the reference above, run in the same steps into another folder)."""
    import pdyn.assembly
    from pdyn.io import WallForceWriter, wallforces

    monkeypatch.setattr(wallforces, "BUFFER_ROWS", 400)
    real = pdyn.assembly.make_writers
    monkeypatch.setattr(pdyn.assembly, "make_writers", lambda out, *more: real(out, *more) + [
        _ListWriter(shared_dir / "ref", lambda step: step % 50 == 0)])
    sim = Simulation(drum_with_piston(output=OutputConfig(
        folder=str(shared_dir / "new"), snapshot_every=50, wall_forces=True)), comm=comm)
    writer = next(w for w in sim.writers if type(w) is WallForceWriter)
    held = []
    emit = GroupSums.emit
    monkeypatch.setattr(GroupSums, "emit", lambda self, *a: (emit(self, *a), held.append(self.n)))
    sim.run(120)
    assert 1 < writer._every < 50  # appends by size, every few steps
    assert max(held[60:]) <= 4 * wallforces.BUFFER_ROWS  # once the spheres reach the walls
    idle_barrier(comm)
    if comm.rank == 0:
        new = (shared_dir / "new" / "wall_forces.csv").read_bytes()
        assert len(new.splitlines()) == 121
        assert new == (shared_dir / "ref" / "wall_forces.csv").read_bytes()
