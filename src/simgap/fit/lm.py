"""Batched Levenberg-Marquardt: the damping every LM of simgap steps with, and ``lm_fit``,
which fits many folds at once.

The damping (``LAMBDA0``, ``damped_step``, ``next_damping``) is the one schedule of both
batched LMs, this module's ``lm_fit`` and ``simgap.fit.profile.grid_fit``: the normal
equations damped by lambda times their diagonal (floored at ``DIAG_FLOOR``, so a parameter
the data do not see gets a finite damping; both fits search dimensionless coordinates,
unit-cube or log-multiplier, against residuals in radians), lambda divided by 3 after an
accepted step and multiplied by 4 after a rejected one, a point converged once an accepted
step gains less than ``tol`` or lambda passes ``LAMBDA_MAX``.

``lm_fit`` works on a residual function that evaluates M candidate parameter vectors in one
call (one vectorised simulation), so a leave-one-trajectory-out fit of F folds costs about as
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

LAMBDA0 = 1e-2
"""The first damping."""
LAMBDA_MAX = 1e6
"""A point whose damping passes this has stalled: it stops."""
DIAG_FLOOR = 1e-12
"""The least diagonal entry damped [residual units^2 per unit parameter^2]."""


def damped_step(A: np.ndarray, g: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The LM step of each point: ``-(A + lam diag(A)) ^-1 g``.

    Args:
        A: the Gauss-Newton matrices J^T W J, shape (P, n, n); g: J^T W r, shape (P, n);
        lam: the damping of each point, shape (P,).
    """
    n = A.shape[-1]
    diag = np.einsum("pii->pi", A)
    Ad = A + (lam[:, None] * np.maximum(diag, DIAG_FLOOR))[:, :, None] * np.eye(n)[None]
    out: np.ndarray = -np.linalg.solve(Ad, g[:, :, None])[:, :, 0]
    return out


def next_damping(
    lam: np.ndarray,
    better: np.ndarray,
    gain: np.ndarray,
    tol: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(the next damping, which points are done) after a trial step: lambda / 3 where the
    step was accepted (``better``), x 4 where rejected; done where an accepted step gained
    (relative cost decrease ``gain``) less than ``tol`` or lambda passed ``LAMBDA_MAX``."""
    lam = np.where(better, lam / 3.0, lam * 4.0)
    return lam, (better & (gain < tol)) | (lam > LAMBDA_MAX)


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


def lm_fit(
    resid: ResidualFn,
    theta0: np.ndarray,
    weights: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    iters: int = 30,
    step: float = 1e-4,
    tol: float = 1e-5,
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
    lam = np.full(F, LAMBDA0)
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
        r_all = resid(
            np.concatenate([th[:, None, :], pert], axis=1).reshape(-1, n), np.repeat(idx, n + 1)
        )
        r_all = r_all.reshape(idx.size, n + 1, -1)
        r_all = finite_residual(r_all)
        base = r_all[:, 0]
        jac = (r_all[:, 1:] - base[:, None, :]) / step  # (f, n, R)
        w = weights[idx] / np.maximum(np.abs(base), IRLS_EPS)
        A = np.einsum("fir,fr,fjr->fij", jac, w, jac)
        g = np.einsum("fir,fr,fr->fi", jac, w, base)
        delta = damped_step(A, g, lam[idx])
        trial = np.clip(th + delta, lo, hi)
        new_cost = weighted_mae(resid(trial, idx), weights[idx])
        better = new_cost < cost[idx]
        gain = (cost[idx] - new_cost) / np.maximum(cost[idx], 1e-300)
        theta[idx[better]] = trial[better]
        cost[idx[better]] = new_cost[better]
        lam[idx], done = next_damping(lam[idx], better, gain, tol)
        active[idx[done]] = False
    return BatchFit(theta=theta, cost=cost, iterations=it)
