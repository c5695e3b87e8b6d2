"""The envelope's grasp-margin check: whether each episode grasped (``grasp_evidence``)
and how firmly the real gripper squeezes against training."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.episodes.envelope import EnvelopeCheck
from simgap.episodes.segment import Segmentation
from simgap.values.episode import EpisodeRecord

MIN_SQUEEZE_DEG = 5.0
"""A median squeeze (measured opening minus target while holding) below this is marginal."""


STALL_GAP_RAD = float(np.deg2rad(1.0))
"""A jaw held this far (or more) open of its closing target while still is stopped by
something: a free jaw settles within a few encoder counts of its target (the SO-101's servo
holds to ~0.05 mrad against its own friction, and 0.05 rad/s behind an 80 ms delay is 4 mrad)."""


STILL_RAD_S = 0.05
"""A jaw slower than this (over ``SPEED_BASELINE_S``) is still [rad/s]."""


SPEED_BASELINE_S = 0.2
"""Speeds are differences over this baseline [s], so encoder flicker does not read as motion."""


STALL_MIN_S = 0.3
"""A grasp needs the jaw stopped this long in total [s]."""


SIM_SQUEEZE_NEED = (
    "evidence.sim_dataset (the policy's rollouts in the training simulator, "
    "whose squeeze the real one is held against)"
)
"""What a rig must add for a firm real squeeze to be a verdict."""


@dataclass(frozen=True)
class GraspEvidence:
    """Whether an episode grasped something, and on which samples.

    Attributes:
        happened: an object was present and lifted, or the jaw was stopped by something.
        held: the samples held with a grasp (all False when none happened), shape (T,).
        how: the evidence, or why there was none, in numbers.
    """

    happened: bool
    held: np.ndarray = field(repr=False)
    how: str


def grasp_evidence(rec: EpisodeRecord, seg: Segmentation) -> GraspEvidence:
    """Did the episode grasp? Only then is its squeeze a grasp margin.

    A grasp happened when the object's position is recorded and the held attempt lifted it,
    or when the jaw, closing, stood still (slower than ``STILL_RAD_S``) at least
    ``STALL_GAP_RAD`` open of its target for ``STALL_MIN_S`` in total: something stopped it.
    A jaw that follows its command (a sine-excited gripper with nothing to hold) is not a
    grasp, however often its command crosses the closed half of its range.
    """
    none = np.zeros(len(rec.t), dtype=bool)
    if not seg.holding.any() or seg.best is None:
        return GraspEvidence(False, none, "the gripper never closed and held")
    best = seg.attempts[seg.best]
    if rec.obj is not None and best.lift is not None:
        rise = float(rec.obj[best.lift :, 2].max() - rec.obj[0, 2])
        return GraspEvidence(True, seg.holding, f"the object rose {rise * 100:.1f} cm while held")
    t = np.asarray(rec.t, dtype=float)
    dt = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    k = max(1, int(round(SPEED_BASELINE_S / dt)))
    q = rec.gripper
    speed = np.full(q.size, np.inf)
    if q.size > k:
        v = np.abs(q[k:] - q[:-k]) / (t[k:] - t[:-k])
        speed[k // 2 : k // 2 + v.size] = v
    gap = q - rec.gripper_cmd
    stalled = seg.holding & (speed <= STILL_RAD_S) & (gap >= STALL_GAP_RAD)
    stalled_s = float(stalled.sum() * dt)
    if stalled_s >= STALL_MIN_S:
        return GraspEvidence(
            True,
            seg.holding,
            f"the jaw stood {np.rad2deg(np.median(gap[stalled])):.1f} deg open "
            f"of its target for {stalled_s:.1f} s: something stopped it",
        )
    obj = "no object position recorded" if rec.obj is None else "the object never rose"
    held_s = float(seg.holding.sum() * dt)
    return GraspEvidence(
        False,
        none,
        f"{obj}, and the jaw stood still {np.rad2deg(STALL_GAP_RAD):.0f} deg or "
        f"more open of its target for {stalled_s:.2f} s of {held_s:.1f} s "
        f"closed (a grasp needs {STALL_MIN_S:g} s)",
    )


def grasp_margin_check(
    real_squeeze_rad: np.ndarray,
    sim_squeeze_rad: np.ndarray | None,
    torque_limit: float | None,
    why_not: str = "",
    sim_why_not: str = "",
) -> EnvelopeCheck:
    """While holding: measured opening minus target (the squeeze) and the torque limit.

    ``real_squeeze_rad`` holds only samples of episodes where a grasp happened
    (``grasp_evidence``); ``why_not`` says, in numbers, why none did. A median squeeze
    below ``MIN_SQUEEZE_DEG`` is a marginal grasp on the real arm whatever training did; a
    firmer one is inside the envelope only against the simulated rollouts' squeeze
    (``sim_squeeze_rad``; None: no simulated rollouts, empty: none grasped, as
    ``sim_why_not`` says): without it the check is not measured.
    """
    title = "Grasp margin"
    if real_squeeze_rad.size == 0:
        return EnvelopeCheck(
            "grasp_margin",
            title,
            "not_measured",
            figures={"grasp_evidence": why_not or "no episode held anything"},
            summary="No real episode grasped anything" + (f" ({why_not})." if why_not else "."),
            next_step="Record real episodes that grasp the object.",
            needs=("evidence.dataset episodes that grasp the object",),
        )
    sq = np.rad2deg(real_squeeze_rad)
    med = float(np.median(sq))
    figs: dict[str, Any] = {
        "real_squeeze_median_deg": med,
        "real_squeeze_p10_deg": float(np.percentile(sq, 10)),
        "real_squeeze_p90_deg": float(np.percentile(sq, 90)),
        "min_squeeze_deg": MIN_SQUEEZE_DEG,
        "gripper_torque_limit_fraction": torque_limit,
    }
    if sim_squeeze_rad is not None and sim_squeeze_rad.size:
        figs["sim_squeeze_median_deg"] = float(np.median(np.rad2deg(sim_squeeze_rad)))
    outside = med < MIN_SQUEEZE_DEG
    cap = (
        f" and the real gripper is capped at {torque_limit:.0%} torque"
        if torque_limit is not None and torque_limit < 1
        else ""
    )
    sim_held = sim_squeeze_rad is not None and sim_squeeze_rad.size > 0
    if not outside and not sim_held:
        why = (
            "the rig names no simulated rollouts (evidence.sim_dataset)"
            if sim_squeeze_rad is None
            else "no simulated rollout grasped anything"
            + (f" ({sim_why_not})" if sim_why_not else "")
        )
        return EnvelopeCheck(
            "grasp_margin",
            title,
            "not_measured",
            figs,
            summary=f"While holding, the real policy squeezes by {med:.1f} "
            f"deg{cap}, but there is nothing from training to hold "
            f"it against: {why}.",
            next_step="Name evidence.sim_dataset (the policy's rollouts in "
            "the training simulator) in rig.toml.",
            details={"squeeze_deg": sq[:4000].tolist()},
            needs=(SIM_SQUEEZE_NEED,),
        )
    if outside:
        summary = (
            f"While holding, the gripper's target sits {med:.1f} deg inside its "
            f"measured opening: the policy barely squeezes{cap}; real grasps are "
            "marginal."
        )
        step = (
            "Make the simulator honest (realistic object mass and finger friction) and "
            "retrain, or make the real fingers grippier / raise the gripper torque limit."
        )
    else:
        summary = (
            f"While holding, the policy squeezes by {med:.1f} deg{cap} "
            f"({figs['sim_squeeze_median_deg']:.1f} deg in simulation)."
        )
        step = "Nothing to change for the grasp margin."
    return EnvelopeCheck(
        "grasp_margin",
        title,
        "outside" if outside else "inside",
        figs,
        "real_squeeze_median_deg",
        summary,
        step,
        {"squeeze_deg": sq[:4000].tolist()},
    )
