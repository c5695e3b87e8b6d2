"""The demo bench's deployment trace: one record per tick in docs/plumbing.md's format."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from simgap.demo.episode import NAMES
from simgap.demo.twin import JOINTS


def _ticks_of(rad: float) -> int:
    return int(round(2048 + rad * 4096 / (2 * math.pi)))


def trace_record(
    gtick: int,
    episode: int,
    step: int,
    t: float,
    state_rec: np.ndarray,
    act_rec: np.ndarray,
    png: bytes,
    image_t: float,
    camera_s: float,
    cmd_rad: np.ndarray,
    q_read: np.ndarray,
    reset_t: float,
) -> dict[str, Any]:
    """One record of the deployment trace (docs/plumbing.md's format)."""
    obs: dict[str, Any] = {n: round(float(v), 4) for n, v in zip(NAMES, state_rec, strict=True)}
    obs.update(
        image_sha1=hashlib.sha1(png).hexdigest(),
        image_t=round(image_t, 6),
        image_age_s=round(t + camera_s - image_t, 6),
    )
    present = [
        {"motor": j, "register": "Present_Position", "value": _ticks_of(q)}
        for j, q in zip(JOINTS, q_read, strict=True)
    ]
    writes = [
        {"motor": j, "register": "Goal_Position", "value": _ticks_of(c)}
        for j, c in zip(JOINTS, cmd_rad, strict=True)
    ]
    events: list[dict[str, Any]] = []
    rec: dict[str, Any] = {}
    if gtick == 0:  # connect, seed every goal with the present position, then torque on
        rec["meta"] = {
            "robot_type": "so101_follower",
            "use_degrees": True,
            "control_dt_s": 1.0 / 15.0,
            "policy_server": "127.0.0.1:8080",
            "units": {n: ("pct" if n == "gripper.pos" else "deg") for n in NAMES},
        }
        writes = (
            [
                {"motor": p["motor"], "register": "Goal_Position", "value": p["value"]}
                for p in present
            ]
            + [{"motor": j, "register": "Torque_Enable", "value": 1} for j in JOINTS]
            + writes
        )
        events += [
            {"name": "connect", "t": round(reset_t - 0.5, 6)},
            {"name": "torque_enabled", "t": round(reset_t - 0.4, 6)},
        ]
    if step == 0:
        events.append({"name": "reset", "t": round(reset_t, 6)})
    rec.update(
        tick=gtick,
        episode=episode,
        t=round(t, 6),
        observation=obs,
        action={n: round(float(v), 4) for n, v in zip(NAMES, act_rec, strict=True)},
        reads=present,
        writes=writes,
        events=events,
    )
    return rec
