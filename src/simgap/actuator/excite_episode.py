"""The designed episode as files: its frames in the rig's recorded units (for a LeRobot v3
dataset of one episode that ``lerobot-replay`` plays), its README with the predicted
intervals, and its JSON."""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.actuator.excite_design import DELAY
from simgap.actuator.excite_motion import Design, NextMotion
from simgap.fit.params import UNITS
from simgap.outputs import json_safe
from simgap.rig import Rig

TASK = "simgap excite: the next motion to record"
"""The task string of the designed episode."""


def episode_frames(rig: Rig, nm: NextMotion) -> tuple[dict[str, np.ndarray], list[str]]:
    """(the episode's ``action`` (the commands) and ``observation.state`` (their replay at
    the current estimate, in whole encoder counts) in the rig's recorded units, shape
    (T, J) each; the recorded names, the columns' order)."""
    enc = rig.encoder_rad
    names, act, obs = [], [], []
    for i, j in enumerate(nm.joints):
        unit = rig.joint(j).unit
        names.append(rig.joint(j).recorded)
        act.append(unit.from_rad(nm.commands[:, i]))
        obs.append(unit.from_rad(np.rint(nm.predicted_q[:, i] / enc) * enc))
    return {"action": np.stack(act, axis=1), "observation.state": np.stack(obs, axis=1)}, names


CAVEAT = (
    "How far these predictions have held: on simulated SO-101 benches with a planted "
    "armature (docs/actuator.md, 'The next episode') the designed episode made it "
    "identifiable on 0 of 17 runs; the declared interval narrowed by 1.2-2.9x or "
    "widened, and its measured width missed the predicted one by 0.66-780x. Read the "
    "predictions as the model's expectation, not a promise."
)
"""The caveat printed beside the predictions (the measured figures of docs/actuator.md)."""


JUMP_DEG = 5.0
"""A joint's target moving more than this in one frame [deg] is a step the servo takes at
its full speed and torque; the safety lines say so."""


def check_summary(nm: NextMotion) -> str:
    """What the check found, in one sentence, when it found that the episode leaves any
    target open ('' when it was not run or every target came out identified): the count,
    and that the episode is written for inspection only when it identifies none."""
    checked = [d for d in nm.designs if d.checked]
    if not checked:
        return ""
    n_ok = sum(1 for d in checked if "interval" in d.checked)
    if n_ok == len(checked):
        return ""
    if n_ok == 0:
        return (
            f"the check found this episode identifies 0 of {len(checked)} targets: it is "
            "written for inspection, not worth bench time"
        )
    left = ", ".join(f"{d.joint} {d.kind}" for d in checked if "interval" not in d.checked)
    return (
        f"the check found this episode identifies {n_ok} of {len(checked)} targets; "
        f"still not identifiable: {left}"
    )


def safety_lines(nm: NextMotion, floor: bool) -> list[str]:
    """The warning before the episode is played on an arm: per joint that moves, the range
    its targets sweep [deg] (and its largest one-frame step, where past ``JUMP_DEG``); to
    clear the workspace; and, where the model (``floor`` False) has no floor or table,
    that the motion was never checked against one."""
    sweeps = []
    for i, j in enumerate(nm.joints):
        q = np.degrees(nm.commands[:, i])
        lo, hi = float(q.min()), float(q.max())
        if hi - lo < 1.0:
            continue
        jump = float(np.max(np.abs(np.diff(q)))) if q.size > 1 else 0.0
        step = f", steps of up to {jump:.0f} deg in one frame" if jump > JUMP_DEG else ""
        sweeps.append(f"{j} {lo:+.0f}..{hi:+.0f} deg{step}")
    where = (
        "clear the arm's workspace; the model has no floor or table, so the motion was "
        "never checked against what stands around the arm"
        if not floor
        else "clear the arm's workspace (the model's floor or table is all the motion was "
        "checked against)"
    )
    return [
        "SAFETY: played on a real arm, this episode sweeps "
        + ("; ".join(sweeps) if sweeps else "no joint by more than a degree")
        + f" (from the start pose, at up to full servo speed); {where}; keep a hand on "
        "the power switch."
    ]


def _fmt(kind: str, v: float) -> str:
    return f"{v * 1e3:.1f} ms" if kind == DELAY else f"{v:.4g} {UNITS[kind]}"


def interval_text(kind: str, iv: tuple[float, float] | list[float] | None) -> str:
    """An interval with its unit (ms for the delay, the kind's SI unit and its span
    otherwise), or ``unbounded`` (None, or a bound not finite)."""
    if iv is None or not all(np.isfinite(float(x)) for x in iv):
        return "unbounded"
    a, b = float(iv[0]), float(iv[1])
    if kind == DELAY:
        return f"[{a * 1e3:.1f}, {b * 1e3:.1f}] ms"
    return (
        f"[{a:.4g}, {b:.4g}] {UNITS[kind]} (x{b / a:.3g})"
        if a > 0
        else f"[{a:.4g}, {b:.4g}] {UNITS[kind]}"
    )


def _checked(d: Design) -> str:
    c = d.checked
    if not c:
        return "not run (--no-check)"
    if "interval" in c:
        return interval_text(d.kind, c["interval"])
    return "still not identifiable: " + str(c.get("reason", ""))[:160]


