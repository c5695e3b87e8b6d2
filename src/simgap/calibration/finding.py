"""The calibration findings: one calibration against the model, two calibrations compared."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simgap.calibration.against_model import (
    LIMIT_TOL_DEG,
    ZERO_TOL_DEG,
    CalibrationCheck,
    JointCalibrationCheck,
)
from simgap.calibration.compare import MotorChange
from simgap.calibration.drift import DRIFT_TOL_DEG, Drift
from simgap.figures.calibration import (
    CheckDetails,
    CheckFigures,
    CompareFigures,
    DriftFigures,
)
from simgap.finding import Finding, Verdict

BRANCH = "calibration"


def _deg(x: float | None) -> float | None:
    return None if x is None else math.degrees(x)


def _mm(x: float | None) -> float | None:
    return None if x is None else x * 1000.0


def _joint_figures(j: JointCalibrationCheck) -> dict[str, Any]:
    z, ci = math.degrees(j.zero_offset_rad), math.degrees(j.zero_ci95_rad)
    u = j.rig_unit
    return {
        "motor": j.motor,
        "mode": j.mode,
        "drive_mode": j.drive_mode,
        "zero_offset_deg": z,
        "zero_offset_interval_deg": [z - ci, z + ci],
        "model_range_deg": [math.degrees(v) for v in j.model_range_rad],
        "calibrated_range_deg": [math.degrees(v) for v in j.calibrated_range_rad],
        "past_limits_deg": [math.degrees(v) for v in j.past_limits_rad],
        "short_of_model_deg": math.degrees(j.short_rad),
        "reversed": j.reversed,
        "rig_error_deg": _deg(j.rig_error_rad),
        "error_at_gripper_mm": _mm(j.error_at_gripper_m),
        "reversed_error_at_gripper_mm": _mm(j.reversed_error_at_gripper_m),
        "rig_unit": {
            "unit": u.unit,
            "sign": u.sign,
            "offset_rad": u.offset_rad,
            "range_rad": None if u.lo_rad is None else [u.lo_rad, u.hi_rad],
        },
        "problems": list(j.problems),
    }


def check_finding(check: CalibrationCheck) -> Finding:
    """Implicated when any joint has a problem (``CalibrationCheck.problems``), else
    eliminated; the key figure is the largest error at the gripper [mm]."""
    per = {j.joint: _joint_figures(j) for j in check.joints}
    grip = [
        v
        for j in check.joints
        for v in (j.error_at_gripper_m, j.reversed_error_at_gripper_m)
        if v is not None and j.problems
    ]
    worst = max(check.joints, key=lambda j: abs(j.zero_offset_rad)) if check.joints else None
    figures: dict[str, Any] = {
        "joints": per,
        "use_degrees": check.use_degrees,
        "ee_site": check.ee,
        "error_at_gripper_mm": _mm(check.error_at_gripper_m),
        "largest_error_at_gripper_mm": _mm(max(grip)) if grip else 0.0,
        "largest_zero_offset_deg": abs(math.degrees(worst.zero_offset_rad)) if worst else None,
        "largest_zero_offset_joint": worst.joint if worst else None,
        "unmatched_motors": list(check.unmatched),
        "zero_tolerance_deg": ZERO_TOL_DEG,
        "limit_tolerance_deg": LIMIT_TOL_DEG,
    }
    problems = check.problems
    if problems:
        verdict = Verdict.IMPLICATED
        summary = "The calibration disagrees with the model: " + "; ".join(problems) + "."
        step = (
            "Recalibrate the joints named (lerobot-calibrate: hold the arm at the middle "
            "of its range, then sweep every joint to both limits), or write the offsets "
            "and signs into the rig (simgap init --calibration) and into the deployment's "
            "conversion."
        )
    else:
        verdict = Verdict.ELIMINATED
        summary = (
            f"Every calibrated joint agrees with the model: zeros within "
            f"{ZERO_TOL_DEG:g} deg of the homing pose, ranges inside the limits, no "
            "reversed drive mode."
        )
        step = "Nothing to change in the calibration."
    summary += " " + " ".join(check.notes)
    return Finding(
        branch=BRANCH,
        verdict=verdict,
        title="LeRobot calibration against the model",
        summary=summary,
        key_figure="largest_error_at_gripper_mm",
        figures=CheckFigures.from_mapping(figures),
        next_step=step,
        details=CheckDetails.from_mapping({"source": check.source}, where="details"),
    )


def compare_finding(
    changes: tuple[MotorChange, ...],
    a: str,
    b: str,
    at_gripper_m: Mapping[str, float] | None = None,
) -> Finding:
    """What moved between two calibrations (``a``, ``b``: their names); ``at_gripper_m``:
    motor -> the zero shift at the gripper [m]."""
    grip = dict(at_gripper_m or {})
    moved = [c for c in changes if c.moved]
    per = {
        c.motor: {
            "changed": list(c.changed),
            "zero_shift_deg": _deg(c.zero_shift_rad),
            "span_change_deg": _deg(c.span_change_rad),
            "error_at_gripper_mm": _mm(grip.get(c.motor)),
            "moved": c.moved,
        }
        for c in changes
    }
    lines = []
    for c in moved:
        line = c.sentence()
        if grip.get(c.motor) and c.zero_shift_rad:
            line += f", {grip[c.motor] * 1000:.1f} mm at the gripper"
        lines.append(line)
    figures = {
        "motors": per,
        "moved": [c.motor for c in moved],
        "largest_zero_shift_deg": max(
            (abs(math.degrees(c.zero_shift_rad)) for c in changes if c.zero_shift_rad is not None),
            default=0.0,
        ),
        "a": a,
        "b": b,
    }
    if moved:
        return Finding(
            branch=BRANCH,
            verdict=Verdict.IMPLICATED,
            title="Calibration changed",
            key_figure="largest_zero_shift_deg",
            summary=f"Between {a} and {b}: " + "; ".join(lines) + ".",
            figures=CompareFigures.from_mapping(figures),
            next_step="Data recorded with one calibration and replayed or deployed "
            "with the other is off by these shifts: record again, or convert with "
            "the calibration it was recorded with.",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.ELIMINATED,
        title="Calibration changed",
        key_figure="largest_zero_shift_deg",
        figures=CompareFigures.from_mapping(figures),
        summary=f"Nothing moved between {a} and {b} beyond rounding.",
        next_step="Nothing to change.",
    )


def drift_finding(drift: Drift) -> Finding:
    """Implicated when a joint's offset is beyond both its interval and ``DRIFT_TOL_DEG``;
    eliminated when every joint's interval is known and inside the tolerance; else
    inconclusive. The key figure is the offsets together at the gripper [mm]."""
    per = {
        j.joint: {
            "offset_deg": math.degrees(j.offset_rad),
            "offset_interval_deg": None
            if j.ci95_rad is None
            else [math.degrees(j.offset_rad - j.ci95_rad), math.degrees(j.offset_rad + j.ci95_rad)],
            "load_deg": math.degrees(j.load_rad),
            "compliance_deg_per_nm": _deg(j.compliance_rad_per_nm),
            "n_segments": j.n_segments,
            "offset_at_gripper_mm": _mm(drift.per_joint_at_gripper_m.get(j.joint)),
        }
        for j in drift.joints
    }
    tol = math.radians(DRIFT_TOL_DEG)
    big = [
        j
        for j in drift.joints
        if j.ci95_rad is not None and abs(j.offset_rad) > max(j.ci95_rad, tol)
    ]
    unsure = [j for j in drift.joints if j.ci95_rad is None or j.ci95_rad > tol]
    figures = {
        "joints": per,
        "n_segments": len(drift.segments),
        "offset_at_gripper_mm": _mm(drift.offset_at_gripper_m),
        "load_at_gripper_mm": _mm(drift.load_at_gripper_m),
        "tolerance_deg": DRIFT_TOL_DEG,
    }
    if big:
        verdict = Verdict.IMPLICATED
        listing = ", ".join(
            f"{j.joint} {math.degrees(j.offset_rad):+.2f} deg "
            f"(±{math.degrees(j.ci95_rad or 0.0):.2f})"
            for j in big
        )
        summary = (
            f"On {len(drift.segments)} still segments the follower stands off the "
            f"leader's command beyond its load deflection: {listing}."
        )
        step = (
            "Find what moves the follower's goal off the recorded action (a processor or "
            "script offset, a goal written through another calibration) and remove it."
        )
    elif unsure:
        verdict = Verdict.INCONCLUSIVE
        summary = (
            "Too few or too scattered still segments to pin the offset of "
            + ", ".join(j.joint for j in unsure)
            + f" within {DRIFT_TOL_DEG:g} deg."
        )
        step = "Record a teleoperation with more pauses (a second each, at several poses)."
    else:
        verdict = Verdict.ELIMINATED
        summary = (
            f"On {len(drift.segments)} still segments the follower stands where the "
            f"leader commands, within {DRIFT_TOL_DEG:g} deg per joint, after its "
            "gravity deflection."
        )
        step = "Nothing to change."
    return Finding(
        branch=BRANCH,
        verdict=verdict,
        title="Leader/follower drift",
        summary=summary,
        key_figure="offset_at_gripper_mm",
        figures=DriftFigures.from_mapping(figures),
        next_step=step,
    )
