"""A PNG image inline in the page."""

from __future__ import annotations

import base64
import io

import numpy as np

from simgap.report.svg.text import esc


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
        f'<img src="data:image/png;base64,{data}" alt="{esc(title)}" '
        f'title="{esc(title)}" style="image-rendering:pixelated"/>'
    )
