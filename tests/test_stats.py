"""Intervals and two-sample tests, each against statsmodels, scipy or enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from simgap.errors import InputError
from simgap.evaluation import stats as st

CASES = [(0, 10), (1, 10), (7, 10), (10, 10), (13, 40), (37, 50)]


@pytest.mark.parametrize(("s", "n"), CASES)
def test_wilson_and_clopper_pearson_match_statsmodels(s: int, n: int) -> None:
    assert st.wilson(s, n) == pytest.approx(proportion_confint(s, n, method="wilson"), abs=1e-12)
    assert st.clopper_pearson(s, n) == pytest.approx(
        proportion_confint(s, n, method="beta"), abs=1e-10
    )
    assert st.wilson(s, n, 0.9) == pytest.approx(
        proportion_confint(s, n, alpha=0.1, method="wilson"), abs=1e-12
    )


def test_fisher_matches_enumeration() -> None:
    # Two-sided Fisher: sum of hypergeometric probabilities no larger than the observed one.
    sa, na, sb, nb = 7, 10, 2, 12
    t = sa + sb
    dist = stats.hypergeom(na + nb, na, t)
    support = np.arange(max(0, t - nb), min(na, t) + 1)
    pmf = dist.pmf(support)
    expected = pmf[pmf <= dist.pmf(sa) * (1 + 1e-7)].sum()
    assert st.fisher_p(sa, na, sb, nb) == pytest.approx(expected, rel=1e-9)


def _barnard_brute(sa: int, na: int, sb: int, nb: int) -> float:
    """sup over a fine pi grid of P(|T| >= |T_obs|), pooled Wald T, arms as given."""
    x1 = np.arange(na + 1)[:, None]
    x2 = np.arange(nb + 1)[None, :]
    p = (x1 + x2) / (na + nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (x1 / na - x2 / nb) / np.sqrt(p * (1 - p) * (1 / na + 1 / nb))
    t = np.where(np.isfinite(t), t, 0.0)
    # Compared in floating point as scipy does (a mathematically tied table may fall out).
    region = np.abs(t) >= abs(t[sa, sb])
    pi = np.linspace(1e-6, 1 - 1e-6, 20001)[:, None]
    b1 = stats.binom.pmf(np.arange(na + 1)[None, :], na, pi)
    b2 = stats.binom.pmf(np.arange(nb + 1)[None, :], nb, pi)
    return float(np.einsum("gi,ij,gj->g", b1, region.astype(float), b2).max())


def test_barnard_orientation_with_unequal_arms() -> None:
    # Unequal arm sizes make a transposed table give another p-value; brute force decides.
    sa, na, sb, nb = 6, 10, 3, 15
    expected = _barnard_brute(sa, na, sb, nb)
    assert st.barnard_p(sa, na, sb, nb) == pytest.approx(expected, abs=2e-4)
    wrong = stats.barnard_exact([[sa, na - sa], [sb, nb - sb]]).pvalue
    assert abs(wrong - expected) > 1e-3  # the row orientation is a different test
    assert st.arm_table(sa, na, sb, nb).tolist() == [[6, 3], [4, 12]]


def test_boschloo_at_most_fisher() -> None:
    # Boschloo's test is uniformly more powerful than Fisher's: its p-value is never larger.
    for sa, sb in ((7, 2), (5, 5), (9, 4)):
        assert st.boschloo_p(sa, 10, sb, 10) <= st.fisher_p(sa, 10, sb, 10) + 1e-9


def _p_better_closed_form(sa: int, na: int, sb: int, nb: int) -> float:
    """P(p_A > p_B) for Beta(1+s, 1+n-s) posteriors (Evan Miller's sum, integer params)."""
    aa, ba = sa + 1, na - sa + 1
    ab, bb = sb + 1, nb - sb + 1
    # P(p_B > p_A) = sum_{i<ab} B(aa+i, ba+bb) / ((bb+i) B(1+i, bb) B(aa, ba))
    total = 0.0
    for i in range(ab):
        total += math.exp(
            special.betaln(aa + i, ba + bb)
            - math.log(bb + i)
            - special.betaln(1 + i, bb)
            - special.betaln(aa, ba)
        )
    return 1.0 - total


@pytest.mark.parametrize(
    ("sa", "na", "sb", "nb"), [(7, 10, 2, 10), (3, 4, 3, 4), (40, 50, 35, 50), (0, 5, 1, 5)]
)
def test_p_a_better_closed_form(sa: int, na: int, sb: int, nb: int) -> None:
    assert st.p_a_better(sa, na, sb, nb) == pytest.approx(
        _p_better_closed_form(sa, na, sb, nb), abs=1e-8
    )


def test_p_a_better_jeffreys_prior_against_monte_carlo() -> None:
    rng = np.random.default_rng(1)
    a = rng.beta(6 + 0.5, 4 + 0.5, 400_000)
    b = rng.beta(3 + 0.5, 7 + 0.5, 400_000)
    assert st.p_a_better(6, 10, 3, 10, prior=(0.5, 0.5)) == pytest.approx(
        float(np.mean(a > b)), abs=3e-3
    )


@pytest.mark.parametrize(
    ("sa", "na", "sb", "nb"), [(7, 10, 2, 10), (0, 12, 5, 9), (30, 30, 20, 25)]
)
def test_newcombe_matches_statsmodels(sa: int, na: int, sb: int, nb: int) -> None:
    lo, hi = confint_proportions_2indep(sa, na, sb, nb, method="newcomb")
    assert st.newcombe(sa, na, sb, nb) == pytest.approx((lo, hi), abs=1e-10)


def test_mcnemar_matches_statsmodels() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(40) < 0.7
    b = rng.random(40) < 0.4
    r = st.mcnemar(a.tolist(), b.tolist())
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert r.p_value == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-10)
    assert (r.a_only, r.b_only, r.pairs) == (table[0][1], table[1][0], 40)


def test_bad_counts_name_the_field() -> None:
    with pytest.raises(InputError, match="successes.*trials fewer than successes"):
        st.wilson(5, 3)
    with pytest.raises(InputError, match="'b.successes'"):
        st.fisher_p(1, 3, 4, 3)
    with pytest.raises(InputError, match="trials"):
        st.wilson(0, 0)
    with pytest.raises(InputError, match="'conf'"):
        st.wilson(1, 3, conf=1.5)
    with pytest.raises(InputError, match="'prior'"):
        st.p_a_better(1, 3, 1, 3, prior=(0.0, 1.0))


def test_median_interval_covers_at_its_stated_rate() -> None:
    """Order-statistic interval of a median (scipy's quantile_test): coverage at least as
    stated on skewed data, the range with its own (lower) coverage when there are too few
    values."""
    from simgap.evaluation.stats import median_interval

    rng = np.random.default_rng(7)
    for n in (6, 15, 40):
        hits, cover = 0, 0.0
        for _ in range(3000):
            x = rng.lognormal(0.0, 1.0, n)  # true median 1
            lo, hi, cover = median_interval(list(x))  # type: ignore[misc]
            hits += lo <= 1.0 <= hi
        assert cover == 0.95
        assert hits / 3000 >= cover - 0.01, (n, hits / 3000)  # at least as stated
    lo, hi, cover = median_interval([3.0, 1.0, 2.0])  # type: ignore[misc]
    assert (lo, hi) == (1.0, 3.0) and cover == 0.75
    assert median_interval([float("nan")]) is None
