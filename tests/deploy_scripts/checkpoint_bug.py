"""Bug: the checkpoint was saved straight from GPU memory; a plain torch.load fails on a
machine without CUDA (this script maps it to the CPU only so that it can run here)."""

from _common import BASE, load_policy_weights, run_episode, save_checkpoint, workdir

FAKE_ARM = BASE


def run(robot) -> None:
    path = save_checkpoint(workdir(robot) / "policy.pt", from_gpu=True)
    load_policy_weights(path)
    robot.recorder.annotate(checkpoint=path.name)
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
