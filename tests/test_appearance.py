"""Appearance: frames from a perturbed copy of the model are caught and measured; frames from
the model itself raise nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.appearance.flags import background_flag, drift_flag, mismatch_flag, rest_pose_flag
from simgap.appearance.regions import compare_regions, region_masks
from simgap.appearance.visibility import inside_workspace
from simgap.branches.appearance import assess
from simgap.branches.context import Context
from simgap.cli import app
from simgap.errors import InputError
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.appearance import CameraFigures, ExposureDetails, ExposureFigures, ReachFigures
from simgap.finding import Finding, Verdict
from simgap.report.plots_appearance import plots
from simgap.rig import load_rig
from tests._twin import REST, START, Twin, write_frames, write_rig
from tests.typed_records import check_typed

GAIN_A, GAIN_B, LIFT = 0.75, 0.95, 30.0
CAM_POS = (0.004, -0.003, 0.0)
CAM_ROT = (np.deg2rad(-3.0), np.deg2rad(4.0), 0.0)
Q2 = START + np.array([0.15, 0.05, -0.05, 0.05, 0.1, -0.1])
OPTIONS = {
    "appearance_frames": 5,
    "appearance_camera_frames": 1,
    "appearance_grid_m": [0.12, 0.16, 0.20, 0.24, 0.28],
}


def _assess(rig_path: Path) -> dict[str, Finding]:
    rig = load_rig(rig_path)
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig), options=dict(OPTIONS)))
    return {f.title: f for f in found}


def _true_shift_px(demo_model: Path) -> np.ndarray:
    """Mean displacement [policy px] of the gripper's geom centres between the modelled
    camera and the twin's, by a pinhole projection written here."""
    nominal, moved = Twin(demo_model), Twin(demo_model, CAM_POS, CAM_ROT)
    gripper = ["fixed_jaw", "fixed_jaw_pad", "moving_jaw", "moving_jaw_pad", "palm", "camera_box"]
    f = 8.0 / np.tan(np.deg2rad(70.0) / 2)  # 16 px tall image, fovy 70 deg
    uv = []
    for tw in (nominal, moved):
        pos, rot = tw.camera_pose(START)
        pts = np.array([tw.d.geom(g).xpos for g in gripper])
        pc = (pts - pos) @ rot
        uv.append(np.stack([8 + f * pc[:, 0] / -pc[:, 2], 8 - f * pc[:, 1] / -pc[:, 2]], 1))
        if tw is nominal:
            inview = (pc[:, 2] < 0) & (uv[0] >= 0).all(1) & (uv[0] <= 16).all(1)
    return (uv[1] - uv[0])[inview].mean(axis=0)


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory, demo_model: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("appearance")
    out = {}
    for name in ("perturbed", "model"):
        if name == "perturbed":
            tw = Twin(demo_model, CAM_POS, CAM_ROT, delta=[0, 0, np.deg2rad(3), 0, 0, 0])
            ga, gb, lift = GAIN_A, GAIN_B, LIFT
        else:
            tw, ga, gb, lift = Twin(demo_model), 1.0, 1.0, 0.0
        plan = [
            ("A", "rest", REST, ga),
            ("A", "start", START, ga),
            ("A", "", Q2, ga),
            ("B", "start", START, gb),
            ("B", "", Q2, gb),
        ]
        write_frames(root / name / "frames", tw, plan, lift, seed=4)
        tw.close()
        evidence = 'frames = "frames"'
        if name == "perturbed":  # one initial state beyond training's x range (0.15..0.35)
            (root / name / "real.toml").write_text(
                '[policy]\ncheckpoint = "m.safetensors"\nsha256 = "' + "ab" * 32 + '"\n'
                '[environment]\nkind = "real"\nrig = "bench-1"\n'
                '[success]\npredicate = "cube_in_bin"\nthreshold = 0.02\njudge = "automatic"\n'
                "[initial_states]\nstates = [[0.25, 0.0, 0.0], [0.40, 0.02, 0.0]]\n"
                "[[trials]]\nsuccess = true\ninitial_state = 0\n"
                "[[trials]]\nsuccess = false\ninitial_state = 1\n"
            )
            evidence += '\nreal_manifest = "real.toml"'
        out[name] = write_rig(root / name, demo_model, evidence)
    return out


@pytest.fixture(scope="module")
def perturbed(twins: dict[str, Path]) -> dict[str, Finding]:
    return _assess(twins["perturbed"])


