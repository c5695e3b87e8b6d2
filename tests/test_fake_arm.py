"""The fake SO-101: LeRobot's units and clipping, the servos' power-up goal registers, the
wrist camera's frame age, the thermal model, the trace, and the LeRobot adapter."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.errors import InputError, MissingExtraError, NameNotFoundError
from simgap.evidence.trace import read_trace
from simgap.fakearm import FakeCameraConfig, FakeSO101, FakeSO101Config, load_calibration
from simgap.fakearm.bus import AMBIENT_C, HEAT_RATE_C_S, THERMAL_TAU_S, FakeBus
from simgap.fakearm.calibration import (
    MotorCalibration,
    clip_normalized,
    default_calibration,
    normalize,
    save_calibration,
    unnormalize,
)

CAL = MotorCalibration(id=1, drive_mode=0, homing_offset=0, range_min=1000, range_max=3000)
REST = {
    "shoulder_pan": 0.0,
    "shoulder_lift": -1.57,
    "elbow_flex": 1.57,
    "wrist_flex": 0.66,
    "wrist_roll": 0.0,
    "gripper": 0.0,
}  # the demo model's rest keyframe [rad]
GRIPPER_RAD = (-0.174533, 1.7453292)


def test_normalisation_matches_lerobots_formulas() -> None:
    assert normalize(2500, CAL, "range_m100_100") == pytest.approx((1500 / 2000) * 200 - 100)
    assert normalize(4000, CAL, "range_m100_100") == 100.0  # clipped to the range
    assert normalize(1500, CAL, "range_0_100") == pytest.approx(25.0)
    assert normalize(4000, CAL, "degrees") == pytest.approx((4000 - 2000) * 360 / 4095)
    rev = MotorCalibration(1, 1, 0, 1000, 3000)
    assert normalize(1500, rev, "range_0_100") == pytest.approx(75.0)
    assert normalize(1500, rev, "range_m100_100") == pytest.approx(50.0)
    assert unnormalize(150.0, CAL, "range_m100_100") == 3000  # clipped to +100
    assert unnormalize(-20.0, CAL, "range_0_100") == 1000
    assert unnormalize(200.0, CAL, "degrees") == int(200 * 4095 / 360 + 2000)  # not clipped
    assert clip_normalized(-300.0, "degrees") == -300.0


def test_calibration_file_round_trip_and_errors(tmp_path: Path) -> None:
    cal = default_calibration({m: (-1.0, 1.0) for m in REST})
    half = round(1.0 * 4096 / (2 * math.pi))
    assert cal["elbow_flex"].range_min == 2048 - half and cal["gripper"].id == 6
    p = save_calibration(tmp_path / "fake.json", cal)
    assert load_calibration(p) == cal
    raw = json.loads(p.read_text())
    del raw["gripper"]
    p.write_text(json.dumps(raw))
    with pytest.raises(InputError, match="gripper"):
        load_calibration(p)


def _ticks(q: float, lo: float, hi: float) -> float:
    return round(2048 + (q - (lo + hi) / 2) * 4096 / (2 * math.pi))


def test_observation_units_degrees_and_m100() -> None:
    deg = FakeSO101(FakeSO101Config(write_goal_before_torque=True))
    deg.connect()
    obs = deg.get_observation()
    v = _ticks(-1.57, -1.7453293, 1.7453293)
    assert obs["shoulder_lift.pos"] == pytest.approx((v - 2048) * 360 / 4095, abs=0.1)
    g = _ticks(0.0, *GRIPPER_RAD)
    gmin, gmax = (
        2048 - round(0.9599311 * 4096 / (2 * math.pi)),
        2048 + round(0.9599311 * 4096 / (2 * math.pi)),
    )
    assert obs["gripper.pos"] == pytest.approx((g - gmin) / (gmax - gmin) * 100, abs=0.1)
    assert set(obs) == set(deg.observation_features) == set(deg.action_features)
    deg.disconnect()
    m100 = FakeSO101(FakeSO101Config(use_degrees=False, write_goal_before_torque=True))
    m100.connect()
    o = m100.get_observation()
    half = round(1.7453293 * 4096 / (2 * math.pi))
    assert o["shoulder_lift.pos"] == pytest.approx(
        (v - (2048 - half)) / (2 * half) * 200 - 100, abs=0.1
    )
    assert o["gripper.pos"] == pytest.approx(obs["gripper.pos"], abs=0.1)  # always 0..100
    sent = m100.send_action({"shoulder_lift.pos": 150.0, "gripper.pos": -5.0})
    assert sent == {"shoulder_lift.pos": 100.0, "gripper.pos": 0.0}
    with pytest.raises(NameNotFoundError, match="shoulder_pan.pos"):
        m100.send_action({"shoulder_pan": 1.0})
    m100.disconnect()


def test_degrees_are_not_clipped_but_the_joint_stops_at_its_limit() -> None:
    r = FakeSO101(FakeSO101Config(write_goal_before_torque=True))
    r.connect()
    assert r.send_action({"wrist_roll.pos": 200.0}) == {"wrist_roll.pos": 200.0}
    r.clock.sleep(1.0)
    limit = math.degrees(2.74385)
    assert r.get_observation()["wrist_roll.pos"] == pytest.approx(limit, abs=2.0)
    r.disconnect()


def test_power_up_goal_registers_read_zero_and_torque_drives_toward_them() -> None:
    r = FakeSO101(FakeSO101Config())
    r.connect()  # like LeRobot: torque back on without writing goal = present
    assert r.bus is not None
    assert all(r.bus.read("Goal_Position", m) == 0 for m in REST)
    r.clock.sleep(1.5)
    now = r.present_ticks()
    # tick 0 is below every range: the joints slam into their low limits (shoulder_lift
    # stops where the folded-down arm meets the table)
    at_low = [m for m, cal in r.calibration.items() if now[m] <= cal.range_min + 40]
    assert len(at_low) >= 5 and "elbow_flex" in at_low and "wrist_flex" in at_low
    r.disconnect()
    ok = FakeSO101(FakeSO101Config(write_goal_before_torque=True))
    ok.connect()
    start = ok.present_ticks()
    ok.clock.sleep(1.5)
    moved = {m: abs(v - start[m]) for m, v in ok.present_ticks().items()}
    assert max(moved.values()) < 30
    ok.disconnect()


def test_thermal_model_matches_first_order_solution() -> None:
    bus = FakeBus(["a", "b"], lambda: np.zeros(2), lambda i, g: None, lambda i, on: None)
    for _ in range(40):
        bus.heat(np.array([0.5, 0.0]), 0.5)
    steady = AMBIENT_C + HEAT_RATE_C_S * 0.25 * THERMAL_TAU_S
    expect = steady + (AMBIENT_C - steady) * math.exp(-20.0 / THERMAL_TAU_S)
    assert bus.temperature[0] == pytest.approx(expect, rel=1e-9)
    assert bus.temperature[1] == AMBIENT_C
    assert bus.read("Present_Temperature", "a") == round(expect)


def test_camera_frame_age_and_reset(tmp_path: Path) -> None:
    cfg = FakeSO101Config(
        write_goal_before_torque=True,
        trace_path=tmp_path / "t.jsonl",
        cameras={"wrist": FakeCameraConfig(fps=10.0, height=24, width=32)},
    )
    r = FakeSO101(cfg)
    r.connect()
    assert r.observation_features["wrist"] == (24, 32, 3)
    r.clock.sleep(0.26)
    obs = r.get_observation()
    img = obs["wrist"]
    assert img.shape == (24, 32, 3) and img.dtype == np.uint8
    assert r.frame_age_s == pytest.approx(0.064, abs=1e-9)
    t_img, frame = r.camera_frame()  # what the plugin's LeRobot camera reads
    assert t_img == pytest.approx(0.2) and np.array_equal(frame, img)
    r.send_action({"gripper.pos": 50.0})
    r.reset_scene((0.22, 0.05))
    r.get_observation()  # same capture slot: the frame from before the reset
    r.send_action({"gripper.pos": 50.0})
    r.clock.sleep(0.1)
    r.get_observation()
    r.send_action({"gripper.pos": 50.0})
    r.disconnect()
    tr = read_trace(tmp_path / "t.jsonl")
    assert tr.image_t[0] == pytest.approx(0.2)  # capture instants are multiples of 1/fps
    # 1 ms connect write + 0.26 s sleep + 3 ms read, minus the 0.2 s capture instant
    assert tr.image_age_s[0] == pytest.approx(0.064, abs=1e-9)
    assert tr.image_sha1[1] == tr.image_sha1[0] and tr.image_t[1] == tr.image_t[0]
    assert tr.image_sha1[2] != tr.image_sha1[1] and tr.image_t[2] > tr.events[-2].t
    assert [e.name for e in tr.events] == ["connect", "torque_enabled", "reset", "disconnect"]
    assert list(tr.episode) == [0, 1, 1, 1]  # the disconnect closes a record of its own


def test_trace_records_what_was_sent(tmp_path: Path) -> None:
    r = FakeSO101(
        FakeSO101Config(
            use_degrees=False,
            write_goal_before_torque=True,
            control_dt_s=0.05,
            trace_path=tmp_path / "t.jsonl",
        )
    )
    r.connect()
    for k in range(5):
        r.get_observation()
        r.send_action({"elbow_flex.pos": 120.0 - 10 * k})
        r.clock.sleep(0.05)
    r.disconnect()
    tr = read_trace(tmp_path / "t.jsonl")
    assert len(tr) == 6 and tr.meta["use_degrees"] is False
    assert tr.meta["control_dt_s"] == 0.05 and tr.meta["robot_type"] == "so_follower"
    assert tr.units["elbow_flex.pos"] == "m100"
    np.testing.assert_allclose(tr.action["elbow_flex.pos"][:5], [120, 110, 100, 90, 80])
    np.testing.assert_allclose(tr.sent["elbow_flex.pos"][:5], [100, 100, 100, 90, 80])
    goals = [w for w in tr.writes if w.register == "Goal_Position" and w.motor == "elbow_flex"][
        1:
    ]  # the first is goal = present at connect
    cal = r.calibration["elbow_flex"]
    assert goals[0].value == cal.range_max
    assert goals[3].value == int((90 + 100) / 200 * (cal.range_max - cal.range_min) + cal.range_min)
    np.testing.assert_allclose(np.diff(tr.t[:5]), 0.054, atol=1e-9)  # sleep + read + write


def test_fake_arm_cli_runs_a_script(tmp_path: Path) -> None:
    from simgap.cli import app

    script = Path(__file__).parent / "deploy_scripts" / "torque_jump_bug.py"
    out = tmp_path / "a.json"
    r = CliRunner().invoke(
        app, ["fake-arm", str(script), "--trace", str(tmp_path / "t.jsonl"), "--json", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["implicated"] == ["Torque on before goal = present"]
    bad = tmp_path / "bad.py"
    bad.write_text("FAKE_ARM = {'nope': 1}\ndef run(robot):\n    pass\n")
    r = CliRunner().invoke(app, ["fake-arm", str(bad), "--trace", str(tmp_path / "u.jsonl")])
    assert r.exit_code == 2 and "FAKE_ARM.nope" in r.stderr


# ---- LeRobot adapter: the real LeRobot is tested in tests/lerobot_real/ (Python 3.12) ---


def test_lerobot_adapter_without_lerobot(monkeypatch: pytest.MonkeyPatch) -> None:
    import simgap.fakearm.lerobot_robot as adapter

    monkeypatch.setitem(sys.modules, "lerobot", None)
    monkeypatch.setitem(sys.modules, "lerobot.robots", None)
    with pytest.raises(MissingExtraError, match="lerobot"):
        adapter.register()


def test_robot_must_be_connected() -> None:
    r = FakeSO101()
    with pytest.raises(InputError, match="connect"):
        r.get_observation()
    with pytest.raises(InputError, match="connect"):
        r.camera_frame()


def test_runs_on_the_menagerie_so101(shared_data: Path, tmp_path: Path) -> None:
    r = FakeSO101(
        FakeSO101Config(
            model_path=shared_data / "so101" / "scene_box.xml",
            keyframe=None,
            object_body="box",
            write_goal_before_torque=True,
        )
    )
    r.connect()
    assert r.present_ticks()["elbow_flex"] == 2048  # qpos0 is mid-range on a symmetric joint
    r.send_action({"elbow_flex.pos": 30.0})
    r.clock.sleep(1.0)
    assert r.get_observation()["elbow_flex.pos"] == pytest.approx(30.0, abs=1.0)
    x, y = r.reset_scene((0.3, 0.05))
    assert r._sim.object_xy() == pytest.approx((x, y))
    r.disconnect()


def test_observation_delay_slows_every_observation_and_is_validated() -> None:
    """``observation_delay_s``: each observation takes that long on the arm's clock before the
    bus is read (a slow camera or bus), so a loop around it runs slower than it means to."""
    fast, slow = FakeSO101(), FakeSO101(FakeSO101Config(observation_delay_s=0.45))
    for arm in (fast, slow):
        arm.connect()
    t_fast, t_slow = fast.clock.now(), slow.clock.now()
    for arm in (fast, slow):
        for _ in range(4):
            arm.get_observation()
    assert slow.clock.now() - t_slow == pytest.approx(fast.clock.now() - t_fast + 4 * 0.45)
    for arm in (fast, slow):
        arm.disconnect()
    for bad in (-0.1, math.inf, 120.0):
        with pytest.raises(InputError, match="observation_delay_s"):
            FakeSO101Config(observation_delay_s=bad)
