"""``simgap init`` says which of degrees and LeRobot's -100..100 body range a dataset looks
like, from the numbers in its meta/stats.json, and how to tell when they cannot say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from tests.factories import write_so101_info

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def _units_line(
    tmp_path: Path,
    demo_model: Path,
    lo: list[float] | None = None,
    hi: list[float] | None = None,
    calibration: dict | None = None,
    stats_text: str | None = None,
) -> str:
    ds = tmp_path / "ds"
    write_so101_info(ds)
    if lo is not None:
        stats_text = json.dumps({"observation.state": {"min": lo, "max": hi, "mean": [0.0] * 6}})
    if stats_text is not None:
        (ds / "meta" / "stats.json").write_text(stats_text)
    argv = ["init", str(ds), "--model", str(demo_model), "--out", str(tmp_path / "rig.toml")]
    if calibration is not None:
        (tmp_path / "arm.json").write_text(json.dumps(calibration))
        argv += ["--calibration", str(tmp_path / "arm.json")]
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.stdout.splitlines() if "units:" in ln)
    assert 'unit = "m100"' in line  # the -100..100 alternative is always named
    return line


def test_a_body_joint_past_100_is_degrees(tmp_path: Path, demo_model: Path) -> None:
    line = _units_line(
        tmp_path,
        demo_model,
        [-40.0, -95.0, -80.0, -60.0, -152.5, 0.0],
        [35.0, 60.0, 90.0, 70.0, 148.0, 100.0],
    )
    assert "meta/stats.json" in line and "wrist_roll reads -152.5..148.0" in line
    assert "past ±100, so degrees, as written" in line


def test_every_body_joint_within_100_and_one_at_its_end_is_m100(
    tmp_path: Path, demo_model: Path
) -> None:
    # the gripper's 0..100 is not a body joint: its 100 decides nothing
    line = _units_line(
        tmp_path,
        demo_model,
        [-40.0, -100.0, -80.0, -60.0, -30.0, 0.0],
        [35.0, 60.0, 100.0, 70.0, 30.0, 100.0],
    )
    assert "looks like -100..100" in line
    assert "shoulder_lift, elbow_flex at exactly ±100" in line
    assert 'set unit = "m100" and range_rad' in line


def test_within_100_and_short_of_the_ends_cannot_tell_and_says_how(
    tmp_path: Path, demo_model: Path
) -> None:
    line = _units_line(
        tmp_path,
        demo_model,
        [-40.0, -95.0, -80.0, -60.0, -30.0, 0.0],
        [35.0, 60.0, 90.0, 70.0, 30.0, 100.0],
    )
    assert "none at exactly ±100, which either unit can give" in line
    assert "widest: shoulder_lift reads -95.0..60.0" in line
    assert "(range_max - range_min) / 2 * 360 / 4095" in line and "--calibration" in line


def test_the_calibration_decides_a_joint_past_its_degrees_reach(
    tmp_path: Path, demo_model: Path
) -> None:
    # wrist_flex calibrated over 1024 ticks reaches at most 45 degrees; it reads 70
    cal = {
        j: {
            "id": i + 1,
            "drive_mode": 0,
            "homing_offset": 0,
            "range_min": 1000,
            "range_max": 3600 if j != "wrist_flex" else 2024,
        }
        for i, j in enumerate(JOINTS)
    }
    line = _units_line(
        tmp_path,
        demo_model,
        [-40.0, -95.0, -80.0, -60.0, -30.0, 0.0],
        [35.0, 60.0, 90.0, 70.0, 30.0, 100.0],
        calibration=cal,
    )
    assert "wrist_flex reads -60.0..70.0, past the ±45.0 degrees" in line
    assert "looks like -100..100" in line


@pytest.mark.parametrize(
    "stats",
    [None, "{not json", '{"action": {}}', '{"observation.state": {"min": [1, 2], "max": [3, 4]}}'],
)
def test_without_usable_stats_it_says_how_to_tell(
    tmp_path: Path, demo_model: Path, stats: str | None
) -> None:
    line = _units_line(tmp_path, demo_model, stats_text=stats)
    assert "so init could not check" in line and "meta/stats.json" in line
    assert "past ±100 means degrees" in line and "exactly -100 or 100" in line
