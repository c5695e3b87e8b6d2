"""Rank fidelity of a simulated screen across checkpoints: ``simgap rank``.

Conventions (stated in the output too):

- MMRV follows SIMPLER's code (simpler_env/utils/metrics.py): for each checkpoint i,
  max over j of |R_i - R_j| * 1[(S_i > S_j) != (R_i > R_j)], averaged over all
  checkpoints. The gap is taken on the **real** side, comparisons are strict ``>``, so a tie
  in sim with a difference in real is a violation (for the checkpoint better in real) and a
  tie in real costs nothing.
- Pearson r is the plain sample coefficient (no SIMPLER +1e-8); when either side is
  constant, r is undefined and reported as 0.0 (as SIMPLER's code gives for one constant
  side). Kendall tau (tau-b) and Spearman rho follow scipy, with the same 0.0 for a
  constant side.
- Intervals: a seeded parametric bootstrap redraws every checkpoint's successes from
  Binomial(trials, observed rate) on each side that has trial counts, and recomputes the
  metrics; percentile intervals.
- ``noise_only``: how much MMRV the real side's sampling noise alone produces against a
  perfect screen (sim = the observed real rates), so a user sees whether the observed
  violations exceed noise.
- The offline baseline ranks checkpoints by the offline metric (lower is better: its
  negation plays the sim side).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from simgap.errors import InputError
from simgap.values.checkpoints import CheckpointTable

Vector = Sequence[float] | npt.NDArray[np.float64]
"""A vector of rates, shape (N,)."""

CONVENTIONS = {
    "mmrv": "SIMPLER: mean over checkpoints of the largest real-side gap |R_i - R_j| among "
    "pairs ordered differently in sim and real; gap taken on the real side; strict "
    "'>' so a sim tie with a real difference counts, a real tie costs 0",
    "pearson": "plain sample Pearson r; 0.0 when either side is constant",
    "kendall": "scipy kendalltau (tau-b); 0.0 when either side is constant",
    "spearman": "scipy spearmanr; 0.0 when either side is constant",
    "offline_baseline": "the same metrics with the negated offline metric as the screen "
    "(lower metric = predicted better)",
}


def _pair(sim: Vector, real: Vector) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(sim, dtype=float)
    r = np.asarray(real, dtype=float)
    if s.shape != r.shape or s.ndim != 1:
        raise InputError(
            field="real_success",
            expected="as many real rates as sim rates",
            got=f"{s.shape} and {r.shape}",
        )
    return s, r


def mmrv(sim: Vector, real: Vector) -> float:
    """Mean maximum rank violation (SIMPLER's definition; gap on the real side)."""
    s, r = _pair(sim, real)
    if s.size <= 1:
        return 0.0
    return float(_mmrv_batch(s[None, :], r[None, :])[0])


def _mmrv_batch(s: np.ndarray, r: np.ndarray) -> np.ndarray:
    """MMRV for each row of (B, N) arrays, shape (B,), in chunks of rows."""
    b, n = s.shape
    step = max(1, 4_000_000 // max(1, n * n))
    out = np.empty(b)
    for i in range(0, b, step):
        sc, rc = s[i : i + step], r[i : i + step]
        viol = (sc[:, :, None] > sc[:, None, :]) != (rc[:, :, None] > rc[:, None, :])
        gap = np.abs(rc[:, :, None] - rc[:, None, :])
        out[i : i + step] = np.where(viol, gap, 0.0).max(axis=2).mean(axis=1)
    return out


def pearson(sim: Vector, real: Vector) -> float:
    """Sample Pearson r; 0.0 when either side is constant."""
    s, r = _pair(sim, real)
    return float(_pearson_batch(s[None, :], r[None, :])[0])


def _pearson_batch(s: np.ndarray, r: np.ndarray) -> np.ndarray:
    sc = s - s.mean(axis=1, keepdims=True)
    rc = r - r.mean(axis=1, keepdims=True)
    den = np.sqrt((sc * sc).sum(axis=1) * (rc * rc).sum(axis=1))
    num = (sc * rc).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return np.asarray(np.clip(out, -1.0, 1.0))


def _constant(x: np.ndarray) -> bool:
    return bool(np.all(x == x[0]))


def kendall(sim: Vector, real: Vector) -> float:
    """Kendall tau-b; 0.0 when either side is constant."""
    s, r = _pair(sim, real)
    if _constant(s) or _constant(r):
        return 0.0
    return float(stats.kendalltau(s, r).statistic)


def spearman(sim: Vector, real: Vector) -> float:
    """Spearman rho; 0.0 when either side is constant."""
    s, r = _pair(sim, real)
    if _constant(s) or _constant(r):
        return 0.0
    return float(stats.spearmanr(s, r).statistic)


def metrics(sim: Vector, real: Vector) -> dict[str, float]:
    """``{"mmrv", "pearson", "kendall", "spearman"}`` of a screen against real rates."""
    return {
        "mmrv": mmrv(sim, real),
        "pearson": pearson(sim, real),
        "kendall": kendall(sim, real),
        "spearman": spearman(sim, real),
    }


def _draw(
    rates: np.ndarray, trials: Sequence[int] | None, rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    if trials is None:
        return np.broadcast_to(rates, (n_boot, rates.size))
    n = np.asarray(trials, dtype=np.int64)
    k = np.rint(rates * n).astype(np.int64)
    return rng.binomial(n, k / n, size=(n_boot, rates.size)) / n


def rank_report(
    table: CheckpointTable, n_boot: int = 2000, seed: int = 0, conf: float = 0.95
) -> dict[str, Any]:
    """Everything ``simgap rank`` reports, as the JSON dict.

    Keys: ``mmrv``, ``pearson``, ``kendall``, ``spearman``, ``n_checkpoints``,
    ``intervals`` {mmrv: [lo, hi], pearson: [lo, hi], level, n_boot, seed, resampled} (the
    interval entries are None when no trial counts are given), ``noise_only``,
    ``offline_baseline`` (None without an offline metric), ``conventions``.

    Raises:
        InputError: fewer than two checkpoints.
    """
    n = len(table.checkpoints)
    if n < 2:
        raise InputError(
            file=table.source,
            field="checkpoint",
            expected="at least two checkpoints to rank",
            got=n,
            fix="add rows for more checkpoints",
        )
    sim = np.asarray(table.sim)
    real = np.asarray(table.real)
    out: dict[str, Any] = {**metrics(sim, real), "n_checkpoints": n}
    resampled = [
        side
        for side, t in (("sim", table.sim_trials), ("real", table.real_trials))
        if t is not None
    ]
    lo_q, hi_q = (1 - conf) / 2, 1 - (1 - conf) / 2
    intervals: dict[str, Any] = {
        "level": conf,
        "n_boot": n_boot,
        "seed": seed,
        "resampled": resampled,
        "mmrv": None,
        "pearson": None,
    }
    noise: dict[str, Any] | None = None
    if resampled:
        rng = np.random.default_rng(seed)
        bs = _draw(sim, table.sim_trials, rng, n_boot)
        br = _draw(real, table.real_trials, rng, n_boot)
        m = _mmrv_batch(bs, br)
        r = _pearson_batch(bs, br)
        intervals["mmrv"] = [float(np.quantile(m, lo_q)), float(np.quantile(m, hi_q))]
        intervals["pearson"] = [float(np.quantile(r, lo_q)), float(np.quantile(r, hi_q))]
        if table.real_trials is not None:
            truth = np.broadcast_to(real, br.shape)
            nm = _mmrv_batch(truth, _draw(real, table.real_trials, rng, n_boot))
            noise = {
                "mmrv_median": float(np.median(nm)),
                "mmrv_upper": float(np.quantile(nm, hi_q)),
                "p_value": float(np.mean(nm >= out["mmrv"] - 1e-12)),
                "meaning": "MMRV a perfect screen would show from real-side sampling "
                "noise alone; p_value = share of noise-only draws at or above "
                "the observed MMRV",
            }
    out["intervals"] = intervals
    out["noise_only"] = noise
    if table.offline_metric is not None:
        screen = -np.asarray(table.offline_metric)
        base = metrics(screen, real)
        out["offline_baseline"] = {**base, "sim_ranks_better": out["mmrv"] < base["mmrv"]}
    else:
        out["offline_baseline"] = None
    out["checkpoints"] = [
        {"checkpoint": c, "sim_success": float(s), "real_success": float(x)}
        for c, s, x in zip(table.checkpoints, sim, real, strict=True)
    ]
    out["conventions"] = CONVENTIONS
    return out
