"""Forward kinematics of a rig's camera and its body: poses, projections, geom groups.

Everything here runs ``mj_kinematics`` on a private ``MjData``; nothing steps physics.
Camera frames follow MuJoCo's convention: x right, y up, looking along -z.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.model import load_model, object_id


@dataclass(frozen=True)
class CameraOffset:
    """A perturbation of the camera's mounting, expressed in the camera's own frame.

    Attributes:
        pos_m: translation [m], shape (3,), camera axes (x right, y up, z backwards).
        rot_rad: rotation vector [rad], shape (3,), camera axes.
    """

    pos_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rot_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @classmethod
    def from_vector(cls, v: npt.ArrayLike) -> CameraOffset:
        """From ``[dx, dy, dz, rx, ry, rz]`` (metres, then radians)."""
        a = np.asarray(v, dtype=float).reshape(6)
        return cls((float(a[0]), float(a[1]), float(a[2])), (float(a[3]), float(a[4]), float(a[5])))

    def is_zero(self) -> bool:
        """True when the offset changes nothing."""
        return not (any(self.pos_m) or any(self.rot_rad))


def rotvec_to_mat(r: npt.ArrayLike) -> np.ndarray:
    """Rotation matrix of a rotation vector [rad], shape (3, 3) (Rodrigues)."""
    v = np.asarray(r, dtype=float)
    th = float(np.linalg.norm(v))
    if th < 1e-15:
        return np.eye(3)
    k = v / th
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * kx + (1 - np.cos(th)) * kx @ kx


def quat_to_mat(q: npt.ArrayLike) -> np.ndarray:
    """Rotation matrix of a unit quaternion (w, x, y, z), shape (3, 3)."""
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(q, dtype=float))
    return mat.reshape(3, 3)


def mat_to_quat(m: npt.ArrayLike) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix."""
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(m, dtype=float).reshape(9))
    return q


