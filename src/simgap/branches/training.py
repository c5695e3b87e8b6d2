"""The training branch: ``[training]`` as ManiSkill gave it (``simgap init
--maniskill-config``) held against the rig by ``simgap.audit.training``; this module gathers
the rig's side (the dataset's real frame period, the model's pan axis and camera) and
returns the audit's Findings. A rig that states nothing of the training environment gets one
not_measured Finding naming the export to run."""

from __future__ import annotations

import numpy as np

from simgap.audit.training import BRANCH, RigSide, audit_training
from simgap.branches.context import Context
from simgap.branches.evidence_gate import time_base_refusal
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

TRAINING_KEYS = ("env_id", "controller", "action_delta_limit_rad", "pd_stiffness_nm_rad",
                 "origin_from_pan_axis_m")
"""The keys of a training config (``simgap init --maniskill-config`` writes them): a rig
stating none of them has no training config to audit (its hand-written ``[training]`` rate,
noise and workspace are the envelope branch's)."""
NEEDS = ("a [training] section ('simgap init --maniskill-config FILE', docs/maniskill.md)",)


def _model_side(rig: Rig) -> dict[str, object]:
    """The model's first (pan) joint axis point at qpos0 and the policy camera."""
    import mujoco

    from simgap.sim.model import load_model

    m = load_model(rig.model_path)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    out: dict[str, object] = {}
    jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, rig.joints[0].name)
    if jid >= 0:
        a = d.xanchor[jid]
        out["pan_axis_m"] = (float(a[0]), float(a[1]), float(a[2]))
    if rig.camera is not None:
        cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, rig.camera.name)
        if cid >= 0:
            p = m.cam_pos[cid]
            out.update(camera_fovy_deg=float(m.cam_fovy[cid]),
                       camera_body=m.body(int(m.cam_bodyid[cid])).name,
                       camera_pos_m=(float(p[0]), float(p[1]), float(p[2])))
    return out


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
        return [Finding(branch=BRANCH, verdict=Verdict.NOT_MEASURED, title="Training config",
                        summary="Not measured: the rig has no training config "
                                "([training] env_id, controller, ... from ManiSkill).",
                        next_step="Export it where you train ('python -m "
                                  "simgap.maniskill.export_config ENV_ID --out FILE') and "
                                  "run 'simgap init --maniskill-config FILE'.", needs=NEEDS)]
    side = RigSide(dataset_dt_s=_dataset_dt(ctx), **_model_side(rig))  # type: ignore[arg-type]
    return audit_training(rig, side)