def test_perturbed_camera_offset_within_one_policy_pixel(
    perturbed: dict[str, Finding], demo_model: Path
) -> None:
    cam = perturbed["Camera pose"]
    fig = cam.typed(CameraFigures)
    truth = _true_shift_px(demo_model)
    est = np.array([fig.camera_offset_dx_px, fig.camera_offset_dy_px])
    assert np.hypot(*(est - truth)) < 1.0
    assert np.hypot(*truth) > 1.0  # the planted offset is itself more than a pixel
    assert fig.camera_offset_px is not None
    assert fig.camera_offset_ratio_to_jitter == pytest.approx(fig.camera_offset_px / 0.5)
    assert cam.verdict is Verdict.IMPLICATED
    check_typed(cam, CameraFigures)
    line = fig.headline()
    assert line is not None and line.text.startswith("camera view shifted")


def test_perturbed_exposure_and_background_are_flagged(perturbed: dict[str, Finding]) -> None:
    exp = perturbed["Exposure and background"]
    fig = exp.typed(ExposureFigures)
    gains = fig.jaw_gain_by_recording
    assert gains["A"] == pytest.approx(GAIN_A, rel=0.10)
    assert gains["B"] == pytest.approx(GAIN_B, rel=0.10)
    flags = fig.flags
    assert flags["background_not_dark"] and flags["exposure_mismatch"]
    assert flags["exposure_drift"]  # two recordings at different exposure
    assert fig.background_level == pytest.approx(LIFT, abs=4)
    assert exp.verdict is Verdict.IMPLICATED
    # Two exposures: the per-recording gains lead; the key is the worse one, not a median.
    assert exp.key_figure == "jaw_gain_worst_recording"
    assert fig.jaw_gain_worst_recording == pytest.approx(
        max((g for g in gains.values() if g is not None), key=lambda g: abs(g - 1.0))
    )
    assert f"A {gains['A']:.2f}, B {gains['B']:.2f}" in exp.summary
    html = "".join(plots(exp.to_dict()))
    assert html.count("<img") == 3 and "image-rendering:pixelated" in html
    check_typed(exp, ExposureFigures, ExposureDetails)
    line = fig.headline()
    assert line is not None and "brightness per recording: A " in line.text


def test_reach_of_view_from_the_start_pose(perturbed: dict[str, Finding]) -> None:
    vis = perturbed["Reach of view"]
    fig = vis.typed(ReachFigures)
    d = np.array(OPTIONS["appearance_grid_m"])
    seen = np.asarray(fig.grid_seen).any(axis=1)
    assert fig.reach_of_view_m == pytest.approx(d[seen].max())
    assert seen.any()
    assert not seen[-1]  # 28 cm from the axis is beyond what the start pose sees
    assert fig.initial_states_outside == 1
    assert vis.verdict is Verdict.IMPLICATED
    check_typed(vis, ReachFigures)


def test_unperturbed_frames_raise_nothing(twins: dict[str, Path]) -> None:
    found = _assess(twins["model"])
    exp = found["Exposure and background"]
    assert not any(exp.typed(ExposureFigures).flags.values())
    assert exp.verdict is Verdict.ELIMINATED
    assert exp.typed(ExposureFigures).jaw_gain == pytest.approx(1.0, abs=0.02)
    cam = found["Camera pose"]
    offset = cam.typed(CameraFigures).camera_offset_px
    assert offset is not None and offset < 0.25
    assert cam.verdict is Verdict.ELIMINATED


