"""Stepping, posing, editing and looking at a model: the MuJoCo calls of the demo bench.

``simgap.demo`` records its bench (the twin with its planted faults, the scripted episodes,
the pictures) with these functions and imports no MuJoCo itself, so that the GL backend
``simgap.sim`` chooses is in place before MuJoCo loads and a MuJoCo upgrade touches one
package. The type aliases ``Model``, ``Data``, ``Spec`` and ``Renderer`` let callers annotate
what they hold without importing MuJoCo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypeAlias

import mujoco
import numpy as np

from simgap.errors import InputError
from simgap.sim.render import RenderBackendError

Model: TypeAlias = mujoco.MjModel
Data: TypeAlias = mujoco.MjData
Spec: TypeAlias = mujoco.MjSpec
Renderer: TypeAlias = mujoco.Renderer

_KIND = {
    "joint": mujoco.mjtObj.mjOBJ_JOINT,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
    "camera": mujoco.mjtObj.mjOBJ_CAMERA,
}


def new_data(model: Model) -> Data:
    """Fresh simulation state of ``model`` (at ``qpos0``)."""
    return mujoco.MjData(model)


def name_id(model: Model, kind: Literal["joint", "actuator", "camera"], name: str) -> int:
    """The id of a named joint, actuator or camera; -1 when the model has none of that name."""
    return int(mujoco.mj_name2id(model, _KIND[kind], name))


def step(model: Model, data: Data, n: int = 1) -> None:
    """Advance ``data`` by ``n`` physics steps of ``model.opt.timestep``."""
    for _ in range(n):
        mujoco.mj_step(model, data)


def forward(model: Model, data: Data) -> None:
    """Recompute every derived quantity of ``data`` at its state, without stepping."""
    mujoco.mj_forward(model, data)


def reset(model: Model, data: Data) -> None:
    """Put ``data`` back to the model's default state (``qpos0``, zero velocity and time)."""
    mujoco.mj_resetData(model, data)


def pose(model: Model, data: Data, cameras: bool = False) -> None:
    """Forward kinematics of ``data.qpos`` (body, geom and site frames); with ``cameras``
    the camera and light frames too."""
    mujoco.mj_kinematics(model, data)
    if cameras:
        mujoco.mj_camlight(model, data)


def position_actuators(model: Model, joints: Sequence[str]) -> tuple[list[int], list[int]]:
    """(actuator id, dof address) per joint of ``joints``: the actuator of the joint's name,
    else the one whose transmission drives it (a position actuator each).

    Raises:
        InputError: a joint is absent or no actuator drives it.
    """
    acts, dofs = [], []
    for j in joints:
        jid = name_id(model, "joint", j)
        aid = name_id(model, "actuator", j)
        if jid >= 0 and aid < 0:
            aid = next(
                (
                    a
                    for a in range(model.nu)
                    if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                    and model.actuator_trnid[a, 0] == jid
                ),
                -1,
            )
        if jid < 0 or aid < 0:
            raise InputError(
                field=f"joint {j!r}",
                expected="a model joint driven by a position actuator",
                got="absent from the model",
            )
        acts.append(aid)
        dofs.append(int(model.jnt_dofadr[jid]))
    return acts, dofs


def euler_quat(euler_deg: tuple[float, float, float]) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of intrinsic rotations about x, then y, then z [deg]."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for axis, ang in zip(np.eye(3), euler_deg, strict=True):
        r = np.zeros(4)
        mujoco.mju_axisAngle2Quat(r, axis, math.radians(ang))
        out = np.zeros(4)
        mujoco.mju_mulQuat(out, q, r)
        q = out
    return q


def lag_servos(spec: Spec, actuators: Sequence[str], kp: float, kv: float, lag_s: float) -> None:
    """Make the named position actuators of ``spec`` PD servos (gain ``kp`` [N m/rad],
    damping ``kv`` [N m s/rad]) behind a first-order lag of time constant ``lag_s`` [s]
    (in place)."""
    for name in actuators:
        act = spec.actuator(name)
        act.gainprm[0] = kp
        act.biasprm[1] = -kp
        act.biasprm[2] = -kv
        act.dyntype = mujoco.mjtDyn.mjDYN_FILTEREXACT
        act.dynprm[0] = lag_s


def offset_camera(
    spec: Spec,
    compiled: Model,
    camera: str,
    offset_m: Sequence[float],
    euler_deg: tuple[float, float, float],
) -> None:
    """Move a camera of ``spec`` off its pose in ``compiled`` (the same model, compiled):
    translated by ``offset_m`` and turned by ``euler_deg``, both in its own frame (in
    place)."""
    cam = spec.camera(camera)
    cid = name_id(compiled, "camera", camera)
    q0 = np.array(compiled.cam_quat[cid], dtype=float)
    p0 = np.array(compiled.cam_pos[cid], dtype=float)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, q0)
    cam.pos = p0 + rot.reshape(3, 3) @ np.asarray(offset_m)
    q1 = np.zeros(4)
    mujoco.mju_mulQuat(q1, q0, euler_quat(euler_deg))
    cam.alt.type = mujoco.mjtOrientation.mjORIENTATION_QUAT
    cam.quat = q1


def make_renderer(model: Model, height: int = 96, width: int = 96) -> Renderer:
    """An offscreen renderer without shadows and reflections (about 1 ms a frame on CPU).

    Raises:
        RenderBackendError: no OpenGL context starts (the GL backends' own errors).
    """
    try:
        r = mujoco.Renderer(model, height, width)
    except Exception as e:  # GL backends raise their own types (EGL, OSMesa errors)
        raise RenderBackendError(f"{type(e).__name__}: {e}") from e
    r.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
    r.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    return r


def render(renderer: Renderer, data: Data, camera: str) -> np.ndarray:
    """One RGB frame from ``camera``, uint8, shape (H, W, 3)."""
    renderer.update_scene(data, camera=camera)
    return np.array(renderer.render(), dtype=np.uint8)


def camera_pose(model: Model, data: Data, camera: str) -> tuple[np.ndarray, np.ndarray]:
    """World position (3,) and rotation matrix (3, 3) of a camera (columns: x right, y up,
    z backwards, MuJoCo's convention); ``pose(..., cameras=True)`` first."""
    cid = name_id(model, "camera", camera)
    return np.array(data.cam_xpos[cid]), np.array(data.cam_xmat[cid]).reshape(3, 3)


def project(
    model: Model, data: Data, points: np.ndarray, resolution: tuple[int, int], camera: str
) -> np.ndarray:
    """Pixel coordinates (u right, v down) of world points, shape (N, 2), pinhole camera."""
    pos, rot = camera_pose(model, data, camera)
    cid = name_id(model, "camera", camera)
    h, w = resolution
    f = 0.5 * h / math.tan(math.radians(float(model.cam_fovy[cid])) / 2.0)
    pc = (np.asarray(points, dtype=float) - pos) @ rot  # camera frame
    u = w / 2.0 + f * pc[:, 0] / -pc[:, 2]
    v = h / 2.0 - f * pc[:, 1] / -pc[:, 2]
    return np.stack([u, v], axis=1)
