"""Stress fields of a chute flow (the ``chute`` scene, issue 47's validation): the momentum
balance of the material above each depth makes σ_zx/(−σ_zz) = tan θ at every depth of a steady
uniform flow down an incline at θ (less the window's change of the downhill momentum above
that depth: a chaotic flow is never exactly steady), and σ_zz = −g cos θ ∫ρ dz; the inertial
number from the fields' stress is the one the Bagnold analysis finds from the spheres' own
profiles. A 5 d × 5 d cell, 10 d deep, at 24°, started on a Bagnold profile (A = 0.095, near
its steady one) and run 20 √(d/g) before the fields' window of 20 √(d/g) (about 130 000
steps; under a minute on a quiet machine)"""

import dataclasses

import numpy as np
import pytest

from pdyn import Simulation, SimulationConfig
from pdyn.analysis.bagnold import D, bagnold, field_profiles, inertial_number, profiles
from pdyn.config import FieldsConfig, OutputConfig
from pdyn.io import read_fields
from pdyn.scenarios import chute

pytestmark = pytest.mark.slow  # one whole validation run (about 130 000 steps)

ANGLE, DEPTH, A = 24.0, 10.0, 0.095
SETTLE, WINDOW, EVERY, CHUNK = 20.0, 20.0, 50, 500


@pytest.fixture(scope="module")
def chute_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chute")
    scene = chute(scale=0.25, depth=DEPTH, angle=ANGLE)
    v = np.zeros_like(scene.positions)
    v[:, 0] = bagnold(scene.positions[:, 2] - D, DEPTH, A)
    v[scene.fixed] = 0.0
    scene = dataclasses.replace(scene, velocities=v)
    length, nz = float(scene.box_hi[0]), int(scene.box_hi[2])
    window = int(round(WINDOW / scene.dt / CHUNK)) * (CHUNK // EVERY)
    settle = window * EVERY  # the window starts where one would end: fields from here on
    cfg = SimulationConfig(scene="chute", progress=False,
                           output=OutputConfig(folder=str(tmp), overwrite=True),
                           fields=(FieldsConfig(name="depth", cells=(1, 1, nz), kernel="bins",
                                                lo=(0, 0, 0), hi=(length, length, float(nz)),
                                                every=EVERY, window=window),))
    sim = Simulation(cfg, scene=scene)
    base = int(scene.fixed.sum())
    sim.run(settle)
    edges = np.arange(0.0, nz + 1.0)
    v0 = sim.store.vel[sim.store.owned[sim.store.gid[sim.store.owned] >= base], 0].mean()
    p0 = above_planes(sim, scene.density, edges, length ** 2, True)
    sums, samples, weight = None, 0, 0.0
    while sim.step_index < 2 * settle:
        sim.run(CHUNK)
        h = sim.store.owned
        h = h[sim.store.gid[h] >= base]
        got = profiles(sim.store.pos[h], sim.store.vel[h], 0.5 * D, length ** 2, edges)
        sums = got if sums is None else tuple(s + g for s, g in zip(sums, got))
        weight = weight + above_planes(sim, scene.density, edges, length ** 2, False)
        samples += 1
    h = sim.store.owned[sim.store.gid[sim.store.owned] >= base]
    return {"fields": read_fields(tmp / "fields" / f"depth_{sim.step_index:08d}.h5"),
            "time": window * EVERY * sim.dt, "area": length ** 2, "edges": edges,
            "dv": sim.store.vel[h, 0].mean() - v0, "density": float(scene.density),
            "dp": above_planes(sim, scene.density, edges, length ** 2, True) - p0,
            "weight": weight / samples,
            "phi": sums[0] / samples, "vx": sums[1] / np.maximum(sums[2], 1)}


def above_planes(sim, density, edges, area, momentum):
    """Per area, the spheres' mass (or downhill momentum) above a z plane, averaged over the
    planes through each bin: a sphere centred in the bin counts by its height in it."""
    h = sim.store.owned
    q = density * 4.0 / 3.0 * np.pi * sim.store.radius[h] ** 3
    q = q * sim.store.vel[h, 0] if momentum else q
    part = np.clip((sim.store.pos[h, 2][None, :] - edges[:-1, None]) / np.diff(edges)[:, None],
                   0.0, 1.0)
    return part @ q / area


def test_chute_shear_over_normal_stress_is_tan_theta(chute_run):
    """The momentum balance of the material above each depth over the fields' window of
    length T, in every bulk bin (2–8 d above the base) within 2 %: σ_zx = g sin θ W − ΔP/T
    and −σ_zz = g cos θ W, so σ_zx/(−σ_zz) = tan θ − ΔP/(T g cos θ W) (tan θ in a steady
    flow), with W the mass and ΔP the window's change of the downhill momentum above the
    bin's planes per area, from the spheres (the flow must be nearly steady: its mean
    downhill acceleration below 5 % of g sin θ; a chaotic flow is never exactly steady)."""
    r = chute_run
    theta = np.radians(ANGLE)
    print(f"acceleration / g sin θ = {r['dv'] / r['time'] / np.sin(theta):+.4f}")
    assert abs(r["dv"] / r["time"]) < 0.05 * np.sin(theta), "the flow is far from steady"
    p = field_profiles(r["fields"], ANGLE, r["density"])
    bulk = (p["z"] > 2.0) & (p["z"] < 8.0)
    assert bulk.sum() == 6
    shear = (np.sin(theta) * r["weight"] - r["dp"] / r["time"])[bulk]
    normal = np.cos(theta) * r["weight"][bulk]
    print("μ/tan θ", np.round(p["mu"][bulk] / np.tan(theta), 4),
          "σ_zx/balance", np.round(p["sigma_zx"][bulk] / shear, 4),
          "σ_zz/balance", np.round(-p["sigma_zz"][bulk] / normal, 4))
    np.testing.assert_allclose(p["sigma_zx"][bulk], shear, rtol=0.02)
    np.testing.assert_allclose(-p["sigma_zz"][bulk], normal, rtol=0.02)
    np.testing.assert_allclose(p["mu"][bulk], shear / normal, rtol=0.02)


def test_chute_inertial_number_from_the_fields_is_the_bagnold_analysis_one(chute_run):
    """I(z) from the fields' stress and velocity equals, in the bulk, the one
    ``pdyn.analysis.bagnold`` finds from the spheres' slab profiles (φ from exact slab
    volumes, P from the weight above) within 3 %, and v_x(z) the same to 1 %."""
    r = chute_run
    p = field_profiles(r["fields"], ANGLE, r["density"])
    z = 0.5 * (r["edges"][:-1] + r["edges"][1:]) - D
    i_spheres = inertial_number(z, r["phi"], r["vx"], ANGLE)
    bulk = (p["z"] > 2.0) & (p["z"] < 8.0)
    print("I fields", np.round(p["I"][bulk], 4), "I spheres", np.round(i_spheres[bulk], 4))
    np.testing.assert_allclose(p["vx"][bulk], r["vx"][bulk], rtol=0.01)
    np.testing.assert_allclose(p["I"][bulk], i_spheres[bulk], rtol=0.03)
    assert 0.05 < p["I"][bulk].mean() < 0.5
