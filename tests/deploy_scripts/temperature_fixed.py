"""Fixed: the arm rests with torque off for a minute between episodes, and torque comes back
on with goal = present."""

from _common import BASE
from temperature_bug import episode

FAKE_ARM = {**BASE, "log_temperature": True}
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


def rest(robot, seconds: float) -> None:
    robot.bus.sync_write("Torque_Enable", {m: 0 for m in MOTORS})
    robot.clock.sleep(seconds)
    robot.bus.sync_write("Goal_Position", robot.bus.sync_read("Present_Position"))
    robot.bus.sync_write("Torque_Enable", {m: 1 for m in MOTORS})


def run(robot) -> None:
    robot.connect()
    for i in range(4):
        if i:
            rest(robot, 60.0)
        robot.reset_scene()
        episode(robot, 8.0)
    robot.disconnect()
