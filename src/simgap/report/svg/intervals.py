"""Points with their intervals, one row per label (a hollow point where there is no
interval)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from simgap.report.svg.frame import PAD_B, PAD_L, PAD_R, PALETTE, Frame, H, W, wrap
from simgap.report.svg.scale import fmt
from simgap.report.svg.text import esc


def intervals(
    labels: Sequence[str],
    values: Sequence[float],
    bounds: Sequence[tuple[float, float] | None],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    hline: tuple[float, str] | None = None,
    notes: Sequence[str | None] = (),
    hollow: str = "a value without an interval",
) -> str:
    """One point per label with its 95% interval as a bar. A point is hollow when it has no
    interval or a note (``notes[i]``: why its value does not stand on its own, e.g. a
    trade-off with another parameter), which is its tooltip. The caption says what the bars
    and, when one is drawn, the hollow points mean (``hollow``)."""
    pts = [(i, float(v)) for i, v in enumerate(values) if math.isfinite(float(v))]
    if not pts:
        return ""
    ys = [v for _, v in pts] + [
        float(b) for bb in bounds if bb for b in bb if math.isfinite(float(b))
    ]
    if hline:
        ys.append(hline[0])
    lo, hi = min(ys + [0.0]), max(ys)
    f = Frame(0, len(labels), lo, hi + 0.1 * (hi - lo or 1.0))
    parts = f.axes(xlabel, ylabel, xticks=False)
    gw = (W - PAD_L - PAD_R) / len(labels)
    bars_drawn = hollow_drawn = False
    for i, v in pts:
        cx = PAD_L + (i + 0.5) * gw
        bb = bounds[i] if i < len(bounds) else None
        note = notes[i] if i < len(notes) else None
        bar = bool(bb) and all(math.isfinite(float(b)) for b in bb or ())
        if bb and bar:
            bars_drawn = True
            parts.append(
                f'<line x1="{cx:.1f}" y1="{f.y(float(bb[0])):.1f}" x2="{cx:.1f}" '
                f'y2="{f.y(float(bb[1])):.1f}" stroke="{PALETTE[0]}" '
                'stroke-width="2"/>'
            )
        solid = bar and not note
        hollow_drawn = hollow_drawn or not solid
        why = f" ({note})" if note else "" if bar else f" ({hollow})"
        iv = f" [{fmt(float(bb[0]))}, {fmt(float(bb[1]))}]" if bb and bar else ""
        parts.append(
            f'<circle class="{"pt" if solid else "pt hollow"}" cx="{cx:.1f}" '
            f'cy="{f.y(v):.1f}" r="4" fill="{PALETTE[0] if solid else "#fff"}" '
            f'stroke="{PALETTE[0]}" stroke-width="1.5"><title>{esc(labels[i])}: '
            f"{fmt(v)}{iv}{esc(why)}</title></circle>"
        )
    for i, lab in enumerate(labels):
        parts.append(
            f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
            f'font-size="10" text-anchor="middle">{esc(lab)}</text>'
        )
    if hline:
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-dasharray="5 3"/>'
            f'<text x="{W - PAD_R - 2}" y="{f.y(hline[0]) - 4:.1f}" font-size="10" '
            f'text-anchor="end" fill="{PALETTE[3]}">{esc(hline[1])}</text>'
        )
    caption = (["Bars: 95% intervals."] if bars_drawn else []) + (
        [f"Hollow: {hollow}."] if hollow_drawn else []
    )
    return wrap(parts, title, [" ".join(caption)] if caption else [])
