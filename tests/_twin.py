"""A synthetic 'real' twin of the demo model for the appearance and body tests.

Frames are rendered with MuJoCo directly (not through simgap's renderer) from a perturbed
copy of the model: the camera moved on its mount, one joint's zero shifted, an exposure gain
applied and the black background lifted, as a real camera on a real arm would show.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np
from PIL import Image

from tests.factories import SO101_JOINTS

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
RECORDED = [f"{j}.pos" for j in JOINTS]
START = np.array([0.0, -0.6, 0.9, 0.9, 0.0, 0.6])
REST = np.array([0.0, -1.57, 1.57, 0.66, 0.0, 0.0])
GRIP_LO, GRIP_HI = -0.174533, 1.7453292


def rotvec_quat(r: Sequence[float]) -> np.ndarray:
    v = np.asarray(r, dtype=float)
    th = np.linalg.norm(v)
    if th == 0:
        return np.array([1.0, 0, 0, 0])
    return np.concatenate([[np.cos(th / 2)], np.sin(th / 2) * v / th])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def quat_mat(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Twin:
    """The perturbed 'real' arm: camera mount offset (camera frame) and joint zero offsets."""

    def __init__(
        self,
        model_path: Path,
        cam_pos: Sequence[float] = (0, 0, 0),
        cam_rot: Sequence[float] = (0, 0, 0),
        delta: Sequence[float] | None = None,
    ) -> None:
        self.m = mujoco.MjModel.from_xml_path(str(model_path))
        self.d = mujoco.MjData(self.m)
        self.cid = self.m.camera("wrist_cam").id
        q0 = np.array(self.m.cam_quat[self.cid])
        r0 = quat_mat(q0)
        self.m.cam_pos[self.cid] = self.m.cam_pos[self.cid] + r0 @ np.asarray(cam_pos, float)
        self.m.cam_quat[self.cid] = quat_mul(q0, rotvec_quat(cam_rot))
        self.delta = np.zeros(6) if delta is None else np.asarray(delta, dtype=float)
        self.qadr = [self.m.joint(j).qposadr[0] for j in JOINTS]
        self.r: mujoco.Renderer | None = None

    def set(self, q_recorded: np.ndarray) -> None:
        self.d.qpos[self.qadr] = q_recorded + self.delta
        mujoco.mj_forward(self.m, self.d)

    def render(self, q_recorded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.r is None:
            self.r = mujoco.Renderer(self.m, 96, 96)
        self.set(q_recorded)
        self.r.update_scene(self.d, camera=self.cid)
        rgb = self.r.render().copy()
        self.r.enable_segmentation_rendering()
        self.r.update_scene(self.d, camera=self.cid)
        seg = self.r.render()[..., 0].copy()
        self.r.disable_segmentation_rendering()
        return rgb, seg

    def camera_pose(self, q_recorded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.set(q_recorded)
        return (
            np.array(self.d.cam_xpos[self.cid]),
            np.array(self.d.cam_xmat[self.cid]).reshape(3, 3),
        )

    def close(self) -> None:
        if self.r is not None:
            self.r.close()
            self.r = None


def expose(
    rgb: np.ndarray,
    seg: np.ndarray,
    gain: float,
    lift: float,
    rng: np.random.Generator,
    noise: float = 1.0,
) -> np.ndarray:
    """A camera's view of a render: gain on everything, black background lifted, noise."""
    img = rgb.astype(float) * gain
    floor = (seg == -1) | (seg == 0)
    img[floor] += lift
    img += rng.normal(0, noise, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def to_recorded(q: np.ndarray) -> list[float]:
    """Model radians -> recorded units (degrees, gripper 0..100)."""
    out = [float(np.rad2deg(v)) for v in q[:5]]
    out.append(float((q[5] - GRIP_LO) / (GRIP_HI - GRIP_LO) * 100.0))
    return out


def write_frames(
    folder: Path,
    twin: Twin,
    plan: Sequence[tuple[str, str, np.ndarray, float]],
    lift: float,
    seed: int = 0,
) -> Path:
    """Write a frames folder: plan rows are (recording, pose_label, q_recorded, gain)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "index.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "episode", "frame_index", "recording", "pose_label", *RECORDED])
        for i, (rec, label, q, gain) in enumerate(plan):
            rgb, seg = twin.render(q)
            name = f"f{i:03d}.png"
            Image.fromarray(expose(rgb, seg, gain, lift, rng)).save(folder / name)
            w.writerow([name, 0, i, rec, label, *to_recorded(q)])
    return folder


RIG = (
    """
name = "twin"
seed = 1
[model]
path = "{model}"
object_geom = "cube"
[control]
dt_s = 0.0666667
"""
    + SO101_JOINTS
    + """[camera]
name = "wrist_cam"
policy_resolution = [16, 16]
render_resolution = [96, 96]
training_jitter_px = 0.5
training_background_max = 0
[training]
workspace_x_m = [0.15, 0.35]
workspace_y_m = [-0.10, 0.10]
[frame]
origin_reference_m = [0.0388353, 0, 0]
origin_reference_name = "base rotation axis"
"""
)


def write_rig(folder: Path, model: Path, evidence: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rig.toml"
    path.write_text(
        RIG.format(model=str(model)) + ("\n[evidence]\n" + evidence if evidence else "")
    )
    return path
