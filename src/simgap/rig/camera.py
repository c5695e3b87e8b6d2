"""``[camera]`` of a rig file: the camera the policy sees through, and the training camera
a ManiSkill export describes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.fields import numbers_of, positive
from simgap.rig.model import Camera


def read_camera(c: Mapping[str, Any], source: Path | None) -> Camera:
    """``[camera]`` (already checked against the schema) as a ``Camera``."""
    pres = tuple(int(x) for x in c.get("policy_resolution", [16, 16]))
    rres = tuple(int(x) for x in c.get("render_resolution", [96, 96]))
    for key, res in (("policy_resolution", pres), ("render_resolution", rres)):
        if len(res) != 2 or min(res) <= 0:
            raise InputError(
                file=source,
                field=f"camera.{key}",
                expected="[height, width], positive integers",
                got=list(res),
            )
    return Camera(
        name=c["name"],
        policy_resolution=(pres[0], pres[1]),
        render_resolution=(rres[0], rres[1]),
        training_jitter_px=c.get("training_jitter_px"),
        training_jitter_m=c.get("training_jitter_m"),
        training_jitter_deg=c.get("training_jitter_deg"),
        training_background_max=None
        if c.get("training_background_max") is None
        else float(c["training_background_max"]),
        recorded=c.get("recorded"),
        **_training_camera(c, source),
    )


def _training_camera(c: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[camera]``'s training_* keys of the training camera (``--maniskill-config``)."""
    out: dict[str, Any] = {"training_mount": c.get("training_mount")}
    if "training_pose_m" in c:
        p = numbers_of(
            c["training_pose_m"],
            (3,),
            source,
            "camera.training_pose_m",
            "[x, y, z] in metres, in the mount link's frame",
        )
        out["training_pose_m"] = (p[0], p[1], p[2])
    if "training_pose_q_wxyz" in c:
        w = numbers_of(
            c["training_pose_q_wxyz"],
            (4,),
            source,
            "camera.training_pose_q_wxyz",
            "[w, x, y, z], a unit quaternion in the mount link's frame",
        )
        if not 0.99 < math.sqrt(sum(x * x for x in w)) < 1.01:
            raise InputError(
                file=source,
                field="camera.training_pose_q_wxyz",
                expected="a unit quaternion [w, x, y, z]",
                got=list(w),
                fix="copy it from the export (simgap init --maniskill-config)",
            )
        out["training_pose_q_wxyz"] = (w[0], w[1], w[2], w[3])
    if "training_fov_deg" in c:
        out["training_fov_deg"] = positive(c["training_fov_deg"], source, "camera.training_fov_deg")
    if "training_resolution" in c:
        r = numbers_of(
            c["training_resolution"],
            (2,),
            source,
            "camera.training_resolution",
            "[height, width], positive integers",
        )
        if min(r) <= 0:
            raise InputError(
                file=source,
                field="camera.training_resolution",
                expected="[height, width], positive integers",
                got=list(r),
            )
        out["training_resolution"] = (int(r[0]), int(r[1]))
    return out
