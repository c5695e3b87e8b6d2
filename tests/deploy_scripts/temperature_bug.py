"""Bug: episodes run back to back with the arm held stretched out; the shoulder servo heats
up from one episode to the next, so later episodes run on a warmer, weaker motor."""

from _common import BASE, DT

FAKE_ARM = {**BASE, "log_temperature": True}
STRETCHED = {
    "shoulder_pan.pos": 0.0,
    "shoulder_lift.pos": 20.0,
    "elbow_flex.pos": -20.0,
    "wrist_flex.pos": 0.0,
    "wrist_roll.pos": 0.0,
    "gripper.pos": 50.0,
}


def episode(robot, seconds: float) -> None:
    for _ in range(int(seconds / DT)):
        robot.get_observation()
        robot.send_action(STRETCHED)
        robot.clock.sleep(DT)


def run(robot) -> None:
    robot.connect()
    for _ in range(4):
        robot.reset_scene()
        episode(robot, 8.0)
    robot.disconnect()
