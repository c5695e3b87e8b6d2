"""Small inline SVG plots for the report: no JavaScript, no network, no plotting library.

Every function returns an ``<svg class="plot">`` string sized in CSS pixels, with a title
(``<title>`` and a visible heading), an x-axis label (``class="xlabel"``) and a y-axis label
(``class="ylabel"``), or the empty string when there is nothing to draw: a plot of no data, or
of nothing but zeros, is never drawn. Inputs are plain arrays.

A plot says only what it draws: a title too long for the width wraps to a second line
(``fit_text``), an axis never spreads values that are equal to their precision across its
span (``axis_range``), a legend names each mark drawn and no other, and a caption under the
plot says what its bars and hollow points mean where it has them.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

W, H = 560, 240
PAD_L, PAD_R, PAD_T, PAD_B = 60, 16, 40, 44
PALETTE = ("#2a6fdb", "#e07b00", "#2a9d55", "#c23b3b", "#7a4bc2", "#555555")


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


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


_NARROW = frozenset("'ijlIJ|/\\ ,.:;!()[]-ftr")
_WIDE = frozenset("mwMW@%")


def text_width(text: str, size: float) -> float:
    """An upper estimate of the width [px] of ``text`` at font size ``size`` [px]: the
    advances of DejaVu Sans Bold (the widest of the usual sans fallbacks, what headless
    Chromium on Linux draws) by class of character, rounded up."""
    em = 0.0
    for c in text:
        if c in _NARROW:
            em += 0.5
        elif c in _WIDE:
            em += 1.12
        elif c.isupper() or c in "#+<=>^~&$":
            em += 0.88
        else:
            em += 0.73
    return em * size


def fit_text(text: str, width: float, size: float, max_lines: int = 2) -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` [px] (``text_width``),
    at most ``max_lines`` of them; what does not fit is cut with an ellipsis."""
    out: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if text_width(trial, size) <= width or not line:
            line = trial
        else:
            out.append(line)
            line = word
    out.append(line)
    if len(out) > max_lines:
        out = out[: max_lines - 1] + [" ".join(out[max_lines - 1 :])]
    last = out[-1]
    if text_width(last, size) > width:
        while last and text_width(last + "…", size) > width:
            last = last[:-1]
        out[-1] = last.rstrip() + "…"
    return [ln for ln in out if ln]


class _Frame:
    def __init__(self, xlo: float, xhi: float, ylo: float, yhi: float) -> None:
        xlo, xhi = axis_range(xlo, xhi)
        ylo, yhi = axis_range(ylo, yhi)
        self.xlo, self.xhi, self.ylo, self.yhi = xlo, xhi, ylo, yhi

    def x(self, v: float) -> float:
        return PAD_L + (v - self.xlo) / (self.xhi - self.xlo) * (W - PAD_L - PAD_R)

    def y(self, v: float) -> float:
        return H - PAD_B - (v - self.ylo) / (self.yhi - self.ylo) * (H - PAD_T - PAD_B)

    def axes(self, xlabel: str, ylabel: str, *, xticks: bool = True) -> list[str]:
        out = [
            f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" '
            'stroke="#333"/>',
            f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#333"/>',
        ]
        if xticks:
            for t, label in ticks(self.xlo, self.xhi):
                # a label centred on the last tick would pass the picture's edge: it ends there
                end = self.x(t) + 0.45 * text_width(label, 10) > W - 1
                out.append(
                    f'<text x="{self.x(t):.1f}" y="{H - PAD_B + 14}" font-size="10" '
                    f'text-anchor="{"end" if end else "middle"}">{label}</text>'
                )
        for t, label in ticks(self.ylo, self.yhi, 4):
            out.append(
                f'<line x1="{PAD_L - 3}" y1="{self.y(t):.1f}" x2="{W - PAD_R}" '
                f'y2="{self.y(t):.1f}" stroke="#eee"/>'
                f'<text x="{PAD_L - 5}" y="{self.y(t) + 3:.1f}" font-size="10" '
                f'text-anchor="end">{label}</text>'
            )
        out.append(
            f'<text class="xlabel" x="{(PAD_L + W - PAD_R) / 2}" y="{H - 8}" '
            f'font-size="11" text-anchor="middle">{_esc(xlabel)}</text>'
        )
        mid = (PAD_T + H - PAD_B) / 2
        out.append(
            f'<text class="ylabel" x="13" y="{mid}" font-size="11" '
            f'text-anchor="middle" transform="rotate(-90 13 {mid})">{_esc(ylabel)}</text>'
        )
        return out


TITLE_SIZE, TITLE_LINE, SMALL_LINE = 12, 14, 12
TITLE_WIDTH = W - PAD_L - 8
"""Room for a title line [px]: from the plot's left edge to the picture's, less a margin."""


