"""Statistics of the latency branch: percentiles with cluster-bootstrap intervals, and the
exponential added-delay fit (Peng et al. 2018: rate fixed per episode, delay redrawn per step).

Ticks of one episode are not independent (the network's rate, the GPU's thermal state and
what else runs beside the policy are fixed within an episode), so intervals resample whole
episodes. Each bootstrap replicate weights the episodes by multinomial counts; the quantile
of a replicate is read from per-episode histograms over log-spaced bins, so the cost
is (replicates x clusters x bins), not (replicates x ticks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

N_BOOT = 1000
"""Bootstrap replicates."""
MAX_BINS = 1024
"""Histogram bins per stage for the bootstrap (log-spaced edges)."""
MAX_CLUSTERS = 200
"""Episodes are grouped into at most this many contiguous resampling units."""
MIN_EPISODE_CLUSTERS = 10
"""With fewer episodes, contiguous blocks of ticks are resampled instead."""
TICK_BLOCKS = 50
"""Number of contiguous tick blocks when episodes are too few."""
QUANTILES: dict[str, float] = {"p50": 0.50, "p95": 0.95, "p99": 0.99}


@dataclass(frozen=True)
class Bootstrap:
    """Resampling units and replicate weights shared by every statistic of one log.

    Attributes:
        cluster: resampling unit of each tick, shape (N,), values 0..C-1.
        weights: multinomial replicate weights, shape (B, C).
        unit: ``episodes`` or ``tick blocks``.
        seed: the seed the weights were drawn with.
    """

    cluster: np.ndarray
    weights: np.ndarray
    unit: str
    seed: int

    @property
    def n_clusters(self) -> int:
        """Number of resampling units C."""
        return int(self.weights.shape[1])


def make_bootstrap(episode: np.ndarray, *, seed: int = 0, n_boot: int = N_BOOT) -> Bootstrap:
    """Resampling units for ticks of the given episodes, and seeded replicate weights.

    Args:
        episode: episode index of each tick, shape (N,), in tick order.
        seed: seed of the replicate draws.
        n_boot: number of replicates B.
    """
    ep = np.asarray(episode)
    n = ep.shape[0]
    _, ep_idx = np.unique(ep, return_inverse=True)
    n_ep = int(ep_idx.max()) + 1 if n else 0
    if n_ep >= MIN_EPISODE_CLUSTERS:
        groups = min(n_ep, MAX_CLUSTERS)
        cluster = (ep_idx * groups) // n_ep
        unit = "episodes"
    else:
        blocks = max(1, min(n, TICK_BLOCKS))
        cluster = (np.arange(n) * blocks) // max(n, 1)
        unit = "tick blocks"
    c = int(cluster.max()) + 1 if n else 1
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(c, np.full(c, 1.0 / c), size=n_boot).astype(float)
    return Bootstrap(cluster=cluster.astype(np.int64), weights=weights, unit=unit, seed=seed)


def _histogram(
    values: np.ndarray,
    cluster: np.ndarray,
    n_clusters: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster histograms: (bin edges [s], shape (K+1,); counts, shape (C, K)).

    Bins are equal steps of ``log(value + eps)`` between the smallest and largest value
    (``MAX_BINS`` of them: 0.7 % of relative width over three decades), so binning is one
    vectorised pass with no sort or search.
    """
    vmin, vmax = float(values.min()), float(values.max())
    eps = max(abs(vmax) * 1e-6, 1e-12)
    lo, hi = np.log(vmin + eps), np.log(vmax + eps)
    if hi - lo <= 0:
        k = 1
        edges = np.array([vmin, vmax])
        bins = np.zeros(values.shape[0], dtype=np.int64)
    else:
        k = MAX_BINS
        edges = np.exp(np.linspace(lo, hi, k + 1)) - eps
        bins = np.minimum(((np.log(values + eps) - lo) * (k / (hi - lo))).astype(np.int64), k - 1)
    counts = np.bincount(cluster * k + bins, minlength=n_clusters * k)
    return edges, counts.reshape(n_clusters, k).astype(float)


