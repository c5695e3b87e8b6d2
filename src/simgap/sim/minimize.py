"""The one door to ``mujoco.minimize`` (only ``simgap.sim`` may import mujoco)."""

from __future__ import annotations

from collections.abc import Callable

import mujoco.minimize as mjmin
import numpy as np


def least_squares(
    x0: np.ndarray,
    residual: Callable[[np.ndarray], np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    max_iter: int = 50,
    eps: float = 1e-6,
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Box-constrained Levenberg-Marquardt (``mujoco.minimize.least_squares``), silent.

    Args:
        x0: start, shape (n,).
        residual: vectorised residual: (n, k) -> (m, k); the finite-difference Jacobian
            asks for all n columns in ONE call, so a batched backend evaluates them in one
            rollout.
        lower: lower bounds, shape (n,).
        upper: upper bounds, shape (n,).
        max_iter: iteration limit.
        eps: finite-difference step (relative, as in mujoco.minimize).

    Returns:
        (x, iterations, last Jacobian if the solver logged one).
    """
    x, trace = mjmin.least_squares(
        x0,
        residual,
        bounds=[lower, upper],
        max_iter=max_iter,
        eps=eps,
        verbose=mjmin.Verbosity.SILENT,
    )
    jac = trace[-1].jacobian if trace else None
    return np.asarray(x, dtype=float), len(trace), jac
