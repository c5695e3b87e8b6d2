"""Small inline SVG plots for the report: no JavaScript, no network, no plotting library.

Every function returns an ``<svg>`` string sized in CSS pixels. Inputs are plain arrays.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

W, H = 560, 220
PAD_L, PAD_R, PAD_T, PAD_B = 56, 16, 18, 40
PALETTE = ("#2a6fdb", "#e07b00", "#2a9d55", "#c23b3b", "#7a4bc2", "#555555")


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not np.isfinite(lo) or not np.isfinite(hi) or hi <= lo:
        return [lo]
    step = (hi - lo) / n
    mag = 10 ** np.floor(np.log10(step))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= step), default=step)
    start = np.ceil(lo / step) * step
    return [float(v) for v in np.arange(start, hi + step * 1e-9, step)]


def _fmt(v: float) -> str:
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000 or a < 0.01:
        return f"{v:.2g}"
    return f"{v:.3g}"


class _Frame:
    def __init__(self, xlo: float, xhi: float, ylo: float, yhi: float) -> None:
        if xhi <= xlo:
            xhi = xlo + 1.0
        if yhi <= ylo:
            yhi = ylo + 1.0
        self.xlo, self.xhi, self.ylo, self.yhi = xlo, xhi, ylo, yhi

    def x(self, v: float) -> float:
        return PAD_L + (v - self.xlo) / (self.xhi - self.xlo) * (W - PAD_L - PAD_R)

    def y(self, v: float) -> float:
        return H - PAD_B - (v - self.ylo) / (self.yhi - self.ylo) * (H - PAD_T - PAD_B)

    def axes(self, xlabel: str, ylabel: str) -> list[str]:
        out = [f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" '
               'stroke="#333"/>',
               f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#333"/>']
        for t in _ticks(self.xlo, self.xhi):
            out.append(f'<text x="{self.x(t):.1f}" y="{H - PAD_B + 14}" font-size="10" '
                       f'text-anchor="middle">{_fmt(t)}</text>')
        for t in _ticks(self.ylo, self.yhi, 4):
            out.append(f'<text x="{PAD_L - 4}" y="{self.y(t) + 3:.1f}" font-size="10" '
                       f'text-anchor="end">{_fmt(t)}</text>')
        out.append(f'<text x="{(PAD_L + W - PAD_R) / 2}" y="{H - 6}" font-size="11" '
                   f'text-anchor="middle">{_esc(xlabel)}</text>')
        out.append(f'<text x="12" y="{(PAD_T + H - PAD_B) / 2}" font-size="11" '
                   f'text-anchor="middle" transform="rotate(-90 12 {(PAD_T + H - PAD_B) / 2})">'
                   f'{_esc(ylabel)}</text>')
        return out


def _wrap(parts: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}" role="img" aria-label="{_esc(title)}">'
            f'<title>{_esc(title)}</title>' + "".join(parts) + "</svg>")


def histogram(values: npt.ArrayLike, *, bins: int = 40, xlabel: str = "", title: str = "",
              vlines: Sequence[tuple[float, str]] = ()) -> str:
    """A histogram with optional labelled vertical lines (e.g. the control period)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return _wrap(['<text x="20" y="40">no data</text>'], title)
    lo = float(min(v.min(), *(x for x, _ in vlines))) if vlines else float(v.min())
    hi = float(max(v.max(), *(x for x, _ in vlines))) if vlines else float(v.max())
    # A span below 1e-9 relative (equal values up to rounding) is widened to one that bins.
    hi = max(hi, lo + 1e-9 * max(1.0, abs(lo)))
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    f = _Frame(lo, hi, 0, float(counts.max()) * 1.1)
    parts = f.axes(xlabel, "ticks")
    for c, a, b in zip(counts, edges[:-1], edges[1:], strict=True):
        if c:
            parts.append(f'<rect x="{f.x(a):.1f}" y="{f.y(c):.1f}" '
                         f'width="{max(0.5, f.x(b) - f.x(a) - 0.5):.1f}" '
                         f'height="{f.y(0) - f.y(c):.1f}" fill="{PALETTE[0]}"/>')
    for i, (x, label) in enumerate(vlines):
        color = PALETTE[3 + i % 3]
        parts.append(f'<line x1="{f.x(x):.1f}" y1="{PAD_T}" x2="{f.x(x):.1f}" y2="{H - PAD_B}" '
                     f'stroke="{color}" stroke-width="2" stroke-dasharray="5 3"/>')
        parts.append(f'<text x="{f.x(x) + 4:.1f}" y="{PAD_T + 12 + 12 * i}" font-size="11" '
                     f'fill="{color}">{_esc(label)}</text>')
    return _wrap(parts, title)