def _histogram_quantiles(
    edges: np.ndarray,
    counts: np.ndarray,
    qs: Sequence[float],
) -> np.ndarray:
    """Quantiles of each row of histogram ``counts`` (R, K), shape (R, len(qs)), linear
    inside the bin that holds each quantile."""
    n_rows, k = counts.shape
    cdf = np.cumsum(counts, axis=1)
    total = cdf[:, -1].copy()
    total[total == 0] = 1.0
    cdf /= total[:, None]  # each row's CDF at each bin's right edge
    rows = np.arange(n_rows)
    # Rows are monotone in [0, 1]: offset row r by 2 r and one search finds every row's bin.
    flat = (cdf + 2.0 * rows[:, None]).ravel()
    out = np.empty((n_rows, len(qs)))
    for j, q in enumerate(qs):
        idx = np.clip(np.searchsorted(flat, q + 2.0 * rows) - rows * k, 0, k - 1)
        f1 = cdf[rows, idx]
        f0 = np.where(idx > 0, cdf[rows, np.maximum(idx - 1, 0)], 0.0)
        frac = np.where(f1 > f0, (q - f0) / np.where(f1 > f0, f1 - f0, 1.0), 0.0)
        out[:, j] = edges[idx] + np.clip(frac, 0.0, 1.0) * (edges[idx + 1] - edges[idx])
    return out


@dataclass(frozen=True)
class Percentiles:
    """Percentiles of one duration [s] with their bootstrap intervals.

    Attributes:
        n: ticks with a value.
        p50, p95, p99: sample quantiles (linear interpolation) [s].
        max, mean, std: [s].
        ci: name (``p50``, ``p95``, ``p99``) -> (low, high) percentile-bootstrap interval [s].
        grid: for plots: every value sorted when there are at most ``grid``, else
            ``grid`` quantiles at equal probability steps read from the histogram [s].
    """

    n: int
    p50: float
    p95: float
    p99: float
    max: float
    mean: float
    std: float
    ci: dict[str, tuple[float, float]]
    grid: tuple[float, ...] = ()


def percentiles(
    values: np.ndarray, boot: Bootstrap, *, level: float = 0.95, grid: int = 0
) -> Percentiles:
    """p50/p95/p99/max/mean/std of ``values`` [s] (NaN = absent) with bootstrap intervals.

    Args:
        values: one duration per tick [s], shape (N,), aligned with ``boot.cluster``.
        boot: resampling units and replicate weights.
        level: interval coverage.
        grid: also return the quantiles at this many equal probability steps.
    """
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    cl = boot.cluster
    if not ok.all():
        v, cl = v[ok], cl[ok]
    if v.size == 0:
        nan = float("nan")
        return Percentiles(0, nan, nan, nan, nan, nan, nan, {k: (nan, nan) for k in QUANTILES})
    qs = list(QUANTILES.values())
    point = np.quantile(v, qs)
    edges, counts = _histogram(v, cl, boot.n_clusters)
    reps = _histogram_quantiles(edges, boot.weights @ counts, qs)  # (B, 3)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [a, 1.0 - a], axis=0)
    f = small_sample_factor(boot.n_clusters, level)
    ci = {
        name: (
            float(point[j] - f * max(point[j] - lo[j], 0.0)),
            float(point[j] + f * max(hi[j] - point[j], 0.0)),
        )
        for j, name in enumerate(QUANTILES)
    }
    grid_q: tuple[float, ...] = ()
    if grid and v.size <= grid:  # every value, sorted
        grid_q = tuple(np.sort(v).tolist())
    elif grid:  # from the histogram: exact enough for a plot, and no full sort
        probs = np.linspace(0.0, 1.0, grid)
        cdf = np.concatenate([[0.0], np.cumsum(counts.sum(axis=0))]) / v.size
        grid_q = tuple(np.interp(probs, cdf, edges).tolist())
    return Percentiles(
        n=int(v.size),
        p50=float(point[0]),
        p95=float(point[1]),
        p99=float(point[2]),
        max=float(v.max()),
        mean=float(v.mean()),
        std=float(v.std(ddof=1)) if v.size > 1 else 0.0,
        ci=ci,
        grid=grid_q,
    )


