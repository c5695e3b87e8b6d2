"""``simgap actuator`` / ``simgap excite`` and the branch's ``assess`` on a LeRobot dataset."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.branches.context import Context
from simgap.cli import app
from simgap.errors import InputError
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.finding import Finding
from simgap.rig import load_rig
from tests.factories import SO101_NAMES, write_rig, write_v3_dataset

runner = CliRunner()


def _lag(cmd: np.ndarray, lag_s: float, dt: float) -> np.ndarray:
    """Euler first-order lag (state before each command), written out independently."""
    out = np.empty_like(cmd)
    u = cmd[0]
    for k in range(cmd.size):
        out[k] = u
        u = u + dt / lag_s * (cmd[k] - u)
    return out


def _csv(path: Path, seed: int, lag_s: float = 0.05, dt: float = 0.01) -> Path:
    rng = np.random.default_rng(seed)
    t = np.arange(0, 3, dt)
    cmd = sum(0.2 * np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in (0.5, 1.3, 2.9))
    q = _lag(cmd, lag_s, dt)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "cmd_j", "q_j"])
        w.writerows(zip(t, cmd, q, strict=True))
    return path


def test_cli_json_keys_and_lag_recovered(tmp_path: Path) -> None:
    logs = [str(_csv(tmp_path / f"{i}.csv", i)) for i in range(3)]
    res = runner.invoke(
        app,
        [
            "actuator",
            *logs,
            "--format",
            "csv",
            "--no-net",
            "--json",
            str(tmp_path / "a.json"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads((tmp_path / "a.json").read_text())
    assert {"branch", "verdict", "noise_floor_rad", "joints"} <= set(d)
    assert d["branch"] == "actuator" and isinstance(d["noise_floor_rad"], float)
    j = d["joints"]["j"]
    assert {"delay_s", "selected", "rungs"} <= set(j)
    assert j["selected"] == "delay_lag"  # exact lag: within the noise floor, the ladder stops
    for r in j["rungs"]:
        assert {"model", "train_mae_rad", "validation_mae_rad", "params"} <= set(r)
    lag = next(r for r in j["rungs"] if r["model"] == "delay_lag")["params"]["lag_s"]
    assert lag == pytest.approx(0.05, rel=0.05)
    assert d["verdict"] == "implicated"
    assert (tmp_path / d["artifacts"]["isaaclab"]).is_file()  # relative to the JSON's folder
    assert "mjcf_patch" not in d["artifacts"]  # no rig: no model to patch
    assert "--rig" in d["patch_proof"]["mjcf_patch_not_offered"]
    assert "no MJCF patch" in res.output


def test_cli_validate_and_bad_input_exit_2(tmp_path: Path) -> None:
    a, b, c = (str(_csv(tmp_path / f"{i}.csv", i)) for i in range(3))
    res = runner.invoke(
        app,
        [
            "actuator",
            a,
            b,
            "--validate",
            c,
            "--format",
            "csv",
            "--no-net",
            "--json",
            str(tmp_path / "v.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    j = json.loads((tmp_path / "v.json").read_text())["joints"]["j"]
    assert j["held_out"] == "leave-one-trajectory-out"  # selected on the training logs
    assert j["test_logs"] == [Path(c).name] and j["test_mae_rad"] > 0  # tested on --validate
    bad = tmp_path / "bad.csv"
    bad.write_text("t,cmd_j,q_j\n0,0,0\n0.1,0,0\n")
    res = runner.invoke(
        app, ["actuator", str(bad), "--format", "csv", "--json", str(tmp_path / "x.json")]
    )
    assert res.exit_code == 2
    assert "at least 1 s" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["actuator", a, "--format", "nope", "--json", str(tmp_path / "x")])
    assert res.exit_code == 2 and "bam, csv, lerobot" in res.output


def test_excite_stays_inside_limits(tmp_path: Path, demo_model: Path) -> None:
    from simgap.sim.load import joint_ranges

    rig_path = write_rig(tmp_path / "rig", demo_model)
    out = tmp_path / "ex.csv"
    res = runner.invoke(app, ["excite", str(rig_path), "--out", str(out), "--duration", "3"])
    assert res.exit_code == 0, res.output
    rows = list(csv.reader(out.open()))
    data = np.array(rows[1:], dtype=float)
    rig = load_rig(rig_path)
    ranges = joint_ranges(rig.model_path, list(rig.joint_names))
    dt = data[1, 0] - data[0, 0]
    for i, name in enumerate(rig.joint_names, start=1):
        lo, hi = ranges[name]
        assert data[:, i].min() >= lo and data[:, i].max() <= hi
        assert np.abs(np.diff(data[:, i])).max() / dt <= 2 * np.pi * 1.05
        assert np.ptp(data[:, i]) > 0.05
    assert rows[0] == ["t"] + [f"cmd_{n}" for n in rig.joint_names]


@pytest.mark.slow  # the joint-dynamics identification of 3 episodes: minutes on 2 cores
def test_assess_on_lerobot_dataset_in_degrees(tmp_path: Path, demo_model: Path) -> None:
    fps = 30
    dt = 1.0 / fps
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(3):
        t = np.arange(0, 4, dt)
        cmd = np.stack(
            [
                20 * np.sin(2 * np.pi * 0.4 * t + rng.uniform(0, 6))
                + 10 * np.sin(2 * np.pi * 1.1 * t + rng.uniform(0, 6))
                for _ in SO101_NAMES
            ],
            axis=1,
        )
        cmd[:, 5] = 50 + 0.5 * cmd[:, 5]  # gripper in percent
        state = np.stack([_lag(cmd[:, k], 0.15, dt) for k in range(6)], axis=1)
        episodes.append({"action": cmd, "observation.state": state})
    ds = write_v3_dataset(tmp_path / "ds", episodes, fps=fps)
    rig = load_rig(write_rig(tmp_path / "rig", demo_model, f'\n[evidence]\ndataset = "{ds}"\n'))
    from simgap.branches.actuator import assess

    ctx = Context(
        rig=rig,
        evidence=EvidenceBundle(rig),
        out_dir=tmp_path / "out",
        options={"actuator_net": False},
    )
    (finding,) = assess(ctx)
    assert finding.branch == "actuator"
    assert finding.verdict.value == "implicated"
    # A LeRobot dataset is identified against the rig's own model (issue 12's contract): a
    # delay per joint with its interval, and the parameters with intervals or reasons.
    fig = finding.typed(JointDynamicsFigures)
    assert finding.kind == "joint_dynamics"
    assert set(fig.delay_s) == set(rig.joint_names)
    for name in rig.joint_names:
        lo, hi = fig.delay_interval_s[name]
        assert lo <= fig.delay_s[name] <= hi, name
        assert fig.delay_account is not None
        assert fig.delay_account.delays[name].total_s == fig.delay_s[name]
        for p in ("kp", "kv", "damping", "frictionloss", "armature"):
            assert p in fig.params_interval.get(name, {}) or p in fig.not_identifiable.get(
                name, {}
            ), (name, p)
    if "mjcf_patch" in finding.artifacts:
        assert Path(finding.artifacts["mjcf_patch"]).is_file()
    else:
        assert fig.patch.startswith("no patch offered"), fig.patch
    # the record survives findings.json: read back equal, an unknown figure refused by name
    assert_round_trip(finding)


def assert_round_trip(finding: Finding) -> None:
    """findings.json gives the records back equal (NaN as null both ways), and a figure the
    record does not declare is refused by name."""
    back = Finding.from_dict(json.loads(json.dumps(finding.to_dict())))
    assert type(back.figures) is type(finding.figures)
    assert back.to_dict() == finding.to_dict()
    bad = finding.to_dict()
    bad["figures"]["no_such_figure"] = 1.0
    with pytest.raises(InputError, match="no_such_figure"):
        Finding.from_dict(bad)


def test_still_joint_is_reported_not_fatal(tmp_path: Path) -> None:
    from simgap.branches.actuator import analyse
    from simgap.evidence.servo_csv import read_servo_csv

    logs = []
    for i in range(2):
        t = np.arange(0, 2, 0.01)
        cmd = 0.3 * np.sin(2 * np.pi * (1 + i) * t)
        q = _lag(cmd, 0.05, 0.01)
        path = tmp_path / f"{i}.csv"
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t", "cmd_a", "q_a", "cmd_b", "q_b"])
            w.writerows(zip(t, cmd, q, np.zeros_like(t), np.zeros_like(t), strict=True))
        logs.append(read_servo_csv(path))
    out, _ = analyse(logs, use_net=False)
    assert set(out["joints"]) == {"a"}
    assert "simgap excite" in out["unexcited_joints"]["b"]


def _rate_limited(path: Path, seed: int, vmax: float = 0.6, dt: float = 0.01) -> Path:
    """A servo whose speed saturates: no delay, lag or linear servo explains it exactly,
    so the ladder climbs to the network rung."""
    rng = np.random.default_rng(seed)
    t = np.arange(0, 3, dt)
    cmd = sum(0.4 * np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in (0.7, 1.9, 3.7))
    q = np.empty_like(cmd)
    u = cmd[0]
    for k in range(cmd.size):
        q[k] = u
        u = u + float(np.clip(cmd[k] - u, -vmax * dt, vmax * dt))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "cmd_j", "q_j"])
        w.writerows(zip(t, cmd, q, strict=True))
    return path


def test_network_rung_skipped_without_torch_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simgap.actuator import net

    monkeypatch.setattr(net, "torch_available", lambda: False)
    logs = [str(_rate_limited(tmp_path / f"{i}.csv", i)) for i in range(3)]
    res = runner.invoke(
        app, ["actuator", *logs, "--format", "csv", "--json", str(tmp_path / "a.json")]
    )
    assert res.exit_code == 0, res.output
    j = json.loads((tmp_path / "a.json").read_text())["joints"]["j"]
    assert "net" not in [r["model"] for r in j["rungs"]]
    assert "torch is not installed" in j["stop_reason"], j["stop_reason"]
    assert "torch is not installed" in j["rungs_skipped"]["net"]
    assert "the net rung was not fitted: torch is not installed" in res.output
