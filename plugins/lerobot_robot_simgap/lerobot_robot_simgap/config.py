"""LeRobot configs of the fake SO-101, its simulated wrist camera and a scripted teleoperator.

Each is a draccus choice registered with LeRobot, so ``--robot.type=simgap_fake_so101``,
``--robot.cameras='{wrist: {type: simgap_sim, width: 64, height: 64, fps: 30}}'`` and
``--teleop.type=simgap_scripted`` parse like LeRobot's own devices. LeRobot's factory
(``make_device_from_device_class`` in lerobot/utils/import_utils.py) finds the device of a
config ``FooConfig`` as ``Foo`` in the config's *parent* module, which is this package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.cameras import CameraConfig
from lerobot.robots import RobotConfig
from lerobot.teleoperators import TeleoperatorConfig

ROBOT_TYPE = "simgap_fake_so101"
CAMERA_TYPE = "simgap_sim"
TELEOP_TYPE = "simgap_scripted"


@CameraConfig.register_subclass(CAMERA_TYPE)
@dataclass(kw_only=True)
class SimgapSimCameraConfig(CameraConfig):
    """A camera of the MJCF model, rendered by MuJoCo (``fps`` [1/s], ``width``/``height`` [px]).

    Attributes:
        sim_camera: the MJCF camera rendered (``wrist_cam`` in the demo SO-101).
    """

    fps: int | None = 30
    width: int | None = 64
    height: int | None = 64
    sim_camera: str = "wrist_cam"


@RobotConfig.register_subclass(ROBOT_TYPE)
@dataclass(kw_only=True)
class SimgapFakeSO101Config(RobotConfig):
    """The fake SO-101 (fields as ``simgap.fakearm.FakeSO101Config``; cameras as LeRobot's).

    ``cameras`` maps a key to a ``CameraConfig``, as every LeRobot robot; only
    ``simgap_sim`` cameras can be rendered, and at most one (the wrist camera).
    """

    use_degrees: bool = True
    cameras: dict[str, CameraConfig] = field(default_factory=dict)
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
    observation_delay_s: float = 0.0
    calibration_path: str | None = None
    """A LeRobot calibration JSON the arm reads its encoders through (None: from the model)."""


@TeleoperatorConfig.register_subclass(TELEOP_TYPE)
@dataclass(kw_only=True)
class SimgapScriptedTeleopConfig(TeleoperatorConfig):
    """A leader that plays sinusoids around a pose, one step per ``get_action`` call.

    Attributes:
        fps: calls per second the script assumes [1/s] (step k is at time k / fps).
        amplitude_deg: sinusoid amplitude of the body joints [deg].
        period_s: sinusoid period [s]; joint i lags joint 0 by i/6 of it.
        gripper: gripper command [0..100].
    """

    fps: int = 30
    amplitude_deg: float = 8.0
    period_s: float = 2.0
    gripper: float = 30.0
