"""The training envelope: does the real deployment feed the policy and ask of the arm what
training did?

Five checks, each a result with figures and a status (``inside``, ``outside`` or
``not_measured``): observation noise, speed, control rate, grasp margin, initial states.
Inputs are values (trajectories in radians, times in seconds, positions in metres).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.episodes.segment import Segmentation
from simgap.series import Trajectory
from simgap.values.episode import EpisodeRecord

NOISE_BAND = 3.0
"""Real noise more than this many times training's is outside the envelope; training noise
more than this many times the real noise is inside it but reported as a spread."""
SPEED_BAND = 1.5
"""A real/training top-speed ratio below 1/this or above this is outside."""
RATE_TOL = 0.1
"""A real decision rate more than this fraction away from training's is outside."""
MIN_SQUEEZE_DEG = 5.0
"""A median squeeze (measured opening minus target while holding) below this is marginal."""
STALL_GAP_RAD = float(np.deg2rad(1.0))
"""A jaw held this far (or more) open of its closing target while still is stopped by
something: a free jaw settles within a few encoder counts of its target (the SO-101's servo
holds to ~0.05 mrad against its own friction, and 0.05 rad/s behind an 80 ms delay is 4 mrad)."""
STILL_RAD_S = 0.05
"""A jaw slower than this (over ``SPEED_BASELINE_S``) is still [rad/s]."""
SPEED_BASELINE_S = 0.2
"""Speeds are differences over this baseline [s], so encoder flicker does not read as motion."""
STALL_MIN_S = 0.3
"""A grasp needs the jaw stopped this long in total [s]."""


@dataclass(frozen=True)
class EnvelopeCheck:
    """One envelope check, ready to become a Finding.

    Attributes:
        check: ``observation_noise``, ``speed``, ``control_rate``, ``grasp_margin`` or
            ``initial_states``.
        title: a short label.
        status: ``inside``, ``outside`` or ``not_measured``.
        figures: named numbers (unit in the suffix).
        key_figure: the figure shown in summary tables.
        summary: what was found, with its key number.
        next_step: what to do next.
        details: data for the report's plots.
        needs: for ``not_measured``: what the rig must add (empty: the branch's own needs).
    """

    check: str
    title: str
    status: str
    figures: Mapping[str, Any] = field(default_factory=dict)
    key_figure: str | None = None
    summary: str = ""
    next_step: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()


TRAINING_DT_NEED = "[training] control_dt_s = ... from your training config"
"""What a rig without training's control period must add for the control-rate check."""
SIM_SQUEEZE_NEED = (
    "evidence.sim_dataset (the policy's rollouts in the training simulator, "
    "whose squeeze the real one is held against)"
)
"""What a rig must add for a firm real squeeze to be a verdict."""


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of True, end exclusive."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.nonzero(d == 1)[0].tolist(), np.nonzero(d == -1)[0].tolist(), strict=True))


def still_residuals(
    trajs: Sequence[Trajectory],
    joints: Sequence[int],
    *,
    settle_s: float = 0.3,
    min_samples: int = 8,
    cmd_tol_rad: float = 1e-4,
) -> tuple[np.ndarray, int]:
    """Joint-reading residuals while the arm is still.

    Still = every listed joint's command unchanged (within ``cmd_tol_rad``) for the run;
    the first ``settle_s`` of each run is dropped, and a line fitted over time is removed
    from each joint's readings in the run (slow creep is not noise).

    Returns:
        (residuals [rad], shape (N, len(joints)); degrees of freedom each joint's line fits
        used: 2 per still run).
    """
    chunks: list[np.ndarray] = []
    dof = 0
    for tr in trajs:
        cmd = tr.q_cmd[:, list(joints)]
        same = np.all(np.abs(np.diff(cmd, axis=0)) <= cmd_tol_rad, axis=1)
        still = np.concatenate([[False], same])
        dt = float(np.median(np.diff(tr.t))) if tr.n_samples > 1 else 1.0
        skip = int(round(settle_s / dt))
        for a, b in _runs(still):
            a = a + skip
            if b - a < min_samples:
                continue
            t = tr.t[a:b] - tr.t[a]
            design = np.vstack([np.ones_like(t), t]).T
            y = tr.q[a:b][:, list(joints)]
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            chunks.append(y - design @ coef)
            dof += 2
    if not chunks:
        return np.empty((0, len(joints))), 0
    return np.vstack(chunks), dof


