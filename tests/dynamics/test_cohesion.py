"""Cohesion (``pdyn.dynamics.cohesion``, issue 49): DMT's pull-off force 2π w R*, spheres at
rest carrying their weight plus the attraction, the simplified JKR force k A against the
intersection circle's area, per material pair (mixing and ``[[interactions]]``), and bad
parameters refused in one line."""

import math

import numpy as np
import pytest

from pdyn.config import ConfigError, ContactConfig, config_from_dict
from pdyn.dynamics.cohesion import DMT, SJKR, cohesion_force, intersection_area
from pdyn.dynamics.contact import ContactLaw
from pdyn.dynamics.laws import effective_modulus
from pdyn.dynamics.materials import pair_cohesion

from ..conftest import benchmark_script
from .test_statics import E, G, MASS, NU, R, by_gid, elastic, scene, settle, static_overlap

W = 2.0  # J/m², work of adhesion: 2π w R = 0.126 N, 1.1 × the sphere's weight
K = 5e4  # J/m³, cohesion energy density (k A about the weight at rest)


def lens_area(r1, r2, d):
    """LIGGGHTS' sjkr contact area: π/4 (d − r1 − r2)(d + r1 − r2)(d − r1 + r2)(d + r1 + r2)/d²
    (the circle where the surfaces of spheres r1, r2 at centre distance d intersect)."""
    return abs(math.pi / 4 * (d - r1 - r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2)
               / (d * d))


def test_the_kernels_give_the_closed_forms():
    """DMT: 2π w R*, also what the Coulomb limit adds (LAMMPS' F_ne + 2 F_pulloff); sjkr: k
    times the intersection circle's area (sphere pairs of unequal radii and a wall), nothing
    added to the Coulomb limit (LIGGGHTS' tangential_reduce off); both leave the overlap the
    tangential stiffness reads as it is."""
    r_eff = 0.01 * 0.03 / 0.04
    pull = 2 * math.pi * W * r_eff
    assert cohesion_force(DMT(W), 1e-5, r_eff, 0.04) == (pull, pull, 1e-5)
    for r1, r2, delta in ((0.01, 0.03, 1e-4), (0.01, 0.01, 3e-3), (0.002, 0.05, 1e-6)):
        s = r1 + r2
        f, added, delta_t = cohesion_force(SJKR(K), delta, r1 * r2 / s, s)
        assert f == pytest.approx(K * lens_area(r1, r2, s - delta), rel=1e-9)
        assert added == 0.0 and delta_t == delta
    for delta in (1e-7, 1e-4, 3e-3):  # a wall: a² = r² − (r − δ)²
        assert intersection_area(delta, R, math.inf) == pytest.approx(
            math.pi * (R * R - (R - delta) ** 2), rel=1e-12)


def test_dmt_pull_off_force_is_two_pi_w_r_star():
    """Two spheres (and a sphere and the floor) barely touching, no gravity: the contact pulls
    with 2π w R* less a Hertz force of 1e-21 of it — the pull-off force to rounding."""
    delta = 1e-12 * R
    sim = scene("hertz", 1.0, [[0.0, 0.0, R - delta], [0.0, 0.0, 3 * R - 2 * delta]], [R, R],
                cohesion="dmt", work_of_adhesion=W)
    net = sim.contact_network()
    assert len(net["force"]) == 2
    for ids, f in zip(net["id"], net["force"]):
        r_eff = R if ids.min() < 0 else R / 2  # the floor's contact, the pair's
        assert f == pytest.approx(-2 * math.pi * W * r_eff, rel=1e-14)


