"""The rig.toml lines of each joint that LeRobot's calibration file of the arm gives."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from simgap.rig.init.body_range import body_range_evidence
from simgap.safe_names import shown, toml_value


def calibrated_units(
    path: Path,
    model: Path,
    joints: Mapping[str, str],
    dataset: Path,
    key: str,
    recorded: Sequence[str],
) -> dict[str, tuple[list[str], str]]:
    """Per model joint the rig.toml lines LeRobot's calibration gives (``unit``, ``sign``,
    ``offset_rad`` or ``range_rad``: ``calibration.mapping.joint_unit``) and the line saying
    where they came from. Degrees or -100..100 follow the dataset's statistics
    (``body_range_evidence``), degrees where they cannot tell (LeRobot's default since
    0.4.4); an offset within the zero's rounding (1 tick) is left out."""
    from simgap.calibration.mapping import LeRobotMap, gripper_home_rad, joint_unit
    from simgap.evidence.calibration import read_calibration as read
    from simgap.sim.load import joint_ranges
    from simgap.values.calibration import RAD_PER_TICK, norm_mode

    cal = read(path)
    motors = {
        j: next((m for m in (r.removesuffix(".pos"), j) if m in cal), None)
        for j, r in joints.items()
    }
    matched = {j: m for j, m in motors.items() if m is not None}
    ranges = joint_ranges(model, list(matched))
    body = {j: r for j, r in joints.items() if "gripper" not in j.lower()}
    evidence = body_range_evidence(
        dataset, key, body, recorded, {m: dict(vars(cal[m])) for m in matched.values()}
    )
    use_degrees = "looks like -100..100" not in evidence
    out: dict[str, tuple[list[str], str]] = {}
    for j, m in matched.items():
        grip = "gripper" in j.lower()
        mode = norm_mode("gripper" if grip else m, use_degrees)
        lo, hi = ranges[j]
        home = gripper_home_rad(cal[m], lo) if grip else (lo + hi) / 2.0
        u = joint_unit(LeRobotMap(cal[m], mode, home))
        lines = [f'unit = "{u.unit}"']
        where = f"{path.name} {shown(m)}"
        if u.lo_rad is not None and u.hi_rad is not None:
            lines.append(
                f"range_rad = {toml_value([round(u.lo_rad, 6), round(u.hi_rad, 6)])}"
                f"   # {where}: range_min..range_max, drive_mode {cal[m].drive_mode}"
            )
        if u.sign < 0:
            lines.append(f"sign = -1   # {where}: the readings run against the model's axis")
        if u.unit == "deg" and abs(u.offset_rad - home) > RAD_PER_TICK:
            lines.append(
                f"offset_rad = {u.offset_rad:.6g}   # {where}: LeRobot's zero (the "
                f"range's middle) {math.degrees(u.offset_rad - home):+.1f} deg from "
                "the homing pose"
            )
        elif u.unit == "deg" and abs(home) > RAD_PER_TICK:
            lines.append(f"offset_rad = {home:.6g}   # {where}: the model range's centre")
        if grip:
            lines.append("gripper = true")
        note = (
            f"joints.{shown(j)}: unit {u.unit}"
            + (f", sign {u.sign:+.0f}" if u.sign < 0 else "")
            + (
                f", range_rad [{u.lo_rad:.4g}, {u.hi_rad:.4g}]"
                if u.lo_rad is not None
                else f", offset_rad {u.offset_rad:.4g}"
            )
            + f" from the calibration ({where}; homing pose at the "
            + ("closed end" if grip else "model range's centre")
            + ")"
        )
        out[j] = (lines, note)
    return out
