"""LeRobot plugin: simgap's fake SO-101 (``--robot.type=simgap_fake_so101``).

LeRobot imports every installed *distribution* whose name starts with ``lerobot_robot_``
(``register_third_party_plugins`` in lerobot/utils/import_utils.py); importing this package
registers three draccus choices:

- robot ``simgap_fake_so101`` -> ``SimgapFakeSO101`` (wraps ``simgap.fakearm.FakeSO101``),
- camera ``simgap_sim`` -> ``SimgapSimCamera`` (the MuJoCo-rendered wrist camera),
- teleoperator ``simgap_scripted`` -> ``SimgapScriptedTeleop`` (a scripted leader).

``make_robot_from_config`` and ``make_cameras_from_configs`` find each device class as the
config's class name without ``Config`` in the config's parent module: this package.
"""

from lerobot_robot_simgap.camera import SimgapSimCamera
from lerobot_robot_simgap.config import (
    CAMERA_TYPE,
    ROBOT_TYPE,
    TELEOP_TYPE,
    SimgapFakeSO101Config,
    SimgapScriptedTeleopConfig,
    SimgapSimCameraConfig,
)
from lerobot_robot_simgap.robot import SimgapFakeSO101
from lerobot_robot_simgap.teleop import SimgapScriptedTeleop

__all__ = ["CAMERA_TYPE", "ROBOT_TYPE", "TELEOP_TYPE", "SimgapFakeSO101",
           "SimgapFakeSO101Config", "SimgapScriptedTeleop", "SimgapScriptedTeleopConfig",
           "SimgapSimCamera", "SimgapSimCameraConfig"]
