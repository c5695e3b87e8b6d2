from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.rig import load_rig
from tests.factories import write_rig


def test_loads_and_resolves_paths(tmp_path: Path) -> None:
    rig = load_rig(write_rig(tmp_path, "m.xml", '[evidence]\ntiming_logs = ["t.jsonl"]\n'))
    assert rig.name == "test-so101"
    assert rig.model_path == (tmp_path / "m.xml").resolve()
    assert rig.joint_names[0] == "shoulder_pan"
    assert rig.gripper is not None and rig.gripper.name == "gripper"
    assert rig.evidence.timing_logs == ((tmp_path / "t.jsonl").resolve(),)
    assert rig.evidence.missing() == [("timing_logs", (tmp_path / "t.jsonl").resolve())]
    assert rig.control_dt_s == pytest.approx(0.0333333)


def test_unknown_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"control\.dt_ms"):
        load_rig(_rig_with(tmp_path, "[control]\ndt_s = 0.1\ndt_ms = 3\n"))


def _rig_with(tmp_path: Path, control: str) -> Path:
    text = tmp_path / "base.toml"
    text.write_text(
        'name = "x"\n[model]\npath = "m.xml"\n' + control + '[joints.a]\nrecorded = "a.pos"\n'
    )
    return text


def test_missing_required_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"control\.dt_s"):
        load_rig(_rig_with(tmp_path, "[control]\naction_space = 'joint_position'\n"))


def test_unknown_top_level_section(tmp_path: Path) -> None:
    p = _rig_with(tmp_path, "[control]\ndt_s = 0.1\n")
    p.write_text(p.read_text() + "[camra]\nname = 'x'\n")
    with pytest.raises(InputError, match="camra"):
        load_rig(p)


def test_wrong_type_and_bad_unit(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="control.dt_s"):
        load_rig(_rig_with(tmp_path, "[control]\ndt_s = 'fast'\n"))
    p = _rig_with(tmp_path, "[control]\ndt_s = 0.1\n")
    p.write_text(p.read_text().replace('recorded = "a.pos"', 'recorded = "a.pos"\nunit = "grad"'))
    with pytest.raises(InputError, match="unit"):
        load_rig(p)


def test_normalised_unit_needs_range(tmp_path: Path) -> None:
    p = _rig_with(tmp_path, "[control]\ndt_s = 0.1\n")
    p.write_text(p.read_text().replace('recorded = "a.pos"', 'recorded = "a.pos"\nunit = "pct"'))
    with pytest.raises(InputError, match="range_rad"):
        load_rig(p)


def test_joint_lookup_lists_valid_names(tmp_path: Path) -> None:
    rig = load_rig(write_rig(tmp_path, "m.xml"))
    assert rig.joint("gripper.pos").name == "gripper"
    with pytest.raises(NameNotFoundError) as e:
        rig.joint("elbow")
    assert "elbow_flex" in str(e.value)


def test_conversion_through_joint_map(tmp_path: Path) -> None:
    rig = load_rig(write_rig(tmp_path, "m.xml"))
    g = rig.joint("gripper").unit
    assert g.to_rad(0.0) == pytest.approx(-0.174533)
    assert g.to_rad(100.0) == pytest.approx(1.7453292)
    assert rig.joint("elbow_flex").unit.to_rad(90.0) == pytest.approx(np.pi / 2)


def test_not_toml(tmp_path: Path) -> None:
    p = tmp_path / "rig.toml"
    p.write_text("name = \n")
    with pytest.raises(InputError, match="TOML"):
        load_rig(p)


def test_a_frames_only_rig_needs_no_control_period(tmp_path: Path) -> None:
    import math

    model = tmp_path / "m.xml"
    model.write_text("<mujoco/>")
    body = (
        'name = "cam"\n[model]\npath = "m.xml"\n[joints.a]\nrecorded = "a.pos"\n'
        '[camera]\nname = "wrist"\n'
    )
    (tmp_path / "frames.toml").write_text(body + '[evidence]\nframes = "frames"\n')
    assert math.isnan(load_rig(tmp_path / "frames.toml").control_dt_s)
    (tmp_path / "timing.toml").write_text(
        body + '[control]\n[evidence]\nframes = "f"\ntiming_logs = ["t.jsonl"]\n'
    )
    with pytest.raises(InputError, match=r"control\.dt_s.*only a rig whose evidence is frames"):
        load_rig(tmp_path / "timing.toml")
