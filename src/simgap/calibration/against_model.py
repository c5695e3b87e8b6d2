"""A LeRobot calibration held against the rig's model, joint by joint.

For each rig joint whose motor the calibration holds (the recorded name without ``.pos``,
else the joint's name), through ``mapping.LeRobotMap`` (homing pose at the model range's
centre unless stated):

- **zero** (body joints): where LeRobot's middle (the calibrated range's centre: degrees'
  zero, -100..100's 0) lands against the homing pose, ``(mid - 2047)`` ticks; its 95%
  interval is the integer rounding of the range ends and of the homing offset (1 tick,
  0.088 deg). The homing pose is placed by eye, so an offset inside ``ZERO_TOL_DEG`` is not
  reported.
- **range**: the calibrated range in model angles against the MJCF range: how far it runs
  past a limit (a real arm cannot: the zero is off) and how much of the model's range it
  leaves out (LeRobot writes ``range_min``/``range_max`` into the servo's position limits, so
  the servo stops there).
- **sign**: ``drive_mode`` 1 reverses -100..100 and 0..100 readings against the servo (and,
  with the axis +1, against the model); degrees ignore it. ``calibrate()`` writes 0 for every
  motor, so a 1 was set by hand or by other software.
- **the rig's own mapping**: the largest difference over the calibrated range between what
  the rig's ``[joints]`` make of a recorded value and what the calibration does.

Each offset is also given at the gripper [mm] through the model's forward kinematics
(``sim.fk``) at the homing pose; a reversed joint at the calibrated range's ends.
The gripper is anchored at its closed end instead (``mapping.gripper_home_rad``): 0 % (its
``range_min``) is the model joint's closed limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from simgap.calibration.mapping import LeRobotMap, gripper_home_rad, joint_unit, recorded_span
from simgap.errors import InputError
from simgap.rig import Rig
from simgap.units import JointUnit
from simgap.values.calibration import RAD_PER_TICK, Calibration, NormMode, norm_mode

if TYPE_CHECKING:
    from simgap.sim.fk import ForwardKinematics

ZERO_TOL_DEG = 5.0
"""LeRobot's zero closer than this to the homing pose [deg] is within how well a pose is
placed by eye ("the middle of its range of motion")."""
LIMIT_TOL_DEG = 5.0
"""A calibrated range past a model limit by less than this [deg] is the model's slack."""
SHORT_TOL_DEG = 20.0
"""A calibrated range short of the model's by more than this [deg] leaves part of what the
model (and a policy trained in it) reaches behind the servo's position limits."""
RIG_TOL_DEG = 0.5
"""The rig's mapping off the calibration's by more than this [deg] misreads the joint."""
NOTES = (
    "The homing pose (what reads 2047 after LeRobot's half-turn homing) is taken at each "
    "joint's range centre, where LeRobot asks the arm to be held; servo counts are taken "
    "to grow with the model's angle unless an axis is given as -1.",
)
INTERVAL_TICKS = 1.0
"""Half-width of the zero's 95% interval [ticks]: integer range ends and homing offset."""


@dataclass(frozen=True)
class JointCalibrationCheck:
    """One joint's calibration against the model (angles [rad], distances [m]).

    Attributes:
        joint: the model joint.
        motor: the calibration's motor.
        mode: LeRobot's normalisation mode for it.
        drive_mode: the calibration's drive mode.
        model_range_rad: the MJCF range (lo, hi).
        calibrated_range_rad: the calibrated range in model angles (lo, hi).
        past_limits_rad: how far the calibrated range runs below lo and above hi (>= 0).
        short_rad: the model's span minus the calibrated span (> 0: the range is shorter).
        zero_offset_rad: LeRobot's middle against the homing pose.
        zero_ci95_rad: half-width of its 95% interval.
        reversed: drive_mode 1 in a mode where LeRobot applies it.
        rig_error_rad: the rig's mapping against the calibration's, largest over the range
            (None: the rig does not map this joint from the same unit).
        rig_unit: the mapping a careful user writes (``mapping.joint_unit``).
        error_at_gripper_m: the zero offset at the gripper (None: no end-effector site, or
            the joint does not move it).
        reversed_error_at_gripper_m: a reversed joint read at its range ends, at the gripper.
        problems: one sentence per problem found.
    """

    joint: str
    motor: str
    mode: NormMode
    drive_mode: int
    model_range_rad: tuple[float, float]
    calibrated_range_rad: tuple[float, float]
    past_limits_rad: tuple[float, float]
    short_rad: float
    zero_offset_rad: float
    zero_ci95_rad: float
    reversed: bool
    rig_error_rad: float | None
    rig_unit: JointUnit
    error_at_gripper_m: float | None = None
    reversed_error_at_gripper_m: float | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class CalibrationCheck:
    """Every matched joint's check, and the offsets together at the gripper.

    Attributes:
        joints: per joint, rig order.
        use_degrees: whether the body joints were read as degrees (else -100..100).
        ee: the end-effector site the millimetres are measured at (None: none given).
        error_at_gripper_m: every zero offset at once, at the homing pose [m].
        unmatched: calibration motors no rig joint maps to.
        source: the calibration file.
        notes: what the check assumed, one sentence each.
    """

    joints: tuple[JointCalibrationCheck, ...]
    use_degrees: bool
    ee: str | None
    error_at_gripper_m: float | None
    unmatched: tuple[str, ...] = ()
    source: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def problems(self) -> list[str]:
        """Every joint's problems, joint-prefixed."""
        return [f"{j.joint}: {p}" for j in self.joints for p in j.problems]


