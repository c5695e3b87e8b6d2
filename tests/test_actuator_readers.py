"""Readers of actuator evidence and the bad inputs the issue lists."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.ladder import LadderConfig, fit_joint
from simgap.actuator.servo import Drive
from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.bam import pwm_register_to_duty, read_bam_log
from simgap.evidence.servo_csv import read_servo_csv
from simgap.rig import load_rig
from simgap.values.actuator_log import ActuatorLog
from simgap.values.load import JointLoad
from tests.factories import write_rig


def _bam(path: Path, t: np.ndarray, *, load: list[int] | None = None, goal=None, pos=None) -> Path:
    n = t.size
    goal = np.sin(t) if goal is None else goal
    pos = 0.9 * np.sin(t - 0.05) if pos is None else pos
    entries = [
        {
            "timestamp": float(t[i]),
            "position": float(pos[i]),
            "speed": 0.0,
            "goal_position": float(goal[i]),
            "torque_enable": i < n // 2,
            "load": (load[i] if load else 10),
            "input_volts": 7.4,
            "temp": 30,
        }
        for i in range(n)
    ]
    path.write_text(
        json.dumps(
            {
                "mass": 0.49,
                "length": 0.1,
                "kp": 200,
                "vin": 7.4,
                "motor": "xl330",
                "trajectory": "sin_sin",
                "entries": entries,
            }
        )
    )
    return path


def test_pwm_register_is_cast_to_int16() -> None:
    # 65535 is -1 as uint16; 885 is full scale
    duty = pwm_register_to_duty(np.array([65535, 885, 0, 65535 - 628]), "xl330")
    np.testing.assert_allclose(duty, [-1 / 885, 1.0, 0.0, -629 / 885])


def test_bam_reader_resamples_irregular_sampling_and_says_so(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.uniform(0.003, 0.007, 600))
    log = read_bam_log(_bam(tmp_path / "a.json", t, load=[65535] * 600))
    assert log.resampling["resampled"] is True
    assert log.resampling["raw_samples"] == 600
    assert np.allclose(np.diff(log.traj.t), 0.005)
    assert log.traj.joint_names == ("xl330",)
    assert log.meta["kp"] == 200 and log.meta["mass"] == 0.49
    # the goal is interpolated from the raw samples: compare with sin at the grid times, which
    # count from the trajectory's start as BAM's processing does (the first raw sample is
    # 3-7 ms after it)
    assert t[0] > 0.0025 and log.traj.t[0] == 0.0
    np.testing.assert_allclose(log.traj.q_cmd[:, 0], np.sin(log.traj.t), atol=2e-4)
    assert log.duty is not None and np.allclose(log.duty, -1 / 885)
    assert log.torque_enable[:10].all() and not log.torque_enable[-10:].any()


def test_real_bam_log(shared_data: Path) -> None:
    path = sorted((shared_data / "bam_xl330" / "raw").glob("*.json"))[0]
    log = read_bam_log(path)
    raw = json.loads(path.read_text())["entries"]
    assert log.resampling["resampled"] is True
    assert log.resampling["raw_samples"] == len(raw)
    assert log.duty is not None and np.abs(log.duty).max() <= 1.0


def _csv(path: Path, t: np.ndarray, cmd: np.ndarray, q: np.ndarray, joint: str = "j") -> Path:
    rows = [f"t,cmd_{joint},q_{joint}"] + [
        f"{a},{b},{c}" for a, b, c in zip(t, cmd, q, strict=True)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_csv_reader_regular(tmp_path: Path) -> None:
    t = np.arange(0, 2, 0.01)
    log = read_servo_csv(_csv(tmp_path / "a.csv", t, np.sin(t), np.cos(t)))
    assert log.resampling["resampled"] is False
    np.testing.assert_allclose(log.traj.q[:, 0], np.cos(t))


def test_short_log_is_refused(tmp_path: Path) -> None:
    t = np.arange(0, 0.5, 0.01)
    with pytest.raises(InputError, match="at least 1 s of data"):
        read_servo_csv(_csv(tmp_path / "a.csv", t, np.sin(t), np.sin(t)))


def test_non_monotonic_timestamps_are_refused(tmp_path: Path) -> None:
    t = np.arange(0, 2, 0.01)
    t[50] = t[48]
    with pytest.raises(InputError, match="strictly increasing"):
        read_servo_csv(_csv(tmp_path / "a.csv", t, np.sin(t), np.sin(t)))
    with pytest.raises(InputError, match="strictly increasing"):
        read_bam_log(_bam(tmp_path / "b.json", t))


def test_nan_is_refused(tmp_path: Path) -> None:
    t = np.arange(0, 2, 0.01)
    q = np.sin(t)
    q[7] = np.nan
    with pytest.raises(InputError, match="NaN"):
        read_servo_csv(_csv(tmp_path / "a.csv", t, np.sin(t), q))


def test_unmapped_joint_is_refused(tmp_path: Path, demo_model: Path) -> None:
    rig = load_rig(write_rig(tmp_path / "rig", demo_model))
    t = np.arange(0, 2, 0.01)
    with pytest.raises(NameNotFoundError, match="shoulder_pan"):
        read_servo_csv(_csv(tmp_path / "a.csv", t, np.sin(t), np.sin(t), joint="elbow"), rig)


def test_constant_command_points_at_excite(tmp_path: Path) -> None:
    t = np.arange(0, 2, 0.01)
    logs = [
        read_servo_csv(_csv(tmp_path / f"{i}.csv", t, np.zeros_like(t), 1e-4 * np.sin(t)))
        for i in range(2)
    ]
    with pytest.raises(InputError, match="simgap excite"):
        fit_joint(
            logs, "j", [JointLoad(1e-3)] * 2, [Drive()] * 2, LadderConfig(noise_floor_rad=1e-3)
        )


def test_from_trajectory_keeps_log(tmp_path: Path) -> None:
    log = read_servo_csv(
        _csv(tmp_path / "a.csv", np.arange(0, 2, 0.01), np.ones(200), np.ones(200))
    )
    assert isinstance(log, ActuatorLog) and log.dt == pytest.approx(0.01)
