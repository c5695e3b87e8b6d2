"""The body branch's figures: joint zero offsets (with the camera mount fitted alongside) and
the model's frame origin against the reference placements are measured from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite, sig


@dataclass(frozen=True)
class ZeroOffsetsFigures(Record):
    """Each identifiable joint's zero offset from a static object seen from several poses,
    fitted through the model's forward kinematics, with the camera's mounting error."""

    branch = "body"
    kind = "zero_offsets"

    joint_offsets_deg: Mapping[str, float] = figure(
        "deg", "each identifiable joint's zero offset (add to its offset)", default_factory=dict
    )
    joint_offsets_ci95_deg: Mapping[str, float] = figure(
        "deg", "half-width of each offset's 95 % interval", default_factory=dict
    )
    joint_offsets_interval_deg: Mapping[str, tuple[float, float]] = figure(
        "deg", "each offset's 95 % interval", default_factory=dict
    )
    largest_offset_deg: float | None = figure("deg", "the largest offset's size", default=None)
    largest_offset_joint: str | None = figure(
        TEXT, "the joint with the largest offset", default=None
    )
    not_identifiable: tuple[str, ...] = figure(
        TEXT, "chain joints whose offset one static object cannot separate", default=()
    )
    object_world_m: tuple[float, ...] = figure(
        "m", "the object's fitted world position", default=()
    )
    camera_mount_offset_m: tuple[float, ...] | None = figure(
        "m", "the camera mount's fitted position error (null: not fitted)", default=None
    )
    camera_mount_rotation_deg: tuple[float, ...] | None = figure(
        "deg", "the camera mount's fitted rotation error (null: not fitted)", default=None
    )
    residual_rms_m: float = figure("m", "RMS camera-frame residual after the fit", default=math.nan)
    residual_rms_before_m: float = figure(
        "m", "RMS residual with no offsets and no mount error", default=math.nan
    )
    n_poses: int | None = figure(UNITLESS, "poses used", default=None)

    def headline(self) -> Headline | None:
        """The largest offset with its 95 % half-width and its joint."""
        largest, joint = finite(self.largest_offset_deg), self.largest_offset_joint
        if largest is None:
            return None
        ci = finite(self.joint_offsets_ci95_deg.get(joint)) if joint else None
        half = f" +- {sig(ci)}" if ci is not None else ""
        return Headline(
            f"largest joint zero offset {sig(largest)}{half} deg{f' ({joint})' if joint else ''}",
            largest,
            None,
        )


@dataclass(frozen=True)
class ZeroOffsetsDetails(Record):
    """What the body report plots: the offsets with their 95 % half-widths."""

    branch = "body"
    kind = "zero_offsets"

    offsets_deg: Mapping[str, float] = figure(
        "deg", "each identifiable joint's zero offset", default_factory=dict
    )
    ci95_deg: Mapping[str, float] = figure(
        "deg", "half-width of each offset's 95 % interval", default_factory=dict
    )


@dataclass(frozen=True)
class Convert(Record):
    """How to convert a hand-measured placement to model coordinates, as formulas."""

    x_model_m: str = figure(TEXT, "x in model coordinates from x measured [m]")
    y_model_m: str = figure(TEXT, "y in model coordinates from y measured [m]")


@dataclass(frozen=True)
class FrameOriginFigures(Record):
    """Where the model measures positions from, against the reference point placements are
    measured from by hand."""

    branch = "body"
    kind = "frame_origin"

    origin_offset_m: float = figure(
        "m", "horizontal distance from the model's origin to the reference"
    )
    reference_m: tuple[float, ...] = figure("m", "the reference in model coordinates")
    reference_name: str = figure(TEXT, "the reference's label")
    base_axis_m: tuple[float, ...] = figure(
        "m", "the model's base rotation axis (its first joint's anchor; null without a camera)"
    )
    base_axis_joint: str = figure(TEXT, "that joint")
    reference_to_base_axis_m: float = figure(
        "m", "horizontal distance from the reference to that axis"
    )
    convert: Convert | None = figure(TEXT, "the conversion to apply", default=None)
