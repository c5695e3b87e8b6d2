"""Two LeRobot calibrations of one arm (two dates) or of two arms, compared motor by motor.

What moved: a motor's ``id``, ``drive_mode``, ``homing_offset`` (re-homed: the servo's zero
was set again, as after a motor swap), and its range. A range whose middle moved moves
LeRobot's zero by ``(mid_b - mid_a)`` ticks: the same pose reads that much differently in
degrees (and in -100..100 by the span's share), so a policy recorded with one calibration and
run with the other lands that far off. In the homed frame a re-homed motor's range can sit
where it did, so the middle's shift is only a zero offset when the homing pose was the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simgap.values.calibration import (
    RAD_PER_TICK,
    Calibration,
    MotorCalibration,
)

MOVED_TICKS = 2.0
"""A range end or middle moving by more than this [ticks] is reported (the integer rounding
of two calibrations: one tick each)."""


@dataclass(frozen=True)
class MotorChange:
    """What moved for one motor between calibration ``a`` and ``b``.

    Attributes:
        motor: the motor name.
        a, b: its calibration in each file (None: absent from that file).
        changed: the keys whose values differ (``id``, ``drive_mode``, ...).
        zero_shift_rad: how far LeRobot's zero (the range's middle) moved [rad] (b - a).
        span_change_rad: the calibrated span's change [rad] (b - a).
    """

    motor: str
    a: MotorCalibration | None
    b: MotorCalibration | None
    changed: tuple[str, ...]
    zero_shift_rad: float | None
    span_change_rad: float | None

    @property
    def moved(self) -> bool:
        """Whether anything but rounding moved."""
        if self.a is None or self.b is None:
            return True
        big = (
            self.zero_shift_rad is not None
            and abs(self.zero_shift_rad) > MOVED_TICKS * RAD_PER_TICK
        ) or (
            self.span_change_rad is not None
            and abs(self.span_change_rad) > MOVED_TICKS * RAD_PER_TICK
        )
        return big or any(k in self.changed for k in ("id", "drive_mode", "homing_offset"))

    def sentence(self) -> str:
        """One line: what moved, in degrees and ticks."""
        if self.a is None or self.b is None:
            return f"{self.motor}: only in {'b' if self.a is None else 'a'}"
        parts = []
        for k in ("id", "drive_mode", "homing_offset"):
            if k in self.changed:
                parts.append(f"{k} {getattr(self.a, k)} -> {getattr(self.b, k)}")
        tick = MOVED_TICKS * RAD_PER_TICK
        if self.zero_shift_rad is not None and abs(self.zero_shift_rad) > tick:
            parts.append(
                f"zero moved {math.degrees(self.zero_shift_rad):+.1f} deg "
                f"({self.b.mid - self.a.mid:+.1f} ticks)"
            )
        if self.span_change_rad is not None and abs(self.span_change_rad) > tick:
            parts.append(f"span {math.degrees(self.span_change_rad):+.1f} deg")
        return f"{self.motor}: " + (", ".join(parts) if parts else "unchanged")


def compare_calibrations(a: Calibration, b: Calibration) -> tuple[MotorChange, ...]:
    """Every motor of either file, in ``a``'s order then ``b``'s new ones."""
    out = []
    for motor in (*a.names, *(n for n in b.names if n not in a)):
        ca, cb = a.motors.get(motor), b.motors.get(motor)
        if ca is None or cb is None:
            out.append(MotorChange(motor, ca, cb, ("present",), None, None))
            continue
        changed = tuple(
            k
            for k in ("id", "drive_mode", "homing_offset", "range_min", "range_max")
            if getattr(ca, k) != getattr(cb, k)
        )
        out.append(
            MotorChange(
                motor,
                ca,
                cb,
                changed,
                (cb.mid - ca.mid) * RAD_PER_TICK,
                (cb.span - ca.span) * RAD_PER_TICK,
            )
        )
    return tuple(out)
