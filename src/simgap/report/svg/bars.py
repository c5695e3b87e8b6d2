"""Bar charts: grouped bars (with +-half-width whiskers where given) and stacked bars."""

from __future__ import annotations

import math
from collections.abc import Sequence

from simgap.report.svg.frame import PAD_B, PAD_L, PAD_R, PALETTE, Frame, H, W, legend, wrap
from simgap.report.svg.scale import fmt
from simgap.report.svg.text import esc


def bars(
    labels: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    hline: tuple[float, str] | None = None,
    errors: dict[str, Sequence[float]] | None = None,
) -> str:
    """Grouped bars: one group per label, one bar per series; ``errors`` (same keys) draws
    +-half-width whiskers. Empty when every value is zero or missing."""
    vals = [float(x) for s in series.values() for x in s]
    if not labels or not any(math.isfinite(x) and x != 0 for x in vals):
        return ""
    n, k = len(labels), max(1, len(series))
    tops = [
        x + float((errors or {}).get(name, [0.0] * n)[i] or 0.0)
        for name, s in series.items()
        for i, x in enumerate(s)
        if math.isfinite(float(x))
    ]
    lo = min(0.0, *[float(x) for x in vals if math.isfinite(x)])
    top = max(tops + ([hline[0]] if hline and math.isfinite(hline[0]) else []) + [0.0])
    f = Frame(0, n, lo * 1.15, top * 1.15 if top > 0 else 1.0)
    parts = f.axes(xlabel, ylabel, xticks=False)
    gw = (W - PAD_L - PAD_R) / n
    colors = [PALETTE[j % len(PALETTE)] for j in range(k)]
    small = 10 if n <= 8 else 8
    for i, lab in enumerate(labels):
        for j, (name, s) in enumerate(series.items()):
            v = float(s[i])
            if not math.isfinite(v):
                continue
            x0 = PAD_L + i * gw + 0.1 * gw + j * 0.8 * gw / k
            y0, y1 = sorted((f.y(v), f.y(0)))
            parts.append(
                f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{0.8 * gw / k - 1:.1f}" '
                f'height="{y1 - y0:.1f}" fill="{colors[j]}">'
                f"<title>{esc(name)} {esc(lab)}: {fmt(v)}</title></rect>"
            )
            e = float((errors or {}).get(name, [math.nan] * n)[i] or math.nan)
            if math.isfinite(e) and e > 0:
                cx = x0 + 0.4 * gw / k
                parts.append(
                    f'<line x1="{cx:.1f}" y1="{f.y(v - e):.1f}" x2="{cx:.1f}" '
                    f'y2="{f.y(v + e):.1f}" stroke="#111"/>'
                )
        parts.append(
            f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
            f'font-size="{small}" text-anchor="middle">{esc(lab)}</text>'
        )
    line = bool(hline and math.isfinite(hline[0]))
    # The reference line is named in the legend, never written over the bars.
    parts += legend(
        list(series) + ([hline[1]] if hline and line else []),
        colors + ([PALETTE[3]] if line else []),
    )
    if hline and line:
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-width="1.5" '
            f'stroke-dasharray="5 3"><title>{esc(hline[1])}</title></line>'
        )
    return wrap(parts, title)


def stacked_bars(
    labels: Sequence[str],
    stacks: dict[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    hline: tuple[float, str] | None = None,
) -> str:
    """One bar per label, stacked by the keys of ``stacks`` (e.g. stages)."""
    if not labels or not any(math.isfinite(float(v)) and v > 0 for s in stacks.values() for v in s):
        return ""
    totals = [
        sum(float(s[i]) for s in stacks.values() if math.isfinite(float(s[i])))
        for i in range(len(labels))
    ]
    top = max(totals + ([hline[0]] if hline else []))
    f = Frame(0, len(labels), 0, top * 1.15)
    parts = f.axes(xlabel, ylabel, xticks=False)
    gw = (W - PAD_L - PAD_R) / len(labels)
    colors = [PALETTE[j % len(PALETTE)] for j in range(len(stacks))]
    for i, lab in enumerate(labels):
        base = 0.0
        for j, (name, s) in enumerate(stacks.items()):
            v = float(s[i])
            if not (math.isfinite(v) and v > 0):
                continue
            parts.append(
                f'<rect x="{PAD_L + i * gw + 0.25 * gw:.1f}" y="{f.y(base + v):.1f}" '
                f'width="{0.5 * gw:.1f}" height="{f.y(base) - f.y(base + v):.1f}" '
                f'fill="{colors[j]}" stroke="#fff"><title>{esc(lab)} '
                f"{esc(name)}: {fmt(v)}</title></rect>"
            )
            base += v
        parts.append(
            f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
            f'font-size="10" text-anchor="middle">{esc(lab)} ({fmt(base)})</text>'
        )
    parts += legend(list(stacks), colors)
    if hline and math.isfinite(hline[0]):
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-width="2" '
            f'stroke-dasharray="5 3"/><text x="{PAD_L + 4}" '
            f'y="{f.y(hline[0]) - 4:.1f}" font-size="10" fill="{PALETTE[3]}">'
            f"{esc(hline[1])}</text>"
        )
    return wrap(parts, title)
