"""The load a joint's servo moves, read off a MuJoCo model.

For the servo rung the joint is treated as one degree of freedom with the other joints
held still: its effective inertia (the joint's diagonal entry of the mass matrix, which
includes the joint's armature) and the gravity torque as a function of its own angle,
``g_sin * sin(q) + g_cos * cos(q)`` (exact for one hinge under gravity when the other
joints do not move), fitted by least squares to MuJoCo's bias force over the joint range.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from simgap.sim.model import (
    actuator_for_joint,
    joint_dof_index,
    joint_qpos_index,
    load_model,
    object_id,
)
from simgap.values.load import JointLoad


def joint_load(
    model: mujoco.MjModel | str | Path, joint: str, qpos: np.ndarray | None = None, n_grid: int = 24
) -> JointLoad:
    """Inertia, gravity and torque limit of one joint.

    Args:
        model: a compiled model or an MJCF path.
        joint: hinge joint name (a miss lists the joints).
        qpos: the pose the other joints hold (default: the model's qpos0).
        n_grid: angles sampled over the joint range.

    Returns:
        JointLoad with ``inertia`` [kg m^2] including the model's armature (so a fit over
        this load reports the armature *added* to the model's), gravity coefficients [N m]
        and the driving actuator's force limit [N m] (inf when unlimited or undriven).
    """
    m = model if isinstance(model, mujoco.MjModel) else load_model(model)
    jid = object_id(m, "joint", joint)
    qa, da = joint_qpos_index(m, joint), joint_dof_index(m, joint)
    d = mujoco.MjData(m)
    base = np.array(m.qpos0 if qpos is None else qpos, dtype=float)
    if m.jnt_limited[jid]:
        lo, hi = (float(x) for x in m.jnt_range[jid])
    else:
        lo, hi = -np.pi, np.pi
    grid = np.linspace(lo, hi, n_grid)
    inertia, tau = [], []
    for q in grid:
        d.qpos[:] = base
        d.qpos[qa] = q
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        inertia.append(full[da, da])
        tau.append(-d.qfrc_bias[da])
    A = np.stack([np.sin(grid), np.cos(grid)], axis=1)
    coef, *_ = np.linalg.lstsq(A, np.array(tau), rcond=None)
    tau_max = float("inf")
    try:
        a = actuator_for_joint(m, joint)
        if m.actuator_forcelimited[a]:
            tau_max = float(np.max(np.abs(m.actuator_forcerange[a])))
    except KeyError:
        pass
    return JointLoad(
        inertia=float(np.mean(inertia)), g_sin=float(coef[0]), g_cos=float(coef[1]), tau_max=tau_max
    )


def model_timestep(model: str | Path) -> float:
    """The model's physics step ``opt.timestep`` [s]."""
    return float(load_model(model).opt.timestep)


def joint_ranges(model: str | Path, joints: list[str]) -> dict[str, tuple[float, float]]:
    """Each joint's range [rad] (±pi when the joint is unlimited)."""
    m = load_model(model)
    out = {}
    for j in joints:
        jid = object_id(m, "joint", j)
        lo, hi = (float(x) for x in m.jnt_range[jid]) if m.jnt_limited[jid] else (-np.pi, np.pi)
        out[j] = (lo, hi)
    return out
