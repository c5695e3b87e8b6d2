"""Every name a rig gives from its model is checked when the rig is loaded: a typo is an
error naming rig.toml, the field and the valid names of that kind (exit 2), before any
branch of ``simgap diagnose`` runs and without an output folder left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import _progress, app
from simgap.errors import NameNotFoundError
from simgap.sim.rig_names import load_checked_rig as load_rig
from tests.factories import write_rig

MODEL = """ee_site = "gripperframe"
object_body = "cube"
object_geom = "cube"
gripper_geoms = ["fixed_jaw_pad", "moving_jaw_pad"]
"""
EXTRA = """
[camera]
name = "wrist_cam"
[contact]
support_geoms = ["floor"]
"""
ARM = ["elbow_flex", "gripper", "shoulder_lift", "shoulder_pan", "wrist_flex", "wrist_roll"]

BAD = {  # what is typo'd: (text replaced, by, field, a valid name the fix must list)
    "joint section": ("[joints.gripper]", "[joints.griper]", "joints.griper", "gripper"),
    "the cube's free joint": (
        "[joints.gripper]",
        "[joints.cube_free]",
        "joints.cube_free",
        "gripper",
    ),
    "object body": ('object_body = "cube"', 'object_body = "cubez"', "model.object_body", "cube"),
    "a fixed body as the object": (
        'object_body = "cube"',
        'object_body = "gripper"',
        "model.object_body",
        "cube",
    ),
    "end effector": (
        'ee_site = "gripperframe"',
        'ee_site = "grip_frame"',
        "model.ee_site",
        "gripperframe",
    ),
    "object geom": ('object_geom = "cube"', 'object_geom = "cubes"', "model.object_geom", "cube"),
    "gripper geom": ('"moving_jaw_pad"]', '"moving_pad"]', "model.gripper_geoms", "moving_jaw_pad"),
    "camera": ('name = "wrist_cam"', 'name = "wrist"', "camera.name", "wrist_cam"),
    "support geom": ('["floor"]', '["flor"]', "contact.support_geoms", "floor"),
}


def _rig(tmp: Path, model: Path, replace: tuple[str, str] | None = None) -> Path:
    path = write_rig(tmp, model, EXTRA)
    text = path.read_text().replace('ee_site = "gripperframe"\n', MODEL)
    if replace is not None:
        assert replace[0] in text
        text = text.replace(*replace)
    path.write_text(text)
    return path


def test_the_rig_with_every_name_right_loads(tmp_path: Path, demo_model: Path) -> None:
    rig = load_rig(_rig(tmp_path, demo_model))
    assert rig.object_body == "cube" and rig.camera is not None
    assert rig.support_geoms == ("floor",)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_name_is_refused_at_load_naming_the_field(
    tmp_path: Path, demo_model: Path, case: str
) -> None:
    old, new, field, valid = BAD[case]
    with pytest.raises(NameNotFoundError) as e:
        load_rig(_rig(tmp_path, demo_model, (old, new)))
    err = e.value
    assert err.field == field and err.file == str(tmp_path / "rig.toml")
    assert valid in err.valid and "cube_free" not in err.valid
    msg = str(err)
    assert f"field '{field}'" in msg and "rig.toml" in msg and valid in msg
    assert "Fix: use one of:" in msg


def test_a_joint_lists_only_the_arms_joints(tmp_path: Path, demo_model: Path) -> None:
    with pytest.raises(NameNotFoundError) as e:
        load_rig(_rig(tmp_path, demo_model, ("[joints.gripper]", "[joints.cube_free]")))
    assert e.value.valid == ARM  # hinge joints an actuator drives, not the cube's free joint
    assert "cube_free (a free joint)" in str(e.value)
    assert e.value.name == "cube_free"


@pytest.mark.parametrize("case", ["joint section", "object body", "camera"])
def test_diagnose_refuses_a_bad_name_before_any_branch(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setitem(_progress._state, "quiet", False)  # progress lines would show
    old, new, field, valid = BAD[case]
    rig = _rig(tmp_path, demo_model, (old, new))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["diagnose", str(rig), "--out", str(out)])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "diagnose: plumbing" not in text and "diagnose: " not in text
    assert str(rig) in text and f"field '{field}'" in text and valid in text
    assert "cube_free" not in text and "Traceback" not in text
    assert not out.exists()


def _dataset(root: Path) -> Path:
    import numpy as np

    from tests.factories import write_v3_dataset

    q = np.zeros((5, 6))
    return write_v3_dataset(root, [{"action": q, "observation.state": q}])


def test_a_missing_model_is_refused_before_any_branch(tmp_path: Path) -> None:
    """model.path missing, with a dataset to replay against it: one error naming rig.toml
    and model.path before any branch (it was found by the fourth branch, after three ran)."""
    _dataset(tmp_path / "ds")
    rig = write_rig(tmp_path, "gone.xml", '[evidence]\ndataset = "ds"\n')
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["diagnose", str(rig), "--out", str(out)])
    text = " ".join(r.output.split())
    assert r.exit_code == 2, text
    assert f"{rig}: field 'model.path'" in text and "evidence.dataset" in text, text
    assert "gone.xml: no such file" in text and "Fix: correct model.path" in text
    assert "diagnose: " not in text and not out.exists()
    latency_only = write_rig(tmp_path / "lat", "gone.xml")  # needs no model: loads
    assert load_rig(latency_only).model_path.name == "gone.xml"


def test_a_dataset_path_that_is_not_its_root_names_the_rig_field_and_the_root(
    tmp_path: Path, demo_model: Path
) -> None:
    """evidence.dataset at a folder inside the dataset (its frames/, its meta/) was
    refused as '.../meta/info.json: expected ...', naming neither rig.toml nor the field."""
    from simgap.errors import InputError

    root = _dataset(tmp_path / "ds")
    (root / "frames").mkdir()
    rig = write_rig(tmp_path, demo_model, '[evidence]\ndataset = "ds/frames"\n')
    with pytest.raises(InputError) as e:
        load_rig(rig)
    msg = str(e.value)
    assert msg.startswith(
        f"{rig}: field 'evidence.dataset': expected a LeRobot dataset's root folder"
    ), msg
    assert f"point evidence.dataset at the dataset's root folder, {root.resolve()}" in msg
    other = tmp_path / "other"
    other.mkdir()
    (rig.parent / "rig.toml").write_text(rig.read_text().replace("ds/frames", "other"))
    with pytest.raises(InputError, match="a LeRobot dataset's root folder \\(the one holding"):
        load_rig(rig)
    (rig.parent / "rig.toml").write_text(rig.read_text().replace('"other"', '"ds"'))
    assert load_rig(rig).evidence.dataset == root.resolve()
