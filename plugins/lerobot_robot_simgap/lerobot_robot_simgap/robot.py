"""The fake SO-101 as a LeRobot ``Robot``: LeRobot's follower interface over ``FakeSO101``.

``self.cameras`` is built by LeRobot's own ``make_cameras_from_configs`` from the config's
``cameras: dict[str, CameraConfig]``, as in LeRobot's ``SOFollower``; each must be a
``simgap_sim`` camera, bound on connect to the arm's MuJoCo renderer.
"""

from __future__ import annotations

from typing import Any

from lerobot.cameras import make_cameras_from_configs
from lerobot.robots import Robot

from lerobot_robot_simgap.camera import SimgapSimCamera
from lerobot_robot_simgap.config import CAMERA_TYPE, SimgapFakeSO101Config
from simgap.fakearm import FakeCameraConfig, FakeSO101, FakeSO101Config


def _fake_camera(key: str, cfg: Any) -> FakeCameraConfig:
    """A LeRobot camera config as the fake arm's simulated camera; only ``simgap_sim`` cameras."""
    if getattr(cfg, "type", None) != CAMERA_TYPE:
        raise ValueError(
            f"simgap_fake_so101: camera {key!r} has type {getattr(cfg, 'type', None)!r}; the fake "
            f"arm renders its cameras in MuJoCo, so use "
            f"--robot.cameras='{{{key}: {{type: {CAMERA_TYPE}, width: 64, height: 64, fps: 30}}}}'")
    return FakeCameraConfig(sim_camera=cfg.sim_camera, fps=float(cfg.fps),
                            height=int(cfg.height), width=int(cfg.width))


class SimgapFakeSO101(Robot):
    """LeRobot robot that drives ``simgap.fakearm.FakeSO101`` (see the module docstring)."""

    config_class = SimgapFakeSO101Config
    name = "so_follower"

    def __init__(self, config: SimgapFakeSO101Config) -> None:
        super().__init__(config)
        self.config = config
        fake_cams = {k: _fake_camera(k, c) for k, c in config.cameras.items()}
        self.cameras = make_cameras_from_configs(config.cameras)
        self.arm = FakeSO101(FakeSO101Config(
            id=config.id or "fake", use_degrees=config.use_degrees, cameras=fake_cams,
            max_relative_target=config.max_relative_target,
            disable_torque_on_disconnect=config.disable_torque_on_disconnect,
            write_goal_before_torque=config.write_goal_before_torque,
            realtime=config.realtime, control_dt_s=config.control_dt_s,
            log_temperature=config.log_temperature, trace_path=config.trace_path,
            model_path=config.model_path, keyframe=config.keyframe,
            object_body=config.object_body, seed=config.seed,
            observation_delay_s=config.observation_delay_s,
            calibration_path=config.calibration_path))

    @property
    def observation_features(self) -> dict[str, Any]:
        return self.arm.observation_features

    @property
    def action_features(self) -> dict[str, type]:
        return self.arm.action_features

    @property
    def is_connected(self) -> bool:
        return self.arm.is_connected and all(c.is_connected for c in self.cameras.values())

    @property
    def is_calibrated(self) -> bool:
        return self.arm.is_calibrated

    def connect(self, calibrate: bool = True) -> None:
        self.arm.connect(calibrate=calibrate)
        for cam in self.cameras.values():
            if isinstance(cam, SimgapSimCamera):
                cam.bind(self.arm)
            cam.connect()

    def calibrate(self) -> None:
        self.arm.calibrate()

    def configure(self) -> None:
        self.arm.configure()

    def get_observation(self) -> dict[str, Any]:
        return self.arm.get_observation()

    def send_action(self, action: dict[str, Any]) -> dict[str, Any]:
        return self.arm.send_action(action)

    def disconnect(self) -> None:
        for cam in self.cameras.values():
            cam.disconnect()
        self.arm.disconnect()
