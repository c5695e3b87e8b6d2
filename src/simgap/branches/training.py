"""The training branch: ``[training]`` as ManiSkill gave it (``simgap init
--maniskill-config``) held against the rig by ``simgap.plumbing.training``; this module gathers
the rig's side (the dataset's real frame period, the model's pan axis and camera) and
returns the audit's Findings. A rig that states nothing of the training environment gets one
not_measured Finding naming the export to run."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from simgap.branches.branch import Branch
from simgap.branches.context import Context
from simgap.branches.evidence_gate import time_base_refusal
from simgap.finding import Finding, Verdict
from simgap.plumbing.training import audit_training
from simgap.plumbing.training_findings import BRANCH, RigSide
from simgap.sim.kinematics import rig_mount_points

TRAINING_KEYS = (
    "env_id",
    "controller",
    "action_delta_limit_rad",
    "pd_stiffness_nm_rad",
    "origin_from_pan_axis_m",
)
"""The keys of a training config (``simgap init --maniskill-config`` writes them): a rig
stating none of them has no training config to audit (its hand-written ``[training]`` rate,
noise and workspace are the envelope branch's)."""
NEEDS = (
    "[training] env_id, controller and gains, the training environment's config "
    "('simgap init --maniskill-config FILE', docs/maniskill.md)",
)
"""What the rig lacks, true whether or not it has a [training] section (the demo's has one,
with its rate, noise and workspace, and no training config)."""


def _dataset_dt(ctx: Context) -> float | None:
    """The real dataset's median frame period [s] (None: no dataset, or its time base is
    refused by the evidence gate)."""
    if ctx.rig.evidence.dataset is None or time_base_refusal(ctx) is not None:
        return None
    from simgap.evidence.episodes_io import load_real_episodes

    run = ctx.evidence.get("episodes.real_dataset", load_real_episodes)
    if run is None:
        return None
    dt = np.concatenate([np.diff(tr.t) for tr in run.trajectories])
    dt = dt[dt > 0]
    return float(np.median(dt)) if dt.size else None


def assess(ctx: Context) -> list[Finding]:
    """The training audit's Findings; one not_measured Finding without a training config."""
    rig = ctx.rig
    if not any(getattr(rig.training, k) is not None for k in TRAINING_KEYS):
        stated = [
            f.name
            for f in fields(rig.training)
            if f.name != "action_scale" and getattr(rig.training, f.name) is not None
        ]
        has = (
            f"the rig's [training] states {', '.join(stated)}, none of the training "
            f"config's keys ({', '.join(TRAINING_KEYS)})"
            if stated
            else "the rig has no [training] section"
        )
        return [
            Finding(
                branch=BRANCH,
                verdict=Verdict.NOT_MEASURED,
                title="Training config",
                summary=f"Not measured: no training config to audit: {has}.",
                next_step="Export it where you train ('python -m "
                "simgap.maniskill.export_config ENV_ID --out FILE') and "
                "run 'simgap init --maniskill-config FILE'.",
                needs=NEEDS,
            )
        ]
    cam = rig.camera.name if rig.camera is not None else None
    points = rig_mount_points(rig.model_path, rig.joints[0].name, cam)
    side = RigSide(dataset_dt_s=_dataset_dt(ctx), **points)  # type: ignore[arg-type]
    return audit_training(rig, side)


SPEC = Branch(
    name=BRANCH,
    cost=0.6,
    needs=("a [training] section (simgap init --maniskill-config)",),
    assess=assess,
)
"""The training branch's contract: its findings carry no plot and no randomisation entry."""
