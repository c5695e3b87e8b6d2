"""The training audit's geometric checks: the world origin against the point placements are
measured from, and the camera's field of view and mount."""

from __future__ import annotations

import math

from simgap.finding import Finding
from simgap.plumbing.training_findings import (
    RigSide,
    missing_keys,
    not_measured,
    provenance_of,
    training_finding,
)
from simgap.rig import Rig

ORIGIN_TOL_M = 0.005


FOV_TOL_DEG = 2.0


MOUNT_TOL_M = 0.005


def check_origin(rig: Rig, side: RigSide) -> Finding:
    """Training's world origin from the pan axis against the point the rig's placements are
    measured from (``frame.origin_reference_m``), both as distances from the axis: the two
    descriptions' base frames need not share their axes, so directions are not compared."""
    o, ref, title = (
        rig.training.origin_from_pan_axis_m,
        rig.origin_reference_m,
        "World origin (training config)",
    )
    miss = missing_keys(
        rig, [("training.origin_from_pan_axis_m", o), ("frame.origin_reference_m", ref)]
    )
    if not miss and side.pan_axis_m is None:
        miss = ["the model's first joint (not found)"]
    if miss:
        return not_measured(title, "origin", miss, "the origin offset")
    assert o is not None and ref is not None and side.pan_axis_m is not None
    d_train = math.hypot(o[0], o[1])
    d_rig = math.hypot(ref[0] - side.pan_axis_m[0], ref[1] - side.pan_axis_m[1])
    off = abs(d_train - d_rig)
    name = rig.origin_reference_name or "frame.origin_reference_m"
    return training_finding(
        title,
        "origin",
        off > ORIGIN_TOL_M,
        f"Training measures positions from a point {1000 * d_train:.1f} mm from the pan "
        f"axis; the rig's placements are measured from {name}, {1000 * d_rig:.1f} mm from "
        f"it: every placement is off by at least {1000 * off:.1f} mm.",
        f"Measure placements from the point {1000 * d_train:.1f} mm from the pan axis that "
        "training calls the origin (or shift training's workspace by the difference).",
        {
            "training_origin_from_axis_m": d_train,
            "rig_reference_from_axis_m": d_rig,
            "offset_m": off,
        },
        "offset_m",
        provenance_of(rig, "training.origin_from_pan_axis_m", "frame.origin_reference_m"),
    )


def check_camera(rig: Rig, side: RigSide) -> list[Finding]:
    """The training camera's field of view and its position in its mount against the model
    camera's ``fovy`` and position in its body (compared where the mount is that body)."""
    cam = rig.camera
    if cam is None:
        return [
            not_measured(t, c, ["a [camera] section (not set)"], "the camera check")
            for t, c in (
                ("Camera field of view (training config)", "camera_fov"),
                ("Camera mount (training config)", "camera_mount"),
            )
        ]
    out = []
    title = "Camera field of view (training config)"
    miss = missing_keys(rig, [("camera.training_fov_deg", cam.training_fov_deg)])
    if not miss and side.camera_fovy_deg is None:
        miss = [f"the model camera {cam.name!r} (not found)"]
    if miss:
        out.append(not_measured(title, "camera_fov", miss, "the camera's field of view"))
    else:
        assert cam.training_fov_deg is not None and side.camera_fovy_deg is not None
        d = cam.training_fov_deg - side.camera_fovy_deg
        out.append(
            training_finding(
                title,
                "camera_fov",
                abs(d) > FOV_TOL_DEG,
                f"Training's camera sees {cam.training_fov_deg:.1f} deg vertically, the model's "
                f"{cam.name!r} {side.camera_fovy_deg:.1f} deg ({d:+.1f} deg).",
                "Retrain with the real camera's field of view (the env's CameraConfig fov) and "
                "set the model camera's fovy to the measured one.",
                {
                    "training_fov_deg": cam.training_fov_deg,
                    "model_fov_deg": side.camera_fovy_deg,
                    "difference_deg": d,
                },
                "difference_deg",
                provenance_of(rig, "camera.training_fov_deg"),
            )
        )
    title = "Camera mount (training config)"
    miss = missing_keys(
        rig,
        [
            ("camera.training_mount", cam.training_mount),
            ("camera.training_pose_m", cam.training_pose_m),
        ],
    )
    if not miss and (side.camera_pos_m is None or cam.training_mount != side.camera_body):
        miss = [
            f"camera.training_mount naming the model body {side.camera_body!r} the "
            f"training mount {cam.training_mount!r} is (not the same name)"
        ]
    if miss:
        out.append(not_measured(title, "camera_mount", miss, "the camera's mount"))
        return out
    assert cam.training_pose_m is not None and side.camera_pos_m is not None
    dist = math.dist(cam.training_pose_m, side.camera_pos_m)
    out.append(
        training_finding(
            title,
            "camera_mount",
            dist > MOUNT_TOL_M,
            f"On {side.camera_body!r}, training's camera sits {1000 * dist:.1f} mm from the "
            f"model's {cam.name!r} (training {list(cam.training_pose_m)}, model "
            f"{[round(x, 4) for x in side.camera_pos_m]} m); the camera's place is baked into the "
            "policy at training time.",
            "Retrain around the real camera's mount (measure it on the arm), or move the camera "
            "to where training had it.",
            {"mount_offset_m": dist},
            "mount_offset_m",
            provenance_of(rig, "camera.training_mount", "camera.training_pose_m"),
        )
    )
    return out
