"""The rig.toml schema: every section, its keys, the types each accepts and whether it is
required ("" is the top level); the keys that hold paths. ``simgap.rig`` validates against it."""

from __future__ import annotations

# Schema: section -> key -> (python types accepted, required). "" is the top level.
_NUM = (int, float)
_SCHEMA: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "": {"name": ((str,), True), "seed": ((int,), False)},
    "model": {
        "path": ((str,), True),
        "ee_site": ((str,), False),
        "physics_dt_s": (_NUM, False),
        "object_body": ((str,), False),
        "gripper_geoms": ((list,), False),
        "object_geom": ((str,), False),
    },
    "control": {
        "dt_s": (_NUM, False),  # required unless the evidence is frames alone (_control_dt)
        "action_space": ((str,), False),
        "command_interp": ((str,), False),
        "clock": ((str,), False),
        "real_dt_s": (_NUM, False),
        "action_scale": (_NUM, False),
    },
    "joint": {
        "recorded": ((str,), False),
        "unit": ((str,), False),
        "range_rad": ((list,), False),
        "ticks_per_rev": ((int,), False),
        "zero_ticks": (_NUM, False),
        "sign": (_NUM, False),
        "offset_rad": (_NUM, False),
        "gripper": ((bool,), False),
    },
    "noise": {
        "encoder_rad": (_NUM, False),
        "torque_nm": (_NUM, False),
        "clock_jitter_s": (_NUM, False),
    },
    "contact": {
        "tracker_noise_m": (_NUM, False),
        "tracker_noise_rad": (_NUM, False),
        "support_geoms": ((list,), False),
    },
    "camera": {
        "name": ((str,), True),
        "policy_resolution": ((list,), False),
        "render_resolution": ((list,), False),
        "training_jitter_px": (_NUM, False),
        "training_jitter_m": (_NUM, False),
        "training_jitter_deg": (_NUM, False),
        "training_background_max": (_NUM, False),
        "recorded": ((str,), False),
        # the training camera (simgap init --maniskill-config): its mount link, position
        # in that link [m], vertical field of view [deg] and [height, width] rendered [px]
        "training_mount": ((str,), False),
        "training_pose_m": ((list,), False),
        "training_pose_q_wxyz": ((list,), False),  # its orientation in that link
        "training_fov_deg": (_NUM, False),
        "training_resolution": ((list,), False),
    },
    "training": {
        "control_dt_s": (_NUM, False),
        "obs_noise_std_rad": (_NUM, False),
        "action_scale": (_NUM, False),
        "top_speed_rad_s": (_NUM, False),
        "workspace_x_m": ((list,), False),
        "workspace_y_m": ((list,), False),
        "servo_p_gain": (_NUM, False),
        "object_mass_kg": (_NUM, False),
        "finger_friction": (_NUM, False),
        # read from the training environment (simgap init --maniskill-config; the training
        # audit, simgap.plumbing.training)
        "env_id": ((str,), False),
        "agent": ((str,), False),
        "robot_description": ((str,), False),
        "physics_dt_s": (_NUM, False),
        "controller": ((str,), False),
        "pd_stiffness_nm_rad": (_NUM, False),
        "pd_damping_nms_rad": (_NUM, False),
        "pd_force_limit_nm": (_NUM, False),
        "action_delta_limit_rad": (_NUM, False),
        "object_size_m": (_NUM, False),
        "origin_from_pan_axis_m": ((list,), False),
    },
    "deploy": {
        "policy_server": ((str,), False),
        "servo_p_gain": (_NUM, False),
        "servo_model": ((str,), False),
        "gripper_torque_limit": (_NUM, False),
        "action_scale": (_NUM, False),
        # what LeRobot and the servo do to a command before it acts (simgap.episodes.
        # command_shaping): a number (every motor) or a table motor -> number, in the joint's
        # recorded unit (degrees; -100..100 / 0..100 for a normalised joint)
        "max_relative_target": ((int, float, dict), False),
        "goal_speed_rad_s": (_NUM, False),  # the servo's goal-speed limit (Goal_Velocity)
        # the training audit: LeRobot's robot.name, the sim-to-real bridge, the real
        # fingers' friction and the real object's mass
        "robot_name": ((str,), False),
        "bridge": ((str,), False),
        "finger_friction": (_NUM, False),
        "object_mass_kg": (_NUM, False),
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
_SECTIONS = tuple(k for k in _SCHEMA if k not in ("", "joint")) + ("joints",)
_PATH_KEYS = {
    "timing_logs", "client_logs", "server_logs", "dataset", "sim_dataset", "actuator_logs",
    "sim_manifest", "real_manifest", "frames", "trace", "push_logs", "checkpoints",
    "static_object_poses", "ros2_bags",
}
