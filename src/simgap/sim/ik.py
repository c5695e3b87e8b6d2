"""Kinematics for the controller fit: end-effector poses of joint trajectories, and
end-effector-delta actions turned into joint targets by damped least-squares IK.

The ee-delta controller modelled here is SIMPLER's "target delta pose" mode: each control
tick adds the action (dx, dy, dz [m], rx, ry, rz [rad], an axis-angle in the world frame)
to the previous *target* pose, and a damped least-squares differential IK, iterated a few
times per tick from the previous joint target, gives the joint targets the position
servos track. Because it chains targets, not measurements, it is pure kinematics and runs
once, before the (batched) dynamic replay.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from simgap.sim.model import joint_dof_index, joint_qpos_index, object_id


def _frame(model: mujoco.MjModel, name: str) -> tuple[str, int]:
    if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name) >= 0:
        return "site", object_id(model, "site", name)
    return "body", object_id(model, "body", name)


def _pose(data: mujoco.MjData, kind: str, i: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == "site":
        pos, mat = data.site_xpos[i].copy(), data.site_xmat[i]
    else:
        pos, mat = data.xpos[i].copy(), data.xmat[i]
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, mat)
    return pos, quat


def frame_poses(
    model: mujoco.MjModel, joints: Sequence[str], q: np.ndarray, frame: str
) -> np.ndarray:
    """Pose (x, y, z, qw, qx, qy, qz) of a site or body for each joint row, shape (T, 7).

    Args:
        q: joint positions [rad], shape (T, J) in ``joints`` order; other joints at qpos0.
    """
    kind, i = _frame(model, frame)
    d = mujoco.MjData(model)
    adr = [joint_qpos_index(model, j) for j in joints]
    out = np.empty((q.shape[0], 7))
    d.qpos[:] = model.qpos0
    for k, row in enumerate(q):
        d.qpos[adr] = row
        mujoco.mj_kinematics(model, d)
        out[k, :3], out[k, 3:] = _pose(d, kind, i)
    return out


def ee_delta_targets(
    model: mujoco.MjModel,
    joints: Sequence[str],
    q0: np.ndarray,
    deltas: np.ndarray,
    frame: str,
    *,
    damping: float = 1e-3,
    iterations: int = 5,
) -> np.ndarray:
    """Joint targets for a sequence of end-effector deltas, shape (T, J).

    Row k is the joint target after applying deltas[0..k] to the start pose; row 0 of
    ``deltas`` is usually zero. Joint limits clip the targets.

    Args:
        q0: the start joint state [rad], shape (J,).
        deltas: (T, 6): translation [m] and axis-angle rotation [rad], world frame.
        frame: the end-effector site or body.
        damping: lambda of the damped least squares (J^T (J J^T + lambda^2 I)^-1).
        iterations: IK iterations per tick.
    """
    kind, i = _frame(model, frame)
    d = mujoco.MjData(model)
    adr = [joint_qpos_index(model, j) for j in joints]
    dofs = [joint_dof_index(model, j) for j in joints]
    jids = [object_id(model, "joint", j) for j in joints]
    lo = np.array([model.jnt_range[j, 0] if model.jnt_limited[j] else -np.inf for j in jids])
    hi = np.array([model.jnt_range[j, 1] if model.jnt_limited[j] else np.inf for j in jids])
    d.qpos[:] = model.qpos0
    d.qpos[adr] = q0
    mujoco.mj_kinematics(model, d)
    pos_t, quat_t = _pose(d, kind, i)
    q = np.asarray(q0, dtype=float).copy()
    out = np.empty((deltas.shape[0], len(joints)))
    jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    dq_rot = np.empty(4)
    for k, delta in enumerate(np.asarray(deltas, dtype=float)):
        pos_t = pos_t + delta[:3]
        rot = np.empty(4)
        mujoco.mju_axisAngle2Quat(
            rot,
            delta[3:] / max(np.linalg.norm(delta[3:]), 1e-300),
            float(np.linalg.norm(delta[3:])),
        )
        mujoco.mju_mulQuat(quat_t, rot, quat_t.copy())
        for _ in range(iterations):
            d.qpos[adr] = q
            mujoco.mj_kinematics(model, d)
            mujoco.mj_comPos(model, d)
            pos, quat = _pose(d, kind, i)
            err_rot = np.empty(3)
            mujoco.mju_negQuat(dq_rot, quat)
            mujoco.mju_mulQuat(dq_rot, quat_t, dq_rot)
            mujoco.mju_quat2Vel(err_rot, dq_rot, 1.0)
            err = np.concatenate([pos_t - pos, err_rot])
            if kind == "site":
                mujoco.mj_jacSite(model, d, jp, jr, i)
            else:
                mujoco.mj_jacBody(model, d, jp, jr, i)
            jac = np.vstack([jp[:, dofs], jr[:, dofs]])
            step = jac.T @ np.linalg.solve(jac @ jac.T + damping**2 * np.eye(6), err)
            q = np.clip(q + step, lo, hi)
        out[k] = q
    return out


def reach(model: mujoco.MjModel, joints: Sequence[str], q0: np.ndarray, frame: str) -> float:
    """Largest distance [m] from a joint's anchor to the frame at ``q0``: an encoder error
    of e rad moves the frame by at most about ``reach * e``."""
    kind, i = _frame(model, frame)
    d = mujoco.MjData(model)
    d.qpos[:] = model.qpos0
    d.qpos[[joint_qpos_index(model, j) for j in joints]] = q0
    mujoco.mj_kinematics(model, d)
    pos, _ = _pose(d, kind, i)
    anchors = [d.xanchor[object_id(model, "joint", j)] for j in joints]
    return float(max(np.linalg.norm(pos - a) for a in anchors))
