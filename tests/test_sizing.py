"""Trial sizing against textbook values, statsmodels and brute-force exact power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import (
    power_proportions_2indep,
    proportion_confint,
    proportion_effectsize,
    samplesize_proportions_2indep_onetail,
)

from simgap.errors import InputError
from simgap.evaluation import exact_power, sizing


def test_fleiss_textbook_half_vs_080() -> None:
    # Fleiss, Levin & Paik table: p1 = .5, p2 = .8, alpha .05 two-sided, power .8 -> 45 per
    # group with the continuity correction; 39 without (38.48 rounded up).
    assert sizing.fleiss_n(0.5, 0.8, 0.05, 0.8, cc=True) == 45
    assert sizing.fleiss_n(0.5, 0.8, 0.05, 0.8) == 39


@pytest.mark.parametrize(("p1", "p2"), [(0.5, 0.8), (0.2, 0.5), (0.9, 0.7), (0.6, 0.65)])
def test_fleiss_matches_statsmodels(p1: float, p2: float) -> None:
    n = samplesize_proportions_2indep_onetail(p2 - p1, p1, 0.8, alpha=0.05, alternative="two-sided")
    assert sizing.fleiss_n_float(p1, p2) == pytest.approx(n, rel=1e-6)
    # Continuity correction, written out: n/4 (1 + sqrt(1 + 4/(n d)))^2.
    cc = n / 4 * (1 + math.sqrt(1 + 4 / (n * abs(p2 - p1)))) ** 2
    assert sizing.fleiss_n(p1, p2, cc=True) == math.ceil(cc)


@pytest.mark.parametrize(
    ("p1", "p2", "alpha", "power"), [(0.5, 0.8, 0.05, 0.8), (0.3, 0.5, 0.01, 0.9)]
)
def test_arcsine_matches_normal_ind_power(p1: float, p2: float, alpha: float, power: float) -> None:
    n = NormalIndPower().solve_power(proportion_effectsize(p1, p2), alpha=alpha, power=power)
    assert sizing.arcsine_n(p1, p2, alpha, power) == math.ceil(n)


def _brute_power(test: str, n: int, p1: float, p2: float, alpha: float) -> float:
    """Sum of Binomial probabilities of every table scipy's test rejects."""
    b1 = stats.binom.pmf(np.arange(n + 1), n, p1)
    b2 = stats.binom.pmf(np.arange(n + 1), n, p2)
    total = 0.0
    for x1 in range(n + 1):
        for x2 in range(n + 1):
            table = [[x1, x2], [n - x1, n - x2]]
            if test == "fisher":
                p = stats.fisher_exact(table).pvalue
            else:
                p = stats.barnard_exact(table).pvalue
            if p <= alpha:
                total += b1[x1] * b2[x2]
    return total


@pytest.mark.parametrize("n", [4, 9, 16])
def test_exact_fisher_power_matches_enumeration(n: int) -> None:
    assert exact_power.power("fisher", n, 0.3, 0.8, 0.05) == pytest.approx(
        _brute_power("fisher", n, 0.3, 0.8, 0.05), abs=1e-12
    )


@pytest.mark.parametrize("n", [5, 8])
def test_exact_barnard_power_matches_enumeration(n: int) -> None:
    assert exact_power.power("barnard", n, 0.2, 0.7, 0.05) == pytest.approx(
        _brute_power("barnard", n, 0.2, 0.7, 0.05), abs=1e-12
    )


def test_exact_n_skips_a_sawtooth_dip() -> None:
    # Brute force: Fisher power at .2 vs .9 reaches .5 at n = 5, dips below at n = 6 and
    # stays above from n = 7 (checked up to 14).
    pw = {n: _brute_power("fisher", n, 0.2, 0.9, 0.05) for n in range(3, 15)}
    assert pw[5] >= 0.5 > pw[6]
    expected = min(n for n in pw if all(pw[m] >= 0.5 for m in range(n, 15)))
    r = sizing.exact_n("fisher", 0.2, 0.9, power=0.5, n_max=14)
    assert (r.n, r.first_reached) == (expected, 5) == (7, 5)
    assert r.power_at_n == pytest.approx(pw[7], abs=1e-12)


