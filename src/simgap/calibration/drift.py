"""Leader/follower drift from a teleoperation recording: the follower's standing offset from
the command on still segments, split into a load-independent part and a gravity part.

On a still segment (leader and follower both within ``STILL_COUNTS`` encoder counts over at
least ``MIN_STILL_S``) the follower should sit where the leader put it, up to the deflection
its position loop allows under load. Per joint and segment, over the settled second half of
the segment: ``d_s = mean(observation.state - action)`` [rad] and the gravity torque
``tau_s`` the servo holds there (``sim.gravity``). Across segments

    d_s = offset + compliance * tau_s

by least squares where the segments' torques spread (``TAU_SPREAD_NM``), else ``offset =
mean(d_s)``; the offset's 95% interval is Student's t over the segments (never narrower than
the encoder's quantisation over their frames), widened by the half count LeRobot's ``int``
cast of every goal leaves the follower short.

What it can see: anything that puts the follower's goal somewhere else than the recorded
action, by a constant (a processor or script offsetting the command, a goal written through
another calibration than the reading). What it cannot: a leader and a follower calibrated
differently, each reading its own pose through its own file, agree in their numbers while
the arms stand apart; that difference is only in the two calibration files
(``calibration compare``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from simgap.errors import InputError
from simgap.rig import Rig
from simgap.series import Trajectory
from simgap.values.calibration import RAD_PER_TICK

STILL_COUNTS = 3.0
"""Leader and follower each move less than this many encoder counts over a still window."""
MIN_STILL_S = 0.6
"""Shortest still segment [s]."""
TAU_SPREAD_NM = 0.05
"""The segments' gravity torques must spread by this much [N m] to fit the compliance."""
TRUNCATION_COUNTS = 0.5
"""LeRobot writes a goal as ``int(ticks)``: on average half a count below the action, which
the offset's interval takes in (0.044 deg on an STS3215)."""
DRIFT_TOL_DEG = 0.5
"""An offset under this [deg] is below what a policy steering by sight notices."""


@dataclass(frozen=True)
class JointDrift:
    """One joint's standing offset of the follower from the leader.

    Attributes:
        joint: the model joint.
        offset_rad: the load-independent part [rad] (follower minus leader).
        ci95_rad: its 95% interval's half-width [rad] (None: one segment only).
        compliance_rad_per_nm: the gravity part's slope [rad / N m] (None: not fitted).
        load_rad: the gravity part at the median segment's torque [rad].
        n_segments: still segments used.
    """

    joint: str
    offset_rad: float
    ci95_rad: float | None
    compliance_rad_per_nm: float | None
    load_rad: float
    n_segments: int


@dataclass(frozen=True)
class Drift:
    """Every joint's drift, and the offsets at the gripper.

    Attributes:
        joints: per joint, rig order.
        segments: (episode, first frame, last frame) of each still segment.
        offset_at_gripper_m: every offset at once at the median still pose [m] (None: no ee).
        load_at_gripper_m: every gravity part at once there [m].
        per_joint_at_gripper_m: each joint's offset alone there [m].
    """

    joints: tuple[JointDrift, ...]
    segments: tuple[tuple[int, int, int], ...]
    offset_at_gripper_m: float | None
    load_at_gripper_m: float | None
    per_joint_at_gripper_m: dict[str, float]


