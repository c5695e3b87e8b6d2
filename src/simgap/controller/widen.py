"""Autocorrelated pose residuals widen the controller fit's local intervals.

``simgap.fit.search.assess`` gives s^2 (J^T J)^-1 half-widths, which hold for independent
residuals. The pose residuals of a replay are a trajectory's error: each sample much like the
one before (encoder quantisation held over frames, a slightly different gain showing as a
slow drift), so the thousands of samples carry far fewer independent ones and the interval is
too narrow by the square root of the lag-1 variance inflation (1 + rho) / (1 - rho)
(``simgap.fit.profile.lag1_inflation``, the rule the joint fit's delay profile uses). On a
healthy 100 fps bench drawn by ``make_so101_bench`` (8 s, seed 7) the fit stated shoulder_pan
kp [1001, 1005] N m/rad against the true 998.2; widened, the interval holds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from simgap.fit.estimate import ParamEstimate
from simgap.fit.profile import lag1_inflation
from simgap.fit.search import IDENTIFIED_REL_HALF_WIDTH, FitResult


def pose_inflation(targets: Sequence[np.ndarray], r: np.ndarray) -> float:
    """The largest lag-1 variance inflation over every episode's six pose residual
    components (translation [m], half-angle rotation vector [rad]), in time order.

    Args:
        targets: per episode, the logged pose, shape (T, 7) (sets each block's length).
        r: one stacked residual vector, shape (sum 6 T,).
    """
    out, start = 1.0, 0
    for tgt in targets:
        n = tgt.shape[0] * 6
        block = np.asarray(r[start : start + n], dtype=float).reshape(-1, 6)
        start += n
        out = max(out, *(lag1_inflation(block[:, c]) for c in range(6)))
    return float(out)


def widen(res: FitResult, inflation: float) -> FitResult:
    """``res`` with its half-widths and its estimate's intervals times sqrt(``inflation``)
    about each value, and each identified parameter whose widened half-width exceeds
    ``IDENTIFIED_REL_HALF_WIDTH`` of its value declared not identified, with the reason
    (its widened interval kept as the one turned down)."""
    k = float(np.sqrt(max(inflation, 1.0)))
    hw = np.asarray(res.half_width, dtype=float) * k
    params = []
    for p, h in zip(res.estimate, hw, strict=True):
        if p.interval is None:
            params.append(p)
            continue
        lo, hi = p.interval
        wide = (p.value - k * (p.value - lo), p.value + k * (hi - p.value))
        rel = h / max(abs(p.value), 1e-300)
        why = (
            f"95% half-width is {100 * rel:.0f}% of the value once widened x{k:.3g} for "
            "autocorrelated residuals (lag-1)"
            if rel > IDENTIFIED_REL_HALF_WIDTH
            else ""
        )
        params.append(ParamEstimate.of(p.name, p.unit, p.value, wide, why))
    estimate = dataclasses.replace(res.estimate, params=tuple(params))
    return dataclasses.replace(res, half_width=hw, estimate=estimate)
