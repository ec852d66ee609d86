"""Size distributions (``pdyn.sizes``): each sampler follows its distribution by number and by
mass within the sampling error (Kolmogorov–Smirnov at the 1 % level, fixed seed), the check
fails on a wrong sampler, the default draws today's bits, and bad tables get one line naming
the field."""

import math

import numpy as np
import pytest
from scipy import stats

from pdyn.sizes import DISTRIBUTIONS, number_fractions, size_distribution
from pdyn.values import BadValue

#: the Kolmogorov statistic's 1 % critical value: √n·D beyond it rejects at the 1 % level
KS_1PC = 1.628
N = 20000
LO, HI = 0.01, 0.05


def truncated(dist, lo, hi):
    """The CDF of the scipy distribution ``dist`` truncated to [lo, hi]."""
    a, b = dist.cdf(lo), dist.cdf(hi)
    return lambda r: np.clip((dist.cdf(r) - a) / (b - a), 0.0, 1.0)


#: name -> (sizes table, number CDF on [LO, HI])
CASES = {
    "uniform": ({}, lambda r: (r - LO) / (HI - LO)),
    "uniform_mass": ({"distribution": "uniform_mass"},
                     lambda r: (LO**-2 - r**-2) / (LO**-2 - HI**-2)),
    "normal": ({"distribution": "normal", "mean": 0.03, "std": 0.01},
               truncated(stats.norm(0.03, 0.01), LO, HI)),
    "log_normal": ({"distribution": "log_normal", "median": 0.02, "sigma": 0.5},
                   truncated(stats.lognorm(0.5, scale=0.02), LO, HI)),
}


def ks(x, cdf, w=None) -> float:
    """√n_eff · D of the sample ``x`` (weights ``w``; n_eff = (Σw)²/Σw²) against ``cdf``."""
    w = np.ones_like(x) if w is None else np.asarray(w, float)
    o = np.argsort(x)
    x, w = x[o], w[o]
    ecdf = np.cumsum(w) / w.sum()
    f = cdf(x)
    d = max(np.max(ecdf - f), np.max(f - (ecdf - w / w.sum())))
    return math.sqrt(w.sum() ** 2 / np.sum(w**2)) * d


def mass_cdf(cdf):
    """The mass CDF of a number CDF on [LO, HI] (∫ r³ dF, on a fine grid)."""
    grid = np.linspace(LO, HI, 20001)
    f = cdf(grid)
    mid = 0.5 * (grid[1:] + grid[:-1])
    m = np.concatenate(([0.0], np.cumsum(mid**3 * np.diff(f))))
    return lambda r: np.interp(r, grid, m / m[-1])


def draw(table, n=N, seed=11):
    d = size_distribution("insertion", table, LO, HI)
    return d.draw(np.random.default_rng(seed), n)


@pytest.mark.parametrize("name", CASES)
def test_sample_follows_its_distribution_by_number_and_by_mass(name):
    table, cdf = CASES[name]
    r = draw(table)
    assert r.min() >= LO and r.max() <= HI
    assert ks(r, cdf) < KS_1PC
    assert ks(r, mass_cdf(cdf), w=r**3) < KS_1PC


@pytest.mark.parametrize("name", CASES)
def test_the_check_fails_for_a_wrong_sampler(name):
    """Each sampler's sample fails the check against every other distribution of the table
    (so the test above can fail), by number or by mass."""
    for other, (_, cdf) in CASES.items():
        if other != name:
            r = draw(CASES[name][0])
            assert ks(r, cdf) > KS_1PC or ks(r, mass_cdf(cdf), w=r**3) > KS_1PC, other


def test_default_draws_the_bits_pdyn_always_drew():
    rng = np.random.default_rng(3)
    want = LO + (HI - LO) * rng.random(100)
    assert np.array_equal(draw({}, 100, seed=3), want)


