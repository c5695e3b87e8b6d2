"""The time base of a recording: can its frame stamps be the times its motion happened at?

LeRobot stamps frame k at ``k / fps`` whatever the loop really took: a ``lerobot-record``
loop slowed to 2 Hz by its cameras still writes 33 ms steps under a 30 fps label, and every
fit on it (delay, lag, gains) fits the wrong clock. The stamps cannot tell; the motion can.
A joint cannot cover more, between two frames, than its servo turns in one labelled step:
a reading that does is motion that took longer than its stamps say.

Four checks, values in (times [s], joint readings [rad]), numbers out:

- ``speed``: the peak frame-to-frame speed of each joint's reading (and command) against
  the servo's speed limit times ``SPEED_MARGIN``; frames that exceed it are impossible at
  the labelled rate, and the largest step over the limit bounds the real period from below.
- ``stale``: frames whose reading repeats the previous one exactly, on every joint, in the
  middle of a motion (moving before and after): an observation read twice.
- ``gaps``: steps longer than ``GAP_FACTOR`` labelled periods (dropped frames).
- ``resolution``: the float32 spacing of the stamps at the episode's last time, against
  the period (LeRobot stores ``timestamp`` as float32).

``assess_time_base`` decides: refused when the motion is impossible on at least
``MIN_IMPOSSIBLE_FRAMES`` frames, when stale observations pass ``STALE_MAX``, or when the
stamps cannot resolve a period; the fix says what to change in the recording.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SPEED_MARGIN = 1.5
"""A frame-to-frame speed above this many times the servo's limit is impossible (the limit
is a datasheet figure at one voltage; the margin covers a faster unit and the reading's
quantisation over a short step)."""
MIN_IMPOSSIBLE_FRAMES = 3
"""Impossible frames (over the whole dataset) that refuse it: one or two can be a reading
glitch; a loop slower than its label gives one on every fast move."""
STALE_MAX = 0.2
"""Share of mid-motion frames repeating their predecessor that refuses the recording."""
GAP_FACTOR = 1.5
"""A step longer than this many labelled periods is a gap (a dropped frame)."""
RESOLUTION_MAX = 0.1
"""Float32 stamp spacing, as a fraction of the period, beyond which frames blur together."""
DETECT_MAX = 20.0
"""A recording whose fastest step shows only a loop more than this many times slower than its
label is too slow-moving to vouch for its time base (inconclusive, not passed)."""
REFUSAL_FIX = "the loop ran slower than its fps label; record with fewer cameras or a lower fps"
"""The fix of a recording whose motion is impossible at its labelled rate."""


@dataclass(frozen=True)
class JointSpeed:
    """One joint's fastest frame-to-frame move.

    Attributes:
        joint: the model joint name.
        peak_rad_s: peak |reading step| / labelled period [rad/s].
        peak_cmd_rad_s: the same for the command [rad/s] (None when no command).
        limit_rad_s: the servo's speed limit [rad/s] (the refusal is at ``SPEED_MARGIN`` x).
        impossible_frames: steps of the reading faster than ``SPEED_MARGIN`` x the limit.
        episode: episode of the peak.
        frame: frame of the peak (the step ends there).
        gripper: whether the joint is the gripper (reported, never decides).
    """

    joint: str
    peak_rad_s: float
    peak_cmd_rad_s: float | None
    limit_rad_s: float
    impossible_frames: int
    episode: int
    frame: int
    gripper: bool = False


@dataclass(frozen=True)
class TimeBase:
    """The time-base checks of one recording.

    Attributes:
        fps: the labelled rate [Hz].
        period_s: the labelled period 1 / fps [s].
        episodes: episodes checked.
        frames: frames checked, over every episode.
        joints: per joint, its fastest move (``JointSpeed``).
        limit_from: where the speed limit comes from (the servo family, or the bound used
            when the rig names none), for the report.
        impossible_frames: frames on which some non-gripper joint moved faster than
            ``SPEED_MARGIN`` x its limit.
        min_real_period_s: the shortest period the fastest step allows at the servo's
            limit [s] (the real loop was at least this slow; equals ``period_s`` or less
            when nothing was too fast).
        stale_fraction: share of mid-motion frames that repeat the previous reading.
        stale_frames: their count.
        moving_frames: mid-motion frames (the denominator of ``stale_fraction``).
        gaps: steps longer than ``GAP_FACTOR`` periods.
        largest_step_s: the longest step between stamps [s].
        resolution_s: float32 spacing at the longest episode's last stamp [s].
        longest_episode_s: that episode's last stamp [s].
        reasons: why the time base is refused (empty: it passed).
    """

    fps: float
    period_s: float
    episodes: int
    frames: int
    joints: tuple[JointSpeed, ...]
    limit_from: str
    impossible_frames: int
    min_real_period_s: float
    stale_fraction: float
    stale_frames: int
    moving_frames: int
    gaps: int
    largest_step_s: float
    resolution_s: float
    longest_episode_s: float
    reasons: tuple[str, ...] = field(default=())

    @property
    def detectable_slowdown(self) -> float:
        """How many times slower than its label the loop must have run for this motion to
        have been refused: ``SPEED_MARGIN`` x limit / peak speed, of the body joint nearest
        its limit (inf when nothing moved). The check's power: small is a strong pass."""
        body = [j for j in self.joints if not j.gripper] or list(self.joints)
        if not body:
            return math.inf
        j = max(body, key=lambda x: x.peak_rad_s / x.limit_rad_s)
        return SPEED_MARGIN * j.limit_rad_s / j.peak_rad_s if j.peak_rad_s > 0 else math.inf

    @property
    def refused(self) -> bool:
        """Whether the recording's stamps cannot be its motion's times."""
        return bool(self.reasons)

    def figures(self) -> dict[str, Any]:
        """The numbers, named with their units, for a Finding."""
        body = [j for j in self.joints if not j.gripper]
        peak = max(body or self.joints, key=lambda j: j.peak_rad_s / j.limit_rad_s)
        return {
            "refused": self.refused,
            "labelled_fps": self.fps,
            "labelled_period_s": self.period_s,
            "episodes": self.episodes,
            "frames": self.frames,
            "peak_speed_rad_s": peak.peak_rad_s,
            "peak_speed_joint": peak.joint,
            "peak_speed_episode": peak.episode,
            "peak_speed_frame": peak.frame,
            "speed_limit_rad_s": peak.limit_rad_s,
            "speed_limit_from": self.limit_from,
            "speed_margin": SPEED_MARGIN,
            "peak_to_limit_ratio": peak.peak_rad_s / peak.limit_rad_s,
            "impossible_frames": self.impossible_frames,
            "detectable_slowdown_ratio": self.detectable_slowdown,
            "min_real_period_s": self.min_real_period_s,
            "peak_speed_per_joint_rad_s": {j.joint: j.peak_rad_s for j in self.joints},
            "peak_command_speed_per_joint_rad_s": {j.joint: j.peak_cmd_rad_s for j in self.joints},
            "stale_fraction": self.stale_fraction,
            "stale_frames": self.stale_frames,
            "moving_frames": self.moving_frames,
            "gaps": self.gaps,
            "largest_step_s": self.largest_step_s,
            "stamp_resolution_s": self.resolution_s,
            "stamp_resolution_fraction": self.resolution_s / self.period_s,
            "longest_episode_s": self.longest_episode_s,
        }


