"""The one interval rule of every least-squares fit: Gauss-Newton covariance, Student-t.

At a least-squares fit with Jacobian ``J`` (m residuals, n parameters) the covariance of the
parameters is ``s^2 (J^T J)^+`` with ``s^2`` the residual variance on ``m - n`` degrees of
freedom, and the 95 % half-width of parameter k is ``t_{0.975, m - n} sqrt(cov_kk)``: the
Student-t quantile, honest for the small samples some fits have (a normal quantile claims
too narrow an interval there; for thousands of residuals the two agree to 1e-4).

``J^T J`` is inverted by its eigendecomposition: a direction whose eigenvalue is at most
``NULL_REL`` of the largest is a null direction (the data cannot see it: finite-difference
Jacobians carry far more error than the eigensolver's 1e-16), and every parameter with
weight on it gets no interval (an infinite half-width), the reason ``NULL_REASON``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

NULL_REL = 1e-10
"""Eigenvalues of J^T J at most this fraction of the largest are null directions."""
NULL_WEIGHT = 1e-2
"""A parameter whose eigenvector weight on a null direction exceeds this has no interval."""
NULL_REASON = "infinite interval: a null direction of J^T J (confounded with other parameters)"
"""Why a half-width is withheld (infinite)."""


def t_quantile(dof: int, level: float = 0.95) -> float:
    """The two-sided Student-t quantile of ``level`` on ``dof`` (at least 1) degrees of
    freedom (1.96 as dof grows)."""
    return float(stats.t.ppf(0.5 + level / 2.0, max(1, int(dof))))


@dataclass(frozen=True)
class Intervals:
    """Confidence intervals of a least-squares fit, in the fit's coordinates.

    Attributes:
        half_width: Student-t half-widths at ``level``, shape (n,); inf where withheld.
        sd: standard errors sqrt(cov_kk), shape (n,); inf where withheld.
        cov: s^2 (J^T J)^+, shape (n, n).
        corr: the correlation of the parameters, shape (n, n).
        cond: condition number of J^T J (inf when singular).
        dof: residual degrees of freedom, max(1, m - n).
        s2: the residual variance used [residual units^2].
        quantile: the t quantile the half-widths use.
        withheld: per parameter, why it has no interval ("" where it has one).
    """

    half_width: np.ndarray
    sd: np.ndarray
    cov: np.ndarray
    corr: np.ndarray
    cond: float
    dof: int
    s2: float
    quantile: float
    withheld: tuple[str, ...]


def null_directions(w: np.ndarray) -> np.ndarray:
    """Which eigenvalues ``w`` of J^T J are null (all of them when none is positive)."""
    wmax = float(max(np.max(w), 0.0)) if np.size(w) else 0.0
    out: np.ndarray = w <= NULL_REL * wmax if wmax > 0 else np.ones_like(w, dtype=bool)
    return out


def pinv_solve(A: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``A^+ g`` for a symmetric positive semi-definite ``A`` (J^T J), null directions
    (``null_directions``) dropped."""
    w, v = np.linalg.eigh(A)
    keep = ~null_directions(w)
    out: np.ndarray = (v[:, keep] / w[keep]) @ (v[:, keep].T @ g)
    return out


def intervals(
    w: np.ndarray,
    v: np.ndarray,
    ssr: float,
    rows: int,
    *,
    s2_min: float = 0.0,
    inflation: float = 1.0,
    level: float = 0.95,
) -> Intervals:
    """Student-t intervals from the eigendecomposition ``w, v`` of J^T J.

    Args:
        w, v: eigenvalues (n,) and eigenvectors (n, n) of J^T J (``np.linalg.eigh``).
        ssr: sum of squared residuals at the fit; rows: the residual count m.
        s2_min: the least residual variance (a replay's own floor: what lies below it the
            replay cannot tell apart).
        inflation: factor on the variance (e.g. the residuals' lag-1 autocorrelation).
        level: the confidence level.
    """
    n = w.size
    dof = max(1, rows - n)
    s2 = max(ssr / dof, s2_min) * inflation
    null = null_directions(w)
    inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, w))
    cov = s2 * (v * inv) @ v.T
    var = np.clip(np.diag(cov), 0.0, None)
    tq = t_quantile(dof, level)
    touches = (
        (np.abs(v[:, null]) > NULL_WEIGHT).any(axis=1) if null.any() else np.zeros(n, dtype=bool)
    )
    sd = np.where(touches, np.inf, np.sqrt(var))
    hw = tq * sd
    sd_safe = np.sqrt(np.where(var > 0, var, 1.0))
    corr = cov / np.outer(sd_safe, sd_safe)
    cond = float(w.max() / w.min()) if n and w.min() > 0 else float("inf")
    return Intervals(
        half_width=hw,
        sd=sd,
        cov=cov,
        corr=corr,
        cond=cond,
        dof=dof,
        s2=s2,
        quantile=tq,
        withheld=tuple(NULL_REASON if t else "" for t in touches),
    )


def jacobian_intervals(
    jac: np.ndarray,
    r: np.ndarray,
    *,
    s2_min: float = 0.0,
    inflation: float = 1.0,
    level: float = 0.95,
) -> Intervals:
    """``intervals`` of a Jacobian ``jac`` (m, n) and its residuals ``r`` (m,)."""
    r = np.asarray(r, dtype=float).reshape(-1)
    w, v = np.linalg.eigh(jac.T @ jac)
    return intervals(w, v, float(r @ r), r.size, s2_min=s2_min, inflation=inflation, level=level)
