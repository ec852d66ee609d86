"""The same outcome on every rank count (run under mpiexec at 2 and 4 ranks by
tests/test_mpi_suite.py): a run that blows up, a NaN, a write failure on one rank, an absurd
block grid and an overlapping initial state are each one error that every rank raises, with the
same message, in the same step."""

import numpy as np
import pytest

from pdyn.checks import InitialStateError, RunawayError
from pdyn.config import BoxConfig, ContactConfig, OutputConfig, ParticlesConfig, SimulationConfig
from pdyn.domain import DecompositionError
from pdyn.io import OutputWriteError, hdf5, read_snapshot
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import dense_polydisperse

pytestmark = pytest.mark.mpi


def same_error_everywhere(comm, kind, action):
    """``action()`` raises ``kind`` on every rank with one message; returns it."""
    with pytest.raises(kind) as err:
        action()
    messages = comm.allgather(str(err.value))
    assert len(set(messages)) == 1, messages
    return messages[0]


def test_fast_sphere_stops_every_rank_in_the_same_step(comm):
    """A sphere at 15 000 m/s in a 40 m walled box (with 200 others spread over the ranks)."""
    rng = np.random.default_rng(2)
    pos = np.vstack(([[20.0, 20.0, 20.0]], rng.uniform(2, 38, (200, 3))))
    vel = np.zeros_like(pos)
    vel[0, 0] = 15000.0
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=pos, velocities=vel, radii=np.full(201, 0.2),
                                  density=1000.0),
        box=BoxConfig(lo=(0, 0, 0), hi=(40, 40, 40)), gravity=(0.0, 0.0, 0.0),
        contact=ContactConfig(youngs_modulus=1e6), progress=False)
    sim = Simulation(cfg, comm=comm)
    msg = same_error_everywhere(comm, RunawayError, lambda: sim.run(50))
    assert msg.startswith("step 1: particle 0 moved")


def test_nan_on_one_rank_stops_every_rank(comm):
    sim = Simulation(dense_polydisperse(("periodic",) * 3, n=200), comm=comm)
    sim.run(3)
    if comm.rank == comm.size - 1 and sim.store.owned.size:
        sim.store.vel[sim.store.owned[0], 1] = np.nan
    msg = same_error_everywhere(comm, RunawayError, sim.step)
    assert msg.startswith("step 4: particle") and "no longer finite" in msg


def test_write_failure_on_one_rank_ends_every_rank(comm, shared_dir, monkeypatch):
    """The last rank cannot write (as if its disk were full): every rank raises the same
    error, the failed snapshot leaves no file behind, the earlier snapshot still reads."""
    cfg = SimulationConfig(scale=0.05, progress=False,
                           output=OutputConfig(folder=str(shared_dir), snapshot_every=5))
    sim = Simulation(cfg, comm=comm)
    sim.run(5)

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    if comm.rank == comm.size - 1:
        monkeypatch.setattr(hdf5.os, "replace", no_space)
    msg = same_error_everywhere(comm, OutputWriteError, lambda: sim.run(5))
    assert "No space left on device" in msg
    assert comm.size == 1 or msg.startswith(f"rank {comm.size - 1}: ")
    monkeypatch.undo()
    idle_barrier(comm)
    if comm.rank == 0:
        folder = shared_dir / "snapshots"
        assert sorted(p.name for p in folder.glob("snap_00000010*")) == []
        assert not list(folder.glob("*.tmp"))
        assert read_snapshot(folder / "snap_00000005.h5")["step"] == 5
    idle_barrier(comm)


def test_absurd_block_grid_everywhere(comm):
    cfg = dense_polydisperse(("periodic",) * 3, n=100, blocks=(64, 64, 64))
    msg = same_error_everywhere(comm, DecompositionError, lambda: Simulation(cfg, comm=comm))
    assert "262144 blocks for 100 particles" in msg


def test_overlapping_start_everywhere(comm):
    cfg = dense_polydisperse(("periodic",) * 3, n=100)
    pos = np.array(cfg.particles.positions)
    pos[7] = pos[3]
    cfg = cfg.with_(particles=ParticlesConfig(positions=pos, radii=cfg.particles.radii,
                                              velocities=cfg.particles.velocities,
                                              masses=cfg.particles.masses))
    msg = same_error_everywhere(comm, InitialStateError, lambda: Simulation(cfg, comm=comm))
    assert msg.startswith("particles 3 and 7 overlap")


def test_damaged_rows_of_one_rank_stop_every_rank(comm, shared_dir):
    """A restart on the same rank count reads on each rank the rows it wrote: a bad value in
    the last rank's rows (valid checksum) is one error on every rank, not one rank leaving
    while the others wait for it."""
    import h5py

    from pdyn.config import OutputConfig
    from pdyn.io import OutputFileError
    from pdyn.restart import from_checkpoint

    cfg = dense_polydisperse(("wall",) * 3, n=200, dt=2e-3).with_(
        output=OutputConfig(folder=str(shared_dir / "a"), checkpoint_every=10))
    Simulation(cfg, comm=comm).run(10)
    path = shared_dir / "a" / "checkpoints" / "ckpt_00000010.h5"
    if comm.rank == 0:
        last = path if comm.size == 1 else path.with_name(f"ckpt_00000010.r{comm.size - 1:04d}.h5")
        with h5py.File(last, "r+") as f:
            vel = f["particles/vel"][()]
            vel[-1, 2] = np.inf
            del f["particles/vel"]
            f.create_dataset("particles/vel", data=vel, fletcher32=True)
    idle_barrier(comm)
    msg = same_error_everywhere(comm, OutputFileError, lambda: from_checkpoint(
        path, comm=comm, output=OutputConfig(folder=str(shared_dir / "b"))))
    assert "particles/vel[" in msg and "not finite" in msg


