"""Dense polydisperse frictional packings on several ranks (run under mpiexec at 2 and
4 ranks by tests/test_mpi_suite.py): big spheres settling among small ones under gravity
at size ratio 1:10, each big one touching dozens of small ones: a checkpoint written on N
ranks continues on one rank (and one written on one rank on N ranks) as the uninterrupted
run, spins, torques and contact history included. (Their N-rank runs equal the 1-rank run:
``test_same_bits.py``.)"""

import pytest

from pdyn.config import OutputConfig
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

from .conftest import idle_barrier
from .scenes import FRICTIONAL_STATE, MIXTURE_STEPS, assert_same_state, gather_fields, mixture

#: 1200 steps of 700 spheres on N ranks and on one; the fast lane's restarts across rank
#: counts are test_io_mpi's
pytestmark = [pytest.mark.mpi, pytest.mark.slow]


def test_packing_restart_across_rank_counts(comm, shared_dir):
    """The N-rank checkpoint half way continued on one rank, and the 1-rank checkpoint
    continued on N ranks: both end where the uninterrupted run ends, bit for bit."""
    steps = MIXTURE_STEPS[10]
    half = steps // 2

    def cfg(folder):
        return mixture(10, output=OutputConfig(folder=str(shared_dir / folder),
                                               checkpoint_every=half))

    full = Simulation(cfg("n"), comm=comm)
    full.run(steps)
    want = gather_fields(full, FRICTIONAL_STATE)
    if comm.rank == 0:
        Simulation(cfg("s"), comm=SerialComm()).run(half)
        one = from_checkpoint(shared_dir / "n" / "checkpoints" / f"ckpt_{half:08d}.h5",
                              comm=SerialComm(), output=OutputConfig(folder=str(shared_dir / "x")))
        one.run(steps - half)
        assert_same_state(one, want, "when an N-rank checkpoint continues on one rank")
    idle_barrier(comm)
    many = from_checkpoint(shared_dir / "s" / "checkpoints" / f"ckpt_{half:08d}.h5", comm=comm,
                           output=OutputConfig(folder=str(shared_dir / "y")))
    many.run(steps - half)
    assert_same_state(many, want, "when a 1-rank checkpoint continues on N ranks")
