"""Render the training camera with SAPIEN (ManiSkill's renderer) at recorded joint angles.

A bare SAPIEN scene, no ManiSkill env: the robot description training used (URDF), fixed at
its root, and a camera mounted on a link with the pose, field of view and resolution training
showed the policy (``simgap.maniskill.config.TrainingCamera``). Each frame sets the recorded
joint angles and renders the colour image and the per-link segmentation, at the policy's
resolution. SAPIEN renders only through Vulkan; on a CPU machine that is Mesa's lavapipe,
and only Mesa 25 (Debian 12's bookworm-backports) works: Debian 12's own Mesa 22.3 gives
"failed to find a rendering device", which is turned here into an error naming the package.
``sapien`` is imported lazily (the ``maniskill`` extra installs it).

The renderer offers what ``simgap.appearance.camera_pose.estimate_camera_offset`` asks of
MuJoCo's ``SceneRenderer`` (``render(q, camera_offset=, segmentation=)`` returning a
``RenderedFrame``, ``resolution``, ``policy_resolution``, and a ``kin`` with ``set_q``,
``geom_positions``, ``to_camera``, ``project``), so the MuJoCo path's camera-offset fit runs
on SAPIEN renders unchanged: segmentation ids are link indices, and offsets are in MuJoCo's
camera axes (x right, y up, z backwards), turned into SAPIEN's (x forward, y left, z up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, MissingExtraError, NameNotFoundError, SimgapError
from simgap.maniskill.replay import EXTRA, TORCH_FIRST
from simgap.sim.kinematics import CameraOffset, mat_to_quat, quat_to_mat, rotvec_to_mat
from simgap.sim.render import RenderedFrame

VULKAN_FIX = (
    "install Vulkan's lavapipe from Mesa 25: apt-get install -t bookworm-backports "
    "mesa-vulkan-drivers (Debian 12's own Mesa 22.3 is refused), and point "
    "VK_ICD_FILENAMES at its lvp_icd JSON (/usr/share/vulkan/icd.d/)"
)


SHADER_PACK = "default"
"""SAPIEN's shader pack for the camera (colour and per-entity segmentation)."""


class RenderDeviceError(SimgapError):
    """SAPIEN found no Vulkan device to render with; the message names the package."""


@dataclass(frozen=True)
class SapienCamera:
    """A camera mounted on a link, in SAPIEN's camera frame (x forward, y left, z up).

    Attributes:
        mount_link: the link it is fixed to.
        pose_p_m: its position in the link's frame [m], (3,).
        pose_q_wxyz: its orientation in the link's frame (unit quaternion w, x, y, z), (4,).
        fov_y_rad: vertical field of view [rad].
        width, height: the resolution rendered [px] (the policy's).
    """

    mount_link: str
    pose_p_m: tuple[float, float, float]
    pose_q_wxyz: tuple[float, float, float, float]
    fov_y_rad: float
    width: int
    height: int

    def __post_init__(self) -> None:
        if not 0 < self.fov_y_rad < np.pi:
            raise InputError(
                field="camera.fov_y_rad",
                expected="a field of view in (0, pi) rad",
                got=self.fov_y_rad,
            )
        if self.width < 1 or self.height < 1:
            raise InputError(
                field="camera.resolution",
                expected="a positive width and height",
                got=(self.width, self.height),
            )


MJ_TO_SAPIEN = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
"""Columns: MuJoCo's camera axes (x right, y up, z backwards) in SAPIEN's camera frame."""


def _sapien(purpose: str) -> Any:
    try:
        import sapien
    except ImportError as e:
        raise MissingExtraError(EXTRA, "sapien", purpose, first=TORCH_FIRST) from e
    return sapien


def require_sapien(purpose: str) -> None:
    """Check that SAPIEN imports; else a MissingExtraError naming the ``maniskill`` extra."""
    _sapien(purpose)


