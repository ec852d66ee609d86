"""Single-particle benchmark runs and their closed-form solutions ([ChungOoi2011]), at pdyn's
default time step: used by the validation tests and by ``benchmarks/validation.py`` (plots).

One sphere against a floor wall (a half-space of the sphere's material, so E* = E/(2(1 − ν²))
and R* = r, m* = m), or two equal spheres (R* = r/2, m* = m/2), with Hertz–Mindlin contacts
(``pdyn.dynamics.friction``):

* normal elastic impact: maximum overlap δ_m = (15 m* v² / (16 E* √R*))^{2/5}, peak force
  F_m = 4/3 E* √R* δ_m^{3/2}, contact duration t_c = 2.868 (m*² / (R* E*² v))^{1/5}
  ([ChungOoi2011] tests 1–2, Hertz's solution);
* oblique impact at incident angle θ (from the normal) with speed v: in gross sliding
  (tan θ ≥ 7/2 μ (1 + e)) the tangential speed drops by μ (1 + e) v_n and the spin becomes
  ω r = 5/2 μ (1 + e) v_n; at smaller angles the rigid-body limit ends rolling, v_t' = ω r
  = 5/7 v_t ([ChungOoi2011] test 4 and the tests with spin);
* the normalised rebound: with V_s, V_s' the tangential speed of the contact point (centre
  and spin) before and after and V_n, V_n' the normal speeds of approach and rebound,
  Ψ₁ = V_s / (μ V_n), Ψ₂ = V_s' / (μ V_n') (the axes of [ChungOoi2011] test 5 as
  [KratosDEMbench] plots them; non-dimensional angles of incidence and reflection of the
  contact point as in [MawBarberFawcett1976]); for an elastic impact (e = 1) of pdyn's
  contact model Ψ₂ is one function of Ψ₁ for every μ, speed, size, mass and way of making
  the slip (sliding, spin, two spheres), of ν alone: :func:`psi_reference` computes it with
  a tiny step; the rigid-body limits bracket it (:func:`psi_rigid`); the theory with
  microslip (Mindlin–Deresiewicz, [MawBarberFawcett1976]'s problem) is one such curve too:
  :func:`psi_mindlin_deresiewicz`;
* two equal spheres meeting obliquely, with spin ([ChungOoi2011] tests 7–8 for one material):
  :func:`pair_oblique` with the rigid-body solution, :func:`collide` with the momentum and
  angular-momentum balance.

Units: SI (m, kg, s, Pa); Ψ dimensionless.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._jit import JIT
from .config import BoxConfig, ContactConfig, ParticlesConfig, SimulationConfig
from .simulation import Simulation

#: the material of the runs: a glass-like sphere (E, ν, ρ, radius)
GLASS = {"youngs_modulus": 4.8e10, "poisson_ratio": 0.2, "density": 2800.0, "radius": 0.01}


def effective(material=GLASS) -> dict:
    """E*, R*, m* of a sphere of ``material`` on a wall of the same material."""
    r = material["radius"]
    nu = material["poisson_ratio"]
    return {"E": material["youngs_modulus"] / (2.0 * (1.0 - nu * nu)), "R": r,
            "m": material["density"] * 4.0 / 3.0 * math.pi * r**3}


def hertz_impact(v: float, material=GLASS) -> dict:
    """Hertz's normal impact at speed ``v`` (m/s): ``overlap`` (m), ``force`` (N),
    ``duration`` (s)."""
    e = effective(material)
    d = (15.0 * e["m"] * v * v / (16.0 * e["E"] * math.sqrt(e["R"]))) ** 0.4
    return {"overlap": d, "force": 4.0 / 3.0 * e["E"] * math.sqrt(e["R"]) * d**1.5,
            "duration": 2.868 * (e["m"] ** 2 / (e["R"] * e["E"] ** 2 * v)) ** 0.2}


def on_floor(velocity, omega=(0.0, 0.0, 0.0), *, friction=0.0, restitution=1.0,
             law="hertz", gap=0.0, gravity=(0.0, 0.0, 0.0), material=GLASS) -> Simulation:
    """One sphere of ``material`` with its lowest point ``gap`` (m) above a floor wall
    (periodic in x and y), at the default time step."""
    r = material["radius"]
    cfg = SimulationConfig(
        contact=ContactConfig(law=law, youngs_modulus=material["youngs_modulus"],
                              poisson_ratio=material["poisson_ratio"], friction=friction,
                              restitution=restitution),
        box=BoxConfig(lo=(-1.0, -1.0, 0.0), hi=(1.0, 1.0, 1.0),
                      boundary=("periodic", "periodic", "wall")),
        particles=ParticlesConfig(positions=[[0.0, 0.0, r + gap]], radii=[r],
                                  velocities=[velocity], density=material["density"]),
        gravity=gravity, progress=False)
    sim = Simulation(cfg)
    if sim.contact.rotating:  # a frictionless sphere has no spin field (and keeps none)
        sim.store.omega[sim.store.owned] = omega
    return sim


def impact(velocity, omega=(0.0, 0.0, 0.0), *, record=False, **kw) -> dict:
    """A sphere hitting the floor (no gravity) from one step away: its velocity and spin after
    the contact; with ``record`` the time series of overlap and normal force during it."""
    vz = -velocity[2]
    # set up out of contact (a damped contact at set-up would leave a force for the first kick)
    sim = on_floor(velocity, omega, gap=kw.get("material", GLASS)["radius"], **kw)
    h = sim.store.owned
    r = sim.store.radius[h][0]
    sim.store.pos[h, 2] = r + 1.5 * vz * sim.dt  # first touch half-way through the 2nd step
    t, overlap, force, touched = [], [], [], False
    for _ in range(1_000_000):
        sim.step()
        if sim.n_contacts:
            touched = True
            if record:
                t.append(sim.time)
                overlap.append(r - sim.store.pos[h, 2][0])
                force.append(sim.store.force[h, 2][0])
        elif touched:
            break
    out = {"velocity": sim.store.vel[h][0].copy(), "omega": sim.store.values("omega", h)[0],
           "dt": sim.dt, "radius": r}
    if record:
        out.update(time=np.array(t), overlap=np.array(overlap), force=np.array(force))
    return out


def oblique(theta_deg: float, speed: float = 1.0, mu: float = 0.3, e: float = 1.0,
            spin: float = 0.0) -> dict:
    """Oblique impact at ``theta_deg`` from the normal (tangential along +x), initial spin
    ``spin`` (rad/s about y): pdyn's rebound (tangential speed, spin × r) and the rigid-body
    solution (gross sliding or ending in rolling, [ChungOoi2011] test 4 and the tests with
    spin)."""
    th = math.radians(theta_deg)
    vt, vn = speed * math.sin(th), speed * math.cos(th)
    res = impact((vt, 0.0, -vn), (0.0, spin, 0.0), friction=mu, restitution=e)
    r = res["radius"]
    slip = vt - spin * r  # contact-point speed along x (ω_y r adds −x at the bottom)
    if abs(slip) >= 3.5 * mu * (1.0 + e) * vn:  # gross sliding throughout
        dv = math.copysign(mu * (1.0 + e) * vn, slip)
        vt_rigid, wr_rigid = vt - dv, spin * r + 2.5 * dv
    else:  # ends rolling: contact-point speed 0, angular momentum about it conserved
        vt_rigid = (5.0 * vt + 2.0 * spin * r) / 7.0
        wr_rigid = vt_rigid
    return {"vt": res["velocity"][0], "wr": res["omega"][1] * r, "vt_rigid": vt_rigid,
            "wr_rigid": wr_rigid, "vn_out": res["velocity"][2], "vt_in": vt, "vn_in": vn,
            "wr_in": spin * r}


def mindlin_ratio(poisson: float) -> float:
    """Mindlin's no-slip tangential stiffness 8 G* a over Hertz's normal tangent stiffness
    2 E* a for two bodies of one material (G* = E* (1 − ν)/(2 (2 − ν)),
    [MindlinDeresiewicz1953], [ChungOoi2011] §2): 2 (1 − ν)/(2 − ν)."""
    return 2.0 * (1.0 - poisson) / (2.0 - poisson)


def psi_rigid(psi1, e: float = 1.0) -> np.ndarray:
    """Ψ₂ of a rigid sphere (I = 2/5 m r²) with Coulomb friction: sliding throughout,
    Ψ₂ = (Ψ₁ − 7/2 (1 + e))/e, where Ψ₁ ≥ 7/2 (1 + e); else it ends rolling, Ψ₂ = 0."""
    psi1 = np.asarray(psi1, dtype=float)
    slide = 3.5 * (1.0 + e)
    return np.where(np.abs(psi1) >= slide, (psi1 - np.sign(psi1) * slide) / e, 0.0)


def psi_reference(psi1, poisson: float = GLASS["poisson_ratio"], *, step: float = 5e-4,
                  cap: bool = True) -> np.ndarray:
    """Ψ₂ against Ψ₁ (array) of pdyn's continuous contact model in an elastic impact (e = 1):
    Hertz's normal force, the tangential spring s (the contact point's tangential displacement)
    with force −k_t(δ) s, k_t Mindlin's no-slip stiffness, capped at μ F_n (``cap``; the spring
    then reset to the capped force). With δ = δ_m x, t = (δ_m / V_n) τ, s = μ δ_m σ,
    V_s = μ V_n ψ and f = F_t / (μ F_m) the impact of any sphere on a wall or of two equal
    spheres (V_s' = 7/2 F_t / m* either way) is

        x'' = −5/4 x^{3/2},  σ' = ψ,  ψ' = −35/8 f,
        f = clip(3/2 κ √x σ, ±x^{3/2}),  κ = :func:`mindlin_ratio` (ν),

    from x = 0, x' = 1, σ = 0, ψ = Ψ₁ until x returns to 0; Ψ₂ = ψ / |x'|. Integrated here
    with classical RK4 of ``step`` (the clip inside the derivative, σ projected onto the cap
    after each step), independent of pdyn's kernels; the step 5e-4 of a contact lasting 2.94
    is converged to 2e-7 in Ψ₂ (against half of it, Ψ₁ = 0 … 14). This is the model pdyn
    implements, not Maw, Barber and Fawcett's microslip solution [MawBarberFawcett1976] (no
    annulus of partial slip, and the spring force scales with k_t(δ) as the contact
    unloads)."""
    psi = np.array(psi1, dtype=float, ndmin=1)
    a = 1.5 * mindlin_ratio(poisson)

    def rate(x, sig, psi):
        xp = max(x, 0.0)
        f = a * math.sqrt(xp) * sig
        if cap:
            f = np.clip(f, -xp**1.5, xp**1.5)
        return -1.25 * xp**1.5, psi, -4.375 * f

    h = step
    x, v, sig = 0.0, 1.0, np.zeros_like(psi)
    while True:
        a1, s1, p1 = rate(x, sig, psi)
        a2, s2, p2 = rate(x + 0.5 * h * v, sig + 0.5 * h * s1, psi + 0.5 * h * p1)
        v2 = v + 0.5 * h * a1
        a3, s3, p3 = rate(x + 0.5 * h * v2, sig + 0.5 * h * s2, psi + 0.5 * h * p2)
        v3 = v + 0.5 * h * a2
        a4, s4, p4 = rate(x + h * v3, sig + h * s3, psi + h * p3)
        v4 = v + h * a3
        x += h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        sig = sig + h / 6.0 * (s1 + 2.0 * s2 + 2.0 * s3 + s4)
        psi = psi + h / 6.0 * (p1 + 2.0 * p2 + 2.0 * p3 + p4)
        if x <= 0.0:
            return psi / -v
        if cap:
            sig = np.clip(sig, -x / a, x / a)  # |3/2 κ √x σ| ≤ x^{3/2}


@njit(**JIT)
def _mdr_springs(sig, xi2, x, dsig, kappa, slip):
    """One increment of the Winkler springs of the method of dimensionality reduction in the
    normalised units of :func:`psi_mindlin_deresiewicz`: the springs at ξ² = ``xi2`` under
    the overlap ``x`` move by ``dsig`` where they stick, slide at |σ| = (x − ξ²)/κ (if
    ``slip``), and are free (σ = 0) outside the contact (ξ² ≥ x); returns Σσ (times
    Δξ · 3/2 κ: the force f)."""
    total = 0.0
    for k in range(sig.shape[0]):
        bound = (x - xi2[k]) / kappa
        if bound <= 0.0:
            sig[k] = 0.0
            continue
        s = sig[k] + dsig
        if slip:
            s = min(max(s, -bound), bound)
        sig[k] = s
        total += s
    return total


def mdr_springs(springs: int) -> tuple:
    """The springs' squared positions ξ² (midpoints of ``springs`` equal cells of 0 … 1, the
    largest contact radius) and their displacements σ (zero)."""
    xi = (np.arange(springs) + 0.5) / springs
    return xi * xi, np.zeros(springs)


@njit(**JIT)
def _mdr_impact(psi1, kappa, xi2, step, slip):
    """Ψ₂ of each Ψ₁ of ``psi1`` (see :func:`psi_mindlin_deresiewicz`)."""
    out = np.empty(psi1.shape[0])
    dxi = 1.0 / xi2.shape[0]
    sig = np.zeros(xi2.shape[0])
    h = step
    for m in range(psi1.shape[0]):
        sig[:] = 0.0
        x, v, psi = 0.0, 1.0, psi1[m]  # psi: at the half step (leapfrog with the springs)
        while True:
            a1 = -1.25 * max(x, 0.0) ** 1.5  # the normal motion: classical RK4
            x2, v2 = x + 0.5 * h * v, v + 0.5 * h * a1
            a2 = -1.25 * max(x2, 0.0) ** 1.5
            x3, v3 = x + 0.5 * h * v2, v + 0.5 * h * a2
            a3 = -1.25 * max(x3, 0.0) ** 1.5
            x4, v4 = x + h * v3, v + h * a3
            a4 = -1.25 * max(x4, 0.0) ** 1.5
            x += h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
            v += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            if x <= 0.0:
                out[m] = psi / -v
                break
            f = 1.5 * kappa * dxi * _mdr_springs(sig, xi2, x, h * psi, kappa, slip)
            psi -= h * 4.375 * f
    return out


def psi_mindlin_deresiewicz(psi1, poisson: float = GLASS["poisson_ratio"], *,
                            springs: int = 1000, step: float = 2e-4,
                            slip: bool = True) -> np.ndarray:
    """Ψ₂ against Ψ₁ (array) of an elastic impact (e = 1) in Mindlin and Deresiewicz's theory
    of elastic spheres under varying normal and tangential loads [MindlinDeresiewicz1953]:
    Hertz's normal contact and, in the tangential direction, a sticking centre and a slipping
    annulus whose extent follows the whole loading history (Coulomb's law μ p locally, the
    normal and tangential problems uncoupled) — the problem Maw, Barber and Fawcett solved
    numerically for the oblique impact [MawBarberFawcett1976]. It is solved here with the
    method of dimensionality reduction ([PopovHess2014]; for this impact, [LyashenkoPopov2015]),
    which maps the axisymmetric contact, for any such history, onto independent springs along
    a line: at position x_1D the normal spring (stiffness E* per unit length) is compressed by
    d − x_1D²/R, the tangential one (stiffness 4 G* per unit length, G* of
    ``pdyn.dynamics.friction``) sticks while its force is below μ times the normal spring's
    and slides at that limit otherwise; the sums are Hertz's force and the tangential force.

    In :func:`psi_reference`'s units (overlap x = δ/δ_m, time τ = t V_n/δ_m, ψ = V_s/(μ V_n),
    a spring's displacement σ = u/(μ δ_m) at ξ = x_1D/√(R δ_m)) a spring is in contact where
    ξ² < x, sticks (σ' = ψ) while |σ| < (x − ξ²)/κ and slides at that bound,
    f = F_t/(μ F_m) = 3/2 κ ∫ σ dξ, ψ' = −35/8 f, x'' = −5/4 x^{3/2}, κ = :func:`mindlin_ratio`
    (ν): the same single parameter as pdyn's model. ``springs`` springs on 0 ≤ ξ ≤ 1, the
    normal motion by RK4 and ψ, σ by leapfrog, step ``step``; the defaults are converged to
    ~2·10⁻⁵ in Ψ₂ (against 2000 springs and half the step, Ψ₁ = 0 … 14). ``slip=False``: no
    spring ever slides (μ → ∞, [LyashenkoPopov2015]'s case)."""
    psi = np.array(psi1, dtype=float, ndmin=1)
    xi2, _ = mdr_springs(springs)
    return _mdr_impact(psi, mindlin_ratio(poisson), xi2, float(step), bool(slip))


def wall_rebound(vt, wr, vn_out, mu: float, psi2) -> tuple:
    """A sphere's tangential speed and ω r after an impact on a wall (m/s) whose contact-point
    slip v_t − ω r ends at Ψ₂ μ V_n' (``vn_out`` = V_n'): the friction impulse J changes v_t by
    −J/m and ω r by 5/2 J/m, so the slip by −7/2 J/m."""
    change = (np.asarray(psi2) * mu * vn_out - (np.asarray(vt) - np.asarray(wr))) / 3.5
    return vt + change, wr - 2.5 * change


def wall_psi(psi1: float, *, mu: float = 0.3, vn: float = 1.0, by_spin: bool = False,
             material=GLASS) -> float:
    """pdyn's elastic impact on a wall at normal speed ``vn`` (m/s) with contact-point slip
    Ψ₁ μ V_n made by the sphere's tangential velocity or, ``by_spin``, by its spin alone
    ([ChungOoi2011] tests 5 and 6): its Ψ₂."""
    r = material["radius"]
    slip = psi1 * mu * vn
    if by_spin:
        res = impact((0.0, 0.0, -vn), (0.0, -slip / r, 0.0), friction=mu, material=material)
    else:
        res = impact((slip, 0.0, -vn), friction=mu, material=material)
    v, w = res["velocity"], res["omega"]
    return (v[0] - w[1] * r) / (mu * v[2])


def pair(velocity, omega_a=(0.0, 0.0, 0.0), omega_b=(0.0, 0.0, 0.0), *, friction=0.0,
         restitution=1.0, material=GLASS) -> Simulation:
    """Two equal spheres of ``material`` in open space, centres on the x axis, sphere a at
    −x with ``velocity``, b at +x with −``velocity``, spins ``omega_a``, ``omega_b`` (rad/s),
    touching first half-way through the second step; the default time step; no gravity."""
    r = material["radius"]
    vx = float(velocity[0])
    cfg = SimulationConfig(
        contact=ContactConfig(law="hertz", youngs_modulus=material["youngs_modulus"],
                              poisson_ratio=material["poisson_ratio"], friction=friction,
                              restitution=restitution),
        box=BoxConfig(lo=(-1.0, -1.0, -1.0), hi=(1.0, 1.0, 1.0), boundary=("open",) * 3),
        particles=ParticlesConfig(positions=[[-2.0 * r, 0.0, 0.0], [2.0 * r, 0.0, 0.0]],
                                  radii=[r, r], velocities=[velocity, [-u for u in velocity]],
                                  density=material["density"]),
        gravity=(0.0, 0.0, 0.0), progress=False)
    sim = Simulation(cfg)
    a, b = ends(sim)
    x = r + 1.5 * vx * sim.dt  # the gap 2 (x − r), closing at 2 vx, closes at 1.5 steps
    sim.store.pos[a, 0], sim.store.pos[b, 0] = -x, x
    if sim.contact.rotating:  # a frictionless sphere has no spin field
        sim.store.omega[a], sim.store.omega[b] = omega_a, omega_b
    return sim


def ends(sim: Simulation):
    """Handles of the two spheres of a :func:`pair` run, in global-id order (a, b)."""
    s = sim.store
    a, b = sorted(s.owned, key=lambda h: s.gid[h])
    return a, b


def angular_momentum(sim: Simulation) -> np.ndarray:
    """Σ m x × v + 2/5 m r² ω of the owned spheres about the origin (kg m²/s)."""
    s = sim.store
    h = s.owned
    m = s.mass[h][:, None]
    spin = 0.4 * m * s.radius[h][:, None] ** 2 * s.values("omega", h)
    return (m * np.cross(s.pos[h], s.vel[h]) + spin).sum(axis=0)


def collide(sim: Simulation) -> dict:
    """Run a :func:`pair` through its contact. Returns the velocities and spins of a and b
    after it, the momentum and angular momentum before and after, the peak overlap, the
    angular impulse Σ dt |torque on a| (kg m²/s), and ``lever``: Σ dt δ n × F_t over the
    steps — what the contact's lever arm r (not the distance to the contact point, r − δ/2)
    adds to the angular momentum in pdyn's model (its torque on each sphere is r n × F_t),
    which velocity Verlet adds exactly this way."""
    s = sim.store
    a, b = ends(sim)
    r = s.radius[a]
    p0 = (s.mass[s.owned][:, None] * s.vel[s.owned]).sum(axis=0)
    l0 = angular_momentum(sim)
    lever, impulse = np.zeros(3), 0.0
    peak, touched = 0.0, False
    for _ in range(1_000_000):
        sim.step()
        if sim.n_contacts:
            touched = True
            overlap = 2.0 * r - np.linalg.norm(s.pos[b] - s.pos[a])
            peak = max(peak, overlap)
            torque = s.values("torque", [a])[0]
            lever += sim.dt * overlap / r * torque  # δ n × F_t = δ/r · torque on a
            impulse += sim.dt * np.linalg.norm(torque)
        elif touched:
            break
    return {"vel": (s.vel[a].copy(), s.vel[b].copy()),
            "omega": tuple(s.values("omega", [a, b])),
            "momentum": (p0, (s.mass[s.owned][:, None] * s.vel[s.owned]).sum(axis=0)),
            "angular_momentum": (l0, angular_momentum(sim)), "lever": lever,
            "torque_impulse": impulse, "peak": peak, "radius": r, "mass": s.mass[a]}


def pair_oblique(vn: float, vt: float, spin_a: float = 0.0, spin_b: float = 0.0, *,
                 mu: float = 0.3, e: float = 1.0, material=GLASS) -> dict:
    """Two equal spheres meeting at ±(``vn``, ``vt``, 0) m/s with spins ``spin_a``,
    ``spin_b`` (rad/s about z) ([ChungOoi2011] tests 7–8 for one material): :func:`collide`'s
    record plus Ψ₁, Ψ₂ of the relative motion (V_n = 2 vn, V_s = 2 vt + r (ω_a + ω_b)) and the
    rigid-body solution (``vt_rigid``: a's tangential speed after, b's is its negative;
    ``wr_rigid``: ω r of a and of b after): normal impulse J_n = m (1 + e) vn; sliding throughout
    (|V_s| ≥ 7 μ J_n / m) takes J_t = μ J_n, else the contact ends rolling, J_t = m V_s / 7;
    a's v_t drops by J_t/m, each ω r by 5/2 J_t/m."""
    run = collide(pair((vn, vt, 0.0), (0.0, 0.0, spin_a), (0.0, 0.0, spin_b), friction=mu,
                       restitution=e, material=material))
    r = run["radius"]
    slip = 2.0 * vt + r * (spin_a + spin_b)
    jn = (1.0 + e) * vn  # per unit mass
    jt = math.copysign(mu * jn, slip) if abs(slip) >= 7.0 * mu * jn else slip / 7.0
    (va, vb), (wa, wb) = run["vel"], run["omega"]
    slip_out = (va[1] - vb[1]) + r * (wa[2] + wb[2])
    run.update(psi1=slip / (2.0 * mu * vn), psi2=slip_out / (mu * (vb[0] - va[0])),
               vt_rigid=vt - jt, wr_rigid=(r * spin_a - 2.5 * jt, r * spin_b - 2.5 * jt))
    return run
