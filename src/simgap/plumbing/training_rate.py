"""The training audit's control-rate and top-speed checks: training's control period
against the deployed and recorded ones, and its top speed against the deployed one."""

from __future__ import annotations

import math

from simgap.finding import Finding
from simgap.plumbing.training_findings import (
    RigSide,
    missing_keys,
    not_measured,
    provenance_of,
    stated,
    training_finding,
)
from simgap.rig import Rig

RATE_TOL = 0.05
"""A period more than 5 % off training's is another rate."""


SPEED_BAND = (0.8, 1.25)
"""Deployed top speed within this fraction of training's."""


def _deployed_dt(rig: Rig, side: RigSide) -> tuple[float | None, str]:
    if stated(rig, "control.real_dt_s", rig.real_dt_s):
        return float(rig.real_dt_s or 0.0), "control.real_dt_s"
    if side.dataset_dt_s:
        return side.dataset_dt_s, "the dataset's frame period"
    return None, ""


def check_rate(rig: Rig, side: RigSide) -> Finding:
    """Training's control period against the deployed one and the dataset's real one."""
    t = rig.training.control_dt_s
    title = "Control rate (training config)"
    miss = missing_keys(rig, [("training.control_dt_s", t)])
    dep = rig.real_dt_s if stated(rig, "control.real_dt_s", rig.real_dt_s) else None
    if not miss and dep is None and side.dataset_dt_s is None:
        miss = ["control.real_dt_s (not set) or evidence.dataset"]
    if miss:
        return not_measured(title, "control_rate", miss, "holding training's rate")
    assert t is not None
    rates = {"training_hz": 1.0 / t}
    if dep is not None:
        rates["deployed_hz"] = 1.0 / dep
    if side.dataset_dt_s:
        rates["dataset_hz"] = 1.0 / side.dataset_dt_s
    off = {
        k: v
        for k, v in rates.items()
        if k != "training_hz" and abs(rates["training_hz"] / v - 1.0) > RATE_TOL
    }
    shown = ", ".join(f"{k.removesuffix('_hz')} {v:.3g} Hz" for k, v in rates.items())
    worst = max(rates.values(), key=lambda v: abs(rates["training_hz"] / v - 1.0))
    return training_finding(
        title,
        "control_rate",
        bool(off),
        (
            f"The policy was trained at {rates['training_hz']:.3g} Hz and runs at "
            f"{worst:.3g} Hz ({shown}): every action lasts {rates['training_hz'] / worst:.2f}x "
            "as long as in training."
            if off
            else f"Training and the rig agree: {shown}."
        ),
        f"Run the policy at {rates['training_hz']:.3g} Hz (Sim2RealEnv(control_freq="
        f"{rates['training_hz']:.3g}) or the loop's period {t:.4g} s), or retrain at "
        f"{worst:.3g} Hz (the env's control_freq).",
        {**rates, "rate_ratio": rates["training_hz"] / worst},
        "rate_ratio",
        provenance_of(rig, "training.control_dt_s", "control.real_dt_s"),
    )


def check_top_speed(rig: Rig, side: RigSide) -> Finding:
    """Training's top joint speed (its per-step limit at full action, at its rate) against
    the deployed one (the same limit x the deployed action scale, at the deployed rate)."""
    tr, title = rig.training, "Top speed (training config)"
    lim, t_dt = tr.action_delta_limit_rad, tr.control_dt_s
    miss = missing_keys(
        rig,
        [
            ("training.action_delta_limit_rad", lim),
            ("training.control_dt_s", t_dt),
            ("deploy.action_scale", rig.deploy.action_scale),
        ],
    )
    dep_dt, dep_src = _deployed_dt(rig, side)
    if dep_dt is None:
        miss.append("control.real_dt_s (not set) or evidence.dataset")
    if miss:
        return not_measured(title, "top_speed", miss, "the deployed top speed")
    assert lim is not None and t_dt is not None and dep_dt is not None
    train = (
        tr.top_speed_rad_s
        if stated(rig, "training.top_speed_rad_s", tr.top_speed_rad_s)
        else lim * tr.action_scale / t_dt
    ) or lim / t_dt
    scale = rig.deploy.action_scale
    deployed = lim * scale / dep_dt
    ratio = deployed / train
    bad = not SPEED_BAND[0] <= ratio <= SPEED_BAND[1]
    figs = {
        "training_top_speed_rad_s": train,
        "deployed_top_speed_rad_s": deployed,
        "speed_ratio": ratio,
        "action_delta_limit_rad": lim,
        "deploy_action_scale": scale,
        "training_action_scale": tr.action_scale,
        "deployed_dt_s": dep_dt,
    }
    how = (
        f"{lim:g} rad a step x {scale:g} at {1 / dep_dt:.3g} Hz ({dep_src}) against "
        f"{train:.3g} rad/s in training"
    )
    return training_finding(
        title,
        "top_speed",
        bad,
        (
            f"The real arm's top joint speed is {math.degrees(deployed):.1f} deg/s, "
            f"{100 * ratio:.0f} % of training's {math.degrees(train):.1f} deg/s ({how})."
            if bad
            else f"The deployed top speed is {100 * ratio:.0f} % of training's ({how})."
        ),
        f"Deploy with action_scale {train * dep_dt / lim:.3g} at this rate (or restore "
        "training's rate and scale), or retrain with the per-step limit the real arm is "
        "run with.",
        figs,
        "speed_ratio",
        provenance_of(
            rig, "training.action_delta_limit_rad", "training.control_dt_s", "deploy.action_scale"
        ),
    )
