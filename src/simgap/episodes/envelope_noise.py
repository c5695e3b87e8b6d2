"""The envelope's observation-noise check: the joint readings' scatter while the arm is
still, against the noise training added."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simgap.episodes.envelope import EnvelopeCheck
from simgap.series import Trajectory

NOISE_BAND = 3.0
"""Real noise more than this many times training's is outside the envelope; training noise
more than this many times the real noise is inside it but reported as a spread."""


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