def motor_of(rig_joint_recorded: str, joint: str, cal: Calibration) -> str | None:
    """The calibration motor a rig joint reads: its recorded name without ``.pos``, else
    the model joint's name."""
    for name in (rig_joint_recorded.removesuffix(".pos"), joint):
        if name in cal:
            return name
    return None


def uses_degrees(rig: Rig) -> bool:
    """Whether the rig reads the body joints as LeRobot's degrees (no ``m100`` joint)."""
    return not any(j.unit.unit == "m100" for j in rig.joints if not j.gripper)


def check_against_model(
    cal: Calibration,
    rig: Rig,
    *,
    use_degrees: bool | None = None,
    axes: Mapping[str, int] | None = None,
    home_rad: Mapping[str, float] | None = None,
) -> CalibrationCheck:
    """Hold ``cal`` against ``rig``'s model (see the module docstring).

    Args:
        cal: the calibration (``evidence.calibration.read_calibration``).
        rig: the rig: its model, joints, units and end-effector site.
        use_degrees: LeRobot's ``use_degrees`` of the recording (None: from the rig's units).
        axes: model joint -> +1 / -1, where servo counts run with / against the model's axis
            (default +1).
        home_rad: model joint -> the homing pose's angle [rad] (default: the range centre).

    Raises:
        InputError: no rig joint maps to a motor of the calibration.
    """
    from simgap.sim.load import joint_ranges

    deg = uses_degrees(rig) if use_degrees is None else use_degrees
    pairs = [(jm, motor_of(jm.recorded, jm.name, cal)) for jm in rig.joints]
    matched = [(jm, m) for jm, m in pairs if m is not None]
    if not matched:
        raise InputError(
            file=cal.source,
            expected="motors named like the rig's joints ("
            + ", ".join(j.recorded.removesuffix(".pos") for j in rig.joints)
            + ")",
            got=", ".join(cal.names),
            fix="pass the calibration of this arm",
        )
    ranges = joint_ranges(rig.model_path, [jm.name for jm, _ in matched])
    axis = {jm.name: int((axes or {}).get(jm.name, 1)) for jm, _ in matched}
    home = {j: (lo + hi) / 2.0 for j, (lo, hi) in ranges.items()}
    for jm, m in matched:
        if jm.gripper:
            home[jm.name] = gripper_home_rad(cal[m], ranges[jm.name][0], axis[jm.name])
    home.update(home_rad or {})
    maps = {
        jm.name: LeRobotMap(
            cal[m], norm_mode("gripper" if jm.gripper else m, deg), home[jm.name], axis[jm.name]
        )
        for jm, m in matched
    }
    fk = _fk(rig)
    ref = np.array([sum(ranges[j]) / 2.0 if j in ranges else 0.0 for j in rig.joint_names])
    checks = []
    for jm, motor in matched:
        checks.append(
            _joint(
                jm.name,
                motor,
                maps[jm.name],
                ranges[jm.name],
                jm.unit,
                jm.gripper,
                fk,
                ref,
                rig.joint_names,
            )
        )
    total = None
    if fk is not None:
        shifted = ref.copy()
        for c in checks:
            shifted[rig.joint_names.index(c.joint)] += c.zero_offset_rad
        total = _dist(fk, ref, shifted)
    used = {m for _, m in matched}
    return CalibrationCheck(
        joints=tuple(checks),
        use_degrees=deg,
        ee=rig.ee_site,
        error_at_gripper_m=total,
        unmatched=tuple(m for m in cal.names if m not in used),
        source=None if cal.source is None else str(cal.source),
        notes=NOTES,
    )


