"""``simgap excite --for DIR``: the episode to record next, designed from a diagnosis.

``estimate_from_diagnosis`` reads what the actuator finding of ``findings.json`` left open:
every (joint, parameter) declared not identifiable, and every delay on a ridge, with the
current estimate (the best fit whole, ``params_fitted``; the delays; the recorder's clock).
``next_motion`` designs, per such joint, the motion that narrows it most
(``excite_design``), assembles them into one episode, predicts each interval on the
recording plus that episode, and (``check``) simulates the episode on the current estimate,
adds it to the recording and runs the identification, so the prediction is held against a
fit. The caller writes the episode as a LeRobot v3 dataset (``episode_frames``) with
``readme`` beside it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simgap.actuator.excite import DEFAULT_VMAX_RAD_S
from simgap.actuator.excite_check import check_designs
from simgap.actuator.excite_design import (
    DELAY,
    SEGMENT_S,
    Prediction,
    Segment,
    assemble,
    candidates,
    predict,
    sensitivities,
)
from simgap.actuator.excite_estimate import Estimate
from simgap.actuator.excite_motion import Design, NextMotion
from simgap.actuator.excite_replay import (
    episode_jacobian,
    joint_fit_problem,
    replay_floor,
    replay_noise,
)
from simgap.actuator.joint_problem import KINDS
from simgap.errors import InputError
from simgap.rig import Rig


def _settings(est: Estimate, joints: Sequence[str]) -> dict[str, Any]:
    from simgap.sim.actuator_patch import ActuatorSettings

    names = ("kp", "kv", "damping", "frictionloss", "armature", "force_limit")
    return {
        j: ActuatorSettings(
            **{k: float(v) for k, v in est.params[j].items() if k in names and np.isfinite(v)}
        )
        for j in joints
        if j in est.params
    }


def next_motion(
    rig: Rig,
    est: Estimate,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    fps: float,
    *,
    vmax_rad_s: float = DEFAULT_VMAX_RAD_S,
    seconds: float = SEGMENT_S,
    seed: int = 0,
    check: bool = True,
) -> NextMotion:
    """Design the episode for every open target of ``est`` (module docstring).

    Args:
        rig: the rig (model, joints, encoder, physics step).
        est: the diagnosis's estimate and open targets.
        logs, targets: the recording the diagnosis fitted (``ReplayLog``s and measured
            joints [rad], (T, J) each).
        fps: the recording's frame rate [Hz].
        vmax_rad_s: the joint speed the replay at the estimate may reach [rad/s].
        seconds: length of each joint's motion [s].
        seed: seed of the chirp phases.
        check: simulate the episode at the estimate and identify (the slow part).
    """
    from simgap.sim.actuator_patch import write_actuator_patch
    from simgap.sim.load import joint_ranges

    joints = tuple(rig.joint_names)
    open_joints = [j for j in joints if any(t[0] == j for t in est.targets)]
    if not open_joints:
        raise InputError(
            field="not_identifiable",
            expected="at least one parameter the diagnosis declared not identifiable",
            got="none: every parameter has an interval",
            fix="nothing to design: the recording already "
            "identifies the joints ('simgap excite RIG' writes generic chirps)",
        )
    ranges = joint_ranges(rig.model_path, list(joints))
    start = np.asarray(logs[0].commands[0], dtype=float)
    enc = rig.encoder_rad
    with tempfile.TemporaryDirectory(prefix="simgap-excite-") as tmp:
        model = write_actuator_patch(
            rig.model_path, Path(tmp) / "estimate.xml", _settings(est, joints)
        )
        chosen: dict[str, list[Segment]] = {}
        per: dict[tuple[str, str], tuple[Segment, Prediction, dict[str, float]]] = {}
        floors: dict[str, tuple[float, float, float, np.ndarray, tuple[str, ...]]] = {}
        for j in open_joints:
            kinds = tuple(k for k in KINDS if k in est.params.get(j, {}))
            prob = joint_fit_problem(model, rig, logs, targets, kinds, j, est.clock)
            try:
                s2, s2_min, infl, calm = replay_noise(prob, rig, est.clock, est.delay_s[j])
                jac_rec = sensitivities(prob, prob.z0, est.delay_s[j])
            finally:
                prob.close()
            floors[j] = (s2, s2_min, infl, jac_rec, kinds)
            before = predict([jac_rec], kinds, s2, s2_min, infl)
            scores: dict[str, dict[str, float]] = {}
            for seg in candidates(
                j, *ranges[j], fps, vmax_rad_s=vmax_rad_s, seconds=seconds, seed=seed
            ):
                cmd = _counts(assemble(start, joints, [seg], fps, vmax_rad_s), enc)
                jac, q = episode_jacobian(model, rig, cmd, fps, kinds, j, est)
                if not _feasible(q[:, joints.index(j)], fps, ranges[j], vmax_rad_s):
                    continue
                chaos, inst = replay_floor(model, rig, cmd, fps, j, est.clock, est.delay_s[j])
                if chaos > max(inst, calm):
                    continue  # the replay at the estimate could not follow it
                pred = predict([jac_rec, jac], kinds, s2, s2_min, infl)
                for k in (t[1] for t in est.targets if t[0] == j):
                    scores.setdefault(k, {})[seg.name] = float(
                        pred.halfwidth[pred.columns.index(k)]
                    )
                    best = per.get((j, k))
                    if best is None or scores[k][seg.name] < best[2][best[0].name]:
                        per[(j, k)] = (seg, before, scores[k])
            for seg, _, _ in (per[(j, k)] for k in scores):
                if all(s.name != seg.name for s in chosen.setdefault(j, [])):
                    chosen[j].append(seg)
        segments = [s for j in joints for s in chosen.get(j, [])]
        if not segments:
            raise InputError(
                field="excitation",
                expected="a candidate motion inside the "
                "joints' ranges and the speed limit whose replay the model "
                "follows (no more chaotic than the recording's)",
                got="none",
                fix="raise --vmax (the joint speed allowed) or check the "
                "model's joint ranges; a model whose replay is chaotic on "
                "every candidate needs a shorter physics step",
            )
        commands = _counts(assemble(start, joints, segments, fps, vmax_rad_s), enc)
        designs, q_pred = [], np.zeros_like(commands)
        for j in {t[0] for t in est.targets if (t[0], t[1]) in per}:
            s2, s2_min, infl, jac_rec, kinds = floors[j]
            jac, q = episode_jacobian(model, rig, commands, fps, kinds, j, est)
            q_pred[:, joints.index(j)] = q[:, joints.index(j)]
            after = predict([jac_rec, jac], kinds, s2, s2_min, infl)
            for jj, k, why in est.targets:
                if jj != j or (j, k) not in per:
                    continue
                seg, before, sc = per[(j, k)]
                value = est.delay_s[j] if k == DELAY else est.params[j][k]
                designs.append(Design(j, k, why, float(value), seg, before, after, dict(sc)))
        for j in joints:  # the joints left out: the replay at the estimate with their delay
            if j not in {d.joint for d in designs}:
                _, q = episode_jacobian(model, rig, commands, fps, (), j, est, jac=False)
                q_pred[:, joints.index(j)] = q[:, joints.index(j)]
    designs.sort(key=lambda d: (joints.index(d.joint), (*KINDS, DELAY).index(d.kind)))
    if check:
        designs = check_designs(
            rig, est, logs, targets, commands, np.rint(q_pred / enc) * enc, fps, designs
        )
    return NextMotion(
        joints=joints,
        fps=fps,
        commands=commands,
        predicted_q=q_pred,
        start=start,
        designs=tuple(designs),
    )


def _counts(q: np.ndarray, enc: float) -> np.ndarray:
    out: np.ndarray = np.rint(q / enc) * enc
    return out


def _feasible(q: np.ndarray, fps: float, rng: tuple[float, float], vmax: float) -> bool:
    """Whether a joint's replay stays finite, inside its range and under ``vmax``."""
    if not np.all(np.isfinite(q)):
        return False
    speed = np.abs(np.gradient(q)) * fps
    return bool(q.min() >= rng[0] and q.max() <= rng[1] and speed.max() <= vmax)
