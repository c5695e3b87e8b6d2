"""The losses of the batched Levenberg-Marquardt (``simgap.fit.lm.lm_batch``): what a
point's residual vector costs, and the Gauss-Newton normal equations that step towards a
lower cost.

- ``SumOfSquares``: the sum of squared residuals, normal equations ``J^T J``, ``J^T r``
  (the delay profile's fits, ``simgap.fit.profile.grid_fit``).
- ``WeightedMAE``: the weighted mean absolute residual (what BAM minimises and what the
  actuator ladder reports), by iteratively reweighted least squares: each step solves the
  least squares weighted by ``weight / max(|r|, IRLS_EPS)`` at the point's residual, which
  is the MAE's local quadratic model (``simgap.fit.lm.lm_fit``). A diverged candidate's
  NaN/inf residuals cost ``BLOWUP_RAD`` each (``finite_residual``), so it loses to any
  finite one instead of poisoning the batch.

A residual vector has R entries; a loss sees P points at once, ``rows`` naming which of the
fit's points they are (the weights are per point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

IRLS_EPS = 1e-3
"""Residual [rad] below which IRLS weights stop growing."""

BLOWUP_RAD = 10.0
"""Residual given to a sample whose simulation diverged (NaN/inf)."""


def finite_residual(res: np.ndarray) -> np.ndarray:
    """Residuals with NaN/inf (a diverged candidate) replaced by a large finite value."""
    return np.where(np.isfinite(res), np.clip(res, -BLOWUP_RAD, BLOWUP_RAD), BLOWUP_RAD)


def weighted_mae(res: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean absolute residual over the last axis; ``res`` (..., R), ``weights``
    broadcastable to it."""
    res = finite_residual(res)
    return np.sum(weights * np.abs(res), axis=-1) / np.maximum(np.sum(weights, axis=-1), 1e-300)


class Loss(Protocol):
    """What ``lm_batch`` minimises."""

    def cost(self, res: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """The cost of residuals ``res`` (P, R) or (P, m, R) of points ``rows`` (P,)
        (None: every point, in order); shape (P,) or (P, m)."""
        ...

    def normal_equations(
        self, jac: np.ndarray, res: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(A, g), shapes (P, n, n) and (P, n), of the step ``-(A + damping)^-1 g`` at
        residuals ``res`` (P, R) with Jacobian ``jac`` (P, R, n)."""
        ...


@dataclass(frozen=True)
class SumOfSquares:
    """The sum of squared residuals [residual units^2]. A NaN residual makes a NaN cost,
    which no comparison prefers: a diverged candidate is never taken."""

    def cost(self, res: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """Sum of squares over the last axis (see ``Loss``)."""
        del rows
        out: np.ndarray = np.sum(res**2, axis=-1)
        return out

    def normal_equations(
        self, jac: np.ndarray, res: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``J^T J`` and ``J^T r`` (see ``Loss``)."""
        del rows
        jac = np.ascontiguousarray(jac)  # the einsums' summation order follows the layout
        return np.einsum("grk,grl->gkl", jac, jac), np.einsum("grk,gr->gk", jac, res)


@dataclass(frozen=True)
class WeightedMAE:
    """The weighted mean absolute residual, minimised by IRLS.

    Attributes:
        weights: shape (F, R), each of the fit's F points' weight on each residual (e.g. 0
            on the logs a fold holds out).
    """

    weights: np.ndarray

    def _weights(self, rows: np.ndarray | None) -> np.ndarray:
        return self.weights if rows is None else self.weights[rows]

    def cost(self, res: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """``weighted_mae`` of each point (see ``Loss``)."""
        w = self._weights(rows)
        return weighted_mae(res, w if res.ndim == 2 else w[:, None, :])

    def normal_equations(
        self, jac: np.ndarray, res: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``J^T W J`` and ``J^T W r`` with the IRLS weights ``W = weights / max(|r|,
        IRLS_EPS)`` (see ``Loss``)."""
        jac_t = np.ascontiguousarray(jac.transpose(0, 2, 1))  # (P, n, R): the einsums' order
        res = finite_residual(res)
        w = self.weights[rows] / np.maximum(np.abs(res), IRLS_EPS)
        A = np.einsum("fir,fr,fjr->fij", jac_t, w, jac_t)
        g = np.einsum("fir,fr,fr->fi", jac_t, w, res)
        return A, g
