"""Builders of small test inputs in real formats (LeRobot v3 datasets, rig files)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SO101_NAMES = [
    "shoulder_pan.pos",
    "shoulder_lift.pos",
    "elbow_flex.pos",
    "wrist_flex.pos",
    "wrist_roll.pos",
    "gripper.pos",
]


def write_v3_dataset(
    root: Path,
    episodes: Sequence[Mapping[str, np.ndarray]],
    *,
    fps: int = 30,
    names: Sequence[str] = SO101_NAMES,
    version: str = "v3.0",
    robot_type: str = "so_follower",
    fixed_size: bool = True,
    extra_features: Mapping[str, dict] | None = None,
    rows_per_file: int | None = None,
) -> Path:
    """Write a LeRobot v3 dataset (data + meta/episodes + info.json) with pyarrow.

    Each episode maps a feature key (``action``, ``observation.state``, or an extra scalar or
    vector column) to an array of shape (T, n) or (T,).
    """
    root.mkdir(parents=True, exist_ok=True)
    n = len(names)
    cols: dict[str, list] = {
        "timestamp": [],
        "frame_index": [],
        "episode_index": [],
        "index": [],
        "task_index": [],
    }
    vec_keys: list[str] = []
    for ep in episodes:
        for k in ep:
            if k not in vec_keys:
                vec_keys.append(k)
    for k in vec_keys:
        cols[k] = []
    ep_rows = []
    gi = 0
    for e, ep in enumerate(episodes):
        length = len(next(iter(ep.values())))
        for i in range(length):
            cols["timestamp"].append(np.float32(i / fps))
            cols["frame_index"].append(i)
            cols["episode_index"].append(e)
            cols["index"].append(gi + i)
            cols["task_index"].append(0)
            for k in vec_keys:
                v = np.asarray(ep[k][i], dtype=np.float32)
                cols[k].append(v.tolist() if v.ndim else float(v))
        ep_rows.append(
            {
                "episode_index": e,
                "tasks": ["pick"],
                "length": length,
                "data/chunk_index": 0,
                "data/file_index": 0,
                "dataset_from_index": gi,
                "dataset_to_index": gi + length,
                "meta/episodes/chunk_index": 0,
                "meta/episodes/file_index": 0,
            }
        )
        gi += length
    arrays = {}
    features: dict[str, dict] = {
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        "index": {"dtype": "int64", "shape": [1], "names": None},
        "task_index": {"dtype": "int64", "shape": [1], "names": None},
    }
    for k, vals in cols.items():
        if k in vec_keys and vals and isinstance(vals[0], list):
            width = len(vals[0])
            typ = pa.list_(pa.float32(), width) if fixed_size else pa.list_(pa.float32())
            arrays[k] = pa.array(vals, type=typ)
            kn = list(names) if width == n else [f"{k}_{j}" for j in range(width)]
            features[k] = {"dtype": "float32", "shape": [width], "names": kn}
        elif k in vec_keys:
            arrays[k] = pa.array(vals, type=pa.float32())
            features[k] = {"dtype": "float32", "shape": [1], "names": None}
        else:
            arrays[k] = pa.array(vals)
    if extra_features:
        features.update(extra_features)
    table = pa.table(arrays)
    data_dir = root / "data" / "chunk-000"
    data_dir.mkdir(parents=True, exist_ok=True)
    if rows_per_file:
        for fi, start in enumerate(range(0, table.num_rows, rows_per_file)):
            pq.write_table(table.slice(start, rows_per_file), data_dir / f"file-{fi:03d}.parquet")
    else:
        pq.write_table(table, data_dir / "file-000.parquet")
    meta = root / "meta" / "episodes" / "chunk-000"
    meta.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(ep_rows), meta / "file-000.parquet")
    info = {
        "codebase_version": version,
        "robot_type": robot_type,
        "fps": fps,
        "total_episodes": len(episodes),
        "total_frames": gi,
        "total_tasks": 1,
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": None,
        "splits": {"train": f"0:{len(episodes)}"},
        "features": features,
    }
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2))
    pq.write_table(pa.table({"task_index": [0], "task": ["pick"]}), root / "meta" / "tasks.parquet")
    return root


SO101_JOINTS = """[joints.shoulder_pan]
recorded = "shoulder_pan.pos"
unit = "deg"
[joints.shoulder_lift]
recorded = "shoulder_lift.pos"
unit = "deg"
[joints.elbow_flex]
recorded = "elbow_flex.pos"
unit = "deg"
[joints.wrist_flex]
recorded = "wrist_flex.pos"
unit = "deg"
[joints.wrist_roll]
recorded = "wrist_roll.pos"
unit = "deg"
[joints.gripper]
recorded = "gripper.pos"
unit = "pct"
range_rad = [-0.174533, 1.7453292]
gripper = true
"""
"""The SO-101 joint map as LeRobot records it: body joints in degrees, gripper 0..100."""

SO101_RIG = (
    """
name = "test-so101"
[model]
path = "{model}"
ee_site = "gripperframe"
[control]
dt_s = 0.0333333
"""
    + SO101_JOINTS
)


def write_so101_info(ds: Path, fps: int = 30) -> Path:
    """A dataset folder holding only ``meta/info.json`` of an SO-101 follower at ``fps``
    (state and action named ``SO101_NAMES``): what ``simgap init`` reads first."""
    (ds / "meta").mkdir(parents=True)
    state = {"dtype": "float32", "shape": [6], "names": SO101_NAMES}
    (ds / "meta" / "info.json").write_text(
        json.dumps(
            {
                "codebase_version": "v3.0",
                "robot_type": "so101_follower",
                "fps": fps,
                "features": {"action": state, "observation.state": state},
            }
        )
    )
    return ds


def write_rig(folder: Path, model: str | Path, extra: str = "") -> Path:
    """Write a minimal SO-101 rig.toml (degrees, gripper in percent) plus ``extra`` TOML."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rig.toml"
    path.write_text(SO101_RIG.format(model=str(model)) + extra)
    return path
