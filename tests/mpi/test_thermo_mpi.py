"""thermo.csv on several ranks: the same bytes as the 1-rank run's, and after a restart on
the same rank count the same bytes as the uninterrupted run's."""

from dataclasses import replace

import pytest

from pdyn.config import OutputConfig
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import walled_pile

pytestmark = pytest.mark.mpi


def _config(folder):
    cfg = walled_pile(output=OutputConfig(folder=str(folder), thermo_every=50,
                                          checkpoint_every=300))
    return cfg.with_(contact=replace(cfg.contact, friction=0.5, rolling_friction=0.05))


def test_thermo_does_not_depend_on_ranks_or_restart(comm, shared_dir):
    Simulation(_config(shared_dir / "n"), comm=comm).run(600)
    idle_barrier(comm)
    many = (shared_dir / "n" / "thermo.csv").read_bytes() if comm.rank == 0 else None
    cont = from_checkpoint(shared_dir / "n" / "checkpoints" / "ckpt_00000300.h5", comm=comm,
                           output=_config(shared_dir / "n").output)
    cont.run(300)
    idle_barrier(comm)
    if comm.rank == 0:
        Simulation(_config(shared_dir / "one"), comm=SerialComm()).run(600)
        one = (shared_dir / "one" / "thermo.csv").read_bytes()
        assert len(one.splitlines()) == 13
        assert many == one
        assert (shared_dir / "n" / "thermo.csv").read_bytes() == one
    idle_barrier(comm)
