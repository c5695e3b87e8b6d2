"""Line plots: several series against one x axis, with a shaded band and reference lines."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from simgap.report.svg.frame import PAD_L, PAD_R, PALETTE, Frame, W, legend, wrap
from simgap.report.svg.text import esc


def lines(
    x: npt.ArrayLike,
    series: dict[str, npt.ArrayLike],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    max_points: int = 1500,
    band: tuple[float, str] | None = None,
) -> str:
    """Line plot of several series against one x axis (decimated to ``max_points``);
    ``band`` shades +-value around zero (e.g. the noise floor of a residual)."""
    xv = np.asarray(x, dtype=float)
    if xv.size == 0:
        return ""
    step = max(1, xv.size // max_points)
    xv = xv[::step]
    ys = {k: np.asarray(v, dtype=float)[::step] for k, v in series.items()}
    finite = [a[np.isfinite(a)] for a in ys.values()]
    if not any(a.size and np.any(a != 0) for a in finite):
        return ""
    ylo = min(float(a.min()) for a in finite if a.size)
    yhi = max(float(a.max()) for a in finite if a.size)
    if band:
        ylo, yhi = min(ylo, -band[0]), max(yhi, band[0])
    f = Frame(float(xv.min()), float(xv.max()), ylo, yhi + 0.05 * (yhi - ylo))
    parts = f.axes(xlabel, ylabel)
    if band:
        parts.append(
            f'<rect x="{PAD_L}" y="{f.y(band[0]):.1f}" width="{W - PAD_L - PAD_R}" '
            f'height="{f.y(-band[0]) - f.y(band[0]):.1f}" fill="#c23b3b" '
            f'fill-opacity="0.12"><title>{esc(band[1])}</title></rect>'
        )
    colors = [PALETTE[j % len(PALETTE)] for j in range(len(ys))]
    for j, yv in enumerate(ys.values()):
        pts = " ".join(
            f"{f.x(a):.1f},{f.y(b):.1f}" for a, b in zip(xv, yv, strict=False) if np.isfinite(b)
        )
        parts.append(
            f'<polyline points="{pts}" fill="none" stroke="{colors[j]}" stroke-width="1.3"/>'
        )
    names = list(ys) + ([band[1]] if band else [])
    parts += legend(names, colors + (["#e8b4b4"] if band else []))
    return wrap(parts, title)
