"""The replay at a diagnosis's estimate that ``next_motion`` designs with: the
identification's problem on one joint, its noise, an episode's sensitivities and the
replay's own floor."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simgap.actuator.excite_design import sensitivities
from simgap.actuator.excite_estimate import Estimate
from simgap.actuator.joint_problem import JointProblem
from simgap.rig import Rig


def episode_log(t: np.ndarray, commands: np.ndarray, joints: Sequence[str], source: str) -> Any:
    from simgap.sim.replay import ReplayLog

    return ReplayLog(
        t=t,
        commands=commands,
        joints=tuple(joints),
        q0=commands[0],
        hold_before=commands[0],
        source=source,
    )


def joint_fit_problem(
    model: Path,
    rig: Rig,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    kinds: tuple[str, ...],
    joint: str,
    clock: str,
) -> JointProblem:
    return JointProblem(
        model,
        rig.joint_names,
        logs,
        targets,
        kinds or ("damping",),
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
        fit_joints=[joint],
        clock=clock,
    )


def replay_noise(
    prob: JointProblem,
    rig: Rig,
    clock: str,
    delay_s: float,
) -> tuple[float, float, float, float]:
    """(residual variance, the replay's floor variance [rad^2], lag-1 inflation, the
    replay's own floor on the recording [rad]) of the problem's one joint, as the
    identification sets them: the recording's residual at the estimate (at least the
    instrument's floor, ``noise_floor``) and its autocorrelation; the floor of what a
    replay tells apart (the model's discretisation counts unless the recorder reads on the
    model's steps); the replay's change for a start known to half a count or commands
    moved by float rounding, without the discretisation (``replay_floor``'s test)."""
    from simgap.actuator.noise_floor import noise_floor
    from simgap.fit.profile import lag1_inflation

    f = noise_floor(prob, rig.encoder_rad, rig.clock_jitter_s)[prob.joints[0]]
    model = f["discretisation_rad"] if clock != "step" else 0.0
    r = prob.residuals(prob.z0[None], np.array([delay_s]))[0, 0]
    s2 = max(float(np.mean(r**2)), f["total_rad"] ** 2)
    calm = max(f["start_state_rad"], f["chaos_rad"])
    return s2, max(calm, model) ** 2, lag1_inflation(r), calm


def episode_jacobian(
    model: Path,
    rig: Rig,
    commands: np.ndarray,
    fps: float,
    kinds: tuple[str, ...],
    joint: str,
    est: Estimate,
    jac: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(the sensitivities of ``joint`` over the episode, (T, K + 1); the replay of every
    joint at the estimate with ``joint``'s delay [rad], (T, J))."""
    t = np.arange(commands.shape[0]) / fps
    log = episode_log(t, commands, rig.joint_names, "designed episode")
    prob = joint_fit_problem(model, rig, [log], [np.zeros_like(commands)], kinds, joint, est.clock)
    try:
        d = est.delay_s.get(joint, 0.0)
        q = prob.replays(prob.z0[None], np.array([d]))[0].q[0]
        out = sensitivities(prob, prob.z0, d) if jac else np.zeros((t.size, 0))
    finally:
        prob.close()
    return out, np.asarray(q)


def replay_floor(
    model: str | Path,
    rig: Rig,
    commands: np.ndarray,
    fps: float,
    joint: str,
    clock: str,
    delay_s: float,
) -> tuple[float, float]:
    """(the replay's own floor on an episode, the instrument's floor there) for ``joint``
    [rad], under the model at ``model`` (``noise_floor``: the widest of the replay's change
    for a start known to half an encoder count and for commands moved by float rounding;
    quantisation, start and the rig's jitter at the commanded speed).

    A candidate whose replay floor at the estimate exceeds both the instrument's floor and
    the recording's own replay floor (without the model's discretisation) is refused: the
    identification counts that floor in every interval, and its fit cannot settle below
    it nor reach its gate of 1.5x the instrument's floor. (On the 5 ms SO-101 a swing at
    the torque limit raised the identification's chaos term from 0.001-0.06 to
    2.7-8.1 mrad against a floor of 0.44; docs/actuator.md.)"""
    from simgap.actuator.noise_floor import noise_floor

    t = np.arange(commands.shape[0]) / fps
    log = episode_log(t, commands, rig.joint_names, "designed episode")
    prob = joint_fit_problem(Path(model), rig, [log], [commands], (), joint, clock)
    try:
        prob.replayer.delay_s = float(delay_s)
        f = noise_floor(prob, rig.encoder_rad, rig.clock_jitter_s)[joint]
    finally:
        prob.close()
    return max(f["chaos_rad"], f["start_state_rad"]), f["total_rad"]
