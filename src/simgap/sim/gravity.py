"""The gravity torque on each joint at given poses, read off a MuJoCo model.

At rest (zero velocity) MuJoCo's bias force ``qfrc_bias`` is the gravity load alone, and the
actuator holds the joint still by pushing with exactly it (``qfrc_actuator = qfrc_bias``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.model import joint_dof_index, joint_qpos_index, load_model


def gravity_torques(
    model: str | Path | mujoco.MjModel, joint_names: Sequence[str], q: npt.ArrayLike
) -> np.ndarray:
    """The torque [N m] each actuator holds against gravity at rest, shape (T, J), at poses
    ``q`` [rad], shape (T, J) in ``joint_names`` order (other joints at the model's qpos0)."""
    m = model if isinstance(model, mujoco.MjModel) else load_model(model)
    qa = np.asarray(q, dtype=float)
    if qa.ndim != 2 or qa.shape[1] != len(joint_names):
        raise InputError(
            field="q", expected=f"shape (T, {len(joint_names)})", got=f"shape {qa.shape}"
        )
    qadr = [joint_qpos_index(m, j) for j in joint_names]
    dadr = [joint_dof_index(m, j) for j in joint_names]
    d = mujoco.MjData(m)
    out = np.empty_like(qa)
    for i, row in enumerate(qa):
        d.qpos[:] = m.qpos0
        d.qpos[qadr] = row
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        out[i] = d.qfrc_bias[dadr]
    return out
