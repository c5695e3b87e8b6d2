"""Leader/follower drift: a teleoperation recorded on the fake arm (scripted leader holding
poses), with a planted constant offset between the recorded action and the goal the follower
is sent, is found within 1 degree; a clean one shows none."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simgap.calibration.drift import leader_follower_drift, still_segments
from simgap.calibration.finding import drift_finding
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.figures.calibration import DriftFigures
from simgap.finding import Verdict
from simgap.rig import load_rig
from simgap.rig.init.draft import draft_rig
from tests.factories import SO101_NAMES, write_v3_dataset
from tests.typed_records import check_typed

POSES = [
    (0, -90, 90, 37.8, 0),
    (20, -60, 60, 20, 10),
    (-15, -40, 30, 0, -10),
    (10, -75, 80, 45, 5),
    (-25, -20, 20, -10, 0),
]
"""Held leader poses [deg] of the five body joints (gripper at 30 %)."""
FPS = 30


def _teleop(root: Path, plant_deg: float, joint: str = "elbow_flex") -> Path:
    """Move 1 s between poses, hold 1.5 s; the follower is sent action + plant_deg."""
    from simgap.fakearm import FakeSO101, FakeSO101Config

    arm = FakeSO101(FakeSO101Config(write_goal_before_torque=True))
    arm.connect()
    acts, obs_l = [], []
    k = SO101_NAMES.index(f"{joint}.pos")
    try:
        first = arm.get_observation()
        cur = np.array([first[n] for n in SO101_NAMES[:5]])
        for pose in POSES:
            target = np.array(pose, dtype=float)
            for i in range(int(2.5 * FPS)):
                a = min(1.0, (i + 1) / FPS)
                leader = np.append(cur + a * (target - cur), 30.0)
                o = arm.get_observation()
                obs_l.append([o[n] for n in SO101_NAMES])
                sent = leader.copy()
                sent[k] += plant_deg
                arm.send_action(dict(zip(SO101_NAMES, sent.tolist(), strict=True)))
                acts.append(leader)
                arm.clock.sleep(1.0 / FPS - 0.004)
            cur = target
    finally:
        arm.disconnect()
    return write_v3_dataset(
        root,
        [
            {
                "action": np.array(acts, dtype=np.float32),
                "observation.state": np.array(obs_l, dtype=np.float32),
            }
        ],
        fps=FPS,
    )


@pytest.mark.parametrize("plant", [0.0, 2.5])
def test_a_planted_leader_follower_offset_is_found_within_a_degree(
    tmp_path: Path, demo_model: Path, plant: float
) -> None:
    ds = _teleop(tmp_path / "ds", plant)
    rig_path = tmp_path / "rig.toml"
    rig_path.write_text(draft_rig(ds, demo_model, rig_path).text)
    rig = load_rig(rig_path)
    drift = leader_follower_drift(dataset_trajectories(read_lerobot_dataset(ds), rig), rig)
    assert len(drift.segments) >= 4
    f = drift_finding(drift)
    fig = f.typed(DriftFigures)
    check_typed(f, DriftFigures)
    el = fig.joints["elbow_flex"]
    assert el.offset_deg == pytest.approx(plant, abs=1.0)
    assert el.offset_interval_deg is not None
    lo, hi = el.offset_interval_deg
    assert lo <= plant <= hi
    if plant:
        assert f.verdict is Verdict.IMPLICATED and "elbow_flex" in f.summary
        assert fig.offset_at_gripper_mm is not None and fig.offset_at_gripper_mm > 5.0
        from typer.testing import CliRunner

        from simgap.cli import app

        r = CliRunner().invoke(app, ["calibration", "drift", str(rig_path)])
        assert r.exit_code == 0 and "[implicated] Leader/follower drift" in r.output, r.output
    else:
        assert f.verdict is not Verdict.IMPLICATED, f.summary
        assert all(abs(v.offset_deg) < 0.5 for v in fig.joints.values())


def test_still_segments_need_both_signals_still() -> None:
    t = np.arange(90) / 30
    still = np.zeros((90, 1))
    moving = np.sin(t)[:, None]
    assert still_segments(still, still, 1 / 30) == [(0, 90)]
    assert still_segments(still, moving, 1 / 30) == []
    assert math.isclose(1 / 30 * 90, 3.0)


def test_the_gravity_part_is_separated_from_the_offset() -> None:
    from simgap.calibration.drift import _fit

    tau = np.array([-1.2, -0.5, 0.1, 0.6, 1.3])
    d = 0.01 - 0.002 * tau + np.array([1, -1, 0.5, -0.5, 0]) * 1e-5
    j = _fit("elbow_flex", d, tau, quant=1e-6)
    assert j.offset_rad == pytest.approx(0.01, abs=1e-4)
    assert j.compliance_rad_per_nm == pytest.approx(-0.002, abs=1e-4)
    assert j.ci95_rad is not None and j.ci95_rad < 1e-3
    flat = _fit("wrist_roll", np.full(4, 0.003), np.zeros(4), quant=1e-6)
    assert flat.compliance_rad_per_nm is None and flat.offset_rad == pytest.approx(0.003)