def result_lines(nm: NextMotion, floor: bool = False) -> list[str]:
    """What ``excite --for`` prints: first what the check found when it leaves targets open
    (``check_summary``), the safety warning (``safety_lines``; ``floor``: the model has a
    floor or table), then per design the motion and its predicted intervals with their
    units ("unbounded" where they state no value), then ``CAVEAT``."""
    summary = check_summary(nm)
    lines = [summary] if summary else []
    lines += safety_lines(nm, floor)
    for d in nm.designs:
        c = d.checked
        check = (
            f"; simulated and fitted: {interval_text(d.kind, c['interval'])}"
            if "interval" in c
            else "; simulated and fitted: still not identifiable"
            if c
            else ""
        )
        lines.append(
            f"{d.joint} {d.kind}: {d.segment.name}; predicted 95 % "
            f"{interval_text(d.kind, d.interval('after'))} (recording alone "
            f"{interval_text(d.kind, d.interval('before'))}){check}"
        )
    return [*lines, CAVEAT]


def design_json(nm: NextMotion, source: str, floor: bool = False) -> dict[str, Any]:
    """The design as JSON: what the check found (``check_summary``, '' when every target
    came out identified or it was not run), the safety warning, per (joint, parameter) the
    motion, the current estimate and the predicted intervals (recording alone, recording
    plus the episode) and the check."""
    out: dict[str, Any] = {
        "check_summary": check_summary(nm),
        "safety": safety_lines(nm, floor)[0],
        "diagnosis": source,
        "fps": nm.fps,
        "frames": int(nm.commands.shape[0]),
        "joints": list(nm.joints),
        "start_pose_rad": nm.start.tolist(),
        "designs": [],
    }
    for d in nm.designs:
        out["designs"].append(
            {
                "joint": d.joint,
                "parameter": d.kind,
                "reason": d.reason,
                "estimate": d.value,
                "motion": d.segment.name,
                "family": d.segment.family,
                **_predicted("predicted_interval_recording", d, "before"),
                **_predicted("predicted_interval_with_episode", d, "after"),
                "candidates_halfwidth": json_safe(dict(d.scores)),
                "checked": json_safe(dict(d.checked)),
            }
        )
    out["caveat"] = CAVEAT
    return out


def _predicted(key: str, d: Design, which: str) -> dict[str, Any]:
    """``key``: the predicted interval [SI], or null with ``key``_unbounded saying why."""
    iv = d.interval(which)
    if iv is None:
        return {key: None, f"{key}_unbounded": d.unbounded(which)}
    return {key: list(iv)}


def readme(nm: NextMotion, rig: Rig, source: str, floor: bool = False) -> str:
    """The episode's README: what the check found (when it leaves targets open), the
    safety warning, what each motion is for and the intervals it should give."""
    T = nm.commands.shape[0]
    summary = check_summary(nm)
    lines = [
        "# The next motion to record (simgap excite --for)",
        "",
        *([f"**{summary[0].upper() + summary[1:]}.**", ""] if summary else []),
        f"**{safety_lines(nm, floor)[0]}**",
        "",
        f"Designed from the diagnosis `{source}` of rig `{rig.name}`: one episode of {T} "
        f"frames at {nm.fps:g} fps ({T / nm.fps:.1f} s), the action in the rig's recorded "
        "units (whole encoder counts). It starts and ends at the recording's first pose "
        "and holds it for a second; start the arm there. Each joint moves in turn, the "
        "others holding the pose.",
        "",
        "Play it on the arm, then record the arm's answer as a new episode and diagnose "
        "again with it:",
        "",
        "```",
        "lerobot-replay --robot.type=<your follower> --robot.port=<port> --robot.id=<id> \\",
        "    --dataset.repo_id=local/simgap_excite "
        "--dataset.root=<this folder> --dataset.episode=0",
        "```",
        "",
        "`observation.state` is the replay of the action on the current estimate (what the "
        "arm should read if the estimate is right), not a measurement.",
        "",
        "| joint | parameter | estimate | motion | predicted 95 % interval, recording alone "
        "| predicted, recording + this episode | simulated and fitted |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in nm.designs:
        lines.append(
            f"| {d.joint} | {d.kind} | {_fmt(d.kind, d.value)} | {d.segment.name} "
            f"| {interval_text(d.kind, d.interval('before'))} | "
            f"{interval_text(d.kind, d.interval('after'))} | {_checked(d)} |"
        )
    lines += ["", CAVEAT]
    lines += ["", "Why each was not identifiable in the diagnosis:", ""]
    lines += [f"- {d.joint} {d.kind}: {d.reason}" for d in nm.designs]
    lines += [
        "",
        "The predicted intervals come from the Fisher information of the "
        "replay's finite-difference sensitivities at the current estimate (the "
        "recording's and this episode's stacked, the joint's other parameters and "
        "its delay as nuisances), at the recording's noise floor; 'simulated and "
        "fitted' replays this episode on the current estimate, adds it to the "
        "recording and runs the identification.",
        "",
    ]
    return "\n".join(lines)
