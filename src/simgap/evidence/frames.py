"""Camera frames with the joint angles at which each was taken.

Two sources:

- A frames folder (format item 6): ``index.csv`` with columns ``file, episode, frame_index,
  recording, pose_label, <recorded joint names...>`` and the PNG files it names, relative to
  the folder. ``pose_label`` is ``rest``, ``start`` or empty; ``recording`` names a session.
- A LeRobot v3 dataset: an image feature (a struct column ``{bytes, path}`` of PNGs in the
  data parquet) or a video feature (mp4 decoded with PyAV, the ``video`` extra), each frame
  paired with ``observation.state`` of the same row.

Joint values are converted to model radians through the rig's joint map.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from simgap.errors import InputError, MissingExtraError, NameNotFoundError, found_instead
from simgap.evidence.csv_table import read_csv_table
from simgap.evidence.lerobot import (
    INFO_PATH,
    LeRobotDataset,
    joint_columns,
    read_lerobot_dataset,
)
from simgap.rig import Rig
from simgap.series import Frames
from simgap.values.frames import FrameSet

INDEX_COLUMNS = ("file", "episode", "frame_index", "recording", "pose_label")
POSE_LABELS = ("rest", "start", "")


def _decode_png(data: bytes, where: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError) as e:
        raise InputError(file=where, expected="a PNG image", got=str(e)) from e


def _check_sizes(images: Sequence[np.ndarray], names: Sequence[str], rig: Rig) -> None:
    want = rig.camera.render_resolution if rig.camera is not None else images[0].shape[:2]
    for img, name in zip(images, names, strict=True):
        if tuple(img.shape[:2]) != tuple(want):
            raise InputError(
                file=name,
                field="image size",
                expected=f"{want[0]} x {want[1]} px (height x width, camera.render_resolution"
                f"{' of ' + rig.camera.name if rig.camera else ''})",
                got=f"{img.shape[0]} x {img.shape[1]} px",
                fix="record at the declared size or set camera.render_resolution = "
                f"[{img.shape[0]}, {img.shape[1]}] in rig.toml",
            )


def read_frames_folder(folder: str | Path, rig: Rig) -> FrameSet:
    """Read a frames folder (``index.csv`` + PNGs).

    Raises:
        InputError: no index.csv, a missing column or file, a number that is not one, an
            unknown pose label, an image size other than the camera's, or a file named in
            two rows. PNG files the index does not name are ignored.
    """
    folder = Path(folder)
    index = folder / "index.csv"
    cols, rows = read_csv_table(
        index,
        what="a frames index (index.csv)",
        fix="point evidence.frames at the folder holding index.csv",
    )
    for c in list(INDEX_COLUMNS) + [j.recorded for j in rig.joints]:
        if c not in cols:
            raise NameNotFoundError("column", c, cols, file=index)
    # The index is the list of frames: PNGs it does not name (thumbnails, exports) are not
    # frames and are ignored; a file named twice is an error.
    named: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r["file"] in named:
            raise InputError(
                file=index,
                field="file",
                expected="each PNG named once",
                got=f"{r['file']!r} in rows {named[r['file']] + 1} and {i + 1}",
                fix="list every frame exactly once in index.csv",
            )
        named[r["file"]] = i
    if not rows:
        raise InputError(file=index, expected="at least one frame", got="no rows")
    images, names = [], []
    q = np.empty((len(rows), len(rig.joints)))
    ep, fi, rec, lab = [], [], [], []
    for i, r in enumerate(rows):
        path = folder / r["file"]
        if not path.is_file():
            raise InputError(
                file=index,
                field="file",
                expected="a PNG file in the folder",
                got=f"{r['file']!r} (row {i + 1}) does not exist",
            )
        images.append(_decode_png(path.read_bytes(), str(path)))
        names.append(str(path))
        try:
            ep.append(int(r["episode"] or 0))
            fi.append(int(r["frame_index"] or i))
            for k, jm in enumerate(rig.joints):
                q[i, k] = float(jm.unit.to_rad(float(r[jm.recorded])))
            if not np.isfinite(q[i]).all():
                raise ValueError(f"a joint angle that is not finite: {q[i].tolist()}")
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(
                file=index, field=f"row {i + 1}", expected="numbers", got=str(e)
            ) from None
        label = (r["pose_label"] or "").strip()
        if label not in POSE_LABELS:
            raise InputError(
                file=index,
                field="pose_label",
                expected="rest, start or empty",
                got=f"{label!r} (row {i + 1})",
            )
        lab.append(label)
        rec.append((r["recording"] or "").strip())
    _check_sizes(images, names, rig)
    frames = Frames(
        images=np.stack(images),
        q=q,
        joint_names=rig.joint_names,
        episode=np.array(ep),
        frame_index=np.array(fi),
        source=str(folder),
    )
    return FrameSet(frames=frames, recording=tuple(rec), pose_label=tuple(lab))


def _image_column(ds: LeRobotDataset, key: str, rows: np.ndarray) -> list[np.ndarray]:
    col = ds.table.column(key).to_pylist()
    out = []
    for i in rows:
        cell = col[int(i)]
        if isinstance(cell, dict) and cell.get("bytes"):
            out.append(_decode_png(cell["bytes"], f"{ds.root} row {i}"))
        elif isinstance(cell, dict) and cell.get("path"):
            p = ds.root / str(cell["path"])
            out.append(_decode_png(p.read_bytes(), str(p)))
        else:
            raise InputError(
                file=ds.root,
                field=key,
                expected="an image {bytes, path}",
                got=f"{cell!r:.60} on row {i}",
            )
    return out


def _video_frames(ds: LeRobotDataset, key: str, rows: np.ndarray) -> list[np.ndarray]:
    try:
        import av
    except ImportError as exc:
        raise MissingExtraError("video", "av", "Decoding video frames") from exc
    tmpl = str(
        ds.info.get("video_path")
        or "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    )
    eps = {int(e["episode_index"]): e for e in ds.episodes}
    ts = ds.table.column("timestamp").to_numpy().astype(float)
    epi = ds.table.column("episode_index").to_numpy()
    tol = 0.5 / ds.fps
    out: dict[int, np.ndarray] = {}
    by_ep: dict[int, list[int]] = {}
    for i in rows:
        by_ep.setdefault(int(epi[int(i)]), []).append(int(i))
    for e, idx in by_ep.items():
        if e not in eps:
            raise NameNotFoundError(
                "episode in meta/episodes", str(e), [str(k) for k in eps], file=ds.root
            )
        meta = eps[e]
        try:
            chunk = int(meta[f"videos/{key}/chunk_index"])
            fidx = int(meta[f"videos/{key}/file_index"])
            from_ts = float(meta[f"videos/{key}/from_timestamp"])
        except KeyError as err:
            raise InputError(
                file=ds.root / "meta/episodes",
                field=str(err.args[0]),
                expected="the video location of each episode",
                got="nothing",
            ) from None
        path = ds.root / tmpl.format(video_key=key, chunk_index=chunk, file_index=fidx)
        if not path.is_file():
            raise InputError(
                file=path, expected="the episode's video file", got=found_instead(path)
            )
        wanted = sorted(idx, key=lambda r: ts[r])
        targets = [from_ts + ts[r] for r in wanted]
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            tb = float(stream.time_base) if stream.time_base else 1.0 / ds.fps
            container.seek(max(0, int((targets[0] - tol) / tb)), stream=stream, backward=True)
            k = 0
            for frame in container.decode(stream):
                t = float(frame.pts * tb) if frame.pts is not None else float(frame.time or 0)
                while k < len(targets) and t > targets[k] + tol:
                    k += 1  # a wanted frame was skipped: reported below
                if k < len(targets) and abs(t - targets[k]) <= tol:
                    out[wanted[k]] = frame.to_ndarray(format="rgb24")
                    k += 1
                if k >= len(targets):
                    break
    missing = [int(r) for r in rows if int(r) not in out]
    if missing:
        raise InputError(
            file=ds.root,
            field=key,
            expected=f"one video frame per joint-angle row ({len(rows)} rows)",
            got=f"{len(rows) - len(missing)} frames decoded; none at rows {missing[:5]}",
            fix="check the episode's from_timestamp and the video's length",
        )
    return [out[int(r)] for r in rows]


def read_dataset_frames(
    root: str | Path,
    rig: Rig,
    *,
    camera_key: str | None = None,
    state_key: str = "observation.state",
    every: int = 1,
) -> FrameSet:
    """Frames of a LeRobot v3 dataset's camera with ``observation.state`` at each frame.

    Args:
        root: dataset folder.
        rig: the rig (joint map; ``camera.recorded`` names the feature by default).
        camera_key: the image or video feature (default ``rig.camera.recorded``).
        state_key: the joint-state feature.
        every: keep every n-th row.
    """
    ds = read_lerobot_dataset(root)
    key = camera_key or (rig.camera.recorded if rig.camera else None)
    if key is None:
        keys = [k for k, f in ds.features.items() if f.get("dtype") in ("image", "video")]
        if len(keys) != 1:
            raise InputError(
                file=rig.source,
                field="camera.recorded",
                expected="the camera's feature key",
                got="nothing",
                fix=f"set camera.recorded to one of: {', '.join(keys) or 'none'}",
            )
        key = keys[0]
    if key not in ds.features:
        raise NameNotFoundError(
            "feature", key, ds.features, file=ds.root / INFO_PATH, field="camera.recorded"
        )
    feat = ds.features[key]
    q = joint_columns(ds, state_key, rig)
    rows = np.arange(0, ds.table.num_rows, max(1, int(every)))
    dtype = feat.get("dtype")
    if dtype == "image":
        if key not in ds.table.column_names:
            raise InputError(
                file=ds.root,
                field=key,
                expected="an image column in the data",
                got="no such column",
            )
        images = _image_column(ds, key, rows)
    elif dtype == "video":
        images = _video_frames(ds, key, rows)
    else:
        raise InputError(
            file=ds.root / INFO_PATH,
            field=f"features.{key}.dtype",
            expected="image or video",
            got=dtype,
        )
    if len(images) != len(rows):
        raise InputError(
            file=ds.root, field=key, expected=f"{len(rows)} frames", got=f"{len(images)}"
        )
    _check_sizes(images, [f"{ds.root}:{key}[{r}]" for r in rows], rig)
    epi = ds.table.column("episode_index").to_numpy()[rows]
    fr = ds.table.column("frame_index").to_numpy()[rows]
    frames = Frames(
        images=np.stack(images),
        q=q[rows],
        joint_names=rig.joint_names,
        episode=epi,
        frame_index=fr,
        source=str(ds.root),
    )
    return FrameSet(
        frames=frames,
        recording=tuple(f"episode {int(e)}" for e in epi),
        pose_label=tuple("" for _ in rows),
    )


def load_frames(rig: Rig) -> FrameSet:
    """Loader for ``EvidenceBundle.get``: ``evidence.frames`` if set, else the dataset."""
    if rig.evidence.frames is not None:
        return read_frames_folder(rig.evidence.frames, rig)
    if rig.evidence.dataset is not None and rig.camera is not None and rig.camera.recorded:
        return read_dataset_frames(rig.evidence.dataset, rig, every=10)
    raise InputError(
        file=rig.source,
        field="evidence.frames",
        expected="a frames folder or a dataset with camera.recorded",
        got="nothing",
    )
