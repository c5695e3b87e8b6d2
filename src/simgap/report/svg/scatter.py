"""Scatter plots, each point marked by its outcome (success, failure, some failed, none
ran)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from simgap.report.svg.frame import (
    PAD_B,
    PAD_L,
    PAD_R,
    PAD_T,
    PALETTE,
    Frame,
    H,
    Swatch,
    W,
    box,
    legend_marks,
    wrap,
)
from simgap.report.svg.scale import fmt
from simgap.report.svg.text import esc

OUTCOMES = {
    "success": "success",
    "mixed": "some trials failed",
    "failure": "failure",
    "untried": "not tried",
}
"""The outcome of a placement, by its marker, and the legend's words for it."""


def outcome(s: object) -> str:
    """A placement's outcome from its success: a bool, or the fraction of its trials that
    succeeded (1: success, 0: failure, between: mixed); None, or anything else: untried."""
    if isinstance(s, (bool, np.bool_)):
        return "success" if s else "failure"
    if not isinstance(s, (int, float, np.integer, np.floating)) or not math.isfinite(float(s)):
        return "untried"
    v = float(s)
    return "success" if v >= 1 else "failure" if v <= 0 else "mixed"


def marker(
    kind: str,
    cx: float,
    cy: float,
    r: float,
    color: str,
    solid: bool,
    inner: str = "",
    attrs: str = "",
) -> str:
    """One point's mark, by outcome: a circle (success), an x (failure), a triangle (mixed),
    a square (untried); solid (filled, heavy x) or hollow (outline, light x). ``inner``
    (e.g. a ``<title>``) goes inside, ``attrs`` on the element."""
    sw = 2.2 if solid else 1.4
    paint = (
        f'fill="{color}" fill-opacity="0.85" stroke="{color}"'
        if solid
        else f'fill="none" stroke="{color}" stroke-width="{sw}"'
    )
    if kind == "failure":
        return (
            f'<g {attrs} stroke="{color}" stroke-width="{sw}" stroke-linecap="round">'
            f'{inner}<line x1="{cx - r:.1f}" y1="{cy - r:.1f}" x2="{cx + r:.1f}" '
            f'y2="{cy + r:.1f}"/><line x1="{cx - r:.1f}" y1="{cy + r:.1f}" '
            f'x2="{cx + r:.1f}" y2="{cy - r:.1f}"/></g>'
        )
    if kind == "mixed":
        pts = (
            f"{cx:.1f},{cy - r:.1f} {cx + r:.1f},{cy + r * 0.8:.1f} {cx - r:.1f},{cy + r * 0.8:.1f}"
        )
        return f'<polygon {attrs} points="{pts}" {paint}>{inner}</polygon>'
    if kind == "untried":
        return (
            f'<rect {attrs} x="{cx - r * 0.8:.1f}" y="{cy - r * 0.8:.1f}" '
            f'width="{r * 1.6:.1f}" height="{r * 1.6:.1f}" {paint}>{inner}</rect>'
        )
    return f'<circle {attrs} cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" {paint}>{inner}</circle>'


def _mark(kind: str, color: str, solid: bool) -> Swatch:
    return lambda x, y: marker(kind, x, y, 4, color, solid)


def scatter(
    groups: Mapping[str, tuple[np.ndarray, Sequence[object]]],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    rect: tuple[float, float, float, float] | None = None,
    rect_label: str = "",
) -> str:
    """Points (x, y) per group, marked by outcome (``outcome``: a circle on success, an x on
    failure, a triangle when some trials failed, a square when none ran). Groups are drawn
    in the order given, each smaller than the one before and the last (the real runs)
    solid on top, the others hollow: a group at the same placement as a later one rings
    it, never hides under it. The legend names each group by its mark and each outcome
    that is drawn, nothing else. ``rect`` = (x0, x1, y0, y1) is drawn dashed (e.g. the
    training square); x and y share one scale."""
    pts = {k: (np.asarray(p, dtype=float).reshape(-1, 2), s) for k, (p, s) in groups.items()}
    allp = [p for p, _ in pts.values() if p.size]
    if not allp:
        return ""
    xy = np.concatenate(allp)
    xs, ys = list(xy[:, 0]), list(xy[:, 1])
    if rect:
        xs += [rect[0], rect[1]]
        ys += [rect[2], rect[3]]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = max(max(xs) - min(xs), max(ys) - min(ys), 1e-3) * 0.55
    # Equal scale on both axes: the plot area is wider than tall, so widen x.
    aspect = (W - PAD_L - PAD_R) / (H - PAD_T - PAD_B)
    f = Frame(cx - half * aspect, cx + half * aspect, cy - half, cy + half)
    parts = f.axes(xlabel, ylabel)
    if rect:
        parts.append(
            f'<rect x="{f.x(rect[0]):.1f}" y="{f.y(rect[3]):.1f}" '
            f'width="{f.x(rect[1]) - f.x(rect[0]):.1f}" '
            f'height="{f.y(rect[2]) - f.y(rect[3]):.1f}" fill="#2a9d55" '
            'fill-opacity="0.06" stroke="#2a9d55" stroke-dasharray="5 3">'
            f"<title>{esc(rect_label)}</title></rect>"
        )
    n = len(pts)
    drawn: list[str] = []
    series: list[tuple[str, Swatch]] = []
    for j, (name, (p, succ)) in enumerate(pts.items()):
        if not p.size:
            continue
        color, solid, r = PALETTE[j % len(PALETTE)], j == n - 1, 3.5 + 3.0 * (n - 1 - j)
        for i, (x, y) in enumerate(p):
            kind = outcome(succ[i] if i < len(succ) else None)
            drawn.append(kind)
            s = succ[i] if i < len(succ) else None
            frac = (
                f", success {fmt(float(s))}"
                if isinstance(s, (int, float)) and kind == "mixed"
                else ""
            )
            tip = f"<title>{esc(name)} ({x:.3f}, {y:.3f}): {OUTCOMES[kind]}{frac}</title>"
            parts.append(
                marker(
                    kind,
                    f.x(x),
                    f.y(y),
                    r,
                    color,
                    solid,
                    tip,
                    f'class="mk mk-{kind}" data-series="{esc(name)}"',
                )
            )
        series.append((name, _mark("success", color, solid)))
    marks = series + [(OUTCOMES[k], _mark(k, "#555", True)) for k in OUTCOMES if k in drawn]
    if rect:
        marks.append((rect_label, box("#2a9d55")))
    parts += legend_marks(marks)
    return wrap(parts, title)
