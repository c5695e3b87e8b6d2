"""Fixed: wrist_roll stays in the robot's convention (0 at mid-range)."""

from _common import BASE, run_episode, to_robot

FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 20, to_robot)
    robot.disconnect()
