"""Several materials (``pdyn.dynamics.materials``): the mixing rules, the pair table the pass
reads, impacts of two materials against closed forms ([ChungOoi2011]), a sphere on a wall of
another material at the pair's restitution, and the material index through a checkpoint and
a snapshot."""

import math

import numpy as np
import pytest

from pdyn.config import OutputConfig, config_from_dict
from pdyn.dynamics.contact import ContactLaw
from pdyn.dynamics.laws import effective_modulus
from pdyn.dynamics.materials import mixed, pair_normal, pair_rolling, pair_tangential
from pdyn.io.snapshot import read_snapshot
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation

#: two materials of [ChungOoi2011]'s kind: glass and a steel (E Pa, ν, ρ kg/m³)
GLASS = {"name": "glass", "youngs_modulus": 4.8e10, "poisson_ratio": 0.2, "density": 2800.0}
STEEL = {"name": "steel", "youngs_modulus": 2.08e11, "poisson_ratio": 0.3, "density": 7850.0}
R = 0.01  # m


def values(m, **kw):
    """A material's value dict as ``mixed`` takes it (the ``[contact]`` defaults beside)."""
    base = {"youngs_modulus": 1e6, "poisson_ratio": 0.3, "restitution": 1.0, "friction": 0.0,
            "rolling_friction": 0.0, "stiffness": None}
    return {**base, **{k: v for k, v in m.items() if k in base}, **kw}


def test_mixing_follows_hertz_mindlin_and_the_geometric_mean():
    """E* and G* of two materials as [ChungOoi2011] §2 gives them, the pair's equivalent
    material reproducing both; e, μ, μ_r by the geometric mean; one material unchanged."""
    a = values(GLASS, restitution=0.9, friction=0.4, rolling_friction=0.01)
    b = values(STEEL, restitution=0.4, friction=0.1, rolling_friction=0.04)
    m = mixed("hertz", a, b)
    e_star = 1.0 / ((1 - 0.2**2) / 4.8e10 + (1 - 0.3**2) / 2.08e11)
    g_star = 1.0 / (2 * (2 - 0.2) * 1.2 / 4.8e10 + 2 * (2 - 0.3) * 1.3 / 2.08e11)
    assert effective_modulus(m["youngs_modulus"], m["poisson_ratio"]) == pytest.approx(
        e_star, rel=1e-12)
    law = ContactLaw("hertz", friction=0.3, **{k: m[k] for k in ("youngs_modulus",
                                                                "poisson_ratio")})
    assert law.tangential_model.kt_ratio == pytest.approx(4 * g_star / e_star, rel=1e-12)
    assert m["restitution"] == pytest.approx(math.sqrt(0.9 * 0.4), rel=1e-15)
    assert m["friction"] == pytest.approx(0.2, rel=1e-15)
    assert m["rolling_friction"] == pytest.approx(0.02, rel=1e-15)
    assert mixed("hertz", a, dict(a)) == a
    lin = mixed("linear", values(GLASS, stiffness=100.0), values(STEEL, stiffness=400.0))
    assert lin["stiffness"] == 200.0


def test_the_pair_table_holds_each_pairs_records():
    """The table's rows rebuild each pair's own law records, symmetric; overrides win; without
    a table the records given come back (plain Python, as numba's generated code)."""
    mats = [values(GLASS, friction=0.3), values(STEEL, restitution=0.5)]
    law = ContactLaw("hertz", materials=mats, interactions={(1, 0): {"friction": 0.7}})
    # Hertz E*, ζ, kind; μ, k_t/k_n, history; no rolling
    assert law.table.shape == (2, 2, 3 + 3 + 0)
    for a, b, mu in ((0, 0, 0.3), (0, 1, 0.7), (1, 0, 0.7), (1, 1, 0.0)):
        one = ContactLaw("hertz", **mixed("hertz", mats[a], mats[b]))
        assert pair_normal(law.parameters, law.table, a, b) == one.parameters
        t = pair_tangential(law.parameters, law.tangential_model, law.table, a, b)
        assert t.mu == mu
    assert pair_rolling(law.parameters, law.tangential_model, None, law.table, 0, 1) is None
    assert pair_normal(law.parameters, None, 1, 1) is law.parameters
    single = ContactLaw("hertz", materials=[mats[0]])
    assert single.table is None and single.parameters == ContactLaw(
        "hertz", **mats[0]).parameters


