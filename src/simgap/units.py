"""Unit conversions at the boundary: recorded units in, SI (radians) out, and back.

Recorded joint values arrive in one of these units (names used in ``rig.toml``):

- ``rad``: radians.
- ``deg``: degrees (LeRobot's ``use_degrees=True`` body joints).
- ``ticks``: raw servo encoder counts, ``ticks_per_rev`` per turn (4096 on the STS3215),
  centred on ``zero_ticks`` (2048 by default).
- ``m100``: LeRobot's ``RANGE_M100_100`` normalisation, -100..100 over the calibrated range
  ``[lo_rad, hi_rad]``.
- ``pct``: LeRobot's ``RANGE_0_100`` (the gripper), 0..100 over ``[lo_rad, hi_rad]``.

Each conversion also applies an optional ``sign`` (+1 or -1) and ``offset_rad`` so that a
recorded zero that differs from the model's zero maps onto the model joint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError

UnitName = Literal["rad", "deg", "ticks", "m100", "pct"]
UNIT_NAMES: tuple[str, ...] = ("rad", "deg", "ticks", "m100", "pct")

STS3215_TICKS_PER_REV = 4096
"""Encoder counts per revolution of the Feetech STS3215 (the SO-101's servo)."""

ENCODER_RESOLUTION_RAD = 2.0 * math.pi / STS3215_TICKS_PER_REV
"""One STS3215 encoder count in radians (about 1.53 mrad): the default noise floor."""


@dataclass(frozen=True)
class JointUnit:
    """How one recorded joint channel maps to a model joint angle.

    Attributes:
        unit: one of ``UNIT_NAMES``.
        lo_rad: model angle [rad] at the low end of a normalised range (``m100``, ``pct``).
        hi_rad: model angle [rad] at the high end of a normalised range.
        ticks_per_rev: encoder counts per turn (``ticks`` only).
        zero_ticks: encoder count that corresponds to the model's zero (``ticks`` only).
        sign: +1, or -1 when the recorded axis runs opposite to the model's.
        offset_rad: added after scaling [rad]; model = sign * scaled + offset.
    """

    unit: UnitName = "rad"
    lo_rad: float | None = None
    hi_rad: float | None = None
    ticks_per_rev: int = STS3215_TICKS_PER_REV
    zero_ticks: float = 2048.0
    sign: float = 1.0
    offset_rad: float = 0.0

    def __post_init__(self) -> None:
        if self.unit not in UNIT_NAMES:
            raise InputError(
                field="unit",
                expected=f"one of {', '.join(UNIT_NAMES)}",
                got=self.unit,
                fix="set the joint's unit in rig.toml to a known unit",
            )
        if self.unit in ("m100", "pct") and (self.lo_rad is None or self.hi_rad is None):
            raise InputError(
                field="range_rad",
                expected=f"a [lo, hi] range in radians for unit '{self.unit}'",
                got="nothing",
                fix="add range_rad = [lo, hi] to the joint in rig.toml (the calibrated range)",
            )
        if self.sign not in (1.0, -1.0):
            raise InputError(field="sign", expected="+1 or -1", got=self.sign)

    def to_rad(self, values: npt.ArrayLike) -> np.ndarray:
        """Convert recorded values to model radians; shape is kept."""
        v = np.asarray(values, dtype=float)
        if self.unit == "rad":
            scaled = v
        elif self.unit == "deg":
            scaled = np.deg2rad(v)
        elif self.unit == "ticks":
            scaled = (v - self.zero_ticks) * (2.0 * math.pi / self.ticks_per_rev)
        elif self.unit == "m100":
            assert self.lo_rad is not None and self.hi_rad is not None
            scaled = self.lo_rad + (v + 100.0) / 200.0 * (self.hi_rad - self.lo_rad)
        else:  # pct
            assert self.lo_rad is not None and self.hi_rad is not None
            scaled = self.lo_rad + v / 100.0 * (self.hi_rad - self.lo_rad)
        return self.sign * scaled + self.offset_rad

    def from_rad(self, radians: npt.ArrayLike) -> np.ndarray:
        """Convert model radians back to the recorded unit; the inverse of ``to_rad``."""
        r = (np.asarray(radians, dtype=float) - self.offset_rad) * self.sign
        if self.unit == "rad":
            return r
        if self.unit == "deg":
            return np.rad2deg(r)
        if self.unit == "ticks":
            return r / (2.0 * math.pi / self.ticks_per_rev) + self.zero_ticks
        assert self.lo_rad is not None and self.hi_rad is not None
        frac = (r - self.lo_rad) / (self.hi_rad - self.lo_rad)
        if self.unit == "m100":
            return frac * 200.0 - 100.0
        return frac * 100.0

    def rad_per_unit(self) -> float:
        """Size of one recorded unit in radians (for noise floors quoted in recorded units)."""
        return float(abs(self.to_rad(1.0) - self.to_rad(0.0)))


def deg(x: npt.ArrayLike) -> np.ndarray:
    """Degrees to radians."""
    return np.deg2rad(np.asarray(x, dtype=float))


def ms(x: float) -> float:
    """Milliseconds to seconds."""
    return x / 1000.0
