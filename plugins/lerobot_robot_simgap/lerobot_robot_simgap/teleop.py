"""A scripted leader for ``lerobot-record`` / ``lerobot-teleoperate`` (no hardware, no keyboard).

Step k commands body joint i to ``centre_i + amplitude * sin(2 pi (k / fps - i period / 6) /
period)`` [deg] and the gripper to a constant, around the demo SO-101's rest keyframe.
"""

from __future__ import annotations

import math
from typing import Any

from lerobot.teleoperators import Teleoperator

from lerobot_robot_simgap.config import SimgapScriptedTeleopConfig

CENTRE_DEG = {"shoulder_pan": 0.0, "shoulder_lift": -90.0, "elbow_flex": 90.0,
              "wrist_flex": 37.8, "wrist_roll": 0.0}
"""The demo model's ``rest`` keyframe in LeRobot degrees (mid-range zero)."""


class SimgapScriptedTeleop(Teleoperator):
    """Scripted leader (see the module docstring)."""

    config_class = SimgapScriptedTeleopConfig
    name = "simgap_scripted"

    def __init__(self, config: SimgapScriptedTeleopConfig) -> None:
        super().__init__(config)
        self.config = config
        self._k = 0
        self._connected = False

    @property
    def action_features(self) -> dict[str, type]:
        return {f"{m}.pos": float for m in (*CENTRE_DEG, "gripper")}

    @property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self._connected

    def connect(self, calibrate: bool = True) -> None:
        self._connected = True
        self._k = 0

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def get_action(self) -> dict[str, Any]:
        c = self.config
        t = self._k / c.fps
        self._k += 1
        action = {f"{m}.pos": centre + c.amplitude_deg * math.sin(
                      2 * math.pi * (t - i * c.period_s / 6) / c.period_s)
                  for i, (m, centre) in enumerate(CENTRE_DEG.items())}
        action["gripper.pos"] = c.gripper
        return action

    def send_feedback(self, feedback: dict[str, Any]) -> None:
        pass

    def disconnect(self) -> None:
        self._connected = False
