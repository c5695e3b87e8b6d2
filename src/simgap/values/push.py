"""One logged push of an object, in model units (read by ``evidence.push_log``, replayed by
``contact/``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REST_ROWS_MAX = 10


@dataclass(frozen=True)
class PushLog:
    """One logged push in model units.

    Attributes:
        t: times [s], shape (T,).
        cmd: commanded joint positions [rad], shape (T, J), rig joint order.
        q: measured joint positions [rad], shape (T, J), or None.
        obj_pos: object position [m], shape (T, 3).
        obj_quat: object orientation (w, x, y, z), shape (T, 4), or None.
        joints: model joint names, length J.
        source: the file.
    """

    t: np.ndarray
    cmd: np.ndarray
    q: np.ndarray | None
    obj_pos: np.ndarray
    obj_quat: np.ndarray | None
    joints: tuple[str, ...]
    source: str

    @property
    def q0(self) -> np.ndarray:
        """The start joint state [rad]: measured if logged, else commanded."""
        return (self.q if self.q is not None else self.cmd)[0]

    @property
    def rest_rows(self) -> int:
        """Leading rows (1..REST_ROWS_MAX) before the first command change: the object is
        still there, so its start pose is their mean (tracker noise averaged down)."""
        moved = np.flatnonzero(np.any(self.cmd != self.cmd[:1], axis=1))
        n = int(moved[0]) if moved.size else len(self.t)
        return int(np.clip(n, 1, REST_ROWS_MAX))

    @property
    def obj_pose0(self) -> np.ndarray:
        """The object's start pose (x, y, z, qw, qx, qy, qz): the mean over ``rest_rows``."""
        k = self.rest_rows
        pos = self.obj_pos[:k].mean(axis=0)
        if self.obj_quat is None:
            return np.concatenate([pos, [1.0, 0.0, 0.0, 0.0]])
        q = self.obj_quat[:k] * np.sign(self.obj_quat[:k] @ self.obj_quat[0])[:, None]
        q = q.mean(axis=0)
        return np.concatenate([pos, q / np.linalg.norm(q)])
