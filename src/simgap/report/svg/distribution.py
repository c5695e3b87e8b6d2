"""The distribution of one set of values: a histogram and an empirical CDF."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from simgap.report.svg.frame import PALETTE, Frame, finite, vline, wrap
from simgap.report.svg.scale import axis_range, degenerate


def histogram(
    values: npt.ArrayLike,
    *,
    bins: int = 40,
    xlabel: str,
    title: str,
    ylabel: str = "count",
    vlines: Sequence[tuple[float, str]] = (),
) -> str:
    """A histogram with optional labelled vertical lines (e.g. the control period)."""
    v = finite(values)
    if v.size == 0:
        return ""
    xs = [x for x, _ in vlines if math.isfinite(x)]
    vlo, vhi = float(min(v.min(), *xs)), float(max(v.max(), *xs))
    lo, hi = axis_range(vlo, vhi)
    if degenerate(vlo, vhi):  # one value to its precision: one bar centred on it
        c, w = (vlo + vhi) / 2, (hi - lo) / bins
        counts, edges = np.array([v.size]), np.array([c - w / 2, c + w / 2])
    else:
        counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    f = Frame(lo, hi, 0, float(counts.max()) * 1.15)
    parts = f.axes(xlabel, ylabel)
    for c, a, b in zip(counts, edges[:-1], edges[1:], strict=True):
        if c:
            parts.append(
                f'<rect x="{f.x(a):.1f}" y="{f.y(c):.1f}" '
                f'width="{max(0.5, f.x(b) - f.x(a) - 0.5):.1f}" '
                f'height="{f.y(0) - f.y(c):.1f}" fill="{PALETTE[0]}"/>'
            )
    for i, (x, label) in enumerate(vlines):
        if math.isfinite(x):
            parts.append(vline(f, x, label, PALETTE[3 + i % 3], i))
    return wrap(parts, title)


def ecdf(
    values: npt.ArrayLike, *, xlabel: str, title: str, vlines: Sequence[tuple[float, str]] = ()
) -> str:
    """The empirical cumulative distribution (fraction of samples at or below x)."""
    v = np.sort(finite(values))
    if v.size == 0:
        return ""
    xs = [x for x, _ in vlines if math.isfinite(x)]
    lo, hi = float(min(v[0], *xs)), float(max(v[-1], *xs))
    pad = 0.03 * (hi - lo or 1.0)
    f = Frame(lo - pad, hi + pad, 0.0, 1.0)
    parts = f.axes(xlabel, "fraction of ticks at or below")
    p = np.arange(1, v.size + 1) / v.size
    step = max(1, v.size // 1500)
    pts = " ".join(f"{f.x(a):.1f},{f.y(b):.1f}" for a, b in zip(v[::step], p[::step], strict=True))
    parts.append(f'<polyline points="{pts}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.6"/>')
    for i, (x, label) in enumerate(vlines):
        if math.isfinite(x):
            frac = float(np.mean(v <= x))
            parts.append(vline(f, x, f"{label} ({frac:.0%} at or below)", PALETTE[3 + i % 3], i))
    return wrap(parts, title)