def small_sample_factor(n_clusters: int, level: float = 0.95) -> float:
    """Widening of a percentile-bootstrap interval resampled from few clusters.

    Resampling C clusters understates the variance by (C - 1) / C and uses a normal where a
    Student t with C - 1 degrees of freedom belongs; the interval's arms are scaled by
    ``sqrt(C / (C - 1)) * t_{C-1} / z`` (1.10 for 20 episodes, 1.01 for 200).
    """
    from scipy import stats

    c = max(int(n_clusters), 2)
    q = 0.5 + level / 2.0
    return float(np.sqrt(c / (c - 1)) * stats.t.ppf(q, c - 1) / stats.norm.ppf(q))


def fraction_with_ci(
    flags: np.ndarray,
    boot: Bootstrap,
    *,
    level: float = 0.95,
) -> tuple[float, tuple[float, float]]:
    """Share of True ticks and its cluster-bootstrap interval."""
    f = np.asarray(flags, dtype=float)
    c = boot.n_clusters
    hits = np.bincount(boot.cluster, weights=f, minlength=c)
    size = np.bincount(boot.cluster, minlength=c).astype(float)
    rep = (boot.weights @ hits) / np.maximum(boot.weights @ size, 1.0)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(rep, [a, 1.0 - a])
    point = float(f.mean()) if f.size else float("nan")
    k = small_sample_factor(c, level)
    return point, (
        max(0.0, point - k * max(point - lo, 0.0)),
        min(1.0, point + k * max(hi - point, 0.0)),
    )


def exponential_rate(delays: np.ndarray) -> float:
    """Maximum-likelihood rate [1/s] of an exponential fitted to ``delays`` [s] (>= 0).

    The MLE of Exp(lambda) is ``n / sum(d)``; a sum of zero (no added delay) gives inf.
    """
    d = np.asarray(delays, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return float("nan")
    s = float(np.clip(d, 0.0, None).sum())
    return float(d.size / s) if s > 0 else float("inf")


@dataclass(frozen=True)
class DelayFit:
    """The added delay as a training distribution: ``dt = control_dt + Exp(rate)``.

    Attributes:
        rates_per_s: MLE rate of each episode with enough intervals [1/s], shape (E,).
        mean_delay_s: mean added delay of each of those episodes [s], shape (E,).
        cv: coefficient of variation of each episode's delays (1 for an exponential).
        episodes: the episode index of each rate.
        pooled_rate_per_s: one rate fitted to all added delays [1/s].
        n_delays: added delays used in all.
    """

    rates_per_s: np.ndarray
    mean_delay_s: np.ndarray
    cv: np.ndarray
    episodes: np.ndarray
    pooled_rate_per_s: float
    n_delays: int


def fit_added_delay(
    delay: np.ndarray,
    episode: np.ndarray,
    *,
    min_per_episode: int = 5,
) -> DelayFit:
    """Fit the exponential added delay per episode (rate fixed per episode, drawn per step).

    Args:
        delay: added delay of each step over the control period [s], shape (N,); NaN = unused.
        episode: episode index of each step, shape (N,).
        min_per_episode: episodes with fewer delays are left out of the per-episode rates.
    """
    d = np.asarray(delay, dtype=float)
    ep = np.asarray(episode)
    ok = np.isfinite(d)
    d, ep = np.clip(d[ok], 0.0, None), ep[ok]
    uniq, idx = np.unique(ep, return_inverse=True)
    cnt = np.bincount(idx, minlength=uniq.size).astype(float)
    s = np.bincount(idx, weights=d, minlength=uniq.size)
    s2 = np.bincount(idx, weights=d * d, minlength=uniq.size)
    keep = cnt >= min_per_episode
    mean = np.divide(s, cnt, out=np.full_like(s, np.nan), where=cnt > 0)
    var = np.divide(s2, cnt, out=np.full_like(s, np.nan), where=cnt > 0) - mean**2
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(s > 0, cnt / s, np.inf)
        cv = np.sqrt(np.clip(var, 0.0, None) * cnt / np.maximum(cnt - 1, 1)) / mean
    return DelayFit(
        rates_per_s=rates[keep],
        mean_delay_s=mean[keep],
        cv=cv[keep],
        episodes=uniq[keep],
        pooled_rate_per_s=exponential_rate(d),
        n_delays=int(d.size),
    )
