"""Fixed: reset the scene first, then wait one camera period for a frame taken after it."""

from _common import BASE, go_home, run_episode

FAKE_ARM = {**BASE, "cameras": {"wrist": {"fps": 30.0, "height": 32, "width": 32}}}


def run(robot) -> None:
    robot.connect()
    for _ in range(3):
        go_home(robot, 4)
        robot.reset_scene()
        robot.clock.sleep(1.0 / 30.0)
        run_episode(robot, 6)
    robot.disconnect()
