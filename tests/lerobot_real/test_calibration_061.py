"""LeRobot calibration files against the real LeRobot 0.6.1: simgap's normalisation is
LeRobot's own (``FeetechMotorsBus._normalize`` / ``_unnormalize``, every mode and drive mode),
and a dataset recorded by ``lerobot-record`` on the fake arm through a calibration with a
planted zero offset and a flipped gripper drive mode is initialised and checked by simgap
(issue 36's first must-show).

Runs where LeRobot is installed (.ci/run's Python 3.12 step).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

lerobot = pytest.importorskip("lerobot")
pytestmark = pytest.mark.lerobot_real

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MODEL = ROOT / "src" / "simgap" / "demo" / "so101_demo.xml"
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
PLANT_TICKS = 193  # 16.96 deg on shoulder_lift


def _env(tmp: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_LEROBOT_HOME=str(tmp / "hf"),
        HF_LEROBOT_CALIBRATION=str(tmp / "hf" / "calibration"),
        MUJOCO_GL=env.get("MUJOCO_GL", "osmesa"),
        PYTHONPATH=str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", ""),
    )
    return env


class _Bus:
    """What LeRobot's ``SerialMotorsBus._normalize`` / ``_unnormalize`` read off a Feetech
    bus, without the serial port (``FeetechMotorsBus()`` needs the feetech-servo-sdk, which
    the CI venv does not install): LeRobot's own methods run on it unchanged."""

    def __init__(self, motors: dict, calibration: dict) -> None:
        from lerobot.motors.feetech import FeetechMotorsBus
        from lerobot.motors.feetech.tables import MODEL_RESOLUTION

        self.motors, self.calibration = motors, calibration
        self.apply_drive_mode = FeetechMotorsBus.apply_drive_mode
        self.model_resolution_table = MODEL_RESOLUTION
        self._names = {m.id: n for n, m in motors.items()}

    def _id_to_name(self, id_: int) -> str:
        return self._names[id_]

    def _id_to_model(self, id_: int) -> str:
        return self.motors[self._names[id_]].model


@pytest.mark.parametrize("drive", [0, 1])
def test_normalisation_is_lerobots_own(drive: int) -> None:
    from lerobot.motors import Motor, MotorCalibration, MotorNormMode
    from lerobot.motors.motors_bus import SerialMotorsBus

    from simgap.values import calibration as ours

    modes = {
        "pan": MotorNormMode.DEGREES,
        "lift": MotorNormMode.RANGE_M100_100,
        "gripper": MotorNormMode.RANGE_0_100,
    }
    bus = _Bus(
        {n: Motor(i + 1, "sts3215", m) for i, (n, m) in enumerate(modes.items())},
        {n: MotorCalibration(i + 1, drive, -1500, 812, 3210) for i, n in enumerate(modes)},
    )
    assert bus.apply_drive_mode  # Feetech applies drive_mode (Dynamixel does not)
    assert bus.model_resolution_table["sts3215"] == ours.RESOLUTION
    mine = ours.MotorCalibration(1, drive, -1500, 812, 3210)
    for i, (name, mode) in enumerate(modes.items()):
        for t in range(600, 3400, 13):
            want = SerialMotorsBus._normalize(bus, {i + 1: t})[i + 1]  # type: ignore[arg-type]
            got = float(ours.normalize(t, mine, mode.value))  # type: ignore[arg-type]
            assert got == pytest.approx(want, abs=1e-9), (name, t)
        for v in np.linspace(-180.0, 180.0, 97):
            want_t = SerialMotorsBus._unnormalize(bus, {i + 1: float(v)})[i + 1]  # type: ignore[arg-type]
            got_t = int(ours.unnormalize(float(v), mine, mode.value))  # type: ignore[arg-type]
            assert got_t == want_t, (name, v)


