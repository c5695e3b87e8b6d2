"""Regions of a frame taken from the simulator's segmentation, and what each looks like.

Regions: ``jaws`` (the gripper the camera sees), ``object`` and ``background`` (no geom or
the floor). Comparisons are made at the policy resolution on *pure* pixels only: a policy
pixel belongs to a region when every source pixel the policy's resampling reads for it is in
that region (so an edge never mixes two regions into one number).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.resample import purity

REGIONS = ("jaws", "object", "background")
PURE = 0.999
"""A policy pixel is pure when at least this fraction of its value comes from one region."""
MIN_SIM_LUMA = 2.0
"""Below this simulated brightness (0..255) a real/sim ratio is not defined."""


def luma(rgb: npt.ArrayLike) -> np.ndarray:
    """Brightness (Rec. 601 weights) of RGB values 0..255, shape (...,)."""
    a = np.asarray(rgb, dtype=float)
    out: np.ndarray = a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114
    return out


def region_masks(
    seg: npt.ArrayLike, groups: Mapping[str, Sequence[int]], n_geoms: int, source: str = ""
) -> dict[str, np.ndarray]:
    """Boolean masks (H, W) of each region in a geom-id map.

    Raises:
        InputError: a region names a geom id outside -1..n_geoms-1, or the map holds one.
    """
    from simgap.sim.render import check_segmentation_ids

    s = np.asarray(seg)
    check_segmentation_ids(s, n_geoms, source)
    out = {}
    for name, ids in groups.items():
        bad = [i for i in ids if i < -1 or i >= n_geoms]
        if bad:
            raise InputError(
                file=source,
                field=f"regions.{name}",
                expected=f"segmentation ids in -1..{n_geoms - 1}",
                got=f"missing segmentation id(s) {bad}",
                fix="name geoms the model has (model.gripper_geoms, object_geom)",
            )
        out[name] = np.isin(s, np.asarray(list(ids), dtype=s.dtype if s.size else int))
    return out


def pure_masks(
    seg: npt.ArrayLike,
    groups: Mapping[str, Sequence[int]],
    n_geoms: int,
    size: tuple[int, int],
    source: str = "",
) -> dict[str, np.ndarray]:
    """Masks at policy resolution ``size`` of the pixels made only of one region."""
    return {
        k: purity(m, size) >= PURE for k, m in region_masks(seg, groups, n_geoms, source).items()
    }


CLIP_LEVEL = 254.0
"""A real channel value at or above this is taken as clipped by the sensor (0..255)."""


@dataclass(frozen=True)
class RegionStats:
    """One region of one frame, real against simulated, at policy resolution.

    Attributes:
        n_pixels: pure policy pixels in the region.
        real_rgb: mean real colour (3,), 0..255 (NaN when empty).
        sim_rgb: mean simulated colour (3,).
        real_luma: mean real brightness.
        sim_luma: mean simulated brightness.
        gain: real / sim brightness (None when empty or the simulation is black there).
        clipped_fraction: fraction of the region's real pixels with a channel at 254 or
            more (clipped by the sensor: the true brightness, and so the gain, is higher).
    """

    n_pixels: int
    real_rgb: tuple[float, float, float]
    sim_rgb: tuple[float, float, float]
    real_luma: float
    sim_luma: float
    gain: float | None
    clipped_fraction: float = 0.0


def compare_regions(
    real: npt.ArrayLike,
    sim: npt.ArrayLike,
    masks: Mapping[str, np.ndarray],
) -> dict[str, RegionStats]:
    """Per-region mean colour, brightness and real/sim brightness ratio.

    Args:
        real: real frame at policy resolution, shape (h, w, 3), 0..255.
        sim: simulated frame, same shape.
        masks: region -> boolean mask (h, w).
    """
    r = np.asarray(real, dtype=float)
    s = np.asarray(sim, dtype=float)
    if r.shape != s.shape:
        raise InputError(
            field="frames",
            expected=f"real and simulated frames of one size {s.shape}",
            got=f"shape {r.shape}",
        )
    out = {}
    for name, m in masks.items():
        n = int(m.sum())
        if n == 0:
            nan3 = (float("nan"),) * 3
            out[name] = RegionStats(0, nan3, nan3, float("nan"), float("nan"), None)
            continue
        rr = r[m].mean(axis=0)
        ss = s[m].mean(axis=0)
        rl, sl = float(luma(rr)), float(luma(ss))
        gain = rl / sl if sl >= MIN_SIM_LUMA else None
        clipped = float((r[m] >= CLIP_LEVEL).any(axis=-1).mean())
        out[name] = RegionStats(
            n,
            (float(rr[0]), float(rr[1]), float(rr[2])),
            (float(ss[0]), float(ss[1]), float(ss[2])),
            rl,
            sl,
            gain,
            clipped,
        )
    return out


NOT_MEASURED = "not measured: no pure pixel of this region in any compared frame"


def region_means(stats: Sequence[RegionStats]) -> dict[str, Any]:
    """One region over frames: the mean real and simulated colour of the frames where it
    has pixels, and its pixel count. A region with no pixel in any frame is not measured
    (colours None, ``measured`` False), never a NaN that a reader would average."""
    used = [s for s in stats if s.n_pixels > 0]
    pixels = int(sum(s.n_pixels for s in stats))
    if not used:
        return {
            "real_rgb": None,
            "sim_rgb": None,
            "pixels": 0,
            "measured": False,
            "note": NOT_MEASURED,
        }
    real = np.mean([s.real_rgb for s in used], axis=0)
    sim = np.mean([s.sim_rgb for s in used], axis=0)
    return {
        "real_rgb": [float(v) for v in real],
        "sim_rgb": [float(v) for v in sim],
        "pixels": pixels,
        "measured": True,
    }


def difference_map(real: npt.ArrayLike, sim: npt.ArrayLike) -> np.ndarray:
    """Per-pixel real minus simulated, shape (h, w, 3), at policy resolution."""
    out: np.ndarray = np.asarray(real, dtype=float) - np.asarray(sim, dtype=float)
    return out


def difference_image(diff: npt.ArrayLike) -> np.ndarray:
    """A difference map shown as uint8 RGB: grey 128 = equal, brighter = real brighter."""
    d = np.asarray(diff, dtype=float)
    return np.clip(128.0 + d / 2.0, 0, 255).astype(np.uint8)
