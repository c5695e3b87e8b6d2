"""The calibration branch's figures: a LeRobot calibration against the model, two
calibrations compared, and the leader/follower drift. Errors at the gripper are in mm."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Record, figure

_Pair = tuple[float, float]


@dataclass(frozen=True)
class RigUnit(Record):
    """The mapping a careful user writes for the joint in rig.toml."""

    unit: str = figure(TEXT, "the recorded unit (rad, deg, m100, pct, ticks)")
    sign: float = figure(UNITLESS, "+1, or -1 when the recorded axis runs opposite")
    offset_rad: float = figure("rad", "added after scaling")
    range_rad: _Pair | None = figure(
        "rad", "the model angles at a normalised range's ends", default=None
    )


@dataclass(frozen=True)
class JointCheck(Record):
    """One joint's calibration against the model."""

    motor: str = figure(TEXT, "the calibration's motor")
    mode: str = figure(TEXT, "LeRobot's normalisation mode")
    drive_mode: int = figure(UNITLESS, "the calibration's drive mode")
    zero_offset_deg: float = figure("deg", "LeRobot's middle against the homing pose")
    zero_offset_interval_deg: _Pair = figure("deg", "its 95 % interval")
    model_range_deg: _Pair = figure("deg", "the MJCF range")
    calibrated_range_deg: _Pair = figure("deg", "the calibrated range in model angles")
    past_limits_deg: _Pair = figure("deg", "how far it runs below and above the model's")
    short_of_model_deg: float = figure("deg", "the model's span minus the calibrated span")
    reversed: bool = figure(TEXT, "drive mode 1 where LeRobot applies it")
    rig_error_deg: float | None = figure(
        "deg", "the rig's mapping against the calibration's, worst over the range", default=None
    )
    error_at_gripper_mm: float | None = figure("mm", "the zero offset at the gripper", default=None)
    reversed_error_at_gripper_mm: float | None = figure(
        "mm", "a reversed joint read at its range ends, at the gripper", default=None
    )
    rig_unit: RigUnit | None = figure(TEXT, "the mapping to write in rig.toml", default=None)
    problems: tuple[str, ...] = figure(TEXT, "one sentence per problem", default=())


@dataclass(frozen=True)
class CheckFigures(Record):
    """A LeRobot calibration against the model: zeros, ranges and drive modes per joint."""

    branch = "calibration"
    kind = "check"

    joints: Mapping[str, JointCheck] = figure(TEXT, "each joint, rig order", default_factory=dict)
    use_degrees: bool = figure(TEXT, "body joints read as degrees (else -100..100)", default=False)
    ee_site: str | None = figure(TEXT, "the end-effector site the mm are measured at", default=None)
    error_at_gripper_mm: float | None = figure(
        "mm", "every zero offset at once at the gripper, at the homing pose", default=None
    )
    largest_error_at_gripper_mm: float | None = figure(
        "mm", "the largest error at the gripper of a joint with a problem", default=None
    )
    largest_zero_offset_deg: float | None = figure(
        "deg", "the largest zero offset's size", default=None
    )
    largest_zero_offset_joint: str | None = figure(TEXT, "its joint", default=None)
    unmatched_motors: tuple[str, ...] = figure(TEXT, "motors no rig joint maps to", default=())
    zero_tolerance_deg: float | None = figure("deg", "zero offset tolerated", default=None)
    limit_tolerance_deg: float | None = figure("deg", "range overrun tolerated", default=None)


@dataclass(frozen=True)
class CheckDetails(Record):
    """Where the checked calibration came from."""

    branch = "calibration"
    kind = "check"

    source: str | None = figure(TEXT, "the calibration file", default=None)


@dataclass(frozen=True)
class MotorShift(Record):
    """What moved for one motor between the two calibrations."""

    changed: tuple[str, ...] = figure(TEXT, "the keys whose values differ")
    zero_shift_deg: float | None = figure(
        "deg", "how far LeRobot's zero moved (b - a)", default=None
    )
    span_change_deg: float | None = figure(
        "deg", "the calibrated span's change (b - a)", default=None
    )
    error_at_gripper_mm: float | None = figure("mm", "the zero shift at the gripper", default=None)
    moved: bool = figure(TEXT, "beyond rounding", default=False)


@dataclass(frozen=True)
class CompareFigures(Record):
    """Two calibrations compared, motor by motor."""

    branch = "calibration"
    kind = "compare"

    motors: Mapping[str, MotorShift] = figure(TEXT, "each motor", default_factory=dict)
    moved: tuple[str, ...] = figure(TEXT, "the motors that moved", default=())
    largest_zero_shift_deg: float | None = figure(
        "deg", "the largest zero shift's size", default=None
    )
    a: str = figure(TEXT, "the first calibration's name", default="")
    b: str = figure(TEXT, "the second calibration's name", default="")


@dataclass(frozen=True)
class JointDrift(Record):
    """One joint's follower-minus-leader offset on still segments."""

    offset_deg: float = figure("deg", "the load-independent part")
    load_deg: float = figure("deg", "the gravity part at the median segment's torque")
    offset_interval_deg: _Pair | None = figure(
        "deg", "its 95 % interval (null: one segment)", default=None
    )
    compliance_deg_per_nm: float | None = figure(
        "deg/(N m)", "the gravity part's slope", default=None
    )
    n_segments: int = figure(UNITLESS, "still segments used", default=0)
    offset_at_gripper_mm: float | None = figure(
        "mm", "this offset alone at the gripper", default=None
    )


@dataclass(frozen=True)
class DriftFigures(Record):
    """Leader/follower drift: where the follower stands off the leader's command."""

    branch = "calibration"
    kind = "drift"

    joints: Mapping[str, JointDrift] = figure(TEXT, "each joint, rig order", default_factory=dict)
    n_segments: int | None = figure(UNITLESS, "still segments found", default=None)
    offset_at_gripper_mm: float | None = figure(
        "mm", "every offset at once at the median still pose", default=None
    )
    load_at_gripper_mm: float | None = figure(
        "mm", "every gravity part at once there", default=None
    )
    tolerance_deg: float | None = figure("deg", "offset tolerated per joint", default=None)