@pytest.mark.parametrize("model", ["dmt", "sjkr"])
def test_spheres_at_rest_carry_their_weight_plus_the_attraction(model):
    """Two spheres stacked on the floor under gravity settle where each contact's elastic
    (Hertz) force equals the weight it holds plus the attraction (DMT: 2π w R*; sjkr: k A at
    that overlap), to 1e-9 of the load; the net contact force is the weight above."""
    given = {"work_of_adhesion": W} if model == "dmt" else {"cohesion_energy_density": K}
    load = np.array([2.0, 1.0]) * MASS * G
    r_eff = np.array([R, R / 2])
    gaps = np.array([R - static_overlap("hertz", load[0], R),
                     2 * R - static_overlap("hertz", load[1], R / 2)])
    sim = scene("hertz", 0.3, [[0.0, 0.0, z] for z in np.cumsum(gaps)], [R, R],
                cohesion=model, **given)
    settle(sim, 1e-12, 200_000)
    z = by_gid(sim, "pos")[:, 2]
    overlap = np.array([R - z[0], 2 * R - (z[1] - z[0])])
    if model == "dmt":
        pull = 2 * math.pi * W * r_eff
    else:
        pull = K * np.array([math.pi * (R * R - z[0] ** 2), lens_area(R, R, z[1] - z[0])])
    assert pull.min() > 0.3 * load.min()
    np.testing.assert_allclose(elastic("hertz", overlap, r_eff) / (load + pull), 1.0, rtol=0,
                               atol=1e-9)
    net = sim.contact_network()
    order = np.argsort(net["id"].min(axis=1))  # the floor's contact first
    np.testing.assert_allclose(net["force"][order] / load, 1.0, rtol=0, atol=1e-9)


@pytest.mark.parametrize("model", ["dmt", "sjkr"])
def test_the_coulomb_limit_reads_the_repulsive_force_and_what_the_model_adds(model):
    """A sphere at rest on the floor with friction μ, then sliding at 0.1 m/s: its tangential
    force is μ (F_r + 2π w R) under DMT (LAMMPS' F_n0 = |F_ne + 2 F_pulloff|) and μ F_r under
    sjkr (LIGGGHTS' tangential_reduce off), F_r the elastic force at rest, to 1e-6."""
    given = {"work_of_adhesion": W} if model == "dmt" else {"cohesion_energy_density": K}
    mu = 0.5
    sim = scene("hertz", 0.3, [[0.0, 0.0, R - static_overlap("hertz", MASS * G, R)]], [R],
                cohesion=model, friction=mu, **given)
    assert sim.contact.law.rotating and sim.contact.law.cohesion == model
    settle(sim, 1e-12, 100_000)
    (force,) = sim.wall_contacts()["force"]
    assert force / (MASS * G) == pytest.approx(1.0, abs=1e-9)
    h = sim.store.owned[0]
    sim.store.vel[h, 0] = 0.1
    added = 2 * math.pi * W * R if model == "dmt" else 0.0
    ratios = []
    while sim.store.vel[h, 0] - R * sim.store.omega[h, 1] > 0.05:  # sliding, then sticking
        sim.run(1, progress=False)
        repulsive = elastic("hertz", R - sim.store.pos[h, 2], R)
        ratios.append(-sim.store.force[h, 0] / (mu * (repulsive + added)))
    assert len(ratios) > 5
    np.testing.assert_allclose(ratios[:5], 1.0, rtol=0, atol=1e-6)  # the steps it slides
    assert max(ratios) < 1.0 + 1e-6


MATS = [{"name": "a", "cohesion": "dmt", "work_of_adhesion": 0.04},
        {"name": "b", "work_of_adhesion": 0.09}, {"name": "c", "cohesion": "none"}]


def law_of(materials, interactions=(), **contact):
    cfg = config_from_dict({"contact": {"law": "hertz", "youngs_modulus": E, **contact},
                            "materials": materials, "interactions": list(interactions),
                            "scene": "gas", "progress": False})
    return ContactLaw.from_config(cfg.contact, **cfg.material_pairs(cfg.contact))


def test_each_pair_of_materials_has_its_own_work_of_adhesion():
    """w mixed as √(w₁ w₂) ([contact] names the model, b takes it; c has none: its pairs 0),
    an [[interactions]] table wins; one material's w is the run's."""
    law = law_of(MATS, cohesion="dmt")
    w = [[pair_cohesion(law.cohesion_model, law.table, a, b).w for b in range(3)]
         for a in range(3)]
    assert w[0][0] == 0.04 and w[1][1] == 0.09 and w[0][1] == w[1][0] == pytest.approx(0.06)
    assert w[2] == [0.0, 0.0, 0.0] and w[0][2] == 0.0
    law = law_of(MATS[:1] + [{"name": "b"}], [{"materials": ["a", "b"],
                                              "work_of_adhesion": 0.5}])
    assert law.cohesion == "dmt"
    assert pair_cohesion(law.cohesion_model, law.table, 1, 0).w == 0.5
    assert pair_cohesion(law.cohesion_model, law.table, 1, 1).w == 0.0
    one = law_of(MATS[:1])
    assert one.table is None and one.cohesion_model == DMT(0.04)
    assert law_of([{"name": "a"}]).cohesion_model is None


