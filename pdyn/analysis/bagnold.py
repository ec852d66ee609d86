"""Flow down a rough incline against Bagnold's velocity profile ([Bagnold1954], as
[Silbert2001] write it), in units d = g = 1 (lengths in diameters, velocities in √(gd)):

    v(z) = (2/3) A [H^{3/2} − (H − z)^{3/2}]

for a flow H deep, z above the top of the rough base. From slab profiles of the packing
fraction φ(z) and the mean downhill velocity v_x(z) (bins one diameter thick): the flow
height H (where φ falls to half its bulk value; the bulk: bins between H/4 and 3H/4), the
bulk φ, the fitted A, the steadiness of the flow, and the inertial number
I = γ̇ d / √(P/ρ_s), constant through the depth for Bagnold's profile, beside the I at which
[Jop2006]'s μ(I) holds the slope."""

from __future__ import annotations

import numpy as np

from .packing import slab_volume

D = 1.0  # the sphere diameter, the unit of length
#: [Silbert2001]'s bulk packing fraction in steady flow at these angles, the range usually
#: quoted (not read off the paper's figure: the paper was not at hand)
SILBERT_PHI = (0.56, 0.58)
#: [Jop2006]'s μ(I) for glass beads: μ_s = tan 20.9°, μ_2 = tan 32.76°, I_0 = 0.279
JOP = (np.tan(np.radians(20.9)), np.tan(np.radians(32.76)), 0.279)


def jop_inertial(angle) -> float:
    """I at which [Jop2006]'s μ(I) = μ_s + (μ_2 − μ_s)/(I_0/I + 1) equals tan θ (steady flow
    down an incline at ``angle`` degrees); NaN outside μ_s < tan θ < μ_2."""
    mu_s, mu_2, i_0 = JOP
    mu = np.tan(np.radians(angle))
    if not mu_s < mu < mu_2:
        return float("nan")
    return float(i_0 * (mu - mu_s) / (mu_2 - mu))


def bagnold(z, H, A=1.0):
    """Bagnold's downhill velocity at height ``z`` above the base of a flow ``H`` deep."""
    z = np.clip(np.asarray(z, float), 0.0, H)
    return (2.0 / 3.0) * A * (H**1.5 - (H - z) ** 1.5)


def fit_bagnold(z, v, H) -> tuple[float, float]:
    """Least-squares A of :func:`bagnold` to the velocities ``v`` at heights ``z`` (flow
    height ``H``; the model is linear in A) and the rms residual over the largest |v|."""
    shape = bagnold(z, H)
    A = float(np.dot(shape, v) / np.dot(shape, shape))
    rms = float(np.sqrt(np.mean((v - A * shape) ** 2)) / np.max(np.abs(v)))
    return A, rms


def profiles(pos, vel, r, area, edges):
    """φ, the summed v_x and the count of the spheres (centres ``pos``, velocities ``vel``,
    radius ``r``, over a cross-section ``area``) in the z bins ``edges``: φ from the exact
    volume of every sphere inside each slab, v_x and the count of the centres in each bin."""
    phi = slab_volume(pos[:, 2:3], r, edges[None, :-1], edges[None, 1:]).sum(0)
    phi /= area * np.diff(edges)
    k = np.digitize(pos[:, 2], edges) - 1
    ok = (k >= 0) & (k < len(edges) - 1)
    count = np.bincount(k[ok], minlength=len(edges) - 1)
    vx = np.bincount(k[ok], vel[ok, 0], minlength=len(edges) - 1)
    return phi, vx, count


def inertial_number(z, phi, vx, angle):
    """The inertial number I(z) = γ̇ d / √(P/ρ_s) at the bin centres ``z``: γ̇ = dv_x/dz by
    central differences, P/ρ_s = g cos θ ∫_z^∞ φ dz' (the weight of the layer above, bins of
    1 d) on an incline at ``angle`` degrees."""
    above = np.cumsum(phi[::-1])[::-1] - 0.5 * phi  # ∫ φ from the bin's centre up
    pressure = np.cos(np.radians(angle)) * above
    shear = np.gradient(vx, z)
    return shear / np.sqrt(np.maximum(pressure, 1e-12))


