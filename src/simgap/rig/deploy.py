"""``[deploy]`` of a rig file: how the policy runs on the arm, with LeRobot's
``max_relative_target`` per joint."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.model import Deploy, JointMap
from simgap.rig.schema import NUM


def read_deploy(d: Mapping[str, Any], joints: list[JointMap], source: Path | None) -> Deploy:
    """``[deploy]`` (already checked against the schema) as a ``Deploy``; ``joints`` in rig
    order, for ``max_relative_target``."""
    return Deploy(
        policy_server=d.get("policy_server"),
        servo_p_gain=d.get("servo_p_gain"),
        gripper_torque_limit=d.get("gripper_torque_limit"),
        action_scale=float(d.get("action_scale", 1.0)),
        servo_model=d.get("servo_model"),
        max_relative_target=_relative_target(d, joints, source),
        goal_speed_rad_s=None
        if d.get("goal_speed_rad_s") is None
        else float(d["goal_speed_rad_s"]),
        robot_name=d.get("robot_name"),
        bridge=d.get("bridge"),
        finger_friction=d.get("finger_friction"),
        object_mass_kg=d.get("object_mass_kg"),
    )


def _relative_target(
    d: Mapping[str, Any],
    joints: list[JointMap],
    source: Path | None,
) -> tuple[float, ...] | None:
    """``deploy.max_relative_target`` per rig joint (rig order), as LeRobot's SO follower
    takes it: one positive number for every motor, or a table naming every motor (by its
    LeRobot motor name ``shoulder_pan``, the recorded ``shoulder_pan.pos`` or the model
    joint's name)."""
    if "max_relative_target" not in d:
        return None
    v = d["max_relative_target"]
    key = "deploy.max_relative_target"
    unit_hint = (
        "in the joint's recorded unit, as LeRobot's config takes it (degrees; "
        "-100..100 or 0..100 for a normalised joint)"
    )
    if not isinstance(v, Mapping):
        return (_bound(v, source, key, unit_hint),) * len(joints)

    def names(j: JointMap) -> set[str]:
        return {j.name, j.recorded, j.recorded.removesuffix(".pos")}

    valid = sorted({j.recorded.removesuffix(".pos") for j in joints})
    out: dict[str, float] = {}
    for motor, x in v.items():
        hit = next((j for j in joints if str(motor) in names(j)), None)
        if hit is None:
            raise InputError(
                file=source,
                field=f"{key}.{motor}",
                expected=f"a motor of the rig: one of {', '.join(valid)}",
                got=f"unknown motor {motor!r}",
                fix="name each motor as LeRobot does (the recorded name without '.pos')",
            )
        out[hit.name] = _bound(x, source, f"{key}.{motor}", unit_hint)
    missing = [j.recorded.removesuffix(".pos") for j in joints if j.name not in out]
    if missing:
        raise InputError(
            file=source,
            field=key,
            expected="a value for every motor (LeRobot "
            "refuses a table whose keys differ from the motors')",
            got=f"none for {', '.join(missing)}",
            fix="add them, or give one number for every motor",
        )
    return tuple(out[j.name] for j in joints)


def _bound(x: Any, source: Path | None, field: str, unit_hint: str) -> float:
    if isinstance(x, bool) or not isinstance(x, NUM) or not math.isfinite(x) or x <= 0:
        raise InputError(
            file=source,
            field=field,
            expected=f"a positive number {unit_hint}",
            got=x,
            fix="write e.g. max_relative_target = 10.0, or remove it "
            "when the follower's config leaves it at None",
        )
    return float(x)
