"""A scripted pick-and-place controller for the demo bench (not a learned policy).

From the tracked cube position at the start of an episode it plans joint-space waypoints
with the simulated model's kinematics (inverse kinematics by least squares: the fixed jaw's
pad beside the cube, the gripper pointing down), then interpolates them tick by tick. It is
open loop in joint space, so every difference between the bench and the model (a zero
offset, a soft servo, latency) shows up in what it achieves.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import least_squares

from simgap.demo.twin import GRIPPER_RANGE_RAD, JOINTS
from simgap.sim.scene import Model, new_data, pose

PAN_AXIS_XY = (0.0388353, 0.0)
"""The shoulder-pan axis in the model frame [m]."""


@dataclass(frozen=True)
class Script:
    """Timing and geometry of the scripted pick and place.

    Attributes:
        segments_s: durations of the segments [s]: wait (the start pose held still),
            approach, descend, close, lift, carry, open, hold.
        hover_m: height of the pad centre above the grasp height before descending [m].
        grasp_z_m: pad centre height while grasping [m].
        carry_z_m: pad centre height while carrying [m].
        open_rad: gripper angle while approaching [rad].
        close_rad: gripper command while holding [rad] (squeezes).
        bin_xy: where the cube is released (the bin's centre) [m].
        start_q: the start pose [rad], joint order ``JOINTS``.
    """

    segments_s: tuple[float, ...] = (1.2, 1.2, 0.7, 0.5, 0.6, 1.2, 0.4, 0.4)
    hover_m: float = 0.05
    grasp_z_m: float = 0.016
    carry_z_m: float = 0.085
    open_rad: float = 0.75
    close_rad: float = -0.17
    bin_xy: tuple[float, float] = (0.15, 0.2)
    start_q: tuple[float, ...] = (0.0, -0.6, 0.9, 0.9, 0.0, 0.6)

    def digest(self) -> str:
        """A content hash of the script: the 'checkpoint' hash of the demo's policy."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()

    def steps(self, dt: float) -> int:
        """Ticks in one episode at period ``dt``."""
        return int(round(sum(self.segments_s) / dt))


PHASE_OF_SEGMENT = (
    "approach",
    "approach",
    "contact",
    "grasp",
    "lift_and_carry",
    "lift_and_carry",
    "place",
    "place",
)


class Planner:
    """Plans waypoints with the simulated model's kinematics."""

    def __init__(self, model: Model, script: Script = Script()) -> None:
        self.model = model
        self.data = new_data(model)
        self.script = script
        self._qadr = np.array([model.joint(j).qposadr[0] for j in JOINTS])
        self._pad = model.geom("fixed_jaw_pad").id
        self._site = model.site("gripperframe").id

    def _fk(self, q4: np.ndarray, roll: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        self.data.qpos[self._qadr[:4]] = q4
        self.data.qpos[self._qadr[4]] = roll
        pose(self.model, self.data)
        return (
            np.array(self.data.geom_xpos[self._pad]),
            np.array(self.data.site_xmat[self._site]).reshape(3, 3)[:, 0],
        )

    def ik(self, pad_target: np.ndarray, q_seed: np.ndarray, roll: float = 0.0) -> np.ndarray:
        """Joint angles (pan, lift, elbow, wrist_flex) [rad] that put the fixed pad at
        ``pad_target`` with the gripper pointing down and the wrist rolled by ``roll``
        (least squares, bounded)."""
        lo = self.model.jnt_range[[self.model.joint(j).id for j in JOINTS[:4]], 0]
        hi = self.model.jnt_range[[self.model.joint(j).id for j in JOINTS[:4]], 1]

        def resid(q4: np.ndarray) -> np.ndarray:
            p, ax = self._fk(q4, roll)
            return np.concatenate([(p - pad_target) * 10.0, (ax - [0, 0, -1]) * 0.3])

        sol = least_squares(
            resid, np.clip(q_seed, lo + 1e-6, hi - 1e-6), bounds=(lo, hi), xtol=1e-10, ftol=1e-10
        )
        return np.asarray(sol.x)

    def pad_normal(self, q4: np.ndarray, roll: float, gripper: float) -> np.ndarray:
        """Horizontal unit normal of the fixed pad's inner face (towards the moving jaw)."""
        self.data.qpos[self._qadr[5]] = gripper
        self._fk(q4, roll)
        d = (
            self.data.geom_xpos[self.model.geom("moving_jaw_pad").id]
            - self.data.geom_xpos[self._pad]
        )
        d[2] = 0.0
        out: np.ndarray = d / np.linalg.norm(d)
        return out

    def waypoints(self, cube_xy: np.ndarray) -> list[np.ndarray]:
        """Joint waypoints [rad] (6,) at the end of each segment, from the cube's position."""
        s = self.script
        bearing = math.atan2(cube_xy[1] - PAN_AXIS_XY[1], cube_xy[0] - PAN_AXIS_XY[0])
        radial = np.array([math.cos(bearing), math.sin(bearing), 0.0])
        grasp = np.array([cube_xy[0], cube_xy[1], s.grasp_z_m]) - radial * (0.0125 + 0.0035)
        seed = np.array(s.start_q[:4])
        q_hover = self.ik(grasp + [0, 0, s.hover_m], seed)
        q_grasp = self.ik(grasp, q_hover)
        q_lift = self.ik(grasp + [0, 0, s.carry_z_m - s.grasp_z_m], q_grasp)
        b = np.array([s.bin_xy[0], s.bin_xy[1], s.carry_z_m])
        bb = math.atan2(b[1] - PAN_AXIS_XY[1], b[0] - PAN_AXIS_XY[0])
        q_bin = self.ik(b - np.array([math.cos(bb), math.sin(bb), 0.0]) * 0.016, q_lift)

        def full(q4: np.ndarray, grip: float) -> np.ndarray:
            return np.concatenate([q4, [0.0, grip]])

        return [
            full(q_hover, s.open_rad),
            full(q_grasp, s.open_rad),
            full(q_grasp, s.close_rad),
            full(q_lift, s.close_rad),
            full(q_bin, s.close_rad),
            full(q_bin, s.open_rad),
            full(q_bin, s.open_rad),
        ]

    def commands(self, cube_xy: np.ndarray, dt: float) -> tuple[np.ndarray, list[str]]:
        """Per-tick joint commands [rad], shape (T, 6), and the scripted phase of each tick."""
        s = self.script
        wps = [np.array(s.start_q)] * 2 + self.waypoints(cube_xy)
        ends = np.cumsum(s.segments_s)
        n = s.steps(dt)
        out = np.empty((n, len(JOINTS)))
        phases = []
        for k in range(n):
            t = (k + 1) * dt
            i = min(int(np.searchsorted(ends, t - 1e-9)), len(ends) - 1)
            t0 = ends[i - 1] if i else 0.0
            a = min(1.0, max(0.0, (t - t0) / s.segments_s[i]))
            a = 0.5 - 0.5 * math.cos(math.pi * a)  # smooth start and stop
            out[k] = wps[i] + a * (wps[i + 1] - wps[i])
            phases.append(PHASE_OF_SEGMENT[i])
        out[:, 5] = np.clip(out[:, 5], *GRIPPER_RANGE_RAD)
        return out, phases
