"""Text in a plot: escaped for SVG, its width estimated, and fitted to lines."""

from __future__ import annotations

import html


def esc(s: object) -> str:
    return html.escape(str(s), quote=True)


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
