"""``simgap appearance`` at the terminal: no numpy warning reaches it (what the warning hid is
a 'not measured' figure in the finding), and a dataset without a camera is said to be one
before any rendering is announced."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.appearance.camera_pose import _median_depth
from simgap.appearance.flags import drift_flag, mismatch_flag, rest_pose_flag
from simgap.cli import _progress, app
from simgap.figures.appearance import ExposureFigures
from simgap.finding import figures_of
from tests._twin import REST, START, Twin, write_frames, write_rig
from tests.factories import SO101_JOINTS, write_v3_dataset

Q2 = START + np.array([0.15, 0.05, -0.05, 0.05, 0.1, -0.1])


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_region_in_no_frame_is_not_measured_and_warns_nothing(
    tmp_path: Path, demo_model: Path, gl_backend: str
) -> None:
    # the rig names no object geom, so the object region has no pixel in any frame: the
    # old branch averaged its NaN colours (numpy's 'Mean of empty slice' on the terminal)
    del gl_backend
    tw = Twin(demo_model)
    write_frames(
        tmp_path / "frames",
        tw,
        [("A", "rest", REST, 1.0), ("A", "start", START, 1.0), ("A", "", Q2, 1.0)],
        0.0,
        seed=4,
    )
    tw.close()
    rig = write_rig(tmp_path, demo_model, 'frames = "frames"')
    rig.write_text(rig.read_text().replace('object_geom = "cube"\n', ""))
    r = CliRunner().invoke(
        app,
        [
            "appearance",
            str(rig),
            "--frames",
            "3",
            "--camera-frames",
            "1",
            "--json",
            str(tmp_path / "a.json"),
        ],
    )
    assert r.exit_code == 0, r.output  # a warning made an error would end in exit 3
    assert "Warning" not in r.output
    found = json.loads((tmp_path / "a.json").read_text())["findings"]
    regions = figures_of(
        next(f for f in found if f["title"] == "Exposure and background"), ExposureFigures
    ).regions
    assert regions["object"].measured is False and regions["object"].real_rgb is None
    assert "not measured" in (regions["object"].note or "")
    assert regions["jaws"].measured is True


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_black_real_region_gives_flags_without_a_warning_or_a_crash() -> None:
    # a gain of 0 (the real jaws black: a covered lens) divided numpy and Python floats
    d = drift_flag([0.0, 0.0, 0.9], [0.1, 0.1, 0.2], ["A", "A", "B"])
    assert d.raised and d.values["between_recordings_fraction"] is None
    assert "unbounded" in d.message
    d = drift_flag([0.0, 0.0, 0.0], [0.1, 0.2, 0.3], ["A", "A", "A"])
    assert not d.raised and d.values["spread_fraction"] == 0.0
    m = mismatch_flag(0.0, by_recording={"A": 0.0, "B": 0.9})
    assert m.raised and "differs by recording" in m.message
    rp = rest_pose_flag(0.0, 0.9, True, True)
    assert rp.raised and rp.values["start_vs_rest_fraction"] is None
    assert rest_pose_flag(0.0, 0.0, True, True).values["start_vs_rest_fraction"] == 0.0


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_no_gripper_depth_in_any_frame_is_nan_without_a_warning() -> None:
    assert math.isnan(_median_depth([float("nan"), float("nan")]))
    assert _median_depth([float("nan"), 0.2, 0.4]) == pytest.approx(0.3)


RIG = (
    """name = "nocam"
[model]
path = "{model}"
[control]
dt_s = 0.0333333
"""
    + SO101_JOINTS
    + """[camera]
name = "wrist_cam"
recorded = "{recorded}"
policy_resolution = [16, 16]
render_resolution = [96, 96]
[evidence]
dataset = "ds"
"""
)


def _rig(tmp_path: Path, demo_model: Path, recorded: str, images: tuple[str, ...] = ()) -> Path:
    zeros = np.zeros((10, 6))
    extra = {
        k: {"dtype": "video", "shape": [96, 96, 3], "names": ["height", "width", "channels"]}
        for k in images
    }
    write_v3_dataset(
        tmp_path / "ds", [{"observation.state": zeros, "action": zeros}], extra_features=extra
    )
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG.format(model=demo_model, recorded=recorded))
    return rig


def test_a_dataset_without_a_camera_says_so_before_rendering(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(_progress._state, "quiet", False)
    rig = _rig(tmp_path, demo_model, "observation.images.wrist")
    r = CliRunner().invoke(app, ["appearance", str(rig)])
    assert r.exit_code == 2, r.output
    err = " ".join(r.stderr.split())
    assert "records no camera" in err
    assert str(tmp_path / "ds" / "meta" / "info.json") in err
    assert "Fix:" in err and "--robot.cameras" in err and "evidence.frames" in err
    assert "rendering" not in r.output  # no promise of a minute of work before the error
    assert "observation.state" not in err and "timestamp" not in err  # no column is a camera


def test_a_wrong_camera_name_lists_only_the_dataset_cameras(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(_progress._state, "quiet", False)
    rig = _rig(
        tmp_path,
        demo_model,
        "observation.images.top",
        images=("observation.images.wrist", "observation.images.front"),
    )
    r = CliRunner().invoke(app, ["appearance", str(rig)])
    assert r.exit_code == 2, r.output
    err = " ".join(r.stderr.split())
    assert "observation.images.top" in err
    assert "observation.images.front, observation.images.wrist" in err
    assert "observation.state" not in err and "rendering" not in r.output
