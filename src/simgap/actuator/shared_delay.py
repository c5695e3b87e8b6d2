"""The arm's one delay from its joints' delay profiles (``shared_delay``): where every joint's
interval agrees, the delay all of them share, and the interval that holds it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def shared_delay(
    profiles: Sequence[Any],
    lo: float,
    hi: float,
) -> tuple[tuple[float, float, float], list[tuple[float, float]]]:
    """The arm's one delay and every joint's interval widened by the spread across joints.

    One bus carries every joint's command, so the delay is one per arm: the shared estimate
    is the mean of the joints' best delays, its 95 % half-width the wider of
    t(J-1) * sd / sqrt(J) and the median joint's own half-width (the joints' errors share
    a bias, so averaging them does not narrow it). A joint's interval is widened to hold
    its best +- t(J-1) * sd (how far one joint's estimate falls from the others') and the
    shared interval.

    Returns:
        ((best, lo, hi) of the shared delay [s], per joint (lo, hi) [s]).
    """
    from simgap.fit.intervals import t_quantile

    best = np.array([p.best_s for p in profiles])
    own = [tuple(p.interval_s) for p in profiles]
    J = best.size
    if J < 2:
        return (float(best[0]), own[0][0], own[0][1]), [(o[0], o[1]) for o in own]
    t = t_quantile(J - 1)
    sd = float(np.std(best, ddof=1))
    mean = float(np.mean(best))
    hw_own = float(np.median([0.5 * (b - a) for a, b in own]))
    hw = max(t * sd / np.sqrt(J), hw_own)
    s_lo, s_hi = max(lo, mean - hw), min(hi, mean + hw)
    out = [
        (max(lo, min(a, b_j - t * sd, s_lo)), min(hi, max(b, b_j + t * sd, s_hi)))
        for (a, b), b_j in zip(own, best, strict=True)
    ]
    return (mean, s_lo, s_hi), out
