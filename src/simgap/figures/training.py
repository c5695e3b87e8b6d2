"""The training audit's figures: one record per check of the training config against the rig,
each with the check's name as ``check``. A check not measured carries only ``check`` (its
other figures read as not measured)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Record, figure

NM_PER_RAD = "N m/rad"
"""A joint stiffness."""


@dataclass(frozen=True)
class TrainingRateFigures(Record):
    """Training's control rate against the deployed one and the dataset's real one."""

    branch = "training"
    kind = "control_rate"

    check: str = figure(TEXT, "the check: 'control_rate'")
    training_hz: float = figure("Hz", "training's rate", default=math.nan)
    deployed_hz: float | None = figure(
        "Hz", "the rig's deployed rate (control.real_dt_s)", default=None
    )
    dataset_hz: float | None = figure("Hz", "the dataset's real frame rate", default=None)
    rate_ratio: float = figure(
        UNITLESS, "training's rate over the farthest-off other rate", default=math.nan
    )


@dataclass(frozen=True)
class TopSpeedFigures(Record):
    """Training's top joint speed against the deployed one."""

    branch = "training"
    kind = "top_speed"

    check: str = figure(TEXT, "the check: 'top_speed'")
    training_top_speed_rad_s: float = figure(
        "rad/s", "training's top joint speed", default=math.nan
    )
    deployed_top_speed_rad_s: float = figure(
        "rad/s", "the deployed top joint speed", default=math.nan
    )
    speed_ratio: float = figure(UNITLESS, "deployed over training", default=math.nan)
    action_delta_limit_rad: float = figure(
        "rad", "training's per-step limit at full action", default=math.nan
    )
    deploy_action_scale: float = figure(UNITLESS, "the deployed action scale", default=math.nan)
    training_action_scale: float = figure(UNITLESS, "training's action scale", default=math.nan)
    deployed_dt_s: float = figure("s", "the deployed period", default=math.nan)


@dataclass(frozen=True)
class DriveFigures(Record):
    """Training's PD drive against the servo's own position loop."""

    branch = "training"
    kind = "pd_drive"

    check: str = figure(TEXT, "the check: 'pd_drive'")
    training_stiffness_nm_rad: float = figure(
        NM_PER_RAD, "training's PD stiffness", default=math.nan
    )
    servo_stiffness_nm_rad: float = figure(
        NM_PER_RAD, "the servo loop's stiffness", default=math.nan
    )
    stiffness_ratio: float = figure(UNITLESS, "training's over the servo's", default=math.nan)
    servo_p_gain: float = figure(UNITLESS, "the servo's P coefficient", default=math.nan)
    servo_torque_limit_nm: float = figure("N m", "the servo loop's torque limit", default=math.nan)
    training_force_limit_nm: float = figure(
        "N m", "training's PD force limit (when stated)", default=math.nan
    )
    force_ratio: float = figure(
        UNITLESS, "training's force limit over the servo's", default=math.nan
    )


@dataclass(frozen=True)
class TrainingRatioFigures(Record):
    """A training value held against the measured one."""

    branch = "training"

    check: str = figure(TEXT, "the check")
    training: float = figure(UNITLESS, "training's value (the check's unit)", default=math.nan)
    measured: float = figure(UNITLESS, "the rig's measured value (same unit)", default=math.nan)
    ratio: float = figure(UNITLESS, "training over measured", default=math.nan)


@dataclass(frozen=True)
class FingerFrictionFigures(TrainingRatioFigures):
    """Training's finger friction coefficient against the measured one."""

    kind = "finger_friction"


@dataclass(frozen=True)
class ObjectMassFigures(TrainingRatioFigures):
    """Training's object mass against the weighed one (both kg)."""

    kind = "object_mass"

    training: float = figure("kg", "training's object mass", default=math.nan)
    measured: float = figure("kg", "the weighed mass", default=math.nan)


@dataclass(frozen=True)
class OriginFigures(Record):
    """Training's world origin against the point the rig's placements are measured from,
    both as distances from the pan axis."""

    branch = "training"
    kind = "origin"

    check: str = figure(TEXT, "the check: 'origin'")
    training_origin_from_axis_m: float = figure(
        "m", "training's origin from the pan axis", default=math.nan
    )
    rig_reference_from_axis_m: float = figure(
        "m", "the rig's reference from the pan axis", default=math.nan
    )
    offset_m: float = figure(
        "m", "their difference: the least every placement is off by", default=math.nan
    )


@dataclass(frozen=True)
class CameraFovFigures(Record):
    """Training's camera field of view against the model camera's."""

    branch = "training"
    kind = "camera_fov"

    check: str = figure(TEXT, "the check: 'camera_fov'")
    training_fov_deg: float = figure("deg", "training's vertical field of view", default=math.nan)
    model_fov_deg: float = figure("deg", "the model camera's fovy", default=math.nan)
    difference_deg: float = figure("deg", "training's minus the model's", default=math.nan)


@dataclass(frozen=True)
class CameraMountFigures(Record):
    """Training's camera position in its mount against the model camera's."""

    branch = "training"
    kind = "camera_mount"

    check: str = figure(TEXT, "the check: 'camera_mount'")
    mount_offset_m: float = figure("m", "distance between the two positions", default=math.nan)


@dataclass(frozen=True)
class NameGateFigures(Record):
    """LeRobotRealAgent's corrections, which run only for a robot named so100_follower."""

    branch = "training"
    kind = "name_gate"

    check: str = figure(TEXT, "the check: 'name_gate'")
    bridge: str | None = figure(
        TEXT, "the bridge driving the arm (when not the gated one)", default=None
    )
    robot_name: str | None = figure(TEXT, "the deployed robot's name", default=None)
    gated_name: str | None = figure(TEXT, "the name the corrections run for", default=None)
    elbow_correction_deg: float = figure(
        "deg", "the elbow correction skipped (0: none)", default=math.nan
    )


TRAINING_FIGURES: tuple[type[Record], ...] = (
    TrainingRateFigures,
    TopSpeedFigures,
    DriveFigures,
    FingerFrictionFigures,
    ObjectMassFigures,
    OriginFigures,
    CameraFovFigures,
    CameraMountFigures,
    NameGateFigures,
)
"""Every check's figures, in the audit's order."""


@dataclass(frozen=True)
class TrainingDetails(Record):
    """Which check, and where each rig value it rests on came from (every check's details:
    the record serves each kind of :data:`TRAINING_FIGURES`)."""

    branch = "training"
    kinds = tuple(r.kind for r in TRAINING_FIGURES)

    check: str = figure(TEXT, "the check")
    provenance: Mapping[str, str] = figure(
        TEXT, "rig key -> given, from ManiSkill, guessed or default", default_factory=dict
    )


def training_records(check: str) -> tuple[type[Record], type[TrainingDetails]]:
    """The (figures, details) records of one check (``control_rate``, ...)."""
    return {r.kind: r for r in TRAINING_FIGURES}[check], TrainingDetails
