"""Fixed: the gripper conversion runs for every robot name."""

from _common import BASE, gripper_pct, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    def convert(a: dict[str, float]) -> dict[str, float]:
        out = {k: v for k, v in a.items() if k != "gripper"}
        out["gripper.pos"] = gripper_pct(a["gripper"])
        return out

    robot.connect()
    run_episode(robot, 40, convert)
    robot.disconnect()
