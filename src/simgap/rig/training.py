"""``[training]`` of a rig file: what the policy was trained with, and the keys read from
the training environment."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.rig.fields import numbers_of, pair, positive
from simgap.rig.model import Training


def read_training(t: Mapping[str, Any], source: Path | None) -> Training:
    """``[training]`` (already checked against the schema) as a ``Training``."""
    return Training(
        control_dt_s=t.get("control_dt_s"),
        obs_noise_std_rad=t.get("obs_noise_std_rad"),
        action_scale=float(t.get("action_scale", 1.0)),
        top_speed_rad_s=t.get("top_speed_rad_s"),
        workspace_x_m=pair(t["workspace_x_m"], source, "training.workspace_x_m")
        if "workspace_x_m" in t
        else None,
        workspace_y_m=pair(t["workspace_y_m"], source, "training.workspace_y_m")
        if "workspace_y_m" in t
        else None,
        servo_p_gain=t.get("servo_p_gain"),
        object_mass_kg=t.get("object_mass_kg"),
        finger_friction=t.get("finger_friction"),
        **_training_env(t, source),
    )


def _training_env(t: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[training]``'s keys read from the training environment (``--maniskill-config``)."""
    out: dict[str, Any] = {
        k: t.get(k) for k in ("env_id", "agent", "robot_description", "controller")
    }
    for k in (
        "physics_dt_s",
        "pd_stiffness_nm_rad",
        "pd_damping_nms_rad",
        "pd_force_limit_nm",
        "action_delta_limit_rad",
        "object_size_m",
    ):
        if k in t:
            out[k] = positive(t[k], source, f"training.{k}")
    if "origin_from_pan_axis_m" in t:
        out["origin_from_pan_axis_m"] = numbers_of(
            t["origin_from_pan_axis_m"],
            (2, 3),
            source,
            "training.origin_from_pan_axis_m",
            "[x, y] or [x, y, z] in metres, in the base frame",
        )
    return out
