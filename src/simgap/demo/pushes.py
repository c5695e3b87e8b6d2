"""The demo bench's push logs: the gripper's pad pushing the cube sideways on the twin."""

from __future__ import annotations

import math

import numpy as np

from simgap.demo.episode import joint_qpos_adr, reset_scene, settle
from simgap.demo.script import Planner, Script
from simgap.demo.truth import TRUTH
from simgap.demo.twin import JOINTS, Readout, nominal_model, to_recorded, twin_model
from simgap.sim import scene

PUSHES: tuple[tuple[tuple[float, float], float], ...] = (((0.25, -0.02), 1.0), ((0.22, 0.04), -1.0))
"""Cube position [m] and side (+1: towards +y) of the logged pushes."""


PUSH_S = 3.0
"""Duration of the pad's travel in a logged push [s]."""


PUSH_ALONG_M = -0.006
"""Where along its face the pad starts, from the cube's centre line [m]."""


def push_logs(seed: int) -> list[tuple[list[str], list[list[float]]]]:
    """Two logged pushes on the twin (30 Hz rows): the wrist is rolled a quarter turn so the
    open gripper's fixed pad faces the cube sideways, and the pad moves 45 degrees off its
    face normal: the cube moves with the pad only when the pad friction exceeds 1, and
    slides along the pad otherwise. (Rolled so, a joint-zero error moves the pad along its
    face, not towards the cube.)"""
    rng = np.random.default_rng([seed, 13])
    model = twin_model()
    planner = Planner(nominal_model())
    data = scene.new_data(model)
    ro = Readout.of(TRUTH)
    qa = joint_qpos_adr(model)
    out = []
    open_rad, roll = 1.0, math.pi / 2
    seed_q = np.array(Script().start_q[:4])
    for cube_xy, side in PUSHES:
        bearing = math.atan2(cube_xy[1], cube_xy[0] - 0.0388353)
        radial = np.array([math.cos(bearing), math.sin(bearing), 0.0])
        centre = np.array([cube_xy[0], cube_xy[1], 0.018])
        q_guess = planner.ik(centre, seed_q, roll)
        normal = planner.pad_normal(q_guess, roll, open_rad)
        lateral = radial - normal * float(radial @ normal)
        lateral /= np.linalg.norm(lateral)
        start = centre - normal * (0.0125 + 0.002 + 0.003) + lateral * PUSH_ALONG_M
        direction = (normal + side * lateral) / math.sqrt(2.0)
        q0 = np.concatenate([planner.ik(start, q_guess, roll), [roll, open_rad]])
        reset_scene(model, data, ro.target(q0), (cube_xy[0], cube_xy[1], bearing))
        settle(model, data, 0.5)
        header = [
            "t",
            *[f"cmd_{j}" for j in JOINTS],
            *[f"q_{j}" for j in JOINTS],
            "obj_x",
            "obj_y",
            "obj_z",
            "obj_qw",
            "obj_qx",
            "obj_qy",
            "obj_qz",
        ]
        rows = []
        cadr = model.joint("cube_free").qposadr[0]
        q_prev = q0[:4]
        for i in range(int((PUSH_S + 0.4) * 30) + 1):
            a = min(1.0, i / (PUSH_S * 30))
            target = start + direction * 0.06 * (0.5 - 0.5 * math.cos(math.pi * a))
            q_prev = planner.ik(target, q_prev, roll)
            cmd = np.concatenate([q_prev, [roll, open_rad]])
            pose = data.qpos[cadr : cadr + 7] + np.concatenate(
                [rng.normal(0, 0.0003, 3), np.zeros(4)]
            )
            rows.append([i / 30, *to_recorded(cmd), *to_recorded(ro.read(data.qpos[qa])), *pose])
            data.ctrl[:] = ro.target(cmd)
            settle(model, data, 1 / 30)
        out.append((header, rows))
    return out
