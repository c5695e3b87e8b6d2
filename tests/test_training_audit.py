"""The training audit (issue 35, item 2): the post-mortem's setup (training at 10 Hz, run at
15 Hz with actions scaled to 15 %, friction 2.0 and a 3 g cube, an so101_follower behind
LeRobotRealAgent) reports every disagreement with its numbers; a config that matches the rig
reports none; a deciding value that is a default or a guess is not measured, naming the key.
No ManiSkill needed: the training side is an export fixture read by ``simgap init``'s reader.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simgap.branches.context import Context
from simgap.branches.training import assess
from simgap.cli import app
from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Finding, Verdict
from simgap.maniskill.config import read_maniskill_config
from simgap.maniskill.training_toml import camera_lines, training_lines
from simgap.plumbing.training import audit_training
from simgap.plumbing.training_drive import servo_drive
from simgap.plumbing.training_findings import RigSide
from simgap.rig import Rig, load_rig
from simgap.sim.kinematics import rig_mount_points
from tests.factories import SO101_RIG
from tests.maniskill_fixtures import grasp_cube_export, write_export

CAMERA = (0.0, 0.055, -0.045)
"""The demo model's wrist_cam position in its body camera_mount [m] (fovy 70 deg)."""


def _rig(
    tmp: Path,
    model: Path,
    export: dict[str, Any],
    *,
    real_dt: str,
    deploy: str,
    reference_from_axis: tuple[float, float] = (0.0, 0.0),
) -> Rig:
    cfg = read_maniskill_config(write_export(tmp / "training.json", export))
    text = SO101_RIG.format(model=str(model)).replace(
        "dt_s = 0.0333333", f"dt_s = 0.0333333\nreal_dt_s = {real_dt}"
    )
    probe = load_rig(_write(tmp / "probe.toml", text))
    ax = rig_mount_points(probe.model_path, probe.joints[0].name, None)["pan_axis_m"]
    assert isinstance(ax, tuple)
    ref = [ax[0] + reference_from_axis[0], ax[1] + reference_from_axis[1], ax[2]]
    text += "\n".join(
        [
            "",
            *training_lines(cfg),
            "",
            "[camera]",
            'name = "wrist_cam"',
            *camera_lines(cfg),
            "",
            "[deploy]",
            deploy,
            "",
            "[frame]",
            f"origin_reference_m = {ref}",
            'origin_reference_name = "the pan axis"',
            "",
        ]
    )
    return load_rig(_write(tmp / "rig.toml", text))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _run(rig: Rig) -> dict[str, Finding]:
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    return {str(f.figures.check): f for f in found}


POST_MORTEM_DEPLOY = """action_scale = 0.15
servo_model = "sts3215"
servo_p_gain = 16
finger_friction = 0.4
object_mass_kg = 0.019
bridge = "LeRobotRealAgent"
robot_name = "so101_follower\""""


@pytest.fixture
def post_mortem(tmp_path: Path, demo_model: Path) -> dict[str, Finding]:
    # Squint on ManiSkill: 10 Hz control, +-0.05 rad a step, PD 1e3 / 100 N m, jaws at 2.0,
    # a 25 mm cube of density 200 (3.1 g), the origin 3.9 cm behind the pan axis, a 52 deg
    # camera at its mount's origin
    export = grasp_cube_export(control_hz=10.0, pan_offset=(0.0, -0.039, 0.0165))
    return _run(_rig(tmp_path, demo_model, export, real_dt="0.0666667", deploy=POST_MORTEM_DEPLOY))


def test_the_post_mortem_reports_every_disagreement_with_its_numbers(
    post_mortem: dict[str, Finding],
) -> None:
    f = post_mortem
    assert all(x.verdict is Verdict.IMPLICATED for x in f.values()), {
        k: (x.verdict, x.summary) for k, x in f.items()
    }
    assert set(f) == {
        "control_rate",
        "top_speed",
        "pd_drive",
        "finger_friction",
        "object_mass",
        "origin",
        "camera_fov",
        "camera_mount",
        "name_gate",
    }
    rate = f["control_rate"].figures
    assert rate.training_hz == pytest.approx(10.0)
    assert rate.deployed_hz == pytest.approx(15.0, rel=1e-5)
    assert "10 Hz" in f["control_rate"].summary and "15 Hz" in f["control_rate"].summary
    speed = f["top_speed"].figures  # 0.05 x 0.15 x 15 Hz against 0.05 x 10 Hz: 22 %
    assert speed.training_top_speed_rad_s == pytest.approx(0.5)
    assert speed.deployed_top_speed_rad_s == pytest.approx(0.1125, rel=1e-5)
    assert speed.speed_ratio == pytest.approx(0.225, rel=1e-5)
    assert "22 %" in f["top_speed"].summary
    k, tau = servo_drive("sts3215", 16.0)
    assert f["pd_drive"].figures.stiffness_ratio == pytest.approx(1000.0 / k)
    assert f["pd_drive"].figures.force_ratio == pytest.approx(100.0 / tau)
    assert f["finger_friction"].figures.ratio == pytest.approx(5.0)
    assert "2" in f["finger_friction"].summary and "0.4" in f["finger_friction"].summary
    assert f["object_mass"].figures.training == pytest.approx(0.003125)
    assert f["object_mass"].figures.ratio == pytest.approx(0.003125 / 0.019)
    assert f["origin"].figures.offset_m == pytest.approx(0.039, abs=1e-4)
    assert "39.0 mm" in f["origin"].summary
    assert f["camera_fov"].figures.difference_deg == pytest.approx(52.0 - 70.0, abs=1e-3)
    assert f["camera_mount"].figures.mount_offset_m == pytest.approx(math.hypot(*CAMERA))
    gate = f["name_gate"]
    assert "so101_follower" in gate.summary and "6.8 deg" in gate.summary
    assert gate.figures.elbow_correction_deg == 6.8
    for x in f.values():
        assert x.next_step, x.title
    assert f["control_rate"].details.provenance["training.control_dt_s"] == "from ManiSkill"


