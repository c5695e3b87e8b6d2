"""The layout the recording opens with: the worst joint's gap first, beside the camera and the
state.

The worst joint is the one whose nominal gap (measured minus the replay under the rig's model)
has the largest RMS over every episode logged, relative to its noise floor: the joint where
the simulated arm leaves the real one furthest beyond what the sensors can tell apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def gap_ratios(
    q_rad: Sequence[np.ndarray], sim_rad: Sequence[np.ndarray], floor_rad: np.ndarray
) -> np.ndarray:
    """Per joint, RMS(measured - replayed) over every frame of every episode / floor.

    Args:
        q_rad: per episode, the measured joints (T, J) [rad].
        sim_rad: per episode, the nominal replay (T, J) [rad].
        floor_rad: per joint noise floor (J,) [rad] (a zero floor counts as one encoder
            count's worth of nothing: the ratio is then infinite where the gap is not zero).
    """
    d = np.concatenate(
        [np.asarray(q, float) - np.asarray(s, float) for q, s in zip(q_rad, sim_rad, strict=True)]
    )
    rms = np.sqrt(np.mean(d**2, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            floor_rad > 0,
            rms / np.where(floor_rad > 0, floor_rad, 1.0),
            np.where(rms > 0, np.inf, 0.0),
        )


def blueprint(
    rrb: Any,
    gap_path: str,
    worst: str,
    camera_paths: Sequence[str],
    state_path: str,
    arm_path: str | None,
) -> Any:
    """The blueprint: the worst joint's gap as a time series on the left (named for it),
    the camera(s), the arm in 3D and the state on the right, the findings below."""
    right = [rrb.Spatial2DView(origin=p, name=p) for p in camera_paths]
    if arm_path is not None:
        right.append(rrb.Spatial3DView(origin=arm_path, name="arm: real and simulated"))
    right.append(rrb.TimeSeriesView(origin=state_path, name=state_path))
    return rrb.Blueprint(
        rrb.Vertical(
            rrb.Horizontal(
                rrb.TimeSeriesView(origin=gap_path, name=f"worst gap: {worst}"),
                rrb.Vertical(*right),
            ),
            rrb.TextLogView(origin="findings", name="findings"),
            row_shares=[4, 1],
        ),
        collapse_panels=False,
    )
