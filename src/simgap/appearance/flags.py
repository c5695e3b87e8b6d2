"""The appearance flags: values in, a raised flag and its numbers out.

- ``background_not_dark``: the real background is brighter than anything training showed
  (``camera.training_background_max``). A simulated black is never a real black: a camera
  compresses the range, so black cloth reads 18 with a locked exposure and more in auto.
- ``exposure_mismatch``: the gripper's real/sim brightness ratio is off by more than the
  tolerance (the camera's gain or exposure differs from the simulator's lighting).
- ``exposure_drift``: the same region's ratio moves between recordings, or within one with
  how much of the frame is bright (auto exposure left on, or a lock that was forgotten).
- ``rest_pose_match``: the match was made at the rest pose only, or it disagrees with the
  start pose, where the policy works (at rest the simulator may hide the jaws).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

GAIN_TOL = 0.10
"""Relative tolerance on a brightness ratio (10%)."""
BACKGROUND_MARGIN = 8.0
"""Levels (0..255) a real background may exceed training's brightest before it is flagged."""
CORR_MIN = 0.5
CLIP_MIN = 0.05  # clipped pixels above this fraction make a gain a lower bound
"""|Pearson r| between gain and bright fraction that marks exposure following the scene."""


def _rel(a: float, b: float) -> float:
    """``a / b - 1`` without a division by zero: a gain over a gain of 0 (a black real
    region) is infinitely more (``inf``), 0 over 0 no change."""
    if b > 0:
        return a / b - 1.0
    return 0.0 if a == b else math.inf


def _pct(x: float) -> str:
    return (
        f"{x * 100:.0f}%"
        if math.isfinite(x)
        else "an unbounded amount (a gain of 0: the real image is black there)"
    )


def _finite(x: float) -> float | None:
    """A figure as stored: None where it is not a number (a ratio to a gain of 0)."""
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Flag:
    """One check: raised or not, with the numbers behind it.

    Attributes:
        name: the flag's name.
        raised: True when the check found a gap.
        message: one sentence with the key number.
        values: the numbers behind it.
    """

    name: str
    raised: bool
    message: str
    values: dict[str, Any] = field(default_factory=dict)


BACKGROUND_KEY = "camera.training_background_max"
"""The rig key the background check needs (the brightest background training showed)."""


def background_flag(
    levels: npt.ArrayLike, training_max: float | None, margin: float = BACKGROUND_MARGIN
) -> Flag:
    """Flag a real background brighter than training's brightest (per-frame medians, 0..255).

    ``training_max`` None (the rig does not say) measures the real level and raises nothing:
    ``values["not_stated"]`` names the key to fill, so no verdict rests on a default.
    """
    lv = np.asarray(levels, dtype=float)
    lv = lv[np.isfinite(lv)]
    if lv.size == 0:
        return Flag(
            "background_not_dark",
            False,
            "No background pixel to compare.",
            {"background_level": None, "training_background_max": training_max},
        )
    level = float(np.median(lv))
    if training_max is None:
        return Flag(
            "background_not_dark",
            False,
            f"The real background reads {level:.0f} (0..255), but the rig does not say "
            f"how bright training's backgrounds were ({BACKGROUND_KEY}).",
            {
                "background_level": level,
                "training_background_max": None,
                "margin": margin,
                "not_stated": BACKGROUND_KEY,
            },
        )
    raised = level > training_max + margin
    msg = (
        f"The real background reads {level:.0f} (0..255) where training showed at most "
        f"{training_max:.0f}."
        if raised
        else f"The real background reads {level:.0f}, within {margin:.0f} of training's "
        f"{training_max:.0f}."
    )
    return Flag(
        "background_not_dark",
        raised,
        msg,
        {"background_level": level, "training_background_max": training_max, "margin": margin},
    )


def mismatch_flag(
    gain: float | None,
    region: str = "jaws",
    tol: float = GAIN_TOL,
    *,
    by_recording: Mapping[str, float | None] | None = None,
    clipped_fraction: float = 0.0,
) -> Flag:
    """Flag a real/sim brightness ratio (``gain``, the recording furthest from 1) further
    than ``tol`` from 1. With recordings that differ, the message gives each recording's gain
    (no single gain describes them); with clipped real pixels, it says the gain is a lower
    bound."""
    if gain is None or not np.isfinite(gain):
        return Flag(
            "exposure_mismatch",
            False,
            f"No {region} pixel to compare.",
            {"gain": None, "tolerance": tol},
        )
    raised = abs(gain - 1.0) > tol
    recs = {k: v for k, v in (by_recording or {}).items() if v is not None}
    if len(recs) > 1 and _rel(max(recs.values()), min(recs.values())) > tol:
        each = ", ".join(f"{k} {v:.2f}" for k, v in recs.items())
        msg = (
            f"The real {region}' brightness gain (real / simulated, 1 = match) differs by "
            f"recording: {each}; no single gain describes them."
        )
    else:
        word = "brighter" if gain > 1 else "darker"
        msg = (
            f"The real {region} have {gain:.2f} times the simulator's brightness (gain "
            f"{gain:.2f}, {abs(gain - 1) * 100:.0f}% {word})."
        )
    if clipped_fraction > CLIP_MIN:
        msg += (
            f" {clipped_fraction * 100:.0f}% of the real {region} pixels are clipped at "
            "full scale, so the true gain is higher: read it as a lower bound."
        )
    return Flag(
        "exposure_mismatch",
        raised,
        msg,
        {"gain": gain, "tolerance": tol, "clipped_fraction": clipped_fraction},
    )


