"""LeRobot's motor calibration and its normalisation, as LeRobot 0.6.1 computes it.

A calibration (``evidence.calibration`` reads LeRobot's JSON) gives each motor
``range_min``/``range_max`` [ticks] in the servo's homed frame: LeRobot's half-turn homing
writes ``Homing_Offset`` so that the pose the arm held at calibration ("the middle of its
range") reads ``HOMING_TICK`` (2047 on a 4096-count servo: ``int((4096 - 1) / 2)``). The
normalisation of ``lerobot/motors/motors_bus.py`` (``_normalize`` / ``_unnormalize``), with
min/max the calibrated range and ``max_res = resolution - 1 = 4095``:

- ``range_m100_100``: ``(clip(v, min, max) - min) / (max - min) * 200 - 100``, negated when
  ``drive_mode`` is 1; back: negate, clip to -100..100, ``int((x + 100) / 200 * (max - min)
  + min)``.
- ``range_0_100`` (the gripper, always): ``(clip(v, min, max) - min) / (max - min) * 100``,
  ``100 - x`` when ``drive_mode`` is 1; back: mirror, clip to 0..100, ``int(x / 100 *
  (max - min) + min)``.
- ``degrees``: ``(v - (min + max) / 2) * 360 / max_res``, neither clipped nor affected by
  ``drive_mode``; back: ``int(x * max_res / 360 + mid)``.

Nothing here reads a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from simgap.units import UnitName

NormMode = Literal["range_m100_100", "range_0_100", "degrees"]
NORM_MODES: tuple[str, ...] = ("range_m100_100", "range_0_100", "degrees")
RESOLUTION = 4096
"""Encoder counts per turn of the Feetech STS3215 (``model_resolution_table['sts3215']``)."""
MAX_RES = RESOLUTION - 1
"""LeRobot's ``max_res``: the degrees formula scales by 360 / 4095, not 360 / 4096."""
HOMING_TICK = MAX_RES // 2
"""What the homing pose reads after LeRobot's half-turn homing (``pos - int(max_res / 2)``)."""
RAD_PER_TICK = 2.0 * math.pi / RESOLUTION
"""One encoder count [rad] (the physical angle; LeRobot's degrees are 4095/4096 of it)."""
UNIT_OF_MODE: dict[str, UnitName] = {
    "degrees": "deg",
    "range_m100_100": "m100",
    "range_0_100": "pct",
}
"""The rig.toml ``unit`` a LeRobot normalisation mode is recorded in."""


@dataclass(frozen=True)
class MotorCalibration:
    """One motor's entry of LeRobot's calibration JSON.

    Attributes:
        id: bus id (1..6 on the SO-101).
        drive_mode: 0, or 1 for an axis LeRobot reverses (-100..100 and 0..100 only).
        homing_offset: ticks written to the servo's offset register at calibration.
        range_min: lowest calibrated position [ticks, homed frame].
        range_max: highest calibrated position [ticks, homed frame].
    """

    id: int
    drive_mode: int
    homing_offset: int
    range_min: int
    range_max: int

    @property
    def mid(self) -> float:
        """Centre of the calibrated range [ticks]: LeRobot's zero in degrees."""
        return (self.range_min + self.range_max) / 2.0

    @property
    def span(self) -> int:
        """Width of the calibrated range [ticks]."""
        return self.range_max - self.range_min


@dataclass(frozen=True)
class Calibration:
    """A LeRobot calibration file: motor name -> its calibration, in file order.

    Attributes:
        motors: motor name (``shoulder_pan`` ...) -> ``MotorCalibration``.
        source: the file it was read from (None when built in code).
    """

    motors: Mapping[str, MotorCalibration]
    source: Path | None = None

    def __getitem__(self, motor: str) -> MotorCalibration:
        return self.motors[motor]

    def __contains__(self, motor: object) -> bool:
        return motor in self.motors

    @property
    def names(self) -> tuple[str, ...]:
        """Motor names, in file order."""
        return tuple(self.motors)


def norm_mode(motor: str, use_degrees: bool) -> NormMode:
    """The mode LeRobot's SO follower and leader give a motor: the gripper always 0..100,
    body joints degrees (``use_degrees``, the default since LeRobot 0.4.4) or -100..100."""
    if motor == "gripper":
        return "range_0_100"
    return "degrees" if use_degrees else "range_m100_100"


def normalize(ticks: npt.ArrayLike, cal: MotorCalibration, mode: NormMode) -> np.ndarray:
    """Present positions [ticks] to LeRobot's recorded values, elementwise (shape kept)."""
    v = np.asarray(ticks, dtype=float)
    lo, hi = cal.range_min, cal.range_max
    if mode == "degrees":
        return (v - cal.mid) * 360.0 / MAX_RES
    frac = (np.clip(v, lo, hi) - lo) / (hi - lo)
    if mode == "range_m100_100":
        x = frac * 200.0 - 100.0
        return -x if cal.drive_mode else x
    x = frac * 100.0
    return 100.0 - x if cal.drive_mode else x


def unnormalize(values: npt.ArrayLike, cal: MotorCalibration, mode: NormMode) -> np.ndarray:
    """LeRobot's values to goal positions [ticks] as it writes them: clipped (not degrees)
    and truncated toward zero like Python's ``int``; an integer array, shape kept."""
    x = np.asarray(values, dtype=float)
    lo, hi = cal.range_min, cal.range_max
    if mode == "degrees":
        t = x * MAX_RES / 360.0 + cal.mid
    elif mode == "range_m100_100":
        x = -x if cal.drive_mode else x
        t = (np.clip(x, -100.0, 100.0) + 100.0) / 200.0 * (hi - lo) + lo
    else:
        x = 100.0 - x if cal.drive_mode else x
        t = np.clip(x, 0.0, 100.0) / 100.0 * (hi - lo) + lo
    return np.trunc(t).astype(np.int64)


def ticks_of(values: npt.ArrayLike, cal: MotorCalibration, mode: NormMode) -> np.ndarray:
    """The exact inverse of ``normalize`` inside the calibrated range [ticks, float]: what
    position a recorded value stands for (no clip, no truncation)."""
    x = np.asarray(values, dtype=float)
    lo, hi = cal.range_min, cal.range_max
    if mode == "degrees":
        return x * MAX_RES / 360.0 + cal.mid
    if mode == "range_m100_100":
        x = -x if cal.drive_mode else x
        return (x + 100.0) / 200.0 * (hi - lo) + lo
    x = 100.0 - x if cal.drive_mode else x
    return x / 100.0 * (hi - lo) + lo


def range_ends(cal: MotorCalibration, mode: NormMode) -> tuple[float, float]:
    """The recorded values at ``range_min`` and ``range_max`` (in that order)."""
    a, b = normalize([cal.range_min, cal.range_max], cal, mode)
    return float(a), float(b)