class SapienRenderer:
    """A robot description and one mounted camera in a bare SAPIEN scene.

    Args:
        robot: the URDF training used (``agent.urdf_path`` in the export).
        camera: the camera to render.
        joint_order: the names of the joint angles ``render``/``set_q`` are given, in their
            order (a rig's ``joint_names``); each of the robot's active joints must be one of
            them. None: the robot's own active-joint order.
    """

    def __init__(
        self, robot: str | Path, camera: SapienCamera, joint_order: Sequence[str] | None = None
    ) -> None:
        sapien = _sapien("Rendering the training camera with SAPIEN")
        path = Path(robot)
        if path.suffix.lower() != ".urdf" or not path.is_file():
            raise InputError(
                file=path,
                field="robot description",
                expected="an existing URDF file",
                got=str(path),
                fix="pass the agent's urdf_path (export_config writes it)",
            )
        try:
            self._scene = sapien.Scene()
        except RuntimeError as e:
            if "rendering device" in str(e) or "vulkan" in str(e).lower():
                raise RenderDeviceError(f"SAPIEN found no Vulkan device ({e}): {VULKAN_FIX}") from e
            raise
        self._scene.set_ambient_light([0.5, 0.5, 0.5])
        self._scene.add_directional_light([0.3, 0.2, -1.0], [1.0, 1.0, 1.0])
        loader = self._scene.create_urdf_loader()
        loader.fix_root_link = True
        self._robot = loader.load(str(path))
        links = self._robot.get_links()
        self.links = tuple(str(link.name) for link in links)
        self.joints = tuple(str(j.name) for j in self._robot.get_active_joints())
        self.joint_order = tuple(joint_order) if joint_order is not None else self.joints
        for j in self.joints:
            if j not in self.joint_order:
                raise NameNotFoundError(
                    "joint",
                    j,
                    self.joint_order,
                    file=path,
                    field="the rig's joints (the robot description's active joints)",
                )
        self._columns = np.array([self.joint_order.index(j) for j in self.joints], dtype=int)
        self.source = path
        self.n_geoms = len(links)
        """Segmentation ids run over ``self.links`` (the appearance regions' count)."""
        if camera.mount_link not in self.links:
            raise NameNotFoundError(
                "link", camera.mount_link, self.links, file=path, field="camera.mount_link"
            )
        mount = links[self.links.index(camera.mount_link)]
        self._ids = np.full(max(int(lk.entity.per_scene_id) for lk in links) + 1, -1)
        for i, lk in enumerate(links):
            self._ids[int(lk.entity.per_scene_id)] = i
        self.camera = camera
        # SAPIEN's "default" shader pack named here, not taken from the process-wide setting:
        # a ManiSkill env made earlier in the process switches that to its "minimal" pack,
        # which has no "Segmentation" picture
        shaders = Path(sapien.__file__).parent / "vulkan_shader" / SHADER_PACK
        self._cam = sapien.render.RenderCameraComponent(camera.width, camera.height, str(shaders))
        self._cam.set_fovy(camera.fov_y_rad, compute_x=True)
        self._cam.near, self._cam.far = 0.005, 10.0
        mount.entity.add_component(self._cam)
        self._pose = sapien.Pose
        self._mount = mount
        self._p0 = np.asarray(camera.pose_p_m, dtype=float)
        self._r0 = quat_to_mat(np.asarray(camera.pose_q_wxyz, dtype=float)) @ MJ_TO_SAPIEN
        self._place(None)
        self.resolution = (camera.height, camera.width)
        self.policy_resolution = self.resolution
        self.kin = _SapienKinematics(self)

    def camera_local(self, offset: CameraOffset | None) -> tuple[np.ndarray, np.ndarray]:
        """The camera in its link's frame after ``offset``: position [m] (3,) and rotation
        (3, 3) whose columns are MuJoCo's camera axes (x right, y up, z backwards)."""
        if offset is None or offset.is_zero():
            return self._p0.copy(), self._r0.copy()
        return (
            self._p0 + self._r0 @ np.asarray(offset.pos_m, dtype=float),
            self._r0 @ rotvec_to_mat(offset.rot_rad),
        )

    def _place(self, offset: CameraOffset | None) -> None:
        p, r = self.camera_local(offset)
        q = mat_to_quat(r @ MJ_TO_SAPIEN.T)
        self._cam.local_pose = self._pose([float(v) for v in p], [float(v) for v in q])

    def set_q(self, q: Sequence[float] | np.ndarray) -> None:
        """Set the joint angles [rad], (J,) in ``self.joint_order``."""
        qa = np.asarray(q, dtype=np.float32).ravel()
        if qa.size != len(self.joint_order) or not np.isfinite(qa).all():
            raise InputError(
                field="q",
                expected=f"{len(self.joint_order)} finite joint "
                f"angles [rad] for {list(self.joint_order)}",
                got=qa.tolist(),
            )
        self._robot.set_qpos(qa[self._columns])

    def render(
        self,
        q: Sequence[float] | np.ndarray,
        *,
        camera_offset: CameraOffset | None = None,
        segmentation: bool = True,
    ) -> RenderedFrame:
        """The camera's view at joint angles ``q`` [rad] (J,), its mount moved by
        ``camera_offset``: uint8 RGB (H, W, 3) and per pixel the index into ``self.links``
        of the link seen, -1 for none (all -1 when ``segmentation`` is False)."""
        self.set_q(q)
        self._place(camera_offset)
        self._scene.update_render()
        self._cam.take_picture()
        color = np.asarray(self._cam.get_picture("Color"))[..., :3]
        if color.dtype == np.uint8:  # ManiSkill's "minimal" formats: 8-bit colour
            rgb = color.copy()
        else:
            rgb = (np.clip(color, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        link = np.full(self.resolution, -1, dtype=np.int64)
        if segmentation:
            ent = np.asarray(self._cam.get_picture("Segmentation"))[..., 1].astype(np.int64)
            link = np.where(
                ent < self._ids.size, self._ids[np.minimum(ent, self._ids.size - 1)], -1
            )
        return RenderedFrame(rgb=rgb, seg=link)

    def link_pose(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """World pose of link ``index`` at the last angles set: position [m] (3,), R (3, 3)."""
        pose = self._robot.get_links()[index].entity_pose
        return np.asarray(pose.p, dtype=float), quat_to_mat(np.asarray(pose.q, dtype=float))

    @property
    def mount_index(self) -> int:
        """Index into ``self.links`` of the camera's mount."""
        return self.links.index(self.camera.mount_link)


class _SapienKinematics:
    """The kinematics ``simgap.appearance.camera_pose`` asks of a renderer, from SAPIEN:
    "geoms" are links (their origins), the camera frame is MuJoCo's (x right, y up, z
    backwards)."""

    def __init__(self, renderer: SapienRenderer) -> None:
        self.r = renderer
        self.fovy_deg = float(np.degrees(renderer.camera.fov_y_rad))
        """The camera's vertical field of view [deg]."""

    def set_q(self, q: Sequence[float] | np.ndarray) -> None:
        """Set the joint angles [rad]."""
        self.r.set_q(q)

    def geom_positions(self, ids: Sequence[int]) -> np.ndarray:
        """World positions [m] of the links ``ids`` after the last ``set_q``, shape (n, 3)."""
        return np.array([self.r.link_pose(int(i))[0] for i in ids]).reshape(-1, 3)

    def to_camera(
        self, p_world: Any, q: Sequence[float] | np.ndarray, offset: CameraOffset | None = None
    ) -> np.ndarray:
        """Points in the camera frame [m], shape (..., 3)."""
        self.set_q(q)
        bpos, brot = self.r.link_pose(self.r.mount_index)
        lpos, lrot = self.r.camera_local(offset)
        pos, rot = bpos + brot @ lpos, brot @ lrot
        out: np.ndarray = (np.asarray(p_world, dtype=float) - pos) @ rot
        return out

    def project(self, p_cam: Any, size: tuple[int, int]) -> np.ndarray:
        """Pinhole projection to pixel (u right, v down) of an image ``size`` (h, w)."""
        p = np.asarray(p_cam, dtype=float)
        f = size[0] / 2.0 / np.tan(self.r.camera.fov_y_rad / 2.0)
        depth = -p[..., 2]
        return np.stack(
            [size[1] / 2.0 + f * p[..., 0] / depth, size[0] / 2.0 - f * p[..., 1] / depth], axis=-1
        )