def _wrap(parts: list[str], title: str, caption: Sequence[str] = ()) -> str:
    """The picture: its title on one line or, when it does not fit ``TITLE_WIDTH``, two
    (the plot moves down a line), the plot, then ``caption`` (what its marks mean) in
    small lines below it. The full title is the picture's ``<title>``."""
    lines = fit_text(title, TITLE_WIDTH, TITLE_SIZE)
    cap = [ln for c in caption for ln in fit_text(c, W - PAD_L - 8, 10, 3)]
    dy = TITLE_LINE * (len(lines) - 1)
    height = H + dy + (SMALL_LINE * len(cap) + 4 if cap else 0)
    head = "".join(
        f'<text class="ptitle" x="{PAD_L}" y="{16 + TITLE_LINE * i}" '
        f'font-size="{TITLE_SIZE}" font-weight="600">{_esc(ln)}</text>'
        for i, ln in enumerate(lines)
    )
    body = "".join(parts)
    if dy:
        body = f'<g transform="translate(0 {dy})">{body}</g>'
    foot = "".join(
        f'<text class="caption" x="{PAD_L}" y="{H + dy + SMALL_LINE * i + 6}" '
        f'font-size="10" fill="#444">{_esc(ln)}</text>'
        for i, ln in enumerate(cap)
    )
    return (
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{W}" '
        f'height="{height}" viewBox="0 0 {W} {height}" role="img" '
        f'aria-label="{_esc(title)}"><title>{_esc(title)}</title>{head}{body}{foot}</svg>'
    )


Swatch = Callable[[float, float], str]
"""Draws a legend entry's mark centred at (x, y)."""


def _box(color: str) -> Swatch:
    return lambda x, y: (
        f'<rect x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" fill="{color}"/>'
    )


def _legend(names: Sequence[str], colors: Sequence[str]) -> list[str]:
    """A legend of coloured boxes (``_legend_marks``)."""
    return _legend_marks([(n, _box(c)) for n, c in zip(names, colors, strict=True)])


def _legend_marks(entries: Sequence[tuple[str, Swatch]]) -> list[str]:
    """A legend above the plot area, right-aligned: one entry per mark drawn, each its own
    mark and its name; a row that would pass the plot's left edge continues on a row below."""
    rows: list[list[tuple[float, str, Swatch]]] = [[]]
    room = W - PAD_L - PAD_R
    used = 0.0
    for name, mark in entries:
        width = 16 + text_width(name, 10) * 0.9  # regular weight: ~0.9 of the bold advances
        if used + width > room and rows[-1]:
            rows.append([])
            used = 0.0
        rows[-1].append((width, name, mark))
        used += width
    out = []
    for r, row in enumerate(rows):
        x = W - PAD_R - sum(w for w, _, _ in row)
        y = PAD_T - 8 + 12 * r
        for width, name, mark in row:
            out.append(
                f'<g class="legend">{mark(x + 5, y)}<text x="{x + 12:.0f}" '
                f'y="{y + 4:.0f}" font-size="10">{_esc(name)}</text></g>'
            )
            x += width
    return out


def _vline(f: _Frame, x: float, label: str, color: str, row: int) -> str:
    right = f.x(x) > PAD_L + 0.6 * (W - PAD_L - PAD_R)  # label on the left of the line
    tx, anchor = (f.x(x) - 4, "end") if right else (f.x(x) + 4, "start")
    return (
        f'<line x1="{f.x(x):.1f}" y1="{PAD_T}" x2="{f.x(x):.1f}" y2="{H - PAD_B}" '
        f'stroke="{color}" stroke-width="2" stroke-dasharray="5 3"/>'
        f'<text x="{tx:.1f}" y="{PAD_T + 12 + 12 * row}" font-size="10" '
        f'text-anchor="{anchor}" fill="{color}" paint-order="stroke" stroke="#fff" '
        f'stroke-width="3">{_esc(label)}</text>'
    )


def _finite(values: npt.ArrayLike) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v)]


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
    v = _finite(values)
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
    f = _Frame(lo, hi, 0, float(counts.max()) * 1.15)
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
            parts.append(_vline(f, x, label, PALETTE[3 + i % 3], i))
    return _wrap(parts, title)