@pytest.mark.parametrize("given, message", [
    ({"contact": {"cohesion": "vdw"}},
     "contact.cohesion = 'vdw': choose from none, dmt, jkr, liquid_bridge, sjkr"),
    ({"contact": {"cohesion": "dmt"}}, "contact.work_of_adhesion: cohesion 'dmt' needs it"),
    ({"contact": {"cohesion": "dmt", "work_of_adhesion": -1.0}},
     "contact.work_of_adhesion = -1.0: "),
    ({"contact": {"cohesion": "sjkr", "work_of_adhesion": 0.1}},
     "contact.work_of_adhesion = 0.1: only for cohesion 'dmt' or 'jkr' (this is 'sjkr')"),
    ({"contact": {"work_of_adhesion": 0.1}},
     "contact.work_of_adhesion = 0.1: only for cohesion 'dmt' or 'jkr' (the run's: 'none')"),
    ({"contact": {"law": "linear", "cohesion": "jkr", "work_of_adhesion": 0.1}},
     "contact.law = 'linear': cohesion 'jkr' takes law 'hertz'"),
    ({"contact": {"cohesion": "sjkr", "cohesion_energy_density": "x"}},
     "contact.cohesion_energy_density = 'x': expected a number"),
    ({"materials": [{"name": "a", "cohesion": "dmt"}]},
     "materials[0].work_of_adhesion: cohesion 'dmt' needs it"),
    ({"materials": [{"name": "a", "cohesion": "dmt", "work_of_adhesion": 0.1},
                    {"name": "b", "cohesion": "sjkr", "cohesion_energy_density": 1.0}]},
     "materials[1].cohesion = 'sjkr': one cohesion model per run (materials[0] has 'dmt')"),
    ({"materials": [{"name": "a"}], "interactions": [
        {"materials": ["a", "a"], "cohesion": "dmt"}]},
     "interactions[0].work_of_adhesion: cohesion 'dmt' needs it"),
    ({"contact": {"cohesion": "liquid_bridge", "liquid_volume": 1e-9, "contact_angle": 10.0}},
     "contact.surface_tension: cohesion 'liquid_bridge' needs it"),
    ({"contact": {"cohesion": "liquid_bridge", "liquid_volume": 1e-9, "surface_tension": 0.07,
                  "contact_angle": 95.0}}, "contact.contact_angle = 95.0: "),
    ({"contact": {"cohesion": "liquid_bridge", "liquid_volume": 0.0, "surface_tension": 0.07,
                  "contact_angle": 0.0}}, "contact.liquid_volume = 0.0: "),
    ({"contact": {"cohesion": "dmt", "work_of_adhesion": 0.1, "surface_tension": 0.07}},
     "contact.surface_tension = 0.07: only for cohesion 'liquid_bridge' (this is 'dmt')"),
])
def test_bad_cohesion_parameters_are_refused_in_one_line(given, message):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"scene": "gas", "progress": False, **given})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_skin_below_the_jkr_pull_off_distance_is_refused():
    """JKR's contacts hold down to δ_c: the lists' skin must reach that far (one line); the
    table of sub-models names the cohesion models the config accepts."""
    from pdyn import config
    from pdyn.dynamics import laws
    assert config.COHESIONS == laws.names("cohesion")
    from pdyn.dynamics.cohesion import jkr_limit
    with pytest.raises(ConfigError) as err:
        jkr_run([[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]], neighbour_skin=1e-6)
    reach = -jkr_limit(JW, JES, JR)
    assert str(err.value) == (f"neighbour_skin = 1e-06: below the reach {reach:.4g} m of "
                              "cohesion 'jkr' past touching (the largest spheres'); give "
                              "neighbour_skin at least that")


