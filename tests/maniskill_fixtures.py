"""ManiSkill export fixtures (what ``simgap.maniskill.export_config`` writes), without
ManiSkill: SO100GraspCube-v1 as ManiSkill 3.0.1 builds it, and the post-mortem's setup."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]


def grasp_cube_export(
    *,
    control_hz: float = 20.0,
    sim_hz: float = 100.0,
    stiffness: float = 1e3,
    damping: float = 1e2,
    force_limit: float = 100.0,
    delta: float = 0.05,
    friction: float = 2.0,
    half_size: float = 0.0125,
    density: float = 200.0,
    fov_deg: float = 52.0,
    pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
    mount: str = "camera_mount",
    pan_offset: tuple[float, float, float] = (0.0, -0.0452, 0.0165),
) -> dict[str, Any]:
    """SO100GraspCube-v1 (ManiSkill 3.0.1): 100 Hz physics, 20 Hz control,
    pd_joint_target_delta_pos with +-0.05 rad on the arm and +-0.2 on the gripper, PD 1e3 /
    1e2 / 100, jaws at friction 2.0, a 25 mm cube of density 200 (3.1 g), the robot at the
    origin turned 90 deg about z with its pan axis 4.5 cm from it."""
    n = len(ARM) + 1
    q = [math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)]
    px, py, pz = pan_offset  # the pan joint in the root frame, turned 90 deg about z
    return {
        "format": "simgap.maniskill_config/1",
        "mani_skill_version": "3.0.1",
        "env_id": "SO100GraspCube-v1",
        "env_kwargs": {},
        "control_freq_hz": control_hz,
        "sim_freq_hz": sim_hz,
        "agent": {"uid": "so100", "urdf_path": "robots/so100/so100.urdf", "mjcf_path": None},
        "control_mode": "pd_joint_target_delta_pos",
        "controllers": [
            {
                "name": "all",
                "class": "PDJointPosControllerConfig",
                "joint_names": [*ARM, "gripper"],
                "lower": [-delta] * len(ARM) + [-0.2],
                "upper": [delta] * len(ARM) + [0.2],
                "stiffness": [stiffness] * n,
                "damping": [damping] * n,
                "force_limit": [force_limit] * n,
                "use_delta": True,
                "use_target": True,
                "normalize_action": True,
                "drive_mode": "force",
            }
        ],
        "link_materials": {
            "Fixed_Jaw": {
                "static_friction": friction,
                "dynamic_friction": friction,
                "restitution": 0.0,
            },
            "Moving_Jaw": {
                "static_friction": friction,
                "dynamic_friction": friction,
                "restitution": 0.0,
            },
        },
        "object": {
            "attr": "cube",
            "mass_kg": density * (2 * half_size) ** 3,
            "half_size_m": half_size,
        },
        "cameras": [
            {
                "uid": "base_camera",
                "mount": mount,
                "pose_p_m": list(pose),
                "pose_q_wxyz": [1.0, 0.0, 0.0, 0.0],
                "fov_rad": math.radians(fov_deg),
                "width": 128,
                "height": 128,
            }
        ],
        "origin": {
            "robot_root_p_m": [0.0, 0.0, 0.0],
            "robot_root_q_wxyz": q,
            "first_joint": "shoulder_pan",
            "first_joint_p_m": [-py, px, pz],
        },
    }


def write_export(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=2))
    return path