def ecdf(
    values: npt.ArrayLike, *, xlabel: str, title: str, vlines: Sequence[tuple[float, str]] = ()
) -> str:
    """The empirical cumulative distribution (fraction of samples at or below x)."""
    v = np.sort(_finite(values))
    if v.size == 0:
        return ""
    xs = [x for x, _ in vlines if math.isfinite(x)]
    lo, hi = float(min(v[0], *xs)), float(max(v[-1], *xs))
    pad = 0.03 * (hi - lo or 1.0)
    f = _Frame(lo - pad, hi + pad, 0.0, 1.0)
    parts = f.axes(xlabel, "fraction of ticks at or below")
    p = np.arange(1, v.size + 1) / v.size
    step = max(1, v.size // 1500)
    pts = " ".join(f"{f.x(a):.1f},{f.y(b):.1f}" for a, b in zip(v[::step], p[::step], strict=True))
    parts.append(f'<polyline points="{pts}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.6"/>')
    for i, (x, label) in enumerate(vlines):
        if math.isfinite(x):
            frac = float(np.mean(v <= x))
            parts.append(_vline(f, x, f"{label} ({frac:.0%} at or below)", PALETTE[3 + i % 3], i))
    return _wrap(parts, title)


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
    f = _Frame(0, n, lo * 1.15, top * 1.15 if top > 0 else 1.0)
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
                f"<title>{_esc(name)} {_esc(lab)}: {fmt(v)}</title></rect>"
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
            f'font-size="{small}" text-anchor="middle">{_esc(lab)}</text>'
        )
    line = bool(hline and math.isfinite(hline[0]))
    # The reference line is named in the legend, never written over the bars.
    parts += _legend(
        list(series) + ([hline[1]] if hline and line else []),
        colors + ([PALETTE[3]] if line else []),
    )
    if hline and line:
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-width="1.5" '
            f'stroke-dasharray="5 3"><title>{_esc(hline[1])}</title></line>'
        )
    return _wrap(parts, title)


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
    f = _Frame(0, len(labels), 0, top * 1.15)
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
                f'fill="{colors[j]}" stroke="#fff"><title>{_esc(lab)} '
                f"{_esc(name)}: {fmt(v)}</title></rect>"
            )
            base += v
        parts.append(
            f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
            f'font-size="10" text-anchor="middle">{_esc(lab)} ({fmt(base)})</text>'
        )
    parts += _legend(list(stacks), colors)
    if hline and math.isfinite(hline[0]):
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-width="2" '
            f'stroke-dasharray="5 3"/><text x="{PAD_L + 4}" '
            f'y="{f.y(hline[0]) - 4:.1f}" font-size="10" fill="{PALETTE[3]}">'
            f"{_esc(hline[1])}</text>"
        )
    return _wrap(parts, title)


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
    f = _Frame(0, len(labels), lo, hi + 0.1 * (hi - lo or 1.0))
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
            f'stroke="{PALETTE[0]}" stroke-width="1.5"><title>{_esc(labels[i])}: '
            f"{fmt(v)}{iv}{_esc(why)}</title></circle>"
        )
    for i, lab in enumerate(labels):
        parts.append(
            f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
            f'font-size="10" text-anchor="middle">{_esc(lab)}</text>'
        )
    if hline:
        parts.append(
            f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
            f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-dasharray="5 3"/>'
            f'<text x="{W - PAD_R - 2}" y="{f.y(hline[0]) - 4:.1f}" font-size="10" '
            f'text-anchor="end" fill="{PALETTE[3]}">{_esc(hline[1])}</text>'
        )
    caption = (["Bars: 95% intervals."] if bars_drawn else []) + (
        [f"Hollow: {hollow}."] if hollow_drawn else []
    )
    return _wrap(parts, title, [" ".join(caption)] if caption else [])


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
    f = _Frame(float(xv.min()), float(xv.max()), ylo, yhi + 0.05 * (yhi - ylo))
    parts = f.axes(xlabel, ylabel)
    if band:
        parts.append(
            f'<rect x="{PAD_L}" y="{f.y(band[0]):.1f}" width="{W - PAD_L - PAD_R}" '
            f'height="{f.y(-band[0]) - f.y(band[0]):.1f}" fill="#c23b3b" '
            f'fill-opacity="0.12"><title>{_esc(band[1])}</title></rect>'
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
    parts += _legend(names, colors + (["#e8b4b4"] if band else []))
    return _wrap(parts, title)


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
    f = _Frame(cx - half * aspect, cx + half * aspect, cy - half, cy + half)
    parts = f.axes(xlabel, ylabel)
    if rect:
        parts.append(
            f'<rect x="{f.x(rect[0]):.1f}" y="{f.y(rect[3]):.1f}" '
            f'width="{f.x(rect[1]) - f.x(rect[0]):.1f}" '
            f'height="{f.y(rect[2]) - f.y(rect[3]):.1f}" fill="#2a9d55" '
            'fill-opacity="0.06" stroke="#2a9d55" stroke-dasharray="5 3">'
            f"<title>{_esc(rect_label)}</title></rect>"
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
            tip = f"<title>{_esc(name)} ({x:.3f}, {y:.3f}): {OUTCOMES[kind]}{frac}</title>"
            parts.append(
                marker(
                    kind,
                    f.x(x),
                    f.y(y),
                    r,
                    color,
                    solid,
                    tip,
                    f'class="mk mk-{kind}" data-series="{_esc(name)}"',
                )
            )
        series.append((name, _mark("success", color, solid)))
    marks = series + [(OUTCOMES[k], _mark(k, "#555", True)) for k in OUTCOMES if k in drawn]
    if rect:
        marks.append((rect_label, _box("#2a9d55")))
    parts += _legend_marks(marks)
    return _wrap(parts, title)


def png_img(image: np.ndarray, *, scale: int = 8, title: str = "") -> str:
    """An RGB uint8 image as an inline ``<img>``, upscaled nearest-neighbour by ``scale``."""
    from PIL import Image

    img = np.asarray(image)
    if img.dtype != np.uint8:
        img = np.clip(img, 0, 255).astype(np.uint8)
    pil = Image.fromarray(img)
    if scale > 1:
        pil = pil.resize((pil.width * scale, pil.height * scale), Image.Resampling.NEAREST)
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" alt="{_esc(title)}" '
        f'title="{_esc(title)}" style="image-rendering:pixelated"/>'
    )
