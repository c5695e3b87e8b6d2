"""The picture every plot shares: its size and palette, the frame mapping data to pixels
with its axes, the wrapped title and caption, legends and marker lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from simgap.report.svg.scale import axis_range, ticks
from simgap.report.svg.text import esc, fit_text, text_width

W, H = 560, 240


PAD_L, PAD_R, PAD_T, PAD_B = 60, 16, 40, 44


PALETTE = ("#2a6fdb", "#e07b00", "#2a9d55", "#c23b3b", "#7a4bc2", "#555555")


class Frame:
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
            f'font-size="11" text-anchor="middle">{esc(xlabel)}</text>'
        )
        mid = (PAD_T + H - PAD_B) / 2
        out.append(
            f'<text class="ylabel" x="13" y="{mid}" font-size="11" '
            f'text-anchor="middle" transform="rotate(-90 13 {mid})">{esc(ylabel)}</text>'
        )
        return out


TITLE_SIZE, TITLE_LINE, SMALL_LINE = 12, 14, 12


TITLE_WIDTH = W - PAD_L - 8
"""Room for a title line [px]: from the plot's left edge to the picture's, less a margin."""


def wrap(parts: list[str], title: str, caption: Sequence[str] = ()) -> str:
    """The picture: its title on one line or, when it does not fit ``TITLE_WIDTH``, two
    (the plot moves down a line), the plot, then ``caption`` (what its marks mean) in
    small lines below it. The full title is the picture's ``<title>``."""
    lines = fit_text(title, TITLE_WIDTH, TITLE_SIZE)
    cap = [ln for c in caption for ln in fit_text(c, W - PAD_L - 8, 10, 3)]
    dy = TITLE_LINE * (len(lines) - 1)
    height = H + dy + (SMALL_LINE * len(cap) + 4 if cap else 0)
    head = "".join(
        f'<text class="ptitle" x="{PAD_L}" y="{16 + TITLE_LINE * i}" '
        f'font-size="{TITLE_SIZE}" font-weight="600">{esc(ln)}</text>'
        for i, ln in enumerate(lines)
    )
    body = "".join(parts)
    if dy:
        body = f'<g transform="translate(0 {dy})">{body}</g>'
    foot = "".join(
        f'<text class="caption" x="{PAD_L}" y="{H + dy + SMALL_LINE * i + 6}" '
        f'font-size="10" fill="#444">{esc(ln)}</text>'
        for i, ln in enumerate(cap)
    )
    return (
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{W}" '
        f'height="{height}" viewBox="0 0 {W} {height}" role="img" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>{head}{body}{foot}</svg>'
    )


Swatch = Callable[[float, float], str]
"""Draws a legend entry's mark centred at (x, y)."""


def box(color: str) -> Swatch:
    return lambda x, y: (
        f'<rect x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" fill="{color}"/>'
    )


def legend(names: Sequence[str], colors: Sequence[str]) -> list[str]:
    """A legend of coloured boxes (``legend_marks``)."""
    return legend_marks([(n, box(c)) for n, c in zip(names, colors, strict=True)])


def legend_marks(entries: Sequence[tuple[str, Swatch]]) -> list[str]:
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
                f'y="{y + 4:.0f}" font-size="10">{esc(name)}</text></g>'
            )
            x += width
    return out


def vline(f: Frame, x: float, label: str, color: str, row: int) -> str:
    right = f.x(x) > PAD_L + 0.6 * (W - PAD_L - PAD_R)  # label on the left of the line
    tx, anchor = (f.x(x) - 4, "end") if right else (f.x(x) + 4, "start")
    return (
        f'<line x1="{f.x(x):.1f}" y1="{PAD_T}" x2="{f.x(x):.1f}" y2="{H - PAD_B}" '
        f'stroke="{color}" stroke-width="2" stroke-dasharray="5 3"/>'
        f'<text x="{tx:.1f}" y="{PAD_T + 12 + 12 * row}" font-size="10" '
        f'text-anchor="{anchor}" fill="{color}" paint-order="stroke" stroke="#fff" '
        f'stroke-width="3">{esc(label)}</text>'
    )


def finite(values: npt.ArrayLike) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v)]
