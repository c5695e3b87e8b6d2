"""The actuator and controller findings are typed records: each kind's branch gives its
record, findings.json gives it back equal, and a figure the record does not declare is
refused by name (the contract of ``simgap.figures``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.branches.context import Context
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.controller import (
    POSE_LOSS,
    GainsDetails,
    GainsFigures,
    SimplerDetails,
    SimplerFigures,
)
from simgap.figures.joint_dynamics import JointDynamicsDetails, JointDynamicsFigures
from simgap.figures.ladder import LadderDetails, LadderFigures
from simgap.rig import load_rig
from tests.test_actuator_cli import _csv
from tests.test_controller import _bench
from tests.typed_records import check_typed


def test_the_ladder_finding_is_typed_and_survives_findings_json(tmp_path: Path) -> None:
    from simgap.branches.actuator import analyse, finding_from
    from simgap.evidence.servo_csv import read_servo_csv

    logs = [read_servo_csv(_csv(tmp_path / f"{i}.csv", i)) for i in range(2)]
    out, _ = analyse(logs, use_net=False)
    f = finding_from(out)
    check_typed(f, LadderFigures, LadderDetails)
    fig = f.typed(LadderFigures)
    for name, jj in out["joints"].items():  # every number kept, only regrouped
        j = fig.joints[name]
        assert j.delay is not None and j.delay.total_s == jj["delay_s"]
        assert j.delay.interval_s is None and j.delay.reason  # the ladder gives none
        assert j.selected == jj["selected"]
        sel = next(r for r in jj["rungs"] if r["model"] == jj["selected"])
        assert j.selected_mae_rad == sel["validation_mae_rad"]
        assert dict(j.params) == {
            k: v for k, v in sel["params"].items() if isinstance(v, (int, float))
        }
        assert [r.model for r in f.typed_details(LadderDetails).joints[name].rungs] == [
            r["model"] for r in jj["rungs"]
        ]
    assert fig.worst_ideal_mae_rad == max(j.ideal_mae_rad for j in fig.joints.values())
    head = fig.headline()
    assert head is not None and "against the encoder noise floor" in head.text


def _fake_identification(
    rig: Any, ds: Any, *, seed: int = 0, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The identification's JSON in its real shape (``identify_rig``), without the fit."""
    from simgap.actuator.joint_id import PER_JOINT_KEYS
    from simgap.branches.joint_dynamics import _verdicts

    js: dict[str, Any] = {k: {} for k in PER_JOINT_KEYS}
    for i, j in enumerate(rig.joint_names):
        d = 0.03 + 1e-3 * i
        js["delay_s"][j], js["delay_interval_s"][j] = d, [d - 0.01, d + 0.01]
        js["effective_delay_s"][j], js["effective_delay_interval_s"][j] = d, [d - 0.01, d + 0.01]
        js["params"][j] = {"kp": 10.0 + i}
        js["params_interval"][j] = {"kp": [11.5 + i, 12.5 + i]}  # excludes the nominal
        js["not_identifiable"][j] = {"kv": "flat profile"}
        js["params_nominal"][j] = {"kp": 8.0, "kv": 0.4}
        js["params_fitted"][j] = {"kp": 10.0 + i, "kv": 0.5}
        js["nominal_rms_rad"][j], js["identified_rms_rad"][j] = 0.02, 0.002
        js["noise_floor_rad"][j] = {
            "total_rad": 1e-3,
            "model_rad": 0.0,
            "recorded_at_model_step": False,
        }
        js["force_saturation"][j] = 0.1
        js["delay_profile"][j] = {
            "delays_s": [0.0, 0.02, 0.04],
            "ssr_rad2": [3.0, 1.0, 2.0],
            "threshold_rad2": 1.5,
            "open_ends": [],
        }
    js["delay_ridge"] = {rig.joint_names[0]: "delay and the servo's own lag trade off"}
    js.update(
        {
            "shared_delay_s": 0.03,
            "shared_delay_interval_s": [0.02, 0.04],
            "bounds_x_nominal": {"kp": [0.25, 4.0]},
            "n_evals": 12,
            "clock": {"chosen": "exact", "source": "rig"},
            "global_start": {"draws": 0},
        }
    )
    verdict, per, held = _verdicts(js)
    js.update(
        {
            "verdict": verdict,
            "joint_verdicts": per,
            "joint_held": held,
            "patch_joints": [],
            "seed": seed,
            "fitted_episodes": 1,
            "held_out_episodes": 1,
            "fit_seconds": 8.0,
            "null_hypothesis": "the MJCF",
            "_held_out": [],
            "_proof": ([], []),
        }
    )
    return js