def circular_steps(q: np.ndarray) -> np.ndarray:
    """|q[k] - q[k-1]| [rad] as the shorter way round, shape (T-1, J): a reading that wraps
    at +-pi is not a turn of 2 pi (so this can only lower a speed, never raise one)."""
    d = np.abs(np.diff(np.asarray(q, dtype=float), axis=0))
    return np.minimum(d, np.abs(2.0 * math.pi - d))


def stale_counts(q: np.ndarray, joints: Sequence[int]) -> tuple[int, int]:
    """(stale, moving) frames of one episode's readings ``q`` [rad], shape (T, J).

    A frame is mid-motion when the reading changed on the step into the frame before it
    and on the step out of it; it is stale when, mid-motion, it repeats the previous
    reading exactly on every listed joint (a quantised joint at a turning point repeats on
    its own; all of them at once is one observation read twice).
    """
    if q.shape[0] < 4 or not joints:
        return 0, 0
    steps = np.abs(np.diff(q[:, list(joints)], axis=0))  # (T-1, J)
    same = np.all(steps == 0.0, axis=1)  # step k: frame k+1 repeats frame k
    moved = ~same
    # step k is mid-motion when step k-1 and step k+1 both moved
    mid = np.zeros_like(same)
    mid[1:-1] = moved[:-2] & moved[2:]
    return int((same & mid).sum()), int(mid.sum())