def noise_check(
    trajs: Sequence[Trajectory],
    joints: Sequence[int],
    training_std_rad: float | None,
    floor_rad: float,
) -> EnvelopeCheck:
    """Real joint-reading noise at rest against the noise training added."""
    title = "Observation noise"
    if training_std_rad is None:
        return EnvelopeCheck(
            "observation_noise",
            title,
            "not_measured",
            summary="The rig does not say what noise training added.",
            next_step="Set training.obs_noise_std_rad in rig.toml.",
            needs=("[training] obs_noise_std_rad = ... from your training config",),
        )
    res, dof = still_residuals(trajs, joints)
    if res.shape[0] - dof < 2:
        return EnvelopeCheck(
            "observation_noise",
            title,
            "not_measured",
            summary="No still segment (constant command) in the real episodes.",
            next_step="Record a few seconds with the arm holding a pose.",
            needs=("evidence.dataset with a still segment (the arm holding a pose)",),
        )
    per_joint = np.sqrt(np.sum(res**2, axis=0) / (res.shape[0] - dof))
    real = float(np.sqrt(np.mean(per_joint**2)))
    ratio = float(max(training_std_rad, floor_rad) / max(real, floor_rad))  # floor: 1 count
    # Real readings noisier than training's are outside what the policy saw; readings much
    # cleaner than training's are inside it (training covered them), only wider than needed.
    outside = ratio < 1.0 / NOISE_BAND
    wide = ratio > NOISE_BAND
    figs = {
        "covered_by_training": not outside,
        "real_noise_std_rad": real,
        "training_noise_std_rad": float(training_std_rad),
        "training_to_real_ratio": ratio,
        "raw_training_to_real_ratio": float(training_std_rad / real) if real > 0 else None,
        "encoder_floor_rad": float(floor_rad),
        "real_noise_std_per_joint_rad": per_joint.tolist(),
        "still_samples": res.shape[0],
    }
    floor_note = (
        f" (below one encoder count, {np.rad2deg(floor_rad):.3f} deg, which is used as the floor)"
        if real < floor_rad
        else ""
    )
    if outside:
        summary = (
            f"The real arm reads {np.rad2deg(real):.4f} deg of noise at rest, "
            f"{1 / ratio:.3g} times the {np.rad2deg(training_std_rad):.4f} deg training "
            "added: the policy never saw joint readings this noisy."
        )
        step = (
            "Retrain with training.obs_noise_std_rad at or above the measured real noise, "
            "or filter the real readings."
        )
    elif wide:
        summary = (
            f"Training added {np.rad2deg(training_std_rad):.3f} deg of reading noise "
            f"against {np.rad2deg(real):.4f} deg on the real arm at rest{floor_note}: "
            f"ratio {ratio:.3g}. The real readings lie inside what training covered; "
            "the policy learned to trust its joints less than they warrant, which "
            "matters when it must steer by its joints (a target out of view)."
        )
        step = (
            "No change needed for transfer; a narrower training noise near the measured "
            "one can sharpen joint-guided motions."
        )
    else:
        summary = (
            f"Real reading noise {np.rad2deg(real):.4f} deg{floor_note} is within "
            f"{NOISE_BAND:g}x of training's {np.rad2deg(training_std_rad):.4f} deg."
        )
        step = "Nothing to change for observation noise."
    sample = np.rad2deg(res.ravel())[:4000]
    return EnvelopeCheck(
        "observation_noise",
        title,
        "outside" if outside else "inside",
        figs,
        "training_to_real_ratio",
        summary,
        step,
        {"residuals_deg": sample.tolist(), "training_std_deg": float(np.rad2deg(training_std_rad))},
    )


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


