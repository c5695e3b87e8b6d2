"""An axis's range and its ticks: round steps, labels, and a span that never spreads
values equal to their precision."""

from __future__ import annotations

import math

import numpy as np


def _step(lo: float, hi: float, n: int) -> float:
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    return min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9)), default=raw)


def ticks(lo: float, hi: float, n: int = 5) -> list[tuple[float, str]]:
    """Round tick positions in [lo, hi] and their labels, with as many decimals as the step
    needs, so that neighbouring ticks never read the same."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [(lo, fmt(lo))] if math.isfinite(lo) else []
    step = _step(lo, hi, n)
    start = math.ceil(lo / step - 1e-9) * step
    vals = [float(v) for v in np.arange(start, hi + step * 1e-6, step)]
    big = max(abs(lo), abs(hi))
    if big >= 1e5 or big < 1e-3:
        digits = max(1, math.ceil(math.log10(big / step)) + 1) if big > 0 else 1
        return [(v, f"{v:.{digits}g}") for v in vals]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1  # 2.5 x 10^-k needs one more
    return [(v, f"{0.0 if abs(v) < step * 1e-6 else v:.{decimals}f}") for v in vals]


def fmt(v: float) -> str:
    """A number with three significant digits (no exponent for everyday magnitudes)."""
    a = abs(v)
    if not math.isfinite(v):
        return str(v)
    if a == 0:
        return "0"
    if a >= 1e5 or a < 1e-3:
        return f"{v:.3g}"
    return f"{v:.3g}" if a < 1000 else f"{v:.0f}"


REL_SPAN = 1e-6
"""The smallest span of an axis relative to its values' magnitude. Below it the values are
one value to their own precision (float32, the recordings' type, resolves 1.2e-7; the
report prints 4 significant digits) and only tick labels of 8 or more digits could tell
them apart: such a range is an artefact of rounding (a 66.6667 ms setting against intervals
of 66.666667 ms), and spread across the whole axis it would put equal values at its ends.
(Clock times are plotted from the start of their record, never as absolute timestamps.)"""


MIN_REL_HALF_SPAN = 0.01
"""Half the span of an axis drawn around one value: 1% of it (0.5 around zero)."""


def degenerate(lo: float, hi: float) -> bool:
    """Whether [lo, hi] holds one value to its precision: empty, reversed, not finite, or
    narrower than ``REL_SPAN`` of the values."""
    return not hi - lo > REL_SPAN * max(abs(lo), abs(hi))


def axis_range(lo: float, hi: float) -> tuple[float, float]:
    """The range an axis shows for values in [lo, hi]: [lo, hi] itself, or, when it is
    ``degenerate``, one around the value: +-``MIN_REL_HALF_SPAN`` of it, widened to whole
    tick steps, so equal values sit together mid-axis under tick labels that differ
    (33.333331 and 33.333333 ms: 33.0 to 33.8 ms, ticks 0.2 apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = (lo, lo) if math.isfinite(lo) else (hi, hi) if math.isfinite(hi) else (0, 0)
    if not degenerate(lo, hi):
        return float(lo), float(hi)
    c = (lo + hi) / 2
    half = MIN_REL_HALF_SPAN * abs(c) if c != 0 else 0.5
    step = _step(c - half, c + half, 5)
    return (
        float(math.floor((c - half) / step + 1e-9) * step),
        float(math.ceil((c + half) / step - 1e-9) * step),
    )
