"""Bug: the policy server listens on every interface (0.0.0.0)."""

from _common import BASE, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    robot.recorder.annotate(policy_server="0.0.0.0:8080")
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