def test_a_config_that_matches_the_rig_reports_none(tmp_path: Path, demo_model: Path) -> None:
    k, tau = servo_drive("sts3215", 16.0)
    export = grasp_cube_export(
        control_hz=15.0,
        stiffness=k,
        force_limit=tau,
        friction=0.4,
        density=0.019 / 0.025**3,
        fov_deg=70.0,
        pose=CAMERA,
        pan_offset=(0.0, -0.039, 0.0165),
    )
    deploy = POST_MORTEM_DEPLOY.replace("0.15", "1.0").replace("so101_follower", "so100_follower")
    found = _run(
        _rig(
            tmp_path,
            demo_model,
            export,
            real_dt="0.0666667",
            deploy=deploy,
            reference_from_axis=(-0.039, 0.0),
        )
    )
    assert len(found) == 9
    assert all(x.verdict is Verdict.ELIMINATED for x in found.values()), {
        k: (x.verdict, x.summary) for k, x in found.items()
    }


def test_a_default_or_guessed_deciding_value_is_not_measured(
    tmp_path: Path, demo_model: Path
) -> None:
    deploy = "\n".join(
        ln
        for ln in POST_MORTEM_DEPLOY.splitlines()
        if not ln.startswith(("action_scale", "servo_p_gain", "robot_name"))
    )
    rig = _rig(
        tmp_path,
        demo_model,
        grasp_cube_export(control_hz=10.0),
        real_dt="0.0666667",
        deploy=deploy.replace("finger_friction = 0.4", "finger_friction = 0.4   # guessed"),
    )
    f = _run(rig)
    for check, key in (
        ("top_speed", "deploy.action_scale"),
        ("pd_drive", "deploy.servo_p_gain"),
        ("finger_friction", "deploy.finger_friction"),
        ("name_gate", "deploy.robot_name"),
    ):
        assert f[check].verdict is Verdict.NOT_MEASURED, (check, f[check].summary)
        assert key in f[check].needs and key in f[check].summary
    assert "guessed" in f["finger_friction"].summary
    assert f["control_rate"].verdict is Verdict.IMPLICATED  # its values are all stated
    _check_typed(f)  # not measured: only the check's name, the rest not measured


def _check_typed(found: dict[str, Finding]) -> None:
    """Every check's Finding carries its record of simgap.figures.training (and its
    provenance details), which survive findings.json's round trip."""
    from simgap.figures.training import training_records
    from tests.typed_records import check_typed

    for check, f in found.items():
        figures, details = training_records(check)
        check_typed(f, figures, details)
        assert f.typed(figures).check == check  # type: ignore[attr-defined]


def test_every_check_carries_its_typed_figures(post_mortem: dict[str, Finding]) -> None:
    _check_typed(post_mortem)
    assert post_mortem["object_mass"].key_unit == "1"  # the ratio; the masses are in kg


def test_the_dataset_rate_is_held_against_training_too() -> None:
    from simgap.rig import JointMap, Training
    from simgap.units import JointUnit

    rig = Rig(
        name="r",
        model_path=Path("m.xml"),
        control_dt_s=0.1,
        joints=(JointMap("a", "a", JointUnit("rad")),),
        training=Training(control_dt_s=0.1),
    )
    f = audit_training(rig, RigSide(dataset_dt_s=1 / 15))[0]
    assert f.verdict is Verdict.IMPLICATED and f.figures.dataset_hz == pytest.approx(15.0)
    f = audit_training(rig, RigSide(dataset_dt_s=0.1))[0]
    assert f.verdict is Verdict.ELIMINATED


def test_a_rig_without_a_training_config_gets_one_not_measured(
    tmp_path: Path, demo_model: Path
) -> None:
    rig = load_rig(_write(tmp_path / "rig.toml", SO101_RIG.format(model=str(demo_model))))
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    assert [f.verdict for f in found] == [Verdict.NOT_MEASURED]
    assert "maniskill" in found[0].next_step
    assert "the rig has no [training] section" in found[0].summary


def test_a_training_section_without_a_config_is_not_told_to_add_the_section(
    tmp_path: Path, demo_model: Path
) -> None:
    """The demo's [training] states a rate, noise and workspace but no training config: the
    finding names what it states and the keys it lacks, not 'add [training]'."""
    from simgap.cli._app import key_text

    text = SO101_RIG.format(model=str(demo_model)) + (
        "\n[training]\ncontrol_dt_s = 0.05\nobs_noise_std_rad = 0.002\n"
    )
    rig = load_rig(_write(tmp_path / "rig.toml", text))
    (f,) = assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    assert f.verdict is Verdict.NOT_MEASURED
    assert (
        "states control_dt_s, obs_noise_std_rad, none of the training config's keys" in f.summary
    ), f.summary
    key = key_text(f.to_dict())
    assert key.startswith("add [training] env_id, controller and gains"), key
    assert "config in [training]" not in key


def test_simgap_training_prints_the_findings(tmp_path: Path, demo_model: Path) -> None:
    _rig(
        tmp_path,
        demo_model,
        grasp_cube_export(control_hz=10.0),
        real_dt="0.0666667",
        deploy=POST_MORTEM_DEPLOY,
    )
    r = CliRunner().invoke(app, ["training", str(tmp_path / "rig.toml")])
    assert r.exit_code == 0, r.output
    assert "[implicated] Control rate (training config)" in r.output
    assert "[implicated] LeRobot name gate (training config)" in r.output
