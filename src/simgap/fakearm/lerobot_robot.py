"""The fake arm as a LeRobot robot (optional: needs ``lerobot``, imported lazily).

``register()`` defines and registers ``SimgapFakeSO101Config`` (a ``RobotConfig`` subclass,
registered as ``"simgap_fake_so101"``) and ``SimgapFakeSO101`` (a ``Robot`` subclass that
wraps ``FakeSO101``). Both become attributes of this module, which is where LeRobot's
``make_robot_from_config`` looks for the robot class of a config it does not know (the
config's class name without ``Config``, in the config's module). After::

    import simgap.fakearm.lerobot_robot as fake
    fake.register()

an existing script that builds its robot from a config runs against the fake arm with
``--robot.type=simgap_fake_so101`` (or ``SimgapFakeSO101Config(...)``) unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simgap.errors import MissingExtraError
from simgap.fakearm.robot import FakeCameraConfig, FakeSO101, FakeSO101Config

TYPE_NAME = "simgap_fake_so101"
_REGISTERED: dict[str, type] = {}


def _camera(cfg: Any) -> FakeCameraConfig:
    """A LeRobot camera config (width, height, fps) as the simulated wrist camera."""
    return FakeCameraConfig(fps=float(getattr(cfg, "fps", None) or 30.0),
                            height=int(getattr(cfg, "height", None) or 64),
                            width=int(getattr(cfg, "width", None) or 64))


def register() -> tuple[type, type]:
    """Register the fake arm with LeRobot; returns (config class, robot class).

    Raises:
        MissingExtraError: LeRobot is not installed.
    """
    if _REGISTERED:
        return _REGISTERED["SimgapFakeSO101Config"], _REGISTERED["SimgapFakeSO101"]
    try:
        from lerobot.robots import Robot, RobotConfig
    except ImportError:
        raise MissingExtraError("lerobot", "lerobot",
                                "Running LeRobot scripts against the fake arm") from None

    @RobotConfig.register_subclass(TYPE_NAME)
    @dataclass
    class SimgapFakeSO101Config(RobotConfig):
        """LeRobot config of the fake SO-101 (fields as ``FakeSO101Config``)."""

        use_degrees: bool = True
        cameras: dict[str, Any] = field(default_factory=dict)
        max_relative_target: float | None = None
        disable_torque_on_disconnect: bool = True
        write_goal_before_torque: bool = False
        realtime: bool = True
        control_dt_s: float | None = None
        log_temperature: bool = False
        trace_path: str | None = None
        model_path: str | None = None
        keyframe: str | None = "rest"
        object_body: str | None = "cube"
        seed: int = 0

    class SimgapFakeSO101(Robot):
        """LeRobot robot that drives ``FakeSO101``."""

        config_class = SimgapFakeSO101Config
        name = "so_follower"

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.config = config
            self.arm = FakeSO101(FakeSO101Config(
                id=getattr(config, "id", None) or "fake", use_degrees=config.use_degrees,
                cameras={k: _camera(c) for k, c in config.cameras.items()},
                max_relative_target=config.max_relative_target,
                disable_torque_on_disconnect=config.disable_torque_on_disconnect,
                write_goal_before_torque=config.write_goal_before_torque,
                realtime=config.realtime, control_dt_s=config.control_dt_s,
                log_temperature=config.log_temperature, trace_path=config.trace_path,
                model_path=config.model_path, keyframe=config.keyframe,
                object_body=config.object_body, seed=config.seed))

        @property
        def observation_features(self) -> dict[str, Any]:
            return self.arm.observation_features

        @property
        def action_features(self) -> dict[str, type]:
            return self.arm.action_features

        @property
        def is_connected(self) -> bool:
            return self.arm.is_connected

        @property
        def is_calibrated(self) -> bool:
            return self.arm.is_calibrated

        def connect(self, calibrate: bool = True) -> None:
            self.arm.connect(calibrate=calibrate)

        def calibrate(self) -> None:
            self.arm.calibrate()

        def configure(self) -> None:
            self.arm.configure()

        def get_observation(self) -> dict[str, Any]:
            return self.arm.get_observation()

        def send_action(self, action: dict[str, Any]) -> dict[str, Any]:
            return self.arm.send_action(action)

        def disconnect(self) -> None:
            self.arm.disconnect()

    SimgapFakeSO101Config.__module__ = __name__
    SimgapFakeSO101.__module__ = __name__
    _REGISTERED["SimgapFakeSO101Config"] = SimgapFakeSO101Config
    _REGISTERED["SimgapFakeSO101"] = SimgapFakeSO101
    return SimgapFakeSO101Config, SimgapFakeSO101


def __getattr__(name: str) -> type:
    """``SimgapFakeSO101Config`` and ``SimgapFakeSO101`` exist once LeRobot is imported."""
    if name in ("SimgapFakeSO101Config", "SimgapFakeSO101"):
        register()
        return _REGISTERED[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
