"""Fixed: the policy server listens on loopback; a remote client reaches it by SSH tunnel."""

from _common import BASE, run_episode

FAKE_ARM = BASE


def run(robot) -> None:
    robot.recorder.annotate(policy_server="127.0.0.1:8080")
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
