"""Unit-to-unit spread: a random-effects estimate over arms, each fit with its own interval.

Each arm i reports an estimate ``y_i`` with a within-fit standard error ``s_i`` (from its
95 % interval). The random-effects model is ``y_i ~ N(mu, s_i^2 + tau^2)``: ``tau`` is the
spread from one unit to the next, separated from each fit's own uncertainty.

- ``tau^2`` by DerSimonian and Laird (1986): the method of moments on Cochran's Q.
- Its 95 % interval by the Q-profile method (Viechtbauer 2007): the ``tau^2`` at which the
  generalised Q statistic equals the chi-square(k - 1) quantiles 0.975 and 0.025.
- ``mu`` is the inverse-variance weighted mean under ``tau^2``, with its standard error.
- The 95 % prediction interval for a new unit (Higgins, Thompson and Spiegelhalter 2009):
  ``mu +- t(k - 2, 0.975) sqrt(tau^2 + se(mu)^2)``: where the next arm off the line lands.

Everything here is on whatever scale the caller passes (``aggregate`` uses logs for
positive parameters, so ``tau`` is then a relative spread).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

Z95 = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class Spread:
    """A random-effects fit over k units (one scale throughout).

    Attributes:
        k: number of units.
        mu: the fleet's mean under the random-effects weights.
        mu_se: standard error of ``mu``.
        tau: unit-to-unit standard deviation (DerSimonian-Laird), >= 0.
        tau_interval: 95 % Q-profile interval of ``tau`` (lo, hi); hi may be inf for k < 2.
        q: Cochran's Q at tau = 0 (heterogeneity statistic, k - 1 degrees of freedom).
        i2: share of the total variation that is unit-to-unit, in [0, 1].
        band: 95 % prediction interval for a new unit (lo, hi).
    """

    k: int
    mu: float
    mu_se: float
    tau: float
    tau_interval: tuple[float, float]
    q: float
    i2: float
    band: tuple[float, float]


def _weighted(y: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    w = 1.0 / v
    mu = float(np.sum(w * y) / np.sum(w))
    return mu, float(np.sqrt(1.0 / np.sum(w)))


def q_of(tau2: float, y: np.ndarray, s2: np.ndarray) -> float:
    """The generalised Q statistic at ``tau2``: sum (y - mu)^2 / (s^2 + tau2)."""
    v = s2 + tau2
    mu, _ = _weighted(y, v)
    return float(np.sum((y - mu) ** 2 / v))


def dersimonian_laird(y: np.ndarray, s2: np.ndarray) -> float:
    """The DerSimonian-Laird estimate of tau^2 (>= 0)."""
    w = 1.0 / s2
    k = y.size
    if k < 2:
        return 0.0
    q = q_of(0.0, y, s2)
    c = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    return max(0.0, (q - (k - 1)) / c) if c > 0 else 0.0


def pooled_tau2(groups: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """One tau^2 shared by several groups, each with its own mean (the stratified
    DerSimonian-Laird estimate: sum of the groups' Q over the sum of their c)."""
    q = c = df = 0.0
    for y, s2 in groups:
        if y.size < 2:
            continue
        w = 1.0 / s2
        q += q_of(0.0, y, s2)
        c += float(np.sum(w) - np.sum(w**2) / np.sum(w))
        df += y.size - 1
    return max(0.0, (q - df) / c) if c > 0 else 0.0


def q_profile(y: np.ndarray, s2: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The Q-profile interval of tau^2: the tau^2 where Q(tau^2) crosses the chi-square
    quantiles. Q decreases with tau^2, so each end is a single root."""
    return pooled_q_profile([(y, s2)], level)


def pooled_q_profile(
    groups: list[tuple[np.ndarray, np.ndarray]], level: float = 0.95, *, lower: bool = True
) -> tuple[float, float]:
    """The Q-profile interval of a tau^2 shared by groups with their own means: the sum of
    the groups' generalised Q against chi-square with sum(k_j - 1) degrees of freedom.
    ``lower=False`` skips the lower end (returned as 0) when only the upper is needed."""
    groups = [(y, s2) for y, s2 in groups if y.size >= 2]
    df = sum(y.size - 1 for y, _ in groups)
    if df < 1:
        return 0.0, float("inf")

    ys = np.concatenate([y for y, _ in groups])
    s2s = np.concatenate([s2 for _, s2 in groups])
    gid = np.concatenate([np.full(y.size, i) for i, (y, _) in enumerate(groups)])

    def q(t: float) -> float:
        w = 1.0 / (s2s + t)
        mu = np.bincount(gid, w * ys) / np.bincount(gid, w)
        return float(np.sum(w * (ys - mu[gid]) ** 2))

    a = (1.0 - level) / 2.0
    scale = max(float(np.var(y) + np.max(s2)) for y, s2 in groups) or 1.0

    def root(target: float) -> float:
        if q(0.0) <= target:
            return 0.0
        hi = scale
        while q(hi) > target:
            hi *= 10.0
            if hi > 1e12 * scale:
                return float("inf")
        return float(
            optimize.brentq(lambda t: q(t) - target, 0.0, hi, xtol=1e-12 * scale, rtol=1e-7)
        )

    lo = root(float(stats.chi2.ppf(1.0 - a, df))) if lower else 0.0
    return lo, root(float(stats.chi2.ppf(a, df)))


def variances(y: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Within-fit variances ``se^2``; a zero standard error (a fit that reports no
    uncertainty) is floored at 1e-9 of the values' scale so it weighs heavily without
    dividing by zero."""
    floor = 1e-9 * max(float(np.max(np.abs(y))), 1e-12)
    out: np.ndarray = np.maximum(se, floor) ** 2
    return out


def spread(
    y: np.ndarray | list[float], se: np.ndarray | list[float], level: float = 0.95
) -> Spread:
    """The random-effects fit of estimates ``y`` with standard errors ``se`` (same scale)."""
    y = np.asarray(y, dtype=float)
    se = np.asarray(se, dtype=float)
    if y.size == 0 or y.shape != se.shape:
        raise ValueError(f"need matching, non-empty y and se; got {y.shape} and {se.shape}")
    s2 = variances(y, se)
    k = int(y.size)
    tau2 = dersimonian_laird(y, s2)
    lo2, hi2 = q_profile(y, s2, level)
    mu, mu_se = _weighted(y, s2 + tau2)
    q = q_of(0.0, y, s2)
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 and k > 1 else 0.0
    if k >= 3:
        t = float(stats.t.ppf(0.5 + level / 2.0, k - 2))
        half = t * float(np.sqrt(tau2 + mu_se**2))
    else:
        half = float("inf")
    return Spread(
        k=k,
        mu=mu,
        mu_se=mu_se,
        tau=float(np.sqrt(tau2)),
        tau_interval=(float(np.sqrt(lo2)), float(np.sqrt(hi2))),
        q=q,
        i2=i2,
        band=(mu - half, mu + half),
    )
