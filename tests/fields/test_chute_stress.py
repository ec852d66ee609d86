"""Stress fields of a chute flow (the ``chute`` scene, issue 47's validation): the momentum
balance of the material above each depth makes σ_zx/(−σ_zz) = tan θ at every depth of a steady
uniform flow down an incline at θ and σ_zz = −g cos θ ∫ρ dz (less the window's change of the
momentum above that depth and the mean flow's flux ρ u_z u: a chaotic flow is never exactly
steady); the inertial number from the fields' stress is the one the Bagnold analysis finds
from the spheres' own profiles. A 5 d × 5 d cell, 10 d deep, at 24°, started on a Bagnold
profile (A = 0.095, near its steady one) and run 20 √(d/g) before the fields' window of
20 √(d/g) (about 130 000 steps; under a minute on a quiet machine)"""

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
SETTLE, WINDOW, EVERY, CHUNK = 20.0, 20.0, 10, 500


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
    edges, area = np.arange(0.0, nz + 1.0), length ** 2
    v0 = sim.store.vel[sim.store.owned[sim.store.gid[sim.store.owned] >= base], 0].mean()
    p0 = [above_planes(sim, scene.density, edges, area, axis) for axis in (0, 2)]
    sums, samples, weights = None, 0, []
    while sim.step_index < 2 * settle:  # the weight above at each of the fields' samples
        sim.run(CHUNK, every=EVERY,
                callback=lambda s: weights.append(above_planes(s, scene.density, edges, area)))
        h = sim.store.owned
        h = h[sim.store.gid[h] >= base]
        got = profiles(sim.store.pos[h], sim.store.vel[h], 0.5 * D, area, edges)
        sums = got if sums is None else tuple(s + g for s, g in zip(sums, got))
        samples += 1
    h = sim.store.owned[sim.store.gid[sim.store.owned] >= base]
    dp = [above_planes(sim, scene.density, edges, area, axis) - p for axis, p in zip((0, 2), p0)]
    return {"fields": read_fields(tmp / "fields" / f"depth_{sim.step_index:08d}.h5"),
            "time": window * EVERY * sim.dt, "area": area, "edges": edges,
            "dv": sim.store.vel[h, 0].mean() - v0, "density": float(scene.density),
            "dpx": dp[0], "dpz": dp[1], "weight": np.mean(weights, axis=0),
            "phi": sums[0] / samples, "vx": sums[1] / np.maximum(sums[2], 1)}


def above_planes(sim, density, edges, area, axis=None):
    """Per area, the spheres' mass (``axis`` None) or momentum along ``axis`` above a z plane,
    averaged over the planes through each bin: a sphere centred in the bin counts by its
    height in it."""
    h = sim.store.owned
    q = density * 4.0 / 3.0 * np.pi * sim.store.radius[h] ** 3
    q = q if axis is None else q * sim.store.vel[h, axis]
    part = np.clip((sim.store.pos[h, 2][None, :] - edges[:-1, None]) / np.diff(edges)[:, None],
                   0.0, 1.0)
    return part @ q / area


def test_chute_shear_over_normal_stress_is_tan_theta(chute_run):
    """The momentum balance of the material above each depth over the fields' window of
    length T, in every bulk bin (2–8 d above the base) within 0.2 %: σ_zx − ρ u_z u_x =
    g sin θ W − ΔP_x/T and −σ_zz + ρ u_z u_z = g cos θ W + ΔP_z/T (σ the fields' stress, its
    kinetic part about the mean velocity u: with ρ u ⊗ u the whole momentum flux), so
    σ_zx/(−σ_zz) = tan θ where the window is steady; W the mass and ΔP the window's change of
    the momentum above the bin's planes per area, from the spheres (W at the fields' samples;
    ΔP_z is not negligible: the bed bounces). The flow must be nearly steady: its mean
    downhill acceleration below 5 % of g sin θ."""
    r = chute_run
    theta = np.radians(ANGLE)
    print(f"acceleration / g sin θ = {r['dv'] / r['time'] / np.sin(theta):+.4f}")
    assert abs(r["dv"] / r["time"]) < 0.05 * np.sin(theta), "the flow is far from steady"
    p = field_profiles(r["fields"], ANGLE, r["density"])
    bulk = (p["z"] > 2.0) & (p["z"] < 8.0)
    assert bulk.sum() == 6
    u = np.asarray(r["fields"]["velocity"], float).reshape(-1, 3)[bulk]
    flux_zx, flux_zz = p["density"][bulk] * u[:, 2] * u[:, 0], p["density"][bulk] * u[:, 2] ** 2
    shear = (np.sin(theta) * r["weight"] - r["dpx"] / r["time"])[bulk]
    normal = (np.cos(theta) * r["weight"] + r["dpz"] / r["time"])[bulk]
    print("μ/tan θ", np.round(p["mu"][bulk] / np.tan(theta), 4),
          "ΔP_z/(T g cos θ W)",
          np.round(r["dpz"][bulk] / r["time"] / (np.cos(theta) * r["weight"][bulk]), 4),
          "σ_zx/balance", np.round((p["sigma_zx"][bulk] - flux_zx) / shear, 5),
          "σ_zz/balance", np.round((flux_zz - p["sigma_zz"][bulk]) / normal, 5))
    np.testing.assert_allclose(p["sigma_zx"][bulk] - flux_zx, shear, rtol=0.002)
    np.testing.assert_allclose(flux_zz - p["sigma_zz"][bulk], normal, rtol=0.002)
    np.testing.assert_allclose(p["mu"][bulk], (shear + flux_zx) / (normal - flux_zz),
                               rtol=0.004)


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
