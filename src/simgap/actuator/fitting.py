"""Batched fitting: a Levenberg-Marquardt that fits many folds at once.

The fit works on a residual function that evaluates M candidate parameter vectors in one call
(one vectorised simulation), so a leave-one-trajectory-out fit of F folds costs about as
much as one fit: each LM iteration simulates the F folds' n + 1 finite-difference
candidates together. The loss is the mean absolute error (what BAM minimises and what the
ladder reports), approached by iteratively reweighted least squares (weights 1 / |r|).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

ResidualFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(theta, shape (M, n); fold of each row, shape (M,)) -> residuals, shape (M, R)."""

IRLS_EPS = 1e-3
"""Residual [rad] below which IRLS weights stop growing."""


@dataclass(frozen=True)
class BatchFit:
    """Result of ``lm_fit``: per fold, the parameters, the weighted MAE and iterations."""

    theta: np.ndarray
    cost: np.ndarray
    iterations: int


BLOWUP_RAD = 10.0
"""Residual given to a sample whose simulation diverged (NaN/inf)."""


def finite_residual(res: np.ndarray) -> np.ndarray:
    """Residuals with NaN/inf (a diverged candidate) replaced by a large finite value."""
    return np.where(np.isfinite(res), np.clip(res, -BLOWUP_RAD, BLOWUP_RAD), BLOWUP_RAD)


def weighted_mae(res: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per-row weighted mean absolute residual; ``res`` (M, R), ``weights`` (M, R)."""
    res = finite_residual(res)
    return np.sum(weights * np.abs(res), axis=1) / np.maximum(np.sum(weights, axis=1), 1e-300)


def lm_fit(resid: ResidualFn, theta0: np.ndarray, weights: np.ndarray, lo: np.ndarray,
           hi: np.ndarray, *, iters: int = 30, step: float = 1e-4, tol: float = 1e-5,
           ) -> BatchFit:
    """Levenberg-Marquardt on the MAE, F folds at once, inside the box [lo, hi].

    Args:
        resid: residuals of M candidates in one call.
        theta0: start, shape (F, n).
        weights: shape (F, R): which residuals each fold trains on.
        iters: most iterations.
        step: finite-difference step (in the units of theta).
        tol: relative cost decrease below which a fold counts as converged.
    """
    theta = np.clip(np.array(theta0, dtype=float), lo, hi)
    F, n = theta.shape
    lam = np.full(F, 1e-2)
    r0 = resid(theta, np.arange(F))
    cost = weighted_mae(r0, weights)
    active = np.ones(F, dtype=bool)
    it = 0
    for it in range(1, iters + 1):  # noqa: B007
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        th = theta[idx]
        pert = th[:, None, :] + step * np.eye(n)[None, :, :]
        r_all = resid(np.concatenate([th[:, None, :], pert], axis=1).reshape(-1, n),
                      np.repeat(idx, n + 1))
        r_all = r_all.reshape(idx.size, n + 1, -1)
        r_all = finite_residual(r_all)
        base = r_all[:, 0]
        jac = (r_all[:, 1:] - base[:, None, :]) / step              # (f, n, R)
        w = weights[idx] / np.maximum(np.abs(base), IRLS_EPS)
        A = np.einsum("fir,fr,fjr->fij", jac, w, jac)
        g = np.einsum("fir,fr,fr->fi", jac, w, base)
        diag = np.einsum("fii->fi", A)
        A_d = A + (lam[idx][:, None] * np.maximum(diag, 1e-12))[:, :, None] * np.eye(n)[None]
        delta = -np.linalg.solve(A_d, g[:, :, None])[:, :, 0]
        trial = np.clip(th + delta, lo, hi)
        new_cost = weighted_mae(resid(trial, idx), weights[idx])
        better = new_cost < cost[idx]
        gain = (cost[idx] - new_cost) / np.maximum(cost[idx], 1e-300)
        theta[idx[better]] = trial[better]
        cost[idx[better]] = new_cost[better]
        lam[idx] = np.where(better, lam[idx] / 3.0, lam[idx] * 4.0)
        done = (better & (gain < tol)) | (lam[idx] > 1e6)
        active[idx[done]] = False
    return BatchFit(theta=theta, cost=cost, iterations=it)
