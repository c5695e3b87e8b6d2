"""LeRobot v3 datasets, read with pyarrow alone (no torch, no lerobot).

Layout (LeRobot ``CODEBASE_VERSION = "v3.0"``)::

    meta/info.json                                          fps, features, paths
    meta/episodes/chunk-XXX/file-XXX.parquet                one row per episode
    data/chunk-XXX/file-XXX.parquet                         many episodes per file
    videos/<key>/chunk-XXX/file-XXX.mp4                     (video features)

Vector features (``observation.state``, ``action``) are fixed-size or plain list columns whose
element names are in ``info["features"][key]["names"]``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from simgap.errors import InputError, NameNotFoundError, found_instead
from simgap.evidence._checks import (
    MAX_FPS,
    check_lerobot_info,
    check_lerobot_table,
    lerobot_fps,
)
from simgap.rig import Rig
from simgap.rig.checks import DATASET_INFO
from simgap.series import Trajectory
from simgap.validate import read_json

INFO_PATH = DATASET_INFO
EPISODES_GLOB = "meta/episodes/chunk-*/file-*.parquet"
DATA_GLOB = "data/chunk-*/file-*.parquet"
DEFAULT_DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
DEFAULT_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
CODEBASE_VERSION = "v3.0"
LEROBOT_TOLERANCE_S = 1e-4
"""LeRobot's default ``tolerance_s`` for matching frames to timestamps [s]."""


@dataclass(frozen=True)
class LeRobotDataset:
    """A LeRobot v3 dataset held in memory as one Arrow table.

    Attributes:
        root: dataset folder.
        info: the parsed ``meta/info.json``.
        fps: frames per second [Hz].
        features: feature name -> feature entry (``dtype``, ``shape``, ``names``).
        table: every data row, sorted by global ``index``.
        episodes: one dict per episode (``episode_index``, ``length``, and the rest of the
            episode metadata row), in episode order.
    """

    root: Path
    info: Mapping[str, Any]
    fps: float
    features: Mapping[str, Any]
    table: pa.Table = field(repr=False)
    episodes: tuple[Mapping[str, Any], ...] = ()

    @property
    def episode_indices(self) -> tuple[int, ...]:
        """Episode indices present in the data, ascending."""
        col = self.table.column("episode_index").to_numpy()
        return tuple(int(e) for e in np.unique(col))

    def names(self, key: str) -> list[str]:
        """Element names of a vector feature; a miss lists the features."""
        feat = self._feature(key)
        names = feat.get("names")
        if isinstance(names, Mapping):  # older exports: {"motors": [...]}
            names = next(iter(names.values()))
        shape = feat.get("shape") or [1]
        if not names:
            return [f"{key}[{i}]" for i in range(int(np.prod(shape)))]
        return [str(n) for n in names]

    def _feature(self, key: str) -> Mapping[str, Any]:
        if key not in self.features:
            raise NameNotFoundError(
                "feature", key, self.features, file=self.root / INFO_PATH, field="features"
            )
        return self.features[key]

    def _rows(self, episode: int | None) -> pa.Table:
        if episode is None:
            return self.table
        mask = pa.compute.equal(self.table.column("episode_index"), episode)
        rows = self.table.filter(mask)
        if rows.num_rows == 0:
            raise NameNotFoundError(
                "episode", str(episode), [str(e) for e in self.episode_indices], file=self.root
            )
        return rows

    def vector(self, key: str, episode: int | None = None) -> np.ndarray:
        """A feature's values as a float array, shape (T, n) (scalars give (T, 1))."""
        self._feature(key)
        rows = self._rows(episode)
        if key not in rows.column_names:
            raise InputError(
                file=self.root,
                field=key,
                expected="a data column for this feature",
                got="no such column in data/*.parquet",
                fix="video features are read with simgap's frame readers",
            )
        col = rows.column(key).combine_chunks()
        n = rows.num_rows
        if (
            pa.types.is_list(col.type)
            or pa.types.is_fixed_size_list(col.type)
            or pa.types.is_large_list(col.type)
        ):
            flat = col.flatten().to_numpy(zero_copy_only=False).astype(float)
            if n and flat.size % n:
                raise InputError(
                    file=self.root,
                    field=key,
                    expected="equal-length vectors",
                    got=f"{flat.size} values over {n} rows",
                )
            return flat.reshape(n, -1 if n else 0)
        return col.to_numpy(zero_copy_only=False).astype(float).reshape(n, 1)

    def column(self, key: str, episode: int | None = None) -> np.ndarray:
        """A scalar column (timestamp, frame_index, ...) as a 1-D array."""
        rows = self._rows(episode)
        if key not in rows.column_names:
            raise NameNotFoundError("column", key, rows.column_names, file=self.root)
        return rows.column(key).to_numpy()

    def named(self, key: str, episode: int | None = None) -> dict[str, np.ndarray]:
        """A vector feature split into its named elements: name -> shape (T,)."""
        arr = self.vector(key, episode)
        names = self.names(key)
        if arr.shape[1] != len(names):
            raise InputError(
                file=self.root / INFO_PATH,
                field=f"features.{key}.names",
                expected=f"{arr.shape[1]} names (one per element)",
                got=f"{len(names)} names",
            )
        return {n: arr[:, i] for i, n in enumerate(names)}


