"""The body branch: where the model of the arm quietly disagrees with the arm.

Two findings: joint zero offsets (from a static object seen from several poses, fitted
through the model's forward kinematics) and the frame origin (where the model measures
positions from, against the reference the user measures placements from).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.body.frame_origin import FrameOrigin, frame_origin
from simgap.body.zero_offsets import ZeroOffsetFit, fit_zero_offsets
from simgap.branches.branch import Branch
from simgap.branches.context import Context, not_measured
from simgap.errors import InputError
from simgap.evidence.static_poses import StaticPoses, load_static_poses
from simgap.figures.body import FrameOriginFigures, ZeroOffsetsDetails, ZeroOffsetsFigures
from simgap.finding import Finding, Verdict
from simgap.report import plots_body
from simgap.rig import Rig
from simgap.sim.kinematics import Kinematics

BRANCH = "body"
OFFSET_TOL_DEG = 0.5
"""An offset smaller than this [deg] is below what matters for a policy steering by sight."""
ORIGIN_TOL_M = 0.005
"""A reference closer than this to the model's origin [m] needs no conversion."""


def _kinematics(rig: Rig) -> Kinematics:
    cam = rig.camera.name if rig.camera is not None else None
    if cam is None:
        raise InputError(
            file=rig.source,
            field="camera.name",
            expected="the camera that measured the static object",
            got="nothing",
            fix="add a [camera] section naming the MJCF camera",
        )
    return Kinematics(rig.model_path, cam, rig.joint_names, source=rig.source)


def offsets_finding(fit: ZeroOffsetFit) -> Finding:
    """The joint zero-offset finding."""
    deg = {j: float(np.rad2deg(v)) for j, v in fit.offset_rad.items()}
    ci = {j: float(np.rad2deg(v)) for j, v in fit.ci95_rad.items()}
    significant = {j: v for j, v in deg.items() if abs(v) > max(ci[j], OFFSET_TOL_DEG)}
    unsure = [j for j, v in deg.items() if ci[j] > OFFSET_TOL_DEG and j not in significant]
    worst = max(deg, key=lambda j: abs(deg[j])) if deg else None
    figures: dict[str, Any] = {
        "joint_offsets_deg": deg,
        "joint_offsets_ci95_deg": ci,
        "joint_offsets_interval_deg": {j: [deg[j] - ci[j], deg[j] + ci[j]] for j in deg},
        "largest_offset_deg": abs(deg[worst]) if worst else None,
        "largest_offset_joint": worst,
        "not_identifiable": list(fit.unidentifiable),
        "object_world_m": fit.object_world_m,
        "camera_mount_offset_m": list(fit.camera_mount.pos_m) if fit.camera_mount else None,
        "camera_mount_rotation_deg": np.rad2deg(fit.camera_mount.rot_rad).tolist()
        if fit.camera_mount
        else None,
        "residual_rms_m": fit.residual_rms_m,
        "residual_rms_before_m": fit.residual_rms_before_m,
        "n_poses": fit.n_poses,
    }
    if significant:
        verdict = Verdict.IMPLICATED
        listing = ", ".join(f"{j} {v:+.1f} deg (±{ci[j]:.1f})" for j, v in significant.items())
        summary = f"The real joints' zeros differ from the model's: {listing}."
        step = (
            "Add each offset to the joint's offset_rad in rig.toml (or recalibrate the arm), "
            "then re-measure."
        )
    elif unsure:
        verdict = Verdict.INCONCLUSIVE
        summary = (
            f"The offsets of {', '.join(unsure)} are not pinned down (95% interval "
            f"wider than {OFFSET_TOL_DEG} deg)."
        )
        step = "Record the static object from more, and more varied, poses."
    else:
        verdict = Verdict.ELIMINATED
        summary = (
            f"Every identifiable joint zero agrees with the model within {OFFSET_TOL_DEG} deg."
        )
        step = "Nothing to change in the joint zeros."
    if fit.unidentifiable:
        summary += (
            f" Not identifiable from one static object: {', '.join(fit.unidentifiable)}"
            " (their offsets look like moving the object or the camera mount)."
        )
    return Finding(
        branch=BRANCH,
        verdict=verdict,
        title="Joint zero offsets",
        summary=summary,
        key_figure="largest_offset_deg",
        figures=ZeroOffsetsFigures.from_mapping(figures),
        next_step=step,
        residual=fit.residual_rms_m,
        residual_unit="m",
        details=ZeroOffsetsDetails.from_mapping(
            {"offsets_deg": deg, "ci95_deg": ci}, where="details"
        ),
    )


