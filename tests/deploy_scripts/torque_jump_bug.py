"""Bug: torque is enabled while each goal register still holds its power-up 0 (LeRobot's
connect re-enables torque without writing goal = present first)."""

from _common import DT, run_episode

FAKE_ARM = {"control_dt_s": DT}


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 20)
    robot.disconnect()