@pytest.fixture
def arm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Context:
    """The two-joint arm of test_controller, its dataset, and the identification faked."""
    import simgap.branches.joint_dynamics as jd

    monkeypatch.setattr(jd, "identify_rig", _fake_identification)
    rig = load_rig(_bench(tmp_path))
    return Context(
        rig=rig,
        evidence=EvidenceBundle(rig),
        out_dir=None,
        options={"controller_maxfun": 8, "controller_max_iter": 2},
    )


def test_the_joint_dynamics_findings_are_typed_and_survive_findings_json(arm: Context) -> None:
    from simgap.branches import actuator_dataset, controller_record

    act = actuator_dataset.finding(arm)
    check_typed(act, JointDynamicsFigures, JointDynamicsDetails)
    fig = act.typed(JointDynamicsFigures)
    js = _fake_identification(arm.rig, None)
    assert dict(fig.delay_s) == js["delay_s"] and fig.worst_nominal_rms_rad == 0.02
    assert fig.delay_interval_s["j1"] == tuple(js["delay_interval_s"]["j1"])
    account = fig.delay_account
    assert account is not None and account.loop_s is None  # no latency finding in this run
    for j, d in js["delay_s"].items():  # one Delay per joint: the whole delay, unsplit
        dl = account.delays[j]
        assert dl.total_s == d and dl.interval_s == tuple(js["delay_interval_s"][j])
        assert math.isnan(dl.servo_s) and dl.on_ridge is (j in js["delay_ridge"])
    assert act.typed_details(JointDynamicsDetails).delay_profile["j2"].ssr_rad2 == (3.0, 1.0, 2.0)
    ctl = controller_record.finding(arm)
    check_typed(ctl, GainsFigures, GainsDetails)
    gains = ctl.typed(GainsFigures)
    assert dict(gains.delay_s) == js["delay_s"] and gains.params["j1"] == {"kp": 10.0}
    assert ctl.verdict.value == "implicated"
    assert len(ctl.typed_details(GainsDetails).gains_changed) == 2


def test_the_residual_is_held_against_its_own_joints_floor(
    arm: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the largest residual against the largest floor, which are two joints' figures."""
    import simgap.branches.joint_dynamics as jd
    from simgap.branches import actuator_dataset
    from simgap.report.headline import key_line

    a, b = arm.rig.joint_names[:2]

    def skewed(rig: Any, ds: Any, **kw: Any) -> dict[str, Any]:
        js = _fake_identification(rig, ds, **kw)
        js["identified_rms_rad"][a] = 0.005
        js["noise_floor_rad"][b]["total_rad"] = 0.004
        return js

    monkeypatch.setattr(jd, "identify_rig", skewed)
    act = actuator_dataset.finding(arm)
    assert (act.residual, act.noise_floor) == (0.005, 1e-3)
    assert key_line(act.to_dict()).text.startswith(
        f"{a}: residual 5.00 mrad against its floor 1.00 mrad, from 20.0 mrad"
    )
    assert key_line(act.to_dict()).text.endswith("; delay 30.0 ms [20.0, 40.0]")


def test_the_loop_latency_splits_each_joints_delay() -> None:
    from simgap.branches.joint_dynamics import delay_account

    js = {
        "delay_s": {"a": 0.05, "b": 0.01},
        "delay_interval_s": {"a": [0.04, 0.06], "b": [0.0, 0.02]},
    }
    account = delay_account(js, {"p50_s": 0.02})
    a, b = account.delays["a"], account.delays["b"]
    assert (a.total_s, a.loop_s, a.servo_s) == (0.05, 0.02, pytest.approx(0.03))
    assert b.servo_s == 0.0 and account.servo_interval_s["b"] == (0.0, 0.0)
    assert account.servo_interval_s["a"] == (pytest.approx(0.02), pytest.approx(0.04))


def test_the_simpler_finding_is_typed_and_survives_findings_json(
    arm: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simgap.branches import controller, joint_dynamics

    monkeypatch.setattr(joint_dynamics, "applies", lambda rig: False)
    (f,) = controller.assess(arm)
    check_typed(f, SimplerFigures, SimplerDetails)
    fig, det = f.typed(SimplerFigures), f.typed_details(SimplerDetails)
    assert fig.loss_before == det.loss_before and fig.noise_floor == f.noise_floor
    assert f.residual_unit == POSE_LOSS and f.key_unit == POSE_LOSS
    assert set(det.methods) == {"least_squares", "dual_annealing"}
    assert det.traces is not None and len(det.traces.t) == len(det.traces.after_m)
    head = fig.headline()
    assert head is not None and head.text.startswith("SIMPLER pose loss")
    assert "m + rad/2" not in head.text
    assert np.isfinite(head.value or math.nan)
