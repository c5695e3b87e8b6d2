"""The check of a design: the identification of the recording plus the designed episode,
and each (joint, parameter)'s interval or reason from it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simgap.actuator.excite_design import DELAY
from simgap.actuator.excite_estimate import Estimate
from simgap.actuator.excite_motion import Design
from simgap.actuator.excite_replay import episode_log
from simgap.actuator.joint_problem import JointProblem
from simgap.rig import Rig


def identify_with(rig: Rig, logs: Sequence[Any], targets: Sequence[np.ndarray], clock: str) -> Any:
    """The joint identification (``joint_id.identify``, diagnose's settings) of the given
    episodes against the rig's own MJCF, under the recorder's ``clock``."""
    from simgap.actuator.joint_id import IdConfig, identify

    cfg = IdConfig(clock=clock, jitter_s=rig.clock_jitter_s, seed=rig.seed)
    problem = JointProblem(
        rig.model_path,
        rig.joint_names,
        logs,
        targets,
        cfg.kinds,
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
    )
    try:
        return identify(problem, encoder_rad=rig.encoder_rad, config=cfg)
    finally:
        problem.close()


def check_designs(
    rig: Rig,
    est: Estimate,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    commands: np.ndarray,
    q: np.ndarray,
    fps: float,
    designs: Sequence[Design],
) -> list[Design]:
    """Each design with ``checked``: the identification of the recording plus the episode
    as recorded ``q`` [rad] (the replay at the estimate, in whole counts)."""
    from dataclasses import replace

    t = np.arange(commands.shape[0]) / fps
    res = identify_with(
        rig,
        [*logs, episode_log(t, commands, rig.joint_names, "designed episode")],
        [*targets, q],
        est.clock,
    )
    return [replace(d, checked=outcome(res, d.joint, d.kind)) for d in designs]


def outcome(res: Any, joint: str, kind: str) -> dict[str, Any]:
    """An identification's interval (or its reason) for one (joint, parameter)."""
    j = res.joints.index(joint)
    if kind == DELAY:
        p = res.delay[j]
        return (
            {"reason": res.ridge[j]}
            if res.ridge[j]
            else {"interval": [float(p.interval_s[0]), float(p.interval_s[1])]}
        )
    k = res.kinds.index(kind)
    why = res.reasons[j].get(kind, "")
    local = [float(x) for x in res.intervals[j, k]]
    # a declared parameter keeps its local interval beside the reason (what the fit's
    # linearisation gives, not stated as a 95 % interval)
    return (
        {"reason": why, "value": float(res.values[j, k]), "local_interval": local}
        if why
        else {"interval": local, "value": float(res.values[j, k])}
    )
