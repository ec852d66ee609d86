"""Start-up and restart by share: every rank creates or reads only the particles of its own
blocks, and the state does not depend on the rank count (2 and 4 ranks give the 1-rank
state bit for bit)."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, OutputConfig, ParticlesConfig, SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.parallel.startup import GeneratedSource
from pdyn.restart import CheckpointSource, from_checkpoint
from pdyn.scenarios import make_scene
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import dense_polydisperse

FIELDS = ("gid", "pos", "vel", "radius", "mass", "force", "build_pos")


def everything(sim):
    """Every owned particle's fields, sorted by id, on every rank."""
    h = sim.store.owned
    parts = sim.comm.allgather({k: getattr(sim.store, k)[h] for k in FIELDS})
    gid = np.concatenate([p["gid"] for p in parts])
    order = np.argsort(gid, kind="stable")
    return {k: np.concatenate([p[k] for p in parts])[order] for k in FIELDS}


def assert_same(a, b):
    for k in FIELDS:
        assert np.array_equal(a[k], b[k]), f"{k} differs"


def on_one_rank(comm, make):
    """``make(SerialComm())`` on rank 0, its state broadcast."""
    state = everything(make(SerialComm())) if comm.rank == 0 else None
    idle_barrier(comm)
    return comm.bcast(state)


SCENES = [("drop", 0.3), ("gas", 0.02), ("very_polydisperse", 0.05), ("inhomogeneous", 0.02),
          ("more_polydisperse", 0.05), ("schornbaum", 0.05)]


@pytest.mark.parametrize("name,scale", SCENES)
def test_startup_same_state_on_every_rank_count(comm, name, scale):
    cfg = SimulationConfig(scene=name, scale=scale, progress=False, reorder_every=0)
    sim = Simulation(cfg, comm=comm)
    state = everything(sim)
    assert_same(state, on_one_rank(comm, lambda c: Simulation(cfg, comm=c)))
    whole = make_scene(name, scale=scale)  # the scene drawn whole
    assert np.array_equal(state["gid"], np.arange(len(whole)))
    assert np.array_equal(state["pos"], whole.positions)
    assert np.array_equal(state["radius"], whole.radii)


def test_startup_draws_only_the_cells_of_its_blocks(comm):
    """Each rank draws the cells that overlap its blocks: on several ranks fewer than all
    particles, and every particle it owns among them."""
    if comm.size == 1:
        pytest.skip("needs more than one rank")
    cfg = SimulationConfig(scene="reference", scale=0.2, progress=False)
    sim = Simulation(cfg, comm=comm)
    drawn = GeneratedSource(sim.scene).take(sim.exchange.grid, comm.rank)["gid"]
    assert np.isin(sim.store.gid[sim.store.owned], drawn).all()
    assert len(drawn) < 0.8 * len(sim.scene)
    assert comm.allreduce_sum(len(drawn)) < 1.6 * len(sim.scene)


def test_ranks_without_particles(comm):
    """Two spheres over eight blocks: most ranks own nothing and still step in lockstep."""
    cfg = SimulationConfig(
        particles=ParticlesConfig(positions=[[0.5, 0.5, 0.5], [1.4, 0.5, 0.5]],
                                  velocities=[[1.0, 0, 0], [-1.0, 0, 0]], radii=[0.3, 0.3]),
        box=BoxConfig(lo=(0, 0, 0), hi=(8, 1, 1), boundary=("wall",) * 3), blocks=(8, 1, 1),
        gravity=(0.0, 0.0, 0.0), dt=1e-3, progress=False)
    sim = Simulation(cfg, comm=comm)
    owned = comm.allgather(int(sim.store.owned.size))
    if comm.size > 2:
        assert 0 in owned
    sim.run(300)
    assert comm.allreduce_sum(int(sim.store.owned.size)) == 2
    assert_same(everything(sim), on_one_rank(comm, lambda c: _run(Simulation(cfg, comm=c))))


def _run(sim, steps=300):
    sim.run(steps)
    return sim


@pytest.mark.parametrize("periodic", [False, True])
def test_restart_same_state_on_every_rank_count(comm, shared_dir, periodic):
    """A checkpoint written on one rank, continued on this rank count, holds the written state
    bit for bit; each rank reads only a share of the rows."""
    boundary = ("periodic" if periodic else "wall",) * 3
    cfg = dense_polydisperse(boundary, n=300, dt=2e-3).with_(
        output=OutputConfig(folder=str(shared_dir / "a"), checkpoint_every=20))
    written = on_one_rank(comm, lambda c: _run(Simulation(cfg, comm=c), 20))
    idle_barrier(comm)
    path = shared_dir / "a" / "checkpoints" / "ckpt_00000020.h5"
    cont = from_checkpoint(path, comm=comm, output=OutputConfig(folder=str(shared_dir / "b")))
    assert_same(everything(cont), written)
    if comm.size > 1:  # what this rank read: a share of the rows
        source = checkpoint_source(path)
        assert len(source.take(cont.exchange.grid, comm.rank)["gid"]) < 0.9 * source.n
    # and continued: the same trajectory as the one-rank continuation
    cont.run(20)
    again = on_one_rank(comm, lambda c: _run(from_checkpoint(
        path, comm=c, output=OutputConfig(folder=str(shared_dir / "c"))), 20))
    assert_same(everything(cont), again)


def checkpoint_source(path):
    from pdyn.io.checkpoint import read_checkpoint_rows

    head, _, index = read_checkpoint_rows(path)
    return CheckpointSource(path, head, index)