def drift_flag(
    gains: npt.ArrayLike,
    bright_fraction: npt.ArrayLike,
    recordings: Sequence[str],
    tol: float = GAIN_TOL,
) -> Flag:
    """Flag a region's gain that moves between recordings or follows the scene's brightness.

    Args:
        gains: per-frame real/sim ratio of one region (NaN where undefined), shape (N,).
        bright_fraction: per-frame fraction of the real image that is bright, shape (N,).
        recordings: per-frame recording name, length N.
        tol: relative tolerance.
    """
    g = np.asarray(gains, dtype=float)
    b = np.asarray(bright_fraction, dtype=float)
    ok = np.isfinite(g)
    vals: dict[str, Any] = {"tolerance": tol}
    if ok.sum() < 2:
        return Flag("exposure_drift", False, "Fewer than two frames to compare.", vals)
    g, b = g[ok], b[ok]
    rec = [r for r, k in zip(recordings, ok, strict=True) if k]
    med = float(np.median(g))
    lo, hi = float(g.min()), float(g.max())
    spread = (hi - lo) / med if med > 0 else (0.0 if hi == lo else math.inf)
    by_rec = {
        r: float(np.median(g[[i for i, x in enumerate(rec) if x == r]])) for r in dict.fromkeys(rec)
    }
    between = _rel(max(by_rec.values()), min(by_rec.values())) if len(by_rec) > 1 else 0.0
    corr = float(np.corrcoef(g, b)[0, 1]) if np.std(b) > 1e-9 and np.std(g) > 1e-12 else 0.0
    vals.update(
        {
            "spread_fraction": _finite(spread),
            "between_recordings_fraction": _finite(between),
            "gain_by_recording": by_rec,
            "gain_vs_bright_r": corr,
        }
    )
    follows = spread > tol and abs(corr) >= CORR_MIN
    raised = between > tol or follows
    if between > tol:
        msg = (
            f"The gripper's brightness ratio changes by {_pct(between)} between "
            "recordings: the exposure lock was lost or auto exposure is on."
        )
    elif follows:
        msg = (
            f"The gripper's brightness ratio varies by {_pct(spread)} and follows "
            f"the scene's brightness (r = {corr:.2f}): auto exposure is on."
        )
    else:
        msg = f"The gripper's brightness ratio is steady (spread {_pct(spread)})."
    return Flag("exposure_drift", raised, msg, vals)


def rest_pose_flag(
    gain_rest: float | None,
    gain_start: float | None,
    has_rest: bool,
    has_start: bool,
    tol: float = GAIN_TOL,
) -> Flag:
    """Flag a brightness match made at the rest pose instead of the start pose."""
    vals = {"gain_rest": gain_rest, "gain_start": gain_start, "tolerance": tol}
    if has_rest and not has_start:
        return Flag(
            "rest_pose_match",
            True,
            "Frames were matched at the rest pose only; record the start pose, where "
            "the policy works.",
            vals,
        )
    if not (has_rest and has_start):
        return Flag("rest_pose_match", False, "No rest-pose frames to compare.", vals)
    if gain_rest is None:
        return Flag(
            "rest_pose_match",
            False,
            "At rest the simulator does not show the jaws, so a rest-pose match is "
            "invalid; the start-pose match is used.",
            vals,
        )
    if gain_start is None:
        return Flag(
            "rest_pose_match",
            True,
            "The jaws are compared at rest but not at the start pose.",
            vals,
        )
    rel = _rel(gain_start, gain_rest)
    vals["start_vs_rest_fraction"] = _finite(rel)
    raised = abs(rel) > tol
    msg = (
        f"A match at rest does not hold at the start pose: there the jaws come out "
        f"{_pct(abs(rel))} {'brighter' if rel > 0 else 'darker'}."
        if raised
        else "The rest-pose and start-pose matches agree."
    )
    return Flag("rest_pose_match", raised, msg, vals)


def bright_fraction(image: npt.ArrayLike, threshold: float = 128.0) -> float:
    """Fraction of pixels whose brightness exceeds ``threshold`` (0..255)."""
    from simgap.appearance.regions import luma

    return float((luma(image) > threshold).mean())
