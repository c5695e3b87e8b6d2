"""The one batched Levenberg-Marquardt of simgap: ``lm_batch`` fits P points at once (the
folds of a leave-one-out fit, the delays of a profile), every evaluation one batched call.

Each iteration differences the Jacobians the points need in one call of the residual
function (one vectorised simulation), solves every point's damped normal equations, tries
the step's fractions (a batched line search) in one more call, clipped to the box, and
keeps the best where it lowers the point's cost. The damping (``LAMBDA0``, ``damped_step``,
``next_damping``) is the normal equations damped by lambda times their diagonal (floored at
``DIAG_FLOOR``, so a parameter the data do not see gets a finite damping; the fits search
dimensionless coordinates, unit-cube or log-multiplier, against residuals in radians),
lambda divided by 3 after an accepted step and multiplied by 4 after a rejected one; a point
is done once an accepted step gains (relative cost decrease) less than ``tol`` or lambda
passes ``LAMBDA_MAX``, and drops out of the batches.

What differs between fits are named options (``LMOptions``): the loss
(``simgap.fit.loss``: the sum of squares, or the weighted MAE by IRLS), the Jacobian policy
(``simgap.fit.jacobian``: how and when a Jacobian is differenced, and whether a rejected
step keeps it), and the line search's fractions. ``lm_fit`` (here) and
``simgap.fit.profile.grid_fit`` are its two configurations:

- ``lm_fit``: F folds, the weighted MAE (what BAM minimises and what the ladder reports),
  forward differences with the base re-evaluated every iteration, the full step only.
  A leave-one-trajectory-out fit of F folds costs about as much as one fit.
- ``grid_fit``: G delays, the sum of squares, central (or forward until a rejection)
  differences kept after a rejected step, the step's fractions ``LINE_STEPS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simgap.fit.jacobian import ForwardWithBase, JacobianPolicy
from simgap.fit.loss import Loss, WeightedMAE

ResidualFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(theta, shape (M, n); tag of each row (a fold, a delay), shape (M,)) -> residuals,
shape (M, R) or (M, ...)."""

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
class LMOptions:
    """The choices of one ``lm_batch`` run.

    Attributes:
        loss: what a point's residuals cost and the normal equations of its step
            (``simgap.fit.loss.SumOfSquares`` or ``WeightedMAE``).
        jacobian: how and when Jacobians are differenced (``simgap.fit.jacobian``).
        fractions: the fractions of each LM step tried together (one batched evaluation),
            the cheapest kept; ``(1.0,)`` tries the step itself.
        iters: most iterations.
        tol: relative cost decrease of an accepted step below which a point is done.
    """

    loss: Loss
    jacobian: JacobianPolicy
    fractions: tuple[float, ...] = (1.0,)
    iters: int = 30
    tol: float = 1e-5


@dataclass(frozen=True)
class LMRun:
    """Result of ``lm_batch``.

    Attributes:
        x: the parameters of each point, shape (P, n).
        cost: their cost (the options' loss), shape (P,).
        resid: their residuals, shape (P, ...) as the residual function returns them.
        iterations: iterations run (the last one may have found every point done).
        n_evals: candidates evaluated (rows of every residual call).
    """

    x: np.ndarray
    cost: np.ndarray
    resid: np.ndarray
    iterations: int
    n_evals: int


