"""``[joints.<name>]`` of a rig file: each model joint, its recorded name and its unit."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.fields import check_section, pair
from simgap.rig.model import JointMap
from simgap.units import UNIT_NAMES, JointUnit


def read_joints(raw: Mapping[str, Any], source: Path | None) -> list[JointMap]:
    """The ``[joints.<name>]`` tables in file order, each checked against the schema, its
    unit and range read into a ``JointUnit``."""
    joints_raw = raw.get("joints")
    if not isinstance(joints_raw, Mapping) or not joints_raw:
        raise InputError(
            file=source,
            field="joints",
            expected="at least one [joints.<name>] table",
            got=joints_raw,
            fix="map each model joint, e.g. [joints.shoulder_pan]",
        )
    joints: list[JointMap] = []
    for jname, jraw in joints_raw.items():
        if not isinstance(jraw, Mapping):
            raise InputError(file=source, field=f"joints.{jname}", expected="a table", got=jraw)
        check_section(jraw, f"joints.{jname}", "joint", source)
        unit = jraw.get("unit", "rad")
        if unit not in UNIT_NAMES:
            raise InputError(
                file=source,
                field=f"joints.{jname}.unit",
                expected=f"one of {', '.join(UNIT_NAMES)}",
                got=unit,
            )
        lo = hi = None
        if "range_rad" in jraw:
            lo, hi = pair(jraw["range_rad"], source, f"joints.{jname}.range_rad")
        try:
            ju = JointUnit(
                unit=unit,
                lo_rad=lo,
                hi_rad=hi,
                ticks_per_rev=int(jraw.get("ticks_per_rev", 4096)),
                zero_ticks=float(jraw.get("zero_ticks", 2048.0)),
                sign=float(jraw.get("sign", 1.0)),
                offset_rad=float(jraw.get("offset_rad", 0.0)),
            )
        except InputError as e:
            raise InputError(
                file=source,
                field=f"joints.{jname}.{e.field}",
                expected=e.expected,
                got=e.got,
                fix=e.fix,
            ) from e
        joints.append(
            JointMap(
                name=str(jname),
                recorded=str(jraw.get("recorded", jname)),
                unit=ju,
                gripper=bool(jraw.get("gripper", False)),
            )
        )
    return joints
