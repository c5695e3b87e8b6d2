"""Frame readers: a frames folder (format item 6) and LeRobot v3 image / video features."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.frames import load_frames, read_dataset_frames, read_frames_folder
from simgap.rig import load_rig
from simgap.series import Frames
from tests._twin import RECORDED, write_rig
from tests.factories import write_v3_dataset


def _png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def _folder(
    root: Path,
    n: int = 3,
    size: tuple[int, int] = (96, 96),
    extra_png: bool = False,
    label: str = "start",
) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (n, *size, 3)).astype(np.uint8)
    vals = rng.uniform(-30, 30, (n, 6))
    vals[:, 5] = rng.uniform(0, 100, n)
    folder = root / "frames"
    folder.mkdir(parents=True)
    with (folder / "index.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "episode", "frame_index", "recording", "pose_label", *RECORDED])
        for i in range(n):
            (folder / f"{i}.png").write_bytes(_png(imgs[i]))
            w.writerow(
                [f"{i}.png", 0, i, "s1" if i < 2 else "s2", label if i == 0 else "", *vals[i]]
            )
    if extra_png:
        (folder / "stray.png").write_bytes(_png(imgs[0]))
    return folder, imgs, vals


def test_folder_reads_images_and_converts_joints(tmp_path: Path, demo_model: Path) -> None:
    folder, imgs, vals = _folder(tmp_path)
    rig = load_rig(write_rig(tmp_path, demo_model, 'frames = "frames"'))
    fs = load_frames(rig)
    np.testing.assert_array_equal(fs.frames.images, imgs)
    np.testing.assert_allclose(fs.frames.q[:, :5], np.deg2rad(vals[:, :5]))
    lo, hi = -0.174533, 1.7453292
    np.testing.assert_allclose(fs.frames.q[:, 5], lo + vals[:, 5] / 100 * (hi - lo))
    assert fs.recording == ("s1", "s1", "s2") and fs.pose_label == ("start", "", "")


def test_pngs_the_index_does_not_name_are_ignored(tmp_path: Path, demo_model: Path) -> None:
    folder, _, _ = _folder(tmp_path, extra_png=True)
    (folder / "thumbs").mkdir()
    (folder / "thumbs" / "0.png").write_bytes((folder / "0.png").read_bytes()[:20])  # broken
    rig = load_rig(write_rig(tmp_path, demo_model))
    fs = read_frames_folder(folder, rig)
    assert fs.frames.images.shape[0] == 3  # the stray and the thumbnail are not frames
    index = folder / "index.csv"
    lines = index.read_text().splitlines()
    index.write_text("\n".join([*lines, lines[1]]) + "\n")  # the first frame named twice
    with pytest.raises(InputError, match="each PNG named once"):
        read_frames_folder(folder, rig)


def test_image_size_must_match_the_camera(tmp_path: Path, demo_model: Path) -> None:
    folder, _, _ = _folder(tmp_path, size=(48, 64))
    rig = load_rig(write_rig(tmp_path, demo_model))
    with pytest.raises(InputError, match=r"96 x 96 px.*got 48 x 64 px"):
        read_frames_folder(folder, rig)


def test_bad_label_and_missing_column(tmp_path: Path, demo_model: Path) -> None:
    folder, _, _ = _folder(tmp_path, label="home")
    rig = load_rig(write_rig(tmp_path, demo_model))
    with pytest.raises(InputError, match="rest, start or empty"):
        read_frames_folder(folder, rig)
    text = (folder / "index.csv").read_text().replace("pose_label", "pose")
    (folder / "index.csv").write_text(text)
    with pytest.raises(NameNotFoundError, match="pose_label"):
        read_frames_folder(folder, rig)


def test_frames_value_refuses_mismatched_rows() -> None:
    with pytest.raises(InputError, match="one joint-angle row per frame"):
        Frames(
            images=np.zeros((3, 4, 4, 3), np.uint8),
            q=np.zeros((2, 6)),
            joint_names=tuple("abcdef"),
            episode=np.zeros(3),
            frame_index=np.arange(3),
        )


def _dataset(root: Path, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    state = rng.uniform(-20, 20, (n, 6)).astype(np.float32)
    write_v3_dataset(root, [{"observation.state": state, "action": state}])
    imgs = rng.integers(0, 256, (n, 96, 96, 3)).astype(np.uint8)
    return state, imgs


def test_lerobot_image_feature(tmp_path: Path, demo_model: Path) -> None:
    root = tmp_path / "ds"
    state, imgs = _dataset(root)
    path = root / "data/chunk-000/file-000.parquet"
    table = pq.read_table(path)
    col = pa.array(
        [{"bytes": _png(im), "path": None} for im in imgs],
        type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
    )
    pq.write_table(table.append_column("observation.images.wrist", col), path)
    info = root / "meta/info.json"
    import json

    meta = json.loads(info.read_text())
    meta["features"]["observation.images.wrist"] = {
        "dtype": "image",
        "shape": [96, 96, 3],
        "names": ["height", "width", "channel"],
    }
    info.write_text(json.dumps(meta))
    rig = load_rig(write_rig(tmp_path, demo_model))
    fs = read_dataset_frames(root, rig, camera_key="observation.images.wrist")
    np.testing.assert_array_equal(fs.frames.images, imgs)
    np.testing.assert_allclose(fs.frames.q[:, :5], np.deg2rad(state[:, :5]), rtol=1e-6)


def test_lerobot_video_feature_seeks_each_episode(tmp_path: Path, demo_model: Path) -> None:
    av = pytest.importorskip("av")
    import json

    root = tmp_path / "ds"
    rng = np.random.default_rng(2)
    fps = 10
    eps = [rng.uniform(-20, 20, (3, 6)).astype(np.float32) for _ in range(2)]
    write_v3_dataset(root, [{"observation.state": e, "action": e} for e in eps], fps=fps)
    colours = [
        (200, 30, 30),
        (30, 200, 30),
        (30, 30, 200),
        (200, 200, 30),
        (30, 200, 200),
        (200, 30, 200),
    ]
    vpath = root / "videos/observation.images.wrist/chunk-000/file-000.mp4"
    vpath.parent.mkdir(parents=True)
    with av.open(str(vpath), "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 96, 96, "yuv420p"
        for c in colours:
            img = np.zeros((96, 96, 3), np.uint8) + np.array(c, np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    ep_path = root / "meta/episodes/chunk-000/file-000.parquet"
    rows = pq.read_table(ep_path).to_pylist()
    for i, r in enumerate(rows):
        r["videos/observation.images.wrist/chunk_index"] = 0
        r["videos/observation.images.wrist/file_index"] = 0
        r["videos/observation.images.wrist/from_timestamp"] = 3 * i / fps
        r["videos/observation.images.wrist/to_timestamp"] = 3 * (i + 1) / fps
    pq.write_table(pa.Table.from_pylist(rows), ep_path)
    info = root / "meta/info.json"
    meta = json.loads(info.read_text())
    meta["video_path"] = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    meta["features"]["observation.images.wrist"] = {
        "dtype": "video",
        "shape": [96, 96, 3],
        "names": ["height", "width", "channel"],
    }
    info.write_text(json.dumps(meta))
    rig = load_rig(write_rig(tmp_path, demo_model))
    fs = read_dataset_frames(root, rig, camera_key="observation.images.wrist")
    assert fs.n_frames == 6
    means = fs.frames.images.reshape(6, -1, 3).mean(axis=1)
    np.testing.assert_allclose(means, np.array(colours, float), atol=12)
    np.testing.assert_allclose(fs.frames.q[3:, :5], np.deg2rad(eps[1][:, :5]), rtol=1e-6)
    # one frame too few in the video: the count no longer matches the joint rows
    rows[1]["videos/observation.images.wrist/from_timestamp"] = 0.45
    pq.write_table(pa.Table.from_pylist(rows), ep_path)
    with pytest.raises(InputError, match="one video frame per joint-angle row"):
        read_dataset_frames(root, rig, camera_key="observation.images.wrist")