def _read_parquets(root: Path, pattern: str, what: str) -> pa.Table:
    files = sorted(root.glob(pattern))
    if not files:
        raise InputError(
            file=root,
            field=pattern,
            expected=f"{what} parquet files",
            got="none",
            fix="point at the dataset root (the folder with meta/)",
        )
    try:
        tables = [pq.read_table(f) for f in files]
        return pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:  # unreadable, 2 schemas
        raise InputError(
            file=files[0].parent,
            expected=f"readable {what} parquet files of one schema",
            got=str(e)[:300],
        ) from e


def dataset_fps(root: Path | None) -> float | None:
    """A LeRobot dataset's ``fps`` from ``meta/info.json`` (None when absent or unreadable:
    the dataset's own reader reports those problems)."""
    if root is None:
        return None
    try:
        info = json.loads((Path(root) / "meta" / "info.json").read_text(encoding="utf-8"))
        fps = info.get("fps") if isinstance(info, Mapping) else None
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(fps, bool) or not isinstance(fps, (int, float)):
        return None
    ok = math.isfinite(fps) and 0 < fps <= MAX_FPS
    return float(fps) if ok else None


def check_dataset_folder(root: Path, fix: str = "pass the dataset's root folder") -> None:
    """Refuse a path that is not a LeRobot dataset's root folder, saying what it is (a
    file, such as the dataset's own ``meta/info.json``; a folder without one; nothing) and,
    where the path lies inside a dataset, that dataset's root.

    Raises:
        InputError: naming ``root``, what stands there, and the root folder to pass.
    """
    if (root / INFO_PATH).is_file():
        return
    above = next((p for p in root.parents if (p / INFO_PATH).is_file()), None)
    got = found_instead(root, "folder")
    if root.is_dir():
        got = f"a folder without {INFO_PATH}"
    raise InputError(
        file=root,
        expected=f"a LeRobot dataset's root folder (holding {INFO_PATH})",
        got=got,
        fix=f"{fix}, {above}" if above is not None else f"{fix}: the one holding meta/ and data/",
    )


def read_lerobot_dataset(root: str | Path) -> LeRobotDataset:
    """Open a LeRobot v3 dataset.

    Raises:
        InputError: the folder lacks ``meta/info.json``, the ``codebase_version`` is not v3,
            ``fps`` is not positive, or the parquet files are missing or unreadable.
    """
    root = Path(root)
    check_dataset_folder(root)
    info_path = root / INFO_PATH
    info = read_json(info_path, "a LeRobot dataset's meta/info.json")
    check_lerobot_info(info, info_path)
    version = str(info.get("codebase_version", ""))
    if not version.startswith("v3"):
        raise InputError(
            file=info_path,
            field="codebase_version",
            expected="v3.x (LeRobot dataset v3)",
            got=version or "nothing",
            fix="convert the dataset with LeRobot's v2.1-to-v3.0 conversion script "
            "(lerobot.datasets.v30.convert_dataset_v21_to_v30)",
        )
    fps = lerobot_fps(info, info_path)
    features = info.get("features")
    if not isinstance(features, Mapping) or not features:
        raise InputError(file=info_path, field="features", expected="a feature table", got=features)
    table = _read_parquets(root, DATA_GLOB, "data")
    for col in ("episode_index", "index"):
        if col not in table.column_names:
            raise InputError(
                file=root / "data",
                field=col,
                expected="this column in the data",
                got=f"columns {table.column_names}",
            )
    check_lerobot_table(table, root)
    table = table.sort_by("index")
    episodes: tuple[Mapping[str, Any], ...] = ()
    if list(root.glob(EPISODES_GLOB)):
        ep = _read_parquets(root, EPISODES_GLOB, "episode metadata")
        if "episode_index" not in ep.column_names:
            raise InputError(
                file=root / "meta" / "episodes",
                field="episode_index",
                expected="this column in the episode metadata",
                got=f"columns {ep.column_names}",
            )
        ep = ep.sort_by("episode_index")
        episodes = tuple(ep.to_pylist())
    return LeRobotDataset(
        root=root, info=info, fps=float(fps), features=features, table=table, episodes=episodes
    )


