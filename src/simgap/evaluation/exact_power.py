"""Exact power of two-sided Fisher and Barnard tests with n trials per arm.

The power at (p1, p2) is the probability, under independent Binomial(n, p1) and
Binomial(n, p2) outcomes, of the set of 2x2 tables the test rejects at level alpha (its
rejection region). The region depends only on (n, alpha), so it is computed once,
vectorised over the whole (n + 1) x (n + 1) outcome grid, and cached:

- Fisher: for each total t = x1 + x2 the conditional (hypergeometric) pmf over x1; the
  two-sided p-value of a table is the sum of the pmf over tables no more probable than it
  (scipy's rule); with equal arms the pmf is symmetric and unimodal, so that is twice the
  tail, and the region for t is two mirrored tails. Cached as one tail end per t.
- Barnard: the pooled Wald statistic T (scipy's default; T = 0 where the rates are equal).
  The p-value of a table is sup over the common rate pi of P_pi(|T| >= |T_obs|), so the
  region is {|T| >= t*} with t* the smallest observed |T| whose size sup_pi stays <= alpha.
  The size is evaluated on a grid of pi in (0, 1/2] (the size is symmetric in pi -> 1 - pi
  with equal arms) refined around its maximum by a bounded scalar search. Each row of T
  (fixed x1) is monotone in x2, so the region is a prefix and a suffix of x2 per x1 and its
  probability is a sum of binomial CDFs: cheap enough to bisect on t*. Cached as the
  per-x1 prefix and suffix lengths.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from simgap.evaluation.stats import log_binom_coeff

_PI_GRID = 96
_FAST_COUNTS = True  # row-wise binary search for the region (False: full-grid mask)


def _binom_pmf_matrix(n: int, pis: np.ndarray) -> np.ndarray:
    """Binomial(n, pi) pmf for every pi, shape (n + 1, len(pis))."""
    k = np.arange(n + 1)[:, None]
    lc = log_binom_coeff(n)[:, None]
    with np.errstate(divide="ignore"):
        lp = lc + special.xlogy(k, pis[None, :]) + special.xlog1py(n - k, -pis[None, :])
    return np.asarray(np.exp(lp))


@lru_cache(maxsize=4096)
def _fisher_tails(n: int, alpha: float) -> np.ndarray:
    """Per total t = 0..2n, the largest x1 < t/2 in the rejection region (-1 if none).

    With n trials in each arm the conditional pmf f_t(x1) is symmetric, f_t(x1) = f_t(t - x1),
    and unimodal, so the two-sided p-value of x1 < t/2 is exactly 2 * CDF_t(x1) (the tables
    no more probable are its own tail and the mirror tail), and the region for t is
    {x1 <= a_t} and its mirror {x1 >= t - a_t}.
    """
    lc = log_binom_coeff(n)
    lc2 = log_binom_coeff(2 * n)
    h = n // 2 + 1  # only x1 < t / 2 <= n / 2 is needed
    # Rows t = 0..n; H[t, x1] = log C(n, t - x1) (-inf for x1 > t) as a strided view.
    pad = np.full(2 * n + 1, -np.inf)
    pad[n:] = lc
    hankel = np.lib.stride_tricks.sliding_window_view(pad[::-1], h)[n::-1]
    pmf = np.exp(hankel + (lc[None, :h] - lc2[: n + 1, None]))
    pval = 2.0 * np.cumsum(pmf, axis=1)
    x1 = np.arange(h)
    t = np.arange(n + 1)[:, None]
    ok = (2 * x1[None, :] < t) & (pval <= alpha * (1 + 1e-12))
    low = ok.sum(axis=1) - 1  # a_t for t = 0..n
    # Totals above n mirror those below: (x1, x2) -> (n - x1, n - x2) maps t to 2n - t
    # and keeps p-values, so a_{2n - t} = a_t + n - t.
    high = low[:n][::-1] + np.arange(1, n + 1)
    return np.asarray(np.concatenate([low, high]))


def fisher_region(n: int, alpha: float) -> np.ndarray:
    """Boolean rejection region of the two-sided Fisher test, shape (n + 1, n + 1) [x1, x2]."""
    a = _fisher_tails(n, float(alpha))
    x = np.arange(n + 1)
    tot = x[:, None] + x[None, :]
    at = a[tot]
    return np.asarray((x[:, None] <= at) | ((x[:, None] >= tot - at) & (at >= 0)))


def _wald(n: int) -> np.ndarray:
    """Signed pooled Wald statistic on the outcome grid, shape (n + 1, n + 1), as scipy.

    Rows (fixed x1) decrease in x2; zero where the two rates are equal.
    """
    x = np.arange(n + 1)
    rate = x / n
    tot = np.arange(2 * n + 1)
    p = tot / (2 * n)
    sd = np.sqrt(p * (1 - p) * (1 / n + 1 / n))  # elementwise as scipy, per total x1 + x2
    sd_grid = np.lib.stride_tricks.sliding_window_view(sd, n + 1)  # [x1, x2] -> sd[x1 + x2]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.divide(rate[:, None] - rate[None, :], sd_grid)
    np.fill_diagonal(w, 0.0)
    return np.asarray(w)


def _tail_counts(w: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Per x1, how many x2 have w >= t (a prefix) and w <= -t (a suffix).

    Compared exactly in floating point, as scipy does. w is exactly antisymmetric
    (w[x1, x2] = -w[x2, x1]), so the suffix lengths are the column sums of the same mask.
    """
    mask = w >= t
    return mask.sum(axis=1), mask.sum(axis=0)


