"""The rig.toml lines a ManiSkill export gives (``simgap init --maniskill-config``): the
``[training]`` section and the training camera's keys, each marked ``# from ManiSkill`` so
that the rig records their provenance (``Rig.provenance``) and counts them as stated."""

from __future__ import annotations

from simgap.maniskill.config import ManiSkillConfig
from simgap.safe_names import toml_value

MARK = "# from ManiSkill"


def _line(key: str, value: object, note: str = "") -> str:
    return f"{key} = {toml_value(value, f'training.{key}')}   {MARK}" + (
        f": {note}" if note else ""
    )


def _g(x: float) -> float:
    """A float rounded to 7 significant figures (what the TOML shows)."""
    return float(f"{x:.7g}")


def training_lines(cfg: ManiSkillConfig) -> list[str]:
    """``[training]`` from the export: rates, controller, drive, per-step bound and the top
    speed it gives, friction, object, origin."""
    out = [
        f"[training]                     # what training showed the policy: {cfg.env_id}"
        + (f", ManiSkill {cfg.version}" if cfg.version else ""),
        _line("env_id", cfg.env_id),
        _line("agent", cfg.agent),
    ]
    if cfg.robot_description:
        out.append(_line("robot_description", cfg.robot_description))
    out += [
        _line(
            "control_dt_s", _g(cfg.control_dt_s), f"1 / control_freq {1.0 / cfg.control_dt_s:g} Hz"
        ),
        _line("physics_dt_s", _g(cfg.physics_dt_s), f"1 / sim_freq {1.0 / cfg.physics_dt_s:g} Hz"),
        _line("controller", cfg.control_mode),
    ]
    for key, v in (
        ("pd_stiffness_nm_rad", cfg.stiffness_nm_rad),
        ("pd_damping_nms_rad", cfg.damping_nms_rad),
        ("pd_force_limit_nm", cfg.force_limit_nm),
    ):
        if v is not None and v > 0:
            out.append(_line(key, _g(v), "the arm joints' PD drive (largest)"))
    if cfg.delta_limit_rad is not None and cfg.delta_limit_rad > 0:
        out.append(
            _line("action_delta_limit_rad", _g(cfg.delta_limit_rad), "the arm's step at action 1")
        )
        out.append(
            _line(
                "top_speed_rad_s",
                _g(cfg.delta_limit_rad / cfg.control_dt_s),
                "action_delta_limit_rad / control_dt_s",
            )
        )
    if cfg.finger_friction is not None:
        out.append(_line("finger_friction", _g(cfg.finger_friction), "the jaws' material"))
    if cfg.object_mass_kg is not None:
        out.append(_line("object_mass_kg", _g(cfg.object_mass_kg)))
    if cfg.object_size_m is not None:
        out.append(_line("object_size_m", _g(cfg.object_size_m), "the object's side"))
    if cfg.origin_from_pan_axis_m is not None:
        out.append(
            _line(
                "origin_from_pan_axis_m",
                [round(x, 5) + 0.0 for x in cfg.origin_from_pan_axis_m],
                "the world origin from the pan axis, base frame",
            )
        )
    return out


def camera_lines(cfg: ManiSkillConfig) -> list[str]:
    """The training camera's ``[camera]`` keys (none without an exported camera)."""
    c = cfg.camera
    if c is None:
        return []
    out = []
    if c.mount is not None:
        out.append(_line("training_mount", c.mount, f"camera {c.uid}'s mount"))
    if c.pose_p_m is not None:
        out.append(
            _line(
                "training_pose_m", [round(x, 5) + 0.0 for x in c.pose_p_m], "in the mount's frame"
            )
        )
    if c.pose_q_wxyz is not None:
        out.append(
            _line(
                "training_pose_q_wxyz",
                [round(x, 7) + 0.0 for x in c.pose_q_wxyz],
                "w, x, y, z in the mount's frame (SAPIEN: x forward, z up)",
            )
        )
    if c.fov_deg is not None:
        out.append(_line("training_fov_deg", round(c.fov_deg, 4), "vertical"))
    out.append(_line("training_resolution", list(c.resolution), "[height, width] rendered"))
    return out
