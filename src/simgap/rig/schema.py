"""The rig.toml schema: every section, its keys, the types each accepts and whether it is
required ("" is the top level); the keys that hold paths. ``simgap.rig`` validates against it."""

from __future__ import annotations

# Schema: section -> key -> (python types accepted, required). "" is the top level.
NUM = (int, float)
"""The types a number key accepts."""
SCHEMA: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "": {"name": ((str,), True), "seed": ((int,), False)},
    "model": {
        "path": ((str,), True),
        "ee_site": ((str,), False),
        "physics_dt_s": (NUM, False),
        "object_body": ((str,), False),
        "gripper_geoms": ((list,), False),
        "object_geom": ((str,), False),
    },
    "control": {
        "dt_s": (NUM, False),  # required unless the evidence is frames alone (_control_dt)
        "action_space": ((str,), False),
        "command_interp": ((str,), False),
        "clock": ((str,), False),
        "real_dt_s": (NUM, False),
        "action_scale": (NUM, False),
    },
    "joint": {
        "recorded": ((str,), False),
        "unit": ((str,), False),
        "range_rad": ((list,), False),
        "ticks_per_rev": ((int,), False),
        "zero_ticks": (NUM, False),
        "sign": (NUM, False),
        "offset_rad": (NUM, False),
        "gripper": ((bool,), False),
    },
    "noise": {
        "encoder_rad": (NUM, False),
        "torque_nm": (NUM, False),
        "clock_jitter_s": (NUM, False),
    },
    "contact": {
        "tracker_noise_m": (NUM, False),
        "tracker_noise_rad": (NUM, False),
        "support_geoms": ((list,), False),
    },
    "camera": {
        "name": ((str,), True),
        "policy_resolution": ((list,), False),
        "render_resolution": ((list,), False),
        "training_jitter_px": (NUM, False),
        "training_jitter_m": (NUM, False),
        "training_jitter_deg": (NUM, False),
        "training_background_max": (NUM, False),
        "recorded": ((str,), False),
        # the training camera (simgap init --maniskill-config): its mount link, position
        # in that link [m], vertical field of view [deg] and [height, width] rendered [px]
        "training_mount": ((str,), False),
        "training_pose_m": ((list,), False),
        "training_pose_q_wxyz": ((list,), False),  # its orientation in that link
        "training_fov_deg": (NUM, False),
        "training_resolution": ((list,), False),
    },
    "training": {
        "control_dt_s": (NUM, False),
        "obs_noise_std_rad": (NUM, False),
        "action_scale": (NUM, False),
        "top_speed_rad_s": (NUM, False),
        "workspace_x_m": ((list,), False),
        "workspace_y_m": ((list,), False),
        "servo_p_gain": (NUM, False),
        "object_mass_kg": (NUM, False),
        "finger_friction": (NUM, False),
        # read from the training environment (simgap init --maniskill-config; the training
        # audit, simgap.plumbing.training)
        "env_id": ((str,), False),
        "agent": ((str,), False),
        "robot_description": ((str,), False),
        "physics_dt_s": (NUM, False),
        "controller": ((str,), False),
        "pd_stiffness_nm_rad": (NUM, False),
        "pd_damping_nms_rad": (NUM, False),
        "pd_force_limit_nm": (NUM, False),
        "action_delta_limit_rad": (NUM, False),
        "object_size_m": (NUM, False),
        "origin_from_pan_axis_m": ((list,), False),
    },
    "deploy": {
        "policy_server": ((str,), False),
        "servo_p_gain": (NUM, False),
        "servo_model": ((str,), False),
        "gripper_torque_limit": (NUM, False),
        "action_scale": (NUM, False),
        # what LeRobot and the servo do to a command before it acts (simgap.episodes.
        # command_shaping): a number (every motor) or a table motor -> number, in the joint's
        # recorded unit (degrees; -100..100 / 0..100 for a normalised joint)
        "max_relative_target": ((int, float, dict), False),
        "goal_speed_rad_s": (NUM, False),  # the servo's goal-speed limit (Goal_Velocity)
        # the training audit: LeRobot's robot.name, the sim-to-real bridge, the real
        # fingers' friction and the real object's mass
        "robot_name": ((str,), False),
        "bridge": ((str,), False),
        "finger_friction": (NUM, False),
        "object_mass_kg": (NUM, False),
    },
    "frame": {
        "origin_reference_m": ((list,), False),
        "origin_reference_name": ((str,), False),
    },
    "compute": {
        "backend": ((str,), False),
        "address": ((str,), False),
    },
    "evidence": {
        "timing_logs": ((list,), False),
        "client_logs": ((list,), False),
        "server_logs": ((list,), False),
        "dataset": ((str,), False),
        "sim_dataset": ((str,), False),
        "actuator_logs": ((list,), False),
        "actuator_format": ((str,), False),
        "sim_manifest": ((str,), False),
        "real_manifest": ((str,), False),
        "frames": ((str,), False),
        "trace": ((str,), False),
        "push_logs": ((list,), False),
        "checkpoints": ((str,), False),
        "static_object_poses": ((str,), False),
        "ros2_bags": ((list,), False),  # ROS 2 bags (MCAP): simgap.evidence.ros2_bag
        "ros2_state_topic": ((str,), False),
        "ros2_command_topic": ((str,), False),
        "ros2_command_joints": ((list,), False),
    },
}
SECTIONS = tuple(k for k in SCHEMA if k not in ("", "joint")) + ("joints",)
PATH_KEYS = {
    "timing_logs",
    "client_logs",
    "server_logs",
    "dataset",
    "sim_dataset",
    "actuator_logs",
    "sim_manifest",
    "real_manifest",
    "frames",
    "trace",
    "push_logs",
    "checkpoints",
    "static_object_poses",
    "ros2_bags",
}
