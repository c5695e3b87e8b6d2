"""A LeRobot calibration against the model (range, sign, zero, mm at the gripper), two
calibrations compared, and ``simgap calibration check|compare``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.calibration.against_model import check_against_model
from simgap.calibration.compare import compare_calibrations
from simgap.calibration.finding import check_finding, compare_finding
from simgap.cli import app
from simgap.evidence.calibration import read_calibration
from simgap.figures.calibration import CheckDetails, CheckFigures, CompareFigures
from simgap.finding import Verdict
from simgap.rig import load_rig
from tests.test_calibration import JOINTS, PLANT_TICKS, _files, _rig
from tests.typed_records import check_typed


def test_check_reports_the_planted_offset_and_flip_and_nothing_on_a_good_file(
    tmp_path: Path, demo_model: Path
) -> None:
    good, planted = _files(tmp_path, demo_model)
    rig = load_rig(_rig(tmp_path, demo_model))
    clean = check_finding(check_against_model(read_calibration(good), rig))
    assert clean.verdict is Verdict.ELIMINATED, clean.summary
    assert clean.typed(CheckFigures).largest_error_at_gripper_mm == 0.0
    check_typed(clean, CheckFigures, CheckDetails)
    f = check_finding(check_against_model(read_calibration(planted), rig))
    assert f.verdict is Verdict.IMPLICATED
    fig = f.typed(CheckFigures)
    sl = fig.joints["shoulder_lift"]
    truth = PLANT_TICKS * 360 / 4096
    lo, hi = sl.zero_offset_interval_deg
    assert lo <= truth <= hi and hi - lo < 0.2
    assert sl.past_limits_deg[1] == pytest.approx(truth, abs=0.2)  # past the upper limit
    assert sl.error_at_gripper_mm is not None
    assert 40.0 < sl.error_at_gripper_mm < 120.0  # 17 deg on a ~0.35 m arm: 103 mm
    grip = fig.joints["gripper"]
    assert grip.reversed and any("0 % open" in p for p in grip.problems)
    others = [j for j in JOINTS if j not in ("shoulder_lift", "gripper")]
    assert not any(fig.joints[j].problems for j in others)
    assert "shoulder_lift" in f.summary and "gripper" in f.summary


def test_compare_names_what_moved(tmp_path: Path, demo_model: Path) -> None:
    good, planted = _files(tmp_path, demo_model)
    changes = compare_calibrations(read_calibration(good), read_calibration(planted))
    moved = {c.motor: c for c in changes if c.moved}
    assert set(moved) == {"shoulder_lift", "gripper"}
    assert math.degrees(moved["shoulder_lift"].zero_shift_rad or 0) == pytest.approx(
        PLANT_TICKS * 360 / 4096
    )
    assert moved["gripper"].changed == ("drive_mode",)
    f = compare_finding(changes, "good.json", "planted.json", {"shoulder_lift": 0.07})
    assert f.verdict is Verdict.IMPLICATED and "70.0 mm" in f.summary
    assert "drive_mode 0 -> 1" in f.summary
    check_typed(f, CompareFigures)
    shift = f.typed(CompareFigures).motors["shoulder_lift"]
    assert shift.moved and shift.error_at_gripper_mm == pytest.approx(70.0)
    same = compare_finding(
        compare_calibrations(read_calibration(good), read_calibration(good)), "a", "b"
    )
    assert same.verdict is Verdict.ELIMINATED


def test_cli_check_and_compare(tmp_path: Path, demo_model: Path) -> None:
    good, planted = _files(tmp_path, demo_model)
    rig = _rig(tmp_path, demo_model)
    r = CliRunner().invoke(
        app,
        [
            "calibration",
            "check",
            str(planted),
            "--rig",
            str(rig),
            "--json",
            str(tmp_path / "c.json"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "[implicated]" in r.output and "shoulder_lift" in r.output
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["findings"][0]["branch"] == "calibration"
    r = CliRunner().invoke(
        app, ["calibration", "compare", str(good), str(planted), "--rig", str(rig)]
    )
    assert r.exit_code == 0, r.output
    assert "mm at the gripper" in r.output and "drive_mode 0 -> 1" in r.output
    r = CliRunner().invoke(
        app, ["calibration", "check", str(tmp_path / "nope.json"), "--rig", str(rig)]
    )
    assert r.exit_code == 2 and "no such file" in r.output
