"""The demo bench's static poses: one cube seen from twelve arm poses."""

from __future__ import annotations

import numpy as np

from simgap.demo.episode import NAMES, joint_qpos_adr
from simgap.demo.script import Script
from simgap.demo.truth import TRUTH
from simgap.demo.twin import CAMERA, Readout, nominal_model, to_recorded
from simgap.sim import scene


def static_poses(seed: int) -> tuple[list[str], list[list[float]], np.ndarray]:
    """One static cube seen from 12 arm poses (a fiducial tag, ±0.3 mm): recorded joints
    (with the zero offset) and the cube centre in the modelled camera frame, from the twin's
    true kinematics [m]."""
    rng = np.random.default_rng([seed, 17])
    nom = nominal_model()
    data = scene.new_data(nom)
    ro = Readout.of(TRUTH)
    qa = joint_qpos_adr(nom)
    cube = np.array([0.26, 0.03, 0.0125])
    start = np.array(Script().start_q)
    rows = []
    # pan, lift, elbow, wrist_flex, wrist_roll: the roll varies too, or a wrist_flex offset
    # would look like a camera-mount rotation
    deltas = [
        (0, 0, 0, 0, 0),
        (0.3, 0, 0, 0, 0.4),
        (-0.3, 0, 0, 0, -0.4),
        (0, 0.2, -0.2, 0, 0.6),
        (0, -0.2, 0.1, 0.25, -0.6),
        (0.2, 0.1, 0, -0.3, 0.3),
        (-0.2, 0, 0.2, 0.3, -0.3),
        (0.1, -0.15, -0.1, -0.2, 0.8),
        (0, 0.1, 0.15, -0.35, -0.8),
        (-0.15, -0.1, -0.15, 0.35, 0.9),
        (0.25, 0.15, 0.1, 0.2, -0.9),
        (-0.25, -0.05, 0.05, -0.25, 1.0),
    ]
    for d in deltas:
        q_true = start.copy()
        q_true[:5] += d
        data.qpos[qa] = q_true
        scene.pose(nom, data, cameras=True)
        pos, rot = scene.camera_pose(nom, data, CAMERA)
        pc = rot.T @ (cube - pos) + rng.normal(0.0, 0.0003, 3)
        rows.append([*[float(v) for v in to_recorded(ro.read(q_true))], *[float(v) for v in pc]])
    return [*NAMES, "obj_cam_x", "obj_cam_y", "obj_cam_z"], rows, cube
