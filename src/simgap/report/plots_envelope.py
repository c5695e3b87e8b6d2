"""Report plots of the training-envelope branch: one per check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simgap.report import svg


def speed_plot(details: Mapping[str, Any]) -> str:
    """Distributions of |joint velocity| (fastest joint per sample), real vs simulated."""
    series = {"real": details["real_abs_qd_deg_s"]}
    if details.get("sim_abs_qd_deg_s") is not None:
        series["simulated"] = details["sim_abs_qd_deg_s"]
    return svg.lines(details["percentiles"], series, xlabel="percentile",
                     ylabel="|qd| [deg/s]", title="Joint speed distribution, real vs simulated")


def placements_plot(details: Mapping[str, Any]) -> str:
    """Placements (x, y) against the training area (dashed rectangle)."""
    (x0, x1), (y0, y1) = details["training_x_m"], details["training_y_m"]
    pts: dict[str, np.ndarray] = {k: np.asarray(v["xy_m"], dtype=float).reshape(-1, 2)
                                  for k, v in details.items()
                                  if isinstance(v, Mapping) and "xy_m" in v}
    allx = np.concatenate([[x0, x1]] + [p[:, 0] for p in pts.values()])
    ally = np.concatenate([[y0, y1]] + [p[:, 1] for p in pts.values()])
    pad = 0.02
    lox, hix, loy, hiy = allx.min() - pad, allx.max() + pad, ally.min() - pad, ally.max() + pad
    w, h, m = 360, 300, 40

    def sx(v: float) -> float:
        return m + (v - lox) / (hix - lox) * (w - 2 * m)

    def sy(v: float) -> float:
        return h - m - (v - loy) / (hiy - loy) * (h - 2 * m)

    parts = [f'<rect x="{sx(x0):.1f}" y="{sy(y1):.1f}" width="{sx(x1) - sx(x0):.1f}" '
             f'height="{sy(y0) - sy(y1):.1f}" fill="none" stroke="#333" '
             'stroke-dasharray="5 3"><title>training area</title></rect>',
             f'<text x="{m}" y="{h - 8}" font-size="11">x [m] {lox:.2f}..{hix:.2f}, '
             f'y [m] {loy:.2f}..{hiy:.2f}</text>']
    for j, (name, p) in enumerate(pts.items()):
        succ: Sequence[float | None] = details[name].get("success") or [None] * len(p)
        color = svg.PALETTE[j % len(svg.PALETTE)]
        for (x, y), s in zip(p, succ, strict=False):
            fill = color if s else "white"
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{fill}" '
                         f'stroke="{color}"><title>{name} ({x:.3f}, {y:.3f}) success '
                         f'{s}</title></circle>')
        parts.append(f'<text x="{w - m}" y="{m / 2 + 12 * j}" font-size="11" fill="{color}" '
                     f'text-anchor="end">{name} (filled = success)</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" role="img" aria-label="initial states">'
            '<title>Initial states against the training area</title>' + "".join(parts)
            + "</svg>")


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one envelope Finding, chosen by its check."""
    d = finding.get("details") or {}
    check = d.get("check")
    if check == "speed" and "percentiles" in d:
        return [speed_plot(d)]
    if check == "observation_noise" and "residuals_deg" in d:
        s = float(d["training_std_deg"])
        return [svg.histogram(d["residuals_deg"], xlabel="reading at rest minus its trend [deg]",
                              title="Real joint-reading noise at rest vs training's spread",
                              vlines=[(-s, "-1 sd (training)"), (s, "+1 sd (training)")])]
    if check == "control_rate" and "intervals_ms" in d:
        return [svg.histogram(d["intervals_ms"], xlabel="decision interval [ms]",
                              title="Real decision intervals vs training's",
                              vlines=[(float(d["training_dt_ms"]), "training")])]
    if check == "grasp_margin" and "squeeze_deg" in d:
        return [svg.histogram(d["squeeze_deg"], xlabel="measured opening - target [deg]",
                              title="Squeeze while holding", vlines=[(5.0, "5 deg")])]
    if check == "initial_states" and "training_x_m" in d:
        return [placements_plot(d)]
    return []