def test_a_contact_config_without_cohesion_builds_no_cohesion_record():
    """No cohesion: the record is None (the kernels compiled without any cohesion code)."""
    law = ContactLaw.from_config(ContactConfig(law="hertz", friction=0.3))
    assert law.cohesion == "none" and law.cohesion_model is None
    assert [m.part for m in law.models] == ["normal", "damping", "tangential"]
    assert effective_modulus(E, NU) > 0


# ------------------------------------------------------------------ JKR
#: the closed forms and the runs of the validation tables (benchmarks/cohesion_validation.py)
CLOSED = benchmark_script("cohesion_validation")
JR, JE, JNU, JRHO, JW, JES = (CLOSED.JR, CLOSED.JE, CLOSED.JNU, CLOSED.JRHO, CLOSED.JW,
                              CLOSED.JES)
jkr, sticking_speed, jkr_run = CLOSED.jkr_force, CLOSED.sticking_speed, CLOSED.jkr_run


def test_jkr_pull_off_force_and_limit():
    """The kernel's force at the overlap of the largest pull, −a²/(3R*) with a³ = 9π w R*²/
    (8E*), is −3/2 π w R* to rounding; its contact radius inverts δ(a) to rounding over the
    branch; δ_c = −3 a_c²/R*, where a contact opens (held just above, not below)."""
    from pdyn.dynamics.cohesion import JKR, holds, jkr_limit, jkr_radius
    assert CLOSED.jkr_kernel_pull_off() < 1e-13  # over R* = R, R/2 and 10 µm
    for r_eff in (JR, JR / 2, 1e-5):
        a_c = (math.pi * JW * r_eff**2 / (8 * JES)) ** (1 / 3)
        assert jkr_limit(JW, JES, r_eff) == pytest.approx(-3 * a_c * a_c / r_eff, rel=1e-14)
        for a in a_c * np.array([1.01, 1.5, 3.0, 30.0]):
            delta = a * a / r_eff - math.sqrt(2 * math.pi * JW * a / JES)
            assert jkr_radius(JW, JES, delta, r_eff) == pytest.approx(a, rel=1e-11)
        limit = jkr_limit(JW, JES, r_eff)
        assert holds(JKR.of(JW, JES), limit * (1 - 1e-12), r_eff)
        assert not holds(JKR.of(JW, JES), limit * (1 + 1e-12), r_eff)
        assert not holds(DMT(JW), -1e-12, r_eff) and not holds(SJKR(K), -1e-12, r_eff)


@pytest.mark.parametrize("speed", [0.01, 0.05])
def test_jkr_force_follows_the_analytic_curve_loading_and_unloading(speed):
    """A sphere flies at the floor (JKR, elastic): before it touches, nothing at negative
    overlap; from the touch on, every step's force is JKR's F(δ) to 1e-9 of the pull-off
    force, loading, unloading and past zero overlap; slow (0.01 m/s) it stays held, fast
    (0.05 m/s) it opens at δ_c and flies off with no force."""
    from pdyn.dynamics.cohesion import jkr_limit
    sim = jkr_run([[0.0, 0.0, -0.05 + JR + 2e-6]], [[0.0, 0.0, -speed]])
    assert sim.contact.law.rotating  # the history says which contacts touched
    h = sim.store.owned[0]
    f_c = 1.5 * math.pi * JW * JR
    touched = held = False
    for _ in range(3000):
        sim.run(1, progress=False)
        delta = JR - (sim.store.pos[h, 2] + 0.05)
        force = sim.store.force[h, 2]  # the floor's push (> 0) or pull on the sphere
        touched = touched or delta >= 0.0
        if touched and delta >= jkr_limit(JW, JES, JR):  # (once below, it stays apart)
            assert force == pytest.approx(jkr(delta, JR), abs=1e-9 * f_c)
            held = held or delta < 0.0
        else:
            assert force == 0.0
    assert touched and held
    if speed < 0.02:
        assert JR - (sim.store.pos[h, 2] + 0.05) > jkr_limit(JW, JES, JR)
    else:
        assert sim.store.vel[h, 2] > 0.0 and JR - (sim.store.pos[h, 2] + 0.05) < -1e-4


