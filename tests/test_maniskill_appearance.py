"""SAPIEN appearance and the replay's settings from the rig, without ManiSkill or SAPIEN (issue
35): the training camera read from the keys ``simgap init --maniskill-config`` writes (with
its orientation and the robot description, provenance ``from ManiSkill``), a missing key
named with its fix, and where the replay's agent and physics step come from. The rendering
itself runs against the real SAPIEN in tests/maniskill_real/test_maniskill_appearance.py."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.errors import InputError
from simgap.maniskill.settings import ASSUMED_AGENT, ASSUMED_PHYSICS_DT_S, replay_settings
from simgap.maniskill.training_view import CAMERA_KEYS, KEYS, regions, training_view
from simgap.rig import load_rig
from tests.factories import write_so101_info
from tests.maniskill_fixtures import grasp_cube_export, write_export

QUAT = [0.6963642403200189, 0.12278780396897282, 0.12278780396897285, -0.6963642403200189]
SO100_LINKS = (
    "Base",
    "Rotation_Pitch",
    "Upper_Arm",
    "Lower_Arm",
    "Wrist_Pitch_Roll",
    "Fixed_Jaw",
    "Moving_Jaw",
    "Fixed_Jaw_tip",
    "Moving_Jaw_tip",
)


def _rig(tmp_path: Path, demo_model: Path, *, export: bool = True) -> Path:
    """A rig from ``simgap init`` with (or without) a ManiSkill export whose camera looks
    down the jaws of ``Wrist_Pitch_Roll`` (orientation ``QUAT``)."""
    data = grasp_cube_export(mount="Wrist_Pitch_Roll", pose=(0.0, -0.02, 0.06), fov_deg=70.0)
    data["cameras"][0]["pose_q_wxyz"] = QUAT
    ds = write_so101_info(tmp_path / "ds")
    out = tmp_path / "rig.toml"
    extra = ["--maniskill-config", str(write_export(tmp_path / "t.json", data))] if export else []
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(demo_model), "--out", str(out), *extra]
    )
    assert r.exit_code == 0, r.output
    return out


def _urdf_beside(rig: Path) -> Path:
    """An (empty) file where the export's relative robots/so100/so100.urdf resolves."""
    urdf = rig.parent / "robots" / "so100" / "so100.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text("<robot name='so100'/>")
    return urdf


def test_the_training_view_comes_from_maniskill_with_its_orientation(
    tmp_path: Path, demo_model: Path
) -> None:
    rig_path = _rig(tmp_path, demo_model)
    assert "training_pose_q_wxyz" in rig_path.read_text()
    urdf = _urdf_beside(rig_path)
    view = training_view(load_rig(rig_path))
    assert view.robot == urdf
    c = view.camera
    assert c.mount_link == "Wrist_Pitch_Roll" and (c.height, c.width) == (128, 128)
    assert c.pose_p_m == pytest.approx((0.0, -0.02, 0.06))
    assert c.pose_q_wxyz == pytest.approx(QUAT, abs=1e-7)
    assert c.fov_y_rad == pytest.approx(math.radians(70.0), rel=1e-5)
    assert set(view.provenance) == set(KEYS)
    assert set(view.provenance.values()) == {"from ManiSkill"}


def test_the_robot_description_must_be_a_urdf_here(tmp_path: Path, demo_model: Path) -> None:
    rig_path = _rig(tmp_path, demo_model)
    with pytest.raises(InputError, match=r"training\.robot_description.*no such file"):
        training_view(load_rig(rig_path))
    text = rig_path.read_text().replace("so100.urdf", "so100.xml")
    rig_path.write_text(text)
    with pytest.raises(InputError, match=r"training\.robot_description.*URDF"):
        training_view(load_rig(rig_path))


@pytest.mark.parametrize(
    "key", ["training.robot_description", *(f"camera.{k}" for k in CAMERA_KEYS)]
)
def test_a_missing_key_is_named_with_the_export_as_the_fix(
    tmp_path: Path, demo_model: Path, key: str
) -> None:
    rig_path = _rig(tmp_path, demo_model)
    _urdf_beside(rig_path)
    name = key.split(".")[1]
    text, n = re.subn(rf"^{name} = .*\n", "", rig_path.read_text(), flags=re.M)
    assert n == 1
    rig_path.write_text(text)
    with pytest.raises(InputError) as e:
        training_view(load_rig(rig_path))
    msg = str(e.value)
    assert key in msg and "export_config" in msg and "rig.toml" in msg, msg


def test_a_rig_without_maniskill_keys_is_refused_before_rendering(
    tmp_path: Path, demo_model: Path
) -> None:
    # the dataset records no camera, so init writes no [camera]: that is named first
    with pytest.raises(InputError, match=r"field 'camera'.*training_pose_q_wxyz.*export_config"):
        training_view(load_rig(_rig(tmp_path, demo_model, export=False)))


def test_the_regions_are_the_jaw_links_and_the_empty_background() -> None:
    g = regions(SO100_LINKS)
    assert [SO100_LINKS[i] for i in g["jaws"]] == [
        "Fixed_Jaw",
        "Moving_Jaw",
        "Fixed_Jaw_tip",
        "Moving_Jaw_tip",
    ]
    assert g["object"] == () and g["background"] == (-1,)
    with pytest.raises(InputError, match="gripper link"):
        regions(("Base", "Upper_Arm"))


@pytest.mark.skipif(
    importlib.util.find_spec("sapien") is not None, reason="sapien is installed here"
)
def test_the_command_without_sapien_names_the_extra(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["maniskill", "appearance", str(tmp_path / "none.toml")])
    assert res.exit_code == 2
    assert "pip install 'simgap[maniskill]'" in res.output and "sapien" in res.output


def test_replay_settings_say_where_each_came_from(tmp_path: Path, demo_model: Path) -> None:
    rig = load_rig(_rig(tmp_path / "a", demo_model))
    s = replay_settings(rig)
    assert (s.agent, s.physics_dt_s) == ("so100", 0.01)
    assert s.sources == {
        "agent": "rig training.agent, from ManiSkill",
        "physics_dt_s": "rig training.physics_dt_s, from ManiSkill",
    }
    s = replay_settings(rig, "my_so101", 0.005)
    assert (s.agent, s.physics_dt_s) == ("my_so101", 0.005)
    assert set(s.sources.values()) == {"from the command line"}
    bare = load_rig(_rig(tmp_path / "b", demo_model, export=False))
    s = replay_settings(bare)
    assert (s.agent, s.physics_dt_s) == (ASSUMED_AGENT, ASSUMED_PHYSICS_DT_S)
    assert all(v.startswith("assumed") for v in s.sources.values())
    assert "assumed" in s.describe()
    with pytest.raises(InputError, match="--physics-dt"):
        replay_settings(bare, physics_dt_s=0.0)
