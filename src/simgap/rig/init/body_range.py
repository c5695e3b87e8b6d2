"""Degrees or LeRobot's -100..100 body range: what a dataset's ``meta/stats.json`` says."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simgap.safe_names import shown

M100_HOW = (
    "To tell: in meta/stats.json, a body joint of observation.state past ±100 means "
    "degrees (-100..100 readings are clipped to the calibrated range); all within "
    "±100, with the joints driven to their ends at exactly -100 or 100, means "
    "-100..100; the gripper reads 0..100 in both"
)
"""How to tell degrees from LeRobot's -100..100 body range (docs/rig.md, 'Degrees or
-100..100')."""


END_TOL = 1e-3
"""A -100..100 reading at the calibrated end is clipped to exactly 100 (within float32)."""


DEG_PER_TICK = 360.0 / 4095.0
"""LeRobot's degrees formula: (ticks - middle of the calibrated range) * 360 / 4095."""


def _stats_range(dataset: Path, key: str, n: int) -> tuple[list[float], list[float]] | str:
    """``key``'s per-entry min and max from ``meta/stats.json``, or why they are not read."""
    path = dataset / "meta" / "stats.json"
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{path} is absent"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{path} is unreadable ({type(e).__name__})"
    st = stats.get(key) if isinstance(stats, dict) else None
    lo, hi = (st.get("min"), st.get("max")) if isinstance(st, dict) else (None, None)

    def numbers(v: Any) -> bool:
        return (
            isinstance(v, list)
            and len(v) == n
            and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in v
            )
        )

    if not (isinstance(lo, list) and isinstance(hi, list) and numbers(lo) and numbers(hi)):
        return f"{path} has no min and max of {n} numbers for {key}"
    return [float(x) for x in lo], [float(x) for x in hi]


def body_range_evidence(
    dataset: Path,
    key: str,
    body: Mapping[str, str],
    recorded: Sequence[str],
    calibration: Mapping[str, Mapping[str, int]] | None = None,
) -> str:
    """Which of degrees and -100..100 the dataset's own statistics point to, with the
    numbers: ``meta/stats.json``'s min and max of ``key`` for the body joints (``body``: model
    joint -> recorded name). A body joint past ±100 is degrees (a -100..100 reading is
    clipped to ±100); all within ±100 with some at exactly ±100 (driven to a calibrated
    end) is -100..100; otherwise, with the calibration, a joint past the most its calibrated
    span reaches in degrees is -100..100; else the dataset cannot tell, and the sentence
    says how to."""
    rng = _stats_range(dataset, key, len(recorded))
    if isinstance(rng, str):
        return f"{rng}, so init could not check. {M100_HOW}."
    lo, hi = rng
    per = {
        j: (lo[recorded.index(r)], hi[recorded.index(r)]) for j, r in body.items() if r in recorded
    }
    if not per:
        return f"{M100_HOW}."

    def peak(j: str) -> float:
        return max(abs(per[j][0]), abs(per[j][1]))

    top = max(per, key=peak)
    span = f"{shown(top)} reads {per[top][0]:.1f}..{per[top][1]:.1f}"
    where = f"meta/stats.json, {key}"
    if peak(top) > 100.0 + END_TOL:
        return (
            f"{where}: {span}, past ±100, so degrees, as written (a -100..100 reading "
            "never leaves ±100)."
        )
    ends = [j for j in per if any(abs(abs(v) - 100.0) <= END_TOL for v in per[j])]
    if ends:
        return (
            f"{where}: every body joint within ±100 (widest: {span}) and "
            f"{', '.join(shown(j) for j in ends)} at exactly ±100: this looks like "
            '-100..100, so set unit = "m100" and range_rad (the model angles at -100 '
            "and 100) on each body joint."
        )
    for j in per:
        c = (calibration or {}).get(j)
        if c is None:
            continue
        reach = (c["range_max"] - c["range_min"]) / 2.0 * DEG_PER_TICK
        if peak(j) > reach + 1.0:
            return (
                f"{where}: {shown(j)} reads {per[j][0]:.1f}..{per[j][1]:.1f}, past the "
                f"±{reach:.1f} degrees its calibrated span allows: this looks like "
                '-100..100, so set unit = "m100" and range_rad on each body joint.'
            )
    return (
        f"{where}: every body joint within ±100 (widest: {span}) and none at exactly "
        "±100, which either unit can give; a joint that swept its whole calibrated "
        "range reads ±(range_max - range_min) / 2 * 360 / 4095 at its ends in degrees, "
        "±100 in -100..100"
        + ("" if calibration else " (pass --calibration and init compares them)")
        + "."
    )