def jkr_overlap(force, r_eff, w):
    """The overlap (m) at which JKR's force is ``force`` (N) on the branch stable under load
    (contact radius above that of the largest pull), by bisection on F(a)."""
    lo, hi = (9 * math.pi * w * r_eff**2 / (8 * JES)) ** (1 / 3), r_eff
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 4 * JES * mid**3 / (3 * r_eff) - math.sqrt(8 * math.pi * w * JES * mid**3) < force:
            lo = mid
        else:
            hi = mid
    a = 0.5 * (lo + hi)
    return a * a / r_eff - math.sqrt(2 * math.pi * w * a / JES)


def test_a_hanging_pair_held_apart_is_in_every_output_with_its_pull():
    """Two spheres hang from the ceiling by JKR adhesion (w such that each contact carries
    1.4 π w R* of the 3/2 π w R* it can: both held at negative overlap), placed where they
    rest: the pass balances gravity, and every output walk counts both contacts with the pull
    it applied — the network (forces m g and 2 m g, tensile), the contact pairs, the wall
    contacts and the wall-force sums, the contact statistics, and the per-sphere stress, whose
    closed form is V σ_zz = Σ_c b_c F_c (b the branch to the contact point: R + |δ_w| to the
    ceiling, half the centre distance to the pair's) and whose sum is the virial
    M g (H − z_cm) of a resting hanging column (H the ceiling's height)."""
    from pdyn.capture import capture
    from pdyn.config import BoxConfig, ParticlesConfig, SimulationConfig
    from pdyn.fields.exact import GroupSums, group_totals
    from pdyn.fields.sphere import sphere_tensors
    from pdyn.simulation import Simulation
    m = JRHO * 4 / 3 * math.pi * JR**3
    weight = m * G
    w = weight / (0.7 * math.pi * JR)  # the pair (R* = R/2) holds 1.4 π w R*, the wall too
    d_w, d_p = jkr_overlap(-2 * weight, JR, w), jkr_overlap(-weight, JR / 2, w)
    assert d_w < 0.0 and d_p < 0.0
    top, eps = 0.05, 1e-7
    sim = Simulation(SimulationConfig(
        contact=ContactConfig(law="hertz", youngs_modulus=JE, poisson_ratio=JNU,
                              cohesion="jkr", work_of_adhesion=w),
        box=BoxConfig(lo=(-0.05, -0.05, -0.05), hi=(0.05, 0.05, top),
                      boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=[[0.0, 0.0, top - JR + eps],
                                             [0.0, 0.0, top - 3 * JR + 2 * eps]],
                                  radii=[JR, JR], density=JRHO),
        gravity=(0.0, 0.0, -G), progress=False, neighbour_skin=1e-4, initial_overlap="allow"))
    s, lists = sim.store, sim.neighbours  # the first pass made both contacts (overlapping)
    h = s.owned[np.argsort(s.gid[s.owned])]
    z = np.array([top - JR + d_w, top - JR + d_w - 2 * JR + d_p])
    s.pos[h, 2], s.vel[h] = z, 0.0
    sim.contact.forces(s, lists, sim.gravity, sim.dt, record=True)
    np.testing.assert_allclose(s.force[h] / weight, 0.0, rtol=0, atol=1e-9)  # at rest
    net = sim.contact_network()
    order = np.argsort(net["id"][:, 1])  # the ceiling (gid −2) first
    assert net["id"][order].tolist() == [[0, -2], [0, 1]]
    np.testing.assert_allclose(net["force"][order] / weight, [-2.0, -1.0], rtol=0, atol=1e-9)
    assert sim.contact_pairs().tolist() == [[0, 1]]
    assert sim.wall_contacts()["id"].tolist() == [[0, -2]]
    stats = capture(sim.contact, s, lists, sim.dt, frozenset({"thermo"})).contact_stats
    assert stats == (2, 2, 0.0)  # (the largest overlap: none is positive)
    walls = s.walls[np.argsort(-s.gid[s.walls])]
    sums = GroupSums(6 * len(walls))
    sim.contact.wall_sums(s, lists, sim.dt, sums, np.arange(len(walls)), 0)
    loads = group_totals(*sums.take(), 6 * len(walls)).reshape(len(walls), 6)
    assert loads[1, 2] / weight == pytest.approx(-2.0, abs=1e-9)  # the ceiling pulled down
    stress, count, total = sphere_tensors(s, h, sim.contact.contact_list(
        s, lists, sim.dt, lower=False, tangential=sim.contact.recorded_tangential(lists)))
    volume = 4 / 3 * math.pi * JR**3
    assert count.tolist() == [2, 1]
    np.testing.assert_allclose(total[:, 2] / weight, [1.0, 1.0], rtol=0, atol=1e-9)
    branch = JR - d_p / 2  # from a centre to the middle of the gap
    want = np.array([(JR - d_w) * 2 * weight + branch * weight, branch * weight])
    np.testing.assert_allclose(volume * stress[:, 2, 2] / want, 1.0, rtol=1e-9)
    assert volume * stress[:, 2, 2].sum() == pytest.approx(2 * weight * (top - z.mean()),
                                                           rel=1e-9)


