"""The controller branch: SIMPLER's controller identification (``simgap.controller.pose_fit``)
on the rig's own logs, as a Finding."""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.branches.branch import Branch
from simgap.controller.misfit import MISFIT_FLOORS, misfit_ratio
from simgap.controller.pose_fit import EE_POSE_KEY, Episode, contract_figures, controller_report
from simgap.figures.controller import POSE_LOSS, SimplerDetails, SimplerFigures
from simgap.finding import Finding, Verdict
from simgap.randomize import controller_entries
from simgap.report import plots_controller
from simgap.rig import Rig


def load_episodes(rig: Rig, dataset: Any) -> list[Episode]:
    """Episodes from a LeRobot dataset value (``simgap.evidence.lerobot.LeRobotDataset``)."""
    from simgap.evidence.lerobot import dataset_trajectories

    ee_delta = rig.action_space == "ee_delta"
    trajs = dataset_trajectories(
        dataset, rig, command_key="observation.state" if ee_delta else "action"
    )
    out = []
    for tr in trajs:
        action = dataset.vector("action", tr.episode) if ee_delta else tr.q_cmd
        pose = dataset.vector(EE_POSE_KEY, tr.episode) if EE_POSE_KEY in dataset.features else None
        out.append(
            Episode(
                t=np.asarray(tr.t, dtype=float),
                q=np.asarray(tr.q),
                action=np.asarray(action),
                ee_pose=pose,
            )
        )
    return out


LADDER_MAXFUN, LADDER_MAX_ITER = 40, 5
"""The ladder's budget for SIMPLER's pose fit (evaluations, LM iterations): a cross-check
inside a diagnosis; ``simgap controller`` runs the fit alone at the full defaults."""


def spread(episodes: list[Episode], n: int) -> list[Episode]:
    """At most ``n`` episodes, evenly spread over the recording (the ladder's budget: every
    replay costs a rollout per candidate, and a handful of trajectories is what SIMPLER
    used); ``simgap controller`` itself fits on every episode."""
    if n <= 0 or len(episodes) <= n:
        return episodes
    idx = np.unique(np.linspace(0, len(episodes) - 1, n).round().astype(int))
    return [episodes[i] for i in idx]


def assess(ctx: Any) -> list[Finding]:
    """The controller finding for ``ctx.rig`` (its evidence.dataset)."""
    from simgap.branches.context import not_measured
    from simgap.evidence.ros2_bag import rig_recording

    rig = ctx.rig
    if rig.evidence.recording is None or rig.ee_site is None:
        return [not_measured(SPEC)]
    from simgap.branches import controller_record, joint_dynamics
    from simgap.branches.evidence_gate import not_run, time_base_refusal

    refused = time_base_refusal(ctx)  # both fits below replay the dataset on its stamps
    if refused is not None:
        return [not_run("controller", "Controller", refused)]
    if joint_dynamics.applies(rig):
        return [controller_record.finding(ctx)]
    ds = ctx.evidence.get("lerobot_dataset", rig_recording)
    episodes = spread(load_episodes(rig, ds), int(ctx.options.get("controller_episodes", 1)))
    rep = controller_report(
        rig,
        episodes,
        seed=ctx.seed,
        maxfun=LADDER_MAXFUN,
        max_iter=LADDER_MAX_ITER,
        compute=ctx.compute,
    )
    unid = [f"{j}.{k}" for j, d in rep["identified"].items() for k, ok in d.items() if not ok]
    summary = (
        f"SIMPLER pose loss {rep['loss_before']:.4g} -> {rep['loss_after']:.4g} "
        f"({rep['best']}); noise floor {rep['noise_floor']:.2g}."
    )
    ratio = misfit_ratio(rep["loss_after"], rep["noise_floor"])
    if ratio > MISFIT_FLOORS:
        summary += (
            f" The fitted model misses the data by {ratio:.3g} x its noise floor, so no gain "
            "is identified: kp and kv absorb dynamics the replay lacks (command delay, "
            "servo lag, joint offsets)."
        )
    elif unid:
        summary += f" Not identifiable from these logs: {', '.join(unid)}."
    nxt = {
        "implicated": "Set the fitted kp/kv in the model's position actuators and "
        "re-train or re-evaluate.",
        "eliminated": "The nominal servo gains reproduce the logged motion; look elsewhere.",
        "inconclusive": "Log richer motions (faster, larger, all joints) and refit.",
    }
    if ratio > MISFIT_FLOORS and rep["verdict"] != "eliminated":
        nxt[rep["verdict"]] = (
            "Model the command delay and servo lag first (the latency and actuator "
            "branches), then refit the gains: the fitted kp/kv stand in for them."
        )
    return [
        Finding(
            branch="controller",
            verdict=Verdict(rep["verdict"]),
            title="Controller",
            summary=summary,
            next_step=nxt[rep["verdict"]],
            key_figure="loss_after",
            figures=SimplerFigures.from_mapping(
                {
                    "loss_before": rep["loss_before"],
                    "loss_after": rep["loss_after"],
                    "noise_floor": rep["noise_floor"],
                    "cond": rep["cond"],
                    "intervals": rep["intervals"],
                    **contract_figures(rep),
                }
            ),
            residual=rep["loss_after"],
            noise_floor=rep["noise_floor"],
            residual_unit=POSE_LOSS,
            details=SimplerDetails.from_mapping(
                {k: v for k, v in rep.items() if k != "branch"}, where="details"
            ),
        )
    ]


SPEC = Branch(
    name="controller",
    cost=3.5,
    needs=("evidence.dataset with actions, and model.ee_site",),
    assess=assess,
    plots=lambda f: plots_controller.plots(f),  # looked up when drawn: a test may replace it
    randomization=controller_entries,
)
"""The controller branch's contract: its plots and its randomisation entries (the gains
it identified)."""