def origin_finding(fo: FrameOrigin) -> Finding:
    """The frame-origin finding: how to convert hand-measured placements."""
    ref = fo.reference_m
    figures = {
        "origin_offset_m": fo.offset_xy_m,
        "reference_m": ref,
        "reference_name": fo.reference_name,
        "base_axis_m": fo.base_axis_m,
        "base_axis_joint": fo.base_axis_joint,
        "reference_to_base_axis_m": fo.reference_to_axis_m,
        "convert": {
            "x_model_m": f"x_measured + {ref[0]:.4f}",
            "y_model_m": f"y_measured + {ref[1]:.4f}",
        },
    }
    moved = fo.offset_xy_m > ORIGIN_TOL_M
    summary = (
        f"The model measures positions from a point {fo.offset_xy_m * 100:.1f} cm from "
        f"the {fo.reference_name}: every placement measured from the {fo.reference_name} "
        f"is off by that much unless converted (x_model = x + {ref[0]:.4f} m, "
        f"y_model = y + {ref[1]:.4f} m)."
        if moved
        else f"The model's origin is the {fo.reference_name} (within "
        f"{ORIGIN_TOL_M * 1000:.0f} mm); placements need no conversion."
    )
    if fo.reference_to_axis_m > ORIGIN_TOL_M:
        summary += (
            f" The declared reference is {fo.reference_to_axis_m * 100:.1f} cm from "
            f"the model's {fo.base_axis_joint} axis; check the declaration."
        )
    # A differing origin is a conversion to apply, not yet a cause: the recordings do not say
    # whether the evaluation's placements were measured from the reference or converted.
    if moved:
        summary += (
            " Whether the evaluation's placements were converted is not recorded, so "
            "this is a check to make, not a measured cause."
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.INCONCLUSIVE if moved else Verdict.ELIMINATED,
        title="Frame origin",
        summary=summary,
        key_figure="origin_offset_m",
        figures=FrameOriginFigures.from_mapping(figures),
        next_step="Convert every hand-measured placement to model coordinates "
        "before an evaluation (and every evaluation's initial states)."
        if moved
        else "Nothing to convert.",
    )


def run(rig: Rig, poses: StaticPoses | None) -> list[Finding]:
    """The body analysis on values."""
    out: list[Finding] = []
    kin: Kinematics | None = None
    if poses is not None:
        kin = _kinematics(rig)
        out.append(
            offsets_finding(fit_zero_offsets(kin, poses.q, poses.p_cam, source=poses.source))
        )
    if rig.origin_reference_m is not None:
        if kin is None and rig.camera is not None:
            kin = _kinematics(rig)
        if kin is not None:
            axis, _, jname = kin.base_axis()
        else:
            axis, jname = np.full(3, np.nan), ""
        out.append(
            origin_finding(
                frame_origin(rig.origin_reference_m, rig.origin_reference_name, axis, jname)
            )
        )
    return out


def assess(ctx: Context) -> list[Finding]:
    """Joint zero offsets and the frame origin."""
    rig = ctx.rig
    if rig.evidence.static_object_poses is None and rig.origin_reference_m is None:
        return [not_measured(SPEC)]
    poses = None
    if rig.evidence.static_object_poses is not None:
        poses = ctx.evidence.get("static_object_poses", load_static_poses)
    return run(rig, poses)


SPEC = Branch(
    name=BRANCH,
    cost=3.7,
    needs=("evidence.static_object_poses or frame.origin_reference_m",),
    assess=assess,
    plots=lambda f: plots_body.plots(f),  # looked up when drawn: a test may replace it
)
"""The body branch's contract: its plots; no randomisation entries."""
