"""The envelope's speed check: the real arm's top joint speeds against training's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simgap.episodes.envelope import EnvelopeCheck
from simgap.series import Trajectory

SPEED_BAND = 1.5
"""A real/training top-speed ratio below 1/this or above this is outside."""


def abs_speeds(trajs: Sequence[Trajectory], joints: Sequence[int]) -> np.ndarray:
    """|measured joint velocity| [rad/s] from finite differences, shape (N, len(joints))."""
    out = [
        np.abs(np.diff(tr.q[:, list(joints)], axis=0) / np.diff(tr.t)[:, None])
        for tr in trajs
        if tr.n_samples > 1
    ]
    return np.vstack(out) if out else np.empty((0, len(joints)))


def speed_check(
    real: Sequence[Trajectory],
    sim: Sequence[Trajectory] | None,
    joints: Sequence[int],
    joint_names: Sequence[str],
    *,
    training_top_rad_s: float | None,
    causes: Mapping[str, float],
    percentile: float = 95.0,
) -> EnvelopeCheck:
    """Real joint speeds against simulated ones (or training's stated top speed).

    Top speed = the ``percentile`` of |qd| per joint, max over joints. ``causes`` are the
    named speed factors (e.g. ``action_scale_ratio``, ``rate_ratio``, ``servo_gain_ratio``);
    the product of the action-scale and rate factors is stated next to the measured ratio.
    """
    title = "Speed"
    vr = abs_speeds(real, joints)
    if vr.shape[0] == 0:
        return EnvelopeCheck(
            "speed",
            title,
            "not_measured",
            summary="The real episodes are too short to measure speed.",
            next_step="Record episodes of more than one sample.",
            needs=("evidence.dataset episodes of more than one sample",),
        )
    pr = np.percentile(vr, percentile, axis=0)
    vs = abs_speeds(sim, joints) if sim else np.empty((0, len(joints)))
    if vs.shape[0]:
        ps = np.percentile(vs, percentile, axis=0)
        ref, ref_name = float(ps.max()), "sim_dataset"
    elif training_top_rad_s is not None:
        ps, ref, ref_name = None, float(training_top_rad_s), "training.top_speed_rad_s"
    else:
        return EnvelopeCheck(
            "speed",
            title,
            "not_measured",
            summary="No simulated episodes and no training top speed.",
            next_step="Name evidence.sim_dataset or training.top_speed_rad_s.",
            needs=("evidence.sim_dataset or [training] top_speed_rad_s",),
        )
    top = float(pr.max())
    ratio = top / ref if ref > 0 else float("inf")
    expected = 1.0
    for k in ("action_scale_ratio", "rate_ratio"):
        expected *= float(causes.get(k, 1.0))
    outside = ratio < 1.0 / SPEED_BAND or ratio > SPEED_BAND
    figs: dict[str, Any] = {
        "real_top_speed_rad_s": top,
        "training_top_speed_rad_s": ref,
        "reference": ref_name,
        "top_speed_ratio": ratio,
        "percentile": percentile,
        "real_p95_per_joint_rad_s": dict(zip(joint_names, pr.tolist(), strict=True)),
        "causes": dict(causes),
        "named_causes_product": expected,
    }
    if ps is not None:
        figs["sim_p95_per_joint_rad_s"] = dict(zip(joint_names, ps.tolist(), strict=True))
    named = ", ".join(f"{k} {v:.3g}" for k, v in causes.items()) or "none named by the rig"
    if outside:
        summary = (
            f"The real arm's top joint speed is {ratio:.0%} of training's "
            f"({np.rad2deg(top):.1f} vs {np.rad2deg(ref):.1f} deg/s); the rig's named "
            f"causes ({named}) give action scale x rate = {expected:.3g}."
        )
        step = (
            "Deploy with training's action scale and control rate (or train with the "
            "deployed ones), and match the servo gains."
        )
    else:
        summary = f"Real top speed is {ratio:.0%} of training's: inside the envelope."
        step = "Nothing to change for speed."
    q = np.linspace(0, 100, 51)
    details = {
        "percentiles": q.tolist(),
        "real_abs_qd_deg_s": np.rad2deg(np.percentile(vr.max(axis=1), q)).tolist(),
        "sim_abs_qd_deg_s": np.rad2deg(np.percentile(vs.max(axis=1), q)).tolist()
        if vs.shape[0]
        else None,
    }
    return EnvelopeCheck(
        "speed",
        title,
        "outside" if outside else "inside",
        figs,
        "top_speed_ratio",
        summary,
        step,
        details,
    )
