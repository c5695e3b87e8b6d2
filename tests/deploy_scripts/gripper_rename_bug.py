"""Bug: the gripper conversion checks the robot's old name; LeRobot renamed the robot to
'so_follower' in 0.4.3, so the branch never runs and radians reach a 0..100 interface."""

from _common import BASE, gripper_pct, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    def convert(a: dict[str, float]) -> dict[str, float]:
        out = {k: v for k, v in a.items() if k != "gripper"}
        out["gripper.pos"] = a["gripper"]
        if robot.name == "so101_follower":
            out["gripper.pos"] = gripper_pct(a["gripper"])
        return out

    robot.connect()
    run_episode(robot, 40, convert)
    robot.disconnect()