def test_the_default_time_step_resolves_sticky_spheres_resting_in_contact():
    """Sticky soft spheres (w = 10⁻³ E* R: the unloaded JKR contact radius a₀ is 0.15 R) rest
    deeper and stiffer than Hertz's 1 % overlap the contact time assumes: the contact time
    takes JKR's stiffness at rest, 6/5 E* a₀, and two spheres released there with a small
    approach speed oscillate (undamped) with the period 2π √(m*/(6/5 E* a₀)), to 1 %, at the
    default time step."""
    w = 1e-3 * JES * JR
    r_eff, m_eff = JR / 2, JRHO * 4 / 3 * math.pi * JR**3 / 2
    a0 = (4.5 * math.pi * w * r_eff**2 / JES) ** (1 / 3)
    k0 = 1.2 * JES * a0
    assert k0 > 1.25 * 2 * JES * math.sqrt(r_eff * 0.01 * JR)  # Hertz's at the 1 % overlap
    d0 = a0**2 / (3 * r_eff)
    omega = math.sqrt(k0 / m_eff)
    v = 0.01 * d0 * omega  # an amplitude of 1 % of δ₀
    sim = CLOSED.run_of([[0.0, 0.0, -JR + d0 / 2], [0.0, 0.0, JR - d0 / 2]],
                        [[0.0, 0.0, v / 2], [0.0, 0.0, -v / 2]],
                        {"cohesion": "jkr", "work_of_adhesion": w}, initial_overlap="allow")
    period = 2 * math.pi / omega
    assert sim.contact.law.contact_time(np.array([JR]), np.array([2 * m_eff])) == \
        pytest.approx(math.pi / omega, rel=1e-12)
    assert sim.dt == pytest.approx(period / 40, rel=1e-12)  # t_c/20: 40 steps a period
    gap = []
    for _ in range(400):
        sim.run(1, progress=False)
        z = by_gid(sim, "pos")[:, 2]
        gap.append(z[1] - z[0] - (2 * JR - d0))
    gap = np.array(gap)
    up = np.nonzero((gap[:-1] < 0) & (gap[1:] >= 0))[0]
    at = up + gap[up] / (gap[up] - gap[up + 1])  # the upward crossings, interpolated
    assert len(at) >= 8 and np.ptp(gap) < 0.05 * d0
    assert (at[-1] - at[0]) * sim.dt / (len(at) - 1) == pytest.approx(period, rel=0.01)