def lm_batch(
    resid: ResidualFn,
    x0: np.ndarray,
    tags: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    options: LMOptions,
) -> LMRun:
    """Levenberg-Marquardt of P points at once inside the box [lo, hi] (see the module
    docstring).

    Args:
        resid: residuals of M candidates in one call, each row tagged (a fold, a delay).
        x0: starts, shape (P, n) (clipped to the box).
        tags: the tag of each point, shape (P,): its candidates' rows carry it.
        lo, hi: the box, shape (n,).
        options: loss, Jacobian policy, line search, iterations and tolerance.
    """
    loss, policy = options.loss, options.jacobian

    def flat(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return resid(x, t).reshape(x.shape[0], -1)

    x = np.clip(np.array(x0, dtype=float), lo, hi)
    P, n = x.shape
    raw = resid(x, tags)
    shape = raw.shape[1:]
    first = raw.reshape(P, -1)
    cost = loss.cost(first, None)
    r = np.array(first)  # each point's residual, updated as it moves
    n_evals = P
    lam = np.full(P, LAMBDA0)
    active = np.ones(P, dtype=bool)
    central = policy.central  # difference the next Jacobians centrally
    stale = np.ones(P, dtype=bool)  # a point's Jacobian must be differenced before its step
    was_central = np.zeros(P, dtype=bool)  # the Jacobian it holds is a central one
    held_jac: np.ndarray | None = None  # (P, R, n): the Jacobians kept (keep_on_reject)
    held_base = np.zeros_like(r)  # (P, R): the residuals they were differenced around
    fractions = np.asarray(options.fractions, dtype=float)
    m = fractions.size
    it = 0
    for it in range(1, options.iters + 1):  # noqa: B007
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        need = idx[stale[idx]]
        fresh = None
        if need.size:
            fresh = policy.difference(flat, x[need], r[need], tags[need], lo, hi, central)
            n_evals += fresh.evals
            stale[need], was_central[need] = False, central
            if policy.keep_on_reject:
                if held_jac is None:
                    held_jac = np.zeros((P,) + fresh.jac.shape[1:])
                held_jac[need], held_base[need] = fresh.jac, fresh.base
        if fresh is not None and need.size == idx.size:  # every stepping point, just now
            jac, base = fresh.jac, fresh.base
        else:
            assert held_jac is not None
            jac, base = held_jac[idx], held_base[idx]
        A, g = loss.normal_equations(jac, base, idx)
        delta = damped_step(A, g, lam[idx])
        trials = np.clip(
            x[idx, None, :] + fractions[None, :, None] * delta[:, None, :], lo, hi
        )  # (f, m, n)
        rts = flat(trials.reshape(-1, n), np.repeat(tags[idx], m)).reshape(idx.size, m, -1)
        n_evals += idx.size * m
        if m > 1:
            best = np.argmin(loss.cost(rts, idx), axis=1)
            trial = trials[np.arange(idx.size), best]
            rt = rts[np.arange(idx.size), best]
        else:
            trial, rt = trials[:, 0], rts[:, 0]
        new = loss.cost(rt, idx)
        old = cost[idx]
        better = new < old
        rejected = idx[~better]
        if not policy.keep_on_reject:
            stale[rejected] = True
        redo = rejected[~was_central[rejected]] if policy.central_after_reject else idx[:0]
        if redo.size:
            # a step rejected on a forward Jacobian: its slope may have misled (a kink), so
            # that point is differenced again centrally where it is, and every point
            # centrally from then on (the points share the residual's kinks)
            central = True
            stale[redo] = True
        acc = idx[better]
        stale[acc] = True
        x[acc] = trial[better]
        r[acc] = rt[better]
        cost[acc] = new[better]
        gain = (old - new) / np.maximum(old, 1e-300)
        lam[idx], done = next_damping(lam[idx], better, gain, options.tol)
        active[idx[done]] = False
    return LMRun(x=x, cost=cost, resid=r.reshape((P,) + shape), iterations=it, n_evals=n_evals)


@dataclass(frozen=True)
class BatchFit:
    """Result of ``lm_fit``: per fold, the parameters, the weighted MAE and iterations."""

    theta: np.ndarray
    cost: np.ndarray
    iterations: int


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
    """Levenberg-Marquardt on the MAE, F folds at once, inside the box [lo, hi]:
    ``lm_batch`` with the weighted MAE, forward differences with the base re-evaluated
    (``ForwardWithBase``) and the full step.

    Args:
        resid: residuals (M, R) of M candidates in one call; a row's tag is its fold.
        theta0: start, shape (F, n).
        weights: shape (F, R): which residuals each fold trains on.
        iters: most iterations.
        step: finite-difference step (in the units of theta).
        tol: relative cost decrease below which a fold counts as converged.
    """
    F = np.shape(theta0)[0]
    run = lm_batch(
        resid,
        theta0,
        np.arange(F),
        lo,
        hi,
        LMOptions(loss=WeightedMAE(weights), jacobian=ForwardWithBase(step), iters=iters, tol=tol),
    )
    return BatchFit(theta=run.x, cost=run.cost, iterations=run.iterations)
