"""The controller finding of a LeRobot dataset: the gains of the joint dynamics of record.

The servo gains (kp, kv) come from the same identification the actuator branch reports
(``simgap.branches.joint_dynamics``: the rig's MJCF as the null, the delay profiled), so
the two branches agree on the delay and the gains. SIMPLER's end-effector pose fit is run
on the same model at the same delay as a cross-check: its loss before and after, never its
gains as the estimate of record.

Verdict: ``implicated`` when a joint's kp or kv is identified with a 95 % interval that
excludes its nominal value by more than ``GAIN_TOLERANCE``; ``eliminated`` when the rig's
model replays every joint within the noise floor; ``inconclusive`` otherwise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from simgap.branches.joint_dynamics import identification
from simgap.figures.controller import GainsDetails, GainsFigures
from simgap.finding import Finding, Verdict
from simgap.fit.verdict import least_residual

GAIN_TOLERANCE = 0.1
"""A gain counts as changed when its whole interval lies more than 10 % from nominal."""
GAINS = ("kp", "kv")


def _gains(js: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str]]:
    params: dict[str, dict[str, float]] = {}
    iv: dict[str, dict[str, list[float]]] = {}
    unid: dict[str, dict[str, str]] = {}
    changed = []
    for j in js["params_nominal"]:
        for k in GAINS:
            if k in js["params"].get(j, {}):
                v, (lo, hi) = js["params"][j][k], js["params_interval"][j][k]
                params.setdefault(j, {})[k] = v
                iv.setdefault(j, {})[k] = [lo, hi]
                nom = js["params_nominal"][j][k]
                if hi < nom * (1 - GAIN_TOLERANCE) or lo > nom * (1 + GAIN_TOLERANCE):
                    changed.append(f"{j}.{k} {v:.4g} [{lo:.4g}, {hi:.4g}] vs {nom:.4g}")
            elif k in js["not_identifiable"].get(j, {}):
                unid.setdefault(j, {})[k] = js["not_identifiable"][j][k]
    return params, iv, unid, changed


def cross_check(ctx: Any, delay_s: float) -> dict[str, Any]:
    """SIMPLER's pose loss of the rig's model at the shared delay, before and after its own
    kp/kv fit (one episode, a small budget)."""
    from dataclasses import replace

    from simgap.branches.controller import LADDER_MAX_ITER, LADDER_MAXFUN, load_episodes, spread
    from simgap.controller.pose_fit import controller_problem, fit_controller, noise_floor
    from simgap.evidence.ros2_bag import rig_recording

    rig = ctx.rig
    ds = ctx.evidence.get("lerobot_dataset", rig_recording)
    episodes = spread(load_episodes(rig, ds), int(ctx.options.get("controller_episodes", 1)))
    problem = replace(controller_problem(rig, episodes), delay_s=float(delay_s))
    fit = fit_controller(
        problem, seed=ctx.seed, maxfun=LADDER_MAXFUN, max_iter=LADDER_MAX_ITER, backend=ctx.compute
    )
    return {
        "delay_s": float(delay_s),
        "loss_before": fit["loss_before"],
        "loss_after": fit["loss_after"],
        "noise_floor": noise_floor(rig, problem),
        "simpler_params": fit["params"],
        "role": "cross-check (not the estimate of record)",
    }


def finding(ctx: Any) -> Finding:
    """The controller Finding from the identification of record."""
    js = identification(ctx)
    params, iv, unid, changed = _gains(js)
    delay = float(np.median(list(js["delay_s"].values())))
    figures: dict[str, Any] = {
        "params": params,
        "params_interval": iv,
        "not_identifiable": unid,
        "delay_s": js["delay_s"],
        "delay_interval_s": js["delay_interval_s"],
        "estimate_of_record": "the joint-dynamics fit shared with the actuator branch",
    }
    if ctx.options.get("controller_cross_check", False):
        figures["simpler_cross_check"] = cross_check(ctx, delay)
    if changed:
        verdict = Verdict.IMPLICATED
        summary = "Servo gains differ from the model: " + "; ".join(changed) + "."
        step = (
            "Set the identified kp/kv (figures.params) in the model's position actuators "
            "and re-train or re-evaluate."
        )
    elif js["verdict"] == "eliminated":
        verdict = Verdict.ELIMINATED
        summary = "The model's servo gains replay the recording within the noise floor."
        step = "The nominal servo gains reproduce the logged motion; look elsewhere."
    else:
        verdict = Verdict.INCONCLUSIVE
        summary = "No gain is identified as different from the model's."
        step = "Log richer, slower motions (the servo saturates less) and refit."
    if unid:
        summary += (
            " Not identifiable: " + ", ".join(f"{j}.{k}" for j, d in unid.items() for k in d) + "."
        )
    figures["residual_rad"] = {j: float(v) for j, v in js["identified_rms_rad"].items()}
    figures["noise_floor_rad"] = {
        j: least_residual(js["noise_floor_rad"][j]) for j in figures["residual_rad"]
    }
    typed = GainsFigures.from_mapping(figures)
    worst = typed.worst_joint()  # its residual against ITS OWN floor, not another joint's
    return Finding(
        branch="controller",
        verdict=verdict,
        title="Controller",
        summary=summary,
        next_step=step,
        key_figure=None,
        figures=typed,
        residual=math.nan if worst is None else typed.residual_rad[worst],
        noise_floor=math.nan if worst is None else typed.noise_floor_rad[worst],
        residual_unit="rad",
        details=GainsDetails.from_mapping({"gains_changed": changed}, where="details"),
    )
