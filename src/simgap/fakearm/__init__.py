"""The fake SO-101: the LeRobot-facing side (no mujoco import here; see ``simgap.sim``).

``FakeSO101`` speaks LeRobot's SO-101 follower interface and records a deployment trace;
``simgap.fakearm.lerobot_robot.register()`` registers it with LeRobot when LeRobot is
installed (``--robot.type=simgap_fake_so101``).
"""

from simgap.fakearm.bus import FakeBus
from simgap.fakearm.calibration import MOTORS, MotorCalibration, load_calibration
from simgap.fakearm.clock import RealClock, VirtualClock
from simgap.fakearm.recorder import TraceRecorder
from simgap.fakearm.robot import FakeCameraConfig, FakeSO101, FakeSO101Config

__all__ = [
    "MOTORS",
    "FakeBus",
    "FakeCameraConfig",
    "FakeSO101",
    "FakeSO101Config",
    "MotorCalibration",
    "RealClock",
    "TraceRecorder",
    "VirtualClock",
    "load_calibration",
]