def _files(tmp: Path) -> tuple[Path, Path]:
    import simgap.fakearm.calibration as fake_cal
    from simgap.sim.load import joint_ranges

    good = fake_cal.default_calibration(joint_ranges(MODEL, JOINTS))
    bad = dict(good)
    s, g = good["shoulder_lift"], good["gripper"]
    bad["shoulder_lift"] = fake_cal.MotorCalibration(
        s.id, 0, s.homing_offset, s.range_min + PLANT_TICKS, s.range_max + PLANT_TICKS
    )
    bad["gripper"] = fake_cal.MotorCalibration(g.id, 1, g.homing_offset, g.range_min, g.range_max)
    return (
        fake_cal.save_calibration(tmp / "good.json", good),
        fake_cal.save_calibration(tmp / "planted.json", bad),
    )


def _record(tmp: Path, root: Path, calibration: Path) -> None:
    cmd = [
        str(BIN / "lerobot-record"),
        "--robot.type=simgap_fake_so101",
        "--robot.id=cal",
        f"--robot.calibration_path={calibration}",
        "--teleop.type=simgap_scripted",
        "--teleop.fps=5",
        "--dataset.fps=5",
        "--dataset.repo_id=local/simgap_cal",
        f"--dataset.root={root}",
        "--dataset.single_task=wave",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=3",
        "--dataset.reset_time_s=0",
        "--dataset.push_to_hub=false",
        "--dataset.video=false",
        "--display_data=false",
        "--play_sounds=false",
    ]
    r = subprocess.run(cmd, env=_env(tmp), cwd=tmp, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def _simgap(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simgap", *args],
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_planted_calibration_recorded_by_lerobot_is_found(tmp_path: Path) -> None:
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    good, planted = _files(tmp_path)
    results = {}
    for name, cal in (("good", good), ("planted", planted)):
        root = tmp_path / f"ds_{name}"
        _record(tmp_path, root, cal)
        rig = tmp_path / f"{name}.toml"
        r = _simgap(
            tmp_path,
            "init",
            str(root),
            "--model",
            str(MODEL),
            "--out",
            str(rig),
            "--calibration",
            str(cal),
        )
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        out = tmp_path / f"{name}.json"
        r = _simgap(
            tmp_path, "calibration", "check", str(cal), "--rig", str(rig), "--json", str(out)
        )
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        results[name] = (
            load_rig(rig),
            json.loads(out.read_text())["findings"][0],
            read_lerobot_dataset(root),
        )
    rig, clean, _ = results["good"]
    assert clean["verdict"] == "eliminated", clean["summary"]
    assert all(
        abs(j.unit.offset_rad) <= 2 * math.pi / 4096 and j.unit.sign == 1 for j in rig.joints
    )
    rig, f, ds = results["planted"]
    assert f["verdict"] == "implicated"
    from simgap.figures.calibration import CheckFigures
    from simgap.finding import figures_of

    fig = figures_of(f, CheckFigures)
    sl = fig.joints["shoulder_lift"]
    lo, hi = sl.zero_offset_interval_deg
    assert lo <= PLANT_TICKS * 360 / 4096 <= hi  # the planted offset inside its interval
    assert sl.error_at_gripper_mm is not None and sl.error_at_gripper_mm > 40.0
    assert fig.joints["gripper"].reversed
    units = {j.name: j.unit for j in rig.joints}
    # what a careful user writes: degrees, shoulder_lift's zero 17 deg on, the gripper reversed
    assert units["shoulder_lift"].unit == "deg"
    assert units["shoulder_lift"].offset_rad == pytest.approx(math.radians(17.0), abs=0.003)
    assert units["gripper"].unit == "pct" and units["gripper"].sign == -1
    # the scripted leader holds the gripper at 30 %: through the planted file that is the
    # mirrored 70 % of the span from the closed end
    grip = ds.vector("observation.state", 0)[:, JOINTS.index("gripper")].astype(float)
    lo_g = -0.174533
    span = float(units["gripper"].to_rad(0.0) - units["gripper"].to_rad(100.0))
    assert float(np.median(units["gripper"].to_rad(grip))) == pytest.approx(
        lo_g + 0.7 * span, abs=0.03
    )
