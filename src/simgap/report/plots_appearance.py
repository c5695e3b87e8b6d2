"""Report plots of the appearance branch: real, simulated and difference images side by side
at the policy resolution (upscaled nearest-neighbour so pixels stay pixels), and the jaws'
brightness ratio frame by frame."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np

from simgap.report import svg


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one appearance finding."""
    out: list[str] = []
    details = finding.get("details") or {}
    images = details.get("images")
    if images:
        cells = []
        for key, label in (("real", "real"), ("sim", "simulated"),
                           ("diff", "difference (grey = equal)")):
            img = np.asarray(images[key], dtype=np.uint8)
            scale = max(1, 128 // max(1, img.shape[0]))
            cells.append(f"<figure style=\"display:inline-block;margin:4px\">"
                         f"{svg.png_img(img, scale=scale, title=label)}"
                         f"<figcaption>{html.escape(label)}</figcaption></figure>")
        label = str(images.get("pose_label") or "")
        cap = (f"frame {images.get('frame')} ({html.escape(str(images.get('recording')))}"
               f"{', ' + html.escape(label) if label else ''}) at the policy resolution")
        out.append(f"<div><p>{cap}</p>{''.join(cells)}</div>")
    gains = details.get("jaw_gain_per_frame")
    if gains:
        g = np.array([np.nan if v is None else v for v in gains], dtype=float)
        if np.isfinite(g).any():
            out.append(svg.lines(np.arange(g.size), {"jaws real/sim": g,
                                                     "match": np.ones(g.size)},
                                 xlabel="compared frame", ylabel="brightness ratio",
                                 title="Jaw brightness ratio per frame"))
    return out
