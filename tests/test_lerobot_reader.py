from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.rig import load_rig
from tests.factories import write_rig, write_v3_dataset


def _episodes(rng: np.random.Generator, lengths: list[int]) -> list[dict[str, np.ndarray]]:
    out = []
    for n in lengths:
        act = rng.uniform(-30, 30, (n, 6))
        act[:, 5] = rng.uniform(0, 100, n)
        out.append({"action": act, "observation.state": act + 0.5})
    return out


@pytest.mark.parametrize("fixed_size", [True, False])
def test_reads_episodes_and_converts_units(tmp_path: Path, fixed_size: bool) -> None:
    rng = np.random.default_rng(0)
    eps = _episodes(rng, [40, 25, 31])
    root = write_v3_dataset(tmp_path / "ds", eps, fps=30, fixed_size=fixed_size, rows_per_file=50)
    ds = read_lerobot_dataset(root)
    assert ds.episode_indices == (0, 1, 2) and ds.fps == 30.0
    assert ds.vector("action", 1).shape == (25, 6)
    named = ds.named("observation.state", 2)
    assert np.allclose(named["gripper.pos"], eps[2]["observation.state"][:, 5], atol=1e-4)
    rig = load_rig(write_rig(tmp_path, "m.xml"))
    trajs = dataset_trajectories(ds, rig)
    assert [t.n_samples for t in trajs] == [40, 25, 31]
    t1 = trajs[1]
    assert np.allclose(t1.q_cmd[:, 0], np.deg2rad(eps[1]["action"][:, 0]), atol=1e-6)
    grip = -0.174533 + eps[1]["observation.state"][:, 5] / 100 * (1.7453292 + 0.174533)
    assert np.allclose(t1.q[:, 5], grip, atol=1e-5)
    assert np.allclose(np.diff(t1.t), 1 / 30, atol=1e-6)


def test_rejects_v21(tmp_path: Path) -> None:
    root = write_v3_dataset(
        tmp_path / "ds", _episodes(np.random.default_rng(1), [5]), version="v2.1"
    )
    with pytest.raises(InputError, match="codebase_version") as e:
        read_lerobot_dataset(root)
    assert "v3" in str(e.value) and "info.json" in str(e.value)


def test_missing_joint_lists_names(tmp_path: Path) -> None:
    root = write_v3_dataset(tmp_path / "ds", _episodes(np.random.default_rng(2), [5]))
    rig_path = write_rig(tmp_path, "m.xml")
    rig_path.write_text(
        rig_path.read_text().replace('recorded = "elbow_flex.pos"', 'recorded = "elbow.pos"')
    )
    with pytest.raises(NameNotFoundError) as e:
        dataset_trajectories(read_lerobot_dataset(root), load_rig(rig_path))
    assert "elbow_flex.pos" in str(e.value)


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="info.json"):
        read_lerobot_dataset(tmp_path)
