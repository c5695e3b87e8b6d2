"""Report plots of the appearance branch: the real frame, the render at the same joint angles
and their difference, at the policy's resolution and upscaled nearest-neighbour (pixels stay
pixels), with the region gains (real / rendered brightness per region) beside them; and the
jaws' brightness ratio frame by frame."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np

from simgap.figures.appearance import ExposureDetails, ExposureFigures, Region
from simgap.finding import details_of, figures_of
from simgap.report.svg.lines import lines
from simgap.report.svg.png import png_img
from simgap.report.svg.scale import fmt


def _level(rgb: Any) -> float | None:
    """Mean of a colour given as numbers, or None (missing, not numbers, not finite)."""
    if not isinstance(rgb, (list, tuple)) or not rgb:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rgb):
        return None
    level = float(np.mean(rgb))
    return level if np.isfinite(level) else None


def region_table(regions: Mapping[str, Region]) -> str:
    """Real / rendered mean brightness per region, as a small table (empty without data).

    A region with no pixels (its colours None) is a row that says "not measured"."""
    rows = []
    for name, r in regions.items():
        real, sim = _level(r.real_rgb), _level(r.sim_rgb)
        cell = f"<td>{html.escape(str(name))}</td>"
        if real is None or sim is None:
            rows.append(
                f'<tr>{cell}<td colspan="3" class="muted">not measured (no '
                f"pure pixel of this region)</td><td>{r.pixels}</td></tr>"
            )
            continue
        gain = fmt(real / sim) if sim > 0 else "-"
        rows.append(
            f"<tr>{cell}<td>{fmt(real)}</td>"
            f"<td>{fmt(sim)}</td><td>{gain}</td><td>{r.pixels}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<table class="small"><tr><th>region</th><th>real level</th><th>render level</th>'
        "<th>gain (real/render)</th><th>pixels</th></tr>" + "".join(rows) + "</table>"
    )


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one appearance finding."""
    out: list[str] = []
    details = details_of(finding, ExposureDetails)
    images = details.images
    if images is not None:
        cells = []
        for key, label in (
            ("real", "real frame"),
            ("sim", "render, same joint angles"),
            ("diff", "difference (grey = equal)"),
        ):
            pixels = getattr(images, key)
            if pixels is None:
                continue
            img = np.asarray(pixels, dtype=np.uint8)
            scale = max(1, 160 // max(1, img.shape[0]))
            cells.append(
                f'<figure style="display:inline-block;margin:2px">'
                f"{png_img(img, scale=scale, title=label)}"
                f'<figcaption class="small">{html.escape(label)}</figcaption>'
                "</figure>"
            )
        label = images.pose_label or ""
        shape = np.asarray(images.real if images.real is not None else [[0]]).shape
        cap = (
            f"Frame {images.frame} ({html.escape(str(images.recording))}"
            f"{', ' + html.escape(label) if label else ''}) at the policy resolution "
            f"{shape[1] if len(shape) > 1 else '?'} x {shape[0]} px, upscaled without "
            "smoothing"
        )
        table = region_table(figures_of(finding, ExposureFigures).regions)
        out.append(f'<div><p class="small"><strong>{cap}</strong></p>{"".join(cells)}{table}</div>')
    gains = details.jaw_gain_per_frame
    if gains:
        g = np.array(gains, dtype=float)
        if np.isfinite(g).any():
            out.append(
                lines(
                    np.arange(1, g.size + 1),
                    {"jaws real/render": g, "match (1)": np.ones(g.size)},
                    xlabel="compared frame",
                    ylabel="brightness ratio",
                    title="Jaw brightness, real / render, per frame",
                )
            )
    return out
