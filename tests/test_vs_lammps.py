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


def test_chute_models_have_lammps_dashpot(vs_lammps):
    """``--scene chute``: LAMMPS' γ_n m* of a sphere pair is pdyn's dashpot coefficient
    2 ζ √(m* k), and ``--damping mass_velocity`` is pdyn's LAMMPS-equivalent choice with
    that γ_n."""
    from pdyn.dynamics.contact import ContactLaw
    from pdyn.dynamics.laws import damping_ratio

    args = Namespace(scale=0.1, seed=0, damping="tangent")
    c = vs_lammps.chute_parameters(args)
    m_pair = 0.5 * c["scene"].density * 4.0 / 3.0 * 3.141592653589793 * 0.5**3
    zeta = damping_ratio(0.88)
    assert c["gamma"] * m_pair == pytest.approx(2 * zeta * (m_pair * c["k"]) ** 0.5, rel=1e-12)
    assert ContactLaw.from_config(vs_lammps.chute_contact(args, 0.5, c)).damping == "tangent"
    args.damping = "mass_velocity"
    law = ContactLaw.from_config(vs_lammps.chute_contact(args, 0.5, c))
    assert law.parameters.damping.gamma == c["gamma"]
    assert type(law.tangential_model).__name__ == "Projected"