class Kinematics:
    """Forward kinematics of one model for a named camera and joint order.

    Args:
        model: an ``MjModel`` or a path to MJCF.
        camera: the camera name; a miss lists the model's cameras.
        joint_names: joints in the order angles are given, shape (J,).
        source: file named in errors.
    """

    def __init__(
        self,
        model: mujoco.MjModel | str | Path,
        camera: str,
        joint_names: Sequence[str],
        source: str | Path | None = None,
    ) -> None:
        self.model = model if isinstance(model, mujoco.MjModel) else load_model(model)
        self.source = source
        self.cam_id = object_id(self.model, "camera", camera, source=source)
        self.joint_names = tuple(joint_names)
        self.qadr = np.array(
            [
                int(self.model.jnt_qposadr[object_id(self.model, "joint", j, source=source)])
                for j in self.joint_names
            ],
            dtype=np.int64,
        )
        self.data = mujoco.MjData(self.model)
        self.cam_body = int(self.model.cam_bodyid[self.cam_id])
        self.cam_pos0 = np.array(self.model.cam_pos[self.cam_id], dtype=float)
        self.cam_quat0 = np.array(self.model.cam_quat[self.cam_id], dtype=float)

    # ---- state -------------------------------------------------------------------------
    def set_q(self, q: npt.ArrayLike) -> None:
        """Set the joint angles [rad], shape (J,), and run ``mj_kinematics``."""
        qa = np.asarray(q, dtype=float).reshape(-1)
        if qa.shape[0] != len(self.joint_names):
            raise InputError(
                file=self.source,
                field="q",
                expected=f"{len(self.joint_names)} joint angles ({', '.join(self.joint_names)})",
                got=f"{qa.shape[0]} values",
            )
        self.data.qpos[self.qadr] = qa
        mujoco.mj_kinematics(self.model, self.data)

    def camera_local(self, offset: CameraOffset | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The camera's pose in its body's frame after ``offset``: position (3,), R (3, 3)."""
        r0 = quat_to_mat(self.cam_quat0)
        if offset is None or offset.is_zero():
            return self.cam_pos0.copy(), r0
        pos = self.cam_pos0 + r0 @ np.asarray(offset.pos_m, dtype=float)
        return pos, r0 @ rotvec_to_mat(offset.rot_rad)

    def camera_pose(
        self,
        q: npt.ArrayLike,
        offset: CameraOffset | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """World pose of the camera at ``q``: position [m] (3,), R (3, 3) (columns = axes)."""
        self.set_q(q)
        bpos = np.array(self.data.xpos[self.cam_body])
        bmat = np.array(self.data.xmat[self.cam_body]).reshape(3, 3)
        lpos, lmat = self.camera_local(offset)
        return bpos + bmat @ lpos, bmat @ lmat

    def to_camera(
        self, p_world: npt.ArrayLike, q: npt.ArrayLike, offset: CameraOffset | None = None
    ) -> np.ndarray:
        """Points in the camera frame [m], shape (..., 3)."""
        pos, rot = self.camera_pose(q, offset)
        p = np.asarray(p_world, dtype=float)
        out: np.ndarray = (p - pos) @ rot
        return out

    def focal_px(self, height: int) -> float:
        """Focal length [px] for an image ``height`` px tall (from the camera's fovy)."""
        fovy = np.deg2rad(float(self.model.cam_fovy[self.cam_id]))
        return float(height / 2.0 / np.tan(fovy / 2.0))

    def project(self, p_cam: npt.ArrayLike, size: tuple[int, int]) -> np.ndarray:
        """Pinhole projection of camera-frame points to pixel (u, v), shape (..., 2).

        u grows right and v grows down, origin at the top-left corner of the image of
        ``size`` (height, width); pixel centres sit at half-integers.
        """
        p = np.asarray(p_cam, dtype=float)
        f = self.focal_px(size[0])
        depth = -p[..., 2]
        u = size[1] / 2.0 + f * p[..., 0] / depth
        v = size[0] / 2.0 - f * p[..., 1] / depth
        return np.stack([u, v], axis=-1)

    # ---- structure ---------------------------------------------------------------------
    def chain_joints(self) -> list[str]:
        """Named hinge/slide joints between the world and the camera, base first."""
        out: list[str] = []
        b = self.cam_body
        while b > 0:
            for j in range(
                int(self.model.body_jntadr[b]),
                int(self.model.body_jntadr[b]) + int(self.model.body_jntnum[b]),
            ):
                n = mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_JOINT, j)
                if n and int(self.model.jnt_type[j]) in (
                    int(mujoco.mjtJoint.mjJNT_HINGE),
                    int(mujoco.mjtJoint.mjJNT_SLIDE),
                ):
                    out.append(n)
            b = int(self.model.body_parentid[b])
        return out[::-1]

    def rigid_root(self) -> int:
        """The body the camera moves rigidly with: walk up until a body has a joint."""
        b = self.cam_body
        while b > 0 and int(self.model.body_jntnum[b]) == 0:
            b = int(self.model.body_parentid[b])
        return b

    def subtree_geoms(self, body: int) -> list[int]:
        """Geom ids of ``body`` and every body below it."""
        bodies = {body}
        for b in range(self.model.nbody):
            p = b
            while p > 0:
                if p in bodies:
                    bodies.add(b)
                    break
                p = int(self.model.body_parentid[p])
        return [g for g in range(self.model.ngeom) if int(self.model.geom_bodyid[g]) in bodies]

    def body_geoms(self) -> list[int]:
        """The robot's own body as the camera sees it: geoms below the camera's rigid root."""
        return self.subtree_geoms(self.rigid_root())

    def geom_positions(self, ids: Sequence[int]) -> np.ndarray:
        """World centres [m] of geoms after the last ``set_q``, shape (n, 3)."""
        return np.array([self.data.geom_xpos[i] for i in ids], dtype=float).reshape(-1, 3)

    def base_axis(self) -> tuple[np.ndarray, np.ndarray, str]:
        """The first chain joint's anchor [m] (3,) and axis (3,) at zero angles, and its name."""
        joints = self.chain_joints()
        if not joints:
            raise InputError(
                file=self.source,
                field="camera",
                expected="a camera carried by a jointed body",
                got="a camera fixed to the world",
            )
        self.set_q(np.zeros(len(self.joint_names)))
        jid = object_id(self.model, "joint", joints[0])
        return (np.array(self.data.xanchor[jid]), np.array(self.data.xaxis[jid]), joints[0])

    @property
    def fovy_deg(self) -> float:
        """The camera's vertical field of view [deg]."""
        return float(self.model.cam_fovy[self.cam_id])

    def keyframe_q(self, name: str) -> np.ndarray | None:
        """Joint angles [rad] (J,) of a named keyframe, or None when the model has none."""
        kid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, name)
        if kid < 0:
            return None
        out: np.ndarray = np.array(self.model.key_qpos[kid][self.qadr], dtype=float)
        return out

    def body_of_geom(self, geom: str) -> str:
        """The name of the body a named geom belongs to."""
        gid = object_id(self.model, "geom", geom, source=self.source)
        bid = int(self.model.geom_bodyid[gid])
        return mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_BODY, bid) or ""

    def body_rest_z(self, body: str) -> float:
        """Height [m] of a body's origin in the model's reference pose."""
        bid = object_id(self.model, "body", body, source=self.source)
        mujoco.mj_kinematics(self.model, self.data)
        return float(self.data.xpos[bid][2])


def rig_mount_points(
    model_path: str | Path,
    pan_joint: str,
    camera: str | None,
) -> dict[str, object]:
    """At the model's qpos0: the first (pan) joint's axis point [m] (``pan_axis_m``) and,
    where ``camera`` names a model camera, its field of view [deg], mount body and position
    in that body [m] (``camera_fovy_deg``, ``camera_body``, ``camera_pos_m``); a name the
    model lacks leaves its keys out."""
    m = load_model(model_path)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    out: dict[str, object] = {}
    jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, pan_joint)
    if jid >= 0:
        a = d.xanchor[jid]
        out["pan_axis_m"] = (float(a[0]), float(a[1]), float(a[2]))
    if camera is not None:
        cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if cid >= 0:
            p = m.cam_pos[cid]
            out.update(
                camera_fovy_deg=float(m.cam_fovy[cid]),
                camera_body=m.body(int(m.cam_bodyid[cid])).name,
                camera_pos_m=(float(p[0]), float(p[1]), float(p[2])),
            )
    return out
