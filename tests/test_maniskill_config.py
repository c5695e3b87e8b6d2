"""The training config as evidence (issue 35): ``simgap init --maniskill-config FILE`` reads
the JSON ``simgap.maniskill.export_config`` writes and fills ``[training]`` and the camera,
each value with provenance ``from ManiSkill``. No ManiSkill needed."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.errors import InputError
from simgap.maniskill.config import read_maniskill_config
from simgap.rig import load_rig
from tests.factories import write_so101_info
from tests.maniskill_fixtures import grasp_cube_export, write_export


def _init(tmp_path: Path, demo_model: Path, *extra: str) -> tuple[int, str, Path]:
    ds = write_so101_info(tmp_path / "ds")
    out = tmp_path / "rig.toml"
    r = CliRunner().invoke(
        app, ["init", str(ds), "--model", str(demo_model), "--out", str(out), *extra]
    )
    return r.exit_code, r.output, out


def test_the_export_reads_so100_grasp_cube_as_maniskill_3_0_1_builds_it(
    tmp_path: Path,
) -> None:
    c = read_maniskill_config(write_export(tmp_path / "t.json", grasp_cube_export()))
    assert (c.control_dt_s, c.physics_dt_s) == (pytest.approx(0.05), pytest.approx(0.01))
    assert (c.stiffness_nm_rad, c.damping_nms_rad, c.force_limit_nm) == (1e3, 1e2, 100.0)
    assert c.delta_limit_rad == 0.05  # the arm's bound, not the gripper's 0.2
    assert c.finger_friction == 2.0
    assert c.object_mass_kg == pytest.approx(0.003125) and c.object_size_m == 0.025
    assert c.camera is not None and c.camera.fov_deg == pytest.approx(52.0)
    assert c.camera.resolution == (128, 128) and c.camera.mount == "camera_mount"
    # the world origin is the base link, 4.52 cm from the pan axis
    assert c.origin_from_pan_axis_m is not None
    assert math.hypot(*c.origin_from_pan_axis_m[:2]) == pytest.approx(0.0452)


def test_init_fills_training_and_the_camera_from_maniskill(
    tmp_path: Path, demo_model: Path
) -> None:
    cfg = write_export(tmp_path / "t.json", grasp_cube_export())
    code, out, rig_path = _init(tmp_path, demo_model, "--maniskill-config", str(cfg))
    assert code == 0, out
    assert "from ManiSkill" in out and "deploy: bridge" in out
    rig = load_rig(rig_path)
    t = rig.training
    assert (t.control_dt_s, t.physics_dt_s, t.controller) == (
        0.05,
        0.01,
        "pd_joint_target_delta_pos",
    )
    assert (t.pd_stiffness_nm_rad, t.pd_force_limit_nm, t.action_delta_limit_rad) == (
        1000.0,
        100.0,
        0.05,
    )
    assert t.top_speed_rad_s == pytest.approx(1.0)
    assert (t.finger_friction, t.object_mass_kg) == (2.0, 0.003125)
    for key in (
        "training.control_dt_s",
        "training.pd_stiffness_nm_rad",
        "training.finger_friction",
        "training.origin_from_pan_axis_m",
        "camera.training_fov_deg",
        "camera.training_resolution",
    ):
        assert rig.provenance(key) == "from ManiSkill", key
        assert rig.stated(key)
    assert rig.provenance("control.dt_s") == "guessed"
    assert rig.provenance("training.obs_noise_std_rad") == "default"
    assert rig.camera is not None and rig.camera.training_fov_deg == pytest.approx(52.0)
    assert rig.camera.training_resolution == (128, 128)
    assert rig.deploy.robot_name == "so101_follower"


def test_without_the_export_init_writes_no_training(tmp_path: Path, demo_model: Path) -> None:
    code, out, rig_path = _init(tmp_path, demo_model)
    assert code == 0, out
    assert "[training]" not in rig_path.read_text()


def test_a_bad_export_names_the_file_the_field_and_the_fix(tmp_path: Path) -> None:
    data = grasp_cube_export()
    data["control_freq_hz"] = 0
    with pytest.raises(InputError, match="control_freq_hz.*export_config"):
        read_maniskill_config(write_export(tmp_path / "t.json", data))
    (tmp_path / "x.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="format"):
        read_maniskill_config(tmp_path / "x.json")
    with pytest.raises(InputError, match="camera"):
        read_maniskill_config(
            write_export(tmp_path / "t.json", grasp_cube_export()), camera="wrist"
        )


@pytest.mark.skipif(
    importlib.util.find_spec("mani_skill") is not None, reason="mani_skill is installed here"
)
def test_maniskill_env_id_without_mani_skill_names_the_package(
    tmp_path: Path, demo_model: Path
) -> None:
    code, out, _ = _init(tmp_path, demo_model, "--maniskill", "SO100GraspCube-v1")
    assert code == 2
    assert "mani_skill" in out and "pip install mani-skill==3.0.1" in out
    assert "--maniskill-config" in out


@pytest.mark.parametrize(
    "extra, field",
    [
        (["--agent", "so100"], "--agent"),
        (["--env-kwargs", "{}"], "--env-kwargs"),
    ],
)
def test_export_arguments_without_maniskill_are_refused(
    tmp_path: Path, demo_model: Path, extra: list[str], field: str
) -> None:
    code, out, rig_path = _init(tmp_path, demo_model, *extra)
    assert code == 2 and field in out and "--maniskill ENV_ID" in out
    assert not rig_path.exists()


@pytest.mark.parametrize("kwargs", ['{"domain_randomization": fals}', "[1, 2]"])
def test_env_kwargs_that_are_no_json_object_are_named(
    tmp_path: Path, demo_model: Path, kwargs: str
) -> None:
    """Refused before ManiSkill is looked for, so the user learns of it without it."""
    code, out, rig_path = _init(
        tmp_path, demo_model, "--maniskill", "SO100GraspCube-v1", "--env-kwargs", kwargs
    )
    assert code == 2 and "--env-kwargs" in out and "JSON object" in out
    assert "Traceback" not in out and not rig_path.exists()