def pair_config(v):
    """Two spheres of glass (a, at −x) and steel (b) of radius R approaching at ``v`` each in
    open space, elastic Hertz contacts, no gravity."""
    return config_from_dict({
        "contact": {"law": "hertz"}, "materials": [GLASS, STEEL],
        "box": {"lo": [-1.0, -1.0, -1.0], "hi": [1.0, 1.0, 1.0], "boundary": ["open"] * 3},
        "particles": {"positions": [[-2 * R, 0.0, 0.0], [2 * R, 0.0, 0.0]], "radii": [R, R],
                      "velocities": [[v, 0.0, 0.0], [-v, 0.0, 0.0]],
                      "material": ["glass", "steel"]},
        "gravity": [0.0, 0.0, 0.0], "progress": False})


def test_two_materials_impact_follows_hertz_with_the_mixed_modulus():
    """Test 1 of [ChungOoi2011] between glass and steel: the peak force within 0.5 % and the
    contact time within two steps of Hertz's closed forms with the mixed E* and the pair's
    R*, m*; the rebound elastic."""
    v = 1.0
    sim = Simulation(pair_config(v))
    s = sim.store
    a, b = sorted(s.owned, key=lambda h: s.gid[h])
    x = R + 0.75 * v * sim.dt  # first touch half-way through the second step
    s.pos[a, 0], s.pos[b, 0] = -x, x
    peak, steps, touched = 0.0, 0, False
    while not (touched and sim.n_contacts == 0):
        sim.step()
        touched |= sim.n_contacts > 0
        steps += sim.n_contacts > 0
        peak = max(peak, float(np.linalg.norm(s.force[a])))
    ma, mb = (4 / 3 * math.pi * R**3 * m["density"] for m in (GLASS, STEEL))
    m_star, r_star, u = ma * mb / (ma + mb), R / 2, 2 * v
    e_star = 1.0 / ((1 - 0.2**2) / 4.8e10 + (1 - 0.3**2) / 2.08e11)
    overlap = (15 * m_star * u**2 / (16 * e_star * math.sqrt(r_star))) ** 0.4
    force = 4 / 3 * e_star * math.sqrt(r_star) * overlap**1.5
    duration = 2.868 * (m_star**2 / (r_star * e_star**2 * u)) ** 0.2
    assert peak == pytest.approx(force, rel=5e-3)
    assert abs(steps * sim.dt - duration) <= 2 * sim.dt
    assert s.vel[b, 0] - s.vel[a, 0] == pytest.approx(u, rel=1e-3)  # elastic: apart at 2 v
    assert ma * s.vel[a, 0] + mb * s.vel[b, 0] == pytest.approx(ma * v - mb * v, abs=1e-12)


@pytest.mark.parametrize("law", ["linear", "hertz"])
@pytest.mark.parametrize("pair", ["mixed", "interaction"])
def test_sphere_on_a_wall_of_another_material_rebounds_at_the_pairs_restitution(law, pair):
    """A glass sphere (e = 0.9) onto a steel floor (e = 0.4): it rebounds at the pair's e,
    √(0.9 · 0.4) mixed or 0.7 set by ``[[interactions]]``, within 2 % ([ChungOoi2011] test
    3 at the default time step)."""
    e = 0.7 if pair == "interaction" else math.sqrt(0.9 * 0.4)
    doc = {"contact": {"law": law, "youngs_modulus": 1e7 if law == "linear" else 4.8e10},
           "materials": [{**GLASS, "restitution": 0.9}, {**STEEL, "restitution": 0.4}],
           "box": {"lo": [-1.0, -1.0, 0.0], "hi": [1.0, 1.0, 1.0],
                   "boundary": ["periodic", "periodic", "wall"], "material": "steel"},
           "particles": {"positions": [[0.0, 0.0, 2 * R]], "radii": [R],
                         "velocities": [[0.0, 0.0, -1.0]], "material": "glass"},
           "gravity": [0.0, 0.0, 0.0], "progress": False}
    if law == "linear":
        for m in doc["materials"]:
            m.pop("youngs_modulus")  # the linear law's stiffness scale: [contact]'s
    if pair == "interaction":
        doc["interactions"] = [{"materials": ["steel", "glass"], "restitution": 0.7}]
    sim = Simulation(config_from_dict(doc))
    h = sim.store.owned[0]
    touched = False
    while not (touched and sim.n_contacts == 0):
        sim.step()
        touched |= sim.n_contacts > 0
    assert sim.store.vel[h, 2] == pytest.approx(e, rel=0.02)


