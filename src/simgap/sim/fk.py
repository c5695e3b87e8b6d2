"""Forward kinematics: end-effector positions of recorded joint angles through the rig model.

The episodes package segments rollouts from the end effector's motion but may not import
MuJoCo; it takes the positions this module computes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import mujoco
import numpy as np
import numpy.typing as npt

from simgap.errors import InputError, NameNotFoundError
from simgap.sim.model import joint_qpos_index, load_model, names


def frames(
    model: mujoco.MjModel, data: mujoco.MjData, qadr: np.ndarray, q: npt.ArrayLike
) -> Iterator[int]:
    """Run ``mj_kinematics`` at each row of ``q`` [rad], shape (T, J) with J = ``qadr.size``
    (the ``qpos`` addresses of its columns), the other coordinates at the model's ``qpos0``;
    yields each row's index with ``data`` posed at it (read what you need before the next).

    Raises:
        InputError: ``q`` is not of shape (T, J).
    """
    qa = np.asarray(q, dtype=float)
    if qa.ndim != 2 or qa.shape[1] != qadr.size:
        raise InputError(field="q", expected=f"shape (T, {qadr.size})", got=f"shape {qa.shape}")
    qpos0 = model.qpos0.copy()
    for i, row in enumerate(qa):
        data.qpos[:] = qpos0
        data.qpos[qadr] = row
        mujoco.mj_kinematics(model, data)
        yield i


class JointPoser:
    """A rig model with its own ``MjData``, posed by named joint angles (``frames``).

    Args:
        model_path: the MJCF of the rig.
        joint_names: model joint names, one per column of the ``q`` arrays passed later.
    """

    def __init__(self, model_path: str | Path, joint_names: Sequence[str]) -> None:
        self.model = load_model(model_path)
        self.data = mujoco.MjData(self.model)
        self.joint_names = tuple(joint_names)
        self.qadr = np.array([joint_qpos_index(self.model, j) for j in self.joint_names], dtype=int)
        """``qpos`` address of each of ``joint_names``, shape (J,)."""

    def frames(self, q: npt.ArrayLike) -> Iterator[int]:
        """``frames`` of this model at ``q`` [rad], shape (T, J) in ``joint_names`` order."""
        return frames(self.model, self.data, self.qadr, q)


class ForwardKinematics(JointPoser):
    """World position of a site (or body) as a function of named joint angles.

    Args:
        model_path: the MJCF of the rig.
        joint_names: model joint names, one per column of the ``q`` arrays passed later.
        ee: the end effector: a site name, else a body name.
    """

    def __init__(self, model_path: str | Path, joint_names: Sequence[str], ee: str) -> None:
        super().__init__(model_path, joint_names)
        sid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, ee)
        bid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, ee)
        if sid < 0 and bid < 0:
            raise NameNotFoundError(
                "site or body",
                ee,
                names(self.model, "site") + names(self.model, "body"),
                file=model_path,
                field="model.ee_site",
            )
        self._site = int(sid) if sid >= 0 else None
        self._body = int(bid)

    def positions(self, q: npt.ArrayLike) -> np.ndarray:
        """End-effector world positions [m], shape (T, 3), for joint angles ``q`` [rad],
        shape (T, J) in ``joint_names`` order."""
        out = np.empty((np.shape(q)[0], 3)) if np.ndim(q) == 2 else np.empty((0, 3))
        for i in self.frames(q):
            out[i] = (
                self.data.site_xpos[self._site]
                if self._site is not None
                else self.data.xpos[self._body]
            )
        return out
