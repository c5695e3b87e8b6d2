"""``simgap init``: a rig.toml from a LeRobot dataset's meta/info.json and a MuJoCo model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.errors import InputError
from simgap.rig import load_rig
from simgap.rig.init.draft import draft_rig

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def _dataset(
    root: Path, *, fps: int = 30, names: list[str] | None = None, robot: str = "so101_follower"
) -> Path:
    ds = root / "ds"
    (ds / "meta").mkdir(parents=True)
    state = {"dtype": "float32", "shape": [6], "names": names or [f"{j}.pos" for j in JOINTS]}
    info = {
        "codebase_version": "v3.0",
        "robot_type": robot,
        "fps": fps,
        "features": {
            "action": state,
            "observation.state": state,
            "observation.images.wrist": {
                "dtype": "video",
                "shape": [480, 640, 3],
                "names": ["height", "width", "channels"],
            },
        },
    }
    (ds / "meta" / "info.json").write_text(json.dumps(info))
    return ds


@pytest.mark.parametrize("robot", ["so_follower", "so101_follower", "so100"])
def test_draft_maps_features_fps_units_and_model_names(
    tmp_path: Path, demo_model: Path, robot: str
) -> None:
    # LeRobot >= 0.4.3 records robot_type "so_follower"; older datasets the longer names
    ds = _dataset(tmp_path, fps=30, robot=robot)
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")]
    )
    assert r.exit_code == 0, r.output
    rig = load_rig(tmp_path / "rig.toml")
    assert rig.joint_names == tuple(JOINTS)
    assert rig.control_dt_s == pytest.approx(1 / 30, rel=1e-6)
    assert [j.unit.unit for j in rig.joints] == ["deg"] * 5 + ["pct"]
    assert rig.gripper is not None and rig.gripper.recorded == "gripper.pos"
    assert rig.encoder_rad == pytest.approx(2 * math.pi / 4096)
    assert rig.ee_site == "gripperframe" and rig.object_body == "cube"
    assert rig.evidence.dataset == ds.resolve() and rig.model_path == demo_model.resolve()
    assert "guessed" in r.output and "still to fill in" in r.output
    assert "wrist_cam" in r.output  # the model's camera is offered for the recorded images
    again = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")]
    )
    assert again.exit_code == 2 and "--force" in again.output


def test_calibration_gives_the_gripper_span(tmp_path: Path, demo_model: Path) -> None:
    ds = _dataset(tmp_path)
    cal = tmp_path / "arm.json"
    cal.write_text(
        json.dumps(
            {
                j: {
                    "id": i + 1,
                    "drive_mode": 0,
                    "homing_offset": 0,
                    "range_min": 2000,
                    "range_max": 3024,
                }
                for i, j in enumerate(JOINTS)
            }
        )
    )
    d = draft_rig(ds, demo_model, tmp_path / "rig.toml", calibration=cal)
    (tmp_path / "rig.toml").write_text(d.text)
    g = load_rig(tmp_path / "rig.toml").gripper
    assert g is not None
    lo, hi = g.unit.lo_rad, g.unit.hi_rad
    assert hi - lo == pytest.approx(1024 * 2 * math.pi / 4096)  # a quarter turn of ticks
    assert lo == pytest.approx(-0.174533, abs=1e-6)  # anchored at the model's closed end


def test_names_the_model_joints_on_a_miss_and_map_fixes_it(
    tmp_path: Path, demo_model: Path
) -> None:
    names = [f"{j}.pos" for j in JOINTS[:5]] + ["jaw.pos"]
    ds = _dataset(tmp_path, names=names)
    with pytest.raises(InputError, match=r"'jaw'.*shoulder_pan.*--map jaw.pos="):
        draft_rig(ds, demo_model, tmp_path / "rig.toml")
    d = draft_rig(ds, demo_model, tmp_path / "rig.toml", joint_map={"jaw.pos": "gripper"})
    assert 'recorded = "jaw.pos"' in d.text


def test_no_model_for_an_so101_points_at_menagerie(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="robotstudio_so101"):
        draft_rig(_dataset(tmp_path), None, tmp_path / "rig.toml")
    with pytest.raises(InputError, match="meta/info.json"):
        draft_rig(tmp_path / "nothing", None, tmp_path / "rig.toml")


@pytest.mark.slow
def test_init_on_the_demo_dataset_diagnoses_unchanged(
    demo_run: tuple[Path, Path, str], tmp_path: Path
) -> None:
    bench = demo_run[1] / "seed-0"
    rig = tmp_path / "rig.toml"
    r = CliRunner().invoke(
        app,
        [
            "init",
            str(bench / "recordings" / "real"),
            "--model",
            str(bench / "so101_demo.xml"),
            "--out",
            str(rig),
        ],
    )
    assert r.exit_code == 0, r.output
    d = CliRunner().invoke(app, ["diagnose", str(tmp_path), "--out", str(tmp_path / "out")])
    assert d.exit_code == 0, d.output
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    actuator = next(f for f in findings if f["branch"] == "actuator")
    assert actuator["verdict"] == "implicated"  # the planted servo lag, seen from the dataset


# ----------------------------------------------------------------- names from the inputs
# (issue 33: a model joint name was written raw into [joints.<name>])


def _odd_model(root: Path, joints: list[str]) -> Path:
    from xml.sax.saxutils import quoteattr

    model = root / "arm.xml"
    bodies = "".join(
        f"<body><joint name={quoteattr(j, {chr(10): '&#10;', chr(13): '&#13;'})}"
        " range='-1 1' limited='true'/><geom size='.1'/></body>"
        for j in joints
    )
    model.write_text(f"<mujoco><worldbody>{bodies}</worldbody></mujoco>")
    return model


def test_a_joint_name_cannot_add_a_compute_section(tmp_path: Path) -> None:
    evil = 'x]\n[compute]\nbackend = "ray"\naddress = "ray://evil:10001"\n[joints.y'
    ds = _dataset(tmp_path, names=["a.pos", evil + ".pos"])
    model = _odd_model(tmp_path, ["a", evil])
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(model), "--out", str(tmp_path / "rig.toml")]
    )
    assert r.exit_code == 0, r.output
    import tomllib

    parsed = tomllib.loads((tmp_path / "rig.toml").read_text(encoding="utf-8"))
    assert "compute" not in parsed
    assert list(parsed["joints"]) == ["a", evil]
    assert load_rig(tmp_path / "rig.toml").joint_names == ("a", evil)


@pytest.mark.parametrize("joint", ["a b", 'q"uote', "d.ot", "ü", "cr\rx", "#x", "a]b"])
def test_joint_names_that_are_not_bare_keys_are_quoted(tmp_path: Path, joint: str) -> None:
    ds = _dataset(tmp_path, names=["a.pos", joint + ".pos"])
    model = _odd_model(tmp_path, ["a", joint])
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(model), "--out", str(tmp_path / "rig.toml")]
    )
    assert r.exit_code == 0, r.output
    assert load_rig(tmp_path / "rig.toml").joint_names == ("a", joint)


def test_a_dataset_folder_with_an_emoji_is_written_as_is(tmp_path: Path, demo_model: Path) -> None:
    ds = _dataset(tmp_path)
    emoji = ds.rename(tmp_path / "ds_😀")
    r = CliRunner().invoke(
        app, ["init", str(emoji), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")]
    )
    assert r.exit_code == 0, r.output
    rig = load_rig(tmp_path / "rig.toml")
    assert rig.name == "ds_😀" and rig.evidence.dataset == emoji.resolve()


def test_an_image_shape_of_strings_is_refused_naming_the_field(
    tmp_path: Path, demo_model: Path
) -> None:
    ds = _dataset(tmp_path)
    info = json.loads((ds / "meta" / "info.json").read_text())
    info["features"]["observation.images.wrist"]["shape"] = ["h", "w", "c"]
    (ds / "meta" / "info.json").write_text(json.dumps(info))
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")]
    )
    assert r.exit_code == 2, r.output
    assert "features.observation.images.wrist.shape" in r.output and "info.json" in r.output
    assert not (tmp_path / "rig.toml").exists()


def test_a_recorded_name_with_a_lone_surrogate_is_refused(tmp_path: Path, demo_model: Path) -> None:
    names = [f"{j}.pos" for j in JOINTS]
    ds = _dataset(tmp_path, names=names)
    info = (ds / "meta" / "info.json").read_text().replace('"gripper.pos"', '"gr\\ud800.pos"')
    (ds / "meta" / "info.json").write_text(info)
    r = CliRunner().invoke(
        app,
        [
            "init",
            str(ds),
            "--model",
            str(demo_model),
            "--out",
            str(tmp_path / "rig.toml"),
            "--map",
            "gr\ud800.pos=gripper",
        ],
    )
    assert r.exit_code == 2, r.output
    assert "surrogate" in r.output
