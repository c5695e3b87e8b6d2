"""SO-101 calibration and LeRobot's normalisation formulas (``MotorNormMode``).

A calibration gives each motor ``range_min``/``range_max`` in encoder ticks (the file LeRobot
writes with ``draccus.dump``: ``{"shoulder_pan": {"id": 1, "drive_mode": 0, "homing_offset":
-2047, "range_min": 812, "range_max": 3210}, ...}``). The formulas, as in LeRobot's
``motors_bus.py``, where min/max are the calibrated range:

- ``range_m100_100``: ``(clip(v, min, max) - min) / (max - min) * 200 - 100``
- ``range_0_100``: ``(clip(v, min, max) - min) / (max - min) * 100`` (the gripper, always)
- ``degrees``: ``(v - (min + max) / 2) * 360 / 4095``, no clipping

Unnormalising clips to -100..100 or 0..100 (degrees are not clipped) and casts to ``int``.
``drive_mode`` 1 negates (m100) or mirrors (0..100); degrees ignore it, as in LeRobot.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from simgap.errors import InputError
from simgap.values.calibration import RESOLUTION, MotorCalibration, NormMode
from simgap.values.calibration import normalize as normalize_ticks
from simgap.values.calibration import unnormalize as unnormalize_values
from simgap.values.trace import MOTORS

TICKS_PER_REV = RESOLUTION


def normalize(v: float, cal: MotorCalibration, mode: NormMode) -> float:
    """Raw ticks to the normalised value (``simgap.values.calibration.normalize``, one
    reading)."""
    return float(normalize_ticks(v, cal, mode))


def clip_normalized(x: float, mode: NormMode) -> float:
    """The clip LeRobot applies before unnormalising (degrees are not clipped)."""
    if mode == "range_m100_100":
        return min(max(x, -100.0), 100.0)
    if mode == "range_0_100":
        return min(max(x, 0.0), 100.0)
    return x


def unnormalize(x: float, cal: MotorCalibration, mode: NormMode) -> int:
    """Normalised value to raw ticks, clipping like LeRobot and casting with ``int``
    (``simgap.values.calibration.unnormalize``, one goal)."""
    return int(unnormalize_values(x, cal, mode))


def bounds(cal: MotorCalibration, mode: NormMode) -> tuple[float, float]:
    """The calibrated range in the normalised unit (degrees: the range's ends in degrees)."""
    if mode == "range_m100_100":
        return -100.0, 100.0
    if mode == "range_0_100":
        return 0.0, 100.0
    return normalize(cal.range_min, cal, mode), normalize(cal.range_max, cal, mode)


def default_calibration(
    ranges_rad: Mapping[str, tuple[float, float]], zero_ticks: int = 2048
) -> dict[str, MotorCalibration]:
    """A calibration whose range spans each joint's model range, centred on ``zero_ticks``.

    Args:
        ranges_rad: motor -> (lo, hi) joint range [rad].
        zero_ticks: the tick at the centre of every range.
    """
    out = {}
    for i, (motor, (lo, hi)) in enumerate(ranges_rad.items()):
        half = int(round((hi - lo) / 2.0 * TICKS_PER_REV / (2.0 * math.pi)))
        out[motor] = MotorCalibration(
            id=i + 1,
            drive_mode=0,
            homing_offset=zero_ticks - 4095,
            range_min=zero_ticks - half,
            range_max=zero_ticks + half,
        )
    return out


def save_calibration(path: str | Path, cal: Mapping[str, MotorCalibration]) -> Path:
    """Write LeRobot's calibration JSON."""
    path = Path(path)
    data = {
        m: {
            "id": c.id,
            "drive_mode": c.drive_mode,
            "homing_offset": c.homing_offset,
            "range_min": c.range_min,
            "range_max": c.range_max,
        }
        for m, c in cal.items()
    }
    path.write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    return path


def load_calibration(path: str | Path) -> dict[str, MotorCalibration]:
    """Read LeRobot's calibration JSON; a missing motor or key is named in the error."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            file=path, expected="a LeRobot calibration JSON file", got="no such file"
        ) from None
    except json.JSONDecodeError as e:
        raise InputError(file=path, expected="JSON", got=str(e)) from e
    if not isinstance(raw, dict):
        raise InputError(file=path, expected="a JSON object of motors", got=type(raw).__name__)
    out = {}
    for motor in MOTORS:
        if motor not in raw:
            raise InputError(
                file=path,
                field=motor,
                expected="a calibration for every motor",
                got="nothing",
                fix=f"calibrate; motors are {', '.join(MOTORS)}",
            )
        c = raw[motor]
        try:
            mc = MotorCalibration(
                **{
                    k: int(c[k])
                    for k in ("id", "drive_mode", "homing_offset", "range_min", "range_max")
                }
            )
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(
                file=path,
                field=motor,
                expected="id, drive_mode, homing_offset, range_min, range_max",
                got=c,
            ) from e
        if mc.range_max <= mc.range_min:
            raise InputError(
                file=path,
                field=f"{motor}.range_max",
                expected="range_max > range_min",
                got=mc.range_max,
            )
        out[motor] = mc
    return out