def test_cli_writes_json_and_images(twins: dict[str, Path], tmp_path: Path) -> None:
    rig = load_rig(twins["model"])
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        [
            "appearance",
            str(twins["model"]),
            "--json",
            str(tmp_path / "a.json"),
            "--out",
            str(out),
            "--frames",
            "2",
            "--camera-frames",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["rig"] == rig.name and len(data["findings"]) == 3
    assert (out / "real.png").is_file() and (out / "diff.png").is_file()
    res = CliRunner().invoke(
        app,
        [
            "render",
            str(twins["model"]),
            "--q",
            "0,-34,51,51,0,40",
            "--out",
            str(tmp_path / "r.png"),
        ],
    )
    assert res.exit_code == 0 and (tmp_path / "r.png").stat().st_size > 0


def test_cli_bad_camera_lists_valid_names(twins: dict[str, Path], tmp_path: Path) -> None:
    text = twins["model"].read_text().replace('name = "wrist_cam"', 'name = "top_cam"')
    text = text.replace('frames = "frames"', f'frames = "{twins["model"].parent / "frames"}"')
    bad = tmp_path / "rig.toml"
    bad.write_text(text)
    res = CliRunner().invoke(app, ["appearance", str(bad)])
    assert res.exit_code == 2 and "wrist_cam" in res.output and "top_cam" in res.output


def test_flags_on_numbers() -> None:
    assert background_flag([18, 20, 19], 0).raised
    assert not background_flag([3, 5], 0).raised
    assert not background_flag([60], 64).raised
    assert mismatch_flag(0.71).raised and not mismatch_flag(1.05).raised
    steady = drift_flag([1.0, 1.01, 0.99, 1.0], [0.1, 0.5, 0.2, 0.3], ["a", "a", "b", "b"])
    assert not steady.raised
    auto = drift_flag([0.8, 1.0, 1.2, 1.4], [0.6, 0.4, 0.2, 0.1], ["a"] * 4)
    assert auto.raised and auto.values["gain_vs_bright_r"] < -0.9
    between = drift_flag([1.0, 1.0, 1.44, 1.44], [0.2] * 4, ["a", "a", "b", "b"])
    assert between.raised and between.values["between_recordings_fraction"] == pytest.approx(0.44)
    assert rest_pose_flag(1.0, None, True, False).raised  # rest only
    assert rest_pose_flag(1.0, 0.71, True, True).raised  # 29% darker at start
    assert not rest_pose_flag(None, 1.0, True, True).raised  # jaws hidden at rest
    assert not rest_pose_flag(1.0, 1.02, True, True).raised


def test_regions_and_missing_segmentation_id() -> None:
    seg = np.array([[0, 0], [5, -1]])
    masks = region_masks(seg, {"jaws": [5], "background": [-1, 0]}, n_geoms=6)
    real = np.array([[[10, 10, 10], [10, 10, 10]], [[90, 90, 90], [12, 12, 12]]], float)
    sim = np.array([[[0, 0, 0], [0, 0, 0]], [[100, 100, 100], [0, 0, 0]]], float)
    stats = compare_regions(real, sim, masks)
    assert stats["jaws"].gain == pytest.approx(0.9)
    assert stats["background"].gain is None and stats["background"].real_luma == pytest.approx(
        32 / 3
    )
    with pytest.raises(InputError, match="missing segmentation id"):
        region_masks(seg, {"jaws": [7]}, n_geoms=6)
    with pytest.raises(InputError, match="geom ids"):
        region_masks(np.array([[9]]), {"jaws": [5]}, n_geoms=6)


def test_initial_states_against_the_workspace() -> None:
    inside = inside_workspace(
        [[0.25, 0.0, 0.0], [0.40, 0.0, 1.0], [0.2, -0.2, 0.0]], (0.15, 0.35), (-0.1, 0.1)
    )
    assert inside.tolist() == [True, False, False]


def test_exposure_wording_leads_with_recordings_and_calls_clipped_gains_lower_bounds() -> None:
    two = mismatch_flag(1.5, by_recording={"a": 1.5, "b": 1.0})
    assert two.raised and "a 1.50, b 1.00" in two.message and "no single gain" in two.message
    one = mismatch_flag(1.6, by_recording={"a": 1.6}, clipped_fraction=0.55)
    assert "1.60 times" in one.message and "55%" in one.message
    assert "lower bound" in one.message
    assert "lower bound" not in mismatch_flag(1.6, clipped_fraction=0.01).message


def test_clipped_pixels_are_counted_per_region() -> None:
    real = np.full((4, 4, 3), 120.0)
    real[:2, :, 0] = 255.0  # the top half clipped in red
    sim = np.full((4, 4, 3), 100.0)
    masks = {"jaws": np.ones((4, 4), bool), "object": np.zeros((4, 4), bool)}
    stats = compare_regions(real, sim, masks)
    assert stats["jaws"].clipped_fraction == pytest.approx(0.5)
    assert stats["object"].clipped_fraction == 0.0


def test_reach_of_view_without_a_manifest_is_reported(demo_model: Path, tmp_path: Path) -> None:
    from simgap.appearance.visibility import Visibility
    from simgap.branches.appearance import _visibility_finding

    rig = load_rig(write_rig(tmp_path, demo_model))
    vis = Visibility(
        distances_m=np.array([0.1, 0.2, 0.3]),
        lateral_m=np.array([0.0]),
        policy_pixels=np.array([[4], [2], [0]]),
        reach_m=0.2,
        nearest_m=0.1,
        heading=np.array([1.0, 0.0]),
    )
    f = _visibility_finding(rig, vis, None)
    assert f.verdict is Verdict.ELIMINATED and f.key_figure == "reach_of_view_m"
    assert "20 cm" in f.summary and "No evaluation initial states" in f.summary


def test_bracket_is_the_best_and_its_neighbours_one_step_away() -> None:
    from simgap.appearance.camera_pose import _bracket

    seen = []

    def shift(x: object) -> float:
        seen.append(list(x))  # type: ignore[call-overload]
        return 1.0 + 0.1 * float(sum(x))  # type: ignore[call-overload]

    lo, hi = _bracket([0.0] * 5, 1.0, 0.5, np.array([1.0, 1.0, 1.0, 2.0, 2.0]), shift)
    assert len(seen) == 10 and [0.0, 0.0, 0.0, 1.0, 0.0] in seen
    assert (lo, hi) == pytest.approx((0.9, 1.1))