def joint_columns(
    ds: LeRobotDataset,
    key: str,
    rig: Rig,
    episode: int | None = None,
) -> np.ndarray:
    """A vector feature's joint channels in model radians, in the rig's joint order,
    shape (T, J); ``episode=None`` takes every row. A joint the feature lacks is named with
    the feature's element names."""
    named = ds.named(key, episode)
    out = np.empty((len(next(iter(named.values()))), len(rig.joints)))
    for i, jm in enumerate(rig.joints):
        if jm.recorded not in named:
            raise NameNotFoundError(
                "recorded joint",
                jm.recorded,
                named,
                file=ds.root / INFO_PATH,
                field=f"features.{key}.names",
                where=f"joints.{jm.name}.recorded of {rig.source or 'the rig'}",
            )
        out[:, i] = jm.unit.to_rad(named[jm.recorded])
    return out


def _numbers(ds: LeRobotDataset, name: str, episode: int) -> np.ndarray | None:
    """A scalar column of one episode as finite floats, None when the table lacks it."""
    if name not in ds.table.column_names:
        return None
    col = ds.column(name, episode)
    try:
        out = np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        raise InputError(
            file=ds.root / "data",
            field=name,
            expected="numbers",
            got=f"values of type {np.asarray(col).dtype}",
            fix="pass the dataset as LeRobot wrote it",
        ) from None
    if out.ndim != 1 or not np.all(np.isfinite(out)):
        raise InputError(
            file=ds.root / "data",
            field=name,
            expected="one finite number per frame",
            got="non-finite values" if out.ndim == 1 else f"shape {out.shape}",
            fix="pass the dataset as LeRobot wrote it",
        )
    return out


def episode_times(ds: LeRobotDataset, episode: int) -> np.ndarray:
    """Sample times [s] of one episode, shape (T,): ``frame_index / fps``, the step from
    ``meta/info.json``.

    LeRobot's writer sets ``timestamp = frame_index / fps`` and stores it as float32, so the
    stored steps differ from ``1 / fps`` in the last digits (0.033333302 against 0.033333331)
    and from episode to episode; the step is taken from ``fps`` and the timestamps are only
    checked against it, within ``timestamp_tolerance_s``.

    Raises:
        InputError: a timestamp is further than the tolerance from ``frame_index / fps``.
    """
    frames = _numbers(ds, "frame_index", episode)
    stamps = _numbers(ds, "timestamp", episode)
    if frames is None:
        if stamps is None:
            raise InputError(
                file=ds.root / "data",
                field="frame_index",
                expected="a frame_index or timestamp column",
                got="neither",
            )
        frames = np.round((stamps - stamps[0]) * ds.fps)
    t = frames / ds.fps
    if stamps is not None and stamps.size:
        err = np.abs(stamps - t)
        tol = timestamp_tolerance_s(float(np.max(np.abs(stamps))))
        if float(err.max()) > tol:
            i = int(np.argmax(err))
            raise InputError(
                file=ds.root / "data",
                field=f"timestamp (episode {episode}, frame {i})",
                expected=f"frame_index / fps = {t[i]:.6f} s within {tol:.1e} s "
                f"(fps {ds.fps:g} from meta/info.json)",
                got=f"{stamps[i]:.6f} s",
                fix="check meta/info.json's fps: LeRobot writes timestamp = frame_index / fps",
            )
    return t


def timestamp_tolerance_s(t_max_s: float) -> float:
    """How far a stored float32 timestamp may lie from ``frame_index / fps`` [s]: LeRobot's
    own ``tolerance_s`` (1e-4 s), or 4 float32 spacings at the largest time if larger."""
    return max(LEROBOT_TOLERANCE_S, 4.0 * float(np.spacing(np.float32(max(t_max_s, 1.0)))))


def dataset_trajectories(
    ds: LeRobotDataset,
    rig: Rig,
    *,
    command_key: str = "action",
    state_key: str = "observation.state",
) -> list[Trajectory]:
    """One Trajectory per episode: action = command, observation.state = measured.

    Values are converted to model radians through the rig's joint map; joints are in the
    rig's order. Time is ``frame_index / fps`` (``episode_times``), so every episode has the
    step ``1 / fps`` whatever its length; ``meta["dt_s"]`` holds that step.
    """
    trajs = []
    for e in ds.episode_indices:
        trajs.append(
            Trajectory(
                t=episode_times(ds, e),
                q_cmd=joint_columns(ds, command_key, rig, e),
                q=joint_columns(ds, state_key, rig, e),
                joint_names=rig.joint_names,
                episode=e,
                source=str(ds.root),
                meta={"fps": ds.fps, "dt_s": 1.0 / ds.fps},
            )
        )
    return trajs
