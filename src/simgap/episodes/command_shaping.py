"""The command as it reached the servo: what LeRobot and the servo do to a recorded action.

LeRobot 0.6.1's ``lerobot-record`` writes the action it was given (``action_values``), not
the one it sent: with the follower's ``max_relative_target`` set, ``SOFollower.send_action``
reads the present position and clips each goal to it +- the bound
(``lerobot.robots.utils.ensure_safe_goal_position``, in LeRobot's own units: degrees, or
-100..100 / 0..100 for a normalised joint). A servo with a goal-speed limit then moves its
goal no faster than that. A replay of the recorded action would ask the model for motion the
servo was never asked for, and the fit would absorb the difference as delay or lag.

``shape_commands`` rebuilds the sent goal from the data alone: frame k's action against
frame k's ``observation.state`` (the present position LeRobot read a few ms earlier, in the
same loop tick), then the rate limit. Both act on model radians with the bound converted
through each joint's recorded unit (the unit map is affine, so clipping in radians at
``bound * rad_per_unit`` is clipping in the recorded unit). ``shaped_trajectory`` applies the
rig's ``[deploy]`` settings to one Trajectory; it is the identity when the rig states none.

Not modelled: the servo's acceleration profile (LeRobot writes ``Acceleration`` 254) and its
P coefficient and torque limit (``deploy.servo_p_gain``, ``deploy.gripper_torque_limit``),
which act inside the servo, not on the goal: the servo family's model holds those.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from simgap.rig import Rig
from simgap.series import Trajectory


@dataclass(frozen=True)
class Shaping:
    """What is done to each goal before the servo acts on it.

    Attributes:
        bound_rad: per joint, the largest goal-to-present difference sent [rad] (LeRobot's
            ``max_relative_target`` converted through the joint's unit); None: no clip.
        speed_rad_s: the goal's speed limit [rad/s]; None: none.
        bound_recorded: the same bounds in each joint's recorded unit, as the rig states
            them (for messages).
    """

    bound_rad: tuple[float, ...] | None = None
    speed_rad_s: float | None = None
    bound_recorded: tuple[float, ...] | None = None

    @property
    def active(self) -> bool:
        """Whether anything is done to the command."""
        return self.bound_rad is not None or self.speed_rad_s is not None


def shaping_of(rig: Rig) -> Shaping:
    """The rig's ``[deploy]`` command shaping (``max_relative_target``, ``goal_speed_rad_s``)."""
    bounds = rig.deploy.max_relative_target
    rad = (
        None
        if bounds is None
        else tuple(
            float(b) * j.unit.rad_per_unit() for b, j in zip(bounds, rig.joints, strict=True)
        )
    )
    return Shaping(bound_rad=rad, speed_rad_s=rig.deploy.goal_speed_rad_s, bound_recorded=bounds)


def clip_relative(commands: np.ndarray, present: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """``present + clip(commands - present, -bound, bound)``, per frame and joint, as
    ``ensure_safe_goal_position`` does. Shapes (T, J), (T, J), (J,); inf: no clip."""
    c = np.asarray(commands, dtype=float)
    p = np.asarray(present, dtype=float)
    b = np.asarray(bound, dtype=float)[None, :]
    return p + np.clip(c - p, -b, b)


def rate_limit(goals: np.ndarray, dt_s: float, speed_rad_s: float) -> np.ndarray:
    """Goals (T, J) [rad] that move at most ``speed_rad_s * dt_s`` per frame toward the
    sent ones, from the first (the servo already holds it): the goal's speed limit at the
    frame's resolution."""
    g = np.asarray(goals, dtype=float)
    out = g.copy()
    step = float(speed_rad_s) * float(dt_s)
    for k in range(1, len(g)):
        out[k] = out[k - 1] + np.clip(g[k] - out[k - 1], -step, step)
    return out


def shape_commands(
    commands: np.ndarray, present: np.ndarray, dt_s: float, shaping: Shaping
) -> tuple[np.ndarray, np.ndarray]:
    """(the goals as sent (T, J) [rad], fraction of frames each joint's goal was changed
    (J,)): the clip against the present position, then the rate limit."""
    c = np.asarray(commands, dtype=float)
    out = c
    if shaping.bound_rad is not None:
        out = clip_relative(out, present, np.asarray(shaping.bound_rad))
    if shaping.speed_rad_s is not None:
        out = rate_limit(out, dt_s, shaping.speed_rad_s)
    changed = np.abs(out - c) > 1e-12
    frac = changed.mean(axis=0) if len(c) else np.zeros(c.shape[1])
    return out, frac


def shaped_trajectory(rig: Rig, tr: Trajectory) -> Trajectory:
    """``tr`` with its commands as the rig's deployment sent them (``tr`` itself when the
    rig states no shaping); ``meta["shaped_fraction"]`` says how often each joint's was
    changed."""
    shaping = shaping_of(rig)
    if not shaping.active:
        return tr
    t = np.asarray(tr.t, dtype=float)
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    sent, frac = shape_commands(np.asarray(tr.q_cmd), np.asarray(tr.q), dt, shaping)
    meta = {**dict(tr.meta or {}), "shaped_fraction": [float(f) for f in frac]}
    return replace(tr, q_cmd=sent, meta=meta)
