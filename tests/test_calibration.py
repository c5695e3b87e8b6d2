"""LeRobot calibration files as evidence: the reader, LeRobot's normalisation, the map to
model angles (checked against the fake arm's own joint angles), the check against the model,
two files compared, and ``simgap init --calibration``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import simgap.fakearm.calibration as fake_cal
from simgap.calibration.against_model import check_against_model
from simgap.calibration.finding import check_finding
from simgap.calibration.mapping import LeRobotMap, gripper_home_rad, joint_unit
from simgap.errors import InputError
from simgap.evidence.calibration import read_calibration
from simgap.figures.calibration import CheckFigures
from simgap.rig import load_rig
from simgap.rig.init.draft import draft_rig
from simgap.sim.load import joint_ranges
from simgap.values.calibration import (
    RAD_PER_TICK,
    MotorCalibration,
    normalize,
    ticks_of,
    unnormalize,
)

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
PLANT_TICKS = 193
"""The planted zero offset on shoulder_lift: 193 ticks = 16.96 deg (the issue's 17 deg)."""


def _dataset(root: Path) -> Path:
    ds = root / "ds"
    (ds / "meta").mkdir(parents=True)
    state = {"dtype": "float32", "shape": [6], "names": [f"{j}.pos" for j in JOINTS]}
    info = {
        "codebase_version": "v3.0",
        "robot_type": "so_follower",
        "fps": 30,
        "features": {"action": state, "observation.state": state},
    }
    (ds / "meta" / "info.json").write_text(json.dumps(info))
    return ds


def _files(tmp: Path, demo_model: Path) -> tuple[Path, Path]:
    """(the arm's correct calibration, one with shoulder_lift's range shifted by
    PLANT_TICKS and the gripper's drive_mode flipped)."""
    ranges = joint_ranges(demo_model, JOINTS)
    good = fake_cal.default_calibration(ranges)
    bad = dict(good)
    s = good["shoulder_lift"]
    bad["shoulder_lift"] = fake_cal.MotorCalibration(
        s.id, 0, s.homing_offset, s.range_min + PLANT_TICKS, s.range_max + PLANT_TICKS
    )
    g = good["gripper"]
    bad["gripper"] = fake_cal.MotorCalibration(g.id, 1, g.homing_offset, g.range_min, g.range_max)
    return (
        fake_cal.save_calibration(tmp / "good.json", good),
        fake_cal.save_calibration(tmp / "planted.json", bad),
    )


def _rig(tmp: Path, demo_model: Path, calibration: Path | None = None, name: str = "rig") -> Path:
    ds = _dataset(tmp) if not (tmp / "ds").exists() else tmp / "ds"
    out = tmp / f"{name}.toml"
    out.write_text(draft_rig(ds, demo_model, out, calibration=calibration).text)
    return out


CAL = MotorCalibration(id=1, drive_mode=0, homing_offset=0, range_min=1000, range_max=3000)


@pytest.mark.parametrize("drive", [0, 1])
@pytest.mark.parametrize("mode", ["degrees", "range_m100_100", "range_0_100"])
def test_normalisation_is_the_fake_arms_and_ticks_of_inverts_it(mode: str, drive: int) -> None:
    c = MotorCalibration(1, drive, 0, 812, 3210)
    fc = fake_cal.MotorCalibration(1, drive, 0, 812, 3210)
    ticks = np.arange(700, 3300, 7)
    ours = normalize(ticks, c, mode)  # type: ignore[arg-type]
    theirs = [fake_cal.normalize(float(t), fc, mode) for t in ticks]  # type: ignore[arg-type]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    values = np.linspace(-150, 150, 61)
    back = unnormalize(values, c, mode)  # type: ignore[arg-type]
    assert back.tolist() == [
        fake_cal.unnormalize(float(v), fc, mode)  # type: ignore[arg-type]
        for v in values
    ]
    inside = ticks[(ticks >= 812) & (ticks <= 3210)]
    np.testing.assert_allclose(
        ticks_of(normalize(inside, c, mode), c, mode),  # type: ignore[arg-type]
        inside,
        atol=1e-9,
    )


def test_reader_names_the_motor_and_key_and_refuses_the_old_layout(tmp_path: Path) -> None:
    p = tmp_path / "c.json"
    good = {
        "shoulder_pan": {
            "id": 1,
            "drive_mode": 0,
            "homing_offset": -2047,
            "range_min": 812,
            "range_max": 3210,
        }
    }
    p.write_text(json.dumps(good))
    cal = read_calibration(p)
    assert cal["shoulder_pan"].mid == 2011.0 and cal.source == p
    for bad, match in (
        (
            {"shoulder_pan": {**good["shoulder_pan"], "range_min": "812"}},
            r"shoulder_pan\.range_min",
        ),
        (
            {"shoulder_pan": {k: v for k, v in good["shoulder_pan"].items() if k != "drive_mode"}},
            r"shoulder_pan\.drive_mode",
        ),
        ({"shoulder_pan": {**good["shoulder_pan"], "range_max": 800}}, r"range_max > range_min"),
        ({"shoulder_pan": {**good["shoulder_pan"], "drive_mode": 2}}, "0 or 1"),
        ({"motor_names": ["a"], "start_pos": [1]}, "older layout"),
        ([], "object"),
    ):
        p.write_text(json.dumps(bad))
        with pytest.raises(InputError, match=match):
            read_calibration(p)
    with pytest.raises(InputError, match="huggingface/lerobot/calibration"):
        read_calibration(tmp_path / "absent.json")


def test_the_map_reads_the_fake_arms_joint_angles_through_a_planted_file(
    tmp_path: Path, demo_model: Path
) -> None:
    """The fake arm reads its encoders through the planted file as LeRobot would; the map
    (and the rig unit a careful user writes from it) gives back the arm's true angles to
    within one count, where the naive reading (degrees straight to radians) is 17 deg off."""
    from simgap.fakearm import FakeSO101, FakeSO101Config

    _, planted = _files(tmp_path, demo_model)
    cal = read_calibration(planted)
    ranges = joint_ranges(demo_model, JOINTS)
    arm = FakeSO101(FakeSO101Config(calibration_path=planted))
    arm.connect()
    try:
        errs, naive = [], []
        goal = {m: v for m, v in arm.get_observation().items() if m.endswith(".pos")}
        for k in range(6):
            goal = {**goal, "shoulder_pan.pos": 10.0 * k, "gripper.pos": 20.0 + 10 * k}
            arm.send_action(goal)
            arm.clock.sleep(0.5)
            obs = arm.get_observation()
            q = arm._sim.qpos()
            for i, m in enumerate(JOINTS):
                lo, hi = ranges[m]
                home = gripper_home_rad(cal[m], lo) if m == "gripper" else (lo + hi) / 2
                mode = "range_0_100" if m == "gripper" else "degrees"
                lm = LeRobotMap(cal[m], mode, home)
                unit = joint_unit(lm)
                errs.append(abs(float(lm.to_rad(obs[f"{m}.pos"])) - q[i]))
                errs.append(abs(float(unit.to_rad(obs[f"{m}.pos"])) - q[i]) - 0.001)
                if m == "shoulder_lift":
                    naive.append(abs(math.radians(obs[f"{m}.pos"]) - q[i]))
    finally:
        arm.disconnect()
    # the fake arm homes at 2048 where LeRobot's half turn reads 2047 (one count) and rounds
    # its encoder (half a count); the deg unit's 1/4096 scale is < 1 mrad here
    assert max(errs) <= 1.5 * RAD_PER_TICK + 1e-9
    assert min(naive) == pytest.approx(PLANT_TICKS * RAD_PER_TICK, abs=2 * RAD_PER_TICK)


def test_init_writes_units_signs_and_offsets_a_careful_user_would(
    tmp_path: Path, demo_model: Path
) -> None:
    good, planted = _files(tmp_path, demo_model)
    rig = load_rig(_rig(tmp_path, demo_model, planted, "planted"))
    units = {j.name: j.unit for j in rig.joints}
    assert [units[j].unit for j in JOINTS] == ["deg"] * 5 + ["pct"]
    assert units["shoulder_lift"].offset_rad == pytest.approx(
        PLANT_TICKS * RAD_PER_TICK, abs=RAD_PER_TICK
    )
    assert all(
        units[j].offset_rad == pytest.approx(0.0, abs=RAD_PER_TICK)
        for j in ("shoulder_pan", "elbow_flex", "wrist_flex", "wrist_roll")
    )
    g = units["gripper"]
    assert g.sign == -1.0  # drive_mode 1: 0 % is the open end
    lo, hi = joint_ranges(demo_model, ["gripper"])["gripper"]
    assert float(g.to_rad(100.0)) == pytest.approx(lo, abs=1e-6)  # 100 % reads closed
    assert "guessed" not in "\n".join(
        line
        for line in (tmp_path / "planted.toml").read_text().splitlines()
        if "offset_rad" in line or "sign" in line
    )
    clean = load_rig(_rig(tmp_path, demo_model, good, "good"))
    assert all(
        j.unit.offset_rad == pytest.approx(0.0, abs=RAD_PER_TICK) and j.unit.sign == 1
        for j in clean.joints
    )
    # the rig written from the planted file reads the recording the way the file does
    f = check_finding(check_against_model(read_calibration(planted), rig))
    # within a count (the fake arm homes at 2048, LeRobot at 2047) and the 4095/4096 scale
    assert all((v.rig_error_deg or 0.0) < 0.15 for v in f.typed(CheckFigures).joints.values())
    naive = check_finding(
        check_against_model(read_calibration(planted), load_rig(_rig(tmp_path, demo_model)))
    )
    assert naive.typed(CheckFigures).joints["shoulder_lift"].rig_error_deg == pytest.approx(
        PLANT_TICKS * 360 / 4096, abs=0.2
    )  # + the count between 2048 and 2047, the scale
