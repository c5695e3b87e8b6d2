"""Fixed: the checkpoint is saved from CPU memory, so it loads anywhere."""

from _common import BASE, checkpoint_file, load_policy_weights, run_episode, save_checkpoint

FAKE_ARM = BASE


def run(robot) -> None:
    path = save_checkpoint(checkpoint_file(robot), from_gpu=False)
    load_policy_weights(path)
    robot.recorder.annotate(checkpoint=path.name)
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