@pytest.mark.parametrize("by", ["number", "mass"])
def test_a_sieve_table_by_number_or_by_mass(by):
    """Counts (number) or masses (mass) per size within 3.3 standard errors (a chi-square
    test of the counts at the 1 % level as well)."""
    radii, fractions = (0.01, 0.02, 0.04), (0.5, 0.3, 0.2)
    r = draw({"distribution": "discrete", "radii": list(radii), "fractions": list(fractions),
              "by": by})
    counts = np.array([np.sum(r == s) for s in radii])
    assert counts.sum() == N
    p = number_fractions(radii, fractions, by)
    assert stats.chisquare(counts, N * p).pvalue > 0.01
    m = np.ones(3) if by == "number" else np.array(radii) ** 3  # what a share counts
    share = counts * m / np.sum(counts * m)
    # the shares' standard errors, by the delta method from the multinomial counts' covariance
    total = p @ m
    jac = (np.diag(m) * total - np.outer(p * m, m)) / total**2
    se = np.sqrt(np.diag(jac @ ((np.diag(p) - np.outer(p, p)) / N) @ jac.T))
    assert np.all(np.abs(share - np.array(fractions)) < 3.3 * se)
    wrong = number_fractions(radii, fractions, "mass" if by == "number" else "number")
    assert stats.chisquare(counts, N * wrong).pvalue < 1e-6  # the check sees a wrong table


@pytest.mark.parametrize("table, lo, hi, message", [
    ({"distribution": "gamma"}, LO, HI, r"^insertion.sizes.distribution = 'gamma': choose from uniform, "),
    ({"distribution": "normal", "mean": 0.03}, LO, HI,
     r"^insertion.sizes.std = None: required by the normal distribution"),
    ({"distribution": "normal", "mean": 0.03, "std": -1.0}, LO, HI,
     r"^insertion.sizes.std = -1.0: must be > 0"),
    ({"distribution": "log_normal", "median": 0.02, "sigma": 0.5, "mean": 1}, LO, HI,
     r"^insertion.sizes.mean = 1: not a parameter of the log_normal distribution"),
    ({"distribution": "log_normal", "median": 1.0, "sigma": 0.1}, LO, HI,
     r"^insertion.radius_min = 0.01: with radius_max = 0.05 the bounds keep 0 of the "),
    ({"distribution": "uniform_mass"}, None, HI, r"^insertion.radius_min = None: required"),
    ({}, 0.05, 0.01, r"^insertion.radius_max = 0.01: must be >= insertion.radius_min"),
    ({"distribution": "discrete", "radii": [0.01, -0.02], "fractions": [1, 1]}, None, None,
     r"^insertion.sizes.radii\[1\] = -0.02: must be > 0"),
    ({"distribution": "discrete", "radii": [0.01, 0.02], "fractions": [1]}, None, None,
     r"^insertion.sizes.fractions = \[1.0\]: 1 fractions for 2 radii"),
    ({"distribution": "discrete", "radii": [0.01], "fractions": [0]}, None, None,
     r"^insertion.sizes.fractions = \[0\]: the fractions sum to 0"),
    ({"distribution": "discrete", "radii": [0.01, 0.02], "fractions": [1, 1], "by": "volume"},
     None, None, r"^insertion.sizes.by = 'volume': choose from number, mass"),
    ({"distribution": "discrete", "radii": [0.01, 0.02], "fractions": [1, 1]}, 0.015, None,
     r"^insertion.radius_min = 0.015: the discrete radii span 0.01..0.02"),
    ("log", LO, HI, r"^insertion.sizes = 'log': expected a table"),
])
def test_bad_tables_get_one_line_naming_the_field(table, lo, hi, message):
    with pytest.raises(BadValue, match=message) as err:
        size_distribution("insertion", table, lo, hi)
    assert "\n" not in str(err.value)


def test_every_distribution_is_tested():
    assert set(DISTRIBUTIONS) == set(CASES) | {"discrete"}
