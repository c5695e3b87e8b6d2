"""The training camera as the rig states it, ready for SAPIEN (``simgap maniskill appearance``).

From the rig's ``[training]`` and ``[camera]`` keys that ``simgap init --maniskill-config``
writes (marked ``# from ManiSkill``): the robot description training loaded
(``training.robot_description``, a URDF), and the policy camera's mount link, position and
orientation in it, vertical field of view and resolution (``camera.training_*``). A key the
rig lacks is an InputError naming it and the two fixes: run the export where you train, or
write the key. The regions compared are the MuJoCo path's, in SAPIEN's links: the jaws (the
links whose names hold a gripper word), no object (the bare scene has none) and the
background (no link).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simgap.errors import InputError
from simgap.maniskill.config import EXPORT_HOW, GRIPPER_HINTS
from simgap.maniskill.render import SapienCamera
from simgap.rig import Rig

CAMERA_KEYS = (
    "training_mount",
    "training_pose_m",
    "training_pose_q_wxyz",
    "training_fov_deg",
    "training_resolution",
)
"""The ``[camera]`` keys SAPIEN needs, in that order."""
KEYS = ("training.robot_description",) + tuple(f"camera.{k}" for k in CAMERA_KEYS)
"""Every rig key the training view reads (their provenance is reported)."""
FIX = (
    f"{EXPORT_HOW}, then 'simgap init --maniskill-config FILE' writes it; or set the key "
    "in rig.toml yourself"
)


@dataclass(frozen=True)
class TrainingView:
    """What SAPIEN needs to render what training showed the policy.

    Attributes:
        robot: the URDF training loaded (resolved against the rig's folder).
        camera: the policy camera: mount link, pose in it, fov, resolution (the policy's).
        provenance: rig key -> where its value comes from (``from ManiSkill``, ``given``).
    """

    robot: Path
    camera: SapienCamera
    provenance: dict[str, str]


def _missing(rig: Rig, key: str, what: str) -> InputError:
    return InputError(file=rig.source, field=key, expected=what, got="nothing", fix=FIX)


def training_view(rig: Rig) -> TrainingView:
    """The training camera and robot description the rig states.

    Raises:
        InputError: ``[camera]`` or one of ``KEYS`` is missing (named, with the fix), the
            robot description is not a URDF on this machine, or the camera has no mount link
            (a camera fixed in the world is not rendered here).
    """
    if rig.camera is None:
        raise _missing(
            rig,
            "camera",
            f"a [camera] section with the training camera's keys ({', '.join(CAMERA_KEYS)})",
        )
    c = rig.camera
    desc = rig.training.robot_description
    if not desc:
        raise _missing(
            rig,
            "training.robot_description",
            "the URDF training loaded (ManiSkill's agent.urdf_path)",
        )
    robot = Path(desc)
    if not robot.is_absolute() and rig.source is not None:
        robot = Path(rig.source).parent / robot
    if robot.suffix.lower() != ".urdf":
        raise InputError(
            file=rig.source,
            field="training.robot_description",
            expected="a URDF (SAPIEN renders the agent's urdf_path)",
            got=str(desc),
            fix="set training.robot_description to the agent's URDF",
        )
    if not robot.is_file():
        raise InputError(
            file=rig.source,
            field="training.robot_description",
            expected="the URDF training loaded, on this machine",
            got=f"{robot}: no such file",
            fix="copy the agent's URDF (with its meshes) here and point "
            "training.robot_description at it",
        )
    vals = {k: getattr(c, k) for k in CAMERA_KEYS}
    what = {
        "training_mount": "the link the training camera is mounted on",
        "training_pose_m": "[x, y, z] of the camera in its mount [m]",
        "training_pose_q_wxyz": "[w, x, y, z] of the camera in its mount (SAPIEN's camera "
        "frame: x forward, y left, z up)",
        "training_fov_deg": "the training camera's vertical field of view [deg]",
        "training_resolution": "[height, width] training rendered (the policy's) [px]",
    }
    for k in CAMERA_KEYS:
        if vals[k] is None:
            raise _missing(rig, f"camera.{k}", what[k])
    h, w = vals["training_resolution"]
    cam = SapienCamera(
        str(vals["training_mount"]),
        vals["training_pose_m"],
        vals["training_pose_q_wxyz"],
        math.radians(vals["training_fov_deg"]),
        int(w),
        int(h),
    )
    return TrainingView(robot, cam, {k: rig.provenance(k) for k in KEYS})


def regions(links: Sequence[str], source: Path | None = None) -> dict[str, tuple[int, ...]]:
    """Link ids of the appearance regions: ``jaws`` (links whose name holds one of
    ``GRIPPER_HINTS``), ``object`` (none: a bare scene) and ``background`` (-1: no link).

    Raises:
        InputError: no link is the gripper's.
    """
    jaws = tuple(i for i, n in enumerate(links) if any(h in n.lower() for h in GRIPPER_HINTS))
    if not jaws:
        raise InputError(
            file=source,
            field="links",
            expected=f"a gripper link (a name holding one of {list(GRIPPER_HINTS)})",
            got=list(links),
            fix="use the robot description training used",
        )
    return {"jaws": jaws, "object": (), "background": (-1,)}