def rate_check(
    times: Sequence[np.ndarray],
    training_dt_s: float | None,
    declared_real_dt_s: float | None,
    *,
    source: str = "training.control_dt_s",
    why_not: str = "",
) -> EnvelopeCheck:
    """The real decision rate (median interval between samples) against training's.

    Args:
        times: each real episode's sample times [s].
        training_dt_s: training's control period [s]; None when the rig states none.
        declared_real_dt_s: the rig's ``control.real_dt_s`` [s], reported beside.
        source: the rig key ``training_dt_s`` was read from.
        why_not: why there is no training period, for the not-measured summary.
    """
    title = "Control rate"
    dts = (
        np.concatenate([np.diff(np.asarray(t, dtype=float)) for t in times])
        if times
        else np.empty(0)
    )
    dts = dts[dts > 0]
    if dts.size == 0:
        return EnvelopeCheck(
            "control_rate",
            title,
            "not_measured",
            summary="The real episodes carry no increasing timestamps.",
            next_step="Record the real episodes with their timestamps.",
            needs=("evidence.dataset with timestamps",),
        )
    real_dt = float(np.median(dts))
    if training_dt_s is None:
        # a rate held against nothing (or against a guess made from this recording) is no
        # verdict: say what was measured and what would make it one
        why = why_not or "the rig does not give training's control period"
        return EnvelopeCheck(
            "control_rate",
            title,
            "not_measured",
            figures={
                "real_rate_hz": 1.0 / real_dt,
                "real_dt_s": real_dt,
                "declared_real_dt_s": declared_real_dt_s,
            },
            summary=f"The real arm decides at {1 / real_dt:.3g} Hz, but {why}: nothing to "
            "hold it against.",
            next_step=f"Add {TRAINING_DT_NEED}.",
            needs=(TRAINING_DT_NEED,),
        )
    ratio = (1.0 / real_dt) / (1.0 / training_dt_s)
    outside = abs(ratio - 1.0) > RATE_TOL
    figs = {
        "real_rate_hz": 1.0 / real_dt,
        "training_rate_hz": 1.0 / training_dt_s,
        "rate_ratio": ratio,
        "real_dt_s": real_dt,
        "training_dt_s": float(training_dt_s),
        "training_dt_from": source,
        "declared_real_dt_s": declared_real_dt_s,
    }
    against = (
        "training's"
        if source == "training.control_dt_s"
        else f"the simulated control rate ({source}, standing in for training's),"
    )
    summary = (
        f"The real arm decides at {1 / real_dt:.3g} Hz against {against} "
        f"{1 / training_dt_s:.3g} Hz (ratio {ratio:.3g})."
    )
    step = (
        "Run the real loop at training's rate, or retrain at the deployed rate."
        if outside
        else "Nothing to change for the control rate."
    )
    return EnvelopeCheck(
        "control_rate",
        title,
        "outside" if outside else "inside",
        figs,
        "rate_ratio",
        summary,
        step,
        {"intervals_ms": (dts[:4000] * 1e3).tolist(), "training_dt_ms": training_dt_s * 1e3},
    )


@dataclass(frozen=True)
class GraspEvidence:
    """Whether an episode grasped something, and on which samples.

    Attributes:
        happened: an object was present and lifted, or the jaw was stopped by something.
        held: the samples held with a grasp (all False when none happened), shape (T,).
        how: the evidence, or why there was none, in numbers.
    """

    happened: bool
    held: np.ndarray = field(repr=False)
    how: str