def test_material_survives_checkpoint_and_snapshot(tmp_path):
    """Each sphere's and wall's material index is written to snapshots
    (``particles/material``) and checkpoints and comes back with its sphere on restart (the
    walls' from the config), where the pass reads it: the continued run of a glass and a
    steel sphere settling on a steel floor gives the uninterrupted run's bits."""
    doc = {"contact": {"law": "hertz", "restitution": 0.5},
           "materials": [GLASS, {**STEEL, "restitution": 0.8}],
           "box": {"lo": [0.0, 0.0, 0.0], "hi": [0.1, 0.1, 0.1], "material": "steel"},
           "particles": {"positions": [[0.03, 0.05, R], [0.07, 0.05, R]],
                         "radii": [R, R],
                         "material": ["glass", "steel"]},
           "gravity": [0.0, 0.0, -9.81], "progress": False}
    cfg = config_from_dict(doc).with_(output=output(tmp_path / "a"))
    sim = Simulation(cfg)
    sim.run(400)
    assert sim.n_contacts == 2  # both on the floor
    snap = read_snapshot(tmp_path / "a" / "snapshots" / "snap_00000400.h5")
    assert snap["material"][np.argsort(snap["id"])].tolist() == [0, 1]
    cont = from_checkpoint(tmp_path / "a" / "checkpoints" / "ckpt_00000200.h5",
                           output=output(tmp_path / "b"))
    order = np.argsort(cont.store.gid[cont.store.owned])
    assert cont.store.material[cont.store.owned][order].tolist() == [0, 1]
    walls = cont.store.material[np.isinf(cont.store.radius)]
    assert walls.size == 6 and (walls == 1).all()  # the steel box
    cont.run(200)
    mine = np.argsort(sim.store.gid[sim.store.owned])
    assert np.array_equal(cont.store.pos[cont.store.owned][order],
                          sim.store.pos[sim.store.owned][mine])
    assert np.array_equal(cont.store.vel[cont.store.owned][order],
                          sim.store.vel[sim.store.owned][mine])


def output(folder):
    """Snapshots and checkpoints every 200 steps into ``folder``."""
    return OutputConfig(folder=str(folder), snapshot_every=200, checkpoint_every=200,
                        overwrite=True)


def test_the_fast_wall_check_takes_the_softest_pair_that_can_occur():
    """``pdyn.checks._softest`` (the fast-wall refusal's deepest overlap) reads the softest
    pair of materials that can occur, not the first pair's law: spheres of a stiff material
    against walls of a soft one overlap as deep as the soft pair lets them."""
    from pdyn.checks import _softest

    stiff = {"youngs_modulus": 1e9, "poisson_ratio": 0.2, "restitution": 0.5,
             "friction": 0.0, "rolling_friction": 0.0, "stiffness": None}
    soft = {**stiff, "youngs_modulus": 1e6}
    radius, mass = np.array([0.002, 0.003]), np.array([8e-5, 3e-4])

    def law(occurs):
        return ContactLaw("hertz", materials=[stiff, soft], occurs=occurs)

    alone = _softest(ContactLaw("hertz", **{k: stiff[k] for k in (
        "youngs_modulus", "poisson_ratio", "restitution")}), radius, mass)
    assert _softest(law({(0, 0)}), radius, mass) == alone  # the stiff pair only
    with_wall = _softest(law({(0, 0), (0, 1)}), radius, mass)  # stiff spheres, soft walls
    assert with_wall == _softest(law({(0, 1)}), radius, mass)
    assert with_wall[0] > 10 * alone[0]