@pytest.mark.parametrize("factor", [0.98, 1.02])
def test_two_spheres_stick_below_and_rebound_above_the_sticking_speed(factor):
    """Two elastic JKR spheres head on at 0.98 and 1.02 of the closed-form sticking speed
    (R* = R/2, m* = m/2; 72 steps over |δ_c| at that speed): the slower pair is still held
    (closer than |δ_c| past touching) after 0.02 s, the faster one separates at the speed
    energy leaves it, √(v² − V_s²), to 10 %."""
    from pdyn.dynamics.cohesion import jkr_limit
    m = JRHO * 4 / 3 * math.pi * JR**3
    v_s = sticking_speed(JW, JES, JR / 2, m / 2)
    v = factor * v_s
    sim = jkr_run([[0.0, 0.0, -JR - 1e-8], [0.0, 0.0, JR + 1e-8]],
                  [[0.0, 0.0, v / 2], [0.0, 0.0, -v / 2]], dt=4e-6)
    sim.run(5000, progress=False)
    z = by_gid(sim, "pos")[:, 2]
    w = by_gid(sim, "vel")[:, 2]
    gap = z[1] - z[0] - 2 * JR
    if factor < 1:
        assert gap < -jkr_limit(JW, JES, JR / 2)
    else:
        assert gap > 1e-5 and w[1] - w[0] == pytest.approx(v_s * math.sqrt(factor**2 - 1),
                                                          rel=0.1)


# ------------------------------------------------------------------ liquid bridges
LV, LG, LT = CLOSED.LV, CLOSED.LG, CLOSED.LT
willett, rupture, bridged = CLOSED.willett, CLOSED.rupture, CLOSED.bridged


def test_the_bridge_kernel_is_willetts_closed_form_to_rupture():
    """The kernel: 2π R γ cos θ touching, Willett's expression apart, held to S_c."""
    from pdyn.dynamics.cohesion import LiquidBridge, cohesion_model, holds
    model = cohesion_model("liquid_bridge", {"liquid_volume": LV, "surface_tension": LG,
                                             "contact_angle": LT})
    assert isinstance(model, LiquidBridge) and model.rupture == pytest.approx(rupture(),
                                                                               rel=1e-15)
    for r_eff in (JR, JR / 2):
        assert cohesion_force(model, 1e-6, r_eff, math.inf) == (
            pytest.approx(willett(0.0, r_eff), rel=1e-15), 0.0, 1e-6)
        for s in (1e-7, 1e-5, 3e-4, 0.99 * rupture()):
            f, added, delta_t = cohesion_force(model, -s, r_eff, 2 * r_eff)
            assert f == pytest.approx(willett(s, r_eff), rel=1e-14)
            assert added == 0.0 and delta_t == 0.0
    assert holds(model, -rupture() * (1 - 1e-12), JR)
    assert not holds(model, -rupture() * (1 + 1e-12), JR)


def test_two_spheres_pulled_apart_feel_willetts_force_until_the_bridge_ruptures():
    """Two spheres touching, parting at 0.2 m/s: from the first step apart every step's force
    on each is Willett's at its separation (to 1e-9 of the bridge force) until the separation
    passes S_c, then nothing; a second pair that comes within S_c without touching feels
    nothing (no bridge formed)."""
    far = 0.02  # the second pair, beside the first along x
    sim = bridged([[0.0, 0.0, -JR], [0.0, 0.0, JR], [far, 0.0, -JR], [far, 0.0, JR + 1e-5]],
                  [[0.0, 0.0, -0.1], [0.0, 0.0, 0.1], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert sim.contact.law.rotating
    f_0 = willett(0.0, JR / 2)
    apart = ruptured = 0
    for _ in range(400):
        sim.run(1, progress=False)
        z = by_gid(sim, "pos")[:, 2]
        f = by_gid(sim, "force")[:, 2]
        gap = z[1] - z[0] - 2 * JR
        assert f[2] == 0.0 and f[3] == 0.0  # never touched: no bridge
        if gap > rupture():
            ruptured += 1
            assert f[1] == 0.0
        elif gap > 0.0:
            apart += 1
            assert -f[1] == pytest.approx(willett(gap, JR / 2), abs=1e-9 * f_0)
            assert f[0] == -f[1]
            if apart == 10:  # the bridge in the contact network, pulling
                net = sim.contact_network()
                assert net["id"].tolist() == [[0, 1]] and -f[0] < 0.0
                # the normal is d · (1/|d|): unit to rounding along an axis, so to 1 ulp
                assert net["force"][0] == pytest.approx(-f[0], rel=1e-15)
    assert apart > 20 and ruptured > 20