def grasp_evidence(rec: EpisodeRecord, seg: Segmentation) -> GraspEvidence:
    """Did the episode grasp? Only then is its squeeze a grasp margin.

    A grasp happened when the object's position is recorded and the held attempt lifted it,
    or when the jaw, closing, stood still (slower than ``STILL_RAD_S``) at least
    ``STALL_GAP_RAD`` open of its target for ``STALL_MIN_S`` in total: something stopped it.
    A jaw that follows its command (a sine-excited gripper with nothing to hold) is not a
    grasp, however often its command crosses the closed half of its range.
    """
    none = np.zeros(len(rec.t), dtype=bool)
    if not seg.holding.any() or seg.best is None:
        return GraspEvidence(False, none, "the gripper never closed and held")
    best = seg.attempts[seg.best]
    if rec.obj is not None and best.lift is not None:
        rise = float(rec.obj[best.lift :, 2].max() - rec.obj[0, 2])
        return GraspEvidence(True, seg.holding, f"the object rose {rise * 100:.1f} cm while held")
    t = np.asarray(rec.t, dtype=float)
    dt = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    k = max(1, int(round(SPEED_BASELINE_S / dt)))
    q = rec.gripper
    speed = np.full(q.size, np.inf)
    if q.size > k:
        v = np.abs(q[k:] - q[:-k]) / (t[k:] - t[:-k])
        speed[k // 2 : k // 2 + v.size] = v
    gap = q - rec.gripper_cmd
    stalled = seg.holding & (speed <= STILL_RAD_S) & (gap >= STALL_GAP_RAD)
    stalled_s = float(stalled.sum() * dt)
    if stalled_s >= STALL_MIN_S:
        return GraspEvidence(
            True,
            seg.holding,
            f"the jaw stood {np.rad2deg(np.median(gap[stalled])):.1f} deg open "
            f"of its target for {stalled_s:.1f} s: something stopped it",
        )
    obj = "no object position recorded" if rec.obj is None else "the object never rose"
    held_s = float(seg.holding.sum() * dt)
    return GraspEvidence(
        False,
        none,
        f"{obj}, and the jaw stood still {np.rad2deg(STALL_GAP_RAD):.0f} deg or "
        f"more open of its target for {stalled_s:.2f} s of {held_s:.1f} s "
        f"closed (a grasp needs {STALL_MIN_S:g} s)",
    )


def grasp_margin_check(
    real_squeeze_rad: np.ndarray,
    sim_squeeze_rad: np.ndarray | None,
    torque_limit: float | None,
    why_not: str = "",
    sim_why_not: str = "",
) -> EnvelopeCheck:
    """While holding: measured opening minus target (the squeeze) and the torque limit.

    ``real_squeeze_rad`` holds only samples of episodes where a grasp happened
    (``grasp_evidence``); ``why_not`` says, in numbers, why none did. A median squeeze
    below ``MIN_SQUEEZE_DEG`` is a marginal grasp on the real arm whatever training did; a
    firmer one is inside the envelope only against the simulated rollouts' squeeze
    (``sim_squeeze_rad``; None: no simulated rollouts, empty: none grasped, as
    ``sim_why_not`` says): without it the check is not measured.
    """
    title = "Grasp margin"
    if real_squeeze_rad.size == 0:
        return EnvelopeCheck(
            "grasp_margin",
            title,
            "not_measured",
            figures={"grasp_evidence": why_not or "no episode held anything"},
            summary="No real episode grasped anything" + (f" ({why_not})." if why_not else "."),
            next_step="Record real episodes that grasp the object.",
            needs=("evidence.dataset episodes that grasp the object",),
        )
    sq = np.rad2deg(real_squeeze_rad)
    med = float(np.median(sq))
    figs: dict[str, Any] = {
        "real_squeeze_median_deg": med,
        "real_squeeze_p10_deg": float(np.percentile(sq, 10)),
        "real_squeeze_p90_deg": float(np.percentile(sq, 90)),
        "min_squeeze_deg": MIN_SQUEEZE_DEG,
        "gripper_torque_limit_fraction": torque_limit,
    }
    if sim_squeeze_rad is not None and sim_squeeze_rad.size:
        figs["sim_squeeze_median_deg"] = float(np.median(np.rad2deg(sim_squeeze_rad)))
    outside = med < MIN_SQUEEZE_DEG
    cap = (
        f" and the real gripper is capped at {torque_limit:.0%} torque"
        if torque_limit is not None and torque_limit < 1
        else ""
    )
    sim_held = sim_squeeze_rad is not None and sim_squeeze_rad.size > 0
    if not outside and not sim_held:
        why = (
            "the rig names no simulated rollouts (evidence.sim_dataset)"
            if sim_squeeze_rad is None
            else "no simulated rollout grasped anything"
            + (f" ({sim_why_not})" if sim_why_not else "")
        )
        return EnvelopeCheck(
            "grasp_margin",
            title,
            "not_measured",
            figs,
            summary=f"While holding, the real policy squeezes by {med:.1f} "
            f"deg{cap}, but there is nothing from training to hold "
            f"it against: {why}.",
            next_step="Name evidence.sim_dataset (the policy's rollouts in "
            "the training simulator) in rig.toml.",
            details={"squeeze_deg": sq[:4000].tolist()},
            needs=(SIM_SQUEEZE_NEED,),
        )
    if outside:
        summary = (
            f"While holding, the gripper's target sits {med:.1f} deg inside its "
            f"measured opening: the policy barely squeezes{cap}; real grasps are "
            "marginal."
        )
        step = (
            "Make the simulator honest (realistic object mass and finger friction) and "
            "retrain, or make the real fingers grippier / raise the gripper torque limit."
        )
    else:
        summary = (
            f"While holding, the policy squeezes by {med:.1f} deg{cap} "
            f"({figs['sim_squeeze_median_deg']:.1f} deg in simulation)."
        )
        step = "Nothing to change for the grasp margin."
    return EnvelopeCheck(
        "grasp_margin",
        title,
        "outside" if outside else "inside",
        figs,
        "real_squeeze_median_deg",
        summary,
        step,
        {"squeeze_deg": sq[:4000].tolist()},
    )