def _fk(rig: Rig) -> ForwardKinematics | None:
    if rig.ee_site is None:
        return None
    from simgap.sim.fk import ForwardKinematics

    return ForwardKinematics(rig.model_path, rig.joint_names, rig.ee_site)


def _dist(fk: ForwardKinematics, a: np.ndarray, b: np.ndarray) -> float:
    p = fk.positions(np.stack([a, b]))
    return float(np.linalg.norm(p[1] - p[0]))


def _joint(
    joint: str,
    motor: str,
    m: LeRobotMap,
    model_range: tuple[float, float],
    unit: JointUnit,
    gripper: bool,
    fk: ForwardKinematics | None,
    ref: np.ndarray,
    names: tuple[str, ...],
) -> JointCalibrationCheck:
    lo_m, hi_m = model_range
    lo_c, hi_c = m.range_rad
    past = (max(0.0, lo_m - lo_c), max(0.0, hi_c - hi_m))
    short = (hi_m - lo_m) - (hi_c - lo_c)
    zero = m.zero_rad - m.home_rad
    rev = bool(m.cal.drive_mode) and m.mode != "degrees"
    rig_err = None
    if unit.unit == joint_unit(m).unit:
        a, b = recorded_span(m)
        v = np.linspace(a, b, 21)
        rig_err = float(np.max(np.abs(unit.to_rad(v) - m.to_rad(v))))
    k = names.index(joint)
    at_grip = rev_grip = None
    if fk is not None and not gripper:
        shifted = ref.copy()
        shifted[k] += zero
        at_grip = _dist(fk, ref, shifted)
        if rev:
            worst = 0.0
            for end in (lo_c, hi_c):
                a_ = ref.copy()
                b_ = ref.copy()
                a_[k], b_[k] = end, 2.0 * m.zero_rad - end  # read mirrored about the zero
                worst = max(worst, _dist(fk, a_, b_))
            rev_grip = worst
    problems = []
    tol = math.radians
    if abs(zero) > max(tol(ZERO_TOL_DEG), INTERVAL_TICKS * RAD_PER_TICK) and not gripper:
        problems.append(
            f"LeRobot's zero lands {math.degrees(zero):+.1f} deg from the homing "
            "pose (the model's range centre)"
        )
    if max(past) > tol(LIMIT_TOL_DEG):
        side = "lower" if past[0] >= past[1] else "upper"
        problems.append(
            f"the calibrated range runs {math.degrees(max(past)):.1f} deg past the "
            f"model's {side} limit"
        )
    if short > tol(SHORT_TOL_DEG):
        problems.append(
            f"the calibrated range is {math.degrees(short):.1f} deg shorter than the "
            "model's: the servo's position limits stop the joint there"
        )
    if rev:
        what = "0 % open, 100 % closed" if gripper else "its readings run against the axis"
        problems.append(f"drive_mode 1 reverses it ({what}); lerobot-calibrate writes 0")
    if rig_err is not None and rig_err > tol(RIG_TOL_DEG):
        problems.append(
            f"the rig's mapping reads it up to {math.degrees(rig_err):.1f} deg off "
            "the calibration's"
        )
    return JointCalibrationCheck(
        joint=joint,
        motor=motor,
        mode=m.mode,
        drive_mode=m.cal.drive_mode,
        model_range_rad=model_range,
        calibrated_range_rad=(lo_c, hi_c),
        past_limits_rad=past,
        short_rad=short,
        zero_offset_rad=zero,
        zero_ci95_rad=INTERVAL_TICKS * RAD_PER_TICK,
        reversed=rev,
        rig_error_rad=rig_err,
        rig_unit=joint_unit(m),
        error_at_gripper_m=at_grip,
        reversed_error_at_gripper_m=rev_grip,
        problems=tuple(problems),
    )


def at_gripper(rig: Rig, offsets_rad: Mapping[str, float]) -> dict[str, float]:
    """Each joint's offset [rad] alone at the gripper [m], at the homing pose (the model
    ranges' centres), through the model's forward kinematics; {} without an ee site."""
    fk = _fk(rig)
    if fk is None:
        return {}
    from simgap.sim.load import joint_ranges

    ranges = joint_ranges(rig.model_path, list(rig.joint_names))
    ref = np.array([(lo + hi) / 2.0 for lo, hi in ranges.values()])
    out = {}
    for j, off in offsets_rad.items():
        if j in rig.joint_names:
            shifted = ref.copy()
            shifted[rig.joint_names.index(j)] += off
            out[j] = _dist(fk, ref, shifted)
    return out
