"""Synthetic SO-101 recordings for the joint identification tests (not a test module).

The truth model is the Menagerie SO-101 with planted multipliers, replayed at the model's
physics step with the planted delay (commands at their own times); the recording
follows LeRobot's record loop: at each frame the joints are read (quantised to encoder
counts), then the action is sent. Timestamps are float32 like a LeRobot dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SO101 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "so101" / "so101.xml"
JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll",
          "gripper")
ENCODER = 2 * np.pi / 4096


@dataclass(frozen=True)
class Bench:
    logs: list
    targets: list
    truth: dict
    delay_s: float


def targets_for(model, joints, seconds: float, fps: float, rng, amp: float = 0.3,
                fmin: float = 0.1, fmax: float = 0.6, step: float = 0.0,
                ) -> tuple[np.ndarray, np.ndarray]:
    """Wide-band joint targets: a sum of sines plus small held random steps, inside
    ``amp`` of each joint's half range."""
    t = (np.arange(int(round(seconds * fps))) / fps)
    cmd = np.empty((t.size, len(joints)))
    for k, j in enumerate(joints):
        lo, hi = model.jnt_range[model.joint(j).id]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        f = rng.uniform(fmin, fmax, 3)
        ph = rng.uniform(0, 2 * np.pi, 3)
        s = np.sin(2 * np.pi * f[None] * t[:, None] + ph[None]).sum(1) / 3
        steps = np.repeat(rng.uniform(-1, 1, t.size // int(fps * 0.7) + 1),
                          int(fps * 0.7))[:t.size]
        cmd[:, k] = mid + amp * half * ((1 - step) * s + step * steps)
    return t, cmd


def make_bench(seed: int, fps: float, *, truth: dict | None = None, delay_s: float = 0.0,
               episodes: int = 2, seconds: float = 4.0, joints=JOINTS,
               physics_dt: float | None = None, amp: float = 0.3,
               fmax: float = 0.6) -> Bench:
    """Episodes recorded from the truth model ``{(kind, joint): multiplier}``."""
    from simgap.sim.model import get_param, load_spec, strip_visuals, with_params
    from simgap.sim.replay import Replayer, ReplayLog

    rng = np.random.default_rng(seed)
    spec = strip_visuals(load_spec(SO101))
    truth = truth or {}
    logs, tgts = [], []
    with Replayer.build(spec, joints, physics_dt=physics_dt, nthread=1) as rep:
        writes = {key: get_param(rep.model, *key) * m for key, m in truth.items()}
        model = with_params(rep.model, writes)
        for _ in range(episodes):
            t, cmd = targets_for(rep.model, joints, seconds, fps, rng, amp, fmax=fmax)
            t32 = t.astype(np.float32).astype(float)
            q0 = cmd[0] + rng.normal(0, 0.01, len(joints))
            log = ReplayLog(t=t32, commands=cmd, joints=tuple(joints), q0=q0)
            q = rep.replay([model], log, [delay_s]).q[0]
            tgts.append(np.round(q / ENCODER) * ENCODER)
            logs.append(ReplayLog(t=t32, commands=cmd, joints=tuple(joints), q0=tgts[-1][0]))
    return Bench(logs=logs, targets=tgts, truth=dict(truth), delay_s=delay_s)
