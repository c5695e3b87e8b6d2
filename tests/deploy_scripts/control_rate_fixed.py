"""Fixed: the loop sleeps only what is left of the period."""

from _common import BASE, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 30, inference_s=0.04, keep_period=True)
    robot.disconnect()
