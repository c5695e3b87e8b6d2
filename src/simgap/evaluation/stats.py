"""Statistics of success rates: intervals, exact two-sample tests, Bayesian comparison.

Conventions: a run is ``(successes, trials)``; rates are fractions in [0, 1]; intervals are
two-sided at confidence ``conf`` (default 0.95). Arm A is the first argument everywhere.
scipy's Barnard and Boschloo tests take the 2x2 table with **columns = arms**:
``[[s_a, s_b], [f_a, f_b]]``; this module builds it that way so callers never do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import integrate, special, stats

from simgap.errors import InputError


def check_counts(
    successes: int, trials: int, *, field: str = "successes", file: str | None = None
) -> tuple[int, int]:
    """Validate a ``(successes, trials)`` pair.

    Raises:
        InputError: not integers, ``trials < 1``, a negative count, or trials fewer than
            successes; the message names ``field``.
    """
    for name, v in ((field, successes), (field.replace("successes", "trials"), trials)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise InputError(file=file, field=name, expected="a non-negative integer count", got=v)
    if trials < 1:
        raise InputError(
            file=file,
            field=field.replace("successes", "trials"),
            expected="at least one trial",
            got=trials,
        )
    if successes > trials:
        raise InputError(
            file=file,
            field=field,
            expected=f"at most {trials} successes (trials fewer than successes)",
            got=successes,
            fix="successes count trials that succeeded; they cannot exceed trials",
        )
    return int(successes), int(trials)


def check_probability(
    value: float, field: str, *, open_interval: bool = False, file: str | None = None
) -> float:
    """Validate a probability (closed [0, 1], or open (0, 1) when ``open_interval``)."""
    ok = isinstance(value, (int, float, np.floating)) and math.isfinite(float(value))
    v = float(value) if ok else float("nan")
    if open_interval:
        ok = ok and 0.0 < v < 1.0
    else:
        ok = ok and 0.0 <= v <= 1.0
    if not ok:
        rng = "(0, 1)" if open_interval else "[0, 1]"
        raise InputError(
            file=file,
            field=field,
            expected=f"a number in {rng}",
            got=value,
            fix="give a fraction, e.g. 0.8 for 80 %",
        )
    return v


def _z(conf: float) -> float:
    check_probability(conf, "conf", open_interval=True)
    return float(stats.norm.ppf(0.5 + conf / 2.0))


def wilson(successes: int, trials: int, conf: float = 0.95) -> tuple[float, float]:
    """Wilson score interval on a binomial proportion."""
    s, n = check_counts(successes, trials)
    z = _z(conf)
    p = s / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(successes: int, trials: int, conf: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson ("exact") interval from Beta quantiles."""
    s, n = check_counts(successes, trials)
    a = 1.0 - check_probability(conf, "conf", open_interval=True)
    lo = 0.0 if s == 0 else float(stats.beta.ppf(a / 2, s, n - s + 1))
    hi = 1.0 if s == n else float(stats.beta.ppf(1 - a / 2, s + 1, n - s))
    return lo, hi


def arm_table(s_a: int, n_a: int, s_b: int, n_b: int) -> np.ndarray:
    """The 2x2 table in scipy's Barnard/Boschloo orientation, shape (2, 2): columns = arms."""
    check_counts(s_a, n_a, field="a.successes")
    check_counts(s_b, n_b, field="b.successes")
    return np.array([[s_a, s_b], [n_a - s_a, n_b - s_b]], dtype=np.int64)


