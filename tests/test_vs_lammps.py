"""``benchmarks/vs_lammps.py --paired``: the two simulations of one process step the same
chunks in turn without disturbing each other, and the driver refuses ``--paired`` without a
frictionless and a frictional coefficient."""

from argparse import Namespace

import pytest

from pdyn.simulation import Simulation

from .conftest import benchmark_script


@pytest.fixture(scope="module")
def vs_lammps():
    return benchmark_script("vs_lammps")


@pytest.mark.parametrize("first", ["mu0", "mu"])
def test_paired_run_steps_both_alike_and_each_as_alone(vs_lammps, first):
    args = Namespace(pdyn_config="", friction=0.5, law="hooke", first=first, scale=0.01,
                     steps=7, warmup=150, chunk=3, solid_fraction=0.3)
    res = vs_lammps._paired_pdyn(args)
    assert res["steps"] == [157, 157] and res["chunks"] == 3  # chunks of 3, 3 and 1 steps
    assert res["wall_s"] > 0 and res["wall_s_mu0"] > 0 and res["chunk_ratio_median"] > 0
    for mu, energy in zip((0.5, 0.0), res["kinetic_energy"]):  # interleaving changes nothing
        alone = Simulation(vs_lammps.pdyn_gas(args, mu, 0.01, 157))
        alone.run()
        assert alone.kinetic_energy() == energy
    assert res["kinetic_energy"][0] != res["kinetic_energy"][1]  # friction did something


def test_paired_needs_both_coefficients(vs_lammps, capsys):
    with pytest.raises(SystemExit):
        vs_lammps.main(["--paired", "--friction", "0.5", "--codes", "pdyn"])
    assert "--paired needs 0 and a coefficient > 0 in --friction, got [0.5]" in \
        capsys.readouterr().err