def test_memory_estimate_is_the_nodes_on_every_rank_count(comm, monkeypatch):
    """10 000 spheres need 6 MB; with 4 MB available on the node they do not fit however many
    of its ranks share them (each rank's share was compared with the node's memory, so 2
    ranks accepted them): the same error on every rank at every rank count, the ranks of this
    node counted."""
    from pdyn import scenarios
    from pdyn.config import SimulationConfig

    assert comm.node_size == comm.size  # the tests run on one machine
    monkeypatch.setattr(scenarios, "available_memory", lambda: 4e6)
    cfg = SimulationConfig(scale=10.0, progress=False)
    msg = same_error_everywhere(comm, scenarios.SceneError, lambda: Simulation(cfg, comm=comm))
    assert msg.startswith("scale = 10.0: ") and "more than the 0.00373 GiB available" in msg
    monkeypatch.setattr(scenarios, "available_memory", lambda: 7e6)
    Simulation(cfg, comm=comm)


def _forge(path, key, change):
    """Rewrite the dataset ``key`` of the HDF5 file ``path`` as ``change(values)`` with a
    valid checksum."""
    import h5py

    with h5py.File(path, "r+") as f:
        values = change(f[key][()].copy())
        del f[key]
        f.create_dataset(key, data=values, fletcher32=True)


def _set(index, value):
    def change(a):
        a[index] = value
        return a
    return change


@pytest.mark.parametrize("case", ["history count", "history key", "id", "block owner"])
def test_forged_checkpoint_is_one_error_on_every_rank(comm, shared_dir, case):
    """Forged counts and indices (valid checksums) in the rows the last rank wrote, or in the
    block map every rank reads: restarting on this rank count, every rank raises the same
    error naming the row of the file."""
    from pdyn.config import OutputConfig
    from pdyn.io import OutputFileError
    from pdyn.io.checkpoint import checkpoint_header
    from pdyn.restart import from_checkpoint

    cfg = dense_polydisperse(("periodic",) * 3, n=200, seed=4, dt=2e-3, friction=0.5).with_(
        output=OutputConfig(folder=str(shared_dir / "a"), checkpoint_every=20))
    Simulation(cfg, comm=comm).run(20)
    path = shared_dir / "a" / "checkpoints" / "ckpt_00000020.h5"
    first = int(checkpoint_header(path)["rows_per_rank"][:-1].sum())  # the last rank's
    idle_barrier(comm)  # every rank has read it
    if comm.rank == 0:
        piece = path if comm.size == 1 else path.with_name(
            f"ckpt_00000020.r{comm.size - 1:04d}.h5")
        if case == "history count":
            _forge(piece, "particles/history_count", _set(0, 99))
        elif case == "history key":
            _forge(piece, "records/history_key", _set(0, -1))
        elif case == "id":
            _forge(piece, "particles/gid", _set(0, 10**6))
        else:
            _forge(path, "exchange/owner", _set(0, comm.size + 5))
    idle_barrier(comm)
    msg = same_error_everywhere(comm, OutputFileError, lambda: from_checkpoint(
        path, comm=comm, output=OutputConfig(folder=str(shared_dir / "b"))))
    assert msg.startswith(f"{path}: "), msg
    assert {"history count": "particles/history_count adds up to",
            "history key": "= -1: not a key of another sphere",
            "id": f"particles/gid[{first}] = 1000000: not an id of this run (0 to 199)",
            "block owner": "exchange/owner is not a map of the"}[case] in msg, msg


def _config_walls(path):
    """The stored config gains a plane (the checkpoint holds the box faces alone)."""
    import json

    import h5py

    with h5py.File(path, "r+") as f:
        table = json.loads(f.attrs["config"])
        table["walls"] = [{"type": "plane", "point": [0.0, 0.0, 1.0], "normal": [0.0, 0.0, 1.0]}]
        f.attrs["config"] = json.dumps(table)


@pytest.mark.parametrize("case", ["sphere wider than the box", "walls of the config"])
def test_checkpoint_against_its_run_is_one_error_on_every_rank(comm, shared_dir, case):
    """Values that read cleanly but do not fit the run a restart builds from them (a sphere
    in the last rank's rows wider than the walled box; a stored config building other walls
    than the checkpoint holds): every rank raises the same error."""
    from pdyn.config import OutputConfig
    from pdyn.io import OutputFileError
    from pdyn.restart import from_checkpoint

    cfg = dense_polydisperse(("wall",) * 3, n=200, seed=4, dt=2e-3, friction=0.5).with_(
        output=OutputConfig(folder=str(shared_dir / "a"), checkpoint_every=20))
    Simulation(cfg, comm=comm).run(20)
    path = shared_dir / "a" / "checkpoints" / "ckpt_00000020.h5"
    idle_barrier(comm)
    if comm.rank == 0:
        piece = path if comm.size == 1 else path.with_name(
            f"ckpt_00000020.r{comm.size - 1:04d}.h5")
        if case == "sphere wider than the box":
            _forge(piece, "particles/radius", _set(0, 1e3))
        else:
            _config_walls(path)
    idle_barrier(comm)
    msg = same_error_everywhere(comm, OutputFileError, lambda: from_checkpoint(
        path, comm=comm, output=OutputConfig(folder=str(shared_dir / "b"))))
    assert msg.startswith(f"{path}: "), msg
    assert {"sphere wider than the box": "= 1000.0: the sphere is wider than the box along",
            "walls of the config": "its stored config builds 6 box faces and 1 [[walls]]"}[case] \
        in msg, msg
