"""The ``[training]``, ``[deploy]`` and ``[camera]`` lines ``simgap init`` writes from a
ManiSkill export."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simgap.rig.init.dataset import image_shape
from simgap.safe_names import toml_value


def maniskill_lines(
    ms: Any,
    robot: str,
    guessed: list[str],
    to_fill: list[str],
) -> list[str]:
    """``[training]`` from a ManiSkill export and the ``[deploy]`` keys the training audit
    reads: LeRobot's robot name from the dataset's robot_type, the rest to fill."""
    from simgap.maniskill.training_toml import training_lines

    guessed.append(
        f"[training]: from ManiSkill ({ms.source.name}: {ms.env_id}, agent "
        f"{ms.agent}, {ms.control_mode}); marked '# from ManiSkill'"
    )
    out = training_lines(ms) + ["", "[deploy]"]
    if robot:
        out.append(
            f"robot_name = {toml_value(robot, 'robot_type')}   # the dataset's robot_type "
            "(LeRobot's robot.name)"
        )
    to_fill.append(
        'deploy: bridge ("LeRobotRealAgent" where ManiSkill\'s Sim2RealEnv drives '
        "the arm), action_scale, servo_model and servo_p_gain, finger_friction and "
        "object_mass_kg as measured (simgap training holds them against training)"
    )
    return out


def maniskill_camera_lines(
    ms: Any,
    images: Sequence[str],
    cameras: Sequence[str],
    dataset: Path,
    feats: Mapping[str, Any],
    guessed: list[str],
    to_fill: list[str],
) -> list[str]:
    """A ``[camera]`` section with the training camera's keys from a ManiSkill export, when
    it has a camera and the model one to name (the one matching an image feature, else its
    only camera); else nothing (the commented section is written as without the export)."""
    if ms is None or ms.camera is None:
        return []
    from simgap.maniskill.training_toml import camera_lines

    cam = next(
        (c for c in cameras for k in images if c.split("_")[0] in k.split(".")[-1]),
        cameras[0] if len(cameras) == 1 else None,
    )
    if cam is None:
        to_fill.append(
            f"[camera]: the training camera {ms.camera.uid} was exported, but the "
            f"model's cameras ({', '.join(cameras) or 'none'}) do not say which "
            "one it is; add [camera] name = ... and init's training_* lines"
        )
        return []
    out = [
        "",
        "[camera]",
        f"name = {toml_value(cam, 'model camera')}   # guessed: the model camera",
    ]
    guessed.append(
        f"camera.name = {cam!r} (the model camera beside the training camera {ms.camera.uid})"
    )
    if images:
        out.append(f"recorded = {toml_value(images[0], 'image feature')}")
        shape = image_shape(
            dataset / "meta" / "info.json", images[0], feats[images[0]].get("shape")
        )
        if len(shape) >= 2:
            out.append(f"render_resolution = {toml_value([int(shape[0]), int(shape[1])])}")
    to_fill.append(
        "camera.policy_resolution: the size the policy's preprocessing gives the "
        f"image (training rendered {ms.camera.resolution[0]}x"
        f"{ms.camera.resolution[1]})"
    )
    return out + camera_lines(ms)
