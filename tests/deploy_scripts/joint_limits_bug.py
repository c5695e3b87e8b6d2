"""Bug: wrist_roll comes out in a 0..360 convention (offset by 180 deg), past its limit."""

from _common import BASE, run_episode, to_robot


def convert(a: dict[str, float]) -> dict[str, float]:
    out = to_robot(a)
    out["wrist_roll.pos"] = out["wrist_roll.pos"] + 180.0
    return out


FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 20, convert)
    robot.disconnect()
