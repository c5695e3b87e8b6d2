"""Writers for the demo bench's evidence files, in the formats the readers take.

LeRobot v3 datasets (pyarrow, the real v3 layout), small TOML protocol manifests, CSV and
JSON Lines. Everything is written atomically.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from simgap.outputs import atomic_write_bytes, atomic_write_text
from simgap.safe_names import checked_toml, toml_key, toml_string

DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def write_lerobot_v3(
    root: Path,
    episodes: Sequence[Mapping[str, Any]],
    *,
    fps: int,
    names: Sequence[str],
    task: str,
    robot_type: str,
    image_key: str | None = None,
    image_shape: Sequence[int] = (96, 96, 3),
) -> Path:
    """Write a LeRobot v3 dataset (one data file, one episodes file, info, tasks).

    Args:
        root: dataset folder.
        episodes: per episode, ``action`` and ``observation.state`` (T, n) in recorded units,
            optional ``observation.object_pos`` (T, 3) [m] (in every episode or in none)
            and, when ``image_key`` is given,
            ``images``: a list of T PNG byte strings.
        fps: frames per second; ``timestamp = frame_index / fps`` as LeRobot writes it.
        names: element names of ``action`` and ``observation.state``.
        task: the task string of every episode.
        robot_type: ``robot_type`` in ``info.json``.
        image_key: feature key of the camera (``observation.images.<cam>``), or None.
        image_shape: (H, W, C) of the frames.
    """
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "action",
            "observation.state",
            "observation.object_pos",
            "timestamp",
            "frame_index",
            "episode_index",
            "index",
            "task_index",
        )
    }
    if image_key:
        cols[image_key] = []
    ep_rows = []
    gi = 0
    for e, ep in enumerate(episodes):
        n = len(ep["action"])
        for i in range(n):
            cols["action"].append([float(x) for x in ep["action"][i]])
            cols["observation.state"].append([float(x) for x in ep["observation.state"][i]])
            if "observation.object_pos" in ep:
                cols["observation.object_pos"].append(
                    [float(x) for x in ep["observation.object_pos"][i]]
                )
            cols["timestamp"].append(i / fps)
            cols["frame_index"].append(i)
            cols["episode_index"].append(e)
            cols["index"].append(gi + i)
            cols["task_index"].append(0)
            if image_key:
                cols[image_key].append({"bytes": ep["images"][i], "path": None})
        ep_rows.append(
            {
                "episode_index": e,
                "tasks": [task],
                "length": n,
                "data/chunk_index": 0,
                "data/file_index": 0,
                "dataset_from_index": gi,
                "dataset_to_index": gi + n,
                "meta/episodes/chunk_index": 0,
                "meta/episodes/file_index": 0,
            }
        )
        gi += n
    nj = len(names)
    obj = bool(cols["observation.object_pos"])
    arrays: dict[str, pa.Array] = {
        "action": pa.array(cols["action"], type=pa.list_(pa.float32(), nj)),
        "observation.state": pa.array(cols["observation.state"], type=pa.list_(pa.float32(), nj)),
        **(
            {
                "observation.object_pos": pa.array(
                    cols["observation.object_pos"], type=pa.list_(pa.float32(), 3)
                )
            }
            if obj
            else {}
        ),
        "timestamp": pa.array(cols["timestamp"], type=pa.float32()),
        "frame_index": pa.array(cols["frame_index"], type=pa.int64()),
        "episode_index": pa.array(cols["episode_index"], type=pa.int64()),
        "index": pa.array(cols["index"], type=pa.int64()),
        "task_index": pa.array(cols["task_index"], type=pa.int64()),
    }
    features: dict[str, Any] = {
        "action": {"dtype": "float32", "shape": [nj], "names": list(names)},
        "observation.state": {"dtype": "float32", "shape": [nj], "names": list(names)},
        **(
            {"observation.object_pos": {"dtype": "float32", "shape": [3], "names": ["x", "y", "z"]}}
            if obj
            else {}
        ),
    }
    if image_key:
        arrays[image_key] = pa.array(
            cols[image_key], type=pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        )
        features[image_key] = {
            "dtype": "image",
            "shape": list(image_shape),
            "names": ["height", "width", "channels"],
        }
    for k in ("timestamp",):
        features[k] = {"dtype": "float32", "shape": [1], "names": None}
    for k in ("frame_index", "episode_index", "index", "task_index"):
        features[k] = {"dtype": "int64", "shape": [1], "names": None}
    atomic_write_bytes(
        root / DATA_PATH.format(chunk_index=0, file_index=0), _parquet_bytes(pa.table(arrays))
    )
    atomic_write_bytes(
        root / "meta/episodes/chunk-000/file-000.parquet",
        _parquet_bytes(pa.Table.from_pylist(ep_rows)),
    )
    atomic_write_bytes(
        root / "meta/tasks.parquet",
        _parquet_bytes(pa.table({"task_index": pa.array([0], pa.int64()), "task": [task]})),
    )
    info = {
        "codebase_version": "v3.0",
        "robot_type": robot_type,
        "fps": fps,
        "total_episodes": len(episodes),
        "total_frames": gi,
        "total_tasks": 1,
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "data_path": DATA_PATH,
        "video_path": None,
        "splits": {"train": f"0:{len(episodes)}"},
        "features": features,
    }
    atomic_write_text(root / "meta/info.json", json.dumps(info, indent=2) + "\n")
    return root


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(round(float(v), 6))
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def write_manifest_toml(
    path: Path,
    tables: Mapping[str, Mapping[str, Any]],
    trials: Sequence[Mapping[str, Any]],
    header: str = "",
) -> Path:
    """Write a protocol manifest: plain tables, then ``[[trials]]``."""
    lines = [f"# {h}" for h in header.splitlines()] if header else []
    for name, table in tables.items():
        lines.append(f"[{toml_key(name)}]")
        lines.extend(f"{toml_key(k)} = {_toml_value(v)}" for k, v in table.items())
        lines.append("")
    for trial in trials:
        lines.append("[[trials]]")
        lines.extend(f"{toml_key(k)} = {_toml_value(v)}" for k, v in trial.items())
        lines.append("")
    text = "\n".join(lines)
    checked_toml(text, path.name)  # parsed before it is written
    return atomic_write_text(path, text)


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    """Write a CSV (floats with 7 significant digits)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([f"{x:.7g}" if isinstance(x, (float, np.floating)) else x for x in row])
    return atomic_write_text(path, buf.getvalue())


def write_jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    """Write JSON Lines."""
    return atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in records))