def assess_time_base(
    times: Sequence[np.ndarray],
    readings: Sequence[np.ndarray],
    commands: Sequence[np.ndarray | None],
    joint_names: Sequence[str],
    limits_rad_s: Sequence[float],
    *,
    fps: float,
    gripper: int | None = None,
    episodes: Sequence[int] | None = None,
    limit_from: str = "",
) -> TimeBase:
    """The time-base checks of one recording.

    Args:
        times: per episode, the frame stamps [s], shape (T,).
        readings: per episode, the measured joint positions [rad], shape (T, J).
        commands: per episode, the commanded positions [rad], shape (T, J), or None.
        joint_names: the J joint names.
        limits_rad_s: per joint, the servo's speed limit [rad/s], length J.
        fps: the labelled frame rate [Hz].
        gripper: the gripper's column (reported; it never refuses a recording: its range
            in radians is often a guess).
        episodes: the episode indices (default 0..N-1), for the report.
        limit_from: where the limits come from, for the report.
    """
    period = 1.0 / float(fps)
    n_j = len(joint_names)
    limits = np.asarray(limits_rad_s, dtype=float)
    eps = list(episodes) if episodes is not None else list(range(len(times)))
    body = [i for i in range(n_j) if i != gripper]
    peak = np.zeros(n_j)
    peak_cmd = np.full(n_j, np.nan)
    where = [(eps[0] if eps else 0, 0)] * n_j
    impossible_j = np.zeros(n_j, dtype=int)
    impossible, stale, moving, gaps, frames = 0, 0, 0, 0, 0
    largest_step, longest, max_step_over = 0.0, 0.0, 0.0
    for e, t, q, c in zip(eps, times, readings, commands, strict=True):
        t = np.asarray(t, dtype=float)
        q = np.asarray(q, dtype=float)
        frames += int(t.size)
        if t.size:
            longest = max(longest, float(t[-1]))
        if t.size < 2:
            continue
        dt = np.diff(t)
        largest_step = max(largest_step, float(dt.max()))
        gaps += int((dt > GAP_FACTOR * period).sum())
        steps = circular_steps(q)  # (T-1, J) [rad]
        # a step is impossible when the joint covered it faster than the margin allows in
        # the stamps' own time between the two frames (a gap gives it more time)
        span = np.maximum(dt, 1e-12)[:, None]
        speed = steps / span
        too_fast = speed > SPEED_MARGIN * limits[None, :]
        impossible_j += too_fast.sum(axis=0)
        if body:
            impossible += int(too_fast[:, body].any(axis=1).sum())
            max_step_over = max(max_step_over, float((steps[:, body] / limits[body]).max()))
        for j in range(n_j):
            k = int(np.argmax(speed[:, j]))
            if speed[k, j] > peak[j]:
                peak[j], where[j] = float(speed[k, j]), (e, k + 1)
        if c is not None:
            cs = circular_steps(np.asarray(c, dtype=float)) / span
            peak_cmd = np.fmax(peak_cmd, cs.max(axis=0))
        s, m = stale_counts(q, body)
        stale, moving = stale + s, moving + m
    resolution = float(np.spacing(np.float32(max(longest, period))))
    stale_frac = stale / moving if moving else 0.0
    joints = tuple(
        JointSpeed(
            str(joint_names[j]),
            float(peak[j]),
            None if np.isnan(peak_cmd[j]) else float(peak_cmd[j]),
            float(limits[j]),
            int(impossible_j[j]),
            int(where[j][0]),
            int(where[j][1]),
            gripper == j,
        )
        for j in range(n_j)
    )
    reasons: list[str] = []
    if impossible >= MIN_IMPOSSIBLE_FRAMES:
        worst = max(
            (j for j in joints if not j.gripper), key=lambda j: j.peak_rad_s / j.limit_rad_s
        )
        reasons.append(
            f"on {impossible} frames a joint moved faster than {SPEED_MARGIN:g} x its servo's "
            f"limit at the labelled {fps:g} fps: {worst.joint} turned "
            f"{np.rad2deg(worst.peak_rad_s * period):.0f} deg in one {period * 1e3:.0f} ms "
            f"frame (episode {worst.episode}, frame {worst.frame}), "
            f"{worst.peak_rad_s:.3g} rad/s against {worst.limit_rad_s:.3g} rad/s"
        )
    if moving and stale_frac > STALE_MAX:
        reasons.append(
            f"{stale} of {moving} frames in mid-motion ({stale_frac:.0%}) repeat the "
            "previous observation exactly: observations were read twice"
        )
    if resolution > RESOLUTION_MAX * period:
        reasons.append(
            f"float32 stamps at {longest:.4g} s are {resolution * 1e3:.3g} ms apart, "
            f"{resolution / period:.0%} of the {period * 1e3:.3g} ms period"
        )
    return TimeBase(
        fps=float(fps),
        period_s=period,
        episodes=len(times),
        frames=frames,
        joints=joints,
        limit_from=limit_from,
        impossible_frames=impossible,
        min_real_period_s=max_step_over if max_step_over > period else period,
        stale_fraction=stale_frac,
        stale_frames=stale,
        moving_frames=moving,
        gaps=gaps,
        largest_step_s=largest_step,
        resolution_s=resolution,
        longest_episode_s=longest,
        reasons=tuple(reasons),
    )
