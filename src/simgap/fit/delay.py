"""A transport delay as the fits and the exports use it: the delayed signal, and the delay in
whole physics steps.

``shift`` is the one fractional-delay shift: a command delayed by ``k`` samples (``k`` need
not be whole) is its linear interpolation at ``i - k``, held at the first value before the
log starts (and at the last after it ends, for a negative ``k``). ``delay_steps`` is the one
rounding of a delay to the physics steps a simulator's delay buffer counts, and
``delay_step_span`` the one span of whole steps that covers a range of delays.

``simgap.sim.clock.expand_commands`` with ``interp="linear"`` is the same interpolation in
the middle of a log, kept apart on purpose: ``shift`` works in samples on the log's own
uniform grid and gathers N delays at once (the fits' delay banks, shape (N, T, ...)), while
the replay reads irregular stamps at the physics steps' times and, more than half a step
before the first command acts, holds the start state (``hold_before``) rather than the
first command. Written through one routine the two move by 4e-16 (on a uniform grid) to
3e-13 (through the time arithmetic) in the last bits.
"""

from __future__ import annotations

import math

import numpy as np


def delay_steps(delay_s: float, physics_dt_s: float) -> int:
    """A delay [s] in whole physics steps (rounded half to even, a negative delay as 0)."""
    return int(round(max(0.0, float(delay_s)) / physics_dt_s))


def delay_step_span(lo_s: float, hi_s: float, physics_dt_s: float) -> tuple[int, int]:
    """The whole physics steps [min, max] that cover the delays [``lo_s``, ``hi_s``] [s]: the
    low end floored, the high end ceiled (within 1e-9 of a step a ratio is on it: 0.02 /
    0.005 is 4 steps, not the 3 its float quotient would floor to), neither below 0."""
    return (
        max(0, int(math.floor(lo_s / physics_dt_s + 1e-9))),
        max(0, int(math.ceil(hi_s / physics_dt_s - 1e-9))),
    )


def shift(signal: np.ndarray, steps: float | np.ndarray) -> np.ndarray:
    """``signal`` delayed by ``steps`` samples along axis 0 (fractional: linear interpolation).

    Args:
        signal: shape (T, ...).
        steps: one delay, or N delays of shape (N,) [samples].

    Returns:
        shape (T, ...) for one delay, (N, T, ...) for N: the value at sample i is the input
        at i - steps, the first sample before the start, the last after the end.
    """
    x = np.asarray(signal, dtype=float)
    k = np.asarray(steps, dtype=float)
    if k.ndim == 0 and k == 0.0:
        return x.copy()
    T = x.shape[0]
    pos = np.clip(np.arange(T) - k[..., None], 0.0, T - 1.0)  # (T,) or (N, T)
    i0 = np.floor(pos).astype(int)
    i1 = np.minimum(i0 + 1, T - 1)
    f = (pos - i0).reshape(pos.shape + (1,) * (x.ndim - 1))
    out: np.ndarray = x[i0] * (1.0 - f) + x[i1] * f
    return out
