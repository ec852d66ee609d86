"""Dense polydisperse frictional packings on several ranks (run under mpiexec at 2 and
4 ranks by tests/test_mpi_suite.py): big spheres settling among small ones under gravity
at size ratios 1:3 and 1:10, each big one touching dozens of small ones, give the 1-rank
trajectory bit for bit — spins, torques and contact history included — and a checkpoint
written on N ranks continues on one rank (and one written on one rank on N ranks) as the
uninterrupted run."""

import numpy as np
import pytest

from pdyn.config import BoxConfig, ContactConfig, OutputConfig, ParticlesConfig, SimulationConfig
from pdyn.parallel import SerialComm
from pdyn.restart import from_checkpoint
from pdyn.scenarios import place_spheres
from pdyn.simulation import Simulation

from .scenes import FRICTIONAL_STATE, assert_same_state, gather_fields

#: 600 to 1200 steps of 700 spheres on N ranks and on one; the fast lane's frictional
#: identity is test_parallel's
pytestmark = [pytest.mark.mpi, pytest.mark.slow]

#: steps to run: the spheres have fallen and piled up (a big sphere touching ~30 small ones at
#: 1:3, ~60 at 1:10)
STEPS = {3: 600, 10: 1200}


def mixture(ratio, n_small=700, big=0.25, seed=5, **cfg):
    """Three spheres of radius ``big`` and ``n_small`` of radius big/``ratio`` placed at random
    in a walled box at ~20 % solid fraction, twice as high as wide: they fall and pile up on
    the floor; gravity, Hertz contacts with friction 0.5 and rolling friction 0.05,
    restitution 0.5."""
    small = big / ratio
    radii = np.concatenate((np.full(3, big), np.full(n_small, small)))
    rng = np.random.default_rng(seed)
    radii = radii * rng.uniform(0.95, 1.05, radii.size)  # no two alike
    L = ((4.0 / 3.0 * np.pi * radii**3).sum() / 0.4) ** (1.0 / 3.0)
    hi = np.array([L, L, 2.0 * L])
    pos = place_spheres(radii, np.zeros(3), hi, seed)
    return SimulationConfig(
        particles=ParticlesConfig(positions=pos, radii=radii, density=1000.0),
        box=BoxConfig(lo=(0.0, 0.0, 0.0), hi=tuple(hi)),
        contact=ContactConfig(law="hertz", youngs_modulus=1e6, restitution=0.5, friction=0.5,
                              rolling_friction=0.05),
        gravity=(0.0, 0.0, -9.81), progress=False, balance_every=20, balance_threshold=1.0,
        reorder_every=30, **cfg)


def _most_records(sim) -> int:
    """The most contact-history records one sphere holds, over the ranks."""
    return sim.comm.allreduce_max(int(sim.store.history_count[sim.store.owned].max()))


@pytest.mark.parametrize("ratio", [3, 10])
def test_packing_bit_identical_to_one_rank(comm, ratio):
    cfg = mixture(ratio)
    sim = Simulation(cfg, comm=comm)
    sim.run(STEPS[ratio])
    assert sim.rebuilds > 5 and _most_records(sim) >= (25 if ratio == 3 else 50)
    state = gather_fields(sim, FRICTIONAL_STATE)
    ref = Simulation(cfg, comm=SerialComm())
    ref.run(STEPS[ratio])
    assert_same_state(state, ref, "from the 1-rank run")


def test_packing_restart_across_rank_counts(comm, shared_dir):
    """The N-rank checkpoint half way continued on one rank, and the 1-rank checkpoint
    continued on N ranks: both end where the uninterrupted run ends, bit for bit."""
    steps = STEPS[10]
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
    comm.barrier()
    many = from_checkpoint(shared_dir / "s" / "checkpoints" / f"ckpt_{half:08d}.h5", comm=comm,
                           output=OutputConfig(folder=str(shared_dir / "y")))
    many.run(steps - half)
    assert_same_state(many, want, "when a 1-rank checkpoint continues on N ranks")
