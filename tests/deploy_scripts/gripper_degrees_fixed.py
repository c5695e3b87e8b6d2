"""Fixed: the simulator's gripper angle is mapped onto LeRobot's 0..100."""

from _common import BASE, run_episode, to_robot

FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 40, to_robot)
    robot.disconnect()