def _tail_prob(
    pmf1: np.ndarray,
    cum2: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
) -> np.ndarray:
    """P(region) where x1 ~ pmf1 (n + 1, G) and x2 has cumulative cum2 (n + 2, G)."""
    n1 = cum2.shape[0] - 1
    inner = cum2[hi] + cum2[n1] - cum2[n1 - lo]
    return np.asarray((pmf1 * inner).sum(axis=0))


def _cum(pmf: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros((1, pmf.shape[1])), np.cumsum(pmf, axis=0)], axis=0)


@lru_cache(maxsize=4096)
def _barnard_tails(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Barnard's two-sided region as per-x1 tail counts (prefix of x2, suffix of x2)."""
    w = _wald(n)
    rows = np.arange(n + 1)
    monotone = _FAST_COUNTS and bool(np.all(np.diff(w, axis=1) <= 0))

    def counts(t: float) -> tuple[np.ndarray, np.ndarray]:
        if not monotone:
            return _tail_counts(w, t)
        # Row-wise binary search for the prefix w[x1, :] >= t (rows descend): the same
        # comparisons as the full mask in O(n log n). Column x1 is then covered by the
        # rows x2 whose prefix passes it, which by antisymmetry is the suffix w <= -t.
        lo_i = np.zeros(n + 1, dtype=np.int64)
        hi_i = np.full(n + 1, n + 1, dtype=np.int64)
        while True:
            active = lo_i < hi_i
            if not active.any():
                break
            mid = (lo_i + hi_i) // 2
            ok = active & (w[rows, np.minimum(mid, n)] >= t)
            lo_i = np.where(ok, mid + 1, lo_i)
            hi_i = np.where(active & ~ok, mid, hi_i)
        hi = lo_i
        if np.any(np.diff(hi) < 0):
            return _tail_counts(w, t)
        return hi, n + 1 - np.searchsorted(hi, rows, side="right")

    none = (np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64))
    pis = np.linspace(0.5 / _PI_GRID, 0.5, _PI_GRID)
    pmf = _binom_pmf_matrix(n, pis)
    cum = _cum(pmf)

    def size(k: int) -> np.ndarray:
        hi, lo = counts(values[k - 1])
        return _tail_prob(pmf, cum, hi, lo)

    def refined(k: int) -> float:
        g = size(k)
        i = int(np.argmax(g))
        hi, lo = counts(values[k - 1])

        def neg(q: float) -> float:
            m = _binom_pmf_matrix(n, np.array([q]))
            return -float(_tail_prob(m, _cum(m), hi, lo)[0])

        res = optimize.minimize_scalar(
            neg,
            bounds=(pis[max(0, i - 1)] if i else 1e-9, pis[min(len(pis) - 1, i + 1)]),
            method="bounded",
            options={"xatol": 1e-7},
        )
        return max(float(g.max()), -float(res.fun))

    # Candidate thresholds t*, largest first: first those in a band around the normal
    # critical value (cheap); all positive values when t* is not bracketed by the band.
    z = float(stats.norm.isf(alpha / 2))
    values = np.unique(w[(w >= z - 0.3) & (w <= z + 0.6)])[::-1]
    if values.size < 2 or float(size(1).max()) > alpha or float(size(values.size).max()) <= alpha:
        values = np.unique(w[w > 0])[::-1]
    if values.size == 0:
        return none
    lo_k, hi_k = 0, values.size  # size(lo_k) <= alpha: find the largest such k
    if float(size(hi_k).max()) <= alpha and refined(hi_k) <= alpha:
        lo_k = hi_k
    else:
        while hi_k - lo_k > 1:
            mid = (lo_k + hi_k) // 2
            if float(size(mid).max()) <= alpha:
                lo_k = mid
            else:
                hi_k = mid
        while lo_k > 0 and refined(lo_k) > alpha:  # the grid missed a higher peak
            lo_k -= 1
    if lo_k == 0:
        return none
    hi_c, lo_c = counts(values[lo_k - 1])
    return hi_c.astype(np.int64), lo_c.astype(np.int64)


def barnard_region(n: int, alpha: float) -> np.ndarray:
    """Boolean rejection region of the two-sided Barnard test, shape (n + 1, n + 1)."""
    hi, lo = _barnard_tails(n, float(alpha))
    x2 = np.arange(n + 1)[None, :]
    return np.asarray((x2 < hi[:, None]) | (x2 >= n + 1 - lo[:, None]))


def region(test: str, n: int, alpha: float) -> np.ndarray:
    """Rejection region of ``test`` ("fisher" or "barnard"), shape (n + 1, n + 1)."""
    if test == "fisher":
        return fisher_region(n, alpha)
    if test == "barnard":
        return barnard_region(n, alpha)
    raise ValueError(f"unknown exact test {test!r}; use 'fisher' or 'barnard'")


def power(test: str, n: int, p1: float, p2: float, alpha: float) -> float:
    """Exact power of the two-sided ``test`` with n trials per arm at (p1, p2)."""
    b = _binom_pmf_matrix(n, np.array([p1, p2]))
    if test == "barnard":
        hi, lo = _barnard_tails(n, float(alpha))
        return float(_tail_prob(b[:, :1], _cum(b[:, 1:]), hi, lo)[0])
    r = region(test, n, alpha)
    return float(b[:, 0] @ r.astype(float) @ b[:, 1])