def still_segments(
    q_a: np.ndarray,
    q_b: np.ndarray,
    dt: float,
    counts: float = STILL_COUNTS,
    min_s: float = MIN_STILL_S,
) -> list[tuple[int, int]]:
    """Runs ``[i, j)`` of frames where both (T, J) signals stay within ``counts`` encoder
    counts of their run's start for at least ``min_s`` seconds."""
    tol = counts * RAD_PER_TICK
    n = int(math.ceil(min_s / dt))
    out: list[tuple[int, int]] = []
    i, T = 0, len(q_a)
    while i < T:
        j = i + 1
        while j < T and all(np.max(np.abs(x[i : j + 1] - x[i])) <= tol for x in (q_a, q_b)):
            j += 1
        if j - i >= n:
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def leader_follower_drift(trajs: Sequence[Trajectory], rig: Rig) -> Drift:
    """Drift of every rig joint over the still segments of ``trajs`` (``q_cmd``: the
    leader's action, ``q``: the follower's state, both in model radians).

    Raises:
        InputError: no still segment in the recording.
    """
    from simgap.sim.gravity import gravity_torques

    segs, d, poses = [], [], []
    for tr in trajs:
        dt = float(np.median(np.diff(tr.t)))
        for i, j in still_segments(tr.q_cmd, tr.q, dt):
            k = i + (j - i) // 2  # the settled half
            segs.append((tr.episode, i, j))
            d.append(np.mean(tr.q[k:j] - tr.q_cmd[k:j], axis=0))
            poses.append(np.mean(tr.q[k:j], axis=0))
    if not segs:
        raise InputError(
            field="dataset",
            expected=f"still segments (leader and follower "
            f"within {STILL_COUNTS:g} counts for {MIN_STILL_S:g} s)",
            got="none",
            fix="record a teleoperation with pauses: hold the "
            "leader still at a few poses for a second each",
        )
    D, P = np.array(d), np.array(poses)  # (S, J)
    tau = gravity_torques(rig.model_path, rig.joint_names, P)  # (S, J)
    frames = np.array([j - (i + (j - i) // 2) for _, i, j in segs])
    quant = RAD_PER_TICK / math.sqrt(12.0) / math.sqrt(float(frames.sum()))
    joints = []
    for c, name in enumerate(rig.joint_names):
        joints.append(_fit(name, D[:, c], tau[:, c], quant))
    med = np.median(P, axis=0)
    off = np.array([j.offset_rad for j in joints])
    load = np.array([j.load_rad for j in joints])
    total = load_total = None
    per: dict[str, float] = {}
    if rig.ee_site is not None:
        from simgap.sim.fk import ForwardKinematics

        fk = ForwardKinematics(rig.model_path, rig.joint_names, rig.ee_site)
        p = fk.positions(np.vstack([med, med + off, med + load]))
        total = float(np.linalg.norm(p[1] - p[0]))
        load_total = float(np.linalg.norm(p[2] - p[0]))
        for c, name in enumerate(rig.joint_names):
            one = med.copy()
            one[c] += off[c]
            per[name] = float(np.linalg.norm(fk.positions(np.vstack([med, one]))[1] - p[0]))
    return Drift(
        joints=tuple(joints),
        segments=tuple(segs),
        offset_at_gripper_m=total,
        load_at_gripper_m=load_total,
        per_joint_at_gripper_m=per,
    )


def _fit(name: str, d: np.ndarray, tau: np.ndarray, quant: float) -> JointDrift:
    n = len(d)
    if n >= 3 and float(np.ptp(tau)) >= TAU_SPREAD_NM:
        A = np.stack([np.ones(n), tau], axis=1)
        coef, *_ = np.linalg.lstsq(A, d, rcond=None)
        res = d - A @ coef
        dof = n - 2
        s2 = float(res @ res) / dof if dof > 0 else 0.0
        cov = s2 * np.linalg.inv(A.T @ A)
        se = math.sqrt(max(float(cov[0, 0]), 0.0))
        ci: float | None = float(stats.t.ppf(0.975, dof)) * se if dof > 0 else None
        slope: float | None = float(coef[1])
        offset = float(coef[0])
        load = float(coef[1] * np.median(tau))
    else:
        offset, slope, load = float(np.mean(d)), None, 0.0
        ci = (
            float(stats.t.ppf(0.975, n - 1)) * float(np.std(d, ddof=1)) / math.sqrt(n)
            if n >= 2
            else None
        )
    if ci is not None:  # + the goal's truncation: LeRobot writes int(ticks), half a count low
        ci = max(ci, 1.96 * quant) + TRUNCATION_COUNTS * RAD_PER_TICK
    return JointDrift(
        joint=name,
        offset_rad=offset,
        ci95_rad=ci,
        compliance_rad_per_nm=slope,
        load_rad=load,
        n_segments=n,
    )
