"""The rig's own Student t quantile (``results/student.py``, no scipy) against
``scipy.stats.t.ppf``: 1e-10 relative over 1 to 10^6 degrees of freedom (and real ones, as a
Welch interval's) at the probabilities of two-sided intervals from 50 % to 99.9 %. scipy is
imported by the tests, not at collection (every `make check` worker collects every file)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from energyrig.results.stats import describe, median
from energyrig.results.student import t_quantile, t_tail

#: Integer degrees of freedom 1..30, then a log grid to 10^6, and real ones.
DOFS = sorted({*range(1, 31), *np.unique(np.round(np.logspace(0, 6, 40))).tolist(),
               1e6, 0.5, 1.5, 2.5, 7.3, 123.45, 12345.6, 654321.5})
#: The two ends of 50, 80, 90, 95, 99 and 99.9 % two-sided intervals.
PROBABILITIES = [p for c in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
                 for p in ((1 - c) / 2, (1 + c) / 2)]


@pytest.mark.parametrize("dof", DOFS)
def test_the_quantile_is_scipys_to_1e_10(dof: float) -> None:
    from scipy import stats
    ours = np.array([t_quantile(p, dof) for p in PROBABILITIES])
    scipys = stats.t.ppf(PROBABILITIES, dof)
    np.testing.assert_allclose(ours, scipys, rtol=1e-10, atol=0)


@pytest.mark.parametrize("dof", [1, 3, 30, 1000, 10**5, 890389, 10**6])
def test_the_tail_is_scipys(dof: float) -> None:
    from scipy import stats
    ts = [0.1, 1.0, 1.7, 2.0, 2.9, 3.0, 3.1, 3.5, 5.0, 12.0]
    np.testing.assert_allclose([t_tail(t, dof) for t in ts], stats.t.sf(ts, dof),
                               rtol=1e-10, atol=0)


def test_symmetry_and_the_median() -> None:
    assert t_quantile(0.5, 7) == 0.0
    assert t_quantile(0.025, 9.5) == pytest.approx(-t_quantile(0.975, 9.5), rel=1e-14)


@pytest.mark.parametrize("q, dof", [(0.0, 3), (1.0, 3), (math.nan, 3), (0.9, 0), (0.9, -2),
                                    (0.9, math.inf), (0.9, math.nan)])
def test_outside_the_domain_is_refused(q: float, dof: float) -> None:
    with pytest.raises(ValueError):
        t_quantile(q, dof)


def test_describe_gives_scipys_interval() -> None:
    from scipy import stats
    x = np.random.default_rng(3).normal(5.0, 0.2, 17)
    low, high = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
    d = describe(x)
    assert d.ci_low == pytest.approx(low, rel=1e-12)
    assert d.ci_high == pytest.approx(high, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 10, 1000, 31_710])
def test_the_median_is_numpys_bit_for_bit(n: int) -> None:
    """describe's median without np.median (which imports numpy.ma)."""
    rng = np.random.default_rng(n)
    for _ in range(10):
        x = rng.lognormal(0, 3, n) * rng.choice([-1.0, 1.0], n)
        assert median(x) == float(np.median(x))
    assert math.isnan(median(np.array([1.0, math.nan, 2.0])))
