"""The rig's camera rendered at recorded joint angles: what the model says the camera saw,
frame by frame, beside what it recorded (the Rerun recording's ``sim/camera/<cam>``).

One ``CameraRenderer`` (simplified meshes, the camera's own buffer size, no shadows) draws
every frame; the joints not given, and a free object, stay at the model's ``qpos0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.model import joint_qpos_index, load_model
from simgap.sim.render import CameraRenderer


def render_at_angles(
    model_path: str | Path,
    camera: str,
    joint_names: Sequence[str],
    q: npt.ArrayLike,
    height: int,
    width: int,
) -> np.ndarray:
    """The camera's images at joint angles ``q`` [rad], shape (T, J) in ``joint_names``
    order.

    Returns:
        uint8 RGB, shape (T, height, width, 3).

    Raises:
        RenderBackendError: no offscreen GL context could be made.
        NameNotFoundError: the camera or a joint is not in the model.
    """
    qa = np.asarray(q, dtype=float)
    if qa.ndim != 2 or qa.shape[1] != len(joint_names):
        raise InputError(
            field="q", expected=f"shape (T, {len(joint_names)})", got=f"shape {qa.shape}"
        )
    model = load_model(model_path)
    qadr = np.array([joint_qpos_index(model, j) for j in joint_names], dtype=int)
    out = np.empty((qa.shape[0], int(height), int(width), 3), dtype=np.uint8)
    qpos = model.qpos0.copy()
    with CameraRenderer(model, camera, int(height), int(width), source=model_path) as r:
        for i, row in enumerate(qa):
            qpos[qadr] = row
            out[i] = r.render(qpos)
    return out
