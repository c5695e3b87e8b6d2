"""``[evidence]`` of a rig file: the recordings and logs, their paths resolved against the
rig file, and the ROS 2 bags' keys."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.checks import resolve_path
from simgap.rig.model import Evidence

_FRAMES_ONLY_KEYS = {"frames", "static_object_poses"}


def evidence_is_frames_only(ev: Any) -> bool:
    """Whether the evidence is camera frames (and static poses) alone: nothing that runs
    against the control period."""
    return isinstance(ev, Mapping) and bool(ev) and set(ev) <= _FRAMES_ONLY_KEYS


def read_evidence(ev: Mapping[str, Any], base: Path, source: Path | None) -> Evidence:
    """``[evidence]`` (already checked against the schema) as an ``Evidence``, each path
    resolved against ``base`` (the rig file's folder)."""

    def _p(key: str) -> Path | None:
        return resolve_path(base, ev[key], source, f"evidence.{key}") if key in ev else None

    def _ps(key: str) -> tuple[Path, ...]:
        vals = ev.get(key, [])
        if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
            raise InputError(
                file=source, field=f"evidence.{key}", expected="a list of paths", got=vals
            )
        return tuple(resolve_path(base, v, source, f"evidence.{key}") for v in vals)

    return Evidence(
        timing_logs=_ps("timing_logs"),
        client_logs=_ps("client_logs"),
        server_logs=_ps("server_logs"),
        dataset=_p("dataset"),
        sim_dataset=_p("sim_dataset"),
        actuator_logs=_ps("actuator_logs"),
        actuator_format=str(ev.get("actuator_format", "lerobot")),
        sim_manifest=_p("sim_manifest"),
        real_manifest=_p("real_manifest"),
        frames=_p("frames"),
        trace=_p("trace"),
        push_logs=_ps("push_logs"),
        checkpoints=_p("checkpoints"),
        static_object_poses=_p("static_object_poses"),
        **_ros2(ev, _ps("ros2_bags"), source),
    )


def _ros2(
    ev: Mapping[str, Any],
    bags: tuple[Path, ...],
    source: Path | None,
) -> dict[str, Any]:
    """``[evidence]``'s ROS 2 bag keys: the bags, their state and command topics and the
    joint order of an unnamed command (checked against the bags when they are read)."""
    keys = ("ros2_state_topic", "ros2_command_topic", "ros2_command_joints")
    if not bags:
        stray = [k for k in keys if k in ev]
        if stray:
            raise InputError(
                file=source,
                field=f"evidence.{stray[0]}",
                expected="evidence.ros2_bags beside it",
                got="no bags named",
                fix='add ros2_bags = ["my_bag"] or remove the key',
            )
        return {}
    if "dataset" in ev:
        raise InputError(
            file=source,
            field="evidence.ros2_bags",
            expected="one recording of record: a LeRobot dataset or ROS 2 bags",
            got="both evidence.dataset and evidence.ros2_bags",
            fix="keep the one the fits should read and remove the other",
        )
    if "ros2_command_topic" not in ev:
        raise InputError(
            file=source,
            field="evidence.ros2_command_topic",
            expected="the topic carrying the commands of the bags",
            got="nothing",
            fix='add e.g. ros2_command_topic = "/arm_controller/commands" (docs/ros2.md)',
        )
    joints = ev.get("ros2_command_joints", [])
    if not all(isinstance(j, str) for j in joints):
        raise InputError(
            file=source,
            field="evidence.ros2_command_joints",
            expected="a list of joint names",
            got=joints,
        )
    out: dict[str, Any] = {
        "ros2_bags": bags,
        "ros2_command_topic": ev["ros2_command_topic"],
        "ros2_command_joints": tuple(joints),
    }
    if "ros2_state_topic" in ev:
        out["ros2_state_topic"] = ev["ros2_state_topic"]
    return out
