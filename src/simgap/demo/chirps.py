"""The demo bench's actuator excitation: each joint in turn chirps on the twin."""

from __future__ import annotations

import math

import numpy as np

from simgap.demo.episode import joint_qpos_adr, reset_scene, settle
from simgap.demo.script import Script
from simgap.demo.truth import TRUTH
from simgap.demo.twin import JOINTS, Readout, twin_model
from simgap.sim import scene

CHIRP_SWEEPS_HZ: tuple[tuple[float, float], ...] = ((0.3, 4.0), (0.5, 6.0))
"""One excitation log per sweep: each joint in turn chirps over it [Hz]."""


CHIRP_S = 1.5
"""Duration of one joint's chirp [s]."""


def chirps(seed: int) -> list[tuple[list[str], list[list[float]]]]:
    """Actuator excitation on the twin, logged at 100 Hz [rad]: per log, each joint in turn
    sweeps a chirp (amplitude 0.15 rad, the gripper 0.3) while the others hold the start
    pose; every joint's command, reading and velocity is logged."""
    rng = np.random.default_rng([seed, 19])
    model = twin_model()
    data = scene.new_data(model)
    ro = Readout.of(TRUTH)
    qa = joint_qpos_adr(model)
    vadr = np.array([model.joint(j).dofadr[0] for j in JOINTS])
    start = np.array(Script().start_q)
    header = [
        "t",
        *[f"cmd_{n}" for n in JOINTS],
        *[f"q_{n}" for n in JOINTS],
        *[f"qd_{n}" for n in JOINTS],
    ]
    out = []
    for f0, f1 in CHIRP_SWEEPS_HZ:
        reset_scene(model, data, ro.target(start), (0.0, 0.3, 0.0))
        rows = []
        n = int(CHIRP_S * 100)
        for i, j in enumerate(JOINTS):
            amp = 0.3 if j == "gripper" else 0.15
            for k in range(n):
                tj = k / 100
                phase = 2 * math.pi * (f0 * tj + (f1 - f0) * tj * tj / (2 * CHIRP_S))
                cmd = start.copy()
                cmd[i] += amp * math.sin(phase)
                q = ro.read(data.qpos[qa])
                qd = np.array(data.qvel[vadr]) + rng.normal(0, 0.002, len(JOINTS))
                rows.append(
                    [
                        (i * n + k) / 100,
                        *[float(v) for v in cmd],
                        *[float(v) for v in q],
                        *[float(v) for v in qd],
                    ]
                )
                data.ctrl[:] = ro.target(cmd)
                settle(model, data, 0.01)
        out.append((header, rows))
    return out