def test_exact_barnard_sawtooth() -> None:
    # Barnard at .3 vs .7: power dips between n = 23 and 24; the size skips the dip.
    pw = {n: exact_power.power("barnard", n, 0.3, 0.7, 0.05) for n in range(20, 41)}
    assert pw[23] > pw[24]
    r = sizing.exact_n("barnard", 0.3, 0.7, power=0.78, n_max=40)
    expected = min(n for n in pw if all(pw[m] >= 0.78 for m in range(n, 41)))
    assert r.n == expected and r.first_reached is not None and r.first_reached < r.n


def test_plan_keys_and_ordering() -> None:
    d = sizing.plan(0.5, 0.8, n=30)
    assert set(d["n_per_arm"]) == {
        "fleiss",
        "fleiss_cc",
        "arcsine",
        "fisher_exact",
        "barnard_exact",
    }
    npa = d["n_per_arm"]
    # Fisher is conservative: it needs at least as many trials as Barnard.
    assert npa["fisher_exact"] >= npa["barnard_exact"]
    assert exact_power.power("fisher", npa["fisher_exact"], 0.5, 0.8, 0.05) >= 0.8


def test_min_detectable_difference_reaches_power() -> None:
    n, p1 = 50, 0.5
    mdd = sizing.min_detectable(n, p1)
    up = mdd["up"]
    assert up is not None
    pw = power_proportions_2indep(up, p1, n, alpha=0.05).power
    assert pw == pytest.approx(0.8, abs=1e-4)
    exact = sizing.min_detectable(n, p1, test="barnard")["up"]
    assert exact is not None
    assert exact_power.power("barnard", n, p1, p1 + exact, 0.05) == pytest.approx(0.8, abs=1e-6)
    assert sizing.min_detectable(5, 0.5)["up"] is None  # 5 trials never reach 80 %


def test_half_width() -> None:
    hw = sizing.half_width(40, 0.5)
    assert hw["wald"] == pytest.approx(1.959963984540054 * math.sqrt(0.25 / 40))
    lo, hi = proportion_confint(20, 40, method="wilson")
    assert hw["wilson"] == pytest.approx((hi - lo) / 2, rel=1e-10)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"alpha": 1.2}, "alpha"),
        ({"power": 0.0}, "power"),
        ({"p1": 1.5}, "p1"),
        ({"p2": -0.1}, "p2"),
    ],
)
def test_bad_inputs_name_the_field(kw: dict[str, float], field: str) -> None:
    args = {"p1": 0.5, "p2": 0.8, "alpha": 0.05, "power": 0.8, **kw}
    with pytest.raises(InputError, match=f"'{field}'"):
        sizing.plan(**args)


def test_equal_rates_refused() -> None:
    with pytest.raises(InputError, match="different from p1"):
        sizing.fleiss_n(0.5, 0.5)


def test_fast_barnard_region_equals_full_grid_mask() -> None:
    fast = [exact_power._barnard_tails(n, 0.01) for n in range(1, 61)]
    exact_power._barnard_tails.cache_clear()
    exact_power._FAST_COUNTS = False
    try:
        slow = [exact_power._barnard_tails(n, 0.01) for n in range(1, 61)]
    finally:
        exact_power._FAST_COUNTS = True
        exact_power._barnard_tails.cache_clear()
    for (h1, l1), (h2, l2) in zip(fast, slow, strict=True):
        assert np.array_equal(h1, h2) and np.array_equal(l1, l2)


def test_exact_limits() -> None:
    r = sizing.exact_n("fisher", 0.5, 0.8, n_max=20)  # 20 per arm never reach 80 % power
    assert r.n is None and r.first_reached is None
    with pytest.raises(InputError, match="'n_max'"):
        sizing.exact_n("barnard", 0.5, 0.8, n_max=5000)
    d = sizing.plan(0.5, 0.52)  # ~9900 per arm: the exact search is skipped, and says so
    assert d["n_per_arm"]["fisher_exact"] is None and "skipped" in d["exact"]
    assert d["n_per_arm"]["fleiss"] == math.ceil(
        samplesize_proportions_2indep_onetail(0.02, 0.5, 0.8, alpha=0.05, alternative="two-sided")
    )
