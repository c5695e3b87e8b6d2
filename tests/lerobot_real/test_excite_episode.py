"""The episode ``simgap excite --for`` writes, loaded by the real LeRobot 0.6.1 the way
``lerobot-replay`` loads it (``LeRobotDataset(repo_id, root, episodes=[0])``, the action
column by its feature names, at the dataset's fps).

Runs only where LeRobot is installed (.ci/run's Python 3.12 step).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

lerobot = pytest.importorskip("lerobot")
pytestmark = pytest.mark.lerobot_real


def test_lerobot_loads_the_designed_episode_as_replay_does(tmp_path: Path) -> None:
    from lerobot.datasets import LeRobotDataset

    from simgap.actuator.excite_design import assemble, candidates
    from simgap.actuator.excite_episode import TASK, episode_frames
    from simgap.actuator.excite_motion import NextMotion
    from simgap.demo import demo_model_path
    from simgap.demo.writers import write_lerobot_v3
    from simgap.rig import load_rig
    from simgap.sim.load import joint_ranges
    from tests.factories import write_rig

    rig = load_rig(write_rig(tmp_path / "rig", demo_model_path()))
    joints = tuple(rig.joint_names)
    lo, hi = joint_ranges(rig.model_path, [joints[2]])[joints[2]]
    segs = candidates(joints[2], lo, hi, 30.0, vmax_rad_s=6.0, seconds=2.0)[:2]
    start = np.zeros(len(joints))
    start[-1] = 0.5 * sum(joint_ranges(rig.model_path, [joints[-1]])[joints[-1]])
    cmd = assemble(start, joints, segs, 30.0)
    nm = NextMotion(joints=joints, fps=30.0, commands=cmd, predicted_q=cmd, start=start, designs=())
    frames, names = episode_frames(rig, nm)
    root = tmp_path / "episode"
    write_lerobot_v3(root, [frames], fps=30, names=names, task=TASK, robot_type="so101_follower")
    ds = LeRobotDataset("local/simgap_excite", root=root, episodes=[0])
    assert ds.fps == 30 and ds.num_frames == cmd.shape[0] and ds.num_episodes == 1
    assert ds.features["action"]["names"] == names
    actions = ds.select_columns("action")
    got = np.stack([np.asarray(actions[i]["action"]) for i in range(0, ds.num_frames, 7)])
    np.testing.assert_allclose(got, frames["action"][::7], rtol=1e-6, atol=1e-4)
    assert np.ptp(got[:, 2]) > 10.0  # the designed joint moves (degrees)
