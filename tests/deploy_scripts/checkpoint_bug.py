"""Bug: the checkpoint was saved straight from GPU memory; a plain torch.load fails on a
machine without CUDA (this script maps it to the CPU only so that it can run here)."""

from _common import BASE, checkpoint_file, load_policy_weights, run_episode, save_checkpoint

FAKE_ARM = BASE


def run(robot) -> None:
    path = save_checkpoint(checkpoint_file(robot), from_gpu=True)
    load_policy_weights(path)
    robot.recorder.annotate(checkpoint=path.name)
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