def trend(series, since) -> tuple[float, float]:
    """Steadiness of the mean downhill velocity (``series``: samples with ``t`` and ``vx``)
    after ``since``: the change of its mean from the first to the second half of the window,
    and the change over the whole window by a straight line fitted to it, both over its
    mean."""
    t = np.array([s["t"] for s in series if s["t"] > since + 1e-9])
    v = np.array([s["vx"] for s in series if s["t"] > since + 1e-9])
    first, second = np.array_split(v, 2)
    slope = np.polyfit(t, v, 1)[0]
    return float(second.mean() / first.mean() - 1.0), float(slope * (t[-1] - t[0]) / v.mean())


def measures(angle, z, phi, vx, series, settle_time) -> dict:
    """The flow's measures from its mean profiles ``phi`` and ``vx`` at heights ``z`` above
    the base, down an incline at ``angle`` degrees, and its sampled ``series`` (``t``,
    ``ke``, ``vx``) averaged after ``settle_time``: H, bulk φ, the Bagnold fit over the bins
    0 < z < H (A, rms over the surface velocity), the surface and base-bin velocities, the
    kinetic energy's and ⟨v_x⟩'s change over the window (:func:`trend`), and the mean and
    spread of I (:func:`inertial_number`) in the bulk."""
    inner = z > 0
    rough = float(np.mean(phi[inner & (z < 10.0)]))
    half = np.flatnonzero(inner & (phi < 0.5 * rough))
    H = float(z[half[0]]) if half.size else float(z[-1])
    bulk = inner & (z > 0.25 * H) & (z < 0.75 * H)
    phi_bulk = float(np.mean(phi[bulk]))
    half = np.flatnonzero(inner & (phi < 0.5 * phi_bulk))  # again with the bulk value
    H = float(z[half[0]] - 0.5 * D) if half.size else H
    use = inner & (z < H)
    A, rms = fit_bagnold(z[use], vx[use], H)
    after = np.array([s["ke"] for s in series if s["t"] > settle_time + 1e-9])
    first, second = np.array_split(after, 2)
    vx_change, vx_trend = trend(series, settle_time)
    inertial = inertial_number(z, phi, vx, angle)[bulk]
    return {"H": H, "phi_bulk": phi_bulk, "A": A, "fit_rms": rms,
            "v_surface": float(np.max(vx[use])), "v_base_bin": float(vx[inner][0]),
            "ke_first_half": float(first.mean()), "ke_second_half": float(second.mean()),
            "ke_change": float(second.mean() / first.mean() - 1.0),
            "vx_change": vx_change, "vx_trend": vx_trend,
            "I_bulk": float(inertial.mean()), "I_spread": float(inertial.std())}


def field_profiles(fields: dict, angle, solid_density: float, gravity: float = 1.0,
                   base: float = D) -> dict:
    """A chute's depth profiles from a ``[[fields]]`` file of one resolved axis, z
    (``pdyn.io.read_fields``: cells (1, 1, n), bins or a kernel), down an incline at
    ``angle`` degrees, spheres of ``solid_density`` ρ_s, ``gravity`` g, the base's top at
    ``base``: heights ``z`` above it, φ, ρ, v_x, the total stress's σ_zz and σ_zx (the
    x-force across a z-plane per area, tension positive), the stress ratio
    μ = σ_zx/(−σ_zz) (tan θ in a steady uniform flow), σ_zz over minus the weight above,
    g cos θ ∫ρ dz (1 in the bulk; a bin's own mass counted half), and the inertial number
    I = γ̇ d/√(P/ρ_s) with P = −σ_zz and γ̇ = dv_x/dz (central differences)."""
    rho = np.asarray(fields["density"], float).reshape(-1)
    z = np.asarray(fields["z"], float) - base
    dz = float(np.diff(fields["z"]).mean()) if len(z) > 1 else 1.0
    stress = np.asarray(fields["stress"], float).reshape(len(z), 9)
    szz, szx = stress[:, 8], stress[:, 6]
    vx = np.asarray(fields["velocity"], float).reshape(len(z), 3)[:, 0]
    weight = gravity * np.cos(np.radians(angle)) * (np.cumsum(rho[::-1])[::-1] - 0.5 * rho) * dz
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where(szz < 0, szx / -szz, np.nan)
        balance = np.where(weight > 0, -szz / weight, np.nan)
        inertial = np.gradient(vx, z) * D / np.sqrt(np.where(szz < 0, -szz, np.nan)
                                                     / solid_density)
    return {"z": z, "phi": np.asarray(fields["volume_fraction"], float).reshape(-1),
            "density": rho, "vx": vx, "sigma_zz": szz, "sigma_zx": szx, "mu": mu,
            "weight_balance": balance, "I": inertial}
