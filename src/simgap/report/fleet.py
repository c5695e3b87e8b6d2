"""The fleet report: one self-contained page (no script, no network) from ``fleet.json``.

It shows the verdict matrix (arms by branch), the outliers in words, and per joint a strip
plot for each identified parameter: every arm's value with its 95 % interval, the fleet's
centre, its 95 % band for a new unit and the flag threshold, the flagged arms in red and
named.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from simgap.outputs import atomic_write_text
from simgap.report.svg.scale import axis_range, ticks

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("simgap.report", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
)

W, ROW, PAD_L, PAD_R, PAD_T, PAD_B = 560, 18, 110, 20, 24, 42
RED, BLUE, BAND, GREY = "#c23b3b", "#2a6fdb", "#dbe7fb", "#555555"


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _finite(*vals: Any) -> list[float]:
    return [float(v) for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]


def strip_plot(p: Mapping[str, Any]) -> str:
    """One parameter on one joint: a row per arm (value and 95 % interval), the fleet band.

    ``p`` is one entry of ``summary.params`` in ``fleet.json``.
    """
    arms = [a for a in p["arms"] if a.get("value") is not None]
    title = f"{p['joint']} {p['param']} [{p['unit']}] across {len(p['arms'])} arms"
    if not arms:
        return f"<p>{_e(title)}: no arm identified it.</p>"
    flagged = {o["arm"] for o in p.get("outliers") or []}
    band, flag = p.get("band"), p.get("flag_band")
    xs = _finite(
        *[v for a in arms for v in (a["value"], a.get("lo"), a.get("hi"))],
        *(band or []),
        *(flag or []),
    )
    lo, hi = axis_range(min(xs), max(xs))  # equal values sit together, mid-axis
    pad = 0.05 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    height = PAD_T + PAD_B + ROW * len(arms)

    def x(v: float) -> float:
        return PAD_L + (v - lo) / (hi - lo) * (W - PAD_L - PAD_R)

    bottom = height - PAD_B
    parts = []
    if band and all(isinstance(b, (int, float)) for b in band):
        b0, b1 = max(band[0], lo), min(band[1], hi)
        parts.append(
            f'<rect x="{x(b0):.1f}" y="{PAD_T}" width="{max(0.0, x(b1) - x(b0)):.1f}" '
            f'height="{bottom - PAD_T}" fill="{BAND}"/>'
        )
    if flag and all(isinstance(b, (int, float)) for b in flag):
        for f in flag:
            if lo <= f <= hi:
                parts.append(
                    f'<line x1="{x(f):.1f}" y1="{PAD_T}" x2="{x(f):.1f}" y2="{bottom}" '
                    f'stroke="{RED}" stroke-dasharray="4 3"/>'
                )
    if isinstance(p.get("centre"), (int, float)):
        c = x(p["centre"])
        parts.append(
            f'<line x1="{c:.1f}" y1="{PAD_T}" x2="{c:.1f}" y2="{bottom}" '
            f'stroke="{BLUE}" stroke-width="1.5"/>'
        )
    for i, a in enumerate(arms):
        y = PAD_T + ROW * (i + 0.5)
        color = RED if a["arm"] in flagged else (GREY if a.get("status") != "ok" else BLUE)
        if a.get("lo") is not None and a.get("hi") is not None:
            parts.append(
                f'<line x1="{x(a["lo"]):.1f}" y1="{y:.1f}" x2="{x(a["hi"]):.1f}" '
                f'y2="{y:.1f}" stroke="{color}" stroke-width="2"/>'
            )
        parts.append(f'<circle cx="{x(a["value"]):.1f}" cy="{y:.1f}" r="3.5" fill="{color}"/>')
        label = a["arm"] + (" (outlier)" if a["arm"] in flagged else "")
        weight = ' font-weight="bold"' if a["arm"] in flagged else ""
        parts.append(
            f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="{color}"{weight}>{_e(label)}</text>'
        )
    parts.append(f'<line x1="{PAD_L}" y1="{bottom}" x2="{W - PAD_R}" y2="{bottom}" stroke="#333"/>')
    for t, label in ticks(lo, hi):
        parts.append(
            f'<text x="{x(t):.1f}" y="{bottom + 14}" font-size="10" '
            f'text-anchor="middle">{label}</text>'
        )
    parts.append(
        f'<text x="{(PAD_L + W - PAD_R) / 2}" y="{height - 8}" font-size="11" '
        f'text-anchor="middle">{_e(p["param"])} [{_e(p["unit"])}]</text>'
    )
    parts.append(
        f'<text x="{PAD_L}" y="14" font-size="10" fill="{GREY}">shaded: fleet 95% '
        "band for a new unit; blue line: fleet centre; red dashes: flag threshold"
        "</text>"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
        f'viewBox="0 0 {W} {height}" role="img" aria-label="{_e(title)}">'
        f"<title>{_e(title)}</title>" + "".join(parts) + "</svg>"
    )


def _spread_line(p: Mapping[str, Any]) -> str:
    if p.get("tau") is None:
        return str(p.get("note", ""))
    rel = p.get("scale") == "log"
    ti = p.get("tau_interval") or [None, None]
    hi = "inf" if ti[1] is None else f"{ti[1]:.3g}"
    return (
        f"centre {p['centre']:.4g} {p['unit']} (95% {p['centre_interval'][0]:.4g} to "
        f"{p['centre_interval'][1]:.4g}); unit-to-unit spread tau {p['tau']:.3g} "
        f"(95% {ti[0]:.3g} to {hi}{', relative' if rel else ' ' + p['unit']}), "
        f"I2 {100 * p['i2']:.0f}%, across {p['n']} arms"
    )


def render_fleet_report(doc: Mapping[str, Any], *, title: str = "simgap fleet report") -> str:
    """The page for a ``fleet.json`` document."""
    s = doc["summary"]
    joints: dict[str, list[dict[str, Any]]] = {}
    for p in s["params"]:
        joints.setdefault(p["joint"], []).append(
            {
                "label": f"{p['branch']} {p['param']}",
                "plot": strip_plot(p),
                "spread": _spread_line(p),
            }
        )
    arms: Sequence[Mapping[str, Any]] = doc.get("arms") or []
    return _ENV.get_template("fleet.html").render(
        title=title,
        summary=s,
        arms=arms,
        joints=joints,
        backend=doc.get("backend", ""),
        wall_s=doc.get("wall_s"),
    )


def write_fleet_report(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write the fleet page atomically."""
    return atomic_write_text(path, render_fleet_report(doc))
