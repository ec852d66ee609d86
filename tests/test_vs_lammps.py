"""``benchmarks/vs_lammps.py --paired``: the two simulations of one process step the same
chunks in turn without disturbing each other, and the driver refuses ``--paired`` without a
frictionless and a frictional coefficient."""

from argparse import Namespace

import pytest

from pdyn.dynamics.friction import PROJECTED
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
    assert law.parameters.damping.coefficient == c["gamma"]
    assert law.tangential_model.history == PROJECTED


def test_legacy_choice_is_lammps_legacy_style_of_each_scene(vs_lammps):
    """``--damping mass_velocity`` (Hooke) and ``viscoelastic`` (Hertz): pdyn's damping of
    LAMMPS' ``gran/hooke/history`` or ``gran/hertz/history`` with the projected history — the
    gas' γ = 0 (elastic), the bed's viscoelastic γ given to ``gran/hertz/history`` with Kn =
    4/3 E*, Kt = 8 G*."""
    import bed as bed_scene

    from pdyn.dynamics.contact import ContactLaw
    from pdyn.dynamics.laws import effective_modulus

    for law, damping in vs_lammps.LEGACY.items():
        c = ContactLaw.from_config(vs_lammps.pdyn_contact(law, 0.5, damping))
        assert c.damping == damping and c.parameters.damping.coefficient == 0.0
        assert c.tangential_model.history == PROJECTED
        assert vs_lammps.lammps_pair_style(law, 0.5).split()[1] == f"gran/{law}/history"
    p = bed_scene.parameters(scale=0.02)
    c = ContactLaw.from_config(bed_scene.contact_config(p, 0.5, legacy=True))
    gamma = bed_scene.viscoelastic_coefficient(p)
    assert c.damping == "viscoelastic" and c.parameters.damping.coefficient == gamma
    assert c.tangential_model.history == PROJECTED
    lines = bed_scene.lammps_commands(p, {"top": 0.1, "dt": 1e-6}, 0.5, 1e-3, legacy=True)
    pair, = (line.split() for line in lines if line.startswith("pair_style"))
    floor, = (line for line in lines if line.startswith("fix floor"))
    e_star, nu = effective_modulus(p["youngs_modulus"], 0.3), 0.3
    kn, kt = (float(x) for x in pair[2:4])
    assert pair[1] == "gran/hertz/history"
    assert kn == pytest.approx(4 / 3 * e_star, rel=1e-14)
    assert kt == pytest.approx(8 * e_star * (1 - nu) / (2 * (2 - nu)), rel=1e-14)
    assert pair[4:] == [repr(gamma), "NULL", "0.5", "1", "limit_damping"]
    assert "damping viscoelastic" in floor and f"hertz/material 20000000.0 {gamma!r}" in floor
    assert "pair_style granular" in bed_scene.lammps_commands(
        p, {"top": 0.1, "dt": 1e-6}, 0.5, 1e-3)


@pytest.mark.parametrize("argv, message", [
    (["--scene", "bed", "--damping", "mass_velocity"],
     "--damping mass_velocity with --law hertz: LAMMPS' legacy hertz style damps as "
     "viscoelastic"),
    (["--damping", "tangent", "viscoelastic"],
     "--damping viscoelastic with --law hooke: LAMMPS' legacy hooke style damps as "
     "mass_velocity"),
])
def test_damping_of_another_law_is_refused(vs_lammps, capsys, argv, message):
    with pytest.raises(SystemExit):
        vs_lammps.main([*argv, "--codes", "pdyn"])
    assert message in capsys.readouterr().err


def test_flowing_chute_is_made_once_and_flows(vs_lammps, tmp_path, monkeypatch):
    """``--scene chute`` times a flow: the chute run from rest lands on its base and flows
    (contacts, downhill speed); the state is cached and read back, not run again."""
    import _common
    import chute_flow

    monkeypatch.setattr(_common, "CACHE", tmp_path)
    p = chute_flow.parameters(scale=0.1, seed=0, flow_time=3.0)
    rec = chute_flow.flowing_chute(p, log=lambda *a, **k: None)
    scene = chute_flow.flowing_scene(p, rec)
    assert rec["path"].startswith(str(tmp_path)) and rec["steps"] == round(3.0 / rec["dt"])
    m = chute_flow.measures(scene.positions, scene.velocities, scene)
    assert m == {k: rec["series"][-1][k] for k in m}
    assert m["contacts_per_sphere"] > 1.0 and m["vx"] > 0.5  # landed, flowing downhill
    assert (scene.velocities[scene.fixed] == 0).all() and scene.fixed.sum() == 7
    monkeypatch.setattr(chute_flow, "flow", lambda *a: pytest.fail("ran again"))
    again = chute_flow.flowing_chute(p)
    assert (again["positions"] == rec["positions"]).all()


def test_performance_page_is_written_from_its_json():
    """docs/performance.md is ``performance_tables.py``'s rendering of the runs kept in
    docs/performance/ (chute and LAMMPS' legacy models included): never edited by hand."""
    import json

    from .conftest import BENCHMARKS

    docs = BENCHMARKS.parent / "docs"
    runs = [json.loads(f.read_text()) for f in sorted((docs / "performance").glob("*.json"))]
    assert benchmark_script("performance_tables").render(runs) == \
        (docs / "performance.md").read_text()


def test_pairs_once_on_the_flowing_chute_keeps_the_bits(tmp_path, monkeypatch, capsys):
    """``pairs_once.py --scene chute --damping mass_velocity``: pairs handed over and pairs
    evaluated in both rows step the small flowing chute to the same bits."""
    script = benchmark_script("pairs_once")  # first: it puts benchmarks/ on the path
    import _common

    monkeypatch.setattr(_common, "CACHE", tmp_path)
    script.main(["--scene", "chute", "--scale", "0.1", "--flow-time", "3", "--damping",
                 "mass_velocity", "--steps", "60", "--chunk", "20", "--warmup", "5"])
    out = capsys.readouterr().out
    assert "chute (225 spheres, μ = 0.5, mass_velocity, 1 rank(s))" in out
    assert out.rstrip().endswith("same bits: True")
