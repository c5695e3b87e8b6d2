"""No appearance verdict from a default (issue 34): a rig that does not say how bright
training's backgrounds were, or how far training moved its camera, gets not_measured with the
key to fill; flat grey frames, which show no scene, give no exposure and no camera pose."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simgap.appearance.flags import background_flag
from simgap.branches.appearance import assess
from simgap.branches.context import Context
from simgap.errors import InputError
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.appearance import CameraFigures, ExposureFigures
from simgap.finding import Finding, Verdict
from simgap.rig import load_rig
from tests._twin import REST, START, Twin, write_frames, write_rig


def _exposure(f: Finding) -> ExposureFigures:
    return f.typed(ExposureFigures)


def _camera(f: Finding) -> CameraFigures:
    return f.typed(CameraFigures)


OPTIONS = {"appearance_frames": 3, "appearance_camera_frames": 1, "appearance_grid_m": [0.16, 0.24]}
Q2 = START + np.array([0.15, 0.05, -0.05, 0.05, 0.1, -0.1])


def _assess(rig_path: Path) -> dict[str, Finding]:
    rig = load_rig(rig_path)
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig), options=dict(OPTIONS)))
    return {f.title: f for f in found}


def _unstated(rig_path: Path, *keys: str) -> Path:
    """The rig without the lines that state ``keys``."""
    lines = rig_path.read_text().splitlines()
    rig_path.write_text(
        "\n".join(ln for ln in lines if not any(ln.startswith(k) for k in keys)) + "\n"
    )
    return rig_path


@pytest.fixture(scope="module")
def model_frames(tmp_path_factory: pytest.TempPathFactory, demo_model: Path) -> Path:
    """Frames of the model itself (exposure matched, background black)."""
    root = tmp_path_factory.mktemp("provenance")
    tw = Twin(demo_model)
    write_frames(
        root / "frames",
        tw,
        [("A", "start", START, 1.0), ("A", "", Q2, 1.0), ("A", "rest", REST, 1.0)],
        0.0,
        seed=2,
    )
    tw.close()
    return root / "frames"


def _rig_on(folder: Path, frames: Path, demo_model: Path) -> Path:
    return write_rig(folder, demo_model, f'frames = "{frames}"')


def test_unstated_background_and_jitter_are_not_measured_with_the_key(
    model_frames: Path, demo_model: Path, tmp_path: Path
) -> None:
    rig = _unstated(
        _rig_on(tmp_path, model_frames, demo_model), "training_background_max", "training_jitter_px"
    )
    assert load_rig(rig).camera.training_background_max is None  # type: ignore[union-attr]
    found = _assess(rig)
    exp, cam = found["Exposure and background"], found["Camera pose"]
    assert exp.verdict is Verdict.NOT_MEASURED
    assert exp.needs and exp.needs[0].startswith("camera.training_background_max")
    assert _exposure(exp).training_background_max is None
    assert _exposure(exp).provenance["camera.training_background_max"] == "default"
    assert _exposure(exp).jaw_gain == pytest.approx(1.0, abs=0.05)  # still measured, shown
    assert cam.verdict is Verdict.NOT_MEASURED
    assert cam.needs and cam.needs[0].startswith("camera.training_jitter_px")
    assert _camera(cam).provenance["camera.training_jitter_px"] == "default"
    assert _camera(cam).camera_offset_px < 0.5  # type: ignore[operator]


def test_stated_background_and_jitter_give_a_verdict(
    model_frames: Path, demo_model: Path, tmp_path: Path
) -> None:
    found = _assess(_rig_on(tmp_path, model_frames, demo_model))
    exp, cam = found["Exposure and background"], found["Camera pose"]
    assert exp.verdict is Verdict.ELIMINATED and not exp.needs
    assert _exposure(exp).provenance["camera.training_background_max"] == "given"
    assert cam.verdict is Verdict.ELIMINATED
    assert _camera(cam).provenance["camera.training_jitter_px"] == "given"


def test_a_guessed_background_is_no_statement(
    model_frames: Path, demo_model: Path, tmp_path: Path
) -> None:
    rig = _rig_on(tmp_path, model_frames, demo_model)
    rig.write_text(
        rig.read_text().replace(
            "training_background_max = 0", "training_background_max = 0  # guessed"
        )
    )
    loaded = load_rig(rig)
    assert loaded.provenance("camera.training_background_max") == "guessed"
    assert loaded.provenance("camera.training_jitter_px") == "given"
    assert loaded.provenance("camera.training_jitter_deg") == "default"
    exp = _assess(rig)["Exposure and background"]
    assert exp.verdict is Verdict.NOT_MEASURED
    assert _exposure(exp).provenance["camera.training_background_max"] == "guessed"


def test_flat_grey_frames_measure_no_exposure_and_no_camera_pose(
    model_frames: Path, demo_model: Path, tmp_path: Path
) -> None:
    grey = tmp_path / "grey"
    grey.mkdir()
    with (model_frames / "index.csv").open() as fh:
        rows = list(csv.reader(fh))
    for row in rows[1:]:
        size = Image.open(model_frames / row[0]).size
        Image.fromarray(np.full((size[1], size[0], 3), 128, np.uint8)).save(grey / row[0])
    (grey / "index.csv").write_text((model_frames / "index.csv").read_text())
    rig = _unstated(_rig_on(tmp_path / "rig", grey, demo_model), "training_background_max")
    found = _assess(rig)
    exp, cam = found["Exposure and background"], found["Camera pose"]
    for f in (exp, cam):  # nothing implicated or eliminated on frames that show nothing
        assert f.verdict is Verdict.NOT_MEASURED, f.summary
        assert "show no scene" in f.summary and f.needs
    assert "shifted" not in cam.summary and _camera(cam).camera_offset_px is None
    assert any(n.startswith("camera.training_background_max") for n in exp.needs)
    assert _exposure(exp).real_brightness_spread < 1.0  # type: ignore[operator]


def test_frames_that_match_no_camera_pose_measure_no_shift(
    model_frames: Path, demo_model: Path, tmp_path: Path
) -> None:
    noise = tmp_path / "noise"
    noise.mkdir()
    rng = np.random.default_rng(0)
    with (model_frames / "index.csv").open() as fh:
        rows = list(csv.reader(fh))
    for row in rows[1:]:
        w, h = Image.open(model_frames / row[0]).size
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(noise / row[0])
    (noise / "index.csv").write_text((model_frames / "index.csv").read_text())
    cam = _assess(_rig_on(tmp_path / "rig", noise, demo_model))["Camera pose"]
    assert cam.verdict is Verdict.INCONCLUSIVE, cam.summary
    assert _camera(cam).match_score_best < 0.5  # type: ignore[operator]
    assert _camera(cam).camera_offset_px is None


def test_background_flag_without_a_training_level_raises_nothing() -> None:
    f = background_flag([40.0, 42.0], None)
    assert not f.raised and f.values["not_stated"] == "camera.training_background_max"
    assert f.values["background_level"] == pytest.approx(41.0)
    assert background_flag([40.0, 42.0], 0.0).raised  # stated black: a measured verdict


def test_background_levels_are_0_to_255(demo_model: Path, tmp_path: Path) -> None:
    rig = write_rig(tmp_path, demo_model)
    text = rig.read_text().replace("training_background_max = 0", "training_background_max = 40")
    rig.write_text(text)
    assert load_rig(rig).camera.training_background_max == 40.0  # type: ignore[union-attr]
    rig.write_text(text.replace("= 40", "= 300"))
    with pytest.raises(InputError, match="training_background_max"):
        load_rig(rig)
