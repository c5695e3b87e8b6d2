"""Reader of LeRobot's calibration JSON (LeRobot 0.6.1, the format since PR #777) ->
``values.calibration.Calibration``.

LeRobot writes it with ``draccus.dump(dict[str, MotorCalibration])`` to
``$HF_LEROBOT_CALIBRATION/{robots|teleoperators}/<type>/<id>.json``::

    {"shoulder_pan": {"id": 1, "drive_mode": 0, "homing_offset": -2047,
                      "range_min": 812, "range_max": 3210}, ...}

Every motor needs the five integer keys; a range with ``range_max <= range_min`` or a
``drive_mode`` other than 0/1 is refused, naming the motor. The pre-#777 layout (arrays under
``motor_names``, ``start_pos``, ``calib_mode``) is recognised and refused with the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.values.calibration import Calibration, MotorCalibration

KEYS = ("id", "drive_mode", "homing_offset", "range_min", "range_max")
WHERE = (
    "~/.cache/huggingface/lerobot/calibration/robots/<robot type>/<id>.json (the follower) "
    "or .../teleoperators/<teleop type>/<id>.json (the leader)"
)
_OLD = ("motor_names", "start_pos", "calib_mode", "end_pos")


def read_calibration(path: str | Path) -> Calibration:
    """Read one calibration file; errors name the file, the motor and the key.

    Raises:
        InputError: no such file, not JSON, the pre-0.2 layout, a motor without one of
            ``KEYS`` as an integer, ``range_max <= range_min``, ``drive_mode`` not 0 or 1.
    """
    path = Path(path)
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            file=path,
            expected="LeRobot's calibration JSON of the arm",
            got="no such file",
            fix=f"it lies under {WHERE}",
        ) from None
    except IsADirectoryError:
        raise InputError(
            file=path,
            expected="a calibration JSON file",
            got="a folder",
            fix=f"name the <id>.json inside it ({WHERE})",
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(file=path, expected="JSON", got=str(e)) from None
    if not isinstance(raw, dict) or not raw:
        raise InputError(
            file=path,
            expected="a JSON object of motors",
            got=type(raw).__name__ if not isinstance(raw, dict) else "an empty object",
        )
    if any(k in raw for k in _OLD):
        raise InputError(
            file=path,
            expected="LeRobot's per-motor calibration (LeRobot 0.2 and "
            "later: {motor: {id, drive_mode, homing_offset, range_min, "
            "range_max}})",
            got="the older layout (motor_names, start_pos, calib_mode arrays)",
            fix="recalibrate with a current LeRobot (lerobot-calibrate), which "
            "writes the per-motor layout",
        )
    motors: dict[str, MotorCalibration] = {}
    for motor, c in raw.items():
        if not isinstance(c, dict):
            raise InputError(
                file=path, field=str(motor), expected="an object with " + ", ".join(KEYS), got=c
            )
        missing = [k for k in KEYS if k not in c]
        bad = [k for k in KEYS if k in c and (isinstance(c[k], bool) or not isinstance(c[k], int))]
        if missing or bad:
            key = (missing or bad)[0]
            raise InputError(
                file=path,
                field=f"{motor}.{key}",
                expected="an integer (" + ", ".join(KEYS) + " per motor)",
                got="nothing" if missing else f"{type(c[key]).__name__} {c[key]!r}",
                fix="recalibrate with lerobot-calibrate, or restore the key",
            )
        mc = MotorCalibration(**{k: int(c[k]) for k in KEYS})
        if mc.range_max <= mc.range_min:
            raise InputError(
                file=path,
                field=f"{motor}.range_max",
                expected=f"range_max > range_min ({mc.range_min})",
                got=mc.range_max,
                fix="recalibrate the motor: move it through its "
                "whole range while lerobot-calibrate records",
            )
        if mc.drive_mode not in (0, 1):
            raise InputError(
                file=path, field=f"{motor}.drive_mode", expected="0 or 1", got=mc.drive_mode
            )
        motors[str(motor)] = mc
    return Calibration(motors=motors, source=path)
