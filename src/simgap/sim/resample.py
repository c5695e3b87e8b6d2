"""Resize images the way the policy's preprocessing does, in numpy.

LeRobot resizes camera frames with ``torch.nn.functional.interpolate(mode="bilinear",
align_corners=False)`` and no antialiasing. For each output pixel ``i`` the source coordinate
is ``(i + 0.5) * in / out - 0.5``, clamped at 0; the value is the linear blend of the two
neighbouring source pixels (the upper one clamped at the edge). Downscaling by 6 therefore
reads only 2 x 2 of every 6 x 6 source pixels: the policy sees an aliased sample, not an
average, and every comparison here sees the same sample.

Segmentation maps are resized with the same weights: each output pixel takes the label whose
source pixels carry the largest bilinear weight (a weighted majority of the pixels the
policy's resampling actually reads).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError


def _axis_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices (lo, hi) and the weight of hi for each output index, shape (n_out,)."""
    scale = n_in / n_out
    src = (np.arange(n_out, dtype=np.float64) + 0.5) * scale - 0.5
    src = np.maximum(src, 0.0)
    lo = np.floor(src).astype(np.int64)
    lo = np.minimum(lo, n_in - 1)
    hi = np.where(lo < n_in - 1, lo + 1, lo)
    lam = src - lo
    return lo, hi, lam


def resize_bilinear(image: npt.ArrayLike, size: tuple[int, int]) -> np.ndarray:
    """Bilinear resize, align_corners=False, no antialias (torch's ``interpolate``).

    Args:
        image: shape (H, W) or (H, W, C), any real dtype.
        size: output (height, width) [px].

    Returns:
        float64 array of shape (h, w) or (h, w, C), in the input's value range.
    """
    img = np.asarray(image, dtype=np.float64)
    if img.ndim not in (2, 3):
        raise InputError(
            field="image", expected="shape (H, W) or (H, W, C)", got=f"shape {img.shape}"
        )
    h, w = int(size[0]), int(size[1])
    if h <= 0 or w <= 0:
        raise InputError(field="size", expected="positive (height, width)", got=size)
    y0, y1, ly = _axis_weights(img.shape[0], h)
    x0, x1, lx = _axis_weights(img.shape[1], w)
    if img.ndim == 3:
        ly = ly[:, None, None]
        lxx = lx[None, :, None]
    else:
        ly = ly[:, None]
        lxx = lx[None, :]
    top = img[y0][:, x0] * (1.0 - lxx) + img[y0][:, x1] * lxx
    bot = img[y1][:, x0] * (1.0 - lxx) + img[y1][:, x1] * lxx
    out: np.ndarray = top * (1.0 - ly) + bot * ly
    return out


def resize_labels(labels: npt.ArrayLike, size: tuple[int, int]) -> np.ndarray:
    """Resize an integer label map (segmentation) by weighted majority, shape (h, w).

    Each output pixel takes the label with the largest total bilinear weight among the source
    pixels the policy's resampling reads; ties go to the smaller label.
    """
    lab = np.asarray(labels)
    if lab.ndim != 2:
        raise InputError(field="segmentation", expected="shape (H, W)", got=f"shape {lab.shape}")
    values = np.unique(lab)
    best = np.full((int(size[0]), int(size[1])), -np.inf)
    out = np.full((int(size[0]), int(size[1])), values[0], dtype=lab.dtype)
    for v in values:
        wgt = resize_bilinear((lab == v).astype(np.float64), size)
        take = wgt > best + 1e-12
        out[take] = v
        best = np.maximum(best, wgt)
    return out


def purity(mask: npt.ArrayLike, size: tuple[int, int]) -> np.ndarray:
    """Fraction of each policy pixel's value that comes from ``mask``'s pixels, shape (h, w).

    1.0 means the policy pixel is made only of that region's source pixels.
    """
    return resize_bilinear(np.asarray(mask, dtype=np.float64), size)
