"""Bug: the loop sleeps a full period after inference instead of the rest of the period,
so each tick takes period + inference time."""

from _common import BASE, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    robot.connect()
    run_episode(robot, 30, inference_s=0.04, keep_period=False)
    robot.disconnect()
