"""Bug: the simulator's gripper angle goes out in degrees, as if use_degrees covered the
gripper; LeRobot's gripper is always 0..100, so closing (-10 deg) is clipped to 0."""

import math

from _common import BASE, run_episode


def convert(a: dict[str, float]) -> dict[str, float]:
    out = {k: v for k, v in a.items() if k != "gripper"}
    out["gripper.pos"] = math.degrees(a["gripper"])
    return out


FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 40, convert)
    robot.disconnect()
