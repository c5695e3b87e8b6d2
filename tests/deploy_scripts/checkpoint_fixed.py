"""Fixed: the checkpoint is saved from CPU memory, so it loads anywhere."""

from _common import BASE, load_policy_weights, run_episode, save_checkpoint, workdir

FAKE_ARM = BASE


def run(robot) -> None:
    path = save_checkpoint(workdir(robot) / "policy.pt", from_gpu=False)
    load_policy_weights(path)
    robot.recorder.annotate(checkpoint=path.name)
    robot.connect()
    run_episode(robot, 10)
    robot.disconnect()
