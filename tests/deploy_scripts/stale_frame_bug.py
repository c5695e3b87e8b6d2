"""Bug: each episode's first picture is taken as soon as the arm is home, before the scene
(the cube) is reset; the policy's first decision sees where the cube used to be."""

from _common import BASE, go_home, run_episode

FAKE_ARM = {**BASE, "cameras": {"wrist": {"fps": 30.0, "height": 32, "width": 32}}}


def run(robot) -> None:
    robot.connect()
    for _ in range(3):
        go_home(robot, 4)
        robot.get_observation()  # the first frame of the episode
        robot.reset_scene()
        run_episode(robot, 6)
    robot.disconnect()
