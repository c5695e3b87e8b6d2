"""The simulated wrist camera as a LeRobot ``Camera`` (frames rendered by the fake arm's MuJoCo).

A ``SimgapSimCamera`` has no device of its own: the robot binds it to its ``FakeSO101`` on
connect, and every read returns the frame of the latest capture instant (multiples of
``1 / fps`` on the arm's clock), the frame the arm's ``get_observation`` returns then.
On the real clock (``realtime=True``, the plugin's default) the arm renders those frames on a
background thread, as LeRobot's own cameras read theirs: ``read_latest`` takes the newest
without waiting, ``async_read`` waits for one newer than the last it returned.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from lerobot.cameras import Camera

from lerobot_robot_simgap.config import SimgapSimCameraConfig


class SimgapSimCamera(Camera):
    """LeRobot camera over the fake arm's renderer (see the module docstring)."""

    def __init__(self, config: SimgapSimCameraConfig) -> None:
        super().__init__(config)
        self.config = config
        self._arm: Any = None
        self._last_t: float | None = None

    def bind(self, arm: Any) -> None:
        """Render from ``arm`` (a ``simgap.fakearm.FakeSO101`` with this camera configured)."""
        self._arm = arm

    @property
    def is_connected(self) -> bool:
        return self._arm is not None and bool(self._arm.is_connected)

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        """Simulated cameras are not hardware: there is nothing to find."""
        return []

    def connect(self, warmup: bool = True) -> None:
        if self._arm is None:
            raise RuntimeError("SimgapSimCamera renders the fake arm's scene: connect the robot "
                               "(simgap_fake_so101) that owns it, not the camera alone")

    def read(self) -> np.ndarray:
        t_img, image = self._frame()
        self._last_t = t_img
        return image

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        """The next frame not returned yet, waiting up to ``timeout_ms`` on the arm's clock."""
        stream = getattr(self._arm, "camera", None) if self.is_connected else None
        if stream is not None and stream.background:
            frame = stream.wait_newer(self._last_t, timeout_ms / 1000.0)
            if frame is None:
                raise TimeoutError(f"no new simulated frame within {timeout_ms} ms")
            self._last_t = frame[0]
            return frame[1].copy()
        deadline = time.monotonic() + timeout_ms / 1000.0
        while True:
            t_img, image = self._frame()
            if self._last_t is None or t_img > self._last_t:
                self._last_t = t_img
                return image
            if time.monotonic() >= deadline:
                raise TimeoutError(f"no new simulated frame within {timeout_ms} ms")
            time.sleep(min(0.002, 1.0 / float(self.fps or 30)))

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        return self._frame()[1]

    def disconnect(self) -> None:
        self._arm = None

    def _frame(self) -> tuple[float, np.ndarray]:
        if not self.is_connected:
            raise RuntimeError("SimgapSimCamera is not connected: connect its robot first")
        t_img, image = self._arm.camera_frame()
        return float(t_img), image