def fisher_p(s_a: int, n_a: int, s_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p-value."""
    return float(stats.fisher_exact(arm_table(s_a, n_a, s_b, n_b), alternative="two-sided").pvalue)


def barnard_p(s_a: int, n_a: int, s_b: int, n_b: int) -> float:
    """Two-sided Barnard exact p-value (pooled Wald statistic, scipy's default)."""
    return float(stats.barnard_exact(arm_table(s_a, n_a, s_b, n_b), alternative="two-sided").pvalue)


def boschloo_p(s_a: int, n_a: int, s_b: int, n_b: int) -> float:
    """Two-sided Boschloo exact p-value."""
    return float(
        stats.boschloo_exact(arm_table(s_a, n_a, s_b, n_b), alternative="two-sided").pvalue
    )


def p_a_better(
    s_a: int, n_a: int, s_b: int, n_b: int, prior: tuple[float, float] = (1.0, 1.0)
) -> float:
    """P(p_A > p_B | data) with independent Beta(prior) priors, by numerical integration.

    The posteriors are Beta(s + a0, n - s + b0); the probability is
    ``integral f_A(x) F_B(x) dx`` over [0, 1], computed with adaptive quadrature (no Monte
    Carlo). The default prior is uniform, Beta(1, 1).
    """
    check_counts(s_a, n_a, field="a.successes")
    check_counts(s_b, n_b, field="b.successes")
    a0, b0 = prior
    if not (a0 > 0 and b0 > 0):
        raise InputError(field="prior", expected="two positive Beta parameters", got=prior)
    post_a = stats.beta(s_a + a0, n_a - s_a + b0)
    post_b = stats.beta(s_b + a0, n_b - s_b + b0)
    # Integrate where posterior A has its mass, split at its mode for accuracy.
    lo, hi = post_a.ppf(1e-12), post_a.isf(1e-12)
    mid = float(np.clip(post_a.mean(), lo, hi))
    total = 0.0
    for x0, x1 in ((lo, mid), (mid, hi)):
        val, _ = integrate.quad(
            lambda x: post_a.pdf(x) * post_b.cdf(x), x0, x1, epsabs=1e-13, epsrel=1e-11, limit=200
        )
        total += val
    return float(min(1.0, max(0.0, total)))


def newcombe(
    s_a: int,
    n_a: int,
    s_b: int,
    n_b: int,
    conf: float = 0.95,
) -> tuple[float, float]:
    """Newcombe's hybrid score interval on p_A - p_B (his method 10, from Wilson limits)."""
    l1, u1 = wilson(s_a, n_a, conf)
    l2, u2 = wilson(s_b, n_b, conf)
    p1, p2 = s_a / n_a, s_b / n_b
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lo), min(1.0, hi)


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on paired outcomes.

    Attributes:
        pairs: number of pairs.
        a_only: pairs where only A succeeded.
        b_only: pairs where only B succeeded.
        p_value: two-sided exact p-value (binomial test of the discordant pairs at 1/2).
    """

    pairs: int
    a_only: int
    b_only: int
    p_value: float


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's exact test on outcomes paired trial by trial (same initial states).

    Args:
        a: outcomes of A, shape (P,).
        b: outcomes of B for the same initial states in the same order, shape (P,).
    """
    if len(a) != len(b) or len(a) == 0:
        raise InputError(
            field="trials",
            expected="two equally long, non-empty paired outcome lists",
            got=f"{len(a)} and {len(b)}",
        )
    xa = np.asarray(a, dtype=bool)
    xb = np.asarray(b, dtype=bool)
    a_only = int(np.sum(xa & ~xb))
    b_only = int(np.sum(~xa & xb))
    k = a_only + b_only
    p = 1.0 if k == 0 else float(stats.binomtest(min(a_only, b_only), k, 0.5).pvalue)
    return McNemar(pairs=len(xa), a_only=a_only, b_only=b_only, p_value=min(1.0, p))


def rate_summary(successes: int, trials: int, conf: float = 0.95) -> dict[str, object]:
    """``{"successes", "trials", "rate", "wilson", "clopper_pearson", "posterior"}``."""
    s, n = check_counts(successes, trials)
    return {
        "successes": s,
        "trials": n,
        "rate": s / n,
        "wilson": list(wilson(s, n, conf)),
        "clopper_pearson": list(clopper_pearson(s, n, conf)),
        "posterior": {"alpha": s + 1, "beta": n - s + 1, "prior": "Beta(1, 1)"},
        "conf": conf,
    }


@lru_cache(maxsize=8192)
def log_binom_coeff(n: int) -> np.ndarray:
    """log C(n, k) for k = 0..n, shape (n + 1,) (cached; read-only)."""
    k = np.arange(n + 1)
    out = np.asarray(special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1))
    out.flags.writeable = False
    return out


def median_interval(
    values: Sequence[float],
    conf: float = 0.95,
) -> tuple[float, float, float] | None:
    """Distribution-free interval of a median: (lo, hi, coverage).

    ``scipy.stats.quantile_test``'s order-statistic interval, whose coverage is at least
    ``conf`` (returned as ``conf``); with too few values for one (fewer than 6 at 95 %),
    the range and its exact coverage ``1 - 2 * 0.5**n``. None without a finite value."""
    x = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if x.size == 0:
        return None
    ci = stats.quantile_test(x, q=float(np.median(x)), p=0.5).confidence_interval(conf)
    if not (np.isfinite(ci.low) and np.isfinite(ci.high)):
        return float(x.min()), float(x.max()), float(1.0 - 2.0 * 0.5**x.size)
    return float(ci.low), float(ci.high), float(conf)
