"""Servo families: the STS3215 (the SO-101's servo) and XL330 constants, their boxes against
BAM's own fits, and the rig hook the SO-101 actuator branch calls."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.families import (
    LEROBOT_P_COEFFICIENT,
    STS3215,
    XL330,
    find_family,
    servo_family,
    servo_family_for,
)
from simgap.actuator.servo import bam_drive, rig_drive
from simgap.errors import NameNotFoundError
from simgap.rig import load_rig
from tests.factories import write_rig

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bam_params"


def test_sts3215_firmware_constants() -> None:
    assert STS3215.error_gain == 0.166 and STS3215.max_pwm == 0.97 and STS3215.vin_v == 7.4
    assert STS3215.max_velocity_rad_s == pytest.approx(3400 * 2 * math.pi / 4096)
    assert STS3215.kp_default == 32 and LEROBOT_P_COEFFICIENT == 16
    assert XL330.error_gain == pytest.approx((4096 / (2 * math.pi)) / (256 * 885))
    assert servo_family("STS3215-C001") is STS3215 and find_family("mx64") is None
    with pytest.raises(NameNotFoundError, match="sts3215"):
        servo_family("mx64")


@pytest.mark.parametrize("folder,family", [("xl330", XL330), ("feetech_sts3215_7_4V", STS3215)])
def test_bam_fits_lie_inside_the_boxes_and_motor_curve(folder: str, family) -> None:  # type: ignore[no-untyped-def]
    if not DATA.is_dir():
        pytest.skip("../shared/data/bam_params is absent")
    for path in sorted((DATA / folder).glob("m*.json")):
        p = json.loads(path.read_text())
        assert family.kt_box[0] <= p["kt"] <= family.kt_box[1], path
        assert family.r_box[0] <= p["R"] <= family.r_box[1], path
        assert family.armature_box[0] <= p["armature"] <= family.armature_box[1], path
        v = family.curve_violation(
            np.array(p["kt"]),
            np.array(p["R"]),
            np.array(p["friction_base"]),
            np.array(p["friction_viscous"]),
        )
        assert float(v) == 0.0, path
    # the fit that overfitted the XL330 (R 15.3 ohm, kt^2/R 0.078) is outside both
    assert not XL330.r_box[0] <= 15.3 <= XL330.r_box[1]
    assert XL330.curve_violation(np.array(1.09), np.array(15.3), np.array(0.0), np.array(0.0)) > 0


def test_rig_names_sts3215_and_the_lerobot_gain(tmp_path: Path) -> None:
    model = tmp_path / "m.xml"
    model.write_text("<mujoco/>")
    rig = load_rig(write_rig(tmp_path / "a", model, '\n[deploy]\nservo_model = "sts3215"\n'))
    fam, kp = servo_family_for(rig)  # type: ignore[misc]
    assert fam is STS3215 and kp == 16.0  # LeRobot's P coefficient
    d = rig_drive(rig)
    assert d is not None and d.family == "sts3215" and d.known
    assert d.gain == pytest.approx(16 * 0.166) and d.max_pwm == 0.97
    rig32 = load_rig(
        write_rig(tmp_path / "b", model, '\n[deploy]\nservo_model = "sts3215"\nservo_p_gain = 32\n')
    )
    assert servo_family_for(rig32)[1] == 32.0  # type: ignore[index]
    plain = load_rig(write_rig(tmp_path / "c", model))
    assert servo_family_for(plain) is None and rig_drive(plain) is None


def test_bam_header_drive_knows_the_family() -> None:
    d = bam_drive({"motor": "xl330", "kp": 400, "vin": 7.4})
    assert d.family == "xl330" and d.gain == pytest.approx(400 * XL330.error_gain)
    assert bam_drive({"motor": "mx64", "kp": 32, "vin": 15}).family is None
