"""Configured walls under real mpiexec (2 and 4 ranks; also runs on 1): a turning cylinder
and a translating plane turning about its normal, with friction, and a finite tube across a
turning drum with its torque written, give the 1-rank trajectory (and wall-force series) bit
for bit, and a restart continues it bit for bit (issue 33)."""

import numpy as np
import pytest

from pdyn.config import (BoxConfig, ContactConfig, OutputConfig, ParticlesConfig,
                         SimulationConfig)
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

from .scenes import FRICTIONAL_STATE, assert_same_state, run_then_restart, gather_fields

pytestmark = pytest.mark.mpi

#: a plane moving in along its normal and turning about it (a turning piston)
PISTON = {"type": "plane", "point": [0.0, -0.1, 0.0], "normal": [0.0, 1.0, 0.0],
          "velocity": [0.0, 0.5, 0.0], "angular_velocity": 40.0}
#: an open tube across the drum just above the bed, hit by the spheres thrown up (its outer
#: face and its rims)
TUBE = {"type": "cylinder", "point": [0.013, 0.0, 0.031], "axis": [0.0, 1.0, 0.0],
        "radius": 0.012, "length": 0.07}


def drum_with_piston(extra=PISTON, **cfg):
    """The drum scene at a third of its length (666 spheres, soft) thrown at 0.3 m/s, with a
    plane moving in from the side at 0.5 m/s (or the wall ``extra``)."""
    s = make_scene("drum", scale=1 / 3)
    v = np.random.default_rng(5).normal(0.0, 0.3, s.positions.shape)
    return SimulationConfig(
        particles=ParticlesConfig(positions=s.positions, velocities=v, radii=s.radii,
                                  density=s.density),
        box=BoxConfig(lo=s.box_lo, hi=s.box_hi, boundary=s.boundary),
        # the scene's contacts made soft (k = 1000 N/m), so that a few hundred steps are
        # tens of ms: the spheres reach the walls
        contact=ContactConfig(**{**s.contact, "youngs_modulus": 5e5}),
        walls=list(s.walls) + [extra],
        gravity=tuple(s.gravity), progress=False, **cfg)


@pytest.mark.slow  # 300 steps on N ranks and on one; the fast lane has the restart below
def test_moving_walls_bit_identical_to_one_rank(comm):
    cfg = drum_with_piston(reorder_every=20, balance_every=20, balance_threshold=1.0)
    sim = Simulation(cfg, comm=comm)
    sim.run(300)
    assert sim.rebuilds >= 4
    walls = sim.wall_contacts()["id"][:, 1]
    seen = sim.comm.allgather(np.unique(walls).tolist())
    assert {-1, -2} <= set(sum(seen, []))  # the cylinder and the piston both touched
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(300)
    assert_same_state(sim, ref, "from the 1-rank run")


def test_restart_with_moving_walls_is_bit_identical(comm, shared_dir):
    out = shared_dir / "walls"
    ref, cont = run_then_restart(lambda o: drum_with_piston(output=o), out, comm, 200, 100,
                                 wall_forces=True)
    cont.run(100)
    assert_same_state(ref, cont, "after the restart")
    if comm.rank == 0:
        head = (out / "a" / "wall_forces.csv").read_text().splitlines()[0].split(",")
        assert head[:5] == ["step", "time", "wall1_fx", "wall1_fy", "wall1_fz"]
        assert head[5:8] == ["wall2_fx", "wall2_fy", "wall2_fz"] and len(head) == 14
        assert head[-3:] == ["wall2_tx", "wall2_ty", "wall2_tz"]


def test_finite_tube_and_drum_torque_bit_identical_to_one_rank(comm, shared_dir):
    """A tube across the turning drum: on N ranks the state, and the wall-force series with
    the drum's and the tube's torques, are the 1-rank run's bit for bit; spheres touched the
    tube."""
    def cfg(folder):
        return drum_with_piston(TUBE, reorder_every=20, balance_every=20, balance_threshold=1.0,
                                output=OutputConfig(folder=str(folder), overwrite=True,
                                                    wall_forces=True))

    sim = Simulation(cfg(shared_dir / "n"), comm=comm)
    sim.run(200)
    got = gather_fields(sim, FRICTIONAL_STATE)
    if comm.rank == 0:
        ref = Simulation(cfg(shared_dir / "one"), comm=SerialComm())
        ref.run(200)
        assert_same_state(got, ref, "from the 1-rank run")
        a = (shared_dir / "n" / "wall_forces.csv").read_text()
        b = (shared_dir / "one" / "wall_forces.csv").read_text()
        assert a == b and len(a.splitlines()) == 201
        head = a.splitlines()[0].split(",")
        rows = np.array([[float(x) for x in ln.split(",")] for ln in a.splitlines()[1:]])
        assert np.abs(rows[:, head.index("wall2_fz")]).max() > 0.0  # spheres hit the tube
        assert np.abs(rows[:, head.index("wall1_tx")]).max() > 0.0
    comm.barrier()


def test_restart_with_a_finite_tube_is_bit_identical(comm, shared_dir):
    out = shared_dir / "tube"
    cfg = drum_with_piston(TUBE, output=OutputConfig(folder=str(out / "a"), checkpoint_every=100,
                                                     overwrite=True, wall_forces=True))
    ref = Simulation(cfg, comm=comm)
    ref.run(200)
    cont = from_checkpoint(out / "a" / "checkpoints" / "ckpt_00000100.h5", comm=comm,
                           output=OutputConfig(folder=str(out / "b"), overwrite=True,
                                               wall_forces=True))
    cont.run(100)
    assert_same_state(ref, cont, "after the restart")
    if comm.rank == 0:
        a = (out / "a" / "wall_forces.csv").read_text().splitlines()
        b = (out / "b" / "wall_forces.csv").read_text().splitlines()
        assert b[0] == a[0] and b[1:] == a[101:201]  # the continued rows, torques included
    comm.barrier()


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
    import pdyn.simulation
    from pdyn.io import WallForceWriter, wallforces

    monkeypatch.setattr(wallforces, "BUFFER_ROWS", 40)
    real = pdyn.simulation.make_writers
    monkeypatch.setattr(pdyn.simulation, "make_writers", lambda out: real(out) + [
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