def bars(labels: Sequence[str], series: dict[str, Sequence[float]], *, ylabel: str = "",
         title: str = "", hline: tuple[float, str] | None = None) -> str:
    """Grouped bars: one group per label, one bar per series."""
    n, k = len(labels), max(1, len(series))
    allv = [float(x) for s in series.values() for x in s if np.isfinite(x)]
    top = max(allv + ([hline[0]] if hline else []) + [1e-12]) * 1.15
    f = _Frame(0, max(n, 1), 0, top)
    parts = f.axes("", ylabel)[:-2]  # no numeric x ticks: labels instead
    parts = [p for p in parts if 'text-anchor="middle">' not in p or "rotate" in p]
    gw = (W - PAD_L - PAD_R) / max(n, 1)
    for i, lab in enumerate(labels):
        for j, (name, vals) in enumerate(series.items()):
            v = float(vals[i])
            if not np.isfinite(v):
                continue
            x0 = PAD_L + i * gw + 0.1 * gw + j * 0.8 * gw / k
            parts.append(f'<rect x="{x0:.1f}" y="{f.y(v):.1f}" width="{0.8 * gw / k - 1:.1f}" '
                         f'height="{f.y(0) - f.y(v):.1f}" fill="{PALETTE[j % len(PALETTE)]}">'
                         f'<title>{_esc(name)} {_esc(lab)}: {_fmt(v)}</title></rect>')
        parts.append(f'<text x="{PAD_L + (i + 0.5) * gw:.1f}" y="{H - PAD_B + 14}" '
                     f'font-size="10" text-anchor="middle">{_esc(lab)}</text>')
    for j, name in enumerate(series):
        parts.append(f'<rect x="{W - PAD_R - 110}" y="{PAD_T + 14 * j}" width="10" height="10" '
                     f'fill="{PALETTE[j % len(PALETTE)]}"/><text x="{W - PAD_R - 96}" '
                     f'y="{PAD_T + 9 + 14 * j}" font-size="10">{_esc(name)}</text>')
    if hline:
        parts.append(f'<line x1="{PAD_L}" y1="{f.y(hline[0]):.1f}" x2="{W - PAD_R}" '
                     f'y2="{f.y(hline[0]):.1f}" stroke="{PALETTE[3]}" stroke-dasharray="5 3"/>'
                     f'<text x="{PAD_L + 4}" y="{f.y(hline[0]) - 4:.1f}" font-size="10" '
                     f'fill="{PALETTE[3]}">{_esc(hline[1])}</text>')
    return _wrap(parts, title)


def lines(x: npt.ArrayLike, series: dict[str, npt.ArrayLike], *, xlabel: str = "",
          ylabel: str = "", title: str = "", max_points: int = 1500) -> str:
    """Line plot of several series against one x axis (decimated to ``max_points``)."""
    xv = np.asarray(x, dtype=float)
    step = max(1, xv.size // max_points)
    xv = xv[::step]
    ys = {k: np.asarray(v, dtype=float)[::step] for k, v in series.items()}
    finite = [a[np.isfinite(a)] for a in ys.values()]
    ylo = min((float(a.min()) for a in finite if a.size), default=0.0)
    yhi = max((float(a.max()) for a in finite if a.size), default=1.0)
    if xv.size == 0:
        return _wrap(['<text x="20" y="40">no data</text>'], title)
    f = _Frame(float(xv.min()), float(xv.max()), ylo, yhi + 0.05 * (yhi - ylo + 1e-12))
    parts = f.axes(xlabel, ylabel)
    for j, (name, yv) in enumerate(ys.items()):
        pts = " ".join(f"{f.x(a):.1f},{f.y(b):.1f}" for a, b in zip(xv, yv, strict=False)
                       if np.isfinite(b))
        parts.append(f'<polyline points="{pts}" fill="none" '
                     f'stroke="{PALETTE[j % len(PALETTE)]}" stroke-width="1.3"/>')
        parts.append(f'<text x="{W - PAD_R - 4}" y="{PAD_T + 10 + 12 * j}" font-size="10" '
                     f'text-anchor="end" fill="{PALETTE[j % len(PALETTE)]}">{_esc(name)}</text>')
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
    return (f'<img src="data:image/png;base64,{data}" alt="{_esc(title)}" '
            f'title="{_esc(title)}" style="image-rendering:pixelated"/>')
