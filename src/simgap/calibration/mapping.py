"""From LeRobot's recorded values to model joint angles, through the calibration.

A recorded value ``v`` stands for the present position ``ticks_of(v)`` [ticks, homed frame]
(``values.calibration``). The homed frame meets the model at the homing pose: LeRobot's
half-turn homing makes the pose the arm held at calibration read ``HOMING_TICK`` (2047), and
LeRobot asks for that pose to be "the middle of its range of motion", i.e. the centre of the
model joint's range, unless the caller names another (``home_rad``). So

    q(v) = home_rad + axis * (ticks_of(v) - HOMING_TICK) * 2 pi / 4096

with ``axis`` +1 where the servo's counts grow with the model joint's angle (the SO-101 on
MuJoCo Menagerie's model and simgap's fake arm), -1 where they run against it.

``joint_unit`` is the rig.toml mapping a careful user writes for that map: exact for
-100..100 and 0..100 (``m100`` / ``pct`` with ``range_rad``, ``sign`` -1 where the values
run against the model's axis); for degrees ``deg`` with ``sign`` and ``offset_rad``, exact
but for LeRobot's 360 / 4095 scale, which the ``deg`` unit reads as 360 / 4096: 1/4096 of
the angle (0.027 deg at 110 deg from the zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from simgap.units import JointUnit
from simgap.values.calibration import (
    HOMING_TICK,
    RAD_PER_TICK,
    UNIT_OF_MODE,
    MotorCalibration,
    NormMode,
    range_ends,
    ticks_of,
)


@dataclass(frozen=True)
class LeRobotMap:
    """One motor's map from LeRobot's recorded values to a model joint angle.

    Attributes:
        cal: the motor's calibration.
        mode: LeRobot's normalisation mode for it.
        home_rad: model angle of the homing pose [rad].
        axis: +1 where servo counts grow with the model angle, -1 where they fall.
    """

    cal: MotorCalibration
    mode: NormMode
    home_rad: float
    axis: int = 1

    def to_rad(self, values: npt.ArrayLike) -> np.ndarray:
        """Recorded values -> model angles [rad], shape kept."""
        t = ticks_of(values, self.cal, self.mode)
        return self.home_rad + self.axis * (t - HOMING_TICK) * RAD_PER_TICK

    def ticks_to_rad(self, ticks: npt.ArrayLike) -> np.ndarray:
        """Present positions [ticks, homed frame] -> model angles [rad]."""
        t = np.asarray(ticks, dtype=float)
        return self.home_rad + self.axis * (t - HOMING_TICK) * RAD_PER_TICK

    @property
    def range_rad(self) -> tuple[float, float]:
        """The calibrated range in model angles [rad], low end first."""
        a, b = (float(x) for x in self.ticks_to_rad([self.cal.range_min, self.cal.range_max]))
        return (a, b) if a <= b else (b, a)

    @property
    def zero_rad(self) -> float:
        """Where LeRobot's middle (the calibrated range's centre, degrees' zero) lands [rad]."""
        return float(self.ticks_to_rad(self.cal.mid))


def gripper_home_rad(cal: MotorCalibration, closed_rad: float, axis: int = 1) -> float:
    """The homing pose's angle that puts the gripper's closed end at ``closed_rad``: the
    calibration sweep closes the jaws on each other (a hard stop, the model joint's closed
    limit), a better anchor than the half-open pose it was homed at by eye. The closed end
    is ``range_min`` where the counts grow with the model angle (``axis`` +1), else
    ``range_max``."""
    end = cal.range_min if axis > 0 else cal.range_max
    return closed_rad - axis * (end - HOMING_TICK) * RAD_PER_TICK


def joint_unit(m: LeRobotMap) -> JointUnit:
    """The rig.toml mapping of ``m`` (see the module docstring)."""
    unit = UNIT_OF_MODE[m.mode]
    if m.mode == "degrees":
        return JointUnit(unit="deg", sign=float(m.axis), offset_rad=m.zero_rad)
    ends = (-100.0, 100.0) if m.mode == "range_m100_100" else (0.0, 100.0)
    qa, qb = (float(x) for x in m.to_rad(ends))
    if qa < qb:
        return JointUnit(unit=unit, lo_rad=qa, hi_rad=qb)
    return JointUnit(unit=unit, lo_rad=-qa, hi_rad=-qb, sign=-1.0)


def recorded_span(m: LeRobotMap) -> tuple[float, float]:
    """The recorded values at the calibrated range's two ends, low first."""
    a, b = range_ends(m.cal, m.mode)
    return (a, b) if a <= b else (b, a)
