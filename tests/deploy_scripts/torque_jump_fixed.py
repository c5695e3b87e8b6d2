"""Fixed: goal = present is written to every motor before torque comes on."""

from _common import DT, run_episode

FAKE_ARM = {"control_dt_s": DT, "write_goal_before_torque": True}


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 20)
    robot.disconnect()
