"""Rungs 1 and 2: the ideal actuator (measured = commanded) and a fixed delay plus a
first-order lag.

The lag is integrated as MuJoCo integrates a ``filter`` actuator (explicit Euler,
``u += dt / lag * (cmd - u)``), starting from the first measured position, so a fitted lag
drops straight into a MuJoCo model. The delay is never fitted by gradient together with the
lag: it is profiled (scanned over a grid between zero and the cross-correlation delay, the
lag refitted at each point), which is what ``simgap.actuator.ladder`` does.
"""

from __future__ import annotations

import numpy as np

LAG_BOUNDS_S = (1e-3, 5.0)
"""Range of the lag time constant searched [s]."""


def first_order(cmd: np.ndarray, u0: np.ndarray, lag_s: np.ndarray, dt: float) -> np.ndarray:
    """First-order lag of commands for N time constants at once.

    Args:
        cmd: delayed commands, shape (L, T), or (N, L, T) for one per time constant.
        u0: initial outputs, shape (L,).
        lag_s: time constants [s], shape (N,).
        dt: step [s].

    Returns:
        Outputs, shape (N, L, T): output k is the state before command k is applied (as a
        MuJoCo actuator's activation).
    """
    lag = np.asarray(lag_s, dtype=float).reshape(-1, 1)
    alpha = np.where(lag > dt, dt / np.maximum(lag, 1e-12), 1.0)
    n = lag.shape[0]
    L, T = cmd.shape[-2:]
    c = cmd if cmd.ndim == 3 else cmd[None]
    u = np.broadcast_to(u0[None, :], (n, L)).copy()
    out = np.empty((n, L, T))
    for k in range(T):
        out[:, :, k] = u
        u = u + alpha * (c[:, :, k] - u)
    return out
